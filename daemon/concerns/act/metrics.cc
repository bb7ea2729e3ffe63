// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/metrics.h"

namespace fragd {

void act_metrics(const ActStats& act, const SeriesPlan& plan, Families& out) {
  FamilyBuilder info("fragd_policy_info",
                     "The running policy: mode (observe|act), dry_run and compaction method; always 1.",
                     MetricType::Gauge);
  info.gauge({{"mode", act.mode}, {"dry_run", act.dry_run ? "true" : "false"}, {"method", act.method}}, 1);
  FamilyBuilder rel("fragd_policy_reloads_total",
                    "Policy reloads (SIGHUP, fragctl reload) by result; a failed one keeps the running policy.",
                    MetricType::Counter);
  rel.counter({{"result", "ok"}}, act.reloads_ok);
  rel.counter({{"result", "error"}}, act.reloads_failed);
  FamilyBuilder acts("fragd_actions_total",
                     "Actions fragd ran (or, with dry_run, decided) by action, node (\"all\": not one node's) and result.",
                     MetricType::Counter);
  for (const auto& [k, v] : act.actions)
    acts.counter({{"action", std::get<0>(k)}, {"node", node_label(std::get<1>(k))}, {"result", std::get<2>(k)}}, v);
  FamilyBuilder dur("fragd_action_duration_seconds", "Wall time of fragd's actions, by action.",
                    MetricType::Histogram);
  for (const auto& [a, h] : act.durations)
    dur.histogram({{"action", a}}, h, plan.buckets, HistogramUse::CountAndSum);
  FamilyBuilder mig("fragd_action_pages_migrated_total",
                    "Pages migrated by compaction during fragd's actions (compaction trigger \"fragd\").",
                    MetricType::Counter);
  for (const auto& [a, v] : act.pages_migrated) mig.counter({{"action", a}}, v);
  FamilyBuilder sc("fragd_action_score_percent",
                   "The node's fragmentation score (percent, as fragd_node_fragmentation_score_percent) before and "
                   "after fragd's last compaction of it.",
                   MetricType::Gauge);
  for (const auto& [n, ba] : act.last_score) {
    if (ba.first >= 0) sc.gauge({{"node", node_label(n)}, {"when", "before"}}, ba.first);
    if (ba.second >= 0) sc.gauge({{"node", node_label(n)}, {"when", "after"}}, ba.second);
  }
  FamilyBuilder hot("fragd_policy_node_hot",
                    "1 while the node's score trigger holds (above high, not yet below low).", MetricType::Gauge);
  FamilyBuilder miss("fragd_policy_backoff_misses",
                     "Compactions in a row that did not help the node; the wait before the next doubles with each.",
                     MetricType::Gauge);
  for (const auto& n : act.nodes) {
    hot.gauge({{"node", node_label(n.node)}}, n.hot);
    miss.gauge({{"node", node_label(n.node)}}, n.misses);
  }
  FamilyBuilder ppb("fragd_compaction_pages_per_block",
                    "Learned from fragd's compactions of the node that added free blocks of compaction.reserve.order: "
                    "pages migrated per block gained (moving average); absent until one did.",
                    MetricType::Gauge);
  FamilyBuilder spb("fragd_compaction_seconds_per_block",
                    "Learned like fragd_compaction_pages_per_block: wall time per block gained; the cpu budget "
                    "sizes the next goal with it.",
                    MetricType::Gauge);
  for (const auto& n : act.nodes) {
    if (n.ns_per_block == 0) continue;
    ppb.gauge({{"node", node_label(n.node)}}, n.pages_per_block);
    spb.gauge({{"node", node_label(n.node)}}, n.ns_per_block / 1e9);
  }
  FamilyBuilder steps("fragd_action_steps_total",
                      "Steps of fragd's pool actions and goal-sized compactions, by step: grow (a pool write that "
                      "may compact, in a fragd process), release (a temporary pool freed), shrink, compact (a "
                      "whole-node compaction after a write that added nothing), drop_caches, drain (the blocks of a "
                      "freed or shrunk pool that a CPU's page list kept put back on the free lists).",
                      MetricType::Counter);
  for (const char* k : {"grow", "release", "shrink", "compact", "drop_caches", "drain"}) {
    auto it = act.steps.find(k);
    steps.counter({{"step", k}}, it == act.steps.end() ? 0 : it->second);
  }
  FamilyBuilder bud("fragd_compaction_budget_used_seconds",
                    "Compaction time caused by fragd in the last 60 s (compare with "
                    "fragd_compaction_budget_limit_seconds).",
                    MetricType::Gauge);
  bud.gauge({}, act.budget_used_ns / 1e9);
  FamilyBuilder lim("fragd_compaction_budget_limit_seconds",
                    "The policy's compaction.cpu_budget: compaction time fragd may cause per 60 s.",
                    MetricType::Gauge);
  lim.gauge({}, act.budget_ns / 1e9);
  FamilyBuilder raised("fragd_proactiveness_raised",
                       "1 while fragd holds vm.compaction_proactiveness raised (method proactiveness).",
                       MetricType::Gauge);
  raised.gauge({}, act.proactiveness_raised);
  FamilyBuilder leases("fragd_leases_total",
                       "Leases (fragctl ensure) by what became of them: made (its pages made and held), not_made "
                       "(its action fell short: nothing held), and how held ones ended: released, hold_over, observe "
                       "(a reload to mode observe).",
                       MetricType::Counter);
  for (const char* k : {"made", "not_made", "released", "hold_over", "observe"}) {
    auto it = act.leases.find(k);
    leases.counter({{"outcome", k}}, it == act.leases.end() ? 0 : it->second);
  }
  FamilyBuilder leased("fragd_leased_hugepages",
                       "Hugetlb pages live leases add to a pool (node \"all\": the global pool), held for their "
                       "consumers or being made.",
                       MetricType::Gauge);
  for (const auto& [k, v] : act.leased_pages)
    leased.gauge({{"node", node_label(k.first)}, {"size", std::to_string(k.second) + "kB"}}, v);
  emit(out, info, rel, acts, dur, mig, sc, hot, miss, ppb, spb, steps, bud, lim, raised, leases, leased);
}

}  // namespace fragd
