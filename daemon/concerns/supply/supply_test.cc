// SPDX-License-Identifier: Apache-2.0
// What a node can supply (concerns/supply): the verdict, free, makeable with its interval, the
// pages compaction would migrate, on hand-built free lists, pools and scans.
#include "concerns/supply/supply.h"

#include <gtest/gtest.h>

namespace fragd {
namespace {

// A zone of `present` pages with `free9` free order-9 blocks and `free10` order-10 ones, plus
// `loose` free pages in smaller blocks (as order-0 pages).
ZoneFree zone(int node, uint64_t present, uint64_t free9, uint64_t free10, uint64_t loose) {
  ZoneFree z;
  z.node = node;
  z.zone = "Normal";
  z.present_pages = present;
  z.free_blocks.assign(11, 0);
  z.free_blocks[0] = loose;
  z.free_blocks[9] = free9;
  z.free_blocks[10] = free10;
  z.free_pages = loose + free9 * 512 + free10 * 1024;
  return z;
}

// The scan of that zone: `movable` movable blocks `used` pages each, makeable `makeable` (ci lo..hi).
ZoneScan scanned(int node, uint64_t movable, uint16_t used, uint64_t makeable, Bounds ci, uint64_t reserve = 0) {
  ZoneScan z;
  z.node = node;
  z.zone = "Normal";
  z.start_pfn = 0;
  z.end_pfn = 1 << 20;
  z.reserve_pages = reserve;
  z.counts[static_cast<size_t>(BlockClass::Movable)] = movable;
  z.movable_sorted.assign(movable, used);
  z.hugepages_compaction = makeable;
  z.compaction_ci = ci;
  return z;
}

struct Host {
  MemSnapshot mem;
  ScanResult scan;
  SupplyInputs in() {
    SupplyInputs i;
    i.mem = &mem;
    i.scan = &scan;
    i.scan_age_ns = 3'000'000'000;
    return i;
  }
};

Host one_node() {
  Host h;
  h.mem.pageblock_order = 9;
  h.mem.zones = {zone(0, 1 << 20, 100, 10, 5000)};
  h.mem.hugepages = {{0, 2048, 30, 20, 0}, {0, 1048576, 0, 0, 0}};
  h.scan.pageblock_order = 9;
  h.scan.map_oldest_boot_ns = 1;
  h.scan.zones = {scanned(0, 400, 100, 300, {250, 350})};
  return h;
}

TEST(Supply, ReadyFromThePoolAndTheFreeLists) {
  Host h = one_node();
  auto s = estimate_supply({2048, std::nullopt, 140, -1}, h.in());
  ASSERT_TRUE(s.ok()) << s.error().message;
  // 20 free in the pool + 100 order-9 + 10 order-10 (2 each) = 140.
  EXPECT_EQ(s->free, 140u);
  EXPECT_EQ(s->verdict, Verdict::Ready);
  EXPECT_EQ(verdict_exit_status(s->verdict), 0);
  EXPECT_EQ(s->pages_to_migrate, 0u);
  EXPECT_FALSE(s->node.has_value());
  EXPECT_DOUBLE_EQ(s->age_seconds, 3.0);
}

TEST(Supply, MakeableWithItsIntervalAndCost) {
  Host h = one_node();
  auto s = estimate_supply({2048, std::nullopt, 200, 0}, h.in());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->verdict, Verdict::Makeable);
  EXPECT_EQ(verdict_exit_status(s->verdict), 3);
  EXPECT_EQ(s->makeable, 300u);
  EXPECT_EQ(s->interval.lo, 140u + 250u);
  EXPECT_EQ(s->interval.hi, 140u + 350u);
  // 60 more blocks, the lightest first: 60 x 100 pages.
  EXPECT_EQ(s->pages_to_migrate, 6000u);
  ASSERT_EQ(s->nodes.size(), 1u);
  EXPECT_EQ(s->nodes[0].pool_free, 20u);
  EXPECT_EQ(s->nodes[0].free_blocks, 120u);
}

TEST(Supply, NoBeyondWhatCompactionCouldMake) {
  Host h = one_node();
  auto s = estimate_supply({2048, std::nullopt, 441, -1}, h.in());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->verdict, Verdict::No);
  EXPECT_EQ(verdict_exit_status(s->verdict), 4);
  EXPECT_NE(s->reason.find("not possible"), std::string::npos) << s->reason;
  // More pages than the node's memory holds: said so.
  auto huge = estimate_supply({2048, std::nullopt, 5000, -1}, h.in());
  ASSERT_TRUE(huge.ok());
  EXPECT_NE(huge->reason.find("holds 2048 such pages in all"), std::string::npos) << huge->reason;
}

