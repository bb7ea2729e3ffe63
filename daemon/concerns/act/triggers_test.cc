// SPDX-License-Identifier: Apache-2.0
// Each trigger of act mode on its own (concerns/act/triggers.h): a node trigger's firing and why,
// its wait for the node to settle and the goal it asks of a compaction; a pool trigger's firing,
// the size it asks for and the deadline. The engine's choice between them, the budget and the
// back-off are engine_test.cc's, pool_test.cc's and engine_lease_test.cc's.
#include "concerns/act/triggers.h"

#include <gtest/gtest.h>

#include <string>

#include "engine_builders.h"

namespace fragd {
namespace {

using namespace test;

const NodeTrigger& trigger(Trigger kind) {
  for (const NodeTrigger* t : node_triggers())
    if (t->kind() == kind) return *t;
  ADD_FAILURE() << "no trigger " << trigger_label(kind);
  return *node_triggers().front();
}

TEST(NodeTriggers, AreAskedScoreDemandReserveForecast) {
  std::vector<Trigger> kinds;
  for (const NodeTrigger* t : node_triggers()) kinds.push_back(t->kind());
  EXPECT_EQ(kinds, (std::vector<Trigger>{Trigger::Score, Trigger::Demand, Trigger::Reserve, Trigger::Forecast}));
}

TEST(ScoreTrigger, FiresWhileHotAndSettledAndAsksForTheBlocksThatBringTheScoreToLow) {
  const Policy p = act_policy();  // score 40/20
  const TriggerInputs in{p.compaction, std::nullopt, 0};
  const NodeTrigger& t = trigger(Trigger::Score);
  const NodeObservation n = node_obs(0, 50);  // 1024000 free pages
  EXPECT_EQ(t.fires({n, true, true}, in), "score 50 > high 40");
  const NodeObservation mid = node_obs(0, 30);
  EXPECT_EQ(t.fires({mid, true, true}, in), "score 30 >= low 20 (hot since it rose above 40)");
  EXPECT_FALSE(t.fires({n, false, true}, in));  // not hot
  EXPECT_FALSE(t.fires({n, true, false}, in));  // hot, still settling
  EXPECT_TRUE(t.settling({n, true, false}, in));
  EXPECT_FALSE(t.settling({n, false, false}, in));
  // 80% of 1024000 free pages in order-9 blocks: 819200 / 512 = 1600.
  EXPECT_EQ(t.goal({n, true, true}, in), 1600u);
  EXPECT_EQ(t.goal({n, false, true}, in), 0u);
}

TEST(DemandTrigger, FiresOnANodeWithSomethingToCompactAndAsksForTheWindowsStalls) {
  const Policy p = act_policy();
  const TriggerInputs in{p.compaction, std::string("12 stalls/s of order>=9 > 10 over 10s"), 120};
  const TriggerInputs calm{p.compaction, std::nullopt, 120};
  const NodeTrigger& t = trigger(Trigger::Demand);
  const NodeObservation n = node_obs(0, 25, kFree, 7);
  EXPECT_EQ(t.fires({n, false, false}, in), "12 stalls/s of order>=9 > 10 over 10s");  // settle does not hold it
  EXPECT_FALSE(t.fires({n, false, true}, calm));
  EXPECT_FALSE(t.fires({node_obs(0, 19, kFree, 7), false, true}, in));  // below score.low
  EXPECT_EQ(t.goal({n, false, true}, in), 7u + 120u);
  EXPECT_EQ(t.goal({n, false, true}, calm), 0u);
  EXPECT_FALSE(t.settling({n, false, false}, in));
}

TEST(ReserveTrigger, FiresBelowTheGoalOnceSettledAndCountsPooledPages) {
  Policy p = act_policy();
  p.compaction.reserve.blocks = 100;  // order 9
  const TriggerInputs in{p.compaction, std::nullopt, 0};
  const NodeTrigger& t = trigger(Trigger::Reserve);
  NodeObservation n = node_obs(0, 5, kFree, 60);
  EXPECT_EQ(t.fires({n, false, true}, in), "reserve: 60 free order-9 blocks < 100");
  EXPECT_FALSE(t.fires({n, false, false}, in));
  EXPECT_TRUE(t.settling({n, false, false}, in));
  EXPECT_EQ(t.goal({n, false, true}, in), 100u);
  // 30 pages held in the node's 2 MiB pool count toward the goal with count_pools.
  n.pool_pages.assign(11, 0);
  n.pool_pages[9] = 30;
  p.compaction.reserve.count_pools = true;
  const TriggerInputs pooled{p.compaction, std::nullopt, 0};
  EXPECT_EQ(t.fires({n, false, true}, pooled), "reserve: 60 free order-9 blocks < 70 (30 more held in hugetlb pools)");
  n.free_blocks[9] = 70;
  EXPECT_FALSE(t.fires({n, false, true}, pooled));
  EXPECT_FALSE(t.settling({n, false, false}, pooled));
  // A goal the free pages could not hold is no goal: 100 blocks are 51200 pages.
  const NodeObservation small = node_obs(0, 5, 51199, 10);
  EXPECT_EQ(t.goal({small, false, true}, in), 0u);
  EXPECT_FALSE(t.fires({small, false, true}, in));
}

TEST(ForecastTrigger, FiresWhenTheBlocksRunOutWithinTheHorizon) {
  Policy p = act_policy();
  p.compaction.forecast.enabled = true;
  p.compaction.forecast.horizon_ns = 30 * kS;
  const TriggerInputs in{p.compaction, std::nullopt, 0};
  const NodeTrigger& t = trigger(Trigger::Forecast);
  NodeObservation n = node_obs(0, 5, kFree, 600);
  n.blocks_per_second = -20.0;  // 600 blocks last 30 s: within the horizon
  const auto why = t.fires({n, false, false}, in);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("600 free 2 MiB blocks run out in 30s at 20/s lost"), std::string::npos) << *why;
  EXPECT_EQ(t.goal({n, false, true}, in), 600u + 600u);  // what the horizon takes on top
  n.blocks_per_second = -19.0;                           // 31.6 s: past the horizon
  EXPECT_FALSE(t.fires({n, false, true}, in));
  EXPECT_EQ(t.goal({n, false, true}, in), 0u);
  n.blocks_per_second = 5.0;  // gaining
  EXPECT_FALSE(t.fires({n, false, true}, in));
  n.blocks_per_second.reset();  // not half a window seen yet
  EXPECT_FALSE(t.fires({n, false, true}, in));
  p.compaction.forecast.enabled = false;
  n.blocks_per_second = -20.0;
  EXPECT_FALSE(t.fires({n, false, true}, TriggerInputs{p.compaction, std::nullopt, 0}));
}

constexpr uint64_t kSize2M = 2048;  // KiB (pool_test.cc has a k2M: one unity build holds both)

TEST(PoolTrigger, AsksForTheTargetPlusWhatLeasesHoldAndGrowsOnlyWithBudgetLeft) {
  const PoolTrigger& t = pool_target_trigger();
  EXPECT_EQ(t.kind(), Trigger::Pool);
  const PoolInputs in{4 * kS, 6 * kS};
  PoolFacts p{{0, kSize2M}, 10, 64, 0, false, false};
  auto w = t.fires(p, in);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->reason, "pool 2048kB node 0: 10 < target 64");
  EXPECT_EQ(w->target, 64u);
  EXPECT_EQ(w->budget_ns, 4 * kS);  // an automatic action: what the window has left
  EXPECT_FALSE(w->restore_to);      // no lease: the pool's size is the operator's state
  p.leased = 8;                     // a lease rides on the policy's target
  w = t.fires(p, in);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->reason, "pool 2048kB node 0: 10 < target 72 (8 leased)");
  EXPECT_EQ(w->target, 72u);
  EXPECT_EQ(w->restore_to, std::optional<uint64_t>(64));
  EXPECT_FALSE(t.fires(p, PoolInputs{0, 6 * kS})) << "growing waits for the budget";
  p.observed = 100;  // a shrink frees pages: no budget needed
  w = t.fires(p, PoolInputs{0, 6 * kS});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->reason, "pool 2048kB node 0: 100 > target 72 (8 leased)");
  p.observed = 72;
  EXPECT_FALSE(t.fires(p, in)) << "held";
  p.observed.reset();  // not in the observation: set it
  w = t.fires(PoolFacts{{-1, kSize2M}, std::nullopt, 5, 0, false, false}, in);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->reason, "pool 2048kB global: not observed, target 5");
  EXPECT_FALSE(t.fires(PoolFacts{{-1, kSize2M}, std::nullopt, 5, 0, false, false}, PoolInputs{0, 6 * kS}));
  EXPECT_FALSE(t.fires(PoolFacts{{0, kSize2M}, 10, 64, 0, true, false}, in)) << "its wait after a resize";
}

