// SPDX-License-Identifier: Apache-2.0
// The executor (concerns/act/executor.h) reports a compaction that fragd stopped as it
// exits (the actuator's ECANCELED) as "abandoned", not as an error, on its
// own and inside a pool resize; the simulated kernel of fake_actuator.h.
#include "concerns/act/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <memory>
#include <vector>
#include <time.h>

#include "base/text.h"

#include "fake_actuator.h"

namespace fragd {
namespace {

using test::FakeActuator;

ActionRequest compact(int node) {
  ActionRequest r;
  r.id = 7;
  r.kind = ActionKind::Compact;
  r.node = node;
  return r;
}

// A pool of 2 MiB pages on node 0 that compacts node 0 when blocks are short.
ActionRequest pool(uint64_t id, uint64_t target) {
  ActionRequest r;
  r.id = id;
  r.kind = ActionKind::Pool;
  r.node = 0;
  r.size_kib = 2048;
  r.target = target;
  r.compact_nodes = {0};
  return r;
}

// No MemAvailable guard: the fake's memory is all the pool may take.
Policy unguarded() {
  Policy p;
  p.hugepages.guard_kib = 0;
  return p;
}

// A compaction of node 0 whose write to nodeN/compact fails once with `err`.
ActionOutcome compact_failing(int err) {
  FakeActuator f;
  f.set_node(0, 1024000, 80, 10);
  f.fail("compact", err, 1);
  ActionExecutor exec(f, {});
  return exec.run(compact(0), Policy{});
}

TEST(ExecutorCompact, AWriteStoppedAsFragdExitsIsAbandoned) {
  const ActionOutcome o = compact_failing(ECANCELED);
  EXPECT_EQ(o.result, "abandoned");
  EXPECT_NE(o.detail.find("/compact"), std::string::npos) << o.detail;
}

TEST(ExecutorCompact, ARefusedWriteIsStillAnError) { EXPECT_EQ(compact_failing(EROFS).result, "error"); }

TEST(ExecutorPool, ACompactionStoppedMidResizeAbandonsTheResize) {
  FakeActuator f;
  f.set_node(0, 1024000, 90, 10);  // few free 2 MiB blocks: the resize compacts first
  f.fail("compact", ECANCELED, 1);
  ActionExecutor exec(f, {});
  ActionRequest r = pool(8, 1000);
  const ActionOutcome o = exec.run(r, unguarded());
  EXPECT_EQ(o.result, "abandoned") << o.detail;
  EXPECT_EQ(o.compactions, 0u);
}

TEST(ExecutorDeadline, EveryCompactionWriteHasTheActionsDeadline) {
  FakeActuator f;
  f.set_node(0, 1024000, 80, 10);
  ActionExecutor exec(f, {});
  ActionRequest r = compact(0);
  r.budget_ns = 5'000'000'000ULL;
  const uint64_t before = now_ns(CLOCK_MONOTONIC);
  exec.run(r, Policy{});
  const uint64_t after = now_ns(CLOCK_MONOTONIC);
  ASSERT_EQ(f.deadlines.size(), 1u);
  EXPECT_GE(f.deadlines[0], before + r.budget_ns);
  EXPECT_LE(f.deadlines[0], after + r.budget_ns);
  EXPECT_EQ(f.deadline(), 0u) << "the deadline outlived its action";
  r.budget_ns = 0;  // an action without a budget: no deadline
  exec.run(r, Policy{});
  ASSERT_EQ(f.deadlines.size(), 2u);
  EXPECT_EQ(f.deadlines[1], 0u);
}

TEST(ExecutorDeadline, ACompactionKilledAtTheDeadlineIsCut) {
  const ActionOutcome o = compact_failing(ETIMEDOUT);
  EXPECT_EQ(o.result, "cut");
  EXPECT_NE(o.detail.find("/compact"), std::string::npos) << o.detail;
}

TEST(ExecutorDeadline, APoolGrowKilledAtTheDeadlineIsCutAndKeepsWhatItReached) {
  FakeActuator f;
  f.set_node(0, 1024000, 10, 10);  // free blocks enough: the pool grows without compaction
  f.fail("grow_pool", ETIMEDOUT, 1);
  ActionExecutor exec(f, {});
  ActionRequest r = pool(9, 10);
  r.budget_ns = 1'000'000'000ULL;
  const ActionOutcome o = exec.run(r, unguarded());
  EXPECT_EQ(o.result, "cut") << o.detail;
  EXPECT_EQ(f.count_calls("grow_pool"), 1u) << "the resize went on past its deadline";
  EXPECT_EQ(f.count_calls("compact"), 0u);
  ASSERT_EQ(f.deadlines.size(), 1u);
  EXPECT_NE(f.deadlines[0], 0u);
}

TEST(ExecutorDeadline, AResizeCompactionKilledAtTheDeadlineIsCut) {
  FakeActuator f;
  f.set_node(0, 1024000, 90, 10);  // few free 2 MiB blocks: the resize compacts
  f.direct_yield = 0;
  f.fail("compact", ETIMEDOUT, 1);
  ActionExecutor exec(f, {});
  ActionRequest r = pool(10, 1000);
  const ActionOutcome o = exec.run(r, unguarded());
  EXPECT_EQ(o.result, "cut") << o.detail;
  EXPECT_EQ(f.count_calls("compact"), 1u);
}

// A goal of `blocks` free 2 MiB blocks on node 0 with method pool, fired by `trigger`, on a node
// with 20 free blocks and pages that direct compaction finds for the pool's write.
struct GoalRun {
  ActionOutcome o;
  FakeActuator f;
};
GoalRun goal(Trigger trigger, std::function<uint64_t(unsigned)> foreign_stalls, double demand_rate = 10) {
  GoalRun g;
  g.f.set_node(0, 1024000, 90, 10);  // about 200 free 2 MiB blocks, compaction can make 1800
  g.f.direct_yield = 1000;
  ActionRequest r;
  r.id = 11;
  r.kind = ActionKind::Compact;
  r.node = 0;
  r.trigger = trigger;
  r.goal_blocks = 600;
  Policy p = unguarded();
  p.compaction.method = CompactMethod::Pool;
  p.compaction.reserve.order = 9;
  p.compaction.demand.stalls_per_second = demand_rate;
  ActionExecutor::Hooks hooks;
  hooks.foreign_stalls = std::move(foreign_stalls);
  ActionExecutor exec(g.f, hooks);
  g.o = exec.run(r, p);
  return g;
}

// Other processes' stalls at order >= 9: none for the first `quiet` polls, then one more at each.
std::function<uint64_t(unsigned)> stalls_after(unsigned quiet, std::vector<unsigned>* orders) {
  auto polls = std::make_shared<unsigned>(0);
  return [polls, quiet, orders](unsigned order) -> uint64_t {
    orders->push_back(order);
    const unsigned n = (*polls)++;
    return 1000 + (n > quiet ? n - quiet : 0);
  };
}

TEST(ExecutorGoal, AReserveGoalGivesWayWhenOtherProcessesStallAndPutsThePoolBack) {
  std::vector<unsigned> orders;
  GoalRun g = goal(Trigger::Reserve, stalls_after(300, &orders));
  EXPECT_EQ(g.o.result, "yielded") << g.o.detail;
  EXPECT_NE(g.o.detail.find("gave way after 3"), std::string::npos) << g.o.detail;  // ~300 pages, not 600
  EXPECT_NE(g.o.detail.find("put back to 0"), std::string::npos) << g.o.detail;
  EXPECT_EQ(g.f.nodes[0].pool[2048], 0u) << "the pool still holds the blocks the others need";
  EXPECT_EQ(g.f.count_calls("grow_pool 0 2048 600 giving way"), 1u) << "one write, ended where they stalled";
  EXPECT_EQ(g.f.count_calls("compact"), 0u) << "no whole-node compaction after giving way";
  ASSERT_FALSE(orders.empty());
  for (unsigned o : orders) EXPECT_EQ(o, 9u) << "the stalls counted are those at the goal's order and above";
}

// A few stalls (an opportunistic page-cache folio), or stalls slower than the demand trigger's
// rate, are not demand: the pool grows on.
TEST(ExecutorGoal, AFewStallsOrSlowOnesAreNotDemand) {
  std::vector<unsigned> orders;
  auto polls = std::make_shared<unsigned>(0);
  GoalRun few = goal(Trigger::Reserve, [polls](unsigned) -> uint64_t { return 1000 + std::min(++*polls, 3u); });
  EXPECT_NE(few.o.result, "yielded") << few.o.detail;
  EXPECT_NE(few.o.detail.find("held 600 of 600"), std::string::npos) << few.o.detail;
  GoalRun slow = goal(Trigger::Reserve, stalls_after(0, &orders), 1e12);  // 1e12 stalls/s: none is that fast
  EXPECT_NE(slow.o.result, "yielded") << slow.o.detail;
  EXPECT_NE(slow.o.detail.find("held 600 of 600"), std::string::npos) << slow.o.detail;
}

TEST(ExecutorGoal, WithoutStallsOfOthersTheGoalIsMadeWhole) {
  std::vector<unsigned> orders;
  GoalRun g = goal(Trigger::Reserve, [&orders](unsigned o) -> uint64_t {
    orders.push_back(o);
    return 1000;  // no other process stalled
  });
  EXPECT_NE(g.o.result, "yielded") << g.o.detail;
  EXPECT_NE(g.o.detail.find("held 600 of 600"), std::string::npos) << g.o.detail;
  EXPECT_EQ(g.f.nodes[0].pool[2048], 0u);
  EXPECT_GT(orders.size(), 100u) << "asked before each page";
}

TEST(ExecutorGoal, ADemandOrManualGoalDoesNotGiveWay) {
  for (Trigger t : {Trigger::Demand, Trigger::Manual}) {
    std::vector<unsigned> orders;
    GoalRun g = goal(t, stalls_after(0, &orders));  // others stall all along
    EXPECT_NE(g.o.result, "yielded") << trigger_label(t) << ": " << g.o.detail;
    EXPECT_NE(g.o.detail.find("held 600 of 600"), std::string::npos) << g.o.detail;
    EXPECT_EQ(g.f.count_calls("grow_pool 0 2048 600 giving way"), 0u) << trigger_label(t);
    EXPECT_TRUE(orders.empty()) << trigger_label(t) << ": the demand it serves is those stalls";
  }
}

}  // namespace
}  // namespace fragd
