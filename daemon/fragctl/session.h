// SPDX-License-Identifier: Apache-2.0
// What every fragctl command shares: the signal fd that cuts waits short,
// error exits, and one exchange with fragd (a request out, an answer in).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "fragctl/client.h"
#include "protocol/request.h"

namespace fragd::ctl {

constexpr int kRequestTimeoutMs = 5000;
constexpr int kExitInterrupted = 130;

// Blocks SIGINT and SIGTERM and reads them through a signalfd (signal_fd(),
// -1 if none could be made: then a signal just ends fragctl); ignores SIGPIPE.
void setup_signals();
int signal_fd();

// "fragctl: <message>" on stderr; 1 (kExitInterrupted for an interrupted wait).
int fail(const std::string& message);
int fail(const Error& e);

// The local wall-clock time, strftime-formatted.
std::string local_time(const char* format);
std::string host_name();

// A connection to fragd whose reads a signal interrupts.
Result<Client> open_client(const std::string& socket_path);
// Parses one line from fragd as JSON, or says what is wrong with it; `what`
// names the line in the message ("answer to 'hist'", "trace event").
Result<nlohmann::json> parse_line(const std::string& line, const std::string& what);
// Sends `req` on `c` and reads the answer, with a read timeout. The answer
// is returned whatever its "ok"; the caller checks the envelope.
Result<nlohmann::json> ask_fragd(Client& c, const nlohmann::json& req, int timeout_ms = kRequestTimeoutMs);
// One request/response exchange on a fresh connection; a refusal is an Error.
Result<nlohmann::json> request(const std::string& socket_path, const ControlRequest& req,
                               int timeout_ms = kRequestTimeoutMs);

// Waits until CLOCK_MONOTONIC reaches `deadline_ms`; false if a signal came first.
bool sleep_until(int64_t deadline_ms);
int64_t mono_ms();

}  // namespace fragd::ctl
