// SPDX-License-Identifier: Apache-2.0
// The act-mode decision logic (concerns/act/engine.h) on recorded sequences of node
// scores, stalls and failures (tests/fixtures/sequences, format in its
// README), replayed through decide() and finished() against the simulated
// kernel of fake_actuator.h. Each rule on hand-built observations:
// engine_test.cc, engine_manual_test.cc.
#include "sequence_replay.h"

#include <gtest/gtest.h>

namespace fragd {
namespace {

// ----------------------------------------------------- recorded sequences --

TEST(EngineSequence, ScoreHysteresis) {
  Replay r = replay_file("hysteresis.seq");
  EXPECT_EQ(r.done.front().req.reason, "score 45 > high 40");
  EXPECT_EQ(r.done[1].req.reason, "score 35 >= low 20 (hot since it rose above 40)");
  EXPECT_EQ(r.fake.score_of(0), 15u);
  ASSERT_EQ(r.engine.nodes().size(), 1u);
  EXPECT_FALSE(r.engine.nodes()[0].hot);
}

TEST(EngineSequence, BackoffDoublesCapsEscapesAndResets) {
  Fixture f = load_fixture("backoff.seq");
  Replay r(f);
  r.run_until(150 * kS);  // after the 4th miss
  ASSERT_EQ(r.engine.nodes().size(), 1u);
  NodeState n = r.engine.nodes()[0];
  EXPECT_EQ(n.misses, 4u);
  ASSERT_TRUE(n.floor.has_value());
  EXPECT_EQ(*n.floor, 57u);
  EXPECT_EQ(n.waiting, "backoff");
  EXPECT_EQ(n.next_allowed_ns, 144 * kS + 80 * kS);  // capped at backoff_max 80s, not 160s
  r.run_until(f.h.end_ns);
  EXPECT_TRUE(r.failures.empty()) << joined(r.failures);
  EXPECT_EQ(joined(r.actions()), joined(f.expected));
  n = r.engine.nodes()[0];
  EXPECT_EQ(n.misses, 0u);  // the last compaction helped
  EXPECT_FALSE(n.floor.has_value());
}

TEST(EngineSequence, FailingCompactionBacksOffNoBusyLoop) {
  Replay r = replay_file("failing_compact.seq");
  // The schedule: first try, then waits of min_interval * 2^misses capped at
  // backoff_max, each from the failed action's end (ticks of 1 s).
  const Fixture& f = r.fixture();
  const uint64_t mi = f.policy.compaction.min_interval_ns, cap = f.policy.compaction.backoff.max_ns;
  unsigned bound = 0;
  for (uint64_t t = 0, misses = 0; t <= f.h.end_ns; ++bound) {
    ++misses;
    uint64_t wait = mi;
    for (uint64_t i = 0; i < misses && wait < cap; ++i) wait *= 2;
    t += std::min(wait, cap);
  }
  EXPECT_LE(r.done.size(), bound);
  EXPECT_LE(r.done.size(), 16u);  // one hour; a 10 s loop would be 360
  for (const auto& d : r.done) {
    EXPECT_EQ(d.out.result, "error");
    EXPECT_NE(d.out.detail.find("Device or resource busy"), std::string::npos) << d.out.detail;
  }
  EXPECT_EQ(r.engine.nodes()[0].waiting, "backoff");
}

TEST(EngineSequence, FailingPoolBacksOffThenRecovers) {
  Replay r = replay_file("failing_pool.seq");
  for (size_t i = 0; i + 1 < r.done.size(); ++i) {
    EXPECT_EQ(r.done[i].out.result, "error");
    EXPECT_NE(r.done[i].out.detail.find("Operation not permitted"), std::string::npos);
  }
  EXPECT_EQ(r.fake.pool_total(-1, 2048), 100u);
  ASSERT_EQ(r.engine.pools().size(), 1u);
  EXPECT_EQ(r.engine.pools()[0].last_result, "ok");
}

TEST(EngineSequence, DemandByRateAndByP99) {
  Replay r = replay_file("demand.seq");
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0].req.reason, "12 stalls/s of order>=4 > 10 over 10s");
  EXPECT_EQ(r.done[1].req.reason.rfind("stall p99 ", 0), 0u) << r.done[1].req.reason;
  EXPECT_NE(r.done[1].req.reason.find("ms > 5ms over 10s (6 stalls)"), std::string::npos) << r.done[1].req.reason;
}

TEST(EngineSequence, ReserveGoalAndItsInfeasibleCase) {
  Replay r = replay_file("reserve.seq");
  EXPECT_EQ(r.done.front().req.reason, "reserve: 20 free order-9 blocks < 512");
}

