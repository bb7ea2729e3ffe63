// Parsers for /proc/{buddyinfo,zoneinfo,pagetypeinfo,vmstat,meminfo} and the
// sysfs hugepage pools, on recorded fixtures and inline edge cases.
#include "kernel/procfs.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace fragd {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = FRAGD_FIXTURES_DIR;

std::string fixture(const std::string& shape, const std::string& file) {
  auto text = read_text_file(kFixtures + "/" + shape + "/" + file);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return text.ok() ? *text : std::string();
}

const ZoneFree* find_zone(const std::vector<ZoneFree>& zones, int node, const std::string& name) {
  for (const ZoneFree& z : zones)
    if (z.node == node && z.zone == name) return &z;
  return nullptr;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

size_t count_with_prefix(const std::vector<std::string>& v, const std::string& prefix) {
  return static_cast<size_t>(
      std::count_if(v.begin(), v.end(), [&](const std::string& s) { return starts_with(s, prefix); }));
}

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "fragd-procfs-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = fs::path(path_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

 private:
  std::string path_;
};

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

  // Movable and Device are empty: only in zoneinfo, no free blocks.
  for (size_t i : {3u, 4u}) {
    EXPECT_EQ((*zones)[i].present_pages, 0u);
    EXPECT_TRUE((*zones)[i].free_blocks.empty());
  }
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

// --- vmstat, meminfo --------------------------------------------------------

TEST(Vmstat, OneNodeFixtureHasEveryKey) {
  const std::string text = fixture("one_node", "vmstat");
  std::vector<std::string> w;
  auto vm = parse_vmstat(text, "v", &w);
  ASSERT_TRUE(vm.ok()) << vm.error().message;
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(vm->size(), static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
  EXPECT_EQ(vm->at("nr_free_pages"), 6096132u);
  EXPECT_EQ(vm->at("nr_free_pages_blocks"), 5956096u);
  EXPECT_EQ(vm->count("compact_stall"), 1u);
}

TEST(Vmstat, GarbledFixture) {
  std::vector<std::string> w;
  auto vm = parse_vmstat(fixture("garbled", "vmstat"), "g/vmstat", &w);
  ASSERT_TRUE(vm.ok()) << vm.error().message;
  EXPECT_EQ(*vm, (std::map<std::string, uint64_t>{{"nr_free_pages", 6096132},
                                                  {"compact_stall", 17},
                                                  {"compact_fail", 4},
                                                  {"compact_success", 13}}));
  ASSERT_EQ(w.size(), 4u);
  for (const char* line : {"g/vmstat:2: ", "g/vmstat:3: ", "g/vmstat:4: ", "g/vmstat:8: "})
    EXPECT_EQ(count_with_prefix(w, line), 1u) << line;
  EXPECT_FALSE(parse_vmstat("", "v").ok());
  auto bad = parse_vmstat("a b c\n", "/p/vmstat");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(starts_with(bad.error().message, "/p/vmstat:1: expected")) << bad.error().message;
}

TEST(Meminfo, OneNodeFixture) {
  MemSnapshot snap;
  auto r = parse_meminfo(fixture("one_node", "meminfo"), "m", snap);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(snap.mem_free_kib, 24384476u);
  EXPECT_EQ(snap.mem_available_kib, 24247156u);
  EXPECT_TRUE(snap.warnings.empty()) << snap.warnings.front();
}

TEST(Meminfo, GarbledFixture) {
  MemSnapshot snap;
  auto r = parse_meminfo(fixture("garbled", "meminfo"), "g/meminfo", snap);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(snap.mem_free_kib, 0u);
  EXPECT_EQ(snap.mem_available_kib, 24247156u);
  EXPECT_EQ(count_with_prefix(snap.warnings, "g/meminfo:2: "), 1u);  // MemFree: 1x kB
  EXPECT_EQ(count_with_prefix(snap.warnings, "g/meminfo:4: "), 1u);  // no colon
  EXPECT_TRUE(any_contains(snap.warnings, "no MemFree line"));
  EXPECT_EQ(snap.warnings.size(), 3u);

  MemSnapshot empty;
  EXPECT_FALSE(parse_meminfo("", "m", empty).ok());
  auto none = parse_meminfo("MemTotal: 5 kB\n", "/p/meminfo", empty);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("/p/meminfo:1: expected"), std::string::npos);
}

// --- hugepages --------------------------------------------------------------

