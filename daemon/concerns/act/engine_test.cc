// SPDX-License-Identifier: Apache-2.0
// The act-mode decision logic (concerns/act/engine.h), one rule at a time on hand-built
// observations: scores, limits, demand, the reserve, robustness, dry run.
#include "concerns/act/engine.h"
#include "concerns/act/executor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "concerns/act/pool.h"
#include "engine_builders.h"
#include "fake_actuator.h"

namespace fragd {
namespace {

using namespace test;

TEST(EngineScore, NoStartBetweenLowAndHighAndNotAtHigh) {
  Engine e(act_policy());
  for (unsigned s : {20u, 30u, 39u, 40u})
    EXPECT_FALSE(e.decide(obs_at(s * kS, {node_obs(0, s)}))) << s;
  auto r = e.decide(obs_at(50 * kS, {node_obs(0, 41)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, ActionKind::Compact);
  EXPECT_EQ(r->trigger, Trigger::Score);
  EXPECT_EQ(r->reason, "score 41 > high 40");
}

TEST(EngineScore, ScoreTriggerOff) {
  Policy p = act_policy();
  p.compaction.score.enabled = false;
  Engine e(p);
  EXPECT_FALSE(e.decide(obs_at(0, {node_obs(0, 99)})));
  EXPECT_FALSE(e.nodes()[0].hot);
}

TEST(EngineScore, NodeOutsideScopeIsLeftAlone) {
  Policy p = act_policy();
  p.compaction.nodes.all = false;
  p.compaction.nodes.nodes = {1};
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 99), node_obs(1, 50)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 1);
  ASSERT_EQ(e.nodes().size(), 1u);
  EXPECT_EQ(e.nodes()[0].node, 1);
}

TEST(EngineScore, HighestScoreFirst) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 50), node_obs(1, 90), node_obs(2, 70)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 1);
}

TEST(EngineLimits, MinIntervalFromTheEndOfTheLastAction) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "ok", 0, 2 * kS, 90, 60));  // still hot: 60 > 40
  EXPECT_FALSE(e.decide(obs_at(11 * kS, {node_obs(0, 60)})));  // 9 s after the end
  EXPECT_EQ(e.nodes()[0].waiting, "min_interval");
  EXPECT_EQ(e.nodes()[0].next_allowed_ns, 12 * kS);
  EXPECT_TRUE(e.decide(obs_at(12 * kS, {node_obs(0, 60)})));
}

TEST(EngineLimits, NoOverlapWhileAnActionRuns) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 90), node_obs(1, 90)}));
  ASSERT_TRUE(r);
  EXPECT_TRUE(e.busy());
  for (uint64_t t = 1; t < 30; ++t) EXPECT_FALSE(e.decide(obs_at(t * kS, {node_obs(0, 90), node_obs(1, 90)})));
  // A manual request waits too.
  ASSERT_TRUE(e.request_compact(1, [] {
                 MachineFacts m = one_node_facts();
                 m.nodes = {0, 1};
                 m.node_total_kib = {1, 1};
                 return m;
               }()));
  EXPECT_FALSE(e.decide(obs_at(31 * kS, {node_obs(0, 90), node_obs(1, 90)})));
  e.finished(outcome(*r, "ok", 0, 32 * kS, 90, 10));
  EXPECT_FALSE(e.busy());
  auto m = e.decide(obs_at(32 * kS, {node_obs(0, 10), node_obs(1, 90)}));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->trigger, Trigger::Manual);
}

TEST(EngineLimits, UnknownOrRepeatedFinishedIsIgnored) {
  Engine e(act_policy());
  ActionRequest ghost;
  ghost.id = 999;
  e.finished(outcome(ghost, "ok", 0, kS));  // never issued
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(ghost, "error", 0, kS));
  EXPECT_TRUE(e.busy());
  e.finished(outcome(*r, "ok", 0, kS, 90, 10));
  e.finished(outcome(*r, "error", 0, kS));  // reported twice: the second is ignored
  EXPECT_EQ(e.nodes()[0].misses, 0u);
}

