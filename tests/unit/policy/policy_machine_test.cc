// SPDX-License-Identifier: Apache-2.0
// The policy against a machine (fake /proc + /sys trees in tests/fixtures/machine):
// the facts read from them and the checks that need them.
#include <gtest/gtest.h>
#include <unistd.h>

#include "kernel/procfs.h"
#include "machine_fixtures.h"
#include "policy/config.h"
#include "policy/policy.h"

using namespace fragd;        // NOLINT: the code under test
using namespace fragd::test;  // NOLINT: its fixtures

TEST(MachineFacts, OneNode) {
  MachineFacts f = facts("one_node");
  EXPECT_EQ(f.nodes, (std::vector<int>{0}));
  EXPECT_EQ(f.mem_total_kib, 24684084u);
  EXPECT_EQ(f.node_total_kib, (std::vector<uint64_t>{24684084}));
  EXPECT_EQ(f.hugepage_kib, (std::vector<uint64_t>{2048, 1048576}));
  EXPECT_GE(f.page_kib, 4u);
}

TEST(MachineFacts, TwoNodes) {
  MachineFacts f = facts("two_nodes");
  EXPECT_EQ(f.nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(f.mem_total_kib, 24576000u);
  EXPECT_EQ(f.node_total_kib, (std::vector<uint64_t>{16384000, 8192000}));
  EXPECT_EQ(f.hugepage_kib, (std::vector<uint64_t>{2048, 1048576}));
}

TEST(MachineFacts, NoNodeDirectoryIsNodeZeroWithAllMemory) {
  MachineFacts f = facts("no_node_dir");
  EXPECT_EQ(f.nodes, (std::vector<int>{0}));
  EXPECT_EQ(f.mem_total_kib, 4096000u);
  EXPECT_EQ(f.node_total_kib, (std::vector<uint64_t>{4096000}));
  EXPECT_EQ(f.hugepage_kib, (std::vector<uint64_t>{2048}));
}

TEST(MachineFacts, MemorylessNodeLeftOut) {
  MachineFacts f = facts("memoryless_node");
  EXPECT_EQ(f.nodes, (std::vector<int>{0, 2}));
  EXPECT_EQ(f.node_total_kib, (std::vector<uint64_t>{4096000, 4096000}));
}

TEST(MachineFacts, NoOnlineFileUsesNodeDirectoriesWithMeminfo) {
  MachineFacts f = facts("no_online_file");
  EXPECT_EQ(f.nodes, (std::vector<int>{0, 3}));
  EXPECT_EQ(f.node_total_kib, (std::vector<uint64_t>{4096000, 4096000}));
  EXPECT_TRUE(f.hugepage_kib.empty());
}

TEST(MachineFacts, MissingMeminfoIsAnErrorNamingThePath) {
  auto f = fragd::read_machine_facts(kMachines + "nowhere/proc", kMachines + "one_node/sys");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("nowhere/proc/meminfo"), std::string::npos) << f.error().message;
}

TEST(MachineFacts, ThisMachine) {
  auto f = fragd::read_machine_facts();
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_FALSE(f->nodes.empty());
  EXPECT_EQ(f->nodes.size(), f->node_total_kib.size());
  EXPECT_GT(f->mem_total_kib, 0u);
  for (uint64_t n : f->node_total_kib) EXPECT_LE(n, f->mem_total_kib);
}