TEST(Hugepages, PerNodePools) {
  TempDir sys;
  ASSERT_FALSE(sys.path().empty());
  const std::string n0 = "devices/system/node/node0/hugepages/";
  const std::string n1 = "devices/system/node/node1/hugepages/";
  sys.write(n0 + "hugepages-2048kB/nr_hugepages", "16\n");
  sys.write(n0 + "hugepages-2048kB/free_hugepages", "10\n");
  sys.write(n0 + "hugepages-2048kB/surplus_hugepages", "2\n");
  sys.write(n0 + "hugepages-1048576kB/nr_hugepages", "1\n");
  sys.write(n0 + "hugepages-1048576kB/free_hugepages", "1\n");  // no surplus file
  sys.write(n1 + "hugepages-2048kB/nr_hugepages", "4\n");
  sys.write(n1 + "hugepages-2048kB/free_hugepages", "garbage\n");  // skipped, warned
  sys.write("devices/system/node/possible", "0-1\n");
  // The global pool must be ignored when per-node pools exist.
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "99\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "99\n");

  std::vector<std::string> w;
  auto pools = read_hugepages(sys.path(), &w);
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].node, 0);
  EXPECT_EQ(pools[0].size_kib, 2048u);
  EXPECT_EQ(pools[0].total, 16u);
  EXPECT_EQ(pools[0].free, 10u);
  EXPECT_EQ(pools[0].surplus, 2u);
  EXPECT_EQ(pools[1].node, 0);
  EXPECT_EQ(pools[1].size_kib, 1048576u);
  EXPECT_EQ(pools[1].surplus, 0u);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("node1/hugepages/hugepages-2048kB/free_hugepages:1:"), std::string::npos)
      << w[0];
}

TEST(Hugepages, FallsBackToGlobalPoolsAsNodeZero) {
  TempDir sys;
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "8\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "3\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages", "0\n");
  auto pools = read_hugepages(sys.path());
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].node, 0);
  EXPECT_EQ(pools[0].size_kib, 2048u);
  EXPECT_EQ(pools[0].total, 8u);
  EXPECT_EQ(pools[0].free, 3u);

  EXPECT_TRUE(read_hugepages("/nonexistent/fragd-sys").empty());
}

// --- read_snapshot ----------------------------------------------------------

TEST(ReadSnapshot, OneNodeFixtureWithoutSysfs) {
  auto snap = read_snapshot(kFixtures + "/one_node", "/nonexistent/fragd-sys");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_TRUE(snap->warnings.empty()) << snap->warnings.front();
  ASSERT_EQ(snap->zones.size(), 5u);
  EXPECT_EQ(snap->zones[2].zone, "Normal");
  EXPECT_EQ(snap->zones[2].present_pages, 5505024u);
  EXPECT_EQ(snap->zones[2].free_blocks[10], 5032u);
  EXPECT_EQ(snap->zones[2].pageblocks.at("Movable"), 10653u);
  EXPECT_EQ(snap->pageblock_order, 9u);
  EXPECT_EQ(snap->vmstat.at("nr_free_pages"), 6096132u);
  EXPECT_EQ(snap->mem_available_kib, 24247156u);
  EXPECT_EQ(snap->mem_free_kib, 24384476u);
  EXPECT_TRUE(snap->hugepages.empty());
}

TEST(ReadSnapshot, TwoNodesFixture) {
  auto snap = read_snapshot(kFixtures + "/two_nodes/", "/nonexistent");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_TRUE(snap->warnings.empty()) << snap->warnings.front();
  ASSERT_EQ(snap->zones.size(), 10u);
  const ZoneFree* n1 = find_zone(snap->zones, 1, "Normal");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->pageblocks.at("Unmovable"), 1200u);
  EXPECT_EQ(n1->free_by_type.at("Movable")[10], 2u);
}

TEST(ReadSnapshot, GarbledFixtureCollectsWarnings) {
  auto snap = read_snapshot(kFixtures + "/garbled", "/nonexistent");
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  const auto& w = snap->warnings;
  const std::string dir = kFixtures + "/garbled/";
  EXPECT_EQ(count_with_prefix(w, dir + "buddyinfo:"), 6u);  // 5 lines + Normal has no row
  EXPECT_EQ(count_with_prefix(w, dir + "zoneinfo:"), 5u);
  EXPECT_EQ(count_with_prefix(w, dir + "pagetypeinfo:"), 4u);
  EXPECT_EQ(count_with_prefix(w, dir + "vmstat:"), 4u);
  EXPECT_EQ(count_with_prefix(w, dir + "meminfo"), 3u);
  EXPECT_TRUE(any_contains(w, "no usable line for Node 0, zone Normal (5505024 present pages)"));
  ASSERT_EQ(snap->zones.size(), 5u);
  EXPECT_EQ(snap->zones[3].zone, "Movable");
  EXPECT_EQ(snap->zones[3].present_pages, 262144u);
  EXPECT_EQ(snap->mem_available_kib, 24247156u);
}

TEST(ReadSnapshot, MissingBuddyinfoIsAnErrorNamingThePath) {
  TempDir proc;
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  auto snap = read_snapshot(proc.path(), "/nonexistent");
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.error().err, ENOENT);
  EXPECT_NE(snap.error().message.find(proc.path() + "/buddyinfo"), std::string::npos)
      << snap.error().message;
  EXPECT_NE(snap.error().message.find("mount -t proc"), std::string::npos);

  auto gone = read_snapshot("/nonexistent/fragd-proc", "/nonexistent");
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find("/nonexistent/fragd-proc/buddyinfo"), std::string::npos);
}

TEST(ReadSnapshot, MissingZoneinfoIsAnError) {
  TempDir proc;
  proc.write("buddyinfo", fixture("one_node", "buddyinfo"));
  auto snap = read_snapshot(proc.path(), "/nonexistent");
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.error().message.find(proc.path() + "/zoneinfo"), std::string::npos);
}

