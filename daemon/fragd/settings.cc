// SPDX-License-Identifier: Apache-2.0
#include "fragd/settings.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fragd {

BpfOptions bpf_options(const Config& cfg, uint32_t self_tgid, uint64_t max_pfn) {
  BpfOptions o;
  o.min_order = cfg.min_order;
  o.slow_stall_ns = cfg.slow_stall_ns;
  o.stack_interval_ns = cfg.stack_interval_ns;
  o.stall_stacks = static_cast<uint32_t>(cfg.stall_stacks);
  o.self_tgid = self_tgid;
  o.track_pollution = cfg.track_pollution;
  o.count_allocations = cfg.allocations == "exact";
  o.max_pfn = max_pfn;
  return o;
}

ScanSettings scan_settings(const Config& cfg, unsigned pageblock_order) {
  ScanSettings s;
  s.interval_ns = cfg.scan_ns;
  s.max_age_ns = cfg.scan_max_age_ns;
  s.threads = cfg.scan_threads;
  s.pageblock_order = pageblock_order;
  s.sample = cfg.scan_mode == "sample";
  s.budget = cfg.scan_budget_percent / 100;
  s.full_budget = cfg.full_scan_budget_percent / 100;
  s.proc_root = cfg.proc_root;
  s.sys_root = cfg.sys_root;
  return s;
}

KallsymsFile open_kallsyms(const Config& cfg) {
  KallsymsFile k;
  k.path = cfg.kallsyms_path.empty() ? cfg.proc_root + "/kallsyms" : cfg.kallsyms_path;
  k.fd = ::open(k.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (k.fd < 0)
    k.warning = "cannot open " + k.path + ": " + std::strerror(errno) + "; stall call sites stay \"unknown\"" +
                (cfg.kallsyms_path.empty() ? "" : " (--path.kallsyms: the unit's ExecStartPre writes it)");
  else if (!cfg.kallsyms_path.empty() && ::unlink(k.path.c_str()) != 0)
    k.warning = "cannot delete " + k.path + " after reading it: " + std::strerror(errno);
  return k;
}

}  // namespace fragd
