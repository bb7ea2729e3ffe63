// SPDX-License-Identifier: Apache-2.0
// Parsers for /proc/{buddyinfo,zoneinfo,pagetypeinfo} (kernel/procfs_zones.cc), on
// recorded fixtures and inline edge cases.
#include "kernel/procfs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "procfs_fixtures.h"

namespace fragd {
namespace {

using namespace test;

// --- buddyinfo --------------------------------------------------------------

TEST(Buddyinfo, OneNodeFixture) {
  std::vector<std::string> warnings;
  auto zones = parse_buddyinfo(fixture("one_node", "buddyinfo"), "one_node/buddyinfo", &warnings);
  ASSERT_TRUE(zones.ok()) << zones.error().message;
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(zones->size(), 3u);
  EXPECT_EQ((*zones)[0].zone, "DMA");
  EXPECT_EQ((*zones)[1].zone, "DMA32");
  EXPECT_EQ((*zones)[2].zone, "Normal");
  for (const ZoneFree& z : *zones) {
    EXPECT_EQ(z.node, 0);
    EXPECT_EQ(z.free_blocks.size(), 11u);
  }
  EXPECT_EQ((*zones)[0].free_blocks, (std::vector<uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3}));
  EXPECT_EQ((*zones)[2].free_blocks,
            (std::vector<uint64_t>{4351, 5688, 1389, 1101, 600, 383, 304, 203, 133, 72, 5032}));
}

TEST(Buddyinfo, TwoNodesFixture) {
  auto zones = parse_buddyinfo(fixture("two_nodes", "buddyinfo"), "two_nodes/buddyinfo");
  ASSERT_TRUE(zones.ok()) << zones.error().message;
  ASSERT_EQ(zones->size(), 4u);
  const ZoneFree* n1 = find_zone(*zones, 1, "Normal");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->free_blocks,
            (std::vector<uint64_t>{20000, 15000, 8000, 3000, 1000, 300, 100, 40, 10, 3, 2}));
  EXPECT_EQ(find_zone(*zones, 1, "DMA"), nullptr);
}

TEST(Buddyinfo, GarbledFixtureSkipsBadLinesWithWarnings) {
  std::vector<std::string> w;
  auto zones = parse_buddyinfo(fixture("garbled", "buddyinfo"), "g/buddyinfo", &w);
  ASSERT_TRUE(zones.ok()) << zones.error().message;
  // Kept: DMA, DMA32 and the Movable zone with zero free pages.
  ASSERT_EQ(zones->size(), 3u);
  EXPECT_EQ((*zones)[0].zone, "DMA");
  EXPECT_EQ((*zones)[1].zone, "DMA32");
  EXPECT_EQ((*zones)[2].zone, "Movable");
  EXPECT_EQ((*zones)[2].free_blocks, std::vector<uint64_t>(11, 0));
  // Skipped: 3 (garbled number), 5 (missing columns), 6 (truncated),
  // 7 (node not a number), 8 (an extra column).
  ASSERT_EQ(w.size(), 5u);
  for (const char* line : {"g/buddyinfo:3: ", "g/buddyinfo:5: ", "g/buddyinfo:6: ",
                           "g/buddyinfo:7: ", "g/buddyinfo:8: "})
    EXPECT_EQ(count_with_prefix(w, line), 1u) << line;
  EXPECT_TRUE(any_contains(w, "'1x01' is not a number"));
  EXPECT_TRUE(any_contains(w, "3 order columns where the other lines have 11"));
  EXPECT_TRUE(any_contains(w, "12 order columns where the other lines have 11"));
  EXPECT_TRUE(any_contains(w, "'x' is not a number"));
}

TEST(Buddyinfo, InlineShapes) {
  // Fewer orders than usual is fine when every line agrees; tabs, CRLF and a
  // missing final newline are tolerated.
  auto zones = parse_buddyinfo("Node 3, zone Normal\t5 4 3\r\nNode 3, zone Movable 0 0 0", "b");
  ASSERT_TRUE(zones.ok()) << zones.error().message;
  ASSERT_EQ(zones->size(), 2u);
  EXPECT_EQ((*zones)[0].node, 3);
  EXPECT_EQ((*zones)[0].free_blocks, (std::vector<uint64_t>{5, 4, 3}));
  EXPECT_EQ((*zones)[1].free_blocks, (std::vector<uint64_t>{0, 0, 0}));
}

