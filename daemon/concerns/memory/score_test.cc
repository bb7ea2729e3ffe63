// SPDX-License-Identifier: Apache-2.0
// Fragmentation score math against hand-computed values.
#include "concerns/memory/score.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "kernel/procfs.h"

namespace fragd {
namespace {

const std::string kFixtures = FRAGD_FIXTURES_DIR;

ZoneFree make_zone(int node, const std::string& name, std::vector<uint64_t> blocks,
                   uint64_t present) {
  ZoneFree z;
  z.node = node;
  z.zone = name;
  z.free_blocks = std::move(blocks);
  z.present_pages = present;
  return z;
}

// A tiny zone: 100 order-0, 50 order-1, 25 order-2 blocks and one order-9
// block.
//   free pages        = 100*1 + 50*2 + 25*4 + 1*512 = 812
//   in blocks >= 9    = 512
//   score (order 9)   = (812 - 512) * 100 / 812 = 30000 / 812 = 36.9 -> 36
ZoneFree tiny() { return make_zone(0, "Normal", {100, 50, 25, 0, 0, 0, 0, 0, 0, 1, 0}, 1000); }

TEST(ZoneScore, TinyZoneByHand) {
  const ZoneFree z = tiny();
  EXPECT_EQ(buddy_free_pages(z), 812u);
  EXPECT_EQ(buddy_suitable_pages(z, 9), 512u);
  EXPECT_EQ(zone_score(z), 36u);
  EXPECT_EQ(zone_score(z, 9), 36u);
  // order 2: suitable = 25*4 + 512 = 612 -> (812-612)*100/812 = 20000/812 = 24.6 -> 24
  EXPECT_EQ(zone_score(z, 2), 24u);
  // order 0: everything is suitable.
  EXPECT_EQ(zone_score(z, 0), 0u);
  // order 10: nothing is suitable -> 100.
  EXPECT_EQ(zone_score(z, 10), 100u);
  // An order beyond the columns: nothing suitable, like the kernel.
  EXPECT_EQ(zone_score(z, 40), 100u);
}

TEST(ZoneScore, NoFreePagesScoresZero) {
  EXPECT_EQ(zone_score(make_zone(0, "Movable", std::vector<uint64_t>(11, 0), 262144)), 0u);
  EXPECT_EQ(zone_score(make_zone(0, "Device", {}, 0)), 0u);
}

TEST(ZoneScore, AllFreeInHugeBlocksScoresZero) {
  // 4 order-10 blocks: 4096 free pages, all in blocks >= order 9.
  EXPECT_EQ(zone_score(make_zone(0, "Normal", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4}, 4096)), 0u);
}

TEST(ZoneScore, AbsurdCountsDoNotOverflow) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> blocks(kMaxOrders, max);
  const ZoneFree z = make_zone(0, "Normal", blocks, max);
  EXPECT_LE(zone_score(z), 100u);
  EXPECT_EQ(buddy_free_pages(z), max);  // clamped, not wrapped
  for (unsigned v : unusable_index_permille(z)) EXPECT_LE(v, 1000u);
  auto nodes = node_scores({z, z});
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_LE(nodes[0].score, 200u);
}

TEST(UnusableIndex, TinyZoneByHand) {
  // free = 812. Unusable at order o = free pages in blocks below o:
  //   o=0: 0                 -> 0
  //   o=1: 100               -> 100*1000/812 = 123.15 -> 123
  //   o=2: 100+100 = 200     -> 200000/812  = 246.3  -> 246
  //   o=3..9: 300            -> 300000/812  = 369.4  -> 369
  //   o=10: 812              -> 1000
  const std::vector<unsigned> expect = {0, 123, 246, 369, 369, 369, 369, 369, 369, 369, 1000};
  EXPECT_EQ(unusable_index_permille(tiny()), expect);
  const std::vector<double> frac = unusable_index(tiny());
  ASSERT_EQ(frac.size(), 11u);
  EXPECT_DOUBLE_EQ(frac[0], 0.0);
  EXPECT_DOUBLE_EQ(frac[1], 0.123);
  EXPECT_DOUBLE_EQ(frac[2], 0.246);
  EXPECT_DOUBLE_EQ(frac[9], 0.369);
  EXPECT_DOUBLE_EQ(frac[10], 1.0);
}

