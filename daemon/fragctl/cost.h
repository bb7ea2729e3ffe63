// SPDX-License-Identifier: Apache-2.0
// `fragctl cost`: what fragd's BPF programs cost the host, measured.
#pragma once

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "protocol/status.h"

namespace fragd::ctl {

// Measures the programs fragd's `status` answer lists (their ids) over `seconds` with the
// kernel's BPF run-time statistics (kernel/bpf_stats.h: needs CAP_SYS_ADMIN, which fragd
// itself has dropped, so fragctl does it as root); a signal on `interrupt_fd` ends the window
// early. The answer: {"seconds", "page_faults", "programs": [{"name", "tracepoint", "id",
// "attached", "runs", "run_ns", "recursion_misses"}]}.
Result<nlohmann::json> measure_cost(const StatusReply& status, double seconds, int interrupt_fd);

}  // namespace fragd::ctl