TEST(LeaseTrigger, PutsAPoolOnlyLeasesGrewBackToItsBasePlusTheLiveLeases) {
  const PoolTrigger& t = lease_pool_trigger();
  EXPECT_EQ(t.kind(), Trigger::Lease);
  const PoolInputs in{0, 6 * kS};  // the budget spent: a put-back still runs, under the whole budget
  PoolFacts p{{1, kSize2M}, 40, 4, 0, false, false};
  auto w = t.fires(p, in);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->reason, "the 2 MiB pool of node 1: 40, leases hold 0 above its base of 4");
  EXPECT_EQ(w->target, 4u);
  EXPECT_EQ(w->restore_to, std::optional<uint64_t>(4));
  EXPECT_EQ(w->budget_ns, 6 * kS);
  p.leased = 36;
  EXPECT_FALSE(t.fires(p, in)) << "the live leases hold all it has";
  p.observed = 30;  // the kernel took some back while leases hold them
  w = t.fires(p, in);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->target, 40u);
  p.lease_queued = true;
  EXPECT_FALSE(t.fires(p, in)) << "a lease's own action sets the pool";
  p.lease_queued = false;
  p.waiting = true;
  EXPECT_FALSE(t.fires(p, in)) << "its wait after a failed resize";
  p.waiting = false;
  p.observed.reset();
  EXPECT_FALSE(t.fires(p, in)) << "not read: nothing to judge";
}

}  // namespace
}  // namespace fragd