TEST(UnusableIndex, NoFreeMemoryIsAllUnusableLikeTheKernel) {
  // mm/vmstat.c unusable_free_index(): "No free memory is interpreted as all
  // free memory is unusable" -> 1000.
  const ZoneFree z = make_zone(0, "Movable", std::vector<uint64_t>(11, 0), 262144);
  EXPECT_EQ(unusable_index_permille(z), std::vector<unsigned>(11, 1000));
  EXPECT_EQ(unusable_index(z), std::vector<double>(11, 1.0));
  EXPECT_TRUE(unusable_index(make_zone(0, "Device", {}, 0)).empty());
}

TEST(NodeScore, WeightedByPresentPagesByHand) {
  // Node 0: tiny (present 1000, score 36) and a zone with only order-10
  // blocks (present 3000, score 0). node_present = 4000.
  //   1000 * 36 / 4001 = 36000 / 4001 = 8.99 -> 8;  3000 * 0 / 4001 = 0
  // Node 2: one zone with 10 order-0 pages (score 100), present 512:
  //   512 * 100 / 513 = 99.8 -> 99 (the kernel's "+ 1" keeps a lone fully
  //   fragmented zone at 99, never 100).
  // An unpopulated zone (present 0) adds nothing.
  std::vector<ZoneFree> zones = {
      tiny(),
      make_zone(0, "Movable", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4}, 3000),
      make_zone(0, "Device", {}, 0),
      make_zone(2, "Normal", {10}, 512),
  };
  auto nodes = node_scores(zones);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, 0);
  EXPECT_EQ(nodes[0].present_pages, 4000u);
  EXPECT_EQ(nodes[0].score, 8u);
  EXPECT_EQ(nodes[1].node, 2);
  EXPECT_EQ(nodes[1].present_pages, 512u);
  EXPECT_EQ(nodes[1].score, 99u);
}

TEST(NodeScore, TruncatesPerZoneBeforeSumming) {
  // Two zones, each present 500 and score 100; node_present = 1000.
  // Per zone: 500*100/1001 = 49.95 -> 49; sum 98 (not 1000*100/1001 = 99).
  std::vector<ZoneFree> zones = {make_zone(0, "DMA32", {7}, 500), make_zone(0, "Normal", {9}, 500)};
  auto nodes = node_scores(zones);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].score, 98u);
}

TEST(NodeScore, EmptyInputGivesNoNodes) { EXPECT_TRUE(node_scores({}).empty()); }