TEST(EngineLimits, ErrorBacksOffWithoutAFloor) {
  Engine e(act_policy());
  uint64_t t = 0;
  std::vector<uint64_t> starts;
  for (; t < 2000 * kS; t += kS) {
    auto r = e.decide(obs_at(t, {node_obs(0, 90)}));
    if (!r) continue;
    starts.push_back(t);
    auto o = outcome(*r, "error", t, t + kMs);
    o.detail = "write /sys/devices/system/node/node0/compact: Device or resource busy";
    e.finished(o);
    EXPECT_FALSE(e.nodes()[0].floor.has_value());
  }
  // 10 s * 2^k up to 600 s: 0, 21, 62, 143, 304, 625, 1226, 1827
  EXPECT_EQ(starts, (std::vector<uint64_t>{0, 21 * kS, 62 * kS, 143 * kS, 304 * kS, 625 * kS, 1226 * kS, 1827 * kS}));
}

TEST(EngineLimits, BudgetCountsProactiveTimeOnlyWhileRaised) {
  Policy p = act_policy();
  p.compaction.method = CompactMethod::Proactiveness;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 10)});
  EXPECT_FALSE(e.decide(o));
  o.now_ns = kS;
  o.proactive_compaction_ns = 5 * kS;  // kcompactd on its own: not fragd's
  o.fragd_compaction_ns = 2 * kS;
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.budget_used_ns(), 2 * kS);

  o.now_ns = 2 * kS;
  o.nodes = {node_obs(0, 90)};
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kind, ActionKind::RaiseProactiveness);
  e.finished(outcome(*r, "ok", 2 * kS, 2 * kS + kMs));
  EXPECT_TRUE(e.proactiveness_raised());
  o.now_ns = 3 * kS;
  o.proactive_compaction_ns += 3 * kS;  // while raised: counts
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.budget_used_ns(), 5 * kS);

  // A spent budget ends the raise early.
  o.now_ns = 4 * kS;
  o.proactive_compaction_ns += 2 * kS;
  auto restore = e.decide(o);
  ASSERT_TRUE(restore);
  EXPECT_EQ(restore->kind, ActionKind::RestoreProactiveness);
  EXPECT_EQ(restore->reason, "cpu budget: 7s of compaction in the last 60s > 6s");
  e.finished(outcome(*restore, "ok", 4 * kS, 4 * kS + kMs));
  EXPECT_FALSE(e.proactiveness_raised());
  o.now_ns = 5 * kS;  // the interval of the restore still counts (nothing new here)
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 6 * kS;
  o.proactive_compaction_ns += 10 * kS;  // no longer fragd's
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.budget_used_ns(), 7 * kS);
  // The window slides: 60 s later the old time no longer counts.
  o.now_ns = 70 * kS;
  e.decide(o);
  EXPECT_EQ(e.budget_used_ns(), 0u);
}

// The deadline of each action (action_budget_ns): what is left of compaction.cpu_budget in the
// window, the whole budget before any history, and the whole budget for a manual request.
TEST(EngineBudgetDeadline, Arithmetic) {
  EXPECT_EQ(action_budget_ns(6 * kS, 0, false), 6 * kS);
  EXPECT_EQ(action_budget_ns(6 * kS, 2 * kS, false), 4 * kS);
  EXPECT_EQ(action_budget_ns(6 * kS, 6 * kS, false), 0u);
  EXPECT_EQ(action_budget_ns(6 * kS, 9 * kS, false), 0u) << "over budget: nothing left, not a wrap-around";
  EXPECT_EQ(action_budget_ns(6 * kS, 9 * kS, true), 6 * kS) << "a manual request has its own whole budget";
  EXPECT_EQ(action_deadline_ns(100 * kS, 4 * kS), 104 * kS);
  EXPECT_EQ(action_deadline_ns(100 * kS, 0), 0u) << "no budget: no deadline";
  EXPECT_EQ(action_deadline_ns(~0ULL - kS, 4 * kS), ~0ULL);
}

