// SPDX-License-Identifier: Apache-2.0
#include "concerns/stalls/metrics.h"

#include <array>

namespace fragd {

void counting_metrics(const CountingStats& self, Families& out) {
    FamilyBuilder on("fragd_alloc_counting",
                     "1 while fragd counts every high-order allocation (the mm_page_alloc program is attached: "
                     "fragd_alloc_total outcomes fast and failed are exported), 0 while it does not "
                     "(bpf.allocations adaptive and no stall for adaptive_hold, or off); by bpf.allocations mode.",
                     MetricType::Gauge);
    on.gauge({{"mode", self.allocations_mode}}, self.counting);
    FamilyBuilder secs_on("fragd_alloc_counting_seconds_total",
                          "Seconds the mm_page_alloc counting program was attached since fragd started.",
                          MetricType::Counter);
    secs_on.counter({}, self.counting_seconds);
    FamilyBuilder sw("fragd_alloc_counting_switches_total",
                     "Times allocation counting was switched on or off (bpf.allocations: adaptive).",
                     MetricType::Counter);
    for (const char* d : {"on", "off"}) {
      auto it = self.counting_switches.find(d);
      sw.counter({{"to", d}}, it == self.counting_switches.end() ? 0 : it->second);
    }
  emit(out, on, secs_on, sw);
}

// Allocations not granted, every order, by whether they could sleep: present while counting is on.
static void failure_metrics(const SeriesPlan& plan, const alloc_stats& a, Families& out) {
  FamilyBuilder f("fragd_alloc_failures_total",
                  "Page allocations the kernel did not grant (kmem:mm_page_alloc with no page), of every order "
                  "(below bpf.min_order too; a group of orders as the free lists', metrics.orders), by whether "
                  "the allocation could sleep: can_sleep=\"false\" had no __GFP_DIRECT_RECLAIM (GFP_ATOMIC, "
                  "GFP_NOWAIT: it cannot wait for reclaim or compaction), \"true\" could. Counted while "
                  "allocation counting is on (fragd_alloc_counting), present only then; fragd's own are left out.",
                  MetricType::Counter);
  for (const OrderGroup& g : plan.buddy) {
    double n[2] = {0, 0};
    for (unsigned o = g.first; o <= g.last && o < FRAGD_NR_ORDERS; o++) {
      n[0] += a.failures[o][0];
      n[1] += a.failures[o][1];
    }
    f.counter({{"order", g.label}, {"can_sleep", "false"}}, n[0]);
    f.counter({{"order", g.label}, {"can_sleep", "true"}}, n[1]);
  }
  emit(out, f);
}

// What the programs could not follow, and fragd's own allocations and stalls, kept out of the rest.
static void lost_and_own_metrics(const SeriesPlan& plan, const alloc_stats& a, Families& out) {
  single(out, "fragd_events_dropped_total",
         "Slow-stall events lost because the BPF ring buffer was full.",
         MetricType::Counter, a.events_dropped);
  FamilyBuilder lost("fragd_stall_events_lost_total",
                     "Stall events the BPF programs could not follow, by reason: no_task_storage (the task's "
                     "storage could not be had: its allocation failed or it was busy on that CPU; the stall is "
                     "not timed, its entry is counted), wakeup_ring_full (a wake-up the ring buffer had no room "
                     "for; counting switches on at the next tick instead).",
                     MetricType::Counter);
  lost.counter({{"reason", "no_task_storage"}}, a.events_no_storage);
  lost.counter({{"reason", "wakeup_ring_full"}}, a.wakeups_dropped);
  FamilyBuilder own_entries("fragd_own_direct_stall_entries_total",
                            "Entries into direct compaction and reclaim in fragd's own processes (a hugetlb pool it "
                            "grows: compaction method pool, pool targets), by phase; kept out of every stall figure "
                            "and of the demand trigger.",
                            MetricType::Counter);
  for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) own_entries.counter({{"phase", phase_name(p)}}, a.own_entries[p]);
  FamilyBuilder own_allocs("fragd_own_allocations_total",
                           "High-order allocations in fragd's own processes seen while allocation counting was on, "
                           "by order group; kept out of fragd_alloc_total.",
                           MetricType::Counter);
  for (const OrderGroup& g : plan.traced) {
    double n = 0;
    for (unsigned o = g.first; o <= g.last; o++) n += a.own_allocs[o];
    own_allocs.counter({{"order", g.label}}, n);
  }
  emit(out, lost, own_entries, own_allocs);
}

