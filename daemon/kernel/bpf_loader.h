// SPDX-License-Identifier: Apache-2.0
// Loads and attaches fragd's three BPF objects (embedded skeletons).
// open -> set rodata -> load -> attach are separate steps, so every failure
// says which step failed, on which program, and what to do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernel/bpf_memory.h"

struct stalls_bpf;
struct compaction_bpf;
struct pollution_bpf;
struct bpf_program;
struct bpf_link;

namespace fragd {

struct ProgramState {
  std::string name;      // program name, the `program` label
  std::string tracepoint;
  bool attached = false;
  std::string error;     // why not, when not attached
  uint32_t id = 0;       // kernel program id (bpftool prog show id N), 0 when not loaded
  int fd = -1;           // program fd, -1 when not loaded
  // The per-page allocation counter: attached only while counting is on (bpf.allocations).
  bool per_page = false;
};

// Kernel run statistics of one program (bpf_prog_info).
struct ProgramRunStats {
  std::string name;
  uint32_t id = 0;
  uint64_t run_cnt = 0;      // runs counted while BPF run-time stats were on
  uint64_t run_time_ns = 0;  // their total run time
  uint64_t recursion_misses = 0;
};

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

  const std::vector<ProgramState>& programs() const { return programs_; }
  size_t attached_count() const;
  // Programs left out because this kernel lacks their tracepoints (the cma programs
  // without CONFIG_CMA): not in programs(), not exported, not a readiness matter.
  const std::vector<std::string>& absent() const { return absent_; }

  int alloc_stats_fd() const;
  int stall_hist_fd() const;
  int slow_stalls_fd() const;
  int compaction_stats_fd() const;
  int compaction_hist_fd() const;
  int cma_areas_fd() const;
  int cma_misc_fd() const;
  // cma_alloc_finish is attached: fragd_cma_* are read and exported (kernels with CONFIG_CMA).
  bool cma_traced() const;
  int fallback_stats_fd() const;
  int stall_sites_fd() const;    // HASH struct stall_site_key -> struct stall_attr
  int stall_cgroups_fd() const;  // HASH cgroup v2 id -> struct stall_attr
  int stall_stacks_fd() const;   // STACK_TRACE id -> FRAGD_STACK_DEPTH return addresses

  // Allocation counting: the mm_page_alloc program attached or not. Each
  // switch moves the objects' count_gen on (include/stalls.h), so a stall opened
  // before the switch is never taken for a stall of the new period. Attaching
  // needs no capability once the program is loaded (a BTF tracepoint link;
  // the classic-tracepoint fallback needs CAP_PERFMON and fails after the drop).
  Result<void> set_counting(bool on);
  bool counting() const { return counting_link_ != nullptr; }
  // Asks the next stall that opens to send a wake-up over wakeups_fd() (a ring buffer of __u32 orders).
  void arm_wakeup();
  int wakeups_fd() const;

  // fragd's compaction writers (act/child_write.h), by pid in fragd's pid
  // namespace: the compaction runs of a registered process count as trigger
  // "fragd". A few at a time (the map holds 16).
  Result<void> own_writer(uint32_t pid);
  void disown_writer(uint32_t pid);

  // Run statistics of every loaded program.
  std::vector<ProgramRunStats> run_stats() const;
  // What each map of the three objects takes in the kernel (its fdinfo's memlock), one entry
  // per map and one for each object's global variables; maps not created on this kernel (the
  // CMA ones without CONFIG_CMA) are not there. Empty, with one warning, when an fdinfo
  // cannot be read: a partial sum would understate the total.
  std::vector<MapMemory> map_memory() const;

  // The pollution ledger: the extfrag program is attached and recording.
  bool pollution_enabled() const { return pollution_on_; }
  unsigned pageblock_order() const { return pageblock_order_; }
  int pollution_stats_fd() const;
  int polluted_blocks_fd() const;   // HASH block -> struct pollution_block

 private:
  BpfPrograms() = default;
  Result<void> attach_all(bool count_allocations);
  bool attach_one(bpf_program* prog, const std::string& tracepoint, bool per_page, bool attach);
  bpf_program* page_alloc_prog() const;

  stalls_bpf* stalls_ = nullptr;
  compaction_bpf* compaction_ = nullptr;
  pollution_bpf* pollution_ = nullptr;
  std::vector<::bpf_link*> links_;
  ::bpf_link* counting_link_ = nullptr;  // the mm_page_alloc program's, while counting
  std::vector<ProgramState> programs_;
  std::vector<std::string> absent_;
  unsigned pageblock_order_ = 9;
  bool track_pollution_ = false;
  bool pollution_on_ = false;
  mutable bool map_memory_warned_ = false;
};

// Checks for CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); the message names what is missing.
Result<void> check_bpf_privileges();

// Checks the kernel exposes BTF (CO-RE needs it).
Result<void> check_kernel_btf();

}  // namespace fragd