TEST(EngineBudgetDeadline, TheFirstActionHasTheWholeWindowsAllowance) {
  for (CompactMethod m : {CompactMethod::Node, CompactMethod::Pool}) {
    Policy p = act_policy();
    p.compaction.method = m;
    Engine e(p);
    auto r = e.decide(obs_at(0, {node_obs(0, 90)}));  // no history at all
    ASSERT_TRUE(r) << method_name(m);
    EXPECT_EQ(r->kind, ActionKind::Compact);
    EXPECT_EQ(r->budget_ns, p.compaction.cpu_budget_ns) << method_name(m);
  }
}

TEST(EngineBudgetDeadline, LaterActionsGetWhatIsLeftAndNoneStartsWithNothingLeft) {
  Policy p = act_policy();
  p.compaction.method = CompactMethod::Pool;
  p.compaction.min_interval_ns = kS;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 90)});
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "cut", 0, 2 * kS, 90, 80));
  o.now_ns = 5 * kS;
  o.fragd_compaction_ns = 2 * kS;
  r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->budget_ns, 4 * kS);
  e.finished(outcome(*r, "cut", 5 * kS, 9 * kS, 80, 70));
  o.now_ns = 20 * kS;
  o.fragd_compaction_ns = 6 * kS;  // the whole 6 s spent
  EXPECT_FALSE(e.decide(o));
  EXPECT_EQ(e.nodes()[0].waiting, "cpu_budget");
}

TEST(EngineBudgetDeadline, ManualRequestsHaveTheirOwnWholeBudget) {
  Policy p = act_policy();
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 10)});
  o.fragd_compaction_ns = 0;
  EXPECT_FALSE(e.decide(o));
  o.now_ns = kS;
  o.fragd_compaction_ns = 20 * kS;  // far over the budget
  ASSERT_TRUE(e.request_compact(0, one_node_facts()));
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Manual);
  EXPECT_EQ(r->budget_ns, p.compaction.cpu_budget_ns) << "bounded, though the automatic budget is spent";
  e.finished(outcome(*r, "cut", kS, 7 * kS));
  ASSERT_TRUE(e.request_pool(2048, -1, 4, one_node_facts()));
  o.now_ns = 8 * kS;
  r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, ActionKind::Pool);
  EXPECT_EQ(r->budget_ns, p.compaction.cpu_budget_ns);
}

// fragctl sends its --timeout (300 s by default) as the request's timeout_ms: an operator's
// request on a slow machine is not cut at the automatic budget (6 s), yet has a bound.
TEST(EngineBudgetDeadline, AManualRequestRunsUnderItsOwnBoundWhenItNamesOne) {
  Policy p = act_policy();
  Engine e(p);
  Observation o = obs_at(kS, {node_obs(0, 10)});
  o.fragd_compaction_ns = 20 * kS;
  ASSERT_TRUE(e.request_compact(0, one_node_facts(), 300 * kS));
  ASSERT_TRUE(e.request_compact(0, one_node_facts(), 10 * kS)) << "queued already: the same action";
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->budget_ns, 300 * kS) << "two requests for one node's compaction: the longer bound";
  e.finished(outcome(*r, "ok", kS, 2 * kS));
  ASSERT_TRUE(e.request_pool(2048, 0, 8, one_node_facts(), 120 * kS));
  o.now_ns = 3 * kS;
  r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, ActionKind::Pool);
  EXPECT_EQ(r->budget_ns, 120 * kS);
}

