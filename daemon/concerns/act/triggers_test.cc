// SPDX-License-Identifier: Apache-2.0
// Each node trigger of act mode on its own (concerns/act/triggers.h): when it fires and why, when it
// waits for the node to settle, and the goal it asks of a compaction. The engine's choice
// between them, the budget and the back-off are engine_test.cc's.
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

}  // namespace
}  // namespace fragd
