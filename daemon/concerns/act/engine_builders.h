// SPDX-License-Identifier: Apache-2.0
// Hand-built observations, policies and outcomes for the engine's tests
// (engine_test.cc, engine_manual_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "concerns/act/engine.h"

namespace fragd::test {

constexpr uint64_t kMs = 1'000'000ULL;
constexpr uint64_t kS = 1'000'000'000ULL;
constexpr uint64_t kFree = 1024000;  // pages; scores convert to blocks exactly

inline NodeObservation node_obs(int id, unsigned score, uint64_t free_pages = kFree, uint64_t blocks9 = 0) {
  NodeObservation n;
  n.node = id;
  n.score = score;
  n.free_pages = free_pages;
  n.free_blocks.assign(11, 0);
  n.free_blocks[9] = blocks9;
  return n;
}

inline Observation obs_at(uint64_t t_ns, std::vector<NodeObservation> nodes) {
  Observation o;
  o.now_ns = t_ns;
  o.nodes = std::move(nodes);
  return o;
}

inline PoolTarget global_pool(uint64_t size_kib, uint64_t count) {
  PoolTarget t;
  t.size_kib = size_kib;
  t.count = count;
  return t;
}

// Act mode with whole-node compaction, score 40/20 and no reserve: the rules
// the older tests pin down, whatever the shipped defaults (goal_policy()).
inline Policy act_policy() {
  Policy p;
  p.act = true;
  p.compaction.demand.enabled = false;
  p.compaction.method = CompactMethod::Node;
  p.compaction.score.high = 40;
  p.compaction.score.low = 20;
  p.compaction.reserve.memory_percent = 0;
  p.compaction.settle_ns = 0;  // the triggers at the first observation (EngineReserve.Settle* test the wait)
  return p;
}

// The shipped compaction policy in act mode (method pool, score 90/80, a
// reserve of 25% of memory), demand off.
inline Policy goal_policy() {
  Policy p;
  p.act = true;
  p.compaction.demand.enabled = false;
  p.compaction.settle_ns = 0;  // the goals at the first observation
  return p;
}

// A node of `total_pages`, `free_pages` of them free, `blocks9` free 2 MiB blocks among them.
inline NodeObservation sized_node(int id, uint64_t total_pages, uint64_t free_pages, uint64_t blocks9,
                                  unsigned score) {
  NodeObservation n = node_obs(id, score, free_pages, blocks9);
  n.total_pages = total_pages;
  return n;
}

inline ActionOutcome outcome(const ActionRequest& r, const std::string& result, uint64_t start, uint64_t end,
                             int before = -1, int after = -1) {
  ActionOutcome o;
  o.req = r;
  o.result = result;
  o.start_ns = start;
  o.end_ns = end;
  o.score_before = before;
  o.score_after = after;
  return o;
}

inline MachineFacts one_node_facts() {
  MachineFacts m;
  m.nodes = {0};
  m.node_total_kib = {16ULL << 20};
  m.mem_total_kib = 16ULL << 20;
  m.hugepage_kib = {2048, 1048576};
  return m;
}


// Lets `e` (method proactiveness) raise vm.compaction_proactiveness at time 0 for a node at
// score 90, and the raise succeed; false when it did not decide to.
inline bool raised_at_zero(Engine& e) {
  auto r = e.decide(obs_at(0, {node_obs(0, 90)}));
  if (!r || r->kind != ActionKind::RaiseProactiveness) return false;
  e.finished(outcome(*r, "ok", 0, kMs));
  return true;
}

// A policy with one global 2 MiB pool of `count` pages.
inline Policy pool_policy(uint64_t count) {
  Policy p = act_policy();
  p.hugepages.pools.push_back(global_pool(2048, count));
  return p;
}

// Node 0 at score 10, at time 0, its global 2 MiB pool holding `have` pages.
inline Observation pool_obs(uint64_t have) {
  Observation o = obs_at(0, {node_obs(0, 10)});
  o.pools = {{-1, 2048, have}};
  return o;
}

}  // namespace fragd::test
