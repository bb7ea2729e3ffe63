// SPDX-License-Identifier: Apache-2.0
// When allocation counting is on (bpf.allocations), as the daemon's ticks and the wake-up ring
// buffer drive it.
#include <gtest/gtest.h>

#include "concerns/stalls/counting.h"

namespace {

using fragd::CountingSettings;
using fragd::CountingStats;
using fragd::CountingSteer;

constexpr uint64_t kS = 1'000'000'000ULL;

struct Host {
  CountingStats stats;
  CountingSteer steer;
  bool counting;
  explicit Host(CountingSettings s, bool attached = false) : steer(std::move(s), stats), counting(attached) {
    steer.start(0, counting);
  }
  // One tick at `t` seconds: what the steer decides is done (the daemon attaches or detaches).
  std::string tick(uint64_t t, uint64_t entries, const std::map<int, uint64_t>* free = nullptr) {
    auto sw = steer.tick(t * kS, entries, free, counting);
    if (!sw) return "";
    steer.switched(sw->on, t * kS, counting);
    counting = sw->on;
    return (sw->on ? "on: " : "off: ") + sw->why;
  }
};

TEST(CountingSteer, AStallBetweenTicksSwitchesOnUntilTheHoldPassesWithoutOne) {
  Host h({"adaptive", 5 * kS, 0});
  EXPECT_EQ(h.tick(1, 0), "");
  EXPECT_EQ(h.tick(2, 3), "on: stalls in the last 5s");  // entries moved: a stall
  EXPECT_EQ(h.tick(4, 3), "");
  EXPECT_EQ(h.tick(6, 4), "");                            // another one: the hold starts again
  EXPECT_EQ(h.tick(10, 4), "");
  EXPECT_EQ(h.tick(11, 4), "off: no stall for 5s, memory healthy");
  EXPECT_EQ(h.stats.counting_switches["on"], 1u);
  EXPECT_EQ(h.stats.counting_switches["off"], 1u);
  EXPECT_DOUBLE_EQ(h.stats.counting_seconds, 9.0);  // on from 2 s to 11 s
  EXPECT_FALSE(h.stats.counting);
}

TEST(CountingSteer, TheWakeUpSwitchesOnAtOnceAndStartsTheHold) {
  Host h({"adaptive", 5 * kS, 0});
  auto sw = h.steer.stalled(9, 3 * kS, h.counting);
  ASSERT_TRUE(sw);
  EXPECT_TRUE(sw->on);
  EXPECT_EQ(sw->why, "an allocation of order 9 stalled");
  h.steer.switched(true, 3 * kS, false);
  h.counting = true;
  EXPECT_FALSE(h.steer.stalled(9, 4 * kS, h.counting)) << "already on";
  EXPECT_EQ(h.tick(8, 0), "");  // the last stall at 4 s: held until 9 s
  EXPECT_EQ(h.tick(9, 0), "off: no stall for 5s, memory healthy");
}

TEST(CountingSteer, ANodeShortOfFreeBlocksKeepsCountingOn) {
  Host h({"adaptive", 5 * kS, 100});
  const std::map<int, uint64_t> healthy{{0, 500}, {1, 300}}, short_of{{0, 500}, {1, 40}};
  EXPECT_EQ(h.tick(1, 0, &healthy), "");
  EXPECT_EQ(h.tick(2, 0, &short_of), "on: node 1 has 40 free pageblocks (< bpf.adaptive_free_blocks 100)");
  EXPECT_EQ(h.tick(3, 0, nullptr), "off: no stall for 5s, memory healthy") << "no snapshot: no reason";
}

TEST(CountingSteer, ExactAndOffNeverSwitchButExactCountsItsTime) {
  Host exact({"exact", 5 * kS, 100}, true), off({"off", 5 * kS, 100}, false);
  const std::map<int, uint64_t> short_of{{0, 1}};
  for (uint64_t t = 1; t <= 4; t++) {
    EXPECT_EQ(exact.tick(t, t, &short_of), "");
    EXPECT_EQ(off.tick(t, t, &short_of), "");
    EXPECT_FALSE(off.steer.stalled(9, t * kS, false));
  }
  EXPECT_DOUBLE_EQ(exact.stats.counting_seconds, 4.0);
  EXPECT_DOUBLE_EQ(off.stats.counting_seconds, 0.0);
  EXPECT_TRUE(exact.stats.counting_switches.empty());
}

TEST(CountingSteer, AReloadChangesTheHoldAtTheNextDecision) {
  Host h({"adaptive", 60 * kS, 0});
  EXPECT_EQ(h.tick(1, 1), "on: stalls in the last 1m");
  h.steer.set({"adaptive", 2 * kS, 0});
  EXPECT_EQ(h.tick(3, 1), "off: no stall for 2s, memory healthy");
}

}  // namespace
