// SPDX-License-Identifier: Apache-2.0
// The policy sections of the config file and their validation.
#include <gtest/gtest.h>

#include "kernel/procfs.h"
#include "machine_fixtures.h"
#include "policy/config.h"
#include "policy/policy.h"

using namespace fragd;        // NOLINT: the code under test
using namespace fragd::test;  // NOLINT: its fixtures

// The policy's settings that take one value each, so that a test states all it expects of them
// in one place; expect_policy() compares them field by field, and a failure names the field.
// In the order of when to act (score, demand), how (the method and its settings), how often and
// how much, and the hugepage pools' guard.
struct PolicyValues {
  bool act, dry_run, all_nodes;
  struct { bool enabled; unsigned high, low; } score;
  struct { bool enabled; unsigned min_order; double stalls_per_second; uint64_t stall_p99_ns, window_ns; } demand;
  CompactMethod method;
  struct { unsigned order; uint64_t blocks; } reserve;
  struct { unsigned value; uint64_t hold_ns; } proactiveness;
  uint64_t min_interval_ns, cpu_budget_ns;
  struct { unsigned min_gain; uint64_t max_ns; } backoff;
  uint64_t guard_kib;
  bool drop_caches;
};

// What `p` holds of them: to compare two parsed policies.
PolicyValues values_of(const Policy& p) {
  const CompactionPolicy& c = p.compaction;
  return {p.act, p.dry_run, c.nodes.all, {c.score.enabled, c.score.high, c.score.low},
          {c.demand.enabled, c.demand.min_order, c.demand.stalls_per_second, c.demand.stall_p99_ns, c.demand.window_ns},
          c.method, {c.reserve.order, c.reserve.blocks}, {c.proactiveness.value, c.proactiveness.hold_ns},
          c.min_interval_ns, c.cpu_budget_ns, {c.backoff.min_gain, c.backoff.max_ns}, p.hugepages.guard_kib,
          p.hugepages.drop_caches};
}

void expect_policy(const Policy& p, const PolicyValues& want) {
  const CompactionPolicy& c = p.compaction;
  EXPECT_EQ(p.act, want.act);
  EXPECT_EQ(p.dry_run, want.dry_run);
  EXPECT_EQ(c.nodes.all, want.all_nodes);
  EXPECT_EQ(c.score.enabled, want.score.enabled);
  EXPECT_EQ(c.score.high, want.score.high);
  EXPECT_EQ(c.score.low, want.score.low);
  EXPECT_EQ(c.demand.enabled, want.demand.enabled);
  EXPECT_EQ(c.demand.min_order, want.demand.min_order);
  EXPECT_EQ(c.demand.stalls_per_second, want.demand.stalls_per_second);
  EXPECT_EQ(c.demand.stall_p99_ns, want.demand.stall_p99_ns);
  EXPECT_EQ(c.demand.window_ns, want.demand.window_ns);
  EXPECT_EQ(c.method, want.method);
  EXPECT_EQ(c.reserve.order, want.reserve.order);
  EXPECT_EQ(c.reserve.blocks, want.reserve.blocks);
  EXPECT_EQ(c.proactiveness.value, want.proactiveness.value);
  EXPECT_EQ(c.proactiveness.hold_ns, want.proactiveness.hold_ns);
  EXPECT_EQ(c.min_interval_ns, want.min_interval_ns);
  EXPECT_EQ(c.cpu_budget_ns, want.cpu_budget_ns);
  EXPECT_EQ(c.backoff.min_gain, want.backoff.min_gain);
  EXPECT_EQ(c.backoff.max_ns, want.backoff.max_ns);
  EXPECT_EQ(p.hugepages.guard_kib, want.guard_kib);
  EXPECT_EQ(p.hugepages.drop_caches, want.drop_caches);
}