TEST(EngineBudgetDeadline, PoolTargetsGrowWithinTheBudgetAndWaitWhenItIsSpent) {
  Engine e(pool_policy(8));
  Observation o = pool_obs(0);
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, ActionKind::Pool);
  EXPECT_EQ(r->budget_ns, 6 * kS);
  e.finished(outcome(*r, "cut", 0, 6 * kS));
  EXPECT_EQ(e.pools()[0].last_result, "cut");
  o.now_ns = 600 * kS;  // past any back-off ...
  o.fragd_compaction_ns = 6 * kS;  // ... but the budget was just spent
  EXPECT_FALSE(e.decide(o)) << "a pool that grows by compaction must wait for the budget";
  o.now_ns = 700 * kS;  // the window slid: the budget is back
  r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->budget_ns, 6 * kS);
  // A shrink compacts nothing: it does not wait.
  Engine s(pool_policy(2));
  Observation big = pool_obs(10);
  r = s.decide(big);
  ASSERT_TRUE(r);
  s.finished(outcome(*r, "short", 0, kS));
  big.now_ns = 600 * kS;
  big.fragd_compaction_ns = 20 * kS;
  r = s.decide(big);
  ASSERT_TRUE(r) << "a shrink waited for the compaction budget";
  EXPECT_EQ(r->kind, ActionKind::Pool);
}

TEST(EngineLimits, BudgetExpectsTheLongestRecentDuration) {
  Policy p = act_policy();
  p.compaction.cpu_budget_ns = 12 * kS + kS / 2;  // 12.5 s
  p.compaction.min_interval_ns = kS;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 90), node_obs(1, 90)});
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "ok", 0, 3 * kS, 90, 10));
  o.now_ns = 3 * kS;
  o.fragd_compaction_ns = 3 * kS;
  o.nodes = {node_obs(0, 10), node_obs(1, 90)};
  auto r2 = e.decide(o);  // 3 used + 3 expected <= 12.5
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->node, 1);
  e.finished(outcome(*r2, "ok", 3 * kS, 8 * kS, 90, 60));  // 5 s: the mean is 4 s, the longest 5 s
  o.now_ns = 20 * kS;
  o.fragd_compaction_ns = 8 * kS;
  o.nodes = {node_obs(0, 10), node_obs(1, 60)};
  EXPECT_FALSE(e.decide(o));  // 8 used + 5 expected > 12.5 (the mean, 4, would have fit)
  EXPECT_EQ(e.nodes()[1].waiting, "cpu_budget");
}

TEST(EngineDemand, FewerThanFiveStallsNeverTriggerP99) {
  Policy p = act_policy();
  p.compaction.demand.enabled = true;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 30)});
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 5 * kS;
  o.stall_hist.add(50 * kMs, 4);  // 4 very slow stalls
  o.stalls_total = 4;
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 6 * kS;
  o.stall_hist.add(50 * kMs, 1);  // the 5th
  o.stalls_total = 5;
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Demand);
  EXPECT_EQ(r->reason.rfind("stall p99 ", 0), 0u) << r->reason;
  EXPECT_NE(r->reason.find("(5 stalls)"), std::string::npos) << r->reason;
}

TEST(EngineDemand, OnlyNodesWithSomethingToCompact) {
  Policy p = act_policy();
  p.compaction.demand.enabled = true;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 19), node_obs(1, 20)});
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 10 * kS;
  o.stalls_total = 1000;
  o.stall_hist.add(100000, 1000);
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 1);  // node 0's score is below low
  EXPECT_EQ(r->reason, "100 stalls/s of order>=4 > 10 over 10s");
}

TEST(EngineDemand, CounterResetIsNotASpike) {
  Policy p = act_policy();
  p.compaction.demand.enabled = true;
  Engine e(p);
  Observation o = obs_at(0, {node_obs(0, 30)});
  o.stalls_total = 5000;
  o.stall_hist.add(100000, 5000);
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 10 * kS;
  o.stalls_total = 5050;
  o.stall_hist.add(100000, 50);
  EXPECT_FALSE(e.decide(o));  // 5/s
  // fragd's counters began again from 0 (a restart of the BPF side).
  o.now_ns = 11 * kS;
  o.stalls_total = 3;
  o.stall_hist = LatencyHist{};
  o.stall_hist.add(100000, 3);
  EXPECT_FALSE(e.decide(o));  // 53 since the sample at 0 s: 4.8/s, not a negative or huge number
  o.now_ns = 12 * kS;
  o.stalls_total = 100;
  o.stall_hist.add(100000, 97);
  auto r = e.decide(o);  // 150 stalls since the sample at 0 s: 12.5/s
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, "12.5 stalls/s of order>=4 > 10 over 12s");
}

