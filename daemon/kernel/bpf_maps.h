// SPDX-License-Identifier: Apache-2.0
// Reads fragd's BPF maps into plain totals (per-CPU values summed).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "stalls.h"
#include "compaction.h"
#include "base/histogram.h"
#include "base/result.h"
#include "pollution.h"

namespace fragd {

// One polluted pageblock.
struct PollutedBlock {
  uint64_t block = 0;      // pfn >> pageblock_order
  uint64_t pages = 0;      // pages handed out by recorded fallbacks since the block was clean
  uint64_t events = 0;     // polluting fallbacks into the block since it was clean
  uint64_t first_ns = 0;   // CLOCK_REALTIME ns of the first of them
  uint64_t last_ns = 0;    // CLOCK_REALTIME ns of the latest
  uint64_t last_boot_ns = 0;  // the same, CLOCK_BOOTTIME (to compare with a scan's start)
  uint32_t pid = 0;        // the task of the first fallback: tgid, comm, cgroup v2 id
  std::string comm;
  uint64_t cgroup_id = 0;
  unsigned alloc_mt = 0;   // enum fragd_migratetype: FRAGD_MT_UNMOVABLE or FRAGD_MT_RECLAIMABLE
  int node = -1;           // filled by summarize_pollution; -1: in no zone span
};

// Totals kept by the BPF program (summed over CPUs) and by fragd's reconciliation.
struct PollutionCounters {
  uint64_t events = 0;             // polluting fallbacks seen
  uint64_t untracked_full = 0;     // not recorded: the ledger was full
  uint64_t untracked_range = 0;    // not recorded: block number beyond 32 bits, or larger than a block
  uint64_t added_pages = 0;        // pages recorded, ever
  uint64_t added_blocks = 0;       // ledger entries made, ever
  uint64_t released_pages = 0;     // pages of the records released after a scan found their block clean
  uint64_t released_blocks = 0;    // records released so
  uint64_t untracked_events() const { return untracked_full + untracked_range; }
};

struct PollutionSnapshot {
  unsigned pageblock_order = 9;
  PollutionCounters counters;
  std::vector<PollutedBlock> blocks;  // every block with a record and pages > 0, unordered
};


// One entry of map stall_sites (or of failure_sites: `failure`, attr.entries is the count).
struct SiteCount {
  stall_site_key key{};
  stall_attr attr{};
  bool failure = false;
};
struct CgroupCount {
  uint64_t cgroup_id = 0;
  stall_attr attr{};
};

// One CMA area's allocations (map cma_areas).
struct CmaArea {
  std::string name;
  std::array<LatencyHist, FRAGD_NR_RESULTS> hist;  // [result]
  std::array<uint64_t, FRAGD_NR_RESULTS> pages{};
  uint64_t busy_retries = 0;
  uint64_t unmatched = 0;
};

struct BpfSnapshot {
  alloc_stats alloc{};
  std::array<std::array<LatencyHist, FRAGD_NR_RESULTS>, FRAGD_NR_ORDERS> stall;  // [order][result]
  compaction_stats compaction{};
  std::array<LatencyHist, FRAGD_NR_TRIGGERS> compaction_hist;                     // [trigger]
  fallback_stats fallback{};
  // CMA allocations: cma_traced false (and cma empty) where the kernel has no cma tracepoints.
  bool cma_traced = false;
  std::vector<CmaArea> cma;  // sorted by name
  cma_misc cma_lost{};
};

// The maps BpfReader reads, by descriptor, and what it must know of them. Filled by whoever
// loaded the objects (sources/programs: BpfPrograms::map_fds), so the reader knows no object;
// the descriptors stay theirs, and must outlive the reader.
struct BpfMapFds {
  int alloc_stats = -1;       // stalls
  int stall_hist = -1;
  int stall_sites = -1;       // HASH struct stall_site_key -> struct stall_attr
  int failure_sites = -1;     // HASH struct stall_site_key -> struct stall_attr (entries: failed allocations)
  int stall_cgroups = -1;     // HASH cgroup v2 id -> struct stall_attr
  int stall_stacks = -1;      // STACK_TRACE id -> FRAGD_STACK_DEPTH return addresses
  int compaction_stats = -1;  // compaction
  int compaction_hist = -1;
  int cma_areas = -1;
  int cma_misc = -1;
  bool cma_traced = false;    // cma_areas and cma_misc are read (cma_alloc_finish is attached)
  int fallback_stats = -1;    // pollution
  int pollution_stats = -1;
  int polluted_blocks = -1;   // HASH block -> struct pollution_block
  bool pollution_on = false;  // the ledger is recording
  unsigned pageblock_order = 9;
};

class BpfReader {
 public:
  explicit BpfReader(const BpfMapFds& maps);
  Result<BpfSnapshot> read() const;

  // The pollution ledger (bpf/pollution.bpf.c): every recorded block with its
  // who/when record (first_ns/last_ns converted to CLOCK_REALTIME) and the
  // pollution counters. Error when the ledger is off or a map cannot be read.
  Result<PollutionSnapshot> read_pollution() const;
  // The counters alone (a per-CPU array read): enough to tell whether the ledger moved.
  Result<PollutionCounters> read_pollution_counters() const;
  // The allocation counters alone (map alloc_stats, one per-CPU array read), for a caller that
  // polls them while an action runs.
  Result<alloc_stats> read_alloc_stats() const;
  // Every entry of maps stall_sites, failure_sites (SiteCount::failure) and stall_cgroups (unordered).
  Result<void> read_attribution(std::vector<SiteCount>& sites, std::vector<CgroupCount>& cgroups) const;
  // The return addresses of stack `id` of map stall_stacks (innermost first, zeros dropped).
  Result<std::vector<uint64_t>> read_stack(int32_t id) const;
  // Forgets a cgroup's stall counts (the cgroup is gone, its counts are folded in by fragd).
  void forget_cgroup(uint64_t cgroup_id) const;

  // Deletes a block's record (the scan found it clean); a missing one is no error.
  Result<void> release_polluted(uint64_t block) const;
  // The block's latest recorded fallback, CLOCK_BOOTTIME ns (error when it has no record).
  Result<uint64_t> polluted_last_boot_ns(uint64_t block) const;

 private:
  BpfMapFds maps_;
  int ncpus_;
};

const char* trigger_name(unsigned t);
const char* cstatus_name(unsigned s);
const char* migratetype_name(unsigned mt);
const char* outcome_name(unsigned o);
const char* result_name(unsigned r);
const char* phase_name(unsigned p);

}  // namespace fragd
