// SPDX-License-Identifier: Apache-2.0
// The "top" answer: a round trip through JSON, a malformed answer named by its
// field, intervals row by row, and the screen fragctl draws from it.
#include "protocol/top.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fragctl/render/top.h"
#include "protocol/wire.h"

namespace fragd {
namespace {

TopReply sample(uint64_t scale) {
  TopReply r;
  r.uptime_ns = 10'000'000'000ULL * scale;
  r.symbols = true;
  r.nodes = {{0, 87, 120, 0}, {1, 12, 3000, 2}};
  r.cgroups = {{"/kubepods.slice/pod-a", {10 * scale, 4'000'000 * scale}},
               {"/system.slice/db.service", {3 * scale, 9'000'000 * scale}},
               {"other", {1 * scale, 1000 * scale}}};
  r.consumers = {{9, "hugetlb", {5 * scale, 2'000'000 * scale}}, {9, "thp_fault", {9 * scale, 11'001'000 * scale}},
                 {3, "slab", {0, 0}}};
  r.callsites = {{"only_alloc_fresh_hugetlb_folio", {5 * scale, 2'000'000 * scale}},
                 {"vma_alloc_anon_folio_pmd", {9 * scale, 11'001'000 * scale}},
                 {"other", {0, 0}}};
  r.stacks = {{"thp_fault", "vma_alloc_anon_folio_pmd", {"try_to_compact_pages", "vma_alloc_anon_folio_pmd"},
               {9 * scale, 11'001'000 * scale}}};
  return r;
}

TEST(TopAnswer, RoundTrip) {
  const TopReply r = sample(1);
  const nlohmann::json j = r;
  auto back = read_answer<TopReply>(j, "top");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(nlohmann::json(*back), j);
  EXPECT_EQ(back->nodes[1].free_1g, 2u);
  EXPECT_EQ(back->stacks[0].frames[1], "vma_alloc_anon_folio_pmd");
}

TEST(TopAnswer, MalformedFieldIsNamed) {
  nlohmann::json j = sample(1);
  j["cgroups"][1]["stall_ns"] = "x";
  auto r = read_answer<TopReply>(j, "top");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("top.cgroups[1].stall_ns"), std::string::npos) << r.error().message;
  j = sample(1);
  j.erase("symbols");
  r = read_answer<TopReply>(j, "top");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("symbols"), std::string::npos) << r.error().message;
}

// The ranges the table declares (.within): each bound holds, and one past it is named with it.
TEST(TopAnswer, RangesFromTheTable) {
  struct Case {
    const char* pointer;
    nlohmann::json ok, bad;
    const char* expect;
  };
  const Case cases[] = {
      {"/nodes/0/score", 100, 101, "top.nodes[0].score is out of range 0..100"},
      {"/nodes/1/node", 1 << 20, (1 << 20) + 1, "top.nodes[1].node is out of range 0..1048576"},
      {"/nodes/1/node", 0, -1, "top.nodes[1].node is out of range 0..1048576"},
      {"/consumers/0/order", 63, 64, "top.consumers[0].order is out of range 0..63"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = sample(1);
    j[nlohmann::json::json_pointer(c.pointer)] = c.ok;
    auto r = read_answer<TopReply>(j, "top");
    EXPECT_TRUE(r.ok()) << c.pointer << " = " << c.ok << ": " << r.error().message;
    j[nlohmann::json::json_pointer(c.pointer)] = c.bad;
    r = read_answer<TopReply>(j, "top");
    ASSERT_FALSE(r.ok()) << c.pointer << " = " << c.bad << " accepted";
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
  }
}

TEST(TopAnswer, IntervalSubtractsRowByRow) {
  TopReply newer = sample(3), older = sample(1);
  newer.cgroups.push_back({"/new", {2, 500}});  // only in the newer: counts whole
  const TopReply d = top_interval(newer, older);
  EXPECT_EQ(d.uptime_ns, 20'000'000'000ULL);
  EXPECT_EQ(d.cgroups[0].count.stalls, 20u);
  EXPECT_EQ(d.cgroups[0].count.stall_ns, 8'000'000u);
  EXPECT_EQ(d.cgroups.back().name, "/new");
  EXPECT_EQ(d.cgroups.back().count.stalls, 2u);
  EXPECT_EQ(d.consumers[1].count.stalls, 18u);
  EXPECT_EQ(d.stacks[0].count.stall_ns, 22'002'000u);
  EXPECT_EQ(d.nodes[0].score, 87u);  // nodes are the newer's
}

TEST(TopScreen, SortedTablesWithOtherLast) {
  TopViewOptions o;
  const std::string by_time = format_top_text(sample(1), o);
  EXPECT_NE(by_time.find("node 1  score  12  free 2 MiB blocks     3000  free 1 GiB blocks    2"), std::string::npos)
      << by_time;
  // By stall time the database's cgroup comes first, by stalls the pod's.
  EXPECT_LT(by_time.find("/system.slice/db.service"), by_time.find("/kubepods.slice/pod-a"));
  o.sort = "stalls";
  const std::string by_stalls = format_top_text(sample(1), o);
  EXPECT_GT(by_stalls.find("/system.slice/db.service"), by_stalls.find("/kubepods.slice/pod-a"));
  EXPECT_GT(by_time.find("\nother"), by_time.find("/kubepods.slice/pod-a"));
  EXPECT_EQ(by_time.find("slab"), std::string::npos);  // a consumer without stalls is left out
  EXPECT_EQ(by_time.find("STACKS"), std::string::npos);
  o.stacks = true;
  o.interval_s = 1;
  const std::string st = format_top_text(sample(1), o);
  EXPECT_NE(st.find("STACKS\nvma_alloc_anon_folio_pmd (thp_fault): 9 stalls"), std::string::npos) << st;
  EXPECT_NE(st.find("    try_to_compact_pages\n"), std::string::npos);
  EXPECT_NE(st.find("%CPU"), std::string::npos);
  EXPECT_NE(st.find("  1.1%"), std::string::npos) << st;  // 11 ms of stalls in a 1 s interval
}

TEST(TopScreen, NoSymbolsIsSaid) {
  TopReply r = sample(1);
  r.symbols = false;
  EXPECT_NE(format_top_text(r, {}).find("no kernel symbols"), std::string::npos);
}

}  // namespace
}  // namespace fragd
