// SPDX-License-Identifier: Apache-2.0
#include "concerns/stalls/object.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "stalls.h"
#include "stalls.skel.h"

namespace fragd {

StallsObject::~StallsObject() {
  if (counting_link_) bpf_link__destroy(counting_link_);
  if (skel_) stalls_bpf::destroy(skel_);
}

Result<void> StallsObject::open() {
  skel_ = stalls_bpf::open();
  if (!skel_) return sys_error("open BPF object stalls");
  return {};
}

Result<void> StallsObject::configure(uint32_t min_order, uint64_t slow_stall_ns, uint64_t stack_interval_ns,
                                     uint32_t stall_stacks) {
  skel_->rodata->min_order = min_order;
  skel_->rodata->slow_stall_ns = slow_stall_ns;
  skel_->rodata->stack_interval_ns = stack_interval_ns;
  if (bpf_map__set_max_entries(skel_->maps.stall_stacks, stall_stacks))
    return sys_error("size map stall_stacks of BPF object stalls to " + std::to_string(stall_stacks) +
                     " stacks (attribution.stacks)");
  return {};
}

void StallsObject::choose_programs(const btf* vmlinux) {
  const bool page_alloc_btf = has_btf_tracepoint(vmlinux, "mm_page_alloc");
  bpf_program__set_autoload(skel_->progs.page_alloc_btf, page_alloc_btf);
  bpf_program__set_autoload(skel_->progs.page_alloc_tp, !page_alloc_btf);
}

Result<void> StallsObject::load() {
  if (int err = stalls_bpf::load(skel_)) return load_error("stalls", -err);
  return {};
}

bpf_program* StallsObject::page_alloc_prog() const {
  return bpf_program__autoload(skel_->progs.page_alloc_btf) ? skel_->progs.page_alloc_btf
                                                             : skel_->progs.page_alloc_tp;
}

void StallsObject::next_gen() { __atomic_add_fetch(&skel_->bss->count_gen, 1, __ATOMIC_SEQ_CST); }

void StallsObject::attach(ProgramSet& set, bool count_allocations) {
  if (count_allocations) next_gen();
  const bool attached = set.attach_per_page({page_alloc_prog(), "kmem", "mm_page_alloc"}, count_allocations,
                                            "allocation counting is off", &counting_link_);
  // count_gen is odd exactly while the program is attached (include/stalls.h): undo the move if it is not.
  if (count_allocations && !attached) next_gen();
  const Tracepoint stalls[] = {
      {skel_->progs.try_to_compact, "compaction", "mm_compaction_try_to_compact_pages"},
      {skel_->progs.reclaim_begin, "vmscan", "mm_vmscan_direct_reclaim_begin"},
      {skel_->progs.reclaim_end, "vmscan", "mm_vmscan_direct_reclaim_end"},
      {skel_->progs.compaction_run_end, "compaction", "mm_compaction_end"},
  };
  for (const auto& tp : stalls) set.attach(tp);
}

Result<void> StallsObject::set_counting(bool on, ProgramState& st) {
  if (on == counting()) return {};
  if (on) {
    // The generation moves first: a stall opened from here on belongs to this period.
    next_gen();
    ::bpf_link* link = bpf_program__attach(page_alloc_prog());
    if (!link) {
      const int err = errno;
      next_gen();
      st.error = strerror(err);
      return make_error("attach " + st.name + " to " + st.tracepoint + ": " + st.error +
                            (err == EPERM || err == EACCES
                                 ? " (this kernel attaches it through perf_event_open, which needs CAP_PERFMON; "
                                   "fragd dropped it after start-up: use bpf.allocations: exact)"
                                 : ""),
                        err);
    }
    counting_link_ = link;
    st.attached = true;
    st.error.clear();
  } else {
    bpf_link__destroy(counting_link_);
    counting_link_ = nullptr;
    next_gen();
    st.attached = false;
    st.error = "allocation counting is off";
  }
  return {};
}

void StallsObject::arm_wakeup() { __atomic_store_n(&skel_->bss->wake_armed, 1u, __ATOMIC_SEQ_CST); }
int StallsObject::wakeups_fd() const { return bpf_map__fd(skel_->maps.alloc_wakeups); }

Result<void> StallsObject::mark_own(uint32_t pid) {
  // Task storage, which a pidfd names in any pid namespace.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0)
    return sys_error("open a pidfd for process " + std::to_string(pid) +
                     " to mark it as fragd's own (its stalls would count as the host's)");
  ::open_stall mark = {};
  mark.own = 1;
  const int rc = bpf_map_update_elem(bpf_map__fd(skel_->maps.open_stalls), &pidfd, &mark, BPF_ANY);
  const int err = errno;
  close(pidfd);
  if (rc != 0)
    return sys_error("mark process " + std::to_string(pid) +
                     " as fragd's own (task storage open_stalls): its stalls would count as the host's", err);
  return {};
}

const bpf_object* StallsObject::obj() const { return skel_->obj; }
int StallsObject::alloc_stats_fd() const { return bpf_map__fd(skel_->maps.alloc_stats); }
int StallsObject::stall_hist_fd() const { return bpf_map__fd(skel_->maps.stall_hist); }
int StallsObject::slow_stalls_fd() const { return bpf_map__fd(skel_->maps.slow_stalls); }
int StallsObject::stall_sites_fd() const { return bpf_map__fd(skel_->maps.stall_sites); }
int StallsObject::failure_sites_fd() const { return bpf_map__fd(skel_->maps.failure_sites); }
int StallsObject::stall_cgroups_fd() const { return bpf_map__fd(skel_->maps.stall_cgroups); }
int StallsObject::stall_stacks_fd() const { return bpf_map__fd(skel_->maps.stall_stacks); }

}  // namespace fragd