TEST(Supply, AnOrderCountsSmallerAndLargerBlocks) {
  Host h = one_node();
  // Order 4: every order-9 block is 32 of them, order-10 64; compaction's blocks 32 each.
  auto s = estimate_supply({0, 4u, 100, -1}, h.in());
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->hugetlb);
  EXPECT_EQ(s->size_kib, 64u);
  EXPECT_EQ(s->free, 100u * 32 + 10u * 64);
  EXPECT_EQ(s->makeable, 300u * 32);
  // Order 10: order-10 blocks only; two 2 MiB blocks each.
  auto big = estimate_supply({0, 10u, 100, -1}, h.in());
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->free, 10u);
  EXPECT_EQ(big->makeable, 150u);
}

TEST(Supply, TheZoneReserveIsNotFree) {
  Host h = one_node();
  // Only 10 blocks' worth of free pages above the reserve.
  h.scan.zones[0].reserve_pages = h.mem.zones[0].free_pages - 10 * 512;
  auto s = estimate_supply({2048, std::nullopt, 1, -1}, h.in());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->nodes[0].free_blocks, 10u);
}

TEST(Supply, Gigantic) {
  Host h = one_node();
  h.scan.zones[0].gigantic_free = 2;
  h.scan.zones[0].gigantic_migration = 3;
  h.scan.zones[0].gigantic_used = {1000, 2000, 3000};
  auto s = estimate_supply({1048576, std::nullopt, 4, -1}, h.in());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->order, 18u);
  EXPECT_EQ(s->free, 2u);
  EXPECT_EQ(s->makeable, 3u);
  EXPECT_EQ(s->verdict, Verdict::Makeable);
  EXPECT_EQ(s->pages_to_migrate, 3000u);  // the two least used ranges
  // While some pageblock was never read the map's ranges are a lower bound.
  h.scan.map_oldest_boot_ns = 0;
  auto partial = estimate_supply({1048576, std::nullopt, 4, -1}, h.in());
  ASSERT_TRUE(partial.ok());
  EXPECT_GT(partial->interval.hi, partial->free + partial->makeable);
  EXPECT_NE(partial->basis.find("lower bound"), std::string::npos);
}

TEST(Supply, WithoutAScanMakeableIsTheMostTheFreePagesHold) {
  Host h = one_node();
  SupplyInputs in = h.in();
  in.scan = nullptr;
  in.no_scan = "the pageblock scan is off";
  auto s = estimate_supply({2048, std::nullopt, 1, -1}, in);
  ASSERT_TRUE(s.ok());
  // 5000 loose pages hold 9 more blocks at most.
  EXPECT_EQ(s->makeable, 9u);
  EXPECT_EQ(s->interval.lo, s->free);
  EXPECT_NE(s->basis.find("pageblock scan is off"), std::string::npos) << s->basis;
}

TEST(Supply, TwoNodesAndOne) {
  Host h = one_node();
  h.mem.zones.push_back(zone(1, 1 << 20, 5, 0, 0));
  h.mem.hugepages.push_back({1, 2048, 0, 0, 0});
  h.scan.zones.push_back(scanned(1, 50, 200, 50, {40, 60}));
  auto all = estimate_supply({2048, std::nullopt, 1, -1}, h.in());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->nodes.size(), 2u);
  EXPECT_EQ(all->free, 145u);
  auto one = estimate_supply({2048, std::nullopt, 10, 1}, h.in());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->free, 5u);
  EXPECT_EQ(one->verdict, Verdict::Makeable);
  EXPECT_EQ(*one->node, 1);
  EXPECT_EQ(one->pages_to_migrate, 5u * 200);
}

TEST(Supply, BadAsksNameWhatThisMachineOffers) {
  Host h = one_node();
  auto size = estimate_supply({4096, std::nullopt, 1, -1}, h.in());
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().message.find("its sizes: 2 MiB, 1 GiB"), std::string::npos) << size.error().message;
  auto order = estimate_supply({0, 12u, 1, -1}, h.in());
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.error().message.find("orders 1..10"), std::string::npos) << order.error().message;
  auto node = estimate_supply({2048, std::nullopt, 1, 4}, h.in());
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.error().message.find("node 4 has no memory"), std::string::npos) << node.error().message;
  auto zero = estimate_supply({2048, std::nullopt, 0, -1}, h.in());
  EXPECT_FALSE(zero.ok());
  SupplyInputs none;
  EXPECT_FALSE(estimate_supply({2048, std::nullopt, 1, -1}, none).ok());
}

TEST(Supply, MigrateCostScalesASample) {
  ZoneScan z;
  z.counts[static_cast<size_t>(BlockClass::Movable)] = 40;
  z.movable_sorted = {10, 20, 30, 40};  // a sample: each stands for 10 blocks
  EXPECT_EQ(migrate_cost(z, 10), 100u);
  EXPECT_EQ(migrate_cost(z, 15), 200u);
  EXPECT_EQ(migrate_cost(z, 0), 0u);
}

}  // namespace
}  // namespace fragd
