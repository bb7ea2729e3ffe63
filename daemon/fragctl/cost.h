// SPDX-License-Identifier: Apache-2.0
// `fragctl cost`: what fragd's BPF programs cost the host, measured.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace fragd::ctl {

// Turns the kernel's BPF run-time statistics on through a BPF_ENABLE_STATS fd
// (needs CAP_SYS_ADMIN: run as root; fragd itself has dropped it), reads the
// run count and time of each of fragd's programs (ids from fragd's `status`
// answer) and /proc/vmstat pgfault, waits `seconds` (a signal on
// `interrupt_fd` ends the wait early), reads them again and releases the
// statistics. The answer: {"seconds", "page_faults", "programs": [{"name",
// "tracepoint", "id", "attached", "runs", "run_ns", "recursion_misses"}]}.
Result<nlohmann::json> measure_cost(const nlohmann::json& status, double seconds, int interrupt_fd);

}  // namespace fragd::ctl
