// SPDX-License-Identifier: Apache-2.0
// The triggers of act mode (engine.h states their rules). Node triggers: score, demand, reserve
// and forecast, one class each behind NodeTrigger. Pool triggers: pool (a policy or run-time
// target) and lease (a pool only leases grew, held at its base plus what live leases hold), behind
// PoolTrigger. A trigger sees one node as the engine last
// observed it and what the engine worked out for every trigger at this tick (the demand window);
// it says whether it fires and why, whether it would but waits for the node's free memory to
// settle, and the free blocks of reserve.order it asks a compaction to reach (method pool's goal).
// What they share (the cpu budget, min_interval and the back-off, the settle window, the choice
// between nodes) stays in the Engine, which asks them in kNodeTriggers' order: the first that
// fires names the action's trigger. A pool trigger sees one pool and the budget, and says
// whether it fires, why, and the size it asks for; the Engine keeps the pools, their waits after
// a resize (the back-off's) and which step asks which trigger. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "concerns/act/engine.h"
#include "concerns/act/leases.h"
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

// One hugetlb pool, as a pool trigger sees it.
struct PoolFacts {
  PoolKey key;                       // (node, size_kib); node < 0: the global pool
  std::optional<uint64_t> observed;  // its nr_hugepages in this tick's observation; none: not in it
  // What it holds without leases: the policy's (or a run-time) target, or for a pool only leases
  // grew, its size before the first.
  uint64_t base = 0;
  uint64_t leased = 0;        // pages live leases hold on it (concerns/act/leases.h)
  bool waiting = false;       // the wait after its last resize (min_interval, back-off) has not run out
  bool lease_queued = false;  // a lease's own action is queued: that action sets the pool
};

// The budget a pool trigger's action may run under (action_budget_ns).
struct PoolInputs {
  uint64_t left_ns = 0;   // an automatic action's: what the window has left (0: spent)
  uint64_t whole_ns = 0;  // compaction.cpu_budget, a manual request's
};

// What a pool trigger asks for: the pool's new size, why, and the action's deadline.
struct PoolWant {
  std::string reason;
  uint64_t target = 0;
  std::optional<uint64_t> restore_to;  // ActionRequest::restore_to: the size without leases
  uint64_t budget_ns = 0;
};

class PoolTrigger {
 public:
  virtual ~PoolTrigger() = default;
  virtual Trigger kind() const = 0;
  // What it asks of the pool now; nothing when it does not fire.
  virtual std::optional<PoolWant> fires(const PoolFacts& p, const PoolInputs& in) const = 0;
};

// Pool: a target the pool does not hold (the policy's or a run-time one, plus what leases hold);
// growing waits for the budget. Asked in act mode, after a raise's end.
const PoolTrigger& pool_target_trigger();
// Lease: a pool only leases grew, off its base plus what live leases hold (a lease ended or the
// kernel moved it); under the whole budget, in observe mode too (fragd undoes what it changed).
const PoolTrigger& lease_pool_trigger();
// "the 2 MiB pool of node 0", "the 1 GiB pool of the host".
std::string pool_label(int node, uint64_t size_kib);

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