TEST(ReadSnapshot, GarbageBuddyinfoIsAnError) {
  TempDir proc;
  proc.write("buddyinfo", "not a buddyinfo\n");
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  auto snap = read_snapshot(proc.path(), "/nonexistent");
  ASSERT_FALSE(snap.ok());
  EXPECT_TRUE(starts_with(snap.error().message, proc.path() + "/buddyinfo:1: expected"))
      << snap.error().message;
}

TEST(ReadSnapshot, OptionalFilesMissingAreWarnings) {
  TempDir proc;
  proc.write("buddyinfo", fixture("one_node", "buddyinfo"));
  proc.write("zoneinfo", fixture("one_node", "zoneinfo"));
  // pagetypeinfo unreadable (a directory: read fails with EISDIR).
  fs::create_directories(fs::path(proc.path()) / "pagetypeinfo");
  TempDir sys;
  sys.write("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "2\n");
  sys.write("kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "1\n");
  auto snap = read_snapshot(proc.path(), sys.path());
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->zones.size(), 5u);
  for (const ZoneFree& z : snap->zones) EXPECT_TRUE(z.pageblocks.empty());
  EXPECT_EQ(snap->warnings.size(), 3u);  // pagetypeinfo, vmstat, meminfo
  EXPECT_TRUE(any_contains(snap->warnings, proc.path() + "/pagetypeinfo"));
  EXPECT_TRUE(any_contains(snap->warnings, proc.path() + "/vmstat"));
  EXPECT_TRUE(any_contains(snap->warnings, proc.path() + "/meminfo"));
  EXPECT_TRUE(snap->vmstat.empty());
  ASSERT_EQ(snap->hugepages.size(), 1u);
  EXPECT_EQ(snap->hugepages[0].total, 2u);
}

// --- robustness -------------------------------------------------------------

// Every prefix and many random mutations of every fixture go through every
// parser without crashing (run under ASan/UBSan to also catch overreads).
TEST(Robustness, TruncatedAndMutatedInputsNeverCrash) {
  std::vector<std::string> inputs;
  for (const char* shape : {"one_node", "two_nodes", "garbled"})
    for (const char* file : {"buddyinfo", "zoneinfo", "pagetypeinfo", "vmstat", "meminfo"})
      inputs.push_back(fixture(shape, file));

  auto run_all = [](std::string_view text) {
    std::vector<std::string> w;
    auto zones = parse_buddyinfo(text, "x", &w);
    std::vector<ZoneFree> z = zones.ok() ? *zones : std::vector<ZoneFree>{};
    (void)parse_zoneinfo(text, "x", z, &w);
    unsigned pbo = 0;
    (void)parse_pagetypeinfo(text, "x", z, &w, &pbo);
    (void)parse_vmstat(text, "x", &w);
    MemSnapshot s;
    (void)parse_meminfo(text, "x", s);
  };

  std::mt19937 rng(12345);
  const std::string alphabet = "0123456789 ,:\n\t>-xNodezone\r\xff";
  for (const std::string& in : inputs) {
    const size_t step = std::max<size_t>(1, in.size() / 100);
    for (size_t cut = 0; cut <= in.size(); cut += step) run_all(std::string_view(in).substr(0, cut));
    for (int round = 0; round < 30; ++round) {
      std::string m = in;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits && !m.empty(); ++e) {
        const size_t pos = rng() % m.size();
        switch (rng() % 3) {
          case 0: m[pos] = alphabet[rng() % alphabet.size()]; break;
          case 1: m.erase(pos, 1 + rng() % 20); break;
          case 2: m.insert(pos, std::string(1 + rng() % 30, alphabet[rng() % alphabet.size()])); break;
        }
      }
      run_all(m);
    }
  }
  run_all(std::string("Node 0, zone DMA 1 2\0 3\n", 24));
  SUCCEED();
}

}  // namespace
}  // namespace fragd

// pagetypeinfo is not re-read when an earlier snapshot is passed: its
// pageblock counts are carried over zone by zone.
TEST(ReadSnapshot, CarriesPageblocksOver) {
  const std::string root = std::string(FRAGD_FIXTURES_DIR) + "/one_node";
  auto first = fragd::read_snapshot(root, "/nonexistent");
  ASSERT_TRUE(first.ok()) << first.error().message;
  fragd::MemSnapshot earlier = *first;
  for (auto& z : earlier.zones)
    if (!z.pageblocks.empty()) z.pageblocks["Movable"] = 4242;
  auto second = fragd::read_snapshot("/nonexistent-proc-root-for-pagetypeinfo-only", "/nonexistent", &earlier);
  EXPECT_FALSE(second.ok());  // buddyinfo is still required
  auto third = fragd::read_snapshot(root, "/nonexistent", &earlier);
  ASSERT_TRUE(third.ok());
  bool saw = false;
  for (const auto& z : third->zones)
    if (z.zone == "Normal") {
      EXPECT_EQ(z.pageblocks.at("Movable"), 4242u);
      saw = true;
    }
  EXPECT_TRUE(saw);
}
