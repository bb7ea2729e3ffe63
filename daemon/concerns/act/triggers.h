// SPDX-License-Identifier: Apache-2.0
// The node triggers of act mode (engine.h states their rules): score, demand, reserve and
// forecast, one class each behind NodeTrigger. A trigger sees one node as the engine last
// observed it and what the engine worked out for every trigger at this tick (the demand window);
// it says whether it fires and why, whether it would but waits for the node's free memory to
// settle, and the free blocks of reserve.order it asks a compaction to reach (method pool's goal).
// What they share (the cpu budget, min_interval and the back-off, the settle window, the choice
// between nodes) stays in the Engine, which asks them in kNodeTriggers' order: the first that
// fires names the action's trigger. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "concerns/act/engine.h"
#include "policy/policy.h"

namespace fragd {

// One node, as a trigger sees it.
struct NodeFacts {
  const NodeObservation& seen;
  bool hot = false;      // the score hysteresis holds it hot (above score.high until below score.low)
  bool settled = false;  // its free memory moved by at most 1% of the node over compaction.settle
};

// What the engine worked out at this tick for every trigger.
struct TriggerInputs {
  const CompactionPolicy& policy;
  // The demand window's reason when its stall rate or p99 is over the limit (act mode only).
  std::optional<std::string> demand;
  // Stalls of order >= demand.min_order over demand.window.
  uint64_t demand_stalls = 0;
};

class NodeTrigger {
 public:
  virtual ~NodeTrigger() = default;
  virtual Trigger kind() const = 0;
  // Why it fires for the node now; nothing when it does not.
  virtual std::optional<std::string> fires(const NodeFacts& n, const TriggerInputs& in) const = 0;
  // It would fire but for the node's free memory still moving (waiting "settling").
  virtual bool settling(const NodeFacts& /*n*/, const TriggerInputs& /*in*/) const { return false; }
  // Method pool: the free blocks of reserve.order it wants the node to have (0: none).
  virtual uint64_t goal(const NodeFacts& n, const TriggerInputs& in) const = 0;
};

// Score, demand, reserve, forecast: the order they are asked in.
std::span<const NodeTrigger* const> node_triggers();

// Free blocks of reserve.order on the node, larger ones counted as several.
uint64_t reserve_blocks(const NodeObservation& n, const CompactionPolicy& c);
// The reserve goal (engine.h's reserve rule) less what the node's pools hold (count_pools).
uint64_t reserve_goal(const NodeObservation& n, const CompactionPolicy& c);
// The node's hugetlb pool pages as blocks of reserve.order, with reserve.count_pools (else 0).
uint64_t reserve_pooled(const NodeObservation& n, const CompactionPolicy& c);
// Forecast: the blocks of reserve.order the node loses over forecast.horizon at its rate, when
// its free 2 MiB blocks run out within the horizon; 0 otherwise.
uint64_t forecast_need(const NodeObservation& n, const CompactionPolicy& c);

}  // namespace fragd
