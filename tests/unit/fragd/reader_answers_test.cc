// SPDX-License-Identifier: Apache-2.0
// What a reader of the control socket may see (protocol/readers.h): root every field; any
// other uid (a member of socket_group) no block at a physical address and no polluter, said
// in "withheld". The answers fragd builds for them (concerns/<concern>/concern.cc) carry names that are
// UTF-8 and never a kernel address; fragctl shows what it got and says what it did not.
#include "protocol/readers.h"

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "fragctl/render/map_png.h"
#include "fragctl/render/map_view.h"
#include "fragctl/render/status.h"
#include "concerns/attribution/concern.h"
#include "protocol/wire.h"
#include "contract.h"

using nlohmann::json;

namespace fragd {
namespace {

// The recorded map answer (a live fragd's, as root) with polluted blocks and polluters.
MapView root_map() {
  auto v = read_answer<MapView>(contract::answer("map.json"), "map");
  EXPECT_TRUE(v.ok()) << v.error().message;
  MapView m = *v;
  EXPECT_TRUE(m.pollution.has_value());
  m.pollution->top.push_back({"bash", 1234, 3, 9});
  m.pollution->blocks->push_back({4242, 0, 3, 5, 1763699990000000000ULL, 1763699999000000000ULL, 77, "bash", 1234,
                                  "Unmovable"});
  m.pollution->tracked_blocks = 1;
  m.pollution->tracked_pages = 3;
  return m;
}

bool has_key(const json& j, const std::string& key) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() == key || has_key(it.value(), key)) return true;
  } else if (j.is_array()) {
    for (const auto& x : j)
      if (has_key(x, key)) return true;
  }
  return false;
}

TEST(Readers, OnlyUidZeroIsRoot) {
  EXPECT_EQ(reader_of(0), Reader::Root);
  EXPECT_EQ(reader_of(1000), Reader::Other);
  EXPECT_EQ(reader_of(65534), Reader::Other);
  EXPECT_EQ(reader_of(-1), Reader::Other);  // SO_PEERCRED failed: not root
}

TEST(Readers, RootGetsTheWholeMap) {
  MapView v = root_map();
  const json before = v;
  restrict_map(v, Reader::Root);
  EXPECT_EQ(json(v), before);
  EXPECT_FALSE(has_key(before, "withheld"));
  EXPECT_TRUE(has_key(before, "classes") && has_key(before, "used") && has_key(before, "pid"));
}

