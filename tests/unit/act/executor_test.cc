// SPDX-License-Identifier: Apache-2.0
// The executor (act/executor.h) reports a compaction that fragd stopped as it
// exits (the actuator's ECANCELED) as "abandoned", not as an error, on its
// own and inside a pool resize; the simulated kernel of fake_actuator.h.
#include "act/executor.h"

#include <gtest/gtest.h>

#include <cerrno>
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

}  // namespace
}  // namespace fragd
