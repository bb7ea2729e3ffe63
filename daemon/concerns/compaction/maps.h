// SPDX-License-Identifier: Apache-2.0
// The compaction object's maps (bpf/compaction.bpf.c, include/compaction.h) read into plain
// totals: the runs and their time by trigger, and the CMA areas' allocations; and the names of
// the triggers and statuses those maps count by.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/histogram.h"
#include "base/result.h"
#include "compaction.h"

namespace fragd {

struct CompactionMapFds {
  int compaction_stats = -1;  // PERCPU_ARRAY, one struct compaction_stats
  int compaction_hist = -1;   // PERCPU_ARRAY, trigger -> struct fragd_hist
  int cma_areas = -1;         // HASH struct cma_area_key -> struct cma_area_stats
  int cma_misc = -1;          // ARRAY, one struct cma_misc
  bool cma_traced = false;    // cma_areas and cma_misc are read (cma_alloc_finish is attached)
};

// One CMA area's allocations (map cma_areas).
struct CmaArea {
  std::string name;
  std::array<LatencyHist, FRAGD_NR_RESULTS> hist;  // [result]
  std::array<uint64_t, FRAGD_NR_RESULTS> pages{};
  uint64_t busy_retries = 0;
  uint64_t unmatched = 0;
};

// The runs' counters (one per-CPU value), and their histograms (one per trigger), which a run's
// end writes just after it counts the run in compaction_stats.runs.
Result<compaction_stats> read_compaction_stats(const CompactionMapFds& maps, int ncpus);
Result<std::array<LatencyHist, FRAGD_NR_TRIGGERS>> read_compaction_hists(const CompactionMapFds& maps, int ncpus);

// The CMA areas, sorted by name, and the allocations no area took (only where cma_traced).
struct CmaReading {
  std::vector<CmaArea> areas;
  cma_misc lost{};
};
Result<CmaReading> read_cma(const CompactionMapFds& maps);

// What the compaction concern keeps of its maps from one tick to the next.
struct CompactionSnapshot {
  compaction_stats compaction{};
  std::array<LatencyHist, FRAGD_NR_TRIGGERS> compaction_hist;  // [trigger]
  // CMA allocations: cma_traced false (and cma empty) where the kernel has no cma tracepoints.
  bool cma_traced = false;
  std::vector<CmaArea> cma;  // sorted by name
  cma_misc cma_lost{};
};

// A tick's read into the last tick's snapshot: the counters, the histograms only when `watch`
// says a run ended since (a run's end counts the run, then adds to its trigger's histogram), the
// CMA areas where traced. On an error `s` holds what was read before it and `watch` is due again.
Result<void> read_compaction(const CompactionMapFds& maps, CompactionSnapshot& s, HistWatch& watch);

const char* trigger_name(unsigned t);
const char* cstatus_name(unsigned s);

}  // namespace fragd
