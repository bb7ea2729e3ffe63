// SPDX-License-Identifier: Apache-2.0
// Who stalls, who pays, where: the BPF side's stall sites and cgroups turned into
// bounded, monotonic series.
//
// Consumers: every site is classified once (classify.h) and keeps its class, so
// each (order, consumer) series only grows; what found the sites map full is
// consumer "other". Their sums over consumer equal fragd_direct_stall_entries_total
// and fragd_alloc_stall_phase_seconds_total summed over phase.
//
// Cgroups and call sites: at most K of each get a series of their own, chosen by
// stall time among those with none yet while fewer than K have one; the rest are
// summed as "other". A cgroup keeps its series until it is deleted; its counts then
// go to "other". A cgroup or call site that gets a series after its counts were
// already in "other" starts from what it added since, so "other" never shrinks
// and every series stays monotonic.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/result.h"
#include "concerns/attribution/maps.h"
#include "kernel/kallsyms.h"
#include "concerns/attribution/cgroups.h"

namespace fragd {

struct Attr {
  uint64_t entries = 0;  // stall events: entries into direct compaction or reclaim
  uint64_t ns = 0;       // time in them
  Attr& operator+=(const Attr& o) {
    entries += o.entries;
    ns += o.ns;
    return *this;
  }
};

// One series of a top-K family: its label and what was already in "other" when it began.
struct TopSeries {
  std::string label;
  Attr base;
};

// A stack as fragd shows it (fragctl top --stacks).
struct StackView {
  int32_t stack_id = -1;
  std::string consumer, callsite;
  std::vector<std::string> frames;  // the named frames' functions, innermost first
  uint64_t unnamed_frames = 0;      // frames no symbol names (no kallsyms): left out, never an address
  Attr attr;
};

struct AttributionView {
  std::map<std::pair<unsigned, std::string>, Attr> consumers;  // (order, consumer), every consumer of a stalled order
  // Failed allocations by (order, could sleep, consumer), from map failure_sites (entries: the count).
  std::map<std::tuple<unsigned, bool, std::string>, uint64_t> failures;
  uint64_t failures_counted[FRAGD_NR_ORDERS][2] = {};  // alloc_stats.failures: what the map missed is "other"
  std::vector<std::pair<std::string, Attr>> cgroups;           // exported paths, then "other"
  std::vector<std::pair<std::string, Attr>> callsites;         // exported call sites, then "other"
  std::vector<StackView> stacks;                               // every stack, by stall time, most first
  uint64_t sites_full_entries = 0, cgroups_full_entries = 0;   // attribution that found its BPF map full
  uint64_t stacks_lost = 0;  // stall events under no stack: it found no room in BPF map stall_stacks
  uint64_t cgroups_removed = 0;                                // deleted cgroups folded into "other"
  bool symbols = false;
  std::string symbols_why_not;
};

class StallAttribution {
 public:
  StallAttribution(size_t top_cgroups, size_t top_callsites) : top_cgroups_(top_cgroups), top_callsites_(top_callsites) {}
  // A new K applies to the series made from now on; none is taken away.
  void set_limits(size_t top_cgroups, size_t top_callsites) {
    top_cgroups_ = top_cgroups;
    top_callsites_ = top_callsites;
  }

  using StackReader = std::function<Result<std::vector<uint64_t>>(int32_t)>;
  // One round: the BPF maps' entries and the per-CPU counters as read now. `sweep`: check
  // every known cgroup for deletion (every few seconds; exported ones are checked each round).
  void update(const std::vector<SiteCount>& sites, const std::vector<CgroupCount>& cgroups, const alloc_stats& st,
              const StackReader& read_stack, KernelSymbols* syms, CgroupLookup& lookup, bool sweep);
  // Cgroup ids folded into "other" since the last call: the caller deletes their BPF entries.
  std::vector<uint64_t> take_forgotten();
  const AttributionView& view() const { return view_; }

 private:
  struct SiteInfo {
    std::string consumer, callsite;
  };
  using SiteKey = std::tuple<uint64_t, int32_t, uint32_t, uint32_t>;  // gfp, stack, order, task kind
  static SiteKey key_of(const stall_site_key& k) { return {k.gfp, k.stack_id, k.order, k.task_kind}; }
  void name_stacks(const std::vector<SiteCount>& sites, const StackReader& read_stack, KernelSymbols* syms);
  // The cgroups' part of `v`: deleted cgroups folded into "other", the top K, the rest.
  void update_cgroups(const std::vector<CgroupCount>& cgroups, const alloc_stats& st, CgroupLookup& lookup,
                      bool sweep, AttributionView& v);

  size_t top_cgroups_, top_callsites_;
  std::map<SiteKey, SiteInfo> site_info_;
  std::map<int32_t, std::vector<std::string>> frames_;  // by stack id; "" for a frame no symbol names
  // Cgroups: exported series by id, what each id showed in the last round (in "other"
  // or in its series), and the counts of deleted cgroups.
  std::map<uint64_t, TopSeries> cg_series_;
  std::map<uint64_t, Attr> cg_prev_;
  Attr cg_gone_;
  std::vector<uint64_t> forgotten_;
  std::map<std::string, TopSeries> cs_series_;  // call sites
  std::map<std::string, Attr> cs_prev_;
  AttributionView view_;
};

}  // namespace fragd
