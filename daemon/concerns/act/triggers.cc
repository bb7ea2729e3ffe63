// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/triggers.h"
#include "concerns/act/engine_detail.h"

#include "base/format.h"
#include "base/text.h"
#include "concerns/memory/score.h"

#include <algorithm>
#include <cmath>

namespace fragd {
namespace {

// engine_detail's names are written out, not imported: a unity build puts this file beside
// others with a sat_add or a kU64Max of their own.

uint64_t sat_shl(uint64_t v, unsigned s) {
  if (v == 0) return 0;
  if (s >= 64 || v > (engine_detail::kU64Max >> s)) return engine_detail::kU64Max;
  return v << s;
}

// Hot, and settled: compacted toward score.low.
class ScoreNodeTrigger final : public NodeTrigger {
 public:
  Trigger kind() const override { return Trigger::Score; }
  std::optional<std::string> fires(const NodeFacts& n, const TriggerInputs& in) const override {
    if (!n.hot || !n.settled) return std::nullopt;
    const auto& s = in.policy.score;
    if (n.seen.score > s.high) return strf("score %u > high %u", n.seen.score, s.high);
    return strf("score %u >= low %u (hot since it rose above %u)", n.seen.score, s.low, s.high);
  }
  bool settling(const NodeFacts& n, const TriggerInputs&) const override { return n.hot && !n.settled; }
  // The blocks that bring the score to score.low: (100 - low)% of the free pages.
  uint64_t goal(const NodeFacts& n, const TriggerInputs& in) const override {
    if (!n.hot) return 0;
    const unsigned order = in.policy.reserve.order, keep = 100 - in.policy.score.low;
    const uint64_t free = n.seen.free_pages;
    const uint64_t want_pages = free / 100 * keep + free % 100 * keep / 100;
    return (want_pages + (uint64_t{1} << order) - 1) >> order;
  }
};

// The demand window over its limit, on a node with something to compact (score >= low).
class DemandNodeTrigger final : public NodeTrigger {
  static bool holds(const NodeFacts& n, const TriggerInputs& in) {
    return in.demand && n.seen.score >= in.policy.score.low;
  }

