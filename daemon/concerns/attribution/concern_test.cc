// SPDX-License-Identifier: Apache-2.0
// Who stalls, as the Daemon drives its concern: the maps are read through the port it is given
// (fakes here: no BPF, no root), only once the per-CPU counters of a tick moved; the `top`
// answer and the families name the cgroup by its path under the cgroup v2 tree and fold what is
// beyond attribution.top_cgroups into "other", forgetting the folded cgroups' entries.
#include "concerns/attribution/concern.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "kernel/procfs_fixtures.h"
#include "fragd/concern_fixtures.h"

namespace {

using namespace fragd;

constexpr uint64_t kAttributionSecond = 1'000'000'000ULL;

struct AttributionHarness {
  fragd::test::TempDir dir;
  Shared sh{Config{}};
  std::map<uint64_t, stall_attr> cgroups;  // what map stall_cgroups holds
  uint64_t reads = 0;
  std::vector<uint64_t> forgotten;
  std::optional<StallsSnapshot> stalls;  // the tick's stalls maps
  std::optional<MemSnapshot> mem;  // the tick's /proc and sysfs

  AttributionHarness() {
    dir.write("sys/fs/cgroup/cgroup.controllers", "memory\n");
    dir.write("kallsyms", "ffffffff81000000 T __alloc_pages_slowpath\n");
    sh.cfg.sys_root = dir.path() + "/sys";
    sh.cfg.kallsyms_path = dir.path() + "/kallsyms";  // fragd deletes its copy once open
  }
  // A cgroup directory under the v2 tree; its id is the directory's inode, as the kernel's.
  uint64_t cgroup(const std::string& rel) {
    const std::string p = sh.cfg.sys_root + "/fs/cgroup" + rel;
    std::filesystem::create_directories(p);
    dir.write("sys/fs/cgroup" + rel + "/memory.stat", "anon 8388608\nanon_thp 4194304\n");
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
  }
  // One order-9 stall of `ns` in cgroup `id`, in the maps and in the tick's per-CPU counters.
  void stall(uint64_t id, uint64_t ns) {
    cgroups[id].entries++;
    cgroups[id].ns += ns;
    if (!stalls) stalls.emplace();
    stalls->alloc.direct_entries[9][FRAGD_PHASE_COMPACTION]++;
    stalls->alloc.phase_ns[9][FRAGD_PHASE_COMPACTION] += ns;
  }
  Tick at(uint64_t now) const {
    return Tick{.now = now, .mem = mem ? &*mem : nullptr, .stalls = stalls ? &*stalls : nullptr};
  }
  std::unique_ptr<AttributionConcern> concern() {
    return std::make_unique<AttributionConcern>(
        sh, AttributionMaps{[this](std::vector<SiteCount>& sites, std::vector<CgroupCount>& out) -> Result<void> {
                              reads++;
                              stall_attr all{};
                              for (const auto& [id, a] : cgroups) {
                                out.push_back({id, a});
                                all.entries += a.entries;
                                all.ns += a.ns;
                              }
                              SiteCount s;
                              s.key.order = 9;
                              s.key.stack_id = -1;
                              s.attr = all;
                              if (all.entries) sites.push_back(s);
                              return {};
                            },
                            [](int32_t) -> Result<std::vector<uint64_t>> { return std::vector<uint64_t>{}; },
                            [this](uint64_t id) {
                              forgotten.push_back(id);
                              cgroups.erase(id);
                            }},
        0);
  }
  nlohmann::json top(AttributionConcern& c) const {
    ControlRequest req;
    req.cmd = Command::Top;
    return *c.answer(req, Reader::Root, 0, at(0));
  }
};

uint64_t cgroup_stalls_in_top(const nlohmann::json& top, const std::string& cgroup) {
  for (const auto& c : top.at("cgroups"))
    if (c.at("cgroup") == cgroup) return c.at("stalls").get<uint64_t>();
  return 0;
}

TEST(AttributionConcern, ReadsTheMapsOnlyWhenTheTicksCountersMoved) {
  AttributionHarness h;
  const uint64_t a = h.cgroup("/jobs/a");
  auto c = h.concern();
  c->tick(h.at(100 * kAttributionSecond));
  EXPECT_EQ(h.reads, 0u) << "no snapshot of the per-CPU counters yet: nothing to compare";
  Families before;
  c->metrics(widest_plan(1), h.at(100 * kAttributionSecond), before);
  EXPECT_TRUE(before.empty()) << "no attribution families before a round read the maps";
  EXPECT_TRUE(h.top(*c).at("cgroups").empty());

  h.stall(a, 3000);
  c->tick(h.at(101 * kAttributionSecond));
  EXPECT_EQ(h.reads, 1u);
  c->tick(h.at(102 * kAttributionSecond));
  EXPECT_EQ(h.reads, 1u) << "counters unchanged and no sweep due: the hash maps are not read again";
  h.stall(a, 4000);
  c->tick(h.at(103 * kAttributionSecond));
  EXPECT_EQ(h.reads, 2u);
  Families after;
  c->metrics(widest_plan(1), h.at(103 * kAttributionSecond), after);
  EXPECT_TRUE(std::any_of(after.begin(), after.end(), [](const auto& f) { return f.name == "fragd_cgroup_stalls_total"; }));
  const nlohmann::json top = h.top(*c);
  EXPECT_EQ(cgroup_stalls_in_top(top, "/jobs/a"), 2u) << top.dump();
}

uint64_t all_cgroup_stalls_in_top(const nlohmann::json& top) {
  uint64_t n = 0;
  for (const auto& c : top.at("cgroups")) n += c.at("stalls").get<uint64_t>();
  return n;
}

TEST(AttributionConcern, CgroupsBeyondTheTopGoToOtherAReloadWidensItAndADeletedOneIsForgotten) {
  AttributionHarness h;
  h.sh.cfg.top_cgroups = 1;
  const uint64_t a = h.cgroup("/jobs/a"), b = h.cgroup("/jobs/b");
  auto c = h.concern();
  h.stall(a, 9000);
  h.stall(a, 9000);
  h.stall(b, 1000);
  c->tick(h.at(100 * kAttributionSecond));
  nlohmann::json top = h.top(*c);
  EXPECT_EQ(cgroup_stalls_in_top(top, "/jobs/a"), 2u) << "the most stall time has the one series: " << top.dump();
  EXPECT_EQ(cgroup_stalls_in_top(top, "/jobs/b"), 0u) << top.dump();
  EXPECT_EQ(cgroup_stalls_in_top(top, "other"), 1u) << top.dump();

  h.sh.cfg.top_cgroups = 2;
  c->reload();
  h.stall(b, 1000);
  c->tick(h.at(101 * kAttributionSecond));
  top = h.top(*c);
  EXPECT_EQ(cgroup_stalls_in_top(top, "/jobs/b"), 1u) << "attribution.top_cgroups 2 after the reload: a series from now on: "
                                           << top.dump();
  EXPECT_EQ(all_cgroup_stalls_in_top(top), 4u) << "every stall in one row: " << top.dump();

  std::filesystem::remove_all(h.sh.cfg.sys_root + "/fs/cgroup/jobs/a");
  h.stall(b, 1000);
  c->tick(h.at(102 * kAttributionSecond));
  top = h.top(*c);
  EXPECT_EQ(h.forgotten, std::vector<uint64_t>{a}) << "the deleted cgroup's map entry is deleted";
  EXPECT_EQ(cgroup_stalls_in_top(top, "/jobs/a"), 0u) << top.dump();
  EXPECT_EQ(all_cgroup_stalls_in_top(top), 5u) << "its stalls stay counted, in other: " << top.dump();
}

TEST(AttributionConcern, TheTopAnswerCarriesEachNodesFreeBlocks) {
  AttributionHarness h;
  h.mem.emplace();
  h.mem->zones.push_back(fragd::test::zone_with_free(0, {{9, 3}, {10, 2}}));
  auto c = h.concern();
  const nlohmann::json top = h.top(*c);
  ASSERT_EQ(top.at("nodes").size(), 1u) << top.dump();
  EXPECT_EQ(top.at("nodes")[0].at("free_2m_blocks").get<uint64_t>(), 7u) << "3 order-9 blocks and 2 order-10 ones of 2 each";
}

}  // namespace
