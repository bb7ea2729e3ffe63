// Loads and attaches fragd's three BPF objects (embedded skeletons).
// open -> set rodata -> load -> attach are separate steps, so every failure
// says which step failed, on which program, and what to do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

struct alloc_bpf;
struct compaction_bpf;
struct fallback_bpf;
struct bpf_program;
struct bpf_link;

namespace fragd {

struct ProgramState {
  std::string name;      // program name, the `program` label
  std::string tracepoint;
  bool attached = false;
  std::string error;     // why not, when not attached
};

struct BpfOptions {
  uint32_t min_order = 1;
  uint64_t slow_stall_ns = 10'000'000;
  uint32_t self_tgid = 0;
  // Pollution tracking (bpf/fallback.bpf.c): off leaves mm_page_free and
  // mm_page_pcpu_drain untouched, so page frees cost nothing.
  bool track_pollution = true;
  // The kernel's pageblock order; 0: read from /proc/pagetypeinfo, else
  // /sys/kernel/mm/transparent_hugepage/hpage_pmd_size, else 9.
  unsigned pageblock_order = 0;
  // Highest end_pfn of any zone, sizing the per-block counts; 0: read from
  // /proc/zoneinfo, else FRAGD_POLLUTION_MAX_BLOCKS blocks.
  uint64_t max_pfn = 0;
  // Polluting allocations recorded at once (80 bytes of kernel memory each);
  // fallbacks beyond are counted as untracked. 0: FRAGD_POLLUTION_PAGE_ENTRIES.
  uint32_t pollution_max_allocs = 0;
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

  int alloc_stats_fd() const;
  int stall_hist_fd() const;
  int slow_stalls_fd() const;
  int compaction_stats_fd() const;
  int compaction_hist_fd() const;
  int fallback_stats_fd() const;

  // Pollution tracking. pollution_enabled(): the extfrag program and both
  // release programs (mm_page_free, mm_page_pcpu_drain) are attached and the
  // per-block counts are mapped; recording starts only then.
  bool pollution_enabled() const { return pollution_on_; }
  unsigned pageblock_order() const { return pageblock_order_; }
  int pollution_stats_fd() const;
  int pollution_pages_fd() const;   // HASH pfn -> order
  int polluted_blocks_fd() const;   // HASH block -> struct pollution_block
  int block_pollution_fd() const;   // ARRAY block -> outstanding pages
  // block_pollution, mapped read-only: block_counts()[b] is block b's
  // outstanding recorded pages, b < block_count_entries(); nullptr when not mapped.
  const volatile uint64_t* block_counts() const { return block_counts_; }
  uint32_t block_count_entries() const { return block_count_entries_; }
  // The programs whose skipped runs (bpf_prog_info.recursion_misses) lose
  // pollution events: extfrag, page_free, page_pcpu_drain (those loaded).
  std::vector<int> pollution_prog_fds() const;

 private:
  BpfPrograms() = default;
  Result<void> attach_all();
  bool attach_one(bpf_program* prog, const std::string& tracepoint);
  Result<void> map_block_counts();

  alloc_bpf* alloc_ = nullptr;
  compaction_bpf* compaction_ = nullptr;
  fallback_bpf* fallback_ = nullptr;
  std::vector<::bpf_link*> links_;
  std::vector<ProgramState> programs_;
  unsigned pageblock_order_ = 9;
  bool track_pollution_ = false;
  bool pollution_on_ = false;
  const volatile uint64_t* block_counts_ = nullptr;
  uint32_t block_count_entries_ = 0;
  size_t block_counts_len_ = 0;
};

// Checks for CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); the message names what is missing.
Result<void> check_bpf_privileges();

// Checks the kernel exposes BTF (CO-RE needs it).
Result<void> check_kernel_btf();

}  // namespace fragd
