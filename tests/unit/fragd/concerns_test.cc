// SPDX-License-Identifier: Apache-2.0
// The concerns the Daemon holds, driven as it drives them (tick, metrics, reload) on fake
// /proc and /sys trees: no BPF, no root.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "concerns/act/concern.h"
#include "concerns/attribution/concern.h"
#include "concerns/memory/concern.h"
#include "concerns/pageblocks/concern.h"
#include "concerns/stalls/concern.h"
#include "concern_fixtures.h"
#include "kernel/procfs_fixtures.h"

namespace {

using namespace fragd;
using fragd::test::TempDir;
namespace fs = std::filesystem;

using fragd::test::family;

constexpr uint64_t kS = 1'000'000'000ULL;

// A two-node machine: the memory files of tests/fixtures/two_nodes as /proc, the node tree of
// tests/fixtures/machine/two_nodes as /sys.
struct TwoNodes {
  TempDir dir;
  std::string proc = dir.path() + "/proc", sys = dir.path() + "/sys";
  TwoNodes() {
    fs::create_directories(proc);
    fs::copy(fragd::test::kFixtures + "/machine/two_nodes/sys", sys, fs::copy_options::recursive);
    memory_files("two_nodes");
  }
  void memory_files(const std::string& shape) const {
    for (const char* f : {"buddyinfo", "zoneinfo", "pagetypeinfo", "vmstat", "meminfo"})
      fs::copy_file(fragd::test::kFixtures + "/" + shape + "/" + f, fs::path(proc) / f,
                    fs::copy_options::overwrite_existing);
  }
  // Node 1 goes offline: its zones leave /proc, its directory and its bit leave /sys.
  void node1_offline() const {
    memory_files("one_node");
    fs::remove_all(sys + "/devices/system/node/node1");
    dir.write("sys/devices/system/node/online", "0\n");
    dir.write("sys/devices/system/node/has_memory", "0\n");
  }
  Config config() const {
    Config c;
    c.proc_root = proc;
    c.sys_root = sys;
    c.tick_ns = kS;
    return c;
  }
};

std::set<int> nodes_of(const MemSnapshot& m) {
  std::set<int> n;
  for (const auto& z : m.zones)
    if (z.present_pages) n.insert(z.node);
  return n;
}

TEST(MemoryConcern, ANodeThatGoesOfflineLeavesTheSnapshotAndTheFactsRequestsAreCheckedAgainst) {
  TwoNodes m;
  Shared sh(m.config());
  MemoryConcern memory(sh);
  EXPECT_EQ(memory.facts().nodes, (std::vector<int>{0, 1})) << "the facts are read when the concern is made";
  memory.tick(Tick{100 * kS});
  ASSERT_TRUE(memory.snapshot());
  EXPECT_EQ(nodes_of(*memory.snapshot()), (std::set<int>{0, 1}));

  m.node1_offline();
  memory.tick(Tick{101 * kS});
  ASSERT_TRUE(memory.snapshot());
  EXPECT_EQ(nodes_of(*memory.snapshot()), (std::set<int>{0}));
  EXPECT_EQ(memory.facts().nodes, (std::vector<int>{0})) << "a node change makes the facts be read again";
  EXPECT_EQ(memory.collect_errors().count("nodes"), 0u);
}

// The facts are read again once after a node change, not at every tick from then on: a
// MemTotal that changes later with no node change is not seen until the next node change.
TEST(MemoryConcern, TheFactsAreReadOnceAfterANodeChangeNotAtEveryTick) {
  TwoNodes m;
  Shared sh(m.config());
  MemoryConcern memory(sh);
  memory.tick(Tick{100 * kS});
  m.node1_offline();
  memory.tick(Tick{101 * kS});
  ASSERT_EQ(memory.facts().nodes, (std::vector<int>{0}));
  const uint64_t total = memory.facts().mem_total_kib;
  ASSERT_GT(total, 0u);
  std::ifstream in(m.proc + "/meminfo");
  std::string meminfo((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = meminfo.find("MemTotal:");
  ASSERT_NE(at, std::string::npos);
  meminfo.replace(at, meminfo.find('\n', at) - at, "MemTotal:       " + std::to_string(total + 4096) + " kB");
  m.dir.write("proc/meminfo", meminfo);
  for (uint64_t s = 102; s < 200; s += 10) memory.tick(Tick{s * kS});
  EXPECT_EQ(memory.facts().mem_total_kib, total) << "the facts were read again at a tick with no node change";
}

TEST(MemoryConcern, ItsFamiliesComeFromTheLastSnapshotAndAReloadSetsTheForecastWindow) {
  TwoNodes m;
  Shared sh(m.config());
  MemoryConcern memory(sh);
  const SeriesPlan plan = widest_plan(1);
  Families before;
  memory.metrics(plan, Tick{}, before);
  EXPECT_EQ(family(before, "fragd_free_blocks"), nullptr) << "no snapshot before the first tick";
  memory.tick(Tick{100 * kS});
  Families after;
  memory.metrics(plan, Tick{}, after);
  const auto* blocks = family(after, "fragd_free_blocks");
  ASSERT_NE(blocks, nullptr);
  EXPECT_FALSE(blocks->metric.empty());
  EXPECT_NE(family(after, "fragd_hugepages"), nullptr);
  EXPECT_EQ(family(after, "fragd_hugepages_target"), nullptr) << "the targets are act's";
  const auto* rate = family(after, "fragd_free_hugepage_blocks_rate");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->help.find("over the last 42s"), std::string::npos) << rate->help;
  sh.cfg.forecast_window_ns = 42 * kS;
  memory.reload();
  Families reloaded;
  memory.metrics(plan, Tick{}, reloaded);
  ASSERT_NE(family(reloaded, "fragd_free_hugepage_blocks_rate"), nullptr);
  EXPECT_NE(family(reloaded, "fragd_free_hugepage_blocks_rate")->help.find("over the last 42s"), std::string::npos)
      << family(reloaded, "fragd_free_hugepage_blocks_rate")->help;
}

// A guest with free page reporting: found with the snapshot, looked for again every 10 s, and
// warned of once while act mode's reserve would make blocks for nobody it knows of.
void balloon_with_reporting(const TwoNodes& m) {
  const std::string dev = "sys/bus/virtio/devices/virtio0/";
  m.dir.write(dev + "device", "0x0005\n");
  m.dir.write(dev + "features", "0110010100000000000000000000000010000000\n");
  m.dir.write("sys/bus/virtio/drivers/virtio_balloon/uevent", "");
  fs::create_directory_symlink(m.sys + "/bus/virtio/drivers/virtio_balloon", m.sys + "/bus/virtio/devices/virtio0/driver");
  m.dir.write("sys/module/page_reporting/parameters/page_reporting_order", "9\n");
}

TEST(MemoryConcern, FreePageReportingUnderAReserveIsWarnedOfOnceUntilAPoolIsNamed) {
  TwoNodes m;
  balloon_with_reporting(m);
  Config c = m.config();
  c.policy.act = true;  // the shipped reserve: 25% of each node, order 9
  c.source = "/etc/fragd/fragd.yaml";
  Shared sh(c);
  MemoryConcern memory(sh);
  const std::string warning = "compaction.reserve keeps free blocks of order 9 ready";

  testing::internal::CaptureStderr();
  memory.tick(Tick{100 * kS});
  memory.tick(Tick{101 * kS});
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(memory.snapshot() && memory.snapshot()->page_reporting);
  EXPECT_EQ(memory.snapshot()->page_reporting->driver, "virtio_balloon");
  EXPECT_NE(err.find("free page reporting is on (virtio_balloon virtio0, order 9)"), std::string::npos) << err;
  const size_t at = err.find(warning);
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_EQ(err.find(warning, at + 1), std::string::npos) << "warned of twice:\n" << err;
  EXPECT_NE(err.find("hugepages.pools (/etc/fragd/fragd.yaml)"), std::string::npos) << "the fix names the file:\n"
                                                                                    << err;

  // A pool named (a reload): the blocks have a taker, the warning clears.
  sh.cfg.policy.hugepages.pools.push_back(PoolTarget{});
  memory.reload();
  testing::internal::CaptureStderr();
  memory.tick(Tick{102 * kS});
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no longer handed to the host unused"), std::string::npos) << err;

  // The device goes: carried over until the next look, 10 s after the last.
  fs::remove_all(m.sys + "/bus/virtio/devices/virtio0");
  memory.tick(Tick{103 * kS});
  EXPECT_TRUE(memory.snapshot()->page_reporting) << "looked for again before 10 s";
  testing::internal::CaptureStderr();
  memory.tick(Tick{110 * kS});
  err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(memory.snapshot()->page_reporting);
  EXPECT_NE(err.find("free page reporting is off (virtio_balloon virtio0, order 9 is gone)"), std::string::npos) << err;

  // Observe mode says what it found, and makes no block to warn of.
  TwoNodes observed;
  balloon_with_reporting(observed);
  Shared quiet(observed.config());
  MemoryConcern q(quiet);
  testing::internal::CaptureStderr();
  q.tick(Tick{100 * kS});
  err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(q.snapshot()->page_reporting);
  EXPECT_NE(err.find("free page reporting is on"), std::string::npos) << err;
  EXPECT_EQ(err.find("compaction.reserve"), std::string::npos) << err;
}

// Act mode's requests and its part of the status, before any runner thread exists (no writes).
TEST(ActConcern, RequestsAreCheckedAgainstTheFactsAndTheStatusCarriesThePolicy) {
  Config c;
  c.policy.act = true;
  c.source = "/etc/fragd/fragd.yaml";
  Shared sh(c);
  MachineFacts facts;
  facts.nodes = {0};
  facts.node_total_kib = {24u << 20};
  facts.mem_total_kib = 24u << 20;
  const Tick last{.now = 0, .facts = &facts};
  int reticks = 0;
  ActConcern act(sh, [&] { reticks++; },
                 [](const SupplyAsk&, const Tick&) -> Result<Supply> { return make_error("no supply here"); });
  ControlRequest req;
  req.cmd = Command::Compact;
  req.node = 3;
  const nlohmann::json refused = *act.answer(req, Reader::Root, 0, last);
  ASSERT_TRUE(refused.contains("error")) << refused.dump();
  EXPECT_NE(refused["error"].get<std::string>().find("3"), std::string::npos) << refused.dump();
  req.node = 0;
  const nlohmann::json queued = *act.answer(req, Reader::Root, 0, last);
  ASSERT_TRUE(queued.contains("ids")) << queued.dump();
  ASSERT_EQ(queued["ids"].size(), 1u);

  ControlRequest ask;
  ask.cmd = Command::Action;
  ask.id = queued["ids"][0].get<uint64_t>();
  EXPECT_EQ(act.answer(ask, Reader::Root, 0, last)->value("state", ""), "queued") << act.answer(ask, Reader::Root, 0, last)->dump();

  StatusReply s;
  act.status(s, last);
  ASSERT_TRUE(s.policy);
  EXPECT_EQ(s.policy->mode, "act");
  EXPECT_EQ(s.policy->source, "/etc/fragd/fragd.yaml");
  ASSERT_TRUE(s.action_running);
  EXPECT_FALSE(*s.action_running) << "no runner: nothing runs";
  EXPECT_EQ(reticks, 0);
}

// Act's families: the policy and actions, and the pool targets (the pools themselves are memory's).
TEST(ActConcern, ItsFamiliesCarryThePolicyAndThePoolTargets) {
  Config c;
  c.policy.act = true;
  PoolTarget t;
  t.size_kib = 2048;
  t.count = 16;
  c.policy.hugepages.pools.push_back(t);
  Shared sh(c);
  ActConcern act(sh, [] {}, [](const SupplyAsk&, const Tick&) -> Result<Supply> { return make_error("none"); });
  Families fs;
  act.metrics(widest_plan(1), Tick{}, fs);
  EXPECT_NE(family(fs, "fragd_policy_info"), nullptr);
  EXPECT_EQ(family(fs, "fragd_hugepages"), nullptr) << "the pools as the kernel holds them are memory's";
  const auto* tg = family(fs, "fragd_hugepages_target");
  ASSERT_NE(tg, nullptr);
  ASSERT_EQ(tg->metric.size(), 1u);
  EXPECT_EQ(tg->metric[0].label[0].value, "all");  // the global pool: the node label of every family
  EXPECT_EQ(tg->metric[0].label[1].value, "2048kB");
  EXPECT_EQ(tg->metric[0].gauge.value, 16);
}

}  // namespace

// Every command of the protocol is answered by exactly one part of fragd: the Daemon itself
// (status, reload) or one concern (its kAnswers). A command added without a concern that
// answers it, or claimed by two, fails here rather than as an error answer at run time.
TEST(Concerns, EveryCommandHasExactlyOneAnswerer) {
  for (const auto& spec : kCommands) {
    const Command cmd = spec.cmd;
    const int n = among(kDaemonAnswers, cmd) + among(StallsConcern::kAnswers, cmd) +
                  among(AttributionConcern::kAnswers, cmd) + among(PageblocksConcern::kAnswers, cmd) +
                  among(ActConcern::kAnswers, cmd);
    EXPECT_EQ(n, 1) << command_name(cmd) << " is answered by " << n << " parts of fragd";
  }
}
