// SPDX-License-Identifier: Apache-2.0
// fragd's own process figures for the process_* families every Prometheus client library
// exports (node_exporter's and the Go and Python clients' names and meanings).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace fragd {

struct ProcessStats {
  double cpu_seconds = 0;          // utime + stime
  uint64_t resident_bytes = 0;     // rss pages x page size
  uint64_t virtual_bytes = 0;      // vsize
  uint64_t open_fds = 0;           // entries of /proc/self/fd
  uint64_t max_fds = 0;            // RLIMIT_NOFILE's soft limit
  double start_time_seconds = 0;   // Unix time the process started (boot time + starttime)
};

// Parses the text of /proc/<pid>/stat (the comm may hold spaces and parentheses).
// ticks_per_second: sysconf(_SC_CLK_TCK); page_size: sysconf(_SC_PAGESIZE); boot_time:
// /proc/stat's btime.
Result<ProcessStats> parse_process_stat(const std::string& text, long ticks_per_second, long page_size,
                                        uint64_t boot_time);

// Reads them for this process: proc_root/self/stat and /fd, proc_root/stat's btime (read once).
Result<ProcessStats> read_process_stats(const std::string& proc_root = "/proc");

// The kernel's release (uname -r), for fragd_build_info.
std::string kernel_release();

}  // namespace fragd