TEST(SpareMemory, ANodesMemAvailableCountedAsTheKernelCountsTheHosts) {
  const std::string m = kMachines + "two_nodes";
  auto s = fragd::read_spare_memory(m + "/proc", m + "/sys", 1);
  ASSERT_TRUE(s.ok()) << s.error().message;
  // Node 1 (node1/meminfo; its one zone in proc/zoneinfo: high 19867, protection 0, low 15674
  // pages): MemFree 8000000 kB less the high watermark, file pages 150000 kB less
  // min(half, low), SReclaimable 20000 kB less min(half, low).
  const uint64_t page_kib = static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) / 1024;
  const uint64_t low = 15674 * page_kib;
  EXPECT_EQ(s->kib, (8000000u - 19867 * page_kib) + (150000u - std::min<uint64_t>(75000, low)) +
                        (20000u - std::min<uint64_t>(10000, low)));
  EXPECT_EQ(s->how, fragd::kNodeSpareHow);

  // The parser alone: KReclaimable counts instead of SReclaimable where the kernel gives it, and
  // watermarks above MemFree leave only the reclaimable part.
  const std::string text = "Node 2 MemFree: 1000 kB\nNode 2 Active(file): 400 kB\nNode 2 Inactive(file): 0 kB\n"
                           "Node 2 SReclaimable: 100 kB\nNode 2 KReclaimable: 300 kB\n";
  auto p = fragd::parse_spare_memory(text, "node2/meminfo", 2, 5000, 50);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->kib, 0u + (400u - 50u) + (300u - 50u));
  auto missing = fragd::parse_spare_memory("Node 2 MemFree: 1000 kB\n", "node2/meminfo", 2);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("node2/meminfo"), std::string::npos) << missing.error().message;

  auto host = fragd::read_spare_memory(m + "/proc", m + "/sys", -1);
  ASSERT_TRUE(host.ok()) << host.error().message;
  EXPECT_EQ(host->how, "MemAvailable");

  auto gone = fragd::read_spare_memory(m + "/proc", m + "/sys", 7);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find("node7/meminfo"), std::string::npos) << gone.error().message;
}

struct BadOnMachine {
  const char* text;
  const char* machine;
  const char* where_key;
  const char* what;
};

class MachineErrors : public ::testing::TestWithParam<BadOnMachine> {};

