// SPDX-License-Identifier: Apache-2.0
// The config file (YAML) and its action policy: parse_config() on any text;
// when it accepts the text, the limits it promises hold, and check_policy_on()
// judges the policy against two fixed machines without crashing; when that
// accepts too, the pools fit in memory as it promises.
#include <algorithm>
#include <map>

#include "policy/config.h"
#include "policy/policy.h"
#include "fuzz_check.h"

namespace {

using fragd::MachineFacts;

// This project's VM: one node of 24 GiB, 2 MiB and 1 GiB hugepages.
MachineFacts one_node() {
  MachineFacts m;
  m.nodes = {0};
  m.hugepage_kib = {2048, 1048576};
  m.mem_total_kib = 24684084;
  m.node_total_kib = {24608740};
  m.page_kib = 4;
  return m;
}

// Two nodes of 16000 and 8000 MiB.
MachineFacts two_nodes() {
  MachineFacts m;
  m.nodes = {0, 1};
  m.hugepage_kib = {2048, 1048576};
  m.mem_total_kib = 24576000;
  m.node_total_kib = {16384000, 8192000};
  m.page_kib = 4;
  return m;
}

void check_parsed(const fragd::Config& c) {
  FUZZ_CHECK(c.mode == "observe" || c.mode == "act", "mode is observe or act");
  FUZZ_CHECK(c.policy.act == (c.mode == "act"), "policy.act mirrors mode");
  FUZZ_CHECK(c.tick_ns >= 100'000'000ULL && c.tick_ns <= 3600'000'000'000ULL, "tick_interval in 100ms..1h");
  FUZZ_CHECK(c.min_order >= 1 && c.min_order <= 10, "bpf.min_order in 1..10");
  FUZZ_CHECK(c.scan_threads >= 1 && c.scan_threads <= 64, "pageblocks.threads in 1..64");
  FUZZ_CHECK(!c.socket.empty() && c.socket[0] == '/' && c.socket.size() < 108, "socket is a short absolute path");
  FUZZ_CHECK(fragd::check_listen_address(c.listen).ok(), "listen is ADDR:PORT");
  const fragd::CompactionPolicy& cp = c.policy.compaction;
  FUZZ_CHECK(cp.score.low < cp.score.high && cp.score.high <= 100, "score.low < score.high <= 100");
  FUZZ_CHECK(cp.demand.min_order >= 1 && cp.demand.min_order <= 10, "demand.min_order in 1..10");
  FUZZ_CHECK(!cp.demand.enabled || cp.demand.min_order >= c.min_order, "demand.min_order >= bpf.min_order");
  FUZZ_CHECK(!cp.demand.enabled || cp.demand.stalls_per_second > 0 || cp.demand.stall_p99_ns > 0,
             "an enabled demand trigger has a check");
  FUZZ_CHECK(cp.min_interval_ns >= 1'000'000'000ULL, "min_interval >= 1s");
  FUZZ_CHECK(cp.cpu_budget_ns > 0 && cp.cpu_budget_ns <= 30'000'000'000ULL, "cpu_budget in (0, 30s]");
  FUZZ_CHECK(cp.backoff.max_ns >= cp.min_interval_ns, "backoff.max >= min_interval");
  FUZZ_CHECK(cp.reserve.order >= 1 && cp.reserve.order <= 10, "reserve.order in 1..10");
  FUZZ_CHECK(cp.proactiveness.value >= 1 && cp.proactiveness.value <= 100, "proactiveness.value in 1..100");
  if (!cp.nodes.all) {
    FUZZ_CHECK(!cp.nodes.nodes.empty(), "a node list is not empty");
    FUZZ_CHECK(std::adjacent_find(cp.nodes.nodes.begin(), cp.nodes.nodes.end(),
                                  [](int a, int b) { return a >= b; }) == cp.nodes.nodes.end(),
               "compaction.nodes sorted and unique");
  }
  const fragd::HugepagePolicy& hp = c.policy.hugepages;
  FUZZ_CHECK(hp.guard_kib >= 64 * 1024, "hugepages.guard >= 64MiB");
  for (size_t i = 0; i < hp.pools.size(); ++i) {
    const fragd::PoolTarget& t = hp.pools[i];
    FUZZ_CHECK(t.size_kib > 0 && (t.size_kib & (t.size_kib - 1)) == 0, "a pool size is a power of two");
    FUZZ_CHECK(t.count <= (uint64_t{1} << 32), "a pool count is at most 2^32");
    FUZZ_CHECK(t.node.all || t.node.nodes.size() == 1, "a pool is global or on one node");
    for (size_t j = 0; j < i; ++j)
      FUZZ_CHECK(hp.pools[j].size_kib != t.size_kib || (!hp.pools[j].node.all && !t.node.all &&
                                                        hp.pools[j].node.nodes != t.node.nodes),
                 "no two pools of one size on the same nodes");
  }
}

// check_policy_on() accepted `p` on `m`: what it promises.
void check_fits(const fragd::Policy& p, const MachineFacts& m) {
  const fragd::HugepagePolicy& hp = p.hugepages;
  const uint64_t total_room = m.mem_total_kib > hp.guard_kib ? m.mem_total_kib - hp.guard_kib : 0;
  uint64_t all = 0;
  std::map<int, uint64_t> per_node;
  for (const auto& t : hp.pools) {
    FUZZ_CHECK(std::find(m.hugepage_kib.begin(), m.hugepage_kib.end(), t.size_kib) != m.hugepage_kib.end(),
               "an accepted pool size is offered");
    FUZZ_CHECK(t.count <= total_room / t.size_kib, "an accepted pool fits in memory");
    all += t.count * t.size_kib;
    if (!t.node.all) {
      FUZZ_CHECK(std::find(m.nodes.begin(), m.nodes.end(), t.node.nodes[0]) != m.nodes.end(),
                 "an accepted pool's node exists");
      per_node[t.node.nodes[0]] += t.count * t.size_kib;
    }
  }
  FUZZ_CHECK(all <= total_room, "accepted pools together fit in memory");
  for (const auto& [node, kib] : per_node) {
    const size_t i = static_cast<size_t>(std::find(m.nodes.begin(), m.nodes.end(), node) - m.nodes.begin());
    const uint64_t mem = m.node_total_kib[i];
    FUZZ_CHECK(kib <= (mem > hp.guard_kib ? mem - hp.guard_kib : 0), "accepted pools of a node fit in it");
  }
  const fragd::NodeSet& scope = p.compaction.nodes;
  if (!scope.all)
    for (int n : scope.nodes)
      FUZZ_CHECK(std::find(m.nodes.begin(), m.nodes.end(), n) != m.nodes.end(), "accepted compaction nodes exist");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const MachineFacts machines[] = {one_node(), two_nodes()};
  const std::string text(fragd_fuzz::as_text(data, size));
  auto c = fragd::parse_config(text, "fuzz.yaml");
  if (!c) {
    FUZZ_CHECK(!c.error().message.empty(), "an error says what is wrong");
    return 0;
  }
  check_parsed(*c);
  for (const MachineFacts& m : machines) {
    auto r = fragd::check_policy_on(c->policy, m, c->source);
    if (r) check_fits(c->policy, m);
    else FUZZ_CHECK(r.error().message.rfind("fuzz.yaml", 0) == 0, "a machine check error names the file");
  }
  return 0;
}