TEST(Policy, DefaultsAreThoseOfPolicyH) {
  auto c = parse_config("", "f.yaml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->policy.compaction.reserve.memory_percent, 25u);
  EXPECT_TRUE(c->policy.hugepages.pools.empty());
  expect_policy(c->policy, {.act = false, .dry_run = false, .all_nodes = true, .score = {true, 90, 80},
                            .demand = {true, 4, 10.0, 5'000'000, 10'000'000'000}, .method = CompactMethod::Pool,
                            .reserve = {9, 0}, .proactiveness = {90, 60'000'000'000}, .min_interval_ns = 10'000'000'000,
                            .cpu_budget_ns = 6'000'000'000, .backoff = {8, 600'000'000'000},
                            .guard_kib = 1024 * 1024, .drop_caches = false});
}

// The shipped file writes every policy key out with its default.
TEST(Policy, ShippedFileSpellsOutTheDefaults) {
  auto shipped = fragd::load_config(kShipped);
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  auto empty = parse_config("", "f.yaml");
  ASSERT_TRUE(empty.ok());
  expect_policy(shipped->policy, values_of(empty->policy));
  EXPECT_EQ(shipped->policy.hugepages.pools.size(), empty->policy.hugepages.pools.size());
  EXPECT_EQ(shipped->min_order, empty->min_order);
  EXPECT_EQ(shipped->tick_ns, empty->tick_ns);
}

// What `fragd --check-config configs/fragd.yaml` runs, on this machine and on fixtures.
TEST(Policy, ShippedFilePassesTheMachineCheck) {
  auto here = fragd::load_and_check_config(kShipped);
  EXPECT_TRUE(here.ok()) << here.error().message;
  for (const char* m : {"one_node", "two_nodes", "no_node_dir", "memoryless_node", "no_online_file"}) {
    auto c = fragd::load_and_check_config(kShipped, kMachines + m + "/proc", kMachines + m + "/sys");
    EXPECT_TRUE(c.ok()) << m << ": " << c.error().message;
  }
}

// The benchmark runs the shipped file with only the mode changed.
TEST(Policy, ShippedFileInActMode) {
  auto text = fragd::read_text_file(kShipped);
  ASSERT_TRUE(text.ok()) << text.error().message;
  const std::string from = "\nmode: observe\n";
  const auto at = text->find(from);
  ASSERT_NE(at, std::string::npos) << "configs/fragd.yaml no longer ships 'mode: observe'";
  std::string act = *text;
  act.replace(at, from.size(), "\nmode: act\n");
  auto c = parse_config(act, "fragd.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->policy.act);
  EXPECT_FALSE(c->policy.dry_run);
}

TEST(Policy, EveryKeyParsed) {
  auto c = parse_config(R"(mode: act
dry_run: true
bpf:
  min_order: 2
compaction:
  nodes: [1, 0]
  method: proactiveness
  score:
    enabled: false
    high: 70
    low: 35
  demand:
    enabled: true
    min_order: 3
    stalls_per_second: 2.5
    stall_p99: 750us
    window: 30s
  reserve:
    order: 10
    blocks: 16
  proactiveness:
    value: 60
    hold: 2m
  min_interval: 30s
  cpu_budget: 3s
  backoff:
    min_gain: 12
    max: 1h
hugepages:
  guard: 2GiB
  drop_caches: true
  pools:
    - {size: 2MB, node: all, count: 512}
    - size: 1GB
      node: 0
      count: 2
)",
                        "f.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Policy& p = c->policy;
  expect_policy(p, {.act = true, .dry_run = true, .all_nodes = false, .score = {false, 70, 35},
                    .demand = {true, 3, 2.5, 750'000, 30'000'000'000}, .method = CompactMethod::Proactiveness,
                    .reserve = {10, 16}, .proactiveness = {60, 120'000'000'000}, .min_interval_ns = 30'000'000'000,
                    .cpu_budget_ns = 3'000'000'000, .backoff = {12, 3600'000'000'000}, .guard_kib = 2u * 1024 * 1024,
                    .drop_caches = true});
  EXPECT_EQ(p.compaction.nodes.nodes, (std::vector<int>{0, 1}));
  ASSERT_EQ(p.compaction.nodes.marks.size(), 2u);
  EXPECT_EQ(p.compaction.nodes.marks[0].line, 6);    // node 0, written second
  EXPECT_EQ(p.compaction.nodes.marks[0].column, 14);
  EXPECT_EQ(p.compaction.nodes.marks[1].column, 11);
  EXPECT_TRUE(p.compaction.nodes.contains(1));
  EXPECT_FALSE(p.compaction.nodes.contains(2));
  EXPECT_EQ(p.compaction.reserve.mark.line, 20);
  EXPECT_EQ(p.hugepages.guard_mark.line, 30);
  ASSERT_EQ(p.hugepages.pools.size(), 2u);
  EXPECT_EQ(p.hugepages.pools[0].size_kib, 2048u);
  EXPECT_TRUE(p.hugepages.pools[0].node.all);
  EXPECT_EQ(p.hugepages.pools[0].count, 512u);
  EXPECT_EQ(p.hugepages.pools[0].mark.line, 33);
  EXPECT_EQ(p.hugepages.pools[1].size_kib, 1024u * 1024u);
  EXPECT_FALSE(p.hugepages.pools[1].node.all);
  EXPECT_EQ(p.hugepages.pools[1].node.nodes, (std::vector<int>{0}));
  EXPECT_EQ(p.hugepages.pools[1].node.mark.line, 35);
  EXPECT_EQ(p.hugepages.pools[1].count, 2u);
  EXPECT_EQ(p.hugepages.pools[1].count_mark.line, 36);
  EXPECT_EQ(p.hugepages.pools[1].count_mark.column, 14);
  // ... and it fits the two-node fixture.
  auto r = fragd::check_policy_on(p, facts("two_nodes"), "f.yaml");
  EXPECT_TRUE(r.ok()) << r.error().message;
}

TEST(Policy, PoolNodeDefaultsToAllAndPoolsMayBeEmpty) {
  auto c = parse_config("hugepages:\n  pools:\n    - {size: 2048kB, count: 0}\n", "f.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->policy.hugepages.pools.size(), 1u);
  EXPECT_TRUE(c->policy.hugepages.pools[0].node.all);
  EXPECT_EQ(c->policy.hugepages.pools[0].count, 0u);
  auto e = parse_config("hugepages:\n  pools:\n", "f.yaml");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_TRUE(e->policy.hugepages.pools.empty());
  // The same size on different nodes is fine; so are different sizes on one node.
  auto d = parse_config(
      "hugepages:\n  pools:\n    - {size: 2MB, node: 0, count: 1}\n    - {size: 2MB, node: 1, count: 1}\n"
      "    - {size: 1GB, node: 0, count: 1}\n",
      "f.yaml");
  EXPECT_TRUE(d.ok()) << d.error().message;
}

struct BadPolicy {
  const char* text;
  const char* where_key;  // the message must start with this: "f.yaml:L:C: key 'path':"
  const char* what;       // and contain this
};

class PolicyErrors : public ::testing::TestWithParam<BadPolicy> {};

TEST_P(PolicyErrors, NamesFileLineColumnKeyAndReason) {
  auto c = parse_config(GetParam().text, "f.yaml");
  ASSERT_FALSE(c.ok()) << GetParam().text;
  const std::string& m = c.error().message;
  EXPECT_EQ(m.rfind(GetParam().where_key, 0), 0u) << m;
  EXPECT_NE(m.find(GetParam().what), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(
    UnknownKeys, PolicyErrors,
    ::testing::Values(
        BadPolicy{"compactoin:\n", "f.yaml:1:1: key 'compactoin':", "unknown key (known keys here: attribution, bpf, compaction"},
        BadPolicy{"compaction:\n  nodez: all\n", "f.yaml:2:3: key 'compaction.nodez':",
                  "known keys here: backoff, cpu_budget, defrag_guard, demand, forecast, method, min_interval, nodes, proactiveness, reserve, "
                  "score, settle)"},
        BadPolicy{"compaction:\n  score:\n    hi: 3\n", "f.yaml:3:5: key 'compaction.score.hi':",
                  "known keys here: enabled, high, low)"},
        BadPolicy{"compaction:\n  demand:\n    p99: 1ms\n", "f.yaml:3:5: key 'compaction.demand.p99':",
                  "known keys here: enabled, min_order, stall_p99, stalls_per_second, window)"},
        BadPolicy{"compaction:\n  reserve:\n    size: 2MB\n", "f.yaml:3:5: key 'compaction.reserve.size':",
                  "known keys here: blocks, count_pools, memory_percent, order)"},
        BadPolicy{"compaction:\n  proactiveness:\n    for: 1m\n", "f.yaml:3:5: key 'compaction.proactiveness.for':",
                  "known keys here: hold, value)"},
        BadPolicy{"compaction:\n  backoff:\n    cycles: 10\n", "f.yaml:3:5: key 'compaction.backoff.cycles':",
                  "known keys here: max, min_gain)"},
        BadPolicy{"hugepages:\n  reserve: 1GiB\n", "f.yaml:2:3: key 'hugepages.reserve':",
                  "known keys here: drop_caches, guard, pools)"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 2MB, count: 1}\n    - {size: 1GB, count: 1, nodes: 0}\n",
                  "f.yaml:4:29: key 'hugepages.pools[1].nodes':", "known keys here: count, node, size)"},
        BadPolicy{"compaction:\n  method: node\n  method: proactiveness\n", "f.yaml:3:3: key 'compaction.method':",
                  "given twice (first at line 2)"},
        BadPolicy{"compaction:\n  method:\n", "f.yaml:2:3: key 'compaction.method':", "has no value"}));

INSTANTIATE_TEST_SUITE_P(
    WrongTypes, PolicyErrors,
    ::testing::Values(
        BadPolicy{"compaction: 3\n", "f.yaml:1:13: key 'compaction':", "expected a map"},
        BadPolicy{"compaction:\n  score: [1]\n", "f.yaml:2:10: key 'compaction.score':", "expected a map"},
        BadPolicy{"compaction:\n  score:\n    high: x\n", "f.yaml:3:11: key 'compaction.score.high':",
                  "expected an integer, got 'x'"},
        BadPolicy{"compaction:\n  score:\n    high: 40.5\n", "f.yaml:3:11: key 'compaction.score.high':",
                  "expected an integer, got '40.5'"},
        BadPolicy{"compaction:\n  score:\n    high: '40'\n", "f.yaml:3:11: key 'compaction.score.high':",
                  "expected an integer, got the string '40'; remove the quotes"},
        BadPolicy{"compaction:\n  score:\n    enabled: yes\n", "f.yaml:3:14: key 'compaction.score.enabled':",
                  "'yes' is ambiguous (a boolean in YAML 1.1, a string in YAML 1.2); write true or false"},
        BadPolicy{"compaction:\n  demand:\n    enabled: off\n", "f.yaml:3:14: key 'compaction.demand.enabled':",
                  "'off' is ambiguous"},
        BadPolicy{"compaction:\n  demand:\n    enabled: 1\n", "f.yaml:3:14: key 'compaction.demand.enabled':",
                  "expected true or false, got '1'"},
        BadPolicy{"compaction:\n  demand:\n    enabled: \"true\"\n", "f.yaml:3:14: key 'compaction.demand.enabled':",
                  "expected true or false, got the string 'true'"},
        BadPolicy{"compaction:\n  demand:\n    stalls_per_second: lots\n",
                  "f.yaml:3:24: key 'compaction.demand.stalls_per_second':", "expected a number, got 'lots'"},
        BadPolicy{"compaction:\n  demand:\n    stalls_per_second: .inf\n",
                  "f.yaml:3:24: key 'compaction.demand.stalls_per_second':", "expected a number"},
        BadPolicy{"compaction:\n  demand:\n    window: 5parsecs\n", "f.yaml:3:13: key 'compaction.demand.window':",
                  "unknown duration unit 'parsecs'"},
        BadPolicy{"compaction:\n  nodes: 0\n", "f.yaml:2:10: key 'compaction.nodes':",
                  "expected all or a list of node numbers like [0, 1]"},
        BadPolicy{"compaction:\n  nodes: [0, one]\n", "f.yaml:2:14: key 'compaction.nodes[1]':",
                  "expected an integer, got 'one'"},
        BadPolicy{"compaction:\n  method: fast\n", "f.yaml:2:11: key 'compaction.method':",
                  "'fast' is not a method; use pool"},
        BadPolicy{"compaction:\n  min_interval: [1s]\n", "f.yaml:2:17: key 'compaction.min_interval':",
                  "expected a single value"},
        BadPolicy{"hugepages:\n  guard: 1024\n", "f.yaml:2:10: key 'hugepages.guard':",
                  "has no unit; write e.g. 1GiB"},
        BadPolicy{"hugepages:\n  guard: 1GiBs\n", "f.yaml:2:10: key 'hugepages.guard':", "unknown size unit 'GiBs'"},
        BadPolicy{"hugepages:\n  drop_caches: on\n", "f.yaml:2:16: key 'hugepages.drop_caches':", "ambiguous"},
        BadPolicy{"hugepages:\n  pools: {size: 2MB}\n", "f.yaml:2:10: key 'hugepages.pools':", "expected a list"},
        BadPolicy{"hugepages:\n  pools:\n    - 2MB\n", "f.yaml:3:7: key 'hugepages.pools[0]':", "expected a map"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 3MB, count: 1}\n", "f.yaml:3:14: key 'hugepages.pools[0].size':",
                  "'3MB' is not a page size"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 2MB, count: many}\n",
                  "f.yaml:3:26: key 'hugepages.pools[0].count':", "expected an integer, got 'many'"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 2MB, node: first, count: 1}\n",
                  "f.yaml:3:25: key 'hugepages.pools[0].node':", "expected all or a node number"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 2MB}\n", "f.yaml:3:7: key 'hugepages.pools[0].count':",
                  "missing; a pool needs size and count"}));

INSTANTIATE_TEST_SUITE_P(
    OutOfRange, PolicyErrors,
    ::testing::Values(
        BadPolicy{"compaction:\n  score:\n    high: 101\n", "f.yaml:3:11: key 'compaction.score.high':",
                  "value 101 is out of range 0..100"},
        BadPolicy{"compaction:\n  score:\n    low: -5\n", "f.yaml:3:10: key 'compaction.score.low':",
                  "value -5 is out of range 0..100"},
        BadPolicy{"compaction:\n  demand:\n    min_order: 11\n", "f.yaml:3:16: key 'compaction.demand.min_order':",
                  "out of range 1..10"},
        BadPolicy{"compaction:\n  demand:\n    stalls_per_second: -1\n",
                  "f.yaml:3:24: key 'compaction.demand.stalls_per_second':", "out of range 0.."},
        BadPolicy{"compaction:\n  demand:\n    window: 500ms\n", "f.yaml:3:13: key 'compaction.demand.window':",
                  "duration '500ms' is out of range 1s..1h"},
        BadPolicy{"compaction:\n  demand:\n    window: 2h\n", "f.yaml:3:13: key 'compaction.demand.window':",
                  "out of range 1s..1h"},
        BadPolicy{"compaction:\n  demand:\n    stall_p99: 2m\n", "f.yaml:3:16: key 'compaction.demand.stall_p99':",
                  "out of range 0s..1m"},
        BadPolicy{"compaction:\n  reserve:\n    order: 0\n", "f.yaml:3:12: key 'compaction.reserve.order':",
                  "out of range 1..10"},
        BadPolicy{"compaction:\n  reserve:\n    blocks: -1\n", "f.yaml:3:13: key 'compaction.reserve.blocks':",
                  "out of range 0.."},
        BadPolicy{"compaction:\n  proactiveness:\n    value: 0\n", "f.yaml:3:12: key 'compaction.proactiveness.value':",
                  "out of range 1..100"},
        BadPolicy{"compaction:\n  proactiveness:\n    hold: 25h\n", "f.yaml:3:11: key 'compaction.proactiveness.hold':",
                  "out of range 1s..24h"},
        BadPolicy{"compaction:\n  min_interval: 25h\n", "f.yaml:2:17: key 'compaction.min_interval':",
                  "out of range 1s..24h"},
        BadPolicy{"compaction:\n  backoff:\n    min_gain: 0\n", "f.yaml:3:15: key 'compaction.backoff.min_gain':",
                  "out of range 1..100"},
        BadPolicy{"compaction:\n  backoff:\n    max: 2d\n", "f.yaml:3:10: key 'compaction.backoff.max':",
                  "unknown duration unit 'd'"},
        BadPolicy{"compaction:\n  nodes: [1024]\n", "f.yaml:2:11: key 'compaction.nodes[0]':", "out of range 0..1023"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 2MB, count: -3}\n",
                  "f.yaml:3:26: key 'hugepages.pools[0].count':", "out of range 0.."}));