// The live recording of this host (node 0: DMA, DMA32, Normal, empty
// Movable and Device).
TEST(FixtureScores, OneNode) {
  auto snap = read_snapshot(kFixtures + "/one_node", "/nonexistent");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  const auto& zones = snap->zones;
  ASSERT_EQ(zones.size(), 5u);

  // DMA: blocks 1@8, 1@9, 3@10: free = 256 + 512 + 3072 = 3840 (= zoneinfo's
  // "pages free"), suitable = 512 + 3072 = 3584,
  // score = 256*100/3840 = 6.67 -> 6.
  EXPECT_EQ(buddy_free_pages(zones[0]), 3840u);
  EXPECT_EQ(buddy_free_pages(zones[0]), zones[0].free_pages);
  EXPECT_EQ(zone_score(zones[0]), 6u);
  // DMA32: free = 1441 + 2*1442 + 4*7 + 8*5 + 16*7 + 32*8 + 64*6 + 128*7
  //             + 256*9 + 512*6 + 1024*742 = 771225,
  // suitable = 3072 + 759808 = 762880, score = 8345*100/771225 = 1.08 -> 1.
  EXPECT_EQ(buddy_free_pages(zones[1]), 771225u);
  EXPECT_EQ(buddy_suitable_pages(zones[1], 9), 762880u);
  EXPECT_EQ(zone_score(zones[1]), 1u);
  // Normal: free = 4351 + 2*5688 + 4*1389 + 8*1101 + 16*600 + 32*383 + 64*304
  //              + 128*203 + 256*133 + 512*72 + 1024*5032 = 5321067,
  // suitable = 36864 + 5152768 = 5189632,
  // score = 131435*100/5321067 = 2.47 -> 2.
  EXPECT_EQ(buddy_free_pages(zones[2]), 5321067u);
  EXPECT_EQ(zone_score(zones[2]), 2u);
  EXPECT_EQ(zone_score(zones[3]), 0u);  // Movable, empty
  EXPECT_EQ(zone_score(zones[4]), 0u);  // Device, empty

  // node_present = 3998 + 782336 + 5505024 = 6291358;
  //   3998*6/6291359 = 0, 782336*1/6291359 = 0, 5505024*2/6291359 = 1.75 -> 1
  auto nodes = node_scores(zones);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].node, 0);
  EXPECT_EQ(nodes[0].present_pages, 6291358u);
  EXPECT_EQ(nodes[0].score, 1u);

  // Normal's unusable index at order 9: blocks below order 9 hold
  // 5321067 - 5189632 = 131435 pages -> 131435000/5321067 = 24.7 -> 0.024;
  // order 10: 5321067 - 5152768 = 168299 -> 168299000/5321067 = 31.6 -> 0.031.
  const auto ui = unusable_index(zones[2]);
  ASSERT_EQ(ui.size(), 11u);
  EXPECT_DOUBLE_EQ(ui[0], 0.0);
  EXPECT_DOUBLE_EQ(ui[9], 0.024);
  EXPECT_DOUBLE_EQ(ui[10], 0.031);
  // DMA at order 10: (3840-3072)*1000/3840 = 200 -> 0.2.
  EXPECT_DOUBLE_EQ(unusable_index(zones[0])[10], 0.2);
}

TEST(FixtureScores, TwoNodes) {
  auto snap = read_snapshot(kFixtures + "/two_nodes", "/nonexistent");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  // Node 1 Normal: blocks 20000 15000 8000 3000 1000 300 100 40 10 3 2
  //   free = 20000 + 30000 + 32000 + 24000 + 16000 + 9600 + 6400 + 5120
  //        + 2560 + 1536 + 2048 = 149264 (= its zoneinfo "pages free")
  //   suitable = 1536 + 2048 = 3584
  //   zone score = 145680*100/149264 = 97.6 -> 97
  //   node score = 4194304*97/(4194304 + 1) = 96.99998 -> 96
  const ZoneFree* n1 = nullptr;
  for (const ZoneFree& z : snap->zones)
    if (z.node == 1 && z.zone == "Normal") n1 = &z;
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(buddy_free_pages(*n1), 149264u);
  EXPECT_EQ(buddy_free_pages(*n1), n1->free_pages);
  EXPECT_EQ(zone_score(*n1), 97u);
  // order 1: 20000*1000/149264 = 133.99 -> 133; order 10: 147216000/149264 = 986.3 -> 986
  const auto ui = unusable_index_permille(*n1);
  ASSERT_EQ(ui.size(), 11u);
  EXPECT_EQ(ui[1], 133u);
  EXPECT_EQ(ui[10], 986u);

  auto nodes = node_scores(snap->zones);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, 0);
  EXPECT_EQ(nodes[0].score, 1u);  // as in OneNode
  EXPECT_EQ(nodes[0].present_pages, 6291358u);
  EXPECT_EQ(nodes[1].node, 1);
  EXPECT_EQ(nodes[1].present_pages, 4194304u);
  EXPECT_EQ(nodes[1].score, 96u);
}

TEST(FixtureScores, GarbledStillScores) {
  auto snap = read_snapshot(kFixtures + "/garbled", "/nonexistent");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  // Node 0: DMA (present 3998, score 6), DMA32 (present unreadable -> 0),
  // Normal (no buddyinfo row -> 0 free -> score 0), Movable (present 262144,
  // zero free pages -> score 0). node_present = 3998 + 5505024 + 262144 =
  // 5771166; 3998*6/5771167 = 0.
  auto nodes = node_scores(snap->zones);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].present_pages, 5771166u);
  EXPECT_EQ(nodes[0].score, 0u);
  EXPECT_EQ(nodes[1].node, 1);
  EXPECT_EQ(nodes[1].present_pages, 0u);
  EXPECT_EQ(nodes[1].score, 0u);
}

