// SPDX-License-Identifier: Apache-2.0
// `fragctl trace`: the stream of slow allocation stalls (protocol/hist.h
// StallEvent), one bcc-style line per event.
#pragma once

#include <ctime>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"

namespace fragd {

// Header and lines of `fragctl trace`, bcc style:
// "TIME     COMM             PID     ORDER RESULT      MS" (newline-free).
std::string trace_header();
// One event line; `local` is the wall-clock time it was received (HH:MM:SS).
// MS is duration_ns in ms with 3 decimals. Control characters of comm are
// replaced by '?'.
Result<std::string> format_trace_line(const nlohmann::json& event, const std::tm& local);

}  // namespace fragd
