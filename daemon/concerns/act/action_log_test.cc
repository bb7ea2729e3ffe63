// SPDX-License-Identifier: Apache-2.0
// The finished actions fragd keeps, counts and reports.
#include <gtest/gtest.h>

#include "concerns/act/action_log.h"

namespace {

using namespace fragd;

ActionOutcome outcome(uint64_t id, ActionKind kind, const char* result, int node = 0) {
  ActionOutcome o;
  o.req.id = id;
  o.req.kind = kind;
  o.req.node = node;
  o.req.reason = "test";
  o.result = result;
  o.start_ns = 1'000'000'000;
  o.end_ns = 3'000'000'000;
  o.pages_migrated = 10;
  o.score_before = 80;
  o.score_after = 30;
  return o;
}

TEST(ActionLog, CountsEachOutcomeAndItsStepsButNotTheTimeOfOnesThatDidNothing) {
  ActionLog log;
  ActionOutcome a = outcome(1, ActionKind::Compact, "ok");
  a.steps.push_back({.step = "compact"});
  log.record(a);
  log.record(outcome(2, ActionKind::Compact, "dry_run"));
  log.record(outcome(3, ActionKind::Compact, "cut", 1));
  const ActStats& s = log.stats();
  EXPECT_EQ((s.actions.at({"compact", 0, "ok"})), 1u);
  EXPECT_EQ((s.actions.at({"compact", 0, "dry_run"})), 1u);
  EXPECT_EQ((s.actions.at({"compact", 1, "cut"})), 1u);
  EXPECT_EQ(s.durations.at("compact").count, 2u);  // dry_run took no time
  EXPECT_EQ(s.pages_migrated.at("compact"), 20u);
  EXPECT_EQ(s.steps.at("compact"), 1u);
  EXPECT_EQ(s.last_score.at(1), std::make_pair(80, 30));
  EXPECT_EQ(log.cuts(), 1u);
}

TEST(ActionLog, AnswersWhereAnActionIs) {
  ActionLog log;
  log.queued(7);
  log.queued(8);
  ActionRequest running;
  running.id = 8;
  EXPECT_EQ(log.state(7, running, 5'000'000'000, 50'000'000'000)->state, ActionState::Queued);
  EXPECT_EQ(log.state(8, running, 5'000'000'000, 50'000'000'000)->state, ActionState::Running);
  log.record(outcome(7, ActionKind::Compact, "ok"));
  auto done = log.state(7, running, 5'000'000'000, 50'000'000'000);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, ActionState::Done);
  ASSERT_TRUE(done->outcome);
  EXPECT_EQ(done->outcome->start_unix_ns, 46'000'000'000u);  // began 4 s before "now"
  EXPECT_EQ(done->outcome->duration_ns, 2'000'000'000u);
  auto unknown = log.state(99, std::nullopt, 0, 0);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "unknown action id 99");
}

TEST(ActionLog, KeepsTheLastOnesOldestFirst) {
  ActionLog log;
  for (uint64_t id = 1; id <= ActionLog::kKept + 5; id++) log.record(outcome(id, ActionKind::Pool, "ok", -1));
  EXPECT_FALSE(log.state(5, std::nullopt, 0, 0)) << "dropped";
  EXPECT_TRUE(log.state(6, std::nullopt, 0, 0));
  const auto last = log.last(3, 0, 0);
  ASSERT_EQ(last.size(), 3u);
  EXPECT_EQ(last[0].id, ActionLog::kKept + 3);
  EXPECT_EQ(last[2].id, ActionLog::kKept + 5);
  EXPECT_EQ(log.last(1000, 0, 0).size(), ActionLog::kKept);
}

TEST(ActionLog, TheLogLineSaysWhatTheActionDid) {
  ActionOutcome o = outcome(4, ActionKind::Compact, "ok", 1);
  o.blocks_before = 2;
  o.blocks_after = 50;
  EXPECT_EQ(outcome_line(o),
            "action 4 compact node 1 [score: test]: ok, score 80 -> 30, free blocks 2 -> 50, 10 pages migrated, 2.00 s");
}

}  // namespace