// Contradictions and values that would make fragd act dangerously: refused with the reason.
INSTANTIATE_TEST_SUITE_P(
    Refused, PolicyErrors,
    ::testing::Values(
        BadPolicy{"compaction:\n  score:\n    high: 30\n    low: 30\n", "f.yaml:4:10: key 'compaction.score.low':",
                  "contradictory thresholds: low 30 is not below high 30"},
        BadPolicy{"compaction:\n  score:\n    low: 95\n", "f.yaml:3:10: key 'compaction.score.low':",
                  "low 95 is not below high 90"},
        BadPolicy{"compaction:\n  score:\n    high: 10\n", "f.yaml:3:11: key 'compaction.score.high':",
                  "low 80 is not below high 10"},
        BadPolicy{"compaction:\n  demand:\n    stalls_per_second: 0\n    stall_p99: 0\n",
                  "f.yaml:3:24: key 'compaction.demand.stalls_per_second':",
                  "both of its checks are off (stalls_per_second 0 and stall_p99 0); set enabled: false instead"},
        BadPolicy{"compaction:\n  defrag_guard:\n    enabled: true\n    atomic_failures_per_second: 0\n"
                  "    pressure_full_percent: 0\n",
                  "f.yaml:3:14: key 'compaction.defrag_guard.enabled':",
                  "both of its checks are off (atomic_failures_per_second 0 and pressure_full_percent 0); set "
                  "enabled: false instead"},
        BadPolicy{"compaction:\n  defrag_guard:\n    window: 1s\n", "f.yaml:3:13: key 'compaction.defrag_guard.window':",
                  "10s..1h"},
        BadPolicy{"compaction:\n  min_interval: 0s\n", "f.yaml:2:17: key 'compaction.min_interval':",
                  "0s is refused: acting that often would keep compaction running continuously; set at least 1s"},
        BadPolicy{"compaction:\n  min_interval: 500ms\n", "f.yaml:2:17: key 'compaction.min_interval':",
                  "500ms is refused: acting that often"},
        BadPolicy{"compaction:\n  cpu_budget: 0\n", "f.yaml:2:15: key 'compaction.cpu_budget':",
                  "0 is refused: no compaction could ever run"},
        BadPolicy{"compaction:\n  cpu_budget: 31s\n", "f.yaml:2:15: key 'compaction.cpu_budget':",
                  "31s of compaction per minute is refused: more than half a CPU; set at most 30s"},
        BadPolicy{"compaction:\n  min_interval: 1m\n  backoff:\n    max: 30s\n",
                  "f.yaml:4:10: key 'compaction.backoff.max':", "30s is shorter than compaction.min_interval 1m"},
        BadPolicy{"compaction:\n  min_interval: 1h\n", "f.yaml:2:17: key 'compaction.min_interval':",
                  "1h is longer than compaction.backoff.max 10m (its default"},
        BadPolicy{"compaction:\n  nodes: []\n", "f.yaml:2:10: key 'compaction.nodes':", "the list is empty"},
        BadPolicy{"compaction:\n  nodes: [0, 1, 0]\n", "f.yaml:2:17: key 'compaction.nodes[2]':",
                  "node 0 is listed twice (first at line 2:11)"},
        BadPolicy{"hugepages:\n  guard: 0\n", "f.yaml:2:10: key 'hugepages.guard':",
                  "'0' is refused: hugepage allocation could take MemAvailable to zero"},
        BadPolicy{"hugepages:\n  guard: 32MiB\n", "f.yaml:2:10: key 'hugepages.guard':",
                  "below 32MiB and set off the OOM killer; set at least 64MiB"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 2MB, count: 1}\n    - {size: 2MB, node: all, count: 2}\n",
                  "f.yaml:4:7: key 'hugepages.pools[1]':",
                  "a second pool of 2MiB pages for all nodes; hugepages.pools[0] at line 3 already sets it"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 1GB, node: 1, count: 1}\n    - {size: 1G, node: 1, count: 2}\n",
                  "f.yaml:4:7: key 'hugepages.pools[1]':", "a second pool of 1GiB pages on node 1"},
        BadPolicy{"hugepages:\n  pools:\n    - {size: 2MB, node: 0, count: 1}\n    - {size: 2MB, count: 2}\n",
                  "f.yaml:4:7: key 'hugepages.pools[1]':",
                  "pools of 2MiB pages for all nodes and for node 0 (with hugepages.pools[0] at line 3) would fight"},
        BadPolicy{"bpf:\n  min_order: 6\ncompaction:\n  demand:\n    min_order: 5\n",
                  "f.yaml:5:16: key 'compaction.demand.min_order':",
                  "compaction.demand.min_order 5 is below bpf.min_order 6, so stalls of orders 5..5 are never traced"},
        BadPolicy{"bpf:\n  min_order: 6\n", "f.yaml:2:14: key 'bpf.min_order':",
                  "compaction.demand.min_order 4 is below bpf.min_order 6"}));

