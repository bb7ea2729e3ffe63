// SPDX-License-Identifier: Apache-2.0
// The pollution ledger as the Daemon drives the pageblocks concern, through its port (stubs
// here: no BPF, no root, the scan off): the blocks are read again only when the ledger's
// counters moved, placed on their nodes by the zone spans, a ledger that cannot be read is
// counted and gives no families, a ledger that is off is never read, and supply says why it
// rests on the free lists alone.
#include "concerns/pageblocks/concern.h"

#include <gtest/gtest.h>

#include "kernel/procfs_fixtures.h"
#include "fragd/concern_fixtures.h"

namespace {

using namespace fragd;

constexpr uint64_t kPageblocksSecond = 1'000'000'000ULL;

struct LedgerHarness {
  fragd::test::TempDir dir;
  Shared sh{Config{}};
  std::unique_ptr<ControlServer> control;
  PollutionSnapshot ledger;  // what the maps hold
  fallback_stats fallbacks{};
  bool broken = false;
  int counter_reads = 0, full_reads = 0;

  std::vector<ZoneSpan> spans;  // node 0 and node 1, 4 GiB each
  LedgerHarness() {
    sh.cfg.scan_pageblocks = false;
    sh.cfg.source = "fragd.yaml";
    ZoneSpan n0, n1;
    n0.node = 0;
    n0.zone = "Normal";
    n0.start_pfn = 0;
    n0.end_pfn = 1 << 20;
    n1.node = 1;
    n1.zone = "Normal";
    n1.start_pfn = 1 << 20;
    n1.end_pfn = 2 << 20;
    spans = {n0, n1};
    control = fragd::test::scratch_control(dir.path());
  }
  // A polluting fallback of `pages` pages into the pageblock holding `pfn`.
  void fallback(uint64_t pfn, uint64_t pages) {
    ledger.counters.events++;
    for (auto& b : ledger.blocks)
      if (b.block == pfn >> 9) {
        b.pages += pages;
        b.events++;
        return;
      }
    PollutedBlock b;
    b.block = pfn >> 9;
    b.pages = pages;
    b.events = 1;
    b.comm = "kworker";
    ledger.blocks.push_back(b);
  }
  std::unique_ptr<PageblocksConcern> concern(bool enabled = true) {
    return std::make_unique<PageblocksConcern>(
        sh, *control,
        PollutionPort{enabled, 9,
                      [this]() -> Result<PollutionCounters> {
                        counter_reads++;
                        if (broken) return make_error("map fallback_stats: EPERM", EPERM);
                        return ledger.counters;
                      },
                      [this]() -> Result<PollutionSnapshot> {
                        full_reads++;
                        if (broken) return make_error("map polluted_blocks: EPERM", EPERM);
                        return ledger;
                      },
                      {[](uint64_t) -> Result<uint64_t> { return uint64_t{0}; },
                       [](uint64_t) -> Result<void> { return {}; }},
                      [this]() -> Result<fallback_stats> {
                        if (broken) return make_error("map fallback_stats: EPERM", EPERM);
                        return fallbacks;
                      }},
        spans);
  }
};

using fragd::test::family;

Families ledger_families(PageblocksConcern& c) {
  Families out;
  c.metrics(widest_plan(1), Tick{}, out);
  return out;
}
// The family's samples summed (those of `node` only, when named).
double ledger_total(const prometheus::MetricFamily& f, const std::string& node = "") {
  double sum = 0;
  for (const auto& m : f.metric) {
    bool match = node.empty();
    for (const auto& l : m.label) match = match || (l.name == "node" && l.value == node);
    if (match) sum += f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
  }
  return sum;
}

TEST(PageblocksConcern, TheLedgerIsReadAgainOnlyWhenItsCountersMovedAndPlacedOnItsNodes) {
  LedgerHarness h;
  ASSERT_TRUE(h.control);
  h.fallback(1000, 4);             // node 0
  h.fallback((1 << 20) + 512, 2);  // node 1
  auto c = h.concern();
  c->tick(Tick{100 * kPageblocksSecond});
  EXPECT_EQ(h.full_reads, 1);
  Families fs = ledger_families(*c);
  const auto* blocks = family(fs, "fragd_polluted_pageblocks");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(ledger_total(*blocks), 2);
  EXPECT_EQ(ledger_total(*family(fs, "fragd_polluted_pages")), 6);
  ASSERT_EQ(blocks->metric.size(), 2u);
  EXPECT_EQ(ledger_total(*blocks, "1"), 1) << "the block at pfn 2^20 + 512 is node 1's";

  c->tick(Tick{101 * kPageblocksSecond});
  EXPECT_EQ(h.full_reads, 1) << "no fallback since: the blocks are not read again";
  EXPECT_EQ(h.counter_reads, 1);
  h.fallback(1000, 8);
  c->tick(Tick{102 * kPageblocksSecond});
  EXPECT_EQ(h.full_reads, 2);
  fs = ledger_families(*c);
  EXPECT_EQ(ledger_total(*family(fs, "fragd_polluted_pages")), 14);
  EXPECT_EQ(ledger_total(*family(fs, "fragd_pollution_events_total")), 3);
}

TEST(PageblocksConcern, ALedgerThatCannotBeReadIsCountedAndGivesNoFamilies) {
  LedgerHarness h;
  ASSERT_TRUE(h.control);
  h.broken = true;
  auto c = h.concern();
  c->tick(Tick{100 * kPageblocksSecond});
  c->tick(Tick{101 * kPageblocksSecond});
  EXPECT_EQ(c->read_errors(), 4u) << "the ledger's and the fallback counters' reads, at each tick";
  EXPECT_EQ(family(ledger_families(*c), "fragd_polluted_pageblocks"), nullptr);
  EXPECT_EQ(family(ledger_families(*c), "fragd_fallback_total"), nullptr);
  h.broken = false;
  h.fallback(1000, 1);
  c->tick(Tick{102 * kPageblocksSecond});
  const Families fs = ledger_families(*c);
  ASSERT_NE(family(fs, "fragd_polluted_pageblocks"), nullptr) << "read again once the maps answer";
  EXPECT_EQ(ledger_total(*family(fs, "fragd_polluted_pageblocks")), 1);
}

TEST(PageblocksConcern, ALedgerThatIsOffIsNeverReadTheFallbackCountersAre) {
  LedgerHarness h;
  ASSERT_TRUE(h.control);
  auto c = h.concern(false);
  EXPECT_EQ(family(ledger_families(*c), "fragd_fallback_total"), nullptr) << "none before a tick read them";
  h.fallbacks.fallbacks[FRAGD_MT_UNMOVABLE][FRAGD_MT_MOVABLE][0] = 7;
  c->tick(Tick{100 * kPageblocksSecond});
  EXPECT_EQ(h.full_reads + h.counter_reads, 0);
  EXPECT_EQ(family(ledger_families(*c), "fragd_polluted_pageblocks"), nullptr);
  const Families fs = ledger_families(*c);
  const auto* fb = family(fs, "fragd_fallback_total");
  ASSERT_NE(fb, nullptr);
  EXPECT_EQ(ledger_total(*fb), 7);
  StatusReply s;
  c->status(s, Tick{});
  EXPECT_FALSE(s.pollution);
}

TEST(PageblocksConcern, SupplyWithTheScanOffRestsOnTheFreeListsAndSaysWhy) {
  LedgerHarness h;
  ASSERT_TRUE(h.control);
  auto c = h.concern();
  c->start_scanner(nullptr);
  EXPECT_TRUE(c->scanned()) << "no scan to wait for";
  MemSnapshot mem;
  mem.zones.push_back(fragd::test::zone_with_free(0, {{9, 6}}));
  MachineFacts facts;
  facts.page_kib = 4;
  SupplyAsk ask;
  ask.order = 9;  // plain free blocks (no hugetlb pool in the snapshot)
  ask.count = 4;
  auto s = c->supply(ask, Tick{0, &mem, &facts});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->free, 6u);
  EXPECT_NE(s->basis.find("pageblocks.scan: false in fragd.yaml"), std::string::npos) << s->basis;
}

}  // namespace