TEST(Buddyinfo, BadNumbersAreRejectedNotTruncated) {
  for (const char* bad : {"-1", "+1", "1.5", "0x10", "99999999999999999999", "12abc", ">5"}) {
    std::vector<std::string> w;
    const std::string text =
        "Node 0, zone DMA 1 2 3\nNode 0, zone Normal 1 " + std::string(bad) + " 3\n";
    auto zones = parse_buddyinfo(text, "b", &w);
    ASSERT_TRUE(zones.ok()) << bad;
    EXPECT_EQ(zones->size(), 1u) << bad;
    ASSERT_EQ(w.size(), 1u) << bad;
    EXPECT_TRUE(starts_with(w[0], "b:2: ")) << w[0];
  }
  // The largest uint64 is a number, though.
  auto big = parse_buddyinfo("Node 0, zone DMA 18446744073709551615\n", "b");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)[0].free_blocks[0], 18446744073709551615ull);
}

TEST(Buddyinfo, DuplicateZoneKeepsFirst) {
  std::vector<std::string> w;
  auto zones = parse_buddyinfo("Node 0, zone DMA 1 2\nNode 0, zone DMA 7 7\n", "b", &w);
  ASSERT_TRUE(zones.ok());
  ASSERT_EQ(zones->size(), 1u);
  EXPECT_EQ((*zones)[0].free_blocks, (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(starts_with(w[0], "b:2: "));
}

TEST(Buddyinfo, TooManyOrdersRejected) {
  std::string line = "Node 0, zone Normal";
  for (size_t i = 0; i < kMaxOrders + 1; ++i) line += " 1";
  auto zones = parse_buddyinfo(line + "\n", "b");
  ASSERT_FALSE(zones.ok());
  EXPECT_NE(zones.error().message.find("b:1: expected"), std::string::npos) << zones.error().message;
}

TEST(Buddyinfo, EmptyOrUnparsableFileIsAnError) {
  for (const char* text : {"", "\n\n  \n"}) {
    auto r = parse_buddyinfo(text, "/p/buddyinfo");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(starts_with(r.error().message, "/p/buddyinfo:1: file is empty")) << r.error().message;
  }
  auto r = parse_buddyinfo("\nhello world\nNode 0, zone\n", "/p/buddyinfo");
  ASSERT_FALSE(r.ok());
  // Names the first bad line, what was expected, and the fix.
  EXPECT_TRUE(starts_with(r.error().message, "/p/buddyinfo:2: expected 'Node <n>, zone <name>"))
      << r.error().message;
  EXPECT_NE(r.error().message.find("check that /p/buddyinfo"), std::string::npos);
  // A zone line with no counts at all.
  EXPECT_FALSE(parse_buddyinfo("Node 0, zone DMA\n", "b").ok());
}

// --- zoneinfo ---------------------------------------------------------------

TEST(Zoneinfo, OneNodeFixtureFillsAndAddsEmptyZones) {
  std::vector<std::string> w;
  auto zones = parse_buddyinfo(fixture("one_node", "buddyinfo"), "b", &w);
  ASSERT_TRUE(zones.ok());
  auto r = parse_zoneinfo(fixture("one_node", "zoneinfo"), "z", *zones, &w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(w.empty()) << w.front();
  ASSERT_EQ(zones->size(), 5u);
  const char* order[] = {"DMA", "DMA32", "Normal", "Movable", "Device"};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ((*zones)[i].zone, order[i]);

  const ZoneFree& dma = (*zones)[0];
  EXPECT_EQ(dma.free_pages, 3840u);
  EXPECT_EQ(dma.spanned_pages, 4095u);
  EXPECT_EQ(dma.present_pages, 3998u);
  EXPECT_EQ(dma.managed_pages, 3840u);
  EXPECT_EQ(dma.free_blocks.size(), 11u);  // kept from buddyinfo

  const ZoneFree& dma32 = (*zones)[1];
  EXPECT_EQ(dma32.free_pages, 771225u);
  EXPECT_EQ(dma32.spanned_pages, 1044480u);
  EXPECT_EQ(dma32.present_pages, 782336u);
  EXPECT_EQ(dma32.managed_pages, 772915u);

  const ZoneFree& normal = (*zones)[2];
  EXPECT_EQ(normal.free_pages, 5321067u);
  EXPECT_EQ(normal.present_pages, 5505024u);
  EXPECT_EQ(normal.managed_pages, 5394266u);

  // Movable and Device are empty: only in zoneinfo, no free blocks, no node_unreclaimable line.
  for (size_t i : {3u, 4u}) {
    EXPECT_EQ((*zones)[i].present_pages, 0u);
    EXPECT_TRUE((*zones)[i].free_blocks.empty());
    EXPECT_EQ((*zones)[i].node_unreclaimable, -1);
  }
  for (size_t i : {0u, 1u, 2u}) EXPECT_EQ((*zones)[i].node_unreclaimable, 0);
}

// nr_free_pages_blocks (Linux 6.15+): the kernel's free pages in free pageblocks, per zone; a
// kernel before 6.15 (Debian 12's 6.1) prints no such line, and the field stays absent.
TEST(Zoneinfo, FreePagesBlocksWhereTheKernelPrintsThem) {
  const std::string with = fixture("one_node", "zoneinfo");  // Linux 6.18
  auto zones = parse_buddyinfo(fixture("one_node", "buddyinfo"), "b");
  ASSERT_TRUE(zones.ok());
  std::vector<std::string> w;
  ASSERT_TRUE(parse_zoneinfo(with, "z", *zones, &w).ok());
  EXPECT_TRUE(w.empty()) << w.front();
  EXPECT_EQ(find_zone(*zones, 0, "DMA")->free_pages_blocks, 3584u);
  EXPECT_EQ(find_zone(*zones, 0, "DMA32")->free_pages_blocks, 762880u);
  EXPECT_EQ(find_zone(*zones, 0, "Normal")->free_pages_blocks, 5189632u);
  // An unpopulated zone prints no counters at all.
  EXPECT_FALSE(find_zone(*zones, 0, "Movable")->free_pages_blocks.has_value());

  // The same file as a kernel before 6.15 prints it: no nr_free_pages_blocks line.
  std::string without;
  for (size_t at = 0; at < with.size();) {
    const size_t end = std::min(with.find('\n', at), with.size());
    const std::string line = with.substr(at, end - at);
    if (line.find("nr_free_pages_blocks") == std::string::npos) without += line + "\n";
    at = end + 1;
  }
  ASSERT_NE(without.size(), with.size());
  auto old = parse_buddyinfo(fixture("one_node", "buddyinfo"), "b");
  ASSERT_TRUE(old.ok());
  ASSERT_TRUE(parse_zoneinfo(without, "z", *old, &w).ok());
  EXPECT_TRUE(w.empty()) << w.front();  // not a fault: the kernel has no such counter
  for (const ZoneFree& z : *old) EXPECT_FALSE(z.free_pages_blocks.has_value()) << z.zone;
  EXPECT_EQ(find_zone(*old, 0, "Normal")->free_pages, 5321067u);  // the rest as before
}

TEST(Zoneinfo, GarbledFreePagesBlocksLineIsSkippedAndNamed) {
  std::vector<ZoneFree> zones;
  std::vector<std::string> w;
  auto r = parse_zoneinfo(
      "Node 0, zone DMA32\n  present 10\n      nr_free_pages_blocks 5x12\n"
      "Node 0, zone Normal\n  present 20\n      nr_free_pages_blocks 1024\n      nr_free_pages_blocks 512\n"
      "Node 1, zone Normal\n  present 30\n      nr_free_pages_blocks\n",
      "/proc/zoneinfo", zones, &w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(zones.size(), 3u);
  EXPECT_FALSE(zones[0].free_pages_blocks.has_value());
  EXPECT_EQ(zones[1].free_pages_blocks, 1024u);  // the second line is skipped
  EXPECT_FALSE(zones[2].free_pages_blocks.has_value());
  ASSERT_EQ(w.size(), 3u);
  EXPECT_TRUE(starts_with(w[0], "/proc/zoneinfo:3: Node 0, zone DMA32: expected 'nr_free_pages_blocks <pages>', got '5x12'"))
      << w[0];
  EXPECT_TRUE(starts_with(w[1], "/proc/zoneinfo:7: Node 0, zone Normal: second")) << w[1];
  EXPECT_TRUE(starts_with(w[2], "/proc/zoneinfo:10: Node 1, zone Normal: expected 'nr_free_pages_blocks <pages>', got nothing"))
      << w[2];
}

TEST(Zoneinfo, NodeUnreclaimable) {
  std::vector<ZoneFree> zones;
  std::vector<std::string> w;
  auto r = parse_zoneinfo(
      "Node 0, zone DMA32\n  present 10\n  node_unreclaimable:  1\n  start_pfn: 4096\n"
      "Node 0, zone Normal\n  present 20\n  node_unreclaimable:  2\n"
      "Node 1, zone Normal\n  present 30\n  node_unreclaimable:  0\n  node_unreclaimable:  1\n"
      "Node 2, zone Normal\n  present 40\n  node_unreclaimable: 1 x\n",
      "z", zones, &w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(zones.size(), 4u);
  EXPECT_EQ(zones[0].node_unreclaimable, 1);
  EXPECT_EQ(zones[1].node_unreclaimable, -1);  // 2 is no flag: skipped
  EXPECT_EQ(zones[2].node_unreclaimable, 0);   // the second line is skipped
  EXPECT_EQ(zones[3].node_unreclaimable, -1);  // an extra column
  ASSERT_EQ(w.size(), 3u);
  EXPECT_TRUE(starts_with(w[0], "z:7: Node 0, zone Normal: expected 'node_unreclaimable: <0 or 1>', got '2'")) << w[0];
  EXPECT_TRUE(starts_with(w[1], "z:11: Node 1, zone Normal: second")) << w[1];
  EXPECT_TRUE(starts_with(w[2], "z:14: ")) << w[2];
}

TEST(Zoneinfo, TwoNodesOrdersByNodeThenKernelZoneOrder) {
  auto zones = parse_buddyinfo(fixture("two_nodes", "buddyinfo"), "b");
  ASSERT_TRUE(zones.ok());
  auto r = parse_zoneinfo(fixture("two_nodes", "zoneinfo"), "z", *zones);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(zones->size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ((*zones)[i].node, i < 5 ? 0 : 1);
  EXPECT_EQ((*zones)[5].zone, "DMA");
  EXPECT_EQ((*zones)[7].zone, "Normal");
  EXPECT_EQ((*zones)[7].present_pages, 4194304u);
  EXPECT_EQ((*zones)[7].managed_pages, 4128768u);
  EXPECT_EQ((*zones)[7].free_pages, 149264u);
  EXPECT_EQ((*zones)[7].free_blocks.size(), 11u);
  // The per-node stats block in node 1's first zone is not mistaken for
  // zone counters.
  EXPECT_EQ((*zones)[5].present_pages, 0u);
  EXPECT_EQ((*zones)[5].free_pages, 0u);
}

TEST(Zoneinfo, GarbledFixture) {
  std::vector<std::string> w;
  std::vector<ZoneFree> zones;
  auto r = parse_zoneinfo(fixture("garbled", "zoneinfo"), "g/zoneinfo", zones, &w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(zones.size(), 5u);  // node 0: DMA DMA32 Normal Movable; node 1: Normal
  EXPECT_EQ(zones[0].present_pages, 3998u);
  // DMA32: "present  78x336" and "managed  772915 12" are skipped.
  EXPECT_EQ(zones[1].zone, "DMA32");
  EXPECT_EQ(zones[1].present_pages, 0u);
  EXPECT_EQ(zones[1].managed_pages, 0u);
  EXPECT_EQ(zones[1].spanned_pages, 1044480u);
  EXPECT_EQ(zones[3].zone, "Movable");
  EXPECT_EQ(zones[3].present_pages, 262144u);
  EXPECT_EQ(zones[4].node, 1);
  EXPECT_EQ(zones[4].free_pages, 1204u);
  EXPECT_EQ(zones[4].present_pages, 0u);
  // The "Node ?, zone Bogus" block was skipped entirely.
  EXPECT_EQ(find_zone(zones, 0, "Bogus"), nullptr);

  EXPECT_EQ(count_with_prefix(w, "g/zoneinfo:17: "), 1u);  // present 78x336
  EXPECT_EQ(count_with_prefix(w, "g/zoneinfo:18: "), 1u);  // managed with an extra column
  EXPECT_EQ(count_with_prefix(w, "g/zoneinfo:29: "), 1u);  // Node ?
  EXPECT_EQ(count_with_prefix(w, "g/zoneinfo:14: "), 1u);  // DMA32 ends with no valid present
  EXPECT_EQ(count_with_prefix(w, "g/zoneinfo:32: "), 1u);  // node 1 Normal has no present
  EXPECT_EQ(w.size(), 5u);
  EXPECT_TRUE(any_contains(w, "'78x336'"));
}

TEST(Zoneinfo, ZoneFromBuddyinfoMissingInZoneinfoIsKeptWithWarning) {
  std::vector<ZoneFree> zones(1);
  zones[0].node = 0;
  zones[0].zone = "Normal";
  zones[0].free_blocks = {1, 2, 3};
  std::vector<std::string> w;
  auto r = parse_zoneinfo("Node 0, zone DMA\n  pages free 5\n  present 10\n", "z", zones, &w);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(zones.size(), 2u);
  EXPECT_EQ(zones[0].zone, "DMA");  // zoneinfo's zones first, in its order
  EXPECT_EQ(zones[1].zone, "Normal");
  EXPECT_EQ(zones[1].free_blocks, (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("Node 0, zone Normal is missing"), std::string::npos);
}

TEST(Zoneinfo, UnparsableIsAnErrorAndLeavesZonesAlone) {
  std::vector<ZoneFree> zones(1);
  zones[0].zone = "DMA";
  auto r = parse_zoneinfo("  pages free 5\n  present 10\n", "/p/zoneinfo", zones);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(starts_with(r.error().message, "/p/zoneinfo:1: expected 'Node <n>, zone <name>'"))
      << r.error().message;
  EXPECT_EQ(zones.size(), 1u);
  EXPECT_FALSE(parse_zoneinfo("", "/p/zoneinfo", zones).ok());
  EXPECT_FALSE(parse_zoneinfo("Node 0 zone\n", "/p/zoneinfo", zones).ok());
}

// --- pagetypeinfo -----------------------------------------------------------

TEST(Pagetypeinfo, OneNodeFixture) {
  auto zones = parse_buddyinfo(fixture("one_node", "buddyinfo"), "b");
  ASSERT_TRUE(zones.ok());
  std::vector<std::string> w;
  unsigned pb_order = 0;
  auto r = parse_pagetypeinfo(fixture("one_node", "pagetypeinfo"), "p", *zones, &w, &pb_order);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(w.empty()) << w.front();
  EXPECT_EQ(pb_order, 9u);
  ASSERT_EQ(zones->size(), 3u);
  const ZoneFree& normal = (*zones)[2];
  EXPECT_EQ(normal.pageblocks, (std::map<std::string, uint64_t>{{"Unmovable", 54},
                                                                 {"Movable", 10653},
                                                                 {"Reclaimable", 45},
                                                                 {"HighAtomic", 0},
                                                                 {"Isolate", 0}}));
  ASSERT_EQ(normal.free_by_type.size(), 5u);
  EXPECT_EQ(normal.free_by_type.at("Movable"),
            (std::vector<uint64_t>{3372, 5021, 963, 831, 466, 358, 276, 193, 133, 72, 5032}));
  EXPECT_EQ((*zones)[1].pageblocks.at("Movable"), 1526u);
  // Per order, the migrate types add up to buddyinfo's count for this zone.
  for (size_t o = 0; o < 11; ++o) {
    uint64_t sum = 0;
    for (const auto& [type, counts] : normal.free_by_type) sum += counts[o];
    EXPECT_EQ(sum, normal.free_blocks[o]) << "order " << o;
  }
}

TEST(Pagetypeinfo, GarbledFixture) {
  auto zones = parse_buddyinfo(fixture("garbled", "buddyinfo"), "b");
  ASSERT_TRUE(zones.ok());
  std::vector<std::string> w;
  auto r = parse_pagetypeinfo(fixture("garbled", "pagetypeinfo"), "g/p", *zones, &w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ZoneFree* normal = find_zone(*zones, 0, "Normal");  // added: buddyinfo lost it
  ASSERT_NE(normal, nullptr);
  // ">100000" is the kernel's capped count: kept as its lower bound.
  EXPECT_EQ(normal->free_by_type.at("Movable")[0], 100000u);
  EXPECT_EQ(normal->free_by_type.count("Unmovable"), 0u);    // truncated row
  EXPECT_EQ(normal->free_by_type.count("Reclaimable"), 0u);  // "1b6"
  EXPECT_EQ(normal->pageblocks.at("Movable"), 10653u);
  const ZoneFree* dma32 = find_zone(*zones, 0, "DMA32");
  ASSERT_NE(dma32, nullptr);
  EXPECT_TRUE(dma32->pageblocks.empty());  // row with 3 of 5 columns
  EXPECT_EQ(dma32->free_by_type.at("Movable")[10], 742u);
  EXPECT_EQ(w.size(), 4u);
  for (const char* line : {"g/p:8: ", "g/p:10: ", "g/p:11: ", "g/p:15: "})
    EXPECT_EQ(count_with_prefix(w, line), 1u) << line;
}

TEST(Pagetypeinfo, MixedBlocksTableIsIgnored) {
  const char* text =
      "Page block order: 9\n"
      "Pages per block:  512\n"
      "\n"
      "Free pages count per migrate type at order       0      1 \n"
      "Node    0, zone   Normal, type    Unmovable      1      2 \n"
      "Node    0, zone   Normal, type          CMA      3      4 \n"
      "\n"
      "Number of blocks type     Unmovable      Movable  Reclaimable   HighAtomic          CMA      Isolate \n"
      "Node 0, zone   Normal            1            2            3            4            5            6 \n"
      "Number of mixed blocks    Unmovable      Movable  Reclaimable   HighAtomic          CMA      Isolate \n"
      "Node 0, zone   Normal          900          900          900          900          900          900 \n";
  std::vector<ZoneFree> zones;
  std::vector<std::string> w;
  auto r = parse_pagetypeinfo(text, "p", zones, &w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(w.empty());
  ASSERT_EQ(zones.size(), 1u);
  EXPECT_EQ(zones[0].free_by_type.at("CMA"), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(zones[0].pageblocks.at("CMA"), 5u);
  EXPECT_EQ(zones[0].pageblocks.at("Isolate"), 6u);
}

TEST(Pagetypeinfo, UnparsableIsAnError) {
  std::vector<ZoneFree> zones;
  EXPECT_FALSE(parse_pagetypeinfo("", "p", zones).ok());
  auto r = parse_pagetypeinfo("Page block order: 9\nPages per block: 512\n", "p", zones);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(starts_with(r.error().message, "p:1: expected")) << r.error().message;
  EXPECT_FALSE(parse_pagetypeinfo("Node 0, zone DMA 1 2 3\n", "p", zones).ok());
  EXPECT_TRUE(zones.empty());
}

}  // namespace
}  // namespace fragd
