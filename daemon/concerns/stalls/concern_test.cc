// SPDX-License-Identifier: Apache-2.0
// Allocation counting and the hist answer as the Daemon drives the stalls concern, through its
// BPF port (stubs here: no BPF, no root): a stall seen at a tick attaches the counting program,
// adaptive_hold without one detaches it and arms the wake-up again, a failed attach is warned
// about and tried again at the next tick, and `hist` answers from the maps as they are now.
#include "concerns/stalls/concern.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "kernel/procfs_fixtures.h"
#include "fragd/concern_fixtures.h"
#include "protocol/hist.h"

namespace {

using namespace fragd;

constexpr uint64_t kStallsSecond = 1'000'000'000ULL;

struct StallsHarness {
  fragd::test::TempDir dir;
  Shared sh{Config{}};
  std::unique_ptr<ControlServer> control;
  bool counting = false, refuse = false;
  std::vector<bool> switches;  // every set_counting call
  int armed = 0;
  StallsSnapshot maps;  // what its maps hold
  int reads = 0, hist_reads = 0;
  bool unreadable = false;

  StallsHarness() {
    sh.cfg.allocations = "adaptive";
    sh.cfg.adaptive_hold_ns = 15 * kStallsSecond;
    sh.cfg.min_order = 1;
    control = fragd::test::scratch_control(dir.path());
  }
  std::unique_ptr<StallsConcern> concern() {
    return std::make_unique<StallsConcern>(
        sh, *control,
        StallsPort{-1, -1, [this] { return counting; },
                   [this](bool on) -> Result<void> {
                     switches.push_back(on);
                     if (refuse) return make_error("cannot attach page_alloc_btf: EPERM", EPERM);
                     counting = on;
                     return {};
                   },
                   [this] { armed++; }, 9, StallsMapFds{},
                   [this](const StallsMapFds&, StallsSnapshot& s, HistWatch& due) -> Result<void> {
                     reads++;
                     if (unreadable) return make_error("cannot read map alloc_stats: EBADF", EBADF);
                     s.alloc = maps.alloc;
                     uint64_t ends = 0;
                     for (unsigned o = 0; o < FRAGD_NR_ORDERS; o++) ends += maps.alloc.allocs[o][FRAGD_OUTCOME_STALLED];
                     if (due.due(ends)) hist_reads++, s.stall = maps.stall;
                     return {};
                   }},
        100 * kStallsSecond);
  }
  void stall() { maps.alloc.direct_entries[9][FRAGD_PHASE_COMPACTION]++; }
  Tick at(uint64_t now) const { return Tick{now}; }
};

// fragd_allocation_counting_switches_total{to}, as the concern counted them.
uint64_t switches_to(const StallsConcern& c, const std::string& to) {
  const auto& sw = c.counting_stats().counting_switches;
  auto it = sw.find(to);
  return it == sw.end() ? 0 : it->second;
}

TEST(StallsConcern, AStallAttachesCountingAndAdaptiveHoldWithoutOneDetachesIt) {
  StallsHarness h;
  ASSERT_TRUE(h.control);
  auto c = h.concern();
  EXPECT_EQ(h.armed, 1) << "adaptive: the first stall is to wake fragd";
  c->tick(h.at(101 * kStallsSecond));
  EXPECT_TRUE(h.switches.empty()) << "no stall, nothing to switch";
  h.stall();
  c->tick(h.at(102 * kStallsSecond));
  ASSERT_EQ(h.switches, std::vector<bool>{true});
  StatusReply s;
  c->status(s, h.at(0));
  ASSERT_TRUE(s.allocations);
  EXPECT_TRUE(s.allocations->counting);
  c->tick(h.at(110 * kStallsSecond));
  EXPECT_EQ(h.switches.size(), 1u) << "8 s without a stall: still within adaptive_hold (15 s)";
  h.stall();
  c->tick(h.at(112 * kStallsSecond));  // a stall while on: the hold runs from here
  c->tick(h.at(120 * kStallsSecond));
  EXPECT_EQ(h.switches.size(), 1u) << "the hold runs from the last stall, not the first";
  c->tick(h.at(128 * kStallsSecond));
  ASSERT_EQ(h.switches, (std::vector<bool>{true, false}));
  EXPECT_FALSE(h.counting);
  EXPECT_EQ(h.armed, 2) << "off again: the next stall is to wake fragd";
  EXPECT_EQ(switches_to(*c, "on"), 1u);
  EXPECT_EQ(switches_to(*c, "off"), 1u);
}

TEST(StallsConcern, AnAttachThatFailsIsTriedAgainAtTheNextTick) {
  StallsHarness h;
  ASSERT_TRUE(h.control);
  auto c = h.concern();
  h.refuse = true;
  h.stall();
  c->tick(h.at(101 * kStallsSecond));
  EXPECT_FALSE(h.counting);
  EXPECT_EQ(switches_to(*c, "on"), 0u) << "a refused attach is not a switch";
  h.refuse = false;
  c->tick(h.at(102 * kStallsSecond));
  EXPECT_EQ(h.switches, (std::vector<bool>{true, true})) << "still wanted after the refusal: tried again";
  EXPECT_TRUE(h.counting);
}

TEST(StallsConcern, ExactModeCountsFromTheStartAndOffNever) {
  for (const std::string mode : {"exact", "off"}) {
    StallsHarness h;
    ASSERT_TRUE(h.control);
    h.sh.cfg.allocations = mode;
    h.counting = mode == "exact";  // as the programs were attached at load
    auto c = h.concern();
    EXPECT_EQ(h.armed, 0) << mode << ": no wake-up to wait for";
    h.stall();
    c->tick(h.at(101 * kStallsSecond));
    c->tick(h.at(200 * kStallsSecond));
    EXPECT_TRUE(h.switches.empty()) << mode;
    EXPECT_EQ(h.counting, mode == "exact");
  }
}

// Each tick reads the concern's maps into the snapshot the others get in their Tick; the
// histograms only when a stall ended since. A read that fails is counted and keeps the last.
TEST(StallsConcern, ATickReadsItsMapsAndTheHistogramsWhenAStallEnded) {
  StallsHarness h;
  ASSERT_TRUE(h.control);
  auto c = h.concern();
  EXPECT_EQ(c->snapshot(), nullptr) << "nothing read before the first tick";
  h.maps.alloc.allocs[9][FRAGD_OUTCOME_FAST] = 3;
  c->tick(h.at(101 * kStallsSecond));
  ASSERT_NE(c->snapshot(), nullptr);
  EXPECT_EQ(c->snapshot()->alloc.allocs[9][FRAGD_OUTCOME_FAST], 3u);
  EXPECT_EQ(h.hist_reads, 1) << "the first read reads the histograms";
  c->tick(h.at(102 * kStallsSecond));
  c->tick(h.at(103 * kStallsSecond));
  EXPECT_EQ(h.reads, 3);
  EXPECT_EQ(h.hist_reads, 1) << "no stall ended: the counters only";
  h.maps.alloc.allocs[9][FRAGD_OUTCOME_STALLED] = 1;
  h.maps.stall[9][FRAGD_RESULT_SUCCESS].add(2'000'000);
  c->tick(h.at(104 * kStallsSecond));
  EXPECT_EQ(h.hist_reads, 2);
  EXPECT_EQ(c->snapshot()->stall[9][FRAGD_RESULT_SUCCESS].bucket_total(), 1u);
  Families out;
  c->metrics(series_plan(h.sh.cfg.metrics, 1, 9), h.at(104 * kStallsSecond), out);
  EXPECT_NE(fragd::test::family(out, "fragd_alloc_stall_seconds"), nullptr);
  h.unreadable = true;
  c->tick(h.at(105 * kStallsSecond));
  EXPECT_EQ(c->read_errors(), 1u);
  ASSERT_NE(c->snapshot(), nullptr) << "a failed read keeps the last";
  EXPECT_EQ(c->snapshot()->alloc.allocs[9][FRAGD_OUTCOME_STALLED], 1u);
}

// The real read on a descriptor that is no map fails naming it, and makes the histograms due.
TEST(StallsConcern, ReadStallsFailsOnABadDescriptorAndReadsTheHistogramsAfter) {
  StallsSnapshot s;
  HistWatch due;
  due.due(0);
  ASSERT_FALSE(due.due(0));
  auto r = read_stalls(StallsMapFds{}, s, due);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("alloc_stats"), std::string::npos) << r.error().message;
  EXPECT_TRUE(due.due(0));
}

