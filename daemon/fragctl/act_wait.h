// SPDX-License-Identifier: Apache-2.0
// What the acting commands (compact, pool set) share: --timeout and --json, and following
// the actions a request queued until they are done.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fragctl/client.h"
#include "protocol/request.h"

namespace CLI {
class App;
}

namespace fragd::ctl {

struct ActArgs {
  std::optional<int> node;
  double timeout_s = 300;
  bool json = false;
};
// --timeout in ms: how long fragctl waits for the outcome, and how long fragd lets each
// action the request queues compact (the request's timeout_ms).
inline uint64_t timeout_ms(const ActArgs& a) { return static_cast<uint64_t>(std::llround(a.timeout_s * 1000.0)); }
// fragctl waits this much longer than --timeout for an outcome.
constexpr int64_t kCutGraceMs = 2000;

// The footer of the acting commands' help.
extern const char* const kActFooter;

// Adds --timeout and --json to `cmd`, bound to `args`.
void add_wait_options(CLI::App* cmd, ActArgs& args);

// Sends an acting request (compact, pool), then follows every action it
// queued until done: one line per outcome as it finishes, or with --json the
// outcomes as one JSON array at the end. 0 only if every result is ok or
// dry_run.
int run_actions(const std::string& socket_path, const ControlRequest& req, const ActArgs& a);
// The same for actions already queued (their ids), asked about on `c`.
int follow_actions(Client& c, const std::vector<uint64_t>& ids, const ActArgs& a);

}  // namespace fragd::ctl
