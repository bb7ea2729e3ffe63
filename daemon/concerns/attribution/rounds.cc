// SPDX-License-Identifier: Apache-2.0
#include "concerns/attribution/rounds.h"

namespace fragd {

void AttributionRounds::tick(uint64_t now, const alloc_stats& st, const AttributionMaps& maps, KernelSymbols* syms,
                             CgroupLookup& cgroups,
                             const std::function<Result<CgroupAnon>(const std::string&)>& read_anon,
                             const AttributionNotes& notes) {
  uint64_t total = 0;
  for (unsigned o = 0; o < FRAGD_NR_ORDERS; o++) {
    for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) total += st.direct_entries[o][p] + st.phase_ns[o][p];
    total += st.failures[o][0] + st.failures[o][1];  // map failure_sites moves with them
  }
  const bool sweep = now - swept_ns_ >= kSweepNs;
  if (read_ && total == total_ && !sweep) return;
  std::vector<SiteCount> sites;
  std::vector<CgroupCount> cgs;
  if (auto r = maps.read(sites, cgs); !r) {
    notes.warn("attribution", r.error().message + " (stall attribution is not updated until the maps read well)");
    return;
  }
  notes.cleared("attribution", "stall attribution maps readable again");
  a_.update(sites, cgs, st, maps.read_stack, syms, cgroups, sweep);
  for (uint64_t id : a_.take_forgotten()) maps.forget(id);
  if (!a_.view().symbols) notes.warn("symbols", "stall call sites are \"unknown\": " + a_.view().symbols_why_not);
  total_ = total;
  read_ = true;
  rounds_++;
  if (!sweep) return;
  swept_ns_ = now;
  anon_.clear();
  for (const auto& [path, _] : a_.view().cgroups) {
    if (path == "other") continue;
    if (auto a = read_anon(path)) {
      anon_[path] = *a;
      notes.cleared("cgroup_anon", "cgroup memory.stat readable again");
    } else {
      notes.warn("cgroup_anon", a.error().message + " (fragd_thp_cgroup_anon_*: no series for that cgroup)");
    }
  }
}

}  // namespace fragd