TEST(StallsConcern, TheHistAnswerIsTheMapsAsTheyAreNow) {
  StallsHarness h;
  ASSERT_TRUE(h.control);
  auto c = h.concern();
  h.maps.alloc.allocs[9][FRAGD_OUTCOME_FAST] = 5;
  h.maps.alloc.allocs[9][FRAGD_OUTCOME_STALLED] = 2;
  h.maps.alloc.allocs[9][FRAGD_OUTCOME_FAILED] = 1;
  h.maps.alloc.phase_ns[9][FRAGD_PHASE_COMPACTION] = 7000;
  ControlRequest req;
  req.cmd = Command::Hist;
  const auto j = c->answer(req, Reader::Root, 0, h.at(0));
  ASSERT_TRUE(j);
  const HistSnapshot hist = j->get<HistSnapshot>();
  const OrderStats* o9 = hist.find(9);
  ASSERT_NE(o9, nullptr) << j->dump();
  EXPECT_EQ(o9->fast, 5u);
  EXPECT_EQ(o9->stalled, 2u);
  EXPECT_EQ(o9->failed, 1u);
  EXPECT_EQ(o9->compaction_ns, 7000u);
  EXPECT_EQ(hist.counting_mode, "adaptive");
  EXPECT_EQ(hist.counting, std::optional<bool>(false));
  EXPECT_EQ(hist.uptime_ns > 0, true);
}

}  // namespace
