// SPDX-License-Identifier: Apache-2.0
// The collector's tick schedule: lateness and missed ticks from timer expirations.
#include "fragd/tick_clock.h"

#include <gtest/gtest.h>

namespace {

constexpr uint64_t kTick = 1'000'000'000;  // 1 s

TEST(TickClock, OnTimeTicksAreNeitherLateNorMissed) {
  fragd::TickClock t(0, kTick);
  for (uint64_t i = 1; i <= 5; i++) t.fired(i * kTick, 1);
  EXPECT_EQ(t.late_max_seconds(), 0.0);
  EXPECT_EQ(t.missed(), 0u);
  EXPECT_EQ(t.due_ns(), 6 * kTick);
}

TEST(TickClock, ALateTickKeepsTheLargestDelay) {
  fragd::TickClock t(0, kTick);
  t.fired(kTick + 250'000'000, 1);      // 250 ms late
  t.fired(2 * kTick + 100'000'000, 1);  // 100 ms late: the maximum stays
  EXPECT_DOUBLE_EQ(t.late_max_seconds(), 0.25);
  EXPECT_EQ(t.missed(), 0u);
  EXPECT_EQ(t.due_ns(), 3 * kTick);  // the schedule does not drift with the delays
}

TEST(TickClock, ALoopBusyForTicksCountsThemMissed) {
  fragd::TickClock t(0, kTick);
  t.fired(3 * kTick + 500'000'000, 3);  // read 2.5 s after the first due time: 3 expirations, 1 tick
  EXPECT_EQ(t.missed(), 2u);
  EXPECT_DOUBLE_EQ(t.late_max_seconds(), 2.5);
  EXPECT_EQ(t.due_ns(), 4 * kTick);
  t.fired(4 * kTick, 0);  // a spurious wake-up changes nothing
  EXPECT_EQ(t.missed(), 2u);
  EXPECT_EQ(t.due_ns(), 4 * kTick);
}

}  // namespace
