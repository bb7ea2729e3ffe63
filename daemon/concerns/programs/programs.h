// SPDX-License-Identifier: Apache-2.0
// fragd's three BPF objects composed: each concern's object (concerns/stalls, compaction,
// pollution: object.h) opened, configured, loaded and attached in one order, which is the
// order of the programs' list (the `program` series, the status answer).
// open -> set rodata -> load -> attach are separate steps, so every failure
// says which step failed, on which program, and what to do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "concerns/programs/reader.h"
#include "kernel/bpf_memory.h"
#include "kernel/bpf_object.h"
#include "concerns/compaction/object.h"
#include "concerns/pollution/object.h"
#include "concerns/stalls/object.h"

namespace fragd {

struct BpfOptions {
  uint32_t min_order = 1;
  uint64_t slow_stall_ns = 10'000'000;
  uint64_t stack_interval_ns = 1'000'000'000;  // attribution.stack_interval
  uint32_t stall_stacks = 8192;  // attribution.stacks: buckets of map stall_stacks (FRAGD_STALL_STACKS)
  // fragd's pid as getpid() gives it: in fragd's own pid namespace, which the
  // loader identifies by /proc/self/ns/pid for the BPF side. A compaction
  // written by this process or by a writer it registers (own_writer) is
  // trigger "fragd", in a container's pid namespace too.
  uint32_t self_tgid = 0;
  std::string pidns_path = "/proc/self/ns/pid";
  // Pollution ledger (bpf/pollution.bpf.c): recorded from mm_page_alloc_extfrag (fallbacks only).
  bool track_pollution = true;
  // Attach the mm_page_alloc counting program at start (bpf.allocations: exact).
  bool count_allocations = true;
  // The kernel's pageblock order; 0: read from /proc/pagetypeinfo, else
  // /sys/kernel/mm/transparent_hugepage/hpage_pmd_size, else 9.
  unsigned pageblock_order = 0;
  // Highest end_pfn of any zone, sizing the pollution ledger (one record per
  // pageblock of RAM at most); 0: read from /proc/zoneinfo.
  uint64_t max_pfn = 0;
};

class BpfPrograms {
 public:
  ~BpfPrograms();
  BpfPrograms(const BpfPrograms&) = delete;
  BpfPrograms& operator=(const BpfPrograms&) = delete;

  // Opens, configures, loads and attaches everything. A program whose
  // tracepoint is missing is left detached with a warning; an object that
  // cannot load at all is an error.
  static Result<std::unique_ptr<BpfPrograms>> create(const BpfOptions& opts);

  const std::vector<ProgramState>& programs() const { return set_.programs(); }
  size_t attached_count() const { return set_.attached_count(); }
  // Programs left out because this kernel lacks their tracepoints (the cma programs
  // without CONFIG_CMA): not in programs(), not exported, not a readiness matter.
  const std::vector<std::string>& absent() const { return set_.absent(); }

  // The maps BpfReader reads (concerns/programs/reader.h), from the three objects.
  BpfMapFds map_fds() const;
  int slow_stalls_fd() const { return stalls_.slow_stalls_fd(); }

  // Allocation counting: the mm_page_alloc program attached or not. Each
  // switch moves the objects' count_gen on (include/stalls.h), so a stall opened
  // before the switch is never taken for a stall of the new period. Attaching
  // needs no capability once the program is loaded (a BTF tracepoint link;
  // the classic-tracepoint fallback needs CAP_PERFMON and fails after the drop).
  Result<void> set_counting(bool on);
  bool counting() const { return stalls_.counting(); }
  // Asks the next stall that opens to send a wake-up over wakeups_fd() (a ring buffer of __u32 orders).
  void arm_wakeup() { stalls_.arm_wakeup(); }
  int wakeups_fd() const { return stalls_.wakeups_fd(); }

  // fragd's compaction writers (concerns/act/child_write.h), by pid in fragd's pid
  // namespace: the compaction runs of a registered process count as trigger
  // "fragd" (compaction object), and its stalls and allocations are fragd's own,
  // not the host's (stalls object). A few at a time (the map holds 16).
  Result<void> own_writer(uint32_t pid);
  void disown_writer(uint32_t pid) { compaction_.unregister_writer(pid); }

  // Run statistics of every loaded program.
  std::vector<ProgramRunStats> run_stats() const { return set_.run_stats(); }
  // What each map of the three objects takes in the kernel (its fdinfo's memlock), one entry
  // per map and one for each object's global variables; maps not created on this kernel (the
  // CMA ones without CONFIG_CMA) are not there. Empty, with one warning, when an fdinfo
  // cannot be read: a partial sum would understate the total.
  std::vector<MapMemory> map_memory() const;

  // The pollution ledger: the extfrag program is attached and recording.
  bool pollution_enabled() const { return pollution_.enabled(); }
  unsigned pageblock_order() const { return pollution_.pageblock_order(); }

 private:
  BpfPrograms() = default;
  Result<void> attach_all(bool count_allocations);

  // The objects before the set: the set's links go first, then the objects holding their programs.
  StallsObject stalls_;
  CompactionObject compaction_;
  PollutionObject pollution_;
  ProgramSet set_;
};

}  // namespace fragd
