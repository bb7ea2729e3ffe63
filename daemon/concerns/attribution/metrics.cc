// SPDX-License-Identifier: Apache-2.0
#include "concerns/attribution/metrics.h"

#include <map>
#include <tuple>
#include <utility>

namespace fragd {

void attribution_metrics(const AttributionView& v, const SeriesPlan& plan, Families& out) {
  FamilyBuilder n("fragd_stalls_total",
                  "Entries into direct compaction or reclaim by order and by who pays: consumer=thp_fault, khugepaged, "
                  "hugetlb (pool growth), slab, net, page_cache, other (README \"Who stalls\" gives the rules). The sum "
                  "over consumer is fragd_direct_stall_entries_total summed over phase.",
                  MetricType::Counter);
  FamilyBuilder s("fragd_stall_seconds_total",
                  "Time in direct compaction and reclaim by order and consumer; the sum over consumer is "
                  "fragd_alloc_stall_phase_seconds_total summed over phase.",
                  MetricType::Counter);
  // By order group (metrics.orders), in the order of the groups, then of the consumers.
  std::map<std::pair<size_t, std::string>, std::pair<double, double>> by_group;  // -> (entries, seconds)
  for (const auto& [k, a] : v.consumers) {
    size_t g = 0;
    while (g + 1 < plan.traced.size() && k.first > plan.traced[g].last) g++;
    auto& sum = by_group[{g, k.second}];
    sum.first += a.entries;
    sum.second += a.ns / 1e9;
  }
  for (const auto& [k, sum] : by_group) {
    const Labels l{{"order", plan.traced[k.first].label}, {"consumer", k.second}};
    n.counter(l, sum.first);
    s.counter(l, sum.second);
  }
  emit(out, n, s);

  FamilyBuilder cn("fragd_cgroup_stalls_total",
                   "Entries into direct compaction or reclaim by cgroup (v2 path as the host sees it): the top "
                   "attribution.top_cgroups by stall time, the rest as cgroup=\"other\".",
                   MetricType::Counter);
  FamilyBuilder cs("fragd_cgroup_stall_seconds_total",
                   "Time in direct compaction and reclaim by cgroup, as fragd_cgroup_stalls_total.", MetricType::Counter);
  for (const auto& [cg, a] : v.cgroups) {
    cn.counter({{"cgroup", cg}}, a.entries);
    cs.counter({{"cgroup", cg}}, a.ns / 1e9);
  }
  emit(out, cn, cs);

  FamilyBuilder site("fragd_stall_callsite_seconds_total",
                     "Time in direct compaction and reclaim by kernel call site (the first function outside the page "
                     "allocator on the stall's stack): the top attribution.top_callsites, the rest as "
                     "callsite=\"other\"; \"unknown\" without a stack or symbols.",
                     MetricType::Counter);
  for (const auto& [c, a] : v.callsites) site.counter({{"callsite", c}}, a.ns / 1e9);
  emit(out, site);

  FamilyBuilder full("fragd_attribution_map_full_total",
                     "Stall events whose site (map=\"sites\") or cgroup (map=\"cgroups\") found its BPF map full: "
                     "counted as consumer \"other\", call site \"unknown\" or cgroup \"other\".",
                     MetricType::Counter);
  full.counter({{"map", "sites"}}, v.sites_full_entries);
  full.counter({{"map", "cgroups"}}, v.cgroups_full_entries);
  emit(out, full);
  // Failed allocations by consumer: by order group as fragd_alloc_failures_total (the free lists'),
  // rows with failures only; what map failure_sites could not hold is consumer "other".
  FamilyBuilder fc("fragd_alloc_failures_by_consumer_total",
                   "Page allocations the kernel did not grant, by order (group, as fragd_alloc_failures_total), whether "
                   "they could sleep and consumer (named from the failure's kernel stack by the rules of "
                   "fragd_stalls_total: thp_fault, khugepaged, hugetlb, slab, net, page_cache, other). Present from "
                   "the first failure fragd saw while allocation counting was on; each series counts since fragd "
                   "started, so the sum over consumer is at least fragd_alloc_failures_total over the same time.",
                   MetricType::Counter);
  std::map<std::tuple<size_t, bool, std::string>, double> fail_rows;
  for (size_t g = 0; g < plan.buddy.size(); g++)
    for (int c = 0; c < 2; c++) {
      double total = 0, named = 0;
      for (unsigned o = plan.buddy[g].first; o <= plan.buddy[g].last && o < FRAGD_NR_ORDERS; o++) {
        total += v.failures_counted[o][c];
        for (const auto& [k, n] : v.failures)
          if (std::get<0>(k) == o && std::get<1>(k) == (c == 1)) {
            fail_rows[{g, c == 1, std::get<2>(k)}] += n;
            named += n;
          }
      }
      if (total > named) fail_rows[{g, c == 1, "other"}] += total - named;
    }
  bool any = false;
  for (const auto& [k, n] : fail_rows)
    if (n > 0) {
      fc.counter({{"order", plan.buddy[std::get<0>(k)].label},
                  {"can_sleep", std::get<1>(k) ? "true" : "false"},
                  {"consumer", std::get<2>(k)}},
                 n);
      any = true;
    }
  if (any) emit(out, fc);
  single(out, "fragd_stall_stacks_lost_total",
         "Stall events counted under no kernel stack, call site \"unknown\": their stack's bucket in the BPF map of "
         "stacks held another stack (a hash collision; fragd keeps the first for good), or no stack could be taken. "
         "attribution.stacks sizes that map.",
         MetricType::Counter, v.stacks_lost);
  single(out, "fragd_cgroups_removed_total",
         "Cgroups deleted since fragd started whose stall counts fragd folded into cgroup=\"other\" and dropped "
         "from its BPF map.",
         MetricType::Counter, v.cgroups_removed);
}

}  // namespace fragd