 public:
  Trigger kind() const override { return Trigger::Demand; }
  std::optional<std::string> fires(const NodeFacts& n, const TriggerInputs& in) const override {
    if (!holds(n, in)) return std::nullopt;
    return *in.demand;
  }
  // The blocks there are plus the window's stalls.
  uint64_t goal(const NodeFacts& n, const TriggerInputs& in) const override {
    if (!holds(n, in)) return 0;
    return engine_detail::sat_add(reserve_blocks(n.seen, in.policy), in.demand_stalls);
  }
};

// Fewer free blocks of reserve.order than the reserve goal, once settled.
class ReserveNodeTrigger final : public NodeTrigger {
 public:
  Trigger kind() const override { return Trigger::Reserve; }
  std::optional<std::string> fires(const NodeFacts& n, const TriggerInputs& in) const override {
    const CompactionPolicy& c = in.policy;
    const uint64_t goal = reserve_goal(n.seen, c), have = reserve_blocks(n.seen, c);
    if (goal == 0 || have >= goal || !n.settled) return std::nullopt;
    std::string reason = strf("reserve: %llu free order-%u blocks < %llu", static_cast<unsigned long long>(have),
                              c.reserve.order, static_cast<unsigned long long>(goal));
    if (const uint64_t pooled = reserve_pooled(n.seen, c))
      reason += strf(" (%llu more held in hugetlb pools)", static_cast<unsigned long long>(pooled));
    return reason;
  }
  bool settling(const NodeFacts& n, const TriggerInputs& in) const override {
    return !n.settled && reserve_blocks(n.seen, in.policy) < reserve_goal(n.seen, in.policy);
  }
  uint64_t goal(const NodeFacts& n, const TriggerInputs& in) const override { return reserve_goal(n.seen, in.policy); }
};

// The free 2 MiB blocks run out within forecast.horizon at the rate they fell.
class ForecastNodeTrigger final : public NodeTrigger {
 public:
  Trigger kind() const override { return Trigger::Forecast; }
  std::optional<std::string> fires(const NodeFacts& n, const TriggerInputs& in) const override {
    if (forecast_need(n.seen, in.policy) == 0) return std::nullopt;
    const double lost = -*n.seen.blocks_per_second;
    const uint64_t free_2m = blocks_of_order(n.seen.free_blocks, compaction_hpage_order());
    return "forecast: " + std::to_string(free_2m) + " free 2 MiB blocks run out in " +
           format_duration(static_cast<double>(free_2m) / lost * 1e9) + " at " + format_count(lost) +
           "/s lost, within horizon " + format_duration(static_cast<double>(in.policy.forecast.horizon_ns));
  }
  // The blocks there are plus those the horizon takes at that rate.
  uint64_t goal(const NodeFacts& n, const TriggerInputs& in) const override {
    const uint64_t need = forecast_need(n.seen, in.policy);
    return need ? engine_detail::sat_add(reserve_blocks(n.seen, in.policy), need) : 0;
  }
};

std::string pool_name(int node, uint64_t size_kib) {
  return strf("pool %llukB %s", static_cast<unsigned long long>(size_kib),
              node < 0 ? "global" : strf("node %d", node).c_str());
}

// A policy or run-time target (plus what leases hold) the pool does not hold.
class PoolTargetTrigger final : public PoolTrigger {
 public:
  Trigger kind() const override { return Trigger::Pool; }
  std::optional<PoolWant> fires(const PoolFacts& p, const PoolInputs& in) const override {
    const uint64_t target = engine_detail::sat_add(p.base, p.leased);
    if ((p.observed && *p.observed == target) || p.waiting) return std::nullopt;
    // A pool grows by compaction too: growing waits for the budget (a shrink frees pages).
    if (in.left_ns == 0 && (!p.observed || *p.observed < target)) return std::nullopt;
    PoolWant w;
    w.target = target;
    w.budget_ns = in.left_ns;
    const auto shown = static_cast<unsigned long long>(target);
    w.reason = pool_name(p.key.first, p.key.second);
    if (!p.observed)
      w.reason += strf(": not observed, target %llu", shown);
    else
      w.reason += strf(": %llu %s target %llu", static_cast<unsigned long long>(*p.observed),
                       *p.observed < target ? "<" : ">", shown);
    if (p.leased) {
      w.restore_to = p.base;
      w.reason += strf(" (%llu leased)", static_cast<unsigned long long>(p.leased));
    }
    return w;
  }
};

// A pool only leases grew, off its base plus what live leases hold.
class LeasePoolTrigger final : public PoolTrigger {
 public:
  Trigger kind() const override { return Trigger::Lease; }
  std::optional<PoolWant> fires(const PoolFacts& p, const PoolInputs& in) const override {
    const uint64_t target = engine_detail::sat_add(p.base, p.leased);
    if (!p.observed || p.waiting || *p.observed == target || p.lease_queued) return std::nullopt;
    PoolWant w;
    w.target = target;
    w.restore_to = p.base;
    w.budget_ns = in.whole_ns;
    w.reason = pool_label(p.key.first, p.key.second) +
               strf(": %llu, leases hold %llu above its base of %llu", static_cast<unsigned long long>(*p.observed),
                    static_cast<unsigned long long>(p.leased), static_cast<unsigned long long>(p.base));
    return w;
  }
};

const PoolTargetTrigger kPoolTargetTrigger;
const LeasePoolTrigger kLeasePoolTrigger;

const ScoreNodeTrigger kScoreTrigger;
const DemandNodeTrigger kDemandTrigger;
const ReserveNodeTrigger kReserveTrigger;
const ForecastNodeTrigger kForecastTrigger;
const NodeTrigger* const kNodeTriggers[] = {&kScoreTrigger, &kDemandTrigger, &kReserveTrigger, &kForecastTrigger};

}  // namespace

std::span<const NodeTrigger* const> node_triggers() { return kNodeTriggers; }
const PoolTrigger& pool_target_trigger() { return kPoolTargetTrigger; }
const PoolTrigger& lease_pool_trigger() { return kLeasePoolTrigger; }

std::string pool_label(int node, uint64_t size_kib) {
  return "the " + format_size_kib(size_kib) + " pool of " + (node < 0 ? std::string("the host") : strf("node %d", node));
}

uint64_t reserve_blocks(const NodeObservation& n, const CompactionPolicy& c) {
  return blocks_of_order(n.free_blocks, c.reserve.order);
}

uint64_t reserve_pooled(const NodeObservation& n, const CompactionPolicy& c) {
  return c.reserve.count_pools ? blocks_of_order(n.pool_pages, c.reserve.order) : 0;
}

uint64_t reserve_goal(const NodeObservation& n, const CompactionPolicy& c) {
  const ReserveGoal& rg = c.reserve;
  uint64_t goal = 0;
  if (rg.blocks > 0 && sat_shl(rg.blocks, rg.order) != engine_detail::kU64Max && n.free_pages >= sat_shl(rg.blocks, rg.order))
    goal = rg.blocks;
  if (rg.memory_percent > 0 && rg.order < 64) {
    const uint64_t share = n.total_pages / 100 * rg.memory_percent + n.total_pages % 100 * rg.memory_percent / 100;
    goal = std::max(goal, std::min(share, n.free_pages / 2) >> rg.order);
  }
  // Huge pages already made and held in the node's pools count toward it (count_pools).
  return goal - std::min(goal, reserve_pooled(n, c));
}

uint64_t forecast_need(const NodeObservation& n, const CompactionPolicy& c) {
  const auto& f = c.forecast;
  if (!f.enabled || !n.blocks_per_second || *n.blocks_per_second >= 0) return 0;
  const double lost_per_s = -*n.blocks_per_second;  // 2 MiB blocks
  const double horizon_s = static_cast<double>(f.horizon_ns) / 1e9;
  const uint64_t free_2m = blocks_of_order(n.free_blocks, compaction_hpage_order());
  if (static_cast<double>(free_2m) > lost_per_s * horizon_s) return 0;  // they last past the horizon
  // In blocks of reserve.order (a 2 MiB block is 2^(9 - order) of them, or a share of one).
  // (1e-6: a rate fitted as 19.99999999 or 20.00000001 blocks/s takes as many blocks as 20.)
  const double pages = std::ceil(lost_per_s * horizon_s - 1e-6) * static_cast<double>(uint64_t{1} << compaction_hpage_order());
  const double blocks = std::ceil(pages / static_cast<double>(uint64_t{1} << c.reserve.order));
  return blocks >= 1e18 ? uint64_t{1} << 60 : std::max<uint64_t>(static_cast<uint64_t>(blocks), 1);
}

}  // namespace fragd
