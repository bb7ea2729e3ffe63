// SPDX-License-Identifier: Apache-2.0
#include "concerns/programs/programs.h"

#include <bpf/btf.h>

#include <cerrno>

#include "base/log.h"

namespace fragd {

BpfPrograms::~BpfPrograms() = default;

Result<std::unique_ptr<BpfPrograms>> BpfPrograms::create(const BpfOptions& opts) {
  set_libbpf_log();
  std::unique_ptr<BpfPrograms> p(new BpfPrograms());

  std::unique_ptr<btf, void (*)(btf*)> vmlinux(btf__load_vmlinux_btf(), btf__free);
  if (!vmlinux) log_warn("cannot read the kernel BTF; BTF tracepoints are off");

  // --- open
  if (auto r = p->stalls_.open(); !r) return r.error();
  if (auto r = p->compaction_.open(); !r) return r.error();
  if (auto r = p->pollution_.open(); !r) return r.error();

  // --- knobs (rodata) and map sizes; in this order, so the warnings come in it
  if (auto r = p->stalls_.configure(opts.min_order, opts.slow_stall_ns, opts.stack_interval_ns, opts.stall_stacks);
      !r)
    return r.error();
  p->compaction_.configure(opts.self_tgid, opts.pidns_path);
  if (auto r = p->pollution_.configure(opts.track_pollution, opts.pageblock_order, opts.max_pfn); !r)
    return r.error();

  // --- choose attach types by probing the kernel's BTF, not its version
  p->stalls_.choose_programs(vmlinux.get());
  if (auto r = p->compaction_.choose_programs(vmlinux.get()); !r) return r.error();
  vmlinux.reset();

  // --- load
  forget_failed_program();
  if (auto r = p->stalls_.load(); !r) return r.error();
  if (auto r = p->compaction_.load(); !r) return r.error();
  if (auto r = p->pollution_.load(); !r) return r.error();

  if (auto r = p->attach_all(opts.count_allocations); !r) return r.error();
  p->pollution_.turn_on(p->set_);
  return p;
}

Result<void> BpfPrograms::attach_all(bool count_allocations) {
  ensure_tracefs();
  // The programs' list in this order: mm_page_alloc and the stall programs, compaction runs,
  // the pollution ledger's extfrag, then the CMA programs.
  stalls_.attach(set_, count_allocations);
  compaction_.attach_runs(set_);
  pollution_.attach(set_);
  compaction_.attach_cma(set_);
  if (set_.attached_count() == 0)
    return make_error("no BPF program could attach to its tracepoint; see the warnings above", ENOENT);
  return {};
}

Result<void> BpfPrograms::set_counting(bool on) {
  if (on == counting()) return {};
  ProgramState* st = set_.per_page();
  if (!st) return make_error("no mm_page_alloc program is loaded", ENOENT);
  return stalls_.set_counting(on, *st);
}

Result<void> BpfPrograms::own_writer(uint32_t pid) {
  if (auto r = compaction_.register_writer(pid); !r) return r;
  return stalls_.mark_own(pid);
}

BpfMapFds BpfPrograms::map_fds() const {
  BpfMapFds m;
  m.stalls = {.alloc_stats = stalls_.alloc_stats_fd(), .stall_hist = stalls_.stall_hist_fd()};
  m.attribution = {.stall_sites = stalls_.stall_sites_fd(),
                   .failure_sites = stalls_.failure_sites_fd(),
                   .stall_cgroups = stalls_.stall_cgroups_fd(),
                   .stall_stacks = stalls_.stall_stacks_fd()};
  m.compaction = {.compaction_stats = compaction_.compaction_stats_fd(),
                  .compaction_hist = compaction_.compaction_hist_fd(),
                  .cma_areas = compaction_.cma_areas_fd(),
                  .cma_misc = compaction_.cma_misc_fd(),
                  .cma_traced = cma_traced(set_)};
  m.pollution = {.fallback_stats = pollution_.fallback_stats_fd(),
                 .pollution_stats = pollution_.pollution_stats_fd(),
                 .polluted_blocks = pollution_.polluted_blocks_fd(),
                 .pollution_on = pollution_.enabled(),
                 .pageblock_order = pollution_.pageblock_order()};
  return m;
}

std::vector<MapMemory> BpfPrograms::map_memory() const {
  std::vector<MapMemory> out;
  const std::pair<const char*, const bpf_object*> objects[] = {
      {"stalls", stalls_.obj()}, {"compaction", compaction_.obj()}, {"pollution", pollution_.obj()}};
  for (const auto& [object, obj] : objects)
    if (!set_.add_map_memory_of(object, obj, out)) return {};
  return out;
}

}  // namespace fragd