TEST(Policy, DemandBelowBpfMinOrderIsFineWhenDemandIsOff) {
  auto c = parse_config("bpf:\n  min_order: 6\ncompaction:\n  demand:\n    enabled: false\n", "f.yaml");
  EXPECT_TRUE(c.ok()) << c.error().message;
}

TEST(Policy, DemandWithOneCheckOffIsFine) {
  auto c = parse_config("compaction:\n  demand:\n    stalls_per_second: 0\n", "f.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->policy.compaction.demand.stalls_per_second, 0.0);
  EXPECT_EQ(c->policy.compaction.demand.stall_p99_ns, 5'000'000u);
}

// ---------------------------------------------------------------- helpers

TEST(Sizes, PageSize) {
  for (const auto& [text, kib] : std::vector<std::pair<std::string, uint64_t>>{
           {"2MB", 2048}, {"2M", 2048}, {"2MiB", 2048}, {"2048kB", 2048}, {"1GB", 1048576}, {"1G", 1048576},
           {"1GiB", 1048576}})
    EXPECT_EQ(*fragd::parse_page_size_kib(text), kib) << text;
  for (const char* bad : {"3MB", "0", "2048", "2 MB", "MB", "-2MB"})
    EXPECT_FALSE(fragd::parse_page_size_kib(bad).ok()) << bad;
}

TEST(Sizes, Size) {
  for (const auto& [text, kib] : std::vector<std::pair<std::string, uint64_t>>{
           {"1GiB", 1048576}, {"512MiB", 524288}, {"512M", 524288}, {"1G", 1048576}, {"65536KiB", 65536},
           {"65536kB", 65536}, {"2TiB", 2147483648}, {"0", 0}})
    EXPECT_EQ(*fragd::parse_size_kib(text), kib) << text;
  for (const char* bad : {"1024", "1.5GiB", "1PiB", "99999999999TiB"})
    EXPECT_FALSE(fragd::parse_size_kib(bad).ok()) << bad;
  EXPECT_EQ(fragd::format_size_kib(2048, fragd::SizeStyle::Config), "2MiB");
  EXPECT_EQ(fragd::format_size_kib(1048576, fragd::SizeStyle::Config), "1GiB");
  EXPECT_EQ(fragd::format_size_kib(24684084, fragd::SizeStyle::Config), "23.54GiB");
  EXPECT_EQ(fragd::format_size_kib(1536, fragd::SizeStyle::Config), "1.50MiB");
  EXPECT_EQ(fragd::format_size_kib(4, fragd::SizeStyle::Config), "4KiB");
}

TEST(NodeSet, Contains) {
  fragd::NodeSet all;
  EXPECT_TRUE(all.contains(0));
  EXPECT_TRUE(all.contains(5));
  fragd::NodeSet some;
  some.all = false;
  some.nodes = {0, 2};
  EXPECT_TRUE(some.contains(2));
  EXPECT_FALSE(some.contains(1));
  EXPECT_STREQ(fragd::method_name(CompactMethod::Node), "node");
  EXPECT_STREQ(fragd::method_name(CompactMethod::Proactiveness), "proactiveness");
}