TEST(Readers, OthersGetEachZonesCountsButNoBlockAndNoPolluter) {
  const MapView whole = root_map();
  MapView v = whole;
  restrict_map(v, Reader::Other);
  const json j = v;
  // Nothing placed at a physical address, and nobody named.
  for (const char* key : {"classes", "used", "blocks", "pid", "comm", "cgroup_id"}) EXPECT_FALSE(has_key(j, key)) << key;
  ASSERT_TRUE(j.contains("withheld"));
  EXPECT_NE(j["withheld"].get<std::string>().find("root"), std::string::npos);
  EXPECT_TRUE(j["pollution"]["top"].empty());
  // What /proc/zoneinfo, /proc/pagetypeinfo and /metrics show every user stays.
  ASSERT_EQ(j["scan"]["zones"].size(), whole.zones.size());
  for (size_t i = 0; i < whole.zones.size(); i++) {
    const json& z = j["scan"]["zones"][i];
    EXPECT_EQ(z["start_pfn"], whole.zones[i].start_pfn);
    EXPECT_EQ(z["free_pages"], whole.zones[i].free_pages);
    EXPECT_EQ(z["hugepages"]["compaction"], whole.zones[i].hugepages_compaction);
    for (size_t c = 0; c < kBlockClasses; c++)
      EXPECT_EQ(z["counts"][block_class_name(static_cast<BlockClass>(c))], whole.zones[i].counts[c]);
  }
  EXPECT_EQ(j["pollution"]["tracked_blocks"], 1u);
  EXPECT_EQ(j["pollution"]["tracked_pages"], 3u);

  // fragctl reads it, shows the counts and says what fragd kept back; no picture to draw.
  auto back = parse_map_answer(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(json(*back), j);
  const std::string text = format_map_text(*back, {});
  EXPECT_NE(text.find("withheld"), std::string::npos) << text;
  EXPECT_NE(text.find("node 0 Normal: pfn"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(whole.zones.back().blocks()) + " blocks"), std::string::npos) << text;
  EXPECT_EQ(text.find("legend:"), std::string::npos) << text;
  auto png = write_map_png(*back, "/tmp/fragd-withheld-never-written.png");
  ASSERT_FALSE(png.ok());
  EXPECT_NE(png.error().message.find("as root"), std::string::npos) << png.error().message;
}

TEST(Readers, AMapThatSaysWithheldMustNotCarryIt) {
  json j = root_map();
  j["withheld"] = "x";
  auto r = parse_map_answer(j);  // classes and used still there
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("scan.zones[0].classes: present"), std::string::npos) << r.error().message;
  // Without the blocks, the counts must still cover the zone.
  MapView v = root_map();
  restrict_map(v, Reader::Other);
  j = v;
  j["scan"]["zones"][0]["counts"]["free"] = j["scan"]["zones"][0]["counts"]["free"].get<uint64_t>() + 1;
  r = parse_map_answer(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("scan.zones[0].counts:"), std::string::npos) << r.error().message;
  // A root answer without its blocks is still malformed.
  j = root_map();
  j["scan"]["zones"][1].erase("classes");
  EXPECT_FALSE(parse_map_answer(j).ok());
}

TEST(Readers, OthersGetTheStatusButThePolluters) {
  StatusReply s;
  s.version = "0.1.0";
  s.nodes.push_back({});
  s.pollution = root_map().pollution;
  s.pollution->blocks.reset();  // status never carries them
  StatusReply root = s;
  restrict_status(root, Reader::Root);
  EXPECT_EQ(json(root), json(s));
  restrict_status(s, Reader::Other);
  const json j = s;
  EXPECT_TRUE(j["pollution"]["top"].empty());
  EXPECT_EQ(j["pollution"]["tracked_blocks"], 1u);
  EXPECT_FALSE(has_key(j, "comm"));
  ASSERT_TRUE(j.contains("withheld"));
  auto text = format_status(j);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_NE(text->find("withheld by fragd"), std::string::npos) << *text;
}

// The top answer, for every reader: a cgroup whose name is not UTF-8 is escaped as its
// /metrics label is, and a stack's frames without a symbol are counted, never shown.
TEST(Readers, TopCarriesNoAddressAndOnlyUtf8) {
  AttributionView a;
  a.cgroups = {{"/fragd-attr-c\xff\xfe", {3, 3000}}, {"other", {0, 0}}};
  a.callsites = {{"unknown", {3, 3000}}, {"other", {0, 0}}};
  StackView sv;
  sv.stack_id = 4;
  sv.consumer = "hugetlb";
  sv.callsite = "unknown";
  sv.unnamed_frames = 9;
  sv.attr = {3, 3000};
  a.stacks.push_back(sv);
  const TopReply r = top_reply(&a, nullptr, 1);
  EXPECT_EQ(r.cgroups[0].name, "/fragd-attr-c\\xff\\xfe");
  ASSERT_EQ(r.stacks.size(), 1u);
  EXPECT_TRUE(r.stacks[0].frames.empty());
  EXPECT_EQ(r.stacks[0].unnamed_frames, 9u);
  const std::string wire = json(r).dump();  // strict: throws on a string that is not UTF-8
  EXPECT_EQ(wire.find("0x"), std::string::npos) << wire;
  auto back = read_answer<TopReply>(json::parse(wire), "top");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->stacks[0].unnamed_frames, 9u);
}

}  // namespace
}  // namespace fragd