void stall_metrics(const SeriesPlan& plan, const StallsSnapshot& maps, const CountingStats& self, Families& out) {
  const auto& a = maps.alloc;
  FamilyBuilder total("fragd_alloc_total",
                      "High-order page allocations seen at kmem:mm_page_alloc while allocation counting was on, "
                      "by order (a group of orders, metrics.orders: order=\"4-8\") and outcome: fast (no direct "
                      "compaction or reclaim), stalled (granted after a "
                      "stall), failed (not granted), at_switch (ended just after counting switched on, in a task "
                      "whose stall began before). fast and failed are absent while counting is off (see "
                      "fragd_alloc_counting): bpf.allocations adaptive switches it on at every stall, so stalled "
                      "allocations are counted but fast ones and failures without a stall are not; with "
                      "bpf.allocations off the family is absent.",
                      MetricType::Counter);
  FamilyBuilder stall("fragd_alloc_stall_seconds",
                      "Time from an allocation's first direct compaction or reclaim event to its completion "
                      "(a lower bound of its latency), by order group and result (success, failure; \"all\" "
                      "for both unless metrics.detail lists results); allocations that ended while "
                      "allocation counting was on (bpf.allocations adaptive: every stall after the one that "
                      "switched counting on; absent with bpf.allocations off).",
                      MetricType::Histogram);
  FamilyBuilder entries("fragd_direct_stall_entries_total",
                        "Entries of allocating tasks into direct compaction (mm_compaction_try_to_compact_pages; "
                        "the kernel's compact_stall, by order group, less fragd's own: "
                        "fragd_own_direct_stall_entries_total) "
                        "and direct reclaim (mm_vmscan_direct_reclaim_begin).",
                        MetricType::Counter);
  FamilyBuilder phase("fragd_alloc_stall_phase_seconds_total",
                      "Time allocating tasks spent in direct compaction (mm_compaction_try_to_compact_pages to "
                      "the end of its last zone run) and in direct reclaim (begin to end), by the allocation's "
                      "order group; exact in every bpf.allocations mode.",
                      MetricType::Counter);
  FamilyBuilder abandoned("fragd_alloc_stalls_abandoned_total",
                          "Stalls opened while allocation counting was on whose allocation's end was never seen "
                          "(its mm_page_alloc run was missed): given up, and not timed, when the task's next stall "
                          "or allocation of that order came more than 1 s after the stall's last event, or its "
                          "next stall was of another order; by the order group of the stall. Absent with "
                          "bpf.allocations off.",
                          MetricType::Counter);
  const bool timed = self.allocations_mode != "off" || self.counting;
  const bool by_result = plan.has(Detail::Results);
  for (const OrderGroup& g : plan.traced) {
    const std::string& ol = g.label;
    // Sums over the group's orders.
    std::array<double, FRAGD_NR_OUTCOMES> allocs{};
    double at_switch = 0, abandoned_n = 0;
    std::array<double, FRAGD_NR_PHASES> phase_s{}, entries_n{};
    std::array<LatencyHist, FRAGD_NR_RESULTS> times{};
    for (unsigned o = g.first; o <= g.last; o++) {
      for (unsigned k = 0; k < FRAGD_NR_OUTCOMES; k++) allocs[k] += a.allocs[o][k];
      at_switch += a.allocs_at_switch[o];
      abandoned_n += a.stalls_abandoned[o];
      for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) {
        phase_s[p] += a.phase_ns[o][p] / 1e9;
        entries_n[p] += a.direct_entries[o][p];
      }
      for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++) times[r] += maps.stall[o][r];
    }
    // Stalls switch counting on, so stalled allocations and their times are counted
    // whenever counting can be on; fast ones and failures without a stall only while it is.
    if (timed) {
      for (unsigned k = 0; k < FRAGD_NR_OUTCOMES; k++)
        if (self.counting || k == FRAGD_OUTCOME_STALLED)
          total.counter({{"order", ol}, {"outcome", outcome_name(k)}}, allocs[k]);
      total.counter({{"order", ol}, {"outcome", "at_switch"}}, at_switch);
      abandoned.counter({{"order", ol}}, abandoned_n);
      if (by_result) {
        for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++)
          stall.histogram({{"order", ol}, {"result", result_name(r)}}, times[r], plan.buckets, HistogramUse::Quantiles);
      } else {
        stall.histogram({{"order", ol}, {"result", "all"}}, times[FRAGD_RESULT_SUCCESS] + times[FRAGD_RESULT_FAILURE],
                        plan.buckets, HistogramUse::Quantiles);
      }
    }
    for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) {
      phase.counter({{"order", ol}, {"phase", phase_name(p)}}, phase_s[p]);
      entries.counter({{"order", ol}, {"phase", phase_name(p)}}, entries_n[p]);
    }
  }
  if (timed) emit(out, total, stall, abandoned);
  emit(out, phase, entries);
  if (self.counting) failure_metrics(plan, a, out);
  lost_and_own_metrics(plan, a, out);
}

void trace_metrics(const CountingStats& self, Families& out) {
  single(out, "fragd_slow_stall_events_total",
         "Slow-stall events read from the ring buffer (stalls above bpf.slow_stall_threshold).",
         MetricType::Counter, self.trace_events);
  single(out, "fragd_trace_events_unsent_total",
         "Slow-stall events not delivered to a `fragctl trace` client that did not keep up.",
         MetricType::Counter, self.trace_events_unsent);
}

}  // namespace fragd