// The pageblock scan runs again only when memory changed enough to show something new.
MemSnapshot snap_of(std::vector<ZoneFree> zones) {
  MemSnapshot m;
  m.zones = std::move(zones);
  return m;
}

TEST(MemoryChanged, SameOrOrderZeroChurnIsNoChange) {
  // 100000 present pages: 1% is 1000 pages.
  auto a = snap_of({make_zone(0, "Normal", {500, 100, 0, 0, 0, 0, 0, 0, 0, 40, 10}, 100000)});
  EXPECT_FALSE(memory_changed(a, a, 9));
  auto b = a;
  b.zones[0].free_blocks[0] += 300;  // 300 pages freed and allocated again: idle churn
  EXPECT_FALSE(memory_changed(a, b, 9));
}

TEST(MemoryChanged, FreeBlocksOrFreePagesMoveByOnePercent) {
  auto a = snap_of({make_zone(0, "Normal", {500, 100, 0, 0, 0, 0, 0, 0, 0, 40, 10}, 100000)});
  auto b = a;
  b.zones[0].free_blocks[9] -= 2;  // 1024 pages of free 2 MiB blocks gone
  EXPECT_TRUE(memory_changed(a, b, 9));
  auto c = a;
  c.zones[0].free_blocks[0] += 1000;  // 1000 pages freed in small blocks
  EXPECT_TRUE(memory_changed(a, c, 9));
  auto d = a;
  d.zones[0].free_blocks[9] -= 1;  // 512 pages: under 1%
  EXPECT_FALSE(memory_changed(a, d, 9));
}

TEST(MemoryChanged, PageblockTypesOrZonesChange) {
  // 100000 present pages: 1% is 1000 pages, two pageblocks of 512.
  auto a = snap_of({make_zone(0, "Normal", {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 100000)});
  a.zones[0].pageblocks = {{"Movable", 190}, {"Unmovable", 5}};
  auto b = a;
  b.zones[0].pageblocks["Movable"] = 189;  // one movable block claimed by an unmovable allocation:
  b.zones[0].pageblocks["Unmovable"] = 6;  // not worth a scan
  EXPECT_FALSE(memory_changed(a, b, 9));
  b.zones[0].pageblocks["Movable"] = 188;  // two: 1024 pages, 1% of the zone
  b.zones[0].pageblocks["Unmovable"] = 7;
  EXPECT_TRUE(memory_changed(a, b, 9));
  auto g = a;
  g.zones[0].pageblocks.erase("Unmovable");  // a type gone from the list counts too
  g.zones[0].pageblocks["Isolate"] = 5;
  EXPECT_TRUE(memory_changed(a, g, 9));
  auto c = a;
  c.zones.push_back(make_zone(1, "Normal", {}, 100000));  // a node came online
  EXPECT_TRUE(memory_changed(a, c, 9));
}

TEST(MemoryChanged, SaysWhereAndWhatMoved) {
  auto a = snap_of({make_zone(0, "DMA32", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100}, 100000)});
  auto b = a;
  b.zones[0].free_blocks[10] -= 16;  // 32 blocks of 2 MiB held off the free lists
  EXPECT_EQ(memory_change(a, b, 9), "node 0 DMA32: free pages in blocks of order >= 9 fell by 16384, 1000 pages "
                                    "(1% of the zone) or more is a change");
  EXPECT_EQ(memory_change(a, a, 9), std::nullopt);
}