TEST(EngineSequence, TheReserveWaitsUntilFreeMemoryStopsFalling) {
  Replay r = replay_file("reserve_settle.seq");
  ASSERT_FALSE(r.done.empty());
  EXPECT_EQ(r.done.front().req.reason.rfind("reserve: ", 0), 0u) << r.done.front().req.reason;
}

TEST(EngineSequence, TheForecastCompactsAheadOfAFallingNode) {
  Replay r = replay_file("forecast.seq");  // method pool: goal = the blocks there are + 30 s at 20/s
  ASSERT_FALSE(r.done.empty());
  EXPECT_EQ(r.done.front().req.goal_blocks, r.done.front().req.have_blocks + 600) << r.done.front().req.reason;
}

TEST(EngineSequence, CpuBudgetDefersTheSecondNode) {
  Fixture f = load_fixture("budget.seq");
  Replay r(f);
  r.run_until(30 * kS);
  EXPECT_EQ(r.engine.budget_used_ns(), 4 * kS);
  bool saw = false;
  for (const auto& n : r.engine.nodes())
    if (n.node == 1) {
      saw = true;
      EXPECT_TRUE(n.hot);
      EXPECT_EQ(n.waiting, "cpu_budget");
    }
  EXPECT_TRUE(saw);
  r.run_until(f.h.end_ns);
  EXPECT_TRUE(r.failures.empty()) << joined(r.failures);
  EXPECT_EQ(joined(r.actions()), joined(f.expected));
}

TEST(EngineSequence, ProactivenessRaiseRestoreHold) {
  Replay r = replay_file("proactiveness.seq");
  EXPECT_EQ(r.done.front().req.reason, "node 0: score 60 > high 40");
  EXPECT_EQ(r.done.front().req.proactiveness, 90u);
  EXPECT_EQ(r.fake.proactiveness, 20u);  // restored
  EXPECT_EQ(r.fake.count_calls("write_proactiveness 90"), 4u);
  EXPECT_EQ(r.fake.count_calls("write_proactiveness 20"), 4u);
  EXPECT_EQ(r.fake.count_calls("compact"), 0u);  // the kernel compacts, not fragd
  EXPECT_FALSE(r.engine.proactiveness_raised());
}

TEST(EngineSequence, PoolGrowShrinkManualGuard) {
  Replay r = replay_file("pool.seq");
  EXPECT_EQ(r.done[0].out.pool_after, 300u);
  EXPECT_EQ(r.done[1].out.pool_after, 100u);
  EXPECT_EQ(r.done[2].out.pool_after, 400u);
  EXPECT_EQ(r.done[3].out.pool_after, 473u);
  // Each grow short of blocks compacted only what it lacked: 100 blocks (0 s), 100 (40 s: the
  // shrink at 20 s freed 200), 73 (60 s: what the guard left room for).
  EXPECT_EQ(r.fake.count_calls("compact 0 until 100"), 2u);
  EXPECT_EQ(r.fake.count_calls("compact 0 until 73"), 1u);
  EXPECT_EQ(r.fake.count_calls("compact 0"), 3u);
  EXPECT_GE(r.fake.mem_available, 1024u * 1024u);  // never below the guard
  ASSERT_EQ(r.engine.pools().size(), 1u);
  EXPECT_TRUE(r.engine.pools()[0].manual);
  EXPECT_EQ(r.engine.pools()[0].target, 800u);
  EXPECT_EQ(r.engine.pools()[0].last_result, "guard");
}

TEST(EngineSequence, DryRunDecidesButWritesNothing) {
  Replay r = replay_file("dry_run.seq");
  EXPECT_EQ(r.fake.count_calls("compact"), 0u);
  EXPECT_EQ(r.fake.count_calls("write_pool"), 0u);
  EXPECT_EQ(r.fake.count_calls("write_proactiveness"), 0u);
  // dry_run teaches nothing: no miss, no floor.
  EXPECT_EQ(r.engine.nodes()[0].misses, 0u);
  EXPECT_FALSE(r.engine.nodes()[0].floor.has_value());
}

TEST(EngineSequence, ObserveModeDecidesNothingAndRefusesManual) {
  Replay r = replay_file("observe.seq");
  EXPECT_TRUE(r.done.empty());
  EXPECT_TRUE(r.fake.calls.empty()) << joined(r.fake.calls);
  ASSERT_EQ(r.manual_errors.size(), 2u);
  for (const auto& e : r.manual_errors) EXPECT_NE(e.find("set `mode: act`"), std::string::npos) << e;
}

TEST(EngineSequence, ManualRequestsFirst) {
  Replay r = replay_file("manual.seq");
  EXPECT_EQ(r.done[1].req.reason, "fragctl compact --node 1");
}

}  // namespace
}  // namespace fragd
