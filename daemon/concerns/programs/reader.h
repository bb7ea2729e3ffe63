// SPDX-License-Identifier: Apache-2.0
// The three BPF objects' maps read at a tick, each by its concern's reader (concerns/stalls/maps,
// compaction/maps, pollution/maps, attribution/maps), composed: the descriptors BpfPrograms hands
// out, one snapshot of the counters, and the ledger and attribution reads the concerns make.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/histogram.h"
#include "base/result.h"
#include "concerns/attribution/maps.h"
#include "concerns/compaction/maps.h"
#include "concerns/pollution/maps.h"
#include "concerns/stalls/maps.h"

namespace fragd {

// The stalls object's counters and histograms are the stalls concern's own read
// (concerns/stalls/maps.h, StallsSnapshot), handed to the others in the Tick.
struct BpfSnapshot {
  compaction_stats compaction{};
  std::array<LatencyHist, FRAGD_NR_TRIGGERS> compaction_hist;  // [trigger]
  fallback_stats fallback{};
  // CMA allocations: cma_traced false (and cma empty) where the kernel has no cma tracepoints.
  bool cma_traced = false;
  std::vector<CmaArea> cma;  // sorted by name
  cma_misc cma_lost{};
};

// The maps the reader reads, by descriptor, as each concern names them. Filled by whoever loaded
// the objects (BpfPrograms::map_fds); the descriptors stay theirs and must outlive the reader.
struct BpfMapFds {
  StallsMapFds stalls;
  CompactionMapFds compaction;
  PollutionMapFds pollution;
  AttributionMapFds attribution;
};

// What a tick's read (BpfReader::read_into) keeps between ticks.
struct HistCounts {
  HistWatch runs;
};

class BpfReader {
 public:
  explicit BpfReader(const BpfMapFds& maps);
  // A tick's read into the last tick's snapshot `s` (or a new one). A compaction run's end
  // counts the run, then adds to its trigger's histogram. So the histograms are read only when
  // their HistWatch says (a quiet host's tick reads the counters, not the histograms).
  // On an error `s` holds what was read before it, and the next read reads every histogram.
  Result<void> read_into(BpfSnapshot& s, HistCounts& seen) const;

  Result<PollutionSnapshot> read_pollution() const { return fragd::read_pollution(maps_.pollution, ncpus_); }
  Result<PollutionCounters> read_pollution_counters() const {
    return fragd::read_pollution_counters(maps_.pollution, ncpus_);
  }
  Result<alloc_stats> read_alloc_stats() const { return fragd::read_alloc_stats(maps_.stalls, ncpus_); }
  Result<compaction_stats> read_compaction_stats() const {
    return fragd::read_compaction_stats(maps_.compaction, ncpus_);
  }
  Result<void> read_attribution(std::vector<SiteCount>& sites, std::vector<CgroupCount>& cgroups) const {
    return fragd::read_attribution(maps_.attribution, sites, cgroups);
  }
  Result<std::vector<uint64_t>> read_stack(int32_t id) const { return fragd::read_stack(maps_.attribution, id); }
  void forget_cgroup(uint64_t cgroup_id) const { fragd::forget_cgroup(maps_.attribution, cgroup_id); }
  Result<void> release_polluted(uint64_t block) const { return fragd::release_polluted(maps_.pollution, block); }
  Result<uint64_t> polluted_last_boot_ns(uint64_t block) const {
    return fragd::polluted_last_boot_ns(maps_.pollution, block);
  }

 private:
  BpfMapFds maps_;
  int ncpus_;
};

}  // namespace fragd
