// SPDX-License-Identifier: Apache-2.0
// The pollution object's maps (bpf/pollution.bpf.c, include/pollution.h) read into plain
// totals: the fallback counters, the ledger's counters and its block records; a record's
// release; and the names of the migratetypes those maps count by.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include <pollution.h>  // include/pollution.h (the BPF structs), not this folder's pollution.h

namespace fragd {

struct PollutionMapFds {
  int fallback_stats = -1;   // PERCPU_ARRAY, one struct fallback_stats
  int pollution_stats = -1;  // PERCPU_ARRAY, one struct pollution_stats
  int polluted_blocks = -1;  // HASH block -> struct pollution_block
  bool pollution_on = false; // the ledger is recording
  unsigned pageblock_order = 9;
};

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

Result<fallback_stats> read_fallback_stats(const PollutionMapFds& maps, int ncpus);

// The ledger's counters alone (a per-CPU array read): enough to tell whether the ledger moved.
// Error (ENOENT) when the ledger is off, before any map is read.
Result<PollutionCounters> read_pollution_counters(const PollutionMapFds& maps, int ncpus);
// Every recorded block with its who/when record (first_ns/last_ns converted to CLOCK_REALTIME)
// and the counters.
Result<PollutionSnapshot> read_pollution(const PollutionMapFds& maps, int ncpus);
// Deletes a block's record (the scan found it clean); a missing one is no error.
Result<void> release_polluted(const PollutionMapFds& maps, uint64_t block);
// The block's latest recorded fallback, CLOCK_BOOTTIME ns (error when it has no record).
Result<uint64_t> polluted_last_boot_ns(const PollutionMapFds& maps, uint64_t block);

// The pollution ledger's size (bpf/pollution.bpf.c polluted_blocks): one record per pageblock
// of the physical address range [0, max_pfn), at most `cap`. max_pfn 0 (unknown) is `cap`.
struct LedgerSize {
  uint64_t blocks = 0;   // pageblocks below max_pfn (0 when max_pfn is unknown)
  uint64_t entries = 0;  // the map's max_entries
  bool capped = false;   // blocks > cap: fallbacks into the rest are counted, not recorded
};
LedgerSize pollution_ledger_size(uint64_t max_pfn, unsigned pageblock_order, uint64_t cap);

const char* migratetype_name(unsigned mt);

}  // namespace fragd
