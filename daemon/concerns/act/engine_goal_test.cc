// SPDX-License-Identifier: Apache-2.0
// Demand-sized compaction (compaction.method pool, engine.h): the goal each
// trigger sets, the whole-node fallback, the budget cap from what the node
// taught, and the executor's temporary pool on the simulated kernel.
#include "concerns/act/engine.h"
#include "concerns/act/executor.h"
#include "concerns/act/saved_state.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine_builders.h"
#include "fake_actuator.h"

namespace fragd {
namespace {

using namespace test;

// 24 GiB of 4 KiB pages, 17 GiB of it free in 623 free 2 MiB blocks and
// scattered pages: the benchmark's fragmented node.
constexpr uint64_t kTotal = 6291456, kFreeP = 4456448, kHave = 623;

TEST(EngineGoal, TheReserveShareSetsTheGoalAboveTheScoreGoal) {
  Engine e(goal_policy());
  auto r = e.decide(obs_at(0, {sized_node(0, kTotal, kFreeP, kHave, 93)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, ActionKind::Compact);
  EXPECT_EQ(r->trigger, Trigger::Score);  // 93 > 90
  EXPECT_EQ(r->have_blocks, kHave);
  // Reserve: 25% of 6291456 pages = 3072 blocks; score to 80: 20% of the free
  // pages = 1741 blocks. The larger wins.
  EXPECT_EQ(r->goal_blocks, 3072u);
  EXPECT_NE(r->reason.find("goal 3072 free order-9 blocks (has 623)"), std::string::npos) << r->reason;
}

// The forecast trigger (compaction.forecast) on a node that is not hot and has no reserve:
// 600 free 2 MiB blocks, 17 GiB free.
Policy forecast_policy(bool on) {
  Policy p = goal_policy();
  p.compaction.reserve.memory_percent = 0;
  p.compaction.forecast.enabled = on;
  p.compaction.forecast.horizon_ns = 30 * kS;
  return p;
}
NodeObservation losing(std::optional<double> blocks_per_second, uint64_t blocks9 = 600) {
  NodeObservation n = sized_node(0, kTotal, kFreeP, blocks9, 70);
  n.blocks_per_second = blocks_per_second;
  return n;
}

TEST(EngineGoal, TheForecastFiresOnlyWhenTheBlocksRunOutWithinTheHorizon) {
  // 600 blocks at 20/s: 30 s, within the horizon. The goal: what the horizon takes on top.
  Engine e(forecast_policy(true));
  auto r = e.decide(obs_at(0, {losing(-20.0)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Forecast);
  EXPECT_EQ(r->have_blocks, 600u);
  EXPECT_EQ(r->goal_blocks, 1200u);
  EXPECT_NE(r->reason.find("forecast: 600 free 2 MiB blocks run out in 30s at 20/s lost"), std::string::npos)
      << r->reason;
  // At 19/s they last 31.6 s: past the horizon.
  EXPECT_FALSE(Engine(forecast_policy(true)).decide(obs_at(0, {losing(-19.0)})));
  // Gaining, holding steady, or no forecast yet (less than half a window): nothing.
  EXPECT_FALSE(Engine(forecast_policy(true)).decide(obs_at(0, {losing(+5.0)})));
  EXPECT_FALSE(Engine(forecast_policy(true)).decide(obs_at(0, {losing(0.0)})));
  EXPECT_FALSE(Engine(forecast_policy(true)).decide(obs_at(0, {losing(std::nullopt)})));
  // Off (the default): nothing, however fast the blocks go.
  EXPECT_FALSE(Engine(forecast_policy(false)).decide(obs_at(0, {losing(-1000.0)})));
}

TEST(EngineGoal, TheForecastGoalCountsBlocksOfTheReserveOrder) {
  // reserve.order 10: 600 2 MiB blocks taken over the horizon are 300 blocks of order 10.
  Policy p = forecast_policy(true);
  p.compaction.reserve.order = 10;
  Engine e(p);
  NodeObservation n = losing(-20.0, 200);
  n.free_blocks[10] = 100;  // 400 free 2 MiB blocks in all: 20 s at 20/s
  auto r = e.decide(obs_at(0, {n}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Forecast);
  EXPECT_EQ(r->have_blocks, 100u);
  EXPECT_EQ(r->goal_blocks, 400u);
}

TEST(EngineGoal, WithoutAReserveTheScoreGoalIsTheBlocksThatBringItToLow) {
  Policy p = goal_policy();
  p.compaction.reserve.memory_percent = 0;
  Engine e(p);
  auto r = e.decide(obs_at(0, {sized_node(0, kTotal, kFreeP, kHave, 93)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->goal_blocks, (kFreeP / 5 + 511) / 512);  // 1741
}

TEST(EngineGoal, TheReserveAloneTriggersAndIsCappedAtHalfTheFreeMemory) {
  Engine e(goal_policy());
  // Score 70: not hot. 4 GiB free: the 25% share (6 GiB) is capped at 2 GiB = 1024 blocks.
  auto r = e.decide(obs_at(0, {sized_node(0, kTotal, 1048576, 100, 70)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Reserve);
  EXPECT_NE(r->reason.find("reserve: 100 free order-9 blocks < 1024"), std::string::npos) << r->reason;
  EXPECT_EQ(r->goal_blocks, 1024u);
  // Met: nothing to do.
  Engine met(goal_policy());
  EXPECT_FALSE(met.decide(obs_at(0, {sized_node(0, kTotal, 1048576, 1024, 70)})));
}

TEST(EngineGoal, HugetlbPoolPagesOfTheNodeCountTowardTheReserve) {
  // The capped goal of 1024 blocks (above), with 424 order-9 and 150 order-10 pool pages on the
  // node: 724 blocks held, 300 left for free blocks.
  NodeObservation n = sized_node(0, kTotal, 1048576, 100, 70);
  n.pool_pages.assign(11, 0);
  n.pool_pages[9] = 424;
  n.pool_pages[10] = 150;
  n.pool_pages[4] = 4096;  // smaller than a block: no part of it
  Engine e(goal_policy());
  auto r = e.decide(obs_at(0, {n}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Reserve);
  EXPECT_NE(r->reason.find("reserve: 100 free order-9 blocks < 300 (724 more held in hugetlb pools)"), std::string::npos)
      << r->reason;
  EXPECT_EQ(r->goal_blocks, 300u);
  // Pools that hold the whole goal: nothing to do.
  n.pool_pages[9] = 900;
  Engine held(goal_policy());
  EXPECT_FALSE(held.decide(obs_at(0, {n})));
  // count_pools false: free blocks only, the goal of 1024 again.
  Policy p = goal_policy();
  p.compaction.reserve.count_pools = false;
  Engine free_only(p);
  auto f = free_only.decide(obs_at(0, {n}));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->goal_blocks, 1024u);
  EXPECT_EQ(f->reason.find("pools"), std::string::npos) << f->reason;
}

TEST(EngineGoal, AGoalNearAllTheFreeMemoryCompactsTheWholeNode) {
  Policy p = goal_policy();
  p.compaction.score.high = 10;
  p.compaction.score.low = 5;  // 95% of the free pages in blocks: >= 90% of what they hold
  Engine e(p);
  auto r = e.decide(obs_at(0, {sized_node(0, kTotal, kFreeP, kHave, 93)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->goal_blocks, 0u);
  EXPECT_NE(r->reason.find("whole node"), std::string::npos) << r->reason;
}

TEST(EngineGoal, DemandAsksForTheStallsOfItsWindowOnTopOfWhatThereIs) {
  Policy p = goal_policy();
  p.compaction.reserve.memory_percent = 0;
  p.compaction.score.enabled = false;
  p.compaction.demand.enabled = true;
  p.compaction.demand.stalls_per_second = 10;
  p.compaction.demand.stall_p99_ns = 0;
  Engine e(p);
  Observation o = obs_at(0, {sized_node(0, kTotal, kFreeP, kHave, 93)});
  EXPECT_FALSE(e.decide(o));
  o.now_ns = 10 * kS;
  o.stalls_total = 500;  // 50/s over 10 s
  auto r = e.decide(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trigger, Trigger::Demand);
  EXPECT_EQ(r->goal_blocks, kHave + 500);
}

TEST(EngineGoal, TheNodeLearnsItsCostPerBlockAndTheBudgetCapsTheNextGoal) {
  Policy p = goal_policy();
  p.compaction.cpu_budget_ns = kS / 2;
  Engine e(p);
  auto r = e.decide(obs_at(0, {sized_node(0, kTotal, kFreeP, kHave, 93)}));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->goal_blocks, 3072u);
  ActionOutcome o = outcome(*r, "ok", 0, 2449 * kMs, 93, 85);  // 1 ms per block gained
  o.blocks_before = kHave;
  o.blocks_after = 3072;
  o.pages_migrated = 2449 * 128;
  e.finished(o);
  ASSERT_EQ(e.nodes().size(), 1u);
  EXPECT_DOUBLE_EQ(e.nodes()[0].pages_per_block, 128.0);
  EXPECT_EQ(e.nodes()[0].ns_per_block, kMs);
  // The blocks were taken; the reserve fires again. 0.5 s of budget pays for 500 blocks.
  EXPECT_FALSE(e.decide(obs_at(10 * kS, {sized_node(0, kTotal, kFreeP, 100, 75)})));  // min_interval
  auto next = e.decide(obs_at(20 * kS, {sized_node(0, kTotal, kFreeP, 100, 75)}));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->trigger, Trigger::Reserve);
  EXPECT_EQ(next->goal_blocks, 100u + 500u);
}

TEST(EngineGoal, ALittleGainDoesNotSetTheRateAlone) {
  Engine e(goal_policy());
  auto r = e.decide(obs_at(0, {sized_node(0, kTotal, kFreeP, kHave, 93)}));
  ASSERT_TRUE(r);
  ActionOutcome small = outcome(*r, "ok", 0, 30 * kMs, 93, 93);  // 2 blocks in 30 ms
  small.blocks_before = kHave;
  small.blocks_after = kHave + 2;
  e.finished(small);
  EXPECT_EQ(e.nodes()[0].ns_per_block, 15 * kMs);
  r = e.decide(obs_at(20 * kS, {sized_node(0, kTotal, kFreeP, kHave, 93)}));
  ASSERT_TRUE(r);
  ActionOutcome big = outcome(*r, "ok", 20 * kS, 20 * kS + 140 * kMs, 93, 88);  // 340 blocks in 140 ms
  big.blocks_before = kHave;
  big.blocks_after = kHave + 340;
  big.pages_migrated = 340 * 128;
  e.finished(big);
  // (15 ms + 140 ms) over (1 + 340) blocks: 0.45 ms, not the mean of 15 ms and 0.41 ms.
  EXPECT_EQ(e.nodes()[0].ns_per_block, (15 * kMs + 140 * kMs) / 341);
  EXPECT_NEAR(e.nodes()[0].pages_per_block, 340.0 * 128 / 341, 1e-9);
}

TEST(EngineGoal, AddedBlocksHelpEvenWhenTheScoreBarelyMoves) {
  ActionOutcome o;
  o.req.goal_blocks = 3072;
  o.score_before = 93;
  o.score_after = 90;
  o.blocks_before = 623;
  o.blocks_after = 3000;
  CompactionPolicy c;
  c.reserve.memory_percent = 0;
  EXPECT_TRUE(compaction_helped(o, c));
  o.blocks_after = 623;
  EXPECT_FALSE(compaction_helped(o, c));
}

// The executor's temporary pool on the simulated kernel.
struct GoalRun : ::testing::Test {
  FakeActuator f;
  std::vector<std::string> saved;  // remember/forget, in order
  ActionExecutor exec{f, ActionExecutor::Hooks{{},
                                               [this](const std::string& file, uint64_t v, uint64_t) -> Result<void> {
                                                 saved.push_back("remember " + file + " " + std::to_string(v));
                                                 return {};
                                               },
                                               [this](const std::string& file) { saved.push_back("forget " + file); },
                                               {}}};
  ActionRequest req(uint64_t goal) {
    ActionRequest r;
    r.id = 3;
    r.kind = ActionKind::Compact;
    r.node = 0;
    r.goal_blocks = goal;
    return r;
  }
  Policy policy() {
    Policy p = goal_policy();
    p.hugepages.guard_kib = 0;
    return p;
  }
};

TEST_F(GoalRun, GrowsThePoolToTheGoalThenFreesItAndTheBlocksStayFree) {
  f.set_node(0, 1024000, 95, 10);  // 100 free blocks; compaction could make 1800
  f.nodes[0].pool[2048] = 7;       // the operator's own pages stay
  f.direct_yield = 100000;         // direct compaction finds each block the pool asks for
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(o.blocks_before, 100u);
  EXPECT_EQ(o.blocks_after, 600u);
  EXPECT_EQ(f.nodes[0].pool[2048], 7u);
  ASSERT_EQ(o.steps.size(), 2u);
  EXPECT_EQ(o.steps[0].step, "grow");
  EXPECT_EQ(o.steps[0].pool_after, 607u);
  EXPECT_EQ(o.steps[1].step, "release");
  EXPECT_EQ(o.steps[1].pool_after, 7u);
  const std::string file = pool_file(0, 2048);
  EXPECT_EQ(saved, (std::vector<std::string>{"remember " + file + " 7", "forget " + file}));
  EXPECT_EQ(f.nodes[0].compactions, 0u);  // no whole-node compaction
}

// The freed pool's pages go to the freeing CPU's page list first; since Linux 6.7 the list grows
// to keep hundreds (a CI run: 1321 freed, /proc/buddyinfo 203 short). They are drained back.
TEST_F(GoalRun, TheBlocksACPUsPageListKeptArePutBackOnTheFreeLists) {
  f.set_node(0, 1024000, 95, 10);  // 100 free blocks
  f.direct_yield = 100000;
  f.percpu_keep = 200;  // the release leaves 200 blocks on a CPU's list, 30 come back a write
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(o.result, "ok") << o.detail;
  ASSERT_EQ(o.steps.size(), 3u);
  EXPECT_EQ(o.steps[1].step, "release");
  EXPECT_EQ(o.steps[2].step, "drain");
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 7u);
  EXPECT_EQ(o.blocks_after, 600u);
  EXPECT_EQ(f.nodes[0].percpu, 0u);
  EXPECT_EQ(f.nodes[0].compactions, 0u) << "the blocks were free: nothing to compact";
  EXPECT_NE(o.detail.find("200 freed blocks came back from a CPU's page list after 7 writes of vm.stat_refresh"),
            std::string::npos)
      << o.detail;
}

TEST_F(GoalRun, AReleaseNoPageListKeptNeedsNoDrainStep) {
  f.set_node(0, 1024000, 95, 10);
  f.direct_yield = 100000;
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 0u) << "nothing to drain: no write";
  EXPECT_EQ(o.steps.back().step, "release");
  EXPECT_EQ(o.detail.find("page list"), std::string::npos) << o.detail;
}

TEST_F(GoalRun, TheDrainStopsAfterThreeWritesThatBringNoBlockBack) {
  f.set_node(0, 1024000, 95, 10);
  f.direct_yield = 100000;
  f.percpu_keep = 200;
  f.percpu_step = 0;  // the lists' floor: nothing comes back
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(f.count_calls("refresh_vm_stats"), 3u);
  EXPECT_EQ(o.steps.back().step, "drain");
  EXPECT_NE(o.detail.find("0 freed blocks came back from a CPU's page list after 3 writes"), std::string::npos)
      << o.detail;
}

TEST_F(GoalRun, ADrainTheKernelRefusesIsSaidAndTheActionStands) {
  f.set_node(0, 1024000, 95, 10);
  f.direct_yield = 100000;
  f.percpu_keep = 200;
  f.fail("refresh_vm_stats", EROFS);
  const ActionOutcome o = exec.run(req(600), policy());
  ASSERT_EQ(o.steps.size(), 3u);
  EXPECT_EQ(o.steps[2].step, "drain");
  EXPECT_EQ(f.nodes[0].compactions, 0u) << "the pool held the goal: its blocks are free, on a CPU's list";
  EXPECT_EQ(o.blocks_after, 400u) << "what /proc/buddyinfo shows";
  EXPECT_NE(o.detail.find("the per-CPU page lists were not drained: write /proc/sys/vm/stat_refresh"),
            std::string::npos)
      << o.detail;
  EXPECT_EQ(f.nodes[0].pool[2048], 0u);
}

TEST_F(GoalRun, WritesAgainWhileAWriteAddsPages) {
  f.set_node(0, 1024000, 95, 10);  // 100 free blocks
  f.direct_yield = 200;            // direct compaction makes 200 blocks a write, then gives up
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(o.result, "ok") << o.detail;
  // 0 -> 300 (100 free + 200 made), -> 500, -> 600: three grows, then the release.
  ASSERT_EQ(o.steps.size(), 4u);
  EXPECT_EQ(o.steps[0].pool_after, 300u);
  EXPECT_EQ(o.steps[1].pool_after, 500u);
  EXPECT_EQ(o.steps[2].pool_after, 600u);
  EXPECT_EQ(o.steps[3].step, "release");
  EXPECT_EQ(o.attempts, 3u);
  EXPECT_EQ(o.blocks_after, 600u);
}

// One node compaction, stopped once node 0 had the goal's 600 free blocks: not the whole node.
void expect_compacted_until_goal(const FakeActuator& fa, const ActionOutcome& o) {
  EXPECT_EQ(fa.nodes.at(0).compactions, 1u);
  EXPECT_EQ(fa.count_calls("compact 0 until 600"), 1u) << "a node compaction stopped at the goal, not the whole node";
  EXPECT_GE(o.blocks_after, 600u);
  EXPECT_LT(o.blocks_after, fa.nodes.at(0).max_blocks9) << "compacted past the goal";
}

TEST_F(GoalRun, WhenDirectCompactionMakesNoBlockTheNodeIsCompactedUntilTheGoal) {
  f.set_node(0, 1024000, 95, 10);  // 100 free blocks; direct compaction deferred: makes none
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(o.result, "ok") << o.detail;
  ASSERT_EQ(o.steps.size(), 4u);
  EXPECT_EQ(o.steps[0].pool_after, 100u);  // the free blocks, nothing made
  EXPECT_EQ(o.steps[1].pool_after, 100u);  // again: no progress
  EXPECT_EQ(o.steps[2].step, "release");
  EXPECT_EQ(o.steps[3].step, "compact");
  expect_compacted_until_goal(f, o);
  EXPECT_NE(o.detail.find("the node was compacted until it had 600 free blocks"), std::string::npos) << o.detail;
}

// Whatever the writes left missing is compacted for. As measured in a benchmark run (1995 free,
// goal 3071, the pool took 6 more) and in a CI run (498 free, goal 898, the writes held 797).
TEST_F(GoalRun, WhateverTheWritesLeftMissingIsCompactedUntilTheGoal) {
  for (const uint64_t yield : {6, 70}) {  // blocks a write makes before the kernel defers
    SCOPED_TRACE("direct_yield " + std::to_string(yield));
    FakeActuator fa;
    ActionExecutor ex{fa, ActionExecutor::Hooks{}};
    fa.set_node(0, 1024000, 95, 10);  // 100 free blocks
    fa.direct_yield = yield;
    const ActionOutcome o = ex.run(req(600), policy());
    EXPECT_EQ(o.result, "ok") << o.detail;
    ASSERT_EQ(o.steps.size(), 6u);  // four writes while they add pages, the release, the node
    EXPECT_EQ(o.steps[3].pool_after, 100 + 4 * yield);
    EXPECT_EQ(o.steps[4].step, "release");
    EXPECT_EQ(o.steps[5].step, "compact");
    expect_compacted_until_goal(fa, o);
    EXPECT_NE(o.detail.find("made " + std::to_string(4 * yield) + " of the 500 missing blocks"), std::string::npos)
        << o.detail;
  }
}

TEST_F(GoalRun, AGoalTheWritesMetNeedsNoNodeCompaction) {
  f.set_node(0, 1024000, 95, 10);  // 100 free blocks
  f.direct_yield = 125;            // four writes make the 500 missing
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(f.nodes[0].compactions, 0u) << o.detail;
  EXPECT_EQ(o.steps.back().step, "release");
  EXPECT_EQ(o.blocks_after, 600u);
}

TEST_F(GoalRun, AGrowStoppedAsFragdExitsIsAbandonedAndThePoolGoesBack) {
  f.set_node(0, 1024000, 95, 10);
  f.fail("grow_pool", ECANCELED, 1);
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(o.result, "abandoned") << o.detail;
  EXPECT_EQ(f.nodes[0].pool[2048], 0u);
  EXPECT_EQ(saved.back(), "forget " + pool_file(0, 2048));
}

TEST_F(GoalRun, AGrowKilledAtTheDeadlineIsCutAndThePoolGoesBack) {
  f.set_node(0, 1024000, 95, 10);
  f.fail("grow_pool", ETIMEDOUT, 1);
  ActionRequest r = req(600);
  r.budget_ns = 2'000'000'000ULL;
  const ActionOutcome o = exec.run(r, policy());
  EXPECT_EQ(o.result, "cut") << o.detail;
  EXPECT_EQ(f.count_calls("grow_pool"), 1u) << "written again past the deadline";
  EXPECT_EQ(f.nodes[0].compactions, 0u) << "the whole node compacted past the deadline";
  EXPECT_EQ(f.nodes[0].pool[2048], 0u);
  EXPECT_EQ(saved.back(), "forget " + pool_file(0, 2048));
}

TEST_F(GoalRun, TheWholeNodeFallbackKilledAtTheDeadlineIsCut) {
  f.set_node(0, 1024000, 95, 10);  // direct compaction makes none: the whole node follows
  f.fail("compact", ETIMEDOUT, 1);
  ActionRequest r = req(600);
  r.budget_ns = 2'000'000'000ULL;
  const ActionOutcome o = exec.run(r, policy());
  EXPECT_EQ(o.result, "cut") << o.detail;
  ASSERT_FALSE(f.deadlines.empty());
  for (uint64_t d : f.deadlines) EXPECT_EQ(d, f.deadlines[0]) << "one deadline for the whole action";
  EXPECT_NE(f.deadlines[0], 0u);
}

TEST_F(GoalRun, AReleaseThatFailsKeepsTheSavedSizeForTheRestore) {
  f.set_node(0, 1024000, 95, 10);
  f.direct_yield = 100000;
  f.fail("write_pool", EIO, 1, 1);  // the grow's own write passes, the release fails
  const ActionOutcome o = exec.run(req(600), policy());
  EXPECT_EQ(o.result, "error");
  EXPECT_NE(o.detail.find("kept in the saved state"), std::string::npos) << o.detail;
  EXPECT_EQ(saved.size(), 1u);  // remembered, never forgotten
}

TEST_F(GoalRun, TheGuardLimitsWhatThePoolMayHold) {
  f.set_node(0, 1024000, 95, 10);
  f.mem_available = 2048 * 50 + 1024 * 1024;  // room for 50 pages above a 1 GiB guard
  Policy p = policy();
  p.hugepages.guard_kib = 1024 * 1024;
  const ActionOutcome o = exec.run(req(600), p);
  EXPECT_EQ(o.result, "guard") << o.detail;
  EXPECT_TRUE(saved.empty());
}

TEST_F(GoalRun, TheNodesOwnSpareMemoryLimitsItsGoalPoolToo) {
  f.set_node(0, 1024000, 95, 10);
  f.mem_available = 8ULL * 1024 * 1024;           // the host: room for thousands of pages
  f.node_spare[0] = 2048 * 50 + 1024 * 1024;      // node 0: room for 50 above a 1 GiB guard
  Policy p = policy();
  p.hugepages.guard_kib = 1024 * 1024;
  const ActionOutcome o = exec.run(req(600), p);
  EXPECT_EQ(o.result, "guard") << o.detail;
  EXPECT_NE(o.detail.find("node 0 can spare"), std::string::npos) << o.detail;
  EXPECT_EQ(f.count_calls("grow_pool"), 0u);
  EXPECT_TRUE(saved.empty());
}

TEST(GoalPageSize, TheGoalsPoolIsOfTheReserveOrderInTheKernelsPages) {
  // With 64 KiB pages, reserve.order 5 is a 2 MiB block: the goal's temporary pool is the
  // 2048 kB one, not 4 KiB << 5 = 128 kB.
  FakeActuator f;
  f.set_node(0, 1024000, 95, 10);
  f.direct_yield = 100000;
  ActionExecutor exec{f, {}, 64};
  Policy p = goal_policy();
  p.hugepages.guard_kib = 0;
  p.compaction.reserve.order = 5;
  ActionRequest r;
  r.id = 3;
  r.kind = ActionKind::Compact;
  r.node = 0;
  r.goal_blocks = 3000;  // more than the fake's 1600 free blocks of order 5 (100 of its order 9)
  const ActionOutcome o = exec.run(r, p);
  EXPECT_GE(f.count_calls("grow_pool 0 2048 "), 1u) << o.result << ": " << o.detail;
  EXPECT_EQ(f.count_calls("grow_pool 0 128 "), 0u);
}

TEST_F(GoalRun, WithoutAHugetlbPoolOfTheOrderTheWholeNodeIsCompacted) {
  f.set_node(0, 1024000, 95, 10);
  Policy p = policy();
  p.compaction.reserve.order = 4;  // 64 kB: no such hugetlb size
  f.fail("read_pool", ENOENT, 1);
  const ActionOutcome o = exec.run(req(600), p);
  EXPECT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(f.nodes[0].compactions, 1u);
  EXPECT_NE(o.detail.find("no 64 kB hugetlb pool"), std::string::npos) << o.detail;
  EXPECT_TRUE(saved.empty());
}

TEST_F(GoalRun, WholeNodeWhenTheGoalIsZero) {
  f.set_node(0, 1024000, 95, 10);
  const ActionOutcome o = exec.run(req(0), policy());
  EXPECT_EQ(f.nodes[0].compactions, 1u);
  EXPECT_TRUE(o.steps.empty());
}

}  // namespace
}  // namespace fragd
