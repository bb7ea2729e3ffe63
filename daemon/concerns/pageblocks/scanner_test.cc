// SPDX-License-Identifier: Apache-2.0
// The start pass's pace (PageblockScanner::start_gap_ns): its rounds are sized from what blocks
// cost before them, so a round can cost more than its share; the pause after it makes up for it,
// and the thread's CPU time stays within full_budget of the time plus the round running now.
#include "concerns/pageblocks/scanner.h"

#include <gtest/gtest.h>

namespace {

using fragd::PageblockScanner;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1'000 * kMs;

TEST(StartPass, ARoundThatCostItsShareIsFollowedByItsShareOfTime) {
  // 0.1% x 60 s = 60 ms a round at 2% of a core: a round every 3 s.
  EXPECT_EQ(PageblockScanner::start_gap_ns(60 * kMs, 0.02), 3 * kS);
  EXPECT_EQ(PageblockScanner::start_gap_ns(90 * kMs, 0.02), 4500 * kMs);
}

TEST(StartPass, AtLeastASecondBetweenRounds) {
  EXPECT_EQ(PageblockScanner::start_gap_ns(0, 0.02), 1 * kS);
  EXPECT_EQ(PageblockScanner::start_gap_ns(1 * kMs, 0.02), 1 * kS);
}

TEST(StartPass, RoundsThatCostMoreThanPlannedStayWithinTheShare) {
  // Each round planned at 60 ms costs a third more than the one before it measured (a busy host:
  // the smoothed cost per block lags); a fixed 3 s period spent 0.555 s in 21.5 s where 2% is 0.43.
  uint64_t t = 0, cpu = 0, round = 60 * kMs;
  for (int i = 0; i < 12; i++) {
    const uint64_t began = t;
    round = round * 4 / 3;
    cpu += round;
    t = began + PageblockScanner::start_gap_ns(round, 0.02);
    // When a round begins, the rounds before it spent at most 2% of the time since the first
    // began: the CPU time at any moment is that share plus the round running.
    EXPECT_LE(cpu - round, static_cast<uint64_t>(0.02 * static_cast<double>(began)) + 1) << "round " << i;
  }
}

}  // namespace
