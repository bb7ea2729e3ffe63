// SPDX-License-Identifier: Apache-2.0
// When the attribution maps are read, and what a sweep adds.
#include <gtest/gtest.h>

#include "concerns/attribution/rounds.h"

namespace {

using namespace fragd;

constexpr uint64_t kS = 1'000'000'000ULL;

struct Cgroups : CgroupLookup {
  std::map<uint64_t, std::string> paths{{42, "/jobs/a"}};
  std::optional<std::string> path(uint64_t id) override {
    auto it = paths.find(id);
    return it == paths.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  bool exists(uint64_t id, const std::string& p) override { return paths.count(id) && paths[id] == p; }
};

struct Harness {
  AttributionRounds rounds{20, 20};
  Cgroups cgroups;
  alloc_stats st{};
  uint64_t reads = 0, anon_reads = 0;
  bool fail_read = false, fail_anon = false;
  std::vector<std::pair<std::string, std::string>> warned, cleared;

  void stall(uint64_t ns) {
    st.direct_entries[9][FRAGD_PHASE_COMPACTION] += 1;
    st.phase_ns[9][FRAGD_PHASE_COMPACTION] += ns;
  }
  void tick(uint64_t now) {
    AttributionMaps maps{[&](std::vector<SiteCount>& s, std::vector<CgroupCount>& c) -> Result<void> {
                           reads++;
                           if (fail_read) return make_error("map stall_sites: EPERM", EPERM);
                           const uint64_t e = st.direct_entries[9][FRAGD_PHASE_COMPACTION];
                           const uint64_t ns = st.phase_ns[9][FRAGD_PHASE_COMPACTION];
                           if (e) {
                             c.push_back({42, {e, ns}});
                             SiteCount site;
                             site.key.order = 9;
                             site.key.stack_id = -1;
                             site.attr = {e, ns};
                             s.push_back(site);
                           }
                           return {};
                         },
                         [](int32_t) -> Result<std::vector<uint64_t>> { return std::vector<uint64_t>{}; },
                         [](uint64_t) {}};
    rounds.tick(now, st, maps, nullptr, cgroups,
                [&](const std::string& path) -> Result<CgroupAnon> {
                  anon_reads++;
                  if (fail_anon) return make_error(path + "/memory.stat: ENOENT", ENOENT);
                  CgroupAnon a;
                  a.anon_bytes = 4096;
                  return a;
                },
                {[&](const std::string& k, const std::string& m) { warned.emplace_back(k, m); },
                 [&](const std::string& k, const std::string& m) { cleared.emplace_back(k, m); }});
  }
};

TEST(AttributionRounds, ReadsWhenTheStallCountersMoveAndSweepsEveryTenSeconds) {
  Harness h;
  EXPECT_EQ(h.rounds.view(), nullptr);
  h.tick(100 * kS);  // the first tick: a round and a sweep
  EXPECT_EQ(h.reads, 1u);
  ASSERT_NE(h.rounds.view(), nullptr);
  h.tick(101 * kS);  // nothing moved, no sweep due
  h.tick(105 * kS);
  EXPECT_EQ(h.reads, 1u);
  h.stall(5000);
  h.tick(106 * kS);  // the counters moved
  EXPECT_EQ(h.reads, 2u);
  EXPECT_EQ(h.anon_reads, 0u) << "not a sweep";
  h.tick(110 * kS);  // 10 s after the last sweep
  EXPECT_EQ(h.reads, 3u);
  EXPECT_EQ(h.anon_reads, 1u) << "the one cgroup with a series: /jobs/a";
  ASSERT_NE(h.rounds.cgroup_anon(), nullptr);
  EXPECT_EQ(h.rounds.cgroup_anon()->count("/jobs/a"), 1u);
  EXPECT_EQ(h.rounds.rounds(), 3u);
}

TEST(AttributionRounds, AMapThatWillNotReadKeepsTheLastRoundAndSaysSo) {
  Harness h;
  h.stall(5000);
  h.tick(100 * kS);
  h.fail_read = true;
  h.stall(7000);
  h.tick(101 * kS);
  EXPECT_EQ(h.rounds.rounds(), 1u);
  ASSERT_FALSE(h.warned.empty());
  bool said = false;
  for (const auto& [k, m] : h.warned) said |= k == "attribution" && m.find("EPERM") != std::string::npos;
  EXPECT_TRUE(said);
  h.fail_read = false;
  h.tick(102 * kS);  // the counters moved since the last good round: read again
  EXPECT_EQ(h.rounds.rounds(), 2u);
  EXPECT_EQ(h.cleared.front().first, "attribution");
}

TEST(AttributionRounds, NoSymbolsAndNoMemoryStatAreWarnedAbout) {
  Harness h;
  h.fail_anon = true;
  h.stall(5000);
  h.tick(100 * kS);
  std::set<std::string> keys;
  for (const auto& [k, _] : h.warned) keys.insert(k);
  EXPECT_TRUE(keys.count("symbols"));
  EXPECT_TRUE(keys.count("cgroup_anon"));
  EXPECT_TRUE(h.rounds.cgroup_anon()->empty());
}

}  // namespace