TEST_P(MachineErrors, NamesFileLineColumnKeyAndReason) {
  const std::string m = check_on(GetParam().text, GetParam().machine);
  ASSERT_FALSE(m.empty()) << GetParam().text;
  EXPECT_EQ(m.rfind(GetParam().where_key, 0), 0u) << m;
  EXPECT_NE(m.find(GetParam().what), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(
    All, MachineErrors,
    ::testing::Values(
        BadOnMachine{"compaction:\n  nodes: [0, 2]\n", "two_nodes", "f.yaml:2:14: key 'compaction.nodes[1]':",
                     "node 2 does not exist (online nodes with memory: 0, 1)"},
        BadOnMachine{"compaction:\n  nodes: [1]\n", "memoryless_node", "f.yaml:2:11: key 'compaction.nodes[0]':",
                     "node 1 does not exist (online nodes with memory: 0, 2)"},
        BadOnMachine{"hugepages:\n  pools:\n    - {size: 2MB, node: 3, count: 1}\n", "one_node",
                     "f.yaml:3:25: key 'hugepages.pools[0].node':",
                     "node 3 does not exist (online nodes with memory: 0); use one of those or all"},
        BadOnMachine{"hugepages:\n  pools:\n    - {size: 1GB, count: 1}\n", "no_node_dir",
                     "f.yaml:3:14: key 'hugepages.pools[0].size':",
                     "the kernel does not offer 1GiB pages (sizes offered: 2MiB)"},
        BadOnMachine{"hugepages:\n  pools:\n    - {size: 16MB, count: 1}\n", "one_node",
                     "f.yaml:3:14: key 'hugepages.pools[0].size':",
                     "does not offer 16MiB pages (sizes offered: 2MiB, 1GiB)"},
        BadOnMachine{"hugepages:\n  pools:\n    - {size: 2MB, count: 1}\n", "no_online_file",
                     "f.yaml:3:14: key 'hugepages.pools[0].size':", "this kernel offers no hugepage sizes"},
        // 24684084 KiB - 1 GiB guard = 23.54 GiB - 1 GiB: at most 11540 x 2 MiB.
        BadOnMachine{"hugepages:\n  pools:\n    - {size: 2MB, count: 11541}\n", "one_node",
                     "f.yaml:3:26: key 'hugepages.pools[0].count':",
                     "more hugepages than memory: 11541 x 2MiB = 22.54GiB, but this machine (MemTotal) has "
                     "23.54GiB and hugepages.guard keeps 1GiB free; set count at most 11540"},
        // Node 1 has 8000 MiB: with a 2 GiB guard at most 2976 x 2 MiB.
        BadOnMachine{"hugepages:\n  guard: 2GiB\n  pools:\n    - {size: 2MB, node: 1, count: 2977}\n", "two_nodes",
                     "f.yaml:4:35: key 'hugepages.pools[0].count':",
                     "more hugepages than memory: 2977 x 2MiB = 5.81GiB, but node 1 has 7.81GiB and "
                     "hugepages.guard keeps 2GiB free; set count at most 2976"},
        // Each fits node 0 (15.62 GiB - 1 GiB) alone, not together.
        BadOnMachine{"hugepages:\n  pools:\n    - {size: 1GB, node: 0, count: 10}\n"
                     "    - {size: 2MB, node: 0, count: 4000}\n",
                     "two_nodes", "f.yaml:4:35: key 'hugepages.pools[1].count':",
                     "the pools of node 0 add up to 17.81GiB, but it has 15.62GiB"},
        // Each node's pool fits its node; with the global one they exceed MemTotal.
        BadOnMachine{"hugepages:\n  pools:\n    - {size: 1GB, node: 0, count: 14}\n"
                     "    - {size: 1GB, node: 1, count: 6}\n    - {size: 2MB, count: 2000}\n",
                     "two_nodes", "f.yaml:5:26: key 'hugepages.pools[2].count':",
                     "the pools add up to 23.91GiB, but this machine has 23.44GiB (MemTotal)"},
        BadOnMachine{"hugepages:\n  guard: 30GiB\n  pools:\n    - {size: 2MB, count: 1}\n", "one_node",
                     "f.yaml:4:26: key 'hugepages.pools[0].count':", "set count at most 0"},
        // 2 MiB blocks: node 1 (8000 MiB) holds 4000 at most.
        BadOnMachine{"compaction:\n  reserve:\n    blocks: 4001\n", "two_nodes",
                     "f.yaml:3:13: key 'compaction.reserve.blocks':",
                     "4001 blocks of order 9 (2MiB each, 7.81GiB) are more than node 1's memory (7.81GiB); set at "
                     "most 4000"}));

TEST(MachineCheck, ReserveOnlyCountsNodesInScope) {
  // Node 1 is out of scope: 6000 x 2 MiB fits node 0 (16000 MiB).
  EXPECT_EQ(check_on("compaction:\n  nodes: [0]\n  reserve:\n    blocks: 6000\n", "two_nodes"), "");
  EXPECT_NE(check_on("compaction:\n  reserve:\n    blocks: 6000\n", "two_nodes"), "");
}

TEST(MachineCheck, PoolsThatFitPass) {
  EXPECT_EQ(check_on("hugepages:\n  pools:\n    - {size: 2MB, count: 11540}\n", "one_node"), "");
  EXPECT_EQ(check_on("compaction:\n  nodes: [0, 1]\nhugepages:\n  pools:\n    - {size: 1GB, node: 0, count: 14}\n"
                     "    - {size: 2MB, node: 1, count: 3000}\n",
                     "two_nodes"),
            "");
}

TEST(MachineCheck, DefaultMarksFallBackToTheFileName) {
  Policy p;
  p.compaction.nodes.all = false;
  p.compaction.nodes.nodes = {7};
  auto r = fragd::check_policy_on(p, facts("one_node"), "built-in");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("built-in: key 'compaction.nodes[0]': node 7 does not exist", 0), 0u)
      << r.error().message;
}

TEST(MachineCheck, LoadAndCheckReportsTheFile) {
  auto bad = fragd::load_and_check_config(std::string(FRAGD_FIXTURES_DIR) + "/no/such.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no/such.yaml"), std::string::npos);
  auto nosys = fragd::load_and_check_config(kShipped, kMachines + "nowhere/proc", kMachines + "nowhere/sys");
  ASSERT_FALSE(nosys.ok());
  EXPECT_NE(nosys.error().message.find("cannot check the policy against this machine"), std::string::npos)
      << nosys.error().message;
}