TEST(EngineReserve, CountsLargerBlocksAsSeveral) {
  Policy p = act_policy();
  p.compaction.score.enabled = false;
  p.compaction.reserve.order = 9;
  p.compaction.reserve.blocks = 8;
  Engine e(p);
  NodeObservation n = node_obs(0, 50, 100000, 3);
  n.free_blocks[10] = 2;  // 3 + 2*2 = 7 < 8
  auto r = e.decide(obs_at(0, {n}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, "reserve: 7 free order-9 blocks < 8");
  e.finished(outcome(*r, "ok", 0, kS));
  n.free_blocks[10] = 3;  // 9: met
  EXPECT_FALSE(e.decide(obs_at(20 * kS, {n})));
}

TEST(EngineReserve, InfeasibleWhenFreePagesCannotHoldIt) {
  Policy p = act_policy();
  p.compaction.score.enabled = false;
  p.compaction.reserve.blocks = 512;  // 512 << 9 = 262144 pages
  Engine e(p);
  EXPECT_FALSE(e.decide(obs_at(0, {node_obs(0, 99, 262143, 0)})));
  EXPECT_TRUE(e.decide(obs_at(kS, {node_obs(0, 99, 262144, 0)})));
}

// compaction.settle: the reserve acts only on free memory watched for that long without moving by
// more than 1% of the node either way; until then the node waits, "settling".
// A reserve of 8 blocks (3 free) with compaction.settle 10 s, on a node of 1000000 pages (1%: 10000).
Policy settle_policy() {
  Policy p = act_policy();
  p.compaction.score.enabled = false;
  p.compaction.reserve.blocks = 8;
  p.compaction.settle_ns = 10 * kS;
  return p;
}
NodeObservation settle_node(uint64_t free) {
  NodeObservation n = node_obs(0, 50, free, 3);
  n.total_pages = 1'000'000;
  return n;
}

TEST(EngineReserve, SettleWaitsWhileFreeMemoryFalls) {
  Engine e(settle_policy());
  auto at = settle_node;
  EXPECT_FALSE(e.decide(obs_at(0, {at(500'000)}))) << "not watched for 10 s yet";
  EXPECT_EQ(e.nodes().at(0).waiting, "settling");
  EXPECT_FALSE(e.decide(obs_at(5 * kS, {at(450'000)})));  // fell by 5%
  EXPECT_FALSE(e.decide(obs_at(10 * kS, {at(445'000)}))) << "fell by 5.5% within the last 10 s";
  EXPECT_EQ(e.nodes().at(0).waiting, "settling");
  EXPECT_FALSE(e.decide(obs_at(14 * kS, {at(441'000)}))) << "445000 -> 441000 is under 1%, but 500000 (at 0 s, the last sample at or before 4 s) is in the window";
  auto r = e.decide(obs_at(15 * kS, {at(441'000)}));
  ASSERT_TRUE(r) << "since 5 s (450000) it fell by 0.9%: settled";
  EXPECT_EQ(r->trigger, Trigger::Reserve);
  EXPECT_EQ(e.nodes().at(0).waiting, "");
}

TEST(EngineReserve, SettleWaitsWhileFreeMemoryRises) {
  // A consumer giving memory back (the fragmenter freeing 3 pages of every 4): a compaction now
  // would move pages about to be freed.
  Engine e(settle_policy());
  auto at = settle_node;
  EXPECT_FALSE(e.decide(obs_at(0, {at(200'000)})));
  EXPECT_FALSE(e.decide(obs_at(10 * kS, {at(600'000)}))) << "rose by 40% within the last 10 s";
  EXPECT_EQ(e.nodes().at(0).waiting, "settling");
  EXPECT_FALSE(e.decide(obs_at(19 * kS, {at(609'000)}))) << "200000 (at 0 s, the last sample at or before 9 s) is in the window";
  auto r = e.decide(obs_at(20 * kS, {at(609'000)}));
  ASSERT_TRUE(r) << "since 10 s (600000) it rose by 0.9%: settled";
  EXPECT_EQ(r->trigger, Trigger::Reserve);
}

TEST(EngineReserve, SettleCountsTheWholeSwingOfTheWindow) {
  // A fall then a rise back to where it was: the ends are level, the window is not.
  Engine e(settle_policy());
  auto at = settle_node;
  EXPECT_FALSE(e.decide(obs_at(0, {at(500'000)})));
  EXPECT_FALSE(e.decide(obs_at(5 * kS, {at(300'000)})));
  EXPECT_FALSE(e.decide(obs_at(10 * kS, {at(500'000)}))) << "300000 at 5 s lies within the window";
  EXPECT_EQ(e.nodes().at(0).waiting, "settling");
  EXPECT_TRUE(e.decide(obs_at(20 * kS, {at(500'000)}))) << "level since 10 s";
}

TEST(EngineSettle, AHotNodeWaitsForItsFreeMemoryToSettle) {
  // The score trigger waits as the reserve does: a node whose score rose above high while a
  // consumer gave memory back (holes opening) is compacted once the holes stop opening.
  Policy p = act_policy();  // score high 40, low 20; no reserve
  p.compaction.settle_ns = 10 * kS;
  Engine e(p);
  auto at = [](unsigned score, uint64_t free) { return sized_node(0, 1'000'000, free, 0, score); };
  EXPECT_FALSE(e.decide(obs_at(0, {at(30, 100'000)})));
  EXPECT_FALSE(e.decide(obs_at(5 * kS, {at(95, 700'000)}))) << "hot, but its free memory rose by 60%";
  EXPECT_EQ(e.nodes().at(0).waiting, "settling");
  EXPECT_FALSE(e.decide(obs_at(14 * kS, {at(95, 705'000)}))) << "100000 at 0 s is still in the window";
  auto r = e.decide(obs_at(15 * kS, {at(95, 705'000)}));
  ASSERT_TRUE(r) << "level within 1% since 5 s";
  EXPECT_EQ(r->trigger, Trigger::Score);
}

TEST(EngineSettle, StallsDoNotWait) {
  // Demand is allocations stalling now: it acts on a node whose free memory is still moving.
  Policy p = act_policy();
  p.compaction.settle_ns = 10 * kS;
  p.compaction.demand.enabled = true;
  Engine e(p);
  auto at = [](uint64_t free) {
    NodeObservation n = node_obs(0, 30, free);  // between low and high: not hot
    n.total_pages = 1'000'000;
    return n;
  };
  Observation o = obs_at(0, {at(500'000)});
  EXPECT_FALSE(e.decide(o));
  o = obs_at(10 * kS, {at(300'000)});
  o.stalls_total = 1000;
  o.stall_hist.add(100000, 1000);
  auto r = e.decide(o);
  ASSERT_TRUE(r) << "fell by 20% within the window, and 100 stalls/s";
  EXPECT_EQ(r->trigger, Trigger::Demand);
}

TEST(EngineSettle, ARaisedProactivenessHoldsWhileTheHotNodeSettles) {
  // settle delays the start of an action only: proactiveness raised for a hot node stays raised
  // while that node's free memory moves again, and goes back once the node cools.
  Policy p = act_policy();
  p.compaction.method = CompactMethod::Proactiveness;
  p.compaction.settle_ns = 10 * kS;
  Engine e(p);
  auto at = [](unsigned score, uint64_t free) { return sized_node(0, 1'000'000, free, 0, score); };
  EXPECT_FALSE(e.decide(obs_at(0, {at(90, 500'000)}))) << "not watched for 10 s yet";
  auto r = e.decide(obs_at(10 * kS, {at(90, 500'000)}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kind, ActionKind::RaiseProactiveness);
  e.finished(outcome(*r, "ok", 10 * kS, 10 * kS + kMs));
  ASSERT_TRUE(e.proactiveness_raised());
  EXPECT_FALSE(e.decide(obs_at(15 * kS, {at(90, 300'000)}))) << "still hot, free memory fell by 20%: the raise holds";
  EXPECT_EQ(e.nodes().at(0).waiting, "settling");
  EXPECT_TRUE(e.proactiveness_raised());
  auto back = e.decide(obs_at(20 * kS, {at(10, 300'000)}));
  ASSERT_TRUE(back) << "cooled below low: nothing holds";
  EXPECT_EQ(back->kind, ActionKind::RestoreProactiveness);
  EXPECT_EQ(back->reason, "no trigger holds any more: no node hot, no demand, reserve met");
}

TEST(EngineRobust, EmptyObservationZeroFreePagesVanishingNode) {
  Policy p = act_policy();
  p.compaction.reserve.blocks = 4;
  p.compaction.demand.enabled = true;
  Engine e(p);
  EXPECT_FALSE(e.decide(Observation{}));
  EXPECT_FALSE(e.decide(obs_at(kS, {node_obs(0, 0, 0, 0)})));  // no free memory: nothing to do
  NodeObservation bare;  // no free_blocks at all
  bare.node = 1;
  EXPECT_FALSE(e.decide(obs_at(2 * kS, {bare})));
  EXPECT_EQ(e.nodes().size(), 1u);  // node 0 is gone: forgotten
  EXPECT_EQ(e.nodes()[0].node, 1);
  // An empty observation (a failed read) keeps what fragd knows.
  EXPECT_FALSE(e.decide(obs_at(3 * kS, {})));
  EXPECT_EQ(e.nodes().size(), 1u);
  // The clock going back does not underflow the windows.
  EXPECT_FALSE(e.decide(obs_at(kS, {bare})));
  EXPECT_EQ(e.budget_used_ns(), 0u);
}

TEST(EngineRobust, OutcomeForAForgottenNode) {
  Engine e(act_policy());
  auto r = e.decide(obs_at(0, {node_obs(0, 90), node_obs(1, 10)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node, 0);
  EXPECT_FALSE(e.decide(obs_at(kS, {node_obs(1, 10)})));
  e.finished(outcome(*r, "no_gain", 0, 2 * kS, 90, 90));
  EXPECT_FALSE(e.busy());
  EXPECT_EQ(e.nodes().size(), 1u);
}

TEST(EngineDryRun, OutcomeSetsLastActionButTeachesNothing) {
  Policy p = act_policy();
  p.dry_run = true;
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  e.finished(outcome(*r, "dry_run", 0, kMs, 90, -1));
  EXPECT_FALSE(e.decide(obs_at(5 * kS, {node_obs(0, 90)})));  // min_interval
  EXPECT_EQ(e.nodes()[0].misses, 0u);
  EXPECT_FALSE(e.nodes()[0].floor.has_value());
  EXPECT_TRUE(e.decide(obs_at(11 * kS, {node_obs(0, 90)})));
}

TEST(EngineDryRun, ProactivenessIsOnlySimulated) {
  Policy p = act_policy();
  p.dry_run = true;
  p.compaction.method = CompactMethod::Proactiveness;
  Engine e(p);
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kind, ActionKind::RaiseProactiveness);
  e.finished(outcome(*r, "dry_run", 0, kMs));
  EXPECT_FALSE(e.proactiveness_raised());  // nothing was written
  EXPECT_FALSE(e.decide(obs_at(kS, {node_obs(0, 90)})));  // but it does not raise again
  auto back = e.decide(obs_at(2 * kS, {node_obs(0, 10)}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, ActionKind::RestoreProactiveness);
  e.finished(outcome(*back, "dry_run", 2 * kS, 2 * kS + kMs));
  EXPECT_FALSE(e.decide(obs_at(3 * kS, {node_obs(0, 10)})));
}

}  // namespace
}  // namespace fragd