// A scan starts on a change seen at two ticks in a row: free pages held for one tick only (free
// page reporting's batch) and back at the next are no change, and leave the reference as it was.
TEST(LastingChange, AChangeAtTwoTicksInARowNotAtOne) {
  auto quiet = snap_of({make_zone(0, "DMA32", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100}, 100000)});
  auto held = quiet;
  held.zones[0].free_blocks[10] -= 16;
  LastingChange w;
  EXPECT_EQ(w.see(quiet, 9), "the first snapshot");
  EXPECT_EQ(w.see(quiet, 9), std::nullopt);
  EXPECT_EQ(w.see(held, 9), std::nullopt) << "one tick is no change yet";
  EXPECT_EQ(w.see(quiet, 9), std::nullopt) << "back: nothing changed";
  EXPECT_EQ(w.see(held, 9), std::nullopt);
  EXPECT_EQ(w.see(quiet, 9), std::nullopt);
  EXPECT_EQ(w.see(held, 9), std::nullopt);
  auto r = w.see(held, 9);  // the second tick in a row
  ASSERT_TRUE(r);
  EXPECT_NE(r->find("DMA32"), std::string::npos) << *r;
  EXPECT_EQ(w.see(held, 9), std::nullopt) << "`held` is the reference now";
  EXPECT_EQ(w.see(quiet, 9), std::nullopt);
  EXPECT_TRUE(w.see(quiet, 9)) << "and a lasting return to `quiet` is a change again";
}

// Kernels of 16 KiB and 64 KiB pages (arm64 builds; tests/fixtures/arm64_16k, arm64_64k): more
// orders on the free lists, a larger pageblock, and the score taken at their PMD order (11, 13),
// as the kernel's COMPACTION_HPAGE_ORDER is.
TEST(FixtureScores, KernelsOfLargerPages) {
  EXPECT_EQ(compaction_hpage_order(4), 9u);
  EXPECT_EQ(compaction_hpage_order(16), 11u);
  EXPECT_EQ(compaction_hpage_order(64), 13u);

  auto slurp_file = [](const std::string& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  auto k64 = parse_buddyinfo(slurp_file(kFixtures + "/arm64_64k/buddyinfo"), "buddyinfo");
  ASSERT_TRUE(k64.ok()) << k64.error().message;
  ASSERT_EQ(k64->size(), 2u);
  ASSERT_EQ((*k64)[0].free_blocks.size(), 14u);  // orders 0..13
  // DMA: free = 12 + 2*8 + 4*6 + 8*5 + 16*3 + 32*2 + 64*2 + 128 + 256 + 1024 + 2048 + 8192*3 = 28364,
  // suitable at order 13 = 24576: score 3788*100/28364 = 13.4 -> 13. At 4 KiB's order 9 it would
  // read 2 (suitable 27648).
  EXPECT_EQ(buddy_free_pages((*k64)[0]), 28364u);
  EXPECT_EQ(zone_score((*k64)[0], compaction_hpage_order(64)), 13u);
  EXPECT_EQ(zone_score((*k64)[0], 9), 2u);
  // Normal: free 244620, suitable 28 * 8192 = 229376: 15244*100/244620 = 6.2 -> 6.
  EXPECT_EQ(buddy_free_pages((*k64)[1]), 244620u);
  EXPECT_EQ(zone_score((*k64)[1], compaction_hpage_order(64)), 6u);
  unsigned pb = 0;
  ASSERT_TRUE(parse_pagetypeinfo(slurp_file(kFixtures + "/arm64_64k/pagetypeinfo"), "pagetypeinfo", *k64, nullptr, &pb).ok());
  EXPECT_EQ(pb, 13u);

  auto k16 = parse_buddyinfo(slurp_file(kFixtures + "/arm64_16k/buddyinfo"), "buddyinfo");
  ASSERT_TRUE(k16.ok()) << k16.error().message;
  ASSERT_EQ((*k16)[0].free_blocks.size(), 12u);  // orders 0..11
  // DMA: free 23257, suitable at order 11 = 20480: 2777*100/23257 = 11.9 -> 11 (0 at order 9).
  EXPECT_EQ(buddy_free_pages((*k16)[0]), 23257u);
  EXPECT_EQ(zone_score((*k16)[0], compaction_hpage_order(16)), 11u);
  EXPECT_EQ(zone_score((*k16)[0], 9), 0u);
  ASSERT_TRUE(parse_pagetypeinfo(slurp_file(kFixtures + "/arm64_16k/pagetypeinfo"), "pagetypeinfo", *k16, nullptr, &pb).ok());
  EXPECT_EQ(pb, 11u);
}

}  // namespace
}  // namespace fragd
