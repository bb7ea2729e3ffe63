// SPDX-License-Identifier: Apache-2.0
// What BPF programs cost over a window, from the kernel's own run-time statistics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace fragd {

// One program's runs over a window (ProgramRunStats, bpf_object.h, holds its running totals).
struct WindowRunStats {
  uint32_t id = 0;
  bool read = false;  // false: the program went away during the window
  uint64_t runs = 0, run_ns = 0, recursion_misses = 0;
};

struct RunStatsWindow {
  double seconds = 0;
  std::optional<uint64_t> page_faults;  // /proc/vmstat pgfault over the window; absent if unreadable
  std::vector<WindowRunStats> programs;  // in the order of the ids asked for
};

// Turns the kernel's BPF run-time statistics on through a BPF_ENABLE_STATS fd (CAP_SYS_ADMIN),
// reads the run count and time of each program `ids` names and `proc_root`/vmstat pgfault,
// waits `seconds` (a signal on `interrupt_fd`, when >= 0, ends the wait early), reads them
// again and releases the statistics. An error names the program id or the missing privilege.
Result<RunStatsWindow> measure_run_stats(const std::vector<uint32_t>& ids, double seconds, int interrupt_fd,
                                         const std::string& proc_root = "/proc");

}  // namespace fragd
