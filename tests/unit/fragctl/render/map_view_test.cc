// SPDX-License-Identifier: Apache-2.0
// Tests of core/map_view (parsing, filtering and the text of `fragctl map`)
// and fragctl/map_png (the PNG), on answers to {"cmd":"map"} built as
// docs/control-protocol.md describes them.
#include "fragctl/render/map_view.h"
#include "fragctl/render/map_png.h"

#include <cairo.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using nlohmann::json;
using fragd::BlockClass;

namespace {

constexpr unsigned kOrder = 9;
constexpr uint64_t kBlockPages = 512;

// A zone of the answer: counts and free pages derived from classes and used.
json zone_json(int node, const std::string& name, uint64_t start_pfn, uint64_t end_pfn, const std::string& classes,
               const std::vector<uint64_t>& used) {
  json counts = {{"free", 0}, {"movable", 0}, {"hybrid", 0}, {"unmovable", 0}, {"huge", 0}, {"offline", 0}};
  for (char c : classes) {
    BlockClass cls;
    if (fragd::block_class_from_char(c, cls)) counts[fragd::block_class_name(cls)] = counts[fragd::block_class_name(cls)].get<uint64_t>() + 1;
  }
  uint64_t free_pages = 0;
  for (size_t i = 0; i < used.size() && i < classes.size(); ++i)
    if (classes[i] != '-') free_pages += kBlockPages - used[i];
  return {{"node", node},
          {"zone", name},
          {"start_pfn", start_pfn},
          {"end_pfn", end_pfn},
          {"first_block", start_pfn >> kOrder},
          {"classes", classes},
          {"used", used},
          {"counts", counts},
          {"free_pages", std::min(free_pages, end_pfn - start_pfn)},
          {"hugepages", {{"free", counts["free"]}, {"compaction", 1}, {"polluted", counts["hybrid"]}}},
          {"compaction_cost_pages", 128}};
}

// Node 0: DMA32 of 4 blocks from pfn 0x1000 (block 8); Normal of 70 blocks
// from pfn 0x100000 (block 2048), so its rows are 64 + 6 blocks. Node 1:
// Normal of 3 blocks from pfn 0x640000 (block 12800).
json good_answer() {
  std::string normal;
  std::vector<uint64_t> normal_used;
  const std::string pattern = ".mxUH-";
  for (int i = 0; i < 70; ++i) {
    char c = pattern[i % 6];
    normal += c;
    normal_used.push_back(c == '.' ? 0 : c == 'H' ? 512 : c == '-' ? 0 : 100 + i);
  }
  json zones = json::array();
  zones.push_back(zone_json(0, "DMA32", 0x1000, 0x1000 + 4 * kBlockPages, "mm.U", {128, 130, 0, 500}));
  zones.push_back(zone_json(0, "Normal", 0x100000, 0x100000 + 70 * kBlockPages, normal, normal_used));
  zones.push_back(zone_json(1, "Normal", 0x640000, 0x640000 + 3 * kBlockPages, "x.m", {200, 0, 300}));
  return {{"ok", true},
          {"scan",
           {{"time_ns", 1763700000000000000ULL},
            {"age_ns", 3000000000ULL},
            {"duration_ns", 412000000},
            {"pageblock_order", kOrder},
            {"pages_read", 6553600},
            {"zones", zones}}},
          {"pollution",
           {{"tracked_blocks", 12},
            {"tracked_pages", 40},
            {"untracked_events", 1},
            {"blocks",
             json::array({{{"block", 2050}, {"node", 0}, {"pages", 9}, {"events", 11}, {"first_ns", 100}, {"last_ns", 200},
                           {"pid", 42}, {"comm", "bash"}, {"cgroup_id", 7}, {"alloc", "unmovable"}},
                          {{"block", 12800}, {"node", 1}, {"pages", 3}, {"events", 4}, {"first_ns", 100},
                           {"last_ns", 100}, {"pid", 43}, {"comm", "kworker/1:0"}, {"cgroup_id", 1},
                           {"alloc", "reclaimable"}}})},
            {"top", json::array({{{"comm", "bash"}, {"cgroup_id", 7}, {"blocks", 10}, {"pages", 30}},
                                 {{"comm", "kworker/1:0"}, {"cgroup_id", 1}, {"blocks", 2}, {"pages", 10}}})}}}};
}

fragd::MapView parsed(const json& a) {
  auto r = fragd::parse_map_answer(a);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : fragd::MapView{};
}

size_t count_of(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(MapView, ParsesGoodAnswer) {
  fragd::MapView v = parsed(good_answer());
  ASSERT_TRUE(v.scanned);
  EXPECT_EQ(v.time_ns, 1763700000000000000ULL);
  EXPECT_EQ(v.age_ns, 3000000000ULL);
  EXPECT_EQ(v.duration_ns, 412000000u);
  EXPECT_EQ(v.pages_read, 6553600u);
  EXPECT_EQ(v.pageblock_order, 9u);
  ASSERT_EQ(v.zones.size(), 3u);
  const fragd::MapZone& d = v.zones[0];
  EXPECT_EQ(d.node, 0);
  EXPECT_EQ(d.zone, "DMA32");
  EXPECT_EQ(d.first_block, 8u);
  ASSERT_EQ(d.blocks(), 4u);
  EXPECT_EQ(d.classes[0], BlockClass::Movable);
  EXPECT_EQ(d.classes[2], BlockClass::Free);
  EXPECT_EQ(d.classes[3], BlockClass::Unmovable);
  EXPECT_EQ(d.used[1], 130u);
  EXPECT_EQ(d.counts[static_cast<size_t>(BlockClass::Movable)], 2u);
  EXPECT_EQ(d.hugepages_free, 1u);
  EXPECT_EQ(d.hugepages_compaction, 1u);
  EXPECT_EQ(d.compaction_cost_pages, 128u);
  const fragd::MapZone& n = v.zones[1];
  ASSERT_EQ(n.blocks(), 70u);
  EXPECT_EQ(n.classes[4], BlockClass::Huge);
  EXPECT_EQ(n.classes[5], BlockClass::Offline);
  EXPECT_EQ(n.used[4], 512u);
  ASSERT_TRUE(v.pollution.has_value());
  EXPECT_EQ(v.pollution->tracked_blocks, 12u);
  EXPECT_EQ(v.pollution->untracked_events, 1u);
  ASSERT_EQ(v.pollution->blocks->size(), 2u);
  EXPECT_EQ((*v.pollution->blocks)[0].comm, "bash");
  EXPECT_EQ((*v.pollution->blocks)[1].alloc, "reclaimable");
  ASSERT_EQ(v.pollution->top.size(), 2u);
  EXPECT_EQ(v.pollution->top[0].pages, 30u);
  auto totals = fragd::map_class_totals(v);
  EXPECT_EQ(totals[static_cast<size_t>(BlockClass::Free)], 1u + 12u + 1u);

  json no_pollution = good_answer();
  no_pollution["pollution"] = nullptr;
  EXPECT_FALSE(parsed(no_pollution).pollution.has_value());
}

TEST(MapView, ZoneNotAlignedToBlocks) {
  // DMA from pfn 1: block 0 overlaps it; one block more past an unaligned end.
  json a = good_answer();
  a["scan"]["zones"] = json::array({zone_json(0, "DMA", 1, 4096, "-UUUUUUU", {1, 2, 3, 4, 5, 6, 7, 8}),
                                    zone_json(0, "DMA32", 4096, 4096 + 513, "mm", {1, 1})});
  fragd::MapView v = parsed(a);
  ASSERT_EQ(v.zones.size(), 2u);
  EXPECT_EQ(v.zones[0].first_block, 0u);
  EXPECT_EQ(v.zones[1].blocks(), 2u);
}

TEST(MapView, RejectsMalformedFieldsNamingThem) {
  struct Case {
    const char* expect;  // in the message
    std::function<void(json&)> mutate;
  };
  auto z0 = [](json& a) -> json& { return a["scan"]["zones"][0]; };
  const std::vector<Case> cases = {
      {"missing \"scan\"", [](json& a) { a.erase("scan"); }},
      {"scan: not an object", [](json& a) { a["scan"] = json::array(); }},
      {"scan.time_ns: not a non-negative integer", [](json& a) { a["scan"]["time_ns"] = "now"; }},
      {"scan.age_ns: not a non-negative integer", [](json& a) { a["scan"]["age_ns"] = -1; }},
      {"scan: missing \"duration_ns\"", [](json& a) { a["scan"].erase("duration_ns"); }},
      {"scan.pages_read", [](json& a) { a["scan"]["pages_read"] = 1.5; }},
      {"scan.pageblock_order: 21 is out of range", [](json& a) { a["scan"]["pageblock_order"] = 21; }},
      {"scan.zones: not an array", [](json& a) { a["scan"]["zones"] = json::object(); }},
      {"scan.zones[1] is not an object", [](json& a) { a["scan"]["zones"][1] = 5; }},
      {"scan.zones[0].node is out of range 0..65535", [&](json& a) { z0(a)["node"] = 70000; }},
      {"scan.zones[0].node is out of range 0..65535", [&](json& a) { z0(a)["node"] = -1; }},
      {"scan.zones[0].node is not an integer", [&](json& a) { z0(a)["node"] = "0"; }},
      {"scan.zones[0].zone: empty", [&](json& a) { z0(a)["zone"] = ""; }},
      {"scan.zones[0].zone is not a string", [&](json& a) { z0(a)["zone"] = 3; }},
      {"scan.zones[0]: end_pfn 4096 is not above start_pfn 4096", [&](json& a) { z0(a)["end_pfn"] = 4096; }},
      {"scan.zones[0].first_block: 9 is not start_pfn >> pageblock_order (8)",
       [&](json& a) { z0(a)["first_block"] = 9; }},
      {"scan.zones[0].classes: 3 blocks, but pfns 4096..6144 span 4 blocks", [&](json& a) { z0(a)["classes"] = "mm."; }},
      {"scan.zones[0].classes: character 0x71 at block 2", [&](json& a) { z0(a)["classes"] = "mmqU"; }},
      {"scan.zones[0].classes: not a string", [&](json& a) { z0(a)["classes"] = json::array(); }},
      {"scan.zones[0].used: 3 values, but \"classes\" has 4 blocks",
       [&](json& a) { z0(a)["used"] = json::array({1, 2, 3}); }},
      {"scan.zones[0].used[2]: 513 is more than the 512 pages of a block", [&](json& a) { z0(a)["used"][2] = 513; }},
      {"scan.zones[0].used[3] is not a non-negative integer", [&](json& a) { z0(a)["used"][3] = -4; }},
      {"scan.zones[0].used[1] is not a non-negative integer", [&](json& a) { z0(a)["used"][1] = "x"; }},
      {"scan.zones[0].counts: missing \"huge\"", [&](json& a) { z0(a)["counts"].erase("huge"); }},
      {"scan.zones[0].counts.movable: 3, but \"classes\" has 2 movable blocks",
       [&](json& a) { z0(a)["counts"]["movable"] = 3; }},
      {"scan.zones[0].counts: not an object", [&](json& a) { z0(a)["counts"] = 1; }},
      {"scan.zones[0].free_pages: 9999 is out of range", [&](json& a) { z0(a)["free_pages"] = 9999; }},
      {"scan.zones[0]: missing \"hugepages.free\"", [&](json& a) { z0(a).erase("hugepages"); }},
      {"scan.zones[0].hugepages.free: 5 is out of range (at most 4)",
       [&](json& a) { z0(a)["hugepages"]["free"] = 5; }},
      {"scan.zones[0].hugepages.polluted is not a non-negative integer",
       [&](json& a) { z0(a)["hugepages"]["polluted"] = nullptr; }},
      {"scan.zones[0]: missing \"compaction_cost_pages\"", [&](json& a) { z0(a).erase("compaction_cost_pages"); }},
      {"scan.zones[0].classes: character 0x3f at block 1", [&](json& a) { z0(a)["classes"] = "m?.U"; }},
      {"scan.zones[0].sample is not an object", [&](json& a) { z0(a)["sample"] = 3; }},
      {"scan.zones[0].sample.blocks: 5 is out of range (at most 4)",
       [&](json& a) { z0(a)["sample"] = {{"blocks", 5}, {"compaction", {0, 1}}, {"polluted", {0, 0}}}; }},
      {"scan.zones[0].sample.compaction: [2, 3] does not hold the estimate 1",
       [&](json& a) { z0(a)["sample"] = {{"blocks", 2}, {"compaction", {2, 3}}, {"polluted", {0, 0}}}; }},
      {"scan.zones[0].sample.polluted: not [lower, upper]",
       [&](json& a) { z0(a)["sample"] = {{"blocks", 2}, {"compaction", {0, 1}}, {"polluted", {0}}}; }},
      {"missing \"pollution\"", [](json& a) { a.erase("pollution"); }},
      {"pollution: not an object or null", [](json& a) { a["pollution"] = "off"; }},
      {"pollution.tracked_pages is not a non-negative integer", [](json& a) { a["pollution"]["tracked_pages"] = -2; }},
      {"pollution.blocks is not an array", [](json& a) { a["pollution"]["blocks"] = 1; }},
      {"pollution.blocks[1].comm is not a string", [](json& a) { a["pollution"]["blocks"][1]["comm"] = 7; }},
      {"pollution.blocks[0].node: 65536 is out of range", [](json& a) { a["pollution"]["blocks"][0]["node"] = 65536; }},
      {"pollution.blocks[0].last_ns: 50 is before first_ns 100",
       [](json& a) { a["pollution"]["blocks"][0]["last_ns"] = 50; }},
      {"pollution.blocks[0]: missing \"alloc\"", [](json& a) { a["pollution"]["blocks"][0].erase("alloc"); }},
      {"pollution.top[1]: missing \"pages\"", [](json& a) { a["pollution"]["top"][1].erase("pages"); }},
      {"pollution.top[0].cgroup_id is not a non-negative integer",
       [](json& a) { a["pollution"]["top"][0]["cgroup_id"] = "root"; }},
      {"scan_error: not a string",
       [](json& a) {
         a["scan"] = nullptr;
         a["scan_error"] = 5;
       }},
  };
  for (const auto& c : cases) {
    json a = good_answer();
    c.mutate(a);
    auto r = fragd::parse_map_answer(a);
    ASSERT_FALSE(r.ok()) << "accepted, expected: " << c.expect;
    EXPECT_EQ(r.error().message.rfind("malformed answer to 'map' from fragd: ", 0), 0u) << r.error().message;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos)
        << "expected \"" << c.expect << "\" in: " << r.error().message;
  }

  auto refused = fragd::parse_map_answer(json::parse(R"({"ok":false,"error":"unknown cmd 'map'"})"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "fragd refused 'map': unknown cmd 'map'");
  EXPECT_FALSE(fragd::parse_map_answer(json::array()).ok());
}

TEST(MapView, NoScan) {
  json a = good_answer();
  a["scan"] = nullptr;
  a["scan_error"] = "cannot open /proc/kpageflags: Permission denied (run fragd as root)";
  fragd::MapView v = parsed(a);
  EXPECT_FALSE(v.scanned);
  EXPECT_EQ(v.scan_error, "cannot open /proc/kpageflags: Permission denied (run fragd as root)");
  EXPECT_TRUE(v.zones.empty());
  EXPECT_TRUE(v.pollution.has_value());
  EXPECT_EQ(fragd::format_map_text(v), "no pageblock map: " + v.scan_error + "\n");
  EXPECT_TRUE(fragd::filter_map(v, {0, "Normal"}).ok());  // nothing to filter, no error
  auto png = fragd::write_map_png(v, "/tmp/never-written.png");
  ASSERT_FALSE(png.ok());
  EXPECT_NE(png.error().message.find("Permission denied"), std::string::npos);

  a.erase("scan_error");
  EXPECT_EQ(parsed(a).scan_error, "fragd gave no reason");
}

TEST(MapView, FilterByNodeAndZone) {
  fragd::MapView all = parsed(good_answer());

  fragd::MapView v = all;
  ASSERT_TRUE(fragd::filter_map(v, {1, std::nullopt}).ok());
  ASSERT_EQ(v.zones.size(), 1u);
  EXPECT_EQ(v.zones[0].node, 1);
  ASSERT_EQ(v.pollution->blocks->size(), 1u);  // only the block inside node 1's zone
  EXPECT_EQ((*v.pollution->blocks)[0].block, 12800u);
  EXPECT_EQ(v.pollution->tracked_blocks, 12u);  // totals stay host-wide
  EXPECT_EQ(v.pollution->top.size(), 2u);

  v = all;
  ASSERT_TRUE(fragd::filter_map(v, {std::nullopt, "normal"}).ok());  // any case
  ASSERT_EQ(v.zones.size(), 2u);
  EXPECT_EQ(v.zones[0].zone, "Normal");
  EXPECT_EQ(v.zones[1].node, 1);
  EXPECT_EQ(v.pollution->blocks->size(), 2u);

  v = all;
  ASSERT_TRUE(fragd::filter_map(v, {0, "DMA32"}).ok());
  ASSERT_EQ(v.zones.size(), 1u);
  EXPECT_TRUE(v.pollution->blocks->empty());

  v = all;
  ASSERT_TRUE(fragd::filter_map(v, {}).ok());
  EXPECT_EQ(v.zones.size(), 3u);

  v = all;
  auto none = fragd::filter_map(v, {1, "DMA32"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "no zone of fragd's map matches node 1, zone DMA32 (there are node 0 DMA32, node 0 Normal, node 1 Normal)");

  json a = good_answer();
  ASSERT_TRUE(fragd::filter_map_answer(a, {0, std::nullopt}).ok());
  ASSERT_EQ(a["scan"]["zones"].size(), 2u);
  EXPECT_EQ(a["scan"]["zones"][1]["zone"], "Normal");
  EXPECT_EQ(a["scan"]["zones"][1]["node"], 0);
  ASSERT_EQ(a["pollution"]["blocks"].size(), 1u);
  EXPECT_EQ(a["pollution"]["blocks"][0]["block"], 2050);
  EXPECT_EQ(a["scan"]["pages_read"], 6553600);  // the rest untouched
  EXPECT_TRUE(parsed(a).scanned);               // still a valid answer

  json b = good_answer();
  EXPECT_FALSE(fragd::filter_map_answer(b, {7, std::nullopt}).ok());
  json bad = good_answer();
  bad["scan"]["zones"][0]["classes"] = "zzzz";
  EXPECT_FALSE(fragd::filter_map_answer(bad, {0, std::nullopt}).ok());
}

TEST(MapView, FormatText) {
  fragd::MapTextOptions opt;
  opt.utc_times = true;
  const std::string t = fragd::format_map_text(parsed(good_answer()), opt);

  EXPECT_EQ(t.rfind("pageblock map: scanned 2025-11-21 04:40:00 UTC (3s ago) in 412ms, 6553600 pages read; "
                    "one block = 2 MiB (order 9)\n",
                    0),
            0u)
      << t;
  EXPECT_NE(t.find("\nnode 0 DMA32: pfn 0x1000-0x1800 (8 MiB), 4 blocks: 1 free, 2 movable, 0 hybrid, 1 unmovable, "
                   "0 huge, 0 offline\n"
                   "  hugepages of 2 MiB: 1 free, +1 by compaction (migrating 128 pages, 0.5 MiB), 0 polluted; "
                   "1290 pages free\n"),
            std::string::npos)
      << t;
  // DMA32's row starts at block 0 (address 0, a 1 GiB boundary: '>'): blocks 0..7 are outside the zone.
  EXPECT_NE(t.find("\n>          0x0         mm.U\n"), std::string::npos) << t;
  // Normal: block 2048 = 0x100000000 (4 GiB, marked); 64 blocks in 4 groups, then the next row of 6 (not at 1 GiB).
  EXPECT_NE(t.find("\n>  0x100000000 .mxUH-.mxUH-.mxU H-.mxUH-.mxUH-.m xUH-.mxUH-.mxUH- .mxUH-.mxUH-.mxU\n"
                   "   0x108000000 H-.mxU\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("\nnode 1 Normal: pfn 0x640000-0x640600 (6 MiB), 3 blocks:"), std::string::npos) << t;
  EXPECT_NE(t.find("\n>  0x640000000 x.m\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\nlegend: . free  m movable  x hybrid  U unmovable  H huge  - offline (one character = 2 MiB, "
                   "one row = 128 MiB; '>' starts a row at a 1 GiB boundary)\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("pollution (unmovable pages in movable blocks, whole host): 12 blocks, 40 pages tracked, "
                   "1 events untracked\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("\n  bash                        7       10       30\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\n  0x100400000       0      9     11 unmovable          42 bash             7\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(count_of(t, "\nnode "), 3u);

  // Summary only (--png): headers and pollution, no rows, no legend.
  opt.rows = false;
  const std::string s = fragd::format_map_text(parsed(good_answer()), opt);
  EXPECT_EQ(count_of(s, "\nnode "), 3u);
  EXPECT_EQ(s.find("0x100000000 "), std::string::npos) << s;
  EXPECT_EQ(s.find("legend"), std::string::npos) << s;
  EXPECT_NE(s.find("pollution ("), std::string::npos) << s;

  // Without pollution programs; a control character in a zone name.
  json a = good_answer();
  a["pollution"] = nullptr;
  a["scan"]["zones"][0]["zone"] = "DM\x1b" "A";
  const std::string p = fragd::format_map_text(parsed(a), opt);
  EXPECT_NE(p.find("pollution: not tracked (fragd's pollution programs are not attached)\n"), std::string::npos);
  EXPECT_NE(p.find("node 0 DM?A:"), std::string::npos) << p;

  // Rows of 16 blocks: addresses step by 32 MiB.
  fragd::MapTextOptions narrow;
  narrow.row_blocks = 16;
  narrow.utc_times = true;
  const std::string n = fragd::format_map_text(parsed(good_answer()), narrow);
  EXPECT_NE(n.find("\n   0x102000000 H-.mxUH-.mxUH-.m\n"), std::string::npos) << n;
}

TEST(MapView, FormatKib) {
  EXPECT_EQ(fragd::format_size_kib(2048), "2 MiB");
  EXPECT_EQ(fragd::format_size_kib(22020096), "21 GiB");
  EXPECT_EQ(fragd::format_size_kib(1572864), "1.5 GiB");
  EXPECT_EQ(fragd::format_size_kib(16380), "16.0 MiB");
  EXPECT_EQ(fragd::format_size_kib(64), "64 KiB");
}

namespace {

// A PNG read back with cairo.
struct Png {
  cairo_surface_t* s = nullptr;
  explicit Png(const std::string& path) : s(cairo_image_surface_create_from_png(path.c_str())) {}
  ~Png() { cairo_surface_destroy(s); }
  bool ok() const { return cairo_surface_status(s) == CAIRO_STATUS_SUCCESS; }
  int width() const { return cairo_image_surface_get_width(s); }
  int height() const { return cairo_image_surface_get_height(s); }
  uint32_t rgb(int x, int y) const {
    const unsigned char* row = cairo_image_surface_get_data(s) + y * cairo_image_surface_get_stride(s);
    return reinterpret_cast<const uint32_t*>(row)[x] & 0xffffff;
  }
  // How many pixels of `rgb` in the rectangle.
  size_t count(uint32_t c, int x0, int y0, int x1, int y1) const {
    size_t n = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) n += rgb(x, y) == c;
    return n;
  }
};

std::string temp_png(const char* name) {
  return ::testing::TempDir() + "fragd_map_test_" + std::to_string(getpid()) + "_" + name + ".png";
}

// A 24 GiB host of the machine's shape: DMA (8 blocks), DMA32 with the PCI
// hole offline, Normal of 10752 blocks in a movable band at 128 pages.
json big_answer() {
  json a = good_answer();
  std::string dma32;
  std::vector<uint64_t> dma32_used;
  for (uint64_t b = 8; b < 2048; ++b) {
    dma32 += b >= 1536 ? '-' : b % 17 == 0 ? '.' : 'm';
    dma32_used.push_back(b >= 1536 || b % 17 == 0 ? 0 : 128 + b % 5);
  }
  std::string normal;
  std::vector<uint64_t> normal_used;
  for (uint64_t i = 0; i < 10752; ++i) {
    const char c = i % 31 == 0 ? 'x' : i % 13 == 0 ? '.' : i % 97 == 0 ? 'U' : (i >= 7000 && i < 7400) ? 'H' : 'm';
    normal += c;
    normal_used.push_back(c == '.' ? 0 : c == 'H' ? 512 : c == 'U' ? 480 : c == 'x' ? 200 : 120 + (i * 7) % 17);
  }
  a["scan"]["zones"] = json::array({zone_json(0, "DMA", 1, 4096, "-UUUUUUU", {0, 9, 20, 30, 40, 50, 60, 70}),
                                    zone_json(0, "DMA32", 4096, 1048576, dma32, dma32_used),
                                    zone_json(0, "Normal", 1048576, 6553600, normal, normal_used)});
  return a;
}

}  // namespace

TEST(MapPng, DrawsEveryBlockInItsClassColour) {
  const fragd::MapView v = parsed(good_answer());
  const std::string path = temp_png("small");
  fragd::MapPngOptions opt;
  opt.host = "testhost";
  opt.utc_times = true;
  auto info = fragd::write_map_png(v, path, opt);
  ASSERT_TRUE(info.ok()) << info.error().message;

  Png png(path);
  ASSERT_TRUE(png.ok()) << cairo_status_to_string(cairo_surface_status(png.s));
  const fragd::MapPngLayout L = fragd::map_png_layout(v);
  EXPECT_EQ(png.width(), L.width);
  EXPECT_EQ(png.height(), L.height);
  EXPECT_EQ(info->width, L.width);
  EXPECT_EQ(info->height, L.height);
  EXPECT_GT(info->bytes, 1000u);
  EXPECT_EQ(L.cols, 64u);  // few blocks: the largest cells
  EXPECT_EQ(L.cell, 16);

  // The cell of every block, in every zone, has its class's colour.
  for (size_t z = 0; z < v.zones.size(); ++z)
    for (uint64_t i = 0; i < v.zones[z].blocks(); ++i) {
      const uint32_t want = fragd::map_class_rgb(v.zones[z].classes[i]);
      EXPECT_EQ(png.rgb(L.cell_x(v, z, i), L.cell_y(v, z, i)), want) << "zone " << z << " block " << i;
    }
  // Normal's second row holds blocks 2112..2117 (cols 0..5), then is blank.
  EXPECT_EQ(L.cell_y(v, 1, 64), L.cell_y(v, 1, 0) + L.cell);
  EXPECT_EQ(png.rgb(L.cell_x(v, 1, 69) + L.cell, L.cell_y(v, 1, 69)), 0xffffffu);

  // The plot has points of every class present (drawn with the class colour).
  std::set<uint32_t> seen;
  for (uint32_t c : {0u, 1u, 2u, 3u, 4u, 5u}) {
    const uint32_t rgb = fragd::map_class_rgb(static_cast<BlockClass>(c));
    if (png.count(rgb, L.plot_x, L.plot_y, L.plot_x + L.plot_w, L.plot_y + L.plot_h) > 0) seen.insert(rgb);
  }
  EXPECT_EQ(seen.size(), fragd::kBlockClasses);
  // A full block (H, 512 pages) is near the top of the plot, a free one near the bottom.
  const uint32_t huge = fragd::map_class_rgb(BlockClass::Huge);
  EXPECT_GT(png.count(huge, L.plot_x, L.plot_y, L.plot_x + L.plot_w, L.plot_y + 12), 0u);
  EXPECT_EQ(png.count(huge, L.plot_x, L.plot_y + L.plot_h / 2, L.plot_x + L.plot_w, L.plot_y + L.plot_h), 0u);
  const uint32_t free_rgb = fragd::map_class_rgb(BlockClass::Free);
  EXPECT_GT(png.count(free_rgb, L.plot_x, L.plot_y + L.plot_h - 12, L.plot_x + L.plot_w, L.plot_y + L.plot_h), 0u);
  // The class colours differ from each other and from white.
  std::set<uint32_t> colours{0xffffff};
  for (size_t c = 0; c < fragd::kBlockClasses; ++c) colours.insert(fragd::map_class_rgb(static_cast<BlockClass>(c)));
  EXPECT_EQ(colours.size(), fragd::kBlockClasses + 1);
  std::remove(path.c_str());
}

TEST(MapPng, BigHostStaysCompact) {
  const fragd::MapView v = parsed(big_answer());
  const std::string path = temp_png("big");
  auto info = fragd::write_map_png(v, path);
  ASSERT_TRUE(info.ok()) << info.error().message;
  Png png(path);
  ASSERT_TRUE(png.ok());
  const fragd::MapPngLayout L = fragd::map_png_layout(v);
  EXPECT_EQ(png.width(), L.width);
  EXPECT_EQ(png.height(), L.height);
  EXPECT_EQ(L.cols, 256u);  // 12800 blocks: 4 px cells
  EXPECT_LT(png.width(), 1400);
  EXPECT_LT(png.height(), 1000);
  EXPECT_LT(info->bytes, 1000000u);
  for (size_t z = 0; z < v.zones.size(); ++z)
    for (uint64_t i = 0; i < v.zones[z].blocks(); i += 37)
      ASSERT_EQ(png.rgb(L.cell_x(v, z, i), L.cell_y(v, z, i)), fragd::map_class_rgb(v.zones[z].classes[i]))
          << "zone " << z << " block " << i;
  // The movable band: most movable points sit at 120..136 pages in use.
  const uint32_t movable = fragd::map_class_rgb(BlockClass::Movable);
  auto y_of = [&](double used) { return L.plot_y + static_cast<int>(L.plot_h * (1 - used / 512.0)); };
  size_t band = png.count(movable, L.plot_x, y_of(150), L.plot_x + L.plot_w, y_of(110));
  size_t all = png.count(movable, L.plot_x, L.plot_y, L.plot_x + L.plot_w, L.plot_y + L.plot_h);
  EXPECT_GT(band, all * 9 / 10);
  std::remove(path.c_str());
}

TEST(MapPng, UnwritablePathIsNamed) {
  const fragd::MapView v = parsed(good_answer());
  auto r = fragd::write_map_png(v, "/nonexistent-fragd-dir/map.png");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent-fragd-dir/map.png"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("No such file or directory"), std::string::npos) << r.error().message;

  // A write that fails on an existing path leaves the path as it was (here a
  // device that is always full), and says so.
  struct stat before {};
  if (::stat("/dev/full", &before) == 0 && S_ISCHR(before.st_mode)) {
    auto full = fragd::write_map_png(v, "/dev/full");
    ASSERT_FALSE(full.ok());
    EXPECT_EQ(full.error().message, "cannot write /dev/full: No space left on device (left incomplete)");
    struct stat after {};
    ASSERT_EQ(::stat("/dev/full", &after), 0);
    EXPECT_TRUE(S_ISCHR(after.st_mode));
    EXPECT_EQ(after.st_rdev, before.st_rdev);
  }

  fragd::MapView empty = v;
  empty.zones.clear();
  auto e = fragd::write_map_png(empty, temp_png("empty"));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("no zone"), std::string::npos);
}

// A sampled round's zone: '?' for blocks not read yet, counts that are estimates, the intervals
// printed beside the estimates.
TEST(MapView, SampledZoneParsesAndPrintsItsIntervals) {
  json a = good_answer();
  json& z = a["scan"]["zones"][0];
  z["classes"] = "m??U";
  z["counts"] = {{"free", 0}, {"movable", 2}, {"hybrid", 0}, {"unmovable", 2}, {"huge", 0}, {"offline", 0}};
  z["sample"] = {{"blocks", 2}, {"compaction", {0, 2}}, {"polluted", {0, 1}}};
  a["scan"]["map_age_ns"] = 7000000000ULL;
  const fragd::MapView v = parsed(a);
  ASSERT_TRUE(v.zones[0].sample.has_value());
  EXPECT_EQ(v.zones[0].sample->blocks, 2u);
  EXPECT_EQ(v.zones[0].sample->compaction.hi, 2u);
  EXPECT_EQ(v.zones[0].classes[1], BlockClass::Unseen);
  EXPECT_EQ(v.map_age_ns.value_or(0), 7000000000ULL);
  EXPECT_FALSE(v.zones[1].sample.has_value());
  // Round trip through to_json.
  json back = v;
  EXPECT_EQ(back["scan"]["zones"][0]["classes"], "m??U");
  EXPECT_EQ(back["scan"]["zones"][0]["sample"]["compaction"], json::array({0, 2}));
  const std::string text = fragd::format_map_text(v, {});
  EXPECT_NE(text.find("(2 sampled, estimated)"), std::string::npos) << text;
  EXPECT_NE(text.find("+1 (95%: 0-2) by compaction"), std::string::npos) << text;
  EXPECT_NE(text.find("? not read yet"), std::string::npos) << text;
  EXPECT_NE(text.find("the oldest read 7s ago"), std::string::npos) << text;
}
