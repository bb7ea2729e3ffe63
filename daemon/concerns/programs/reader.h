// SPDX-License-Identifier: Apache-2.0
// The three BPF objects' maps, each read by its concern's reader (concerns/stalls/maps,
// compaction/maps, pollution/maps, attribution/maps), composed: the descriptors BpfPrograms hands
// out and the reads the ports of pollution, attribution and the act runner make. Stalls and
// compaction read their counters and histograms themselves at each tick.
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

// The maps the reader reads, by descriptor, as each concern names them. Filled by whoever loaded
// the objects (BpfPrograms::map_fds); the descriptors stay theirs and must outlive the reader.
struct BpfMapFds {
  StallsMapFds stalls;
  CompactionMapFds compaction;
  PollutionMapFds pollution;
  AttributionMapFds attribution;
};

class BpfReader {
 public:
  explicit BpfReader(const BpfMapFds& maps);

  Result<PollutionSnapshot> read_pollution() const { return fragd::read_pollution(maps_.pollution, ncpus_); }
  Result<fallback_stats> read_fallback() const { return read_fallback_stats(maps_.pollution, ncpus_); }
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
