// SPDX-License-Identifier: Apache-2.0
// fragd's configuration file (YAML): parsed into plain structs, then validated.
// The action policy (`mode: act`, `dry_run`, `compaction:`, `hugepages:`) is
// parsed into Config::policy (policy/policy.h); docs/configuration.md "Policy" documents it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "policy/policy.h"
#include "base/format.h"
#include "base/result.h"
#include "base/series.h"

namespace YAML {
class Node;
}

namespace fragd {

struct Config {
  std::string mode = "observe";              // observe: watch and export, change nothing; act: apply `policy`
  std::string listen = "127.0.0.1:9717";     // Prometheus /metrics
  std::string socket = "/run/fragd/fragd.sock";
  std::string socket_group;                  // members may send read requests; empty: root only (0600)
  std::optional<uint32_t> socket_gid;        // socket_group resolved on this host
  uint64_t tick_ns = 1'000'000'000;          // collector tick
  uint64_t pagetypeinfo_ns = 60'000'000'000; // /proc/pagetypeinfo is read this often (it stalls the allocator)
  uint64_t forecast_window_ns = 600'000'000'000;  // free 2 MiB blocks' trend is fitted over this
  uint64_t top_cgroups = 20;    // cgroups with a stall series of their own
  uint64_t top_callsites = 20;  // kernel call sites with one
  uint64_t stack_interval_ns = 1'000'000'000;  // a kernel stack per stall kind at most this often (0: every stall)
  uint64_t stall_stacks = 8192;  // buckets of BPF map stall_stacks (FRAGD_STALL_STACKS)
  uint32_t min_order = 1;                    // allocations below this order are not traced
  uint64_t slow_stall_ns = 10'000'000;       // stalls at least this long go to `fragctl trace`
  // bpf.allocations: when the per-page mm_page_alloc counting program is attached.
  //   exact: always; adaptive: while memory needs watching (a stall in the last
  //   adaptive_hold, or a node below adaptive_free_blocks); off: never.
  std::string allocations = "adaptive";
  uint64_t adaptive_hold_ns = 300'000'000'000;  // counting stays on this long after the last stall
  uint64_t adaptive_free_blocks = 0;           // ... or while a node has fewer free pageblocks (0: not a reason)
  bool track_pollution = true;               // the pollution ledger (mm_page_alloc_extfrag, fallbacks only)
  bool scan_pageblocks = true;               // classify pageblocks from /proc/kpageflags
  uint64_t scan_ns = 60'000'000'000;         // ... at most this often, when memory changed
  uint64_t scan_max_age_ns = 600'000'000'000;  // ... and at least this often
  unsigned scan_threads = 1;                 // ... reading with this many threads (full scans)
  std::string scan_mode = "sample";          // ... "sample" rounds within scan_budget_percent, or "full"
  double scan_budget_percent = 0.1;          // ... a sample round's CPU time per interval, % of one core
  double full_scan_budget_percent = 2;      // ... the full scans clients ask for, % of one core
  std::string nfd_features_file;             // the NFD feature file fragd writes ("": none)
  uint64_t nfd_hold_ns = 300'000'000'000;    // a label changes after its value stayed past an edge this long
  SeriesSettings metrics;                    // which series /metrics carries (`metrics:`)
  Policy policy;                             // policy.act mirrors mode == "act"
  std::string source;                        // file it came from, for messages
  // Not in the file: fragd's --path.procfs and --path.sysfs. Where fragd reads and writes
  // what the kernel shows under /proc and /sys (tracefs and /sys/kernel/btf excepted).
  std::string proc_root = "/proc";
  // --path.kallsyms: a copy of /proc/kallsyms to name stall call sites from, where the real
  // file is hidden (the unit's ProtectKernelTunables); fragd opens it, then unlinks it. "": the
  // real one, proc_root + "/kallsyms".
  std::string kallsyms_path;
  std::string sys_root = "/sys";
  // --listen and --socket as given ("": not given): they win over the file's listen and socket,
  // at start and at every reload.
  std::string listen_flag, socket_flag;
};

// A reload: the settings of `next` (just read from the file) that come from fragd's command
// line are `running`'s: the file's path, --path.*, and --listen / --socket, which override.
void keep_command_line(const Config& running, Config& next);

// Parses and validates `path`. Every error names file:line:column and the key path.
// Checks what is wrong on any machine; check_policy_on() (policy/policy.h) adds
// what is wrong on this one.
Result<Config> load_config(const std::string& path);
// The same on text already read (path only used in messages).
Result<Config> parse_config(const std::string& text, const std::string& path);

// load_config, then read_machine_facts(proc_root, sys_root) and
// check_policy_on(): what `fragd --check-config FILE` runs. Needs no privileges.
Result<Config> load_and_check_config(const std::string& path, const std::string& proc_root = "/proc",
                                     const std::string& sys_root = "/sys");

// "1s", "500ms", "250us", "100ns", "2m", "1h", or a bare number of seconds.
Result<uint64_t> parse_duration_ns(const std::string& text);

// "IPV4:PORT" with a port 1..65535; IPv6 is refused (Debian's civetweb serves no IPv6), host
// names too (not looked up). Errors say what is wrong and the fix.
Result<void> check_listen_address(const std::string& text);

}  // namespace fragd
