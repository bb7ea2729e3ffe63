// SPDX-License-Identifier: Apache-2.0
// What act mode did and where its policy stands. Families fragd_policy_*,
// fragd_action*, fragd_compaction_budget_{used,limit}_seconds, fragd_proactiveness_raised.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "concerns/act/engine.h"
#include "base/family.h"

namespace fragd {

struct ActStats {
  std::string mode = "observe";  // observe | act
  bool dry_run = false;
  std::string method = "node";
  std::map<std::tuple<std::string, int, std::string>, uint64_t> actions;  // (action, node, result) -> count
  std::map<std::string, LatencyHist> durations;                           // action -> durations
  std::map<std::string, uint64_t> pages_migrated;                         // action -> pages
  std::map<int, std::pair<int, int>> last_score;                          // node -> (before, after) of its last compaction
  std::map<std::string, uint64_t> steps;                                  // step (grow, release, compact, ...) -> count
  std::vector<NodeState> nodes;
  std::vector<PoolState> pools;
  uint64_t reloads_ok = 0, reloads_failed = 0;
  bool proactiveness_raised = false;
  uint64_t budget_used_ns = 0, budget_ns = 0;
  // Leases (fragctl ensure): by outcome (made, not_made, released, hold_over, observe), and the
  // pages live leases add to each pool ((node or -1, size_kib) -> pages).
  std::map<std::string, uint64_t> leases;
  std::map<std::pair<int, uint64_t>, uint64_t> leased_pages;
};

// Action durations with the plan's bucket layout (count and sum alone when coarse).
void act_metrics(const ActStats& act, const SeriesPlan& plan, Families& out);

}  // namespace fragd
