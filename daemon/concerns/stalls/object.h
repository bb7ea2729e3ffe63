// SPDX-License-Identifier: Apache-2.0
// The stalls BPF object (bpf/stalls.bpf.c, its embedded skeleton): the stall and allocation
// programs, their knobs and maps, the per-page counting program switched on and off (with
// count_gen), the wake-up ring buffer, and the mark of fragd's own tasks.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "kernel/bpf_object.h"

struct stalls_bpf;

namespace fragd {

class StallsObject {
 public:
  StallsObject() = default;
  ~StallsObject();
  StallsObject(const StallsObject&) = delete;
  StallsObject& operator=(const StallsObject&) = delete;

  Result<void> open();
  // The knobs (rodata) and map stall_stacks' buckets (attribution.stacks).
  Result<void> configure(uint32_t min_order, uint64_t slow_stall_ns, uint64_t stack_interval_ns,
                         uint32_t stall_stacks);
  // mm_page_alloc as a BTF tracepoint where the kernel's BTF has it, else the classic one.
  void choose_programs(const btf* vmlinux);
  Result<void> load();
  // The per-page counting program (attached now when `count_allocations`), then the stall
  // programs, in that order (the programs' list order).
  void attach(ProgramSet& set, bool count_allocations);

  // Allocation counting: the mm_page_alloc program attached or not, its state `st` kept. Each
  // switch moves count_gen on (include/stalls.h), so a stall opened before the switch is never
  // taken for a stall of the new period.
  Result<void> set_counting(bool on, ProgramState& st);
  bool counting() const { return counting_link_ != nullptr; }
  // Asks the next stall that opens to send a wake-up over wakeups_fd().
  void arm_wakeup();
  int wakeups_fd() const;
  // Marks process `pid` (fragd's pid namespace) as fragd's own in its task storage: its
  // stalls and allocations are not the host's.
  Result<void> mark_own(uint32_t pid);

  const bpf_object* obj() const;
  int alloc_stats_fd() const;
  int stall_hist_fd() const;
  int slow_stalls_fd() const;
  int stall_sites_fd() const;    // HASH struct stall_site_key -> struct stall_attr
  int failure_sites_fd() const;  // HASH struct stall_site_key -> struct stall_attr (entries: failures)
  int stall_cgroups_fd() const;  // HASH cgroup v2 id -> struct stall_attr
  int stall_stacks_fd() const;   // STACK_TRACE id -> FRAGD_STACK_DEPTH return addresses

 private:
  bpf_program* page_alloc_prog() const;
  void next_gen();

  stalls_bpf* skel_ = nullptr;
  ::bpf_link* counting_link_ = nullptr;  // the mm_page_alloc program's, while counting
};

}  // namespace fragd
