// SPDX-License-Identifier: Apache-2.0
// When the attribution maps are read (a hash map read costs more than the per-CPU counters):
// at a tick whose stall or failure counters moved since the last round, and every 10 s anyway, a sweep
// that notices deleted cgroups and reads the THP coverage of the cgroups with a series.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "concerns/attribution/attribution.h"
#include "concerns/thp/cgroup_anon.h"

namespace fragd {

// What a round needs of the BPF side (BpfReader in fragd, fakes in unit tests).
struct AttributionMaps {
  std::function<Result<void>(std::vector<SiteCount>&, std::vector<CgroupCount>&)> read;
  StallAttribution::StackReader read_stack;
  std::function<void(uint64_t cgroup_id)> forget;  // a cgroup folded into "other": delete its entry
};

// How a round reports a problem: logged once per key until cleared(key) says it went away.
struct AttributionNotes {
  std::function<void(const std::string& key, const std::string& message)> warn, cleared;
};

class AttributionRounds {
 public:
  static constexpr uint64_t kSweepNs = 10'000'000'000ULL;
  AttributionRounds(size_t top_cgroups, size_t top_callsites) : a_(top_cgroups, top_callsites) {}
  void set_limits(size_t top_cgroups, size_t top_callsites) { a_.set_limits(top_cgroups, top_callsites); }

  // One tick at `now` with the per-CPU counters `st`: a round when they moved or a sweep is
  // due. `read_anon` reads one cgroup's THP coverage (by path) at a sweep.
  void tick(uint64_t now, const alloc_stats& st, const AttributionMaps& maps, KernelSymbols* syms,
            CgroupLookup& cgroups, const std::function<Result<CgroupAnon>(const std::string&)>& read_anon,
            const AttributionNotes& notes);

  // Null until a round read the maps.
  const AttributionView* view() const { return read_ ? &a_.view() : nullptr; }
  const std::map<std::string, CgroupAnon>* cgroup_anon() const { return read_ ? &anon_ : nullptr; }
  uint64_t rounds() const { return rounds_; }

 private:
  StallAttribution a_;
  std::map<std::string, CgroupAnon> anon_;  // THP coverage of the exported cgroups, every sweep
  uint64_t total_ = 0, swept_ns_ = 0, rounds_ = 0;
  bool read_ = false;
};

}  // namespace fragd
