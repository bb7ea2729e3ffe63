// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/engine.h"
#include "concerns/act/engine_detail.h"

#include "base/format.h"
#include "base/text.h"
#include "concerns/act/triggers.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

namespace fragd {

using namespace engine_detail;

namespace {

// The CPU budget's sliding window.
constexpr uint64_t kBudgetWindowNs = 60'000'000'000ULL;
// Samples of the windows are kept at least this fraction of the longest
// window apart (except the newest), which bounds their number.
constexpr uint64_t kSamplesPerWindow = 128;



uint64_t counter_delta(uint64_t now, uint64_t before) { return now >= before ? now - before : now; }

}  // namespace

const char* action_name(ActionKind k) {
  switch (k) {
    case ActionKind::Compact: return "compact";
    case ActionKind::RaiseProactiveness: return "proactiveness_raise";
    case ActionKind::RestoreProactiveness: return "proactiveness_restore";
    case ActionKind::Pool: return "pool";
    case ActionKind::DefragModeOff: return "defrag_mode_off";
    case ActionKind::DefragModeRestore: return "defrag_mode_restore";
  }
  return "unknown";
}

const char* trigger_label(Trigger t) {
  switch (t) {
    case Trigger::Score: return "score";
    case Trigger::Demand: return "demand";
    case Trigger::Reserve: return "reserve";
    case Trigger::Manual: return "manual";
    case Trigger::Pool: return "pool";
    case Trigger::Hold: return "hold";
    case Trigger::Policy: return "policy";
    case Trigger::Forecast: return "forecast";
    case Trigger::Lease: return "lease";
    case Trigger::Guard: return "guard";
  }
  return "unknown";
}

bool compaction_helped(const ActionOutcome& r, const CompactionPolicy& p) {
  const bool score_gain = r.score_before >= 0 && r.score_after >= 0 &&
                          r.score_before - r.score_after >= static_cast<int>(p.backoff.min_gain);
  const bool block_gain = (p.reserve.blocks > 0 || p.reserve.memory_percent > 0 || r.req.goal_blocks > 0) &&
                          r.blocks_after > r.blocks_before;
  return score_gain || block_gain;
}

uint64_t action_budget_ns(uint64_t cpu_budget_ns, uint64_t used_ns, bool manual) {
  if (manual) return cpu_budget_ns;
  return cpu_budget_ns > used_ns ? cpu_budget_ns - used_ns : 0;
}

Engine::Engine(Policy p) : policy_(std::move(p)) { rebuild_pools(); }

// ---------------------------------------------------------------- policy --

void Engine::set_policy(Policy p) {
  policy_ = std::move(p);
  const bool proactive = policy_.act && policy_.compaction.method == CompactMethod::Proactiveness;
  // A raise that was only decided wrote nothing: it ends with the mode that
  // decided it. A real one is restored by decide() (trigger "policy").
  if (raised_since_ns_ && raised_dry_ && (!proactive || !policy_.dry_run)) {
    raised_since_ns_.reset();
    raised_dry_ = false;
    raise_marks_.clear();
  }
  if (!policy_.act) {
    // Observe mode changes nothing: every lease ends and its pages go back (decide()).
    note_ended(leases_.end_all("the policy was reloaded with mode: observe", now_ns_));
    drop_manual(false, "the policy was reloaded with mode: observe before this request ran");
  } else
    drop_manual(true,
                "the policy was reloaded before this request ran, and a run-time pool target lasts "
                "until the next reload: run `fragctl pool set` again");
  rebuild_pools();
}

void Engine::rebuild_pools() {
  std::map<std::pair<int, uint64_t>, PoolTrack> next;
  for (const auto& t : policy_.hugepages.pools) {
    std::vector<int> nodes;
    if (t.node.all) nodes.push_back(-1);
    else nodes = t.node.nodes;
    for (int n : nodes) {
      const auto key = std::make_pair(n, t.size_kib);
      PoolTrack p;
      p.s.node = n;
      p.s.size_kib = t.size_kib;
      p.s.target = t.count;
      if (auto it = pool_state_.find(key); it != pool_state_.end()) {
        p.s.reached = it->second.s.reached;
        p.observed = it->second.observed;
        // Same target: the pool keeps its waits and last result.
        if (!it->second.s.manual && it->second.s.target == t.count) {
          p.s.last_result = it->second.s.last_result;
          p.s.next_allowed_ns = it->second.s.next_allowed_ns;
          p.misses = it->second.misses;
        }
      }
      next[key] = std::move(p);
    }
  }
  pool_state_ = std::move(next);
}

void Engine::drop_manual(bool pools_only, const std::string& why) {
  std::deque<ActionRequest> keep;
  for (auto& r : manual_) {
    if (pools_only && (r.kind != ActionKind::Pool || r.lease != 0)) {  // a lease outlives a reload
      keep.push_back(std::move(r));
      continue;
    }
    ActionOutcome o;
    o.req = std::move(r);
    o.result = "refused";
    o.detail = why;
    o.start_ns = o.end_ns = now_ns_;
    dropped_.push_back(std::move(o));
  }
  manual_ = std::move(keep);
}

std::vector<ActionOutcome> Engine::take_dropped() {
  std::vector<ActionOutcome> out;
  out.swap(dropped_);
  return out;
}

// ------------------------------------------------------------ observation --

void Engine::ingest(const Observation& o) {
  if (o.now_ns < now_ns_) samples_.clear();  // the clock went back: the windows start again
  now_ns_ = o.now_ns;

  if (!o.nodes.empty()) {
    std::set<int> seen;
    for (const auto& n : o.nodes) {
      seen.insert(n.node);
      NodeTrack& t = node_state_[n.node];
      t.node = n.node;
      t.score = n.score;
      t.seen = n;
      // The free pages over compaction.settle: the oldest kept is the last at or before its start.
      if (!t.free_seen.empty() && t.free_seen.back().first > o.now_ns) t.free_seen.clear();
      t.free_seen.emplace_back(o.now_ns, n.free_pages);
      const uint64_t settle = policy_.compaction.settle_ns;
      while (t.free_seen.size() > 1 && o.now_ns - t.free_seen[1].first >= settle) t.free_seen.pop_front();
    }
    for (auto it = node_state_.begin(); it != node_state_.end();) {
      if (seen.count(it->first)) {
        ++it;
      } else {
        raise_marks_.erase(it->first);
        it = node_state_.erase(it);
      }
    }
  }

  const ScoreTrigger& sc = policy_.compaction.score;
  for (auto& [id, t] : node_state_) {
    if (!sc.enabled || !policy_.compaction.nodes.contains(id)) t.hot = false;
    else if (t.score > sc.high) t.hot = true;
    else if (t.score < sc.low) t.hot = false;
  }

  for (auto& [key, p] : pool_state_) p.observed = false;
  if (!o.pools.empty()) observed_pools_.clear();
  for (const auto& po : o.pools) observed_pools_[{po.node < 0 ? -1 : po.node, po.size_kib}] = po.total;
  for (const auto& po : o.pools) {
    auto it = pool_state_.find({po.node < 0 ? -1 : po.node, po.size_kib});
    if (it == pool_state_.end()) continue;
    it->second.observed = true;
    it->second.s.reached = po.total;
  }

  // Counters: fold this tick's increase into the adjusted totals.
  const bool raised_now = proactiveness_raised();
  Sample s;
  s.t = o.now_ns;
  if (raw_ && !samples_.empty()) {
    const Sample& prev = samples_.back();
    s.stalls = sat_add(prev.stalls, counter_delta(o.stalls_total, raw_->stalls));
    s.hist = prev.hist + (o.stall_hist - raw_->hist);
    uint64_t caused = counter_delta(o.fragd_compaction_ns, raw_->fragd_ns);
    // kcompactd's proactive runs are fragd's doing while fragd holds the
    // knob raised (at either end of the interval).
    if (raised_now || raw_->raised) caused = sat_add(caused, counter_delta(o.proactive_compaction_ns, raw_->proactive_ns));
    s.caused_ns = sat_add(prev.caused_ns, caused);
  }
  raw_ = Raw{o.stalls_total, o.stall_hist, o.fragd_compaction_ns, o.proactive_compaction_ns, raised_now};

  const uint64_t keep = std::max(policy_.compaction.demand.window_ns, kBudgetWindowNs);
  const uint64_t gap = keep / kSamplesPerWindow;
  if (samples_.size() >= 2 && samples_.back().t - samples_[samples_.size() - 2].t < gap)
    samples_.back() = std::move(s);
  else
    samples_.push_back(std::move(s));
  // The newest sample at least `keep` old stays as the baseline.
  while (samples_.size() >= 2 && samples_[1].t + keep <= now_ns_) samples_.pop_front();
}

const Engine::Sample* Engine::baseline(uint64_t span_ns) const {
  if (samples_.empty()) return nullptr;
  for (auto it = samples_.rbegin(); it != samples_.rend(); ++it)
    if (it->t + span_ns <= now_ns_) return &*it;
  return &samples_.front();  // less history than the span: what there is
}

uint64_t Engine::budget_used_ns() const {
  const Sample* b = baseline(kBudgetWindowNs);
  if (!b) return 0;
  return samples_.back().caused_ns - b->caused_ns;
}

uint64_t Engine::expected_duration_ns() const {
  // The longest of the recent runs, not their mean: a node compaction cannot be
  // stopped once written, so the budget is kept by not starting one that might not fit.
  uint64_t longest = 0;
  for (uint64_t d : recent_durations_ns_) longest = std::max(longest, d);
  return longest;
}

uint64_t Engine::wait_ns(unsigned misses) const {
  const uint64_t base = policy_.compaction.min_interval_ns;
  const uint64_t cap = std::max(policy_.compaction.backoff.max_ns, base);
  uint64_t w = base;
  for (unsigned i = 0; i < misses && w < cap; ++i) w = w > cap / 2 ? cap : w * 2;
  return std::min(w, cap);
}

bool Engine::settled(const NodeTrack& n) const {
  const uint64_t settle = policy_.compaction.settle_ns;
  if (settle == 0) return true;
  if (n.free_seen.empty() || now_ns_ - n.free_seen.front().first < settle) return false;  // not watched so long
  // Both ways: while a consumer takes memory the blocks made are taken back; while one gives it
  // back, compaction moves pages about to be freed (4 of every 4 where 1 stays: act scenario (a)).
  uint64_t most = n.seen.free_pages, least = n.seen.free_pages;
  for (const auto& [t, free] : n.free_seen) {
    most = std::max(most, free);
    least = std::min(least, free);
  }
  return most - least <= n.seen.total_pages / 100;
}

uint64_t Engine::window_stalls(uint64_t span_ns) const {
  const Sample* b = baseline(span_ns);
  if (!b || samples_.empty()) return 0;
  return samples_.back().stalls - b->stalls;
}

uint64_t Engine::goal_blocks(const NodeTrack& n, const TriggerInputs& in, uint64_t room_ns) const {
  const unsigned order = policy_.compaction.reserve.order;
  const uint64_t holds = n.seen.free_pages >> order;  // blocks the free pages could make
  const uint64_t have = reserve_blocks(n.seen, policy_.compaction);
  uint64_t goal = 0;
  const NodeFacts f = facts(n);
  for (const NodeTrigger* t : node_triggers()) goal = std::max(goal, t->goal(f, in));
  goal = std::min(std::max(goal, have + 1), holds);
  if (goal <= have) return have;  // nothing the free pages could add
  if (goal * 10 >= holds * 9) return 0;
  if (n.ns_per_block > 0) {
    const uint64_t afford = room_ns / n.ns_per_block;
    goal = std::min(goal, have + std::max<uint64_t>(afford, 1));
  }
  return goal;
}

std::vector<int> Engine::scope_nodes() const {
  std::vector<int> v;
  for (const auto& [id, t] : node_state_)
    if (policy_.compaction.nodes.contains(id)) v.push_back(id);
  return v;
}

// ---------------------------------------------------------------- triggers --

std::optional<std::string> Engine::demand_reason() const {
  const DemandTrigger& d = policy_.compaction.demand;
  if (!d.enabled || samples_.size() < 2) return std::nullopt;
  const Sample* b = baseline(d.window_ns);
  const Sample& n = samples_.back();
  if (!b || b == &n || n.t <= b->t) return std::nullopt;
  const double span_ns = static_cast<double>(n.t - b->t);
  const uint64_t stalls = n.stalls - b->stalls;
  if (d.stalls_per_second > 0) {
    const double rate = static_cast<double>(stalls) / (span_ns / 1e9);
    if (rate > d.stalls_per_second)
      return format_count(rate) + " stalls/s of order>=" + std::to_string(d.min_order) + " > " +
             format_count(d.stalls_per_second) + " over " + format_duration(span_ns);
  }
  if (d.stall_p99_ns > 0) {
    const LatencyHist h = n.hist - b->hist;
    const uint64_t count = h.bucket_total();
    if (count >= kDemandP99MinStalls) {
      const double p99 = percentile_ns(h, 0.99);
      if (p99 > static_cast<double>(d.stall_p99_ns))
        return "stall p99 " + format_duration(p99) + " > " + format_duration(static_cast<double>(d.stall_p99_ns)) + " over " +
               format_duration(span_ns) + " (" + std::to_string(count) + " stalls)";
    }
  }
  return std::nullopt;
}

NodeFacts Engine::facts(const NodeTrack& n) const { return NodeFacts{n.seen, n.hot, settled(n)}; }

TriggerInputs Engine::inputs(const Round& k) const {
  return TriggerInputs{policy_.compaction, k.demand, k.demand_stalls};
}

std::optional<Engine::Fired> Engine::node_trigger(const NodeTrack& n, const TriggerInputs& in) const {
  if (!policy_.compaction.nodes.contains(n.node)) return std::nullopt;
  const NodeFacts f = facts(n);
  for (const NodeTrigger* t : node_triggers())
    if (auto why = t->fires(f, in)) return Fired{t->kind(), std::move(*why)};
  return std::nullopt;
}

bool Engine::settling(const NodeTrack& n, const TriggerInputs& in) const {
  if (!policy_.compaction.nodes.contains(n.node)) return false;
  const NodeFacts f = facts(n);
  for (const NodeTrigger* t : node_triggers())
    if (t->settling(f, in)) return true;
  return false;
}

bool Engine::any_trigger(const TriggerInputs& in) const {
  // settle delays only the start of an action: a node that would fire once its free memory
  // settles still holds what was raised for it.
  for (const auto& [id, t] : node_state_)
    if (node_trigger(t, in) || settling(t, in)) return true;
  return false;
}

// ----------------------------------------------------------------- decide --

ActionRequest Engine::issue(ActionRequest r) {
  if (r.id == 0) r.id = next_id_++;
  in_flight_ = r;
  return r;
}

ActionRequest Engine::restore_request(Trigger t, std::string reason) {
  ActionRequest r;
  r.kind = ActionKind::RestoreProactiveness;
  r.trigger = t;
  r.node = -1;
  r.reason = std::move(reason);
  return issue(std::move(r));
}

Engine::Round Engine::begin_round() const {
  const CompactionPolicy& c = policy_.compaction;
  Round k;
  if (policy_.act) k.demand = demand_reason();
  k.demand_stalls = window_stalls(c.demand.window_ns);
  k.used = budget_used_ns();
  // Nothing left: an action would be cut at once (its deadline is what is left).
  k.left = action_budget_ns(c.cpu_budget_ns, k.used, false);
  // Method pool sizes its goal to the budget left (goal_blocks); a compaction written to a node
  // cannot be, so it must fit whole.
  const bool proactive = c.method == CompactMethod::Proactiveness;
  if (c.method == CompactMethod::Pool) k.budget_ok = k.left > 0;
  else k.budget_ok = k.used + (proactive ? 0 : expected_duration_ns()) <= c.cpu_budget_ns && (proactive || k.left > 0);
  return k;
}

std::vector<Engine::Candidate> Engine::ready_nodes(const Round& k) {
  const CompactionPolicy& c = policy_.compaction;
  const TriggerInputs in = inputs(k);
  std::vector<Candidate> ready;
  for (auto& [id, t] : node_state_) {
    t.waiting.clear();
    t.next_allowed_ns = 0;
    bool escape = false;
    if (t.last_end_ns) {
      escape = t.misses > 0 && t.floor && t.score >= *t.floor + c.backoff.min_gain;
      t.next_allowed_ns = sat_add(*t.last_end_ns, escape ? c.min_interval_ns : wait_ns(t.misses));
    }
    if (!policy_.act) continue;
    auto fired = node_trigger(t, in);
    if (!fired) {
      if (settling(t, in)) t.waiting = "settling";
      continue;
    }
    if (now_ns_ < t.next_allowed_ns) {
      t.waiting = t.misses > 0 && !escape ? "backoff" : "min_interval";
      continue;
    }
    if (!k.budget_ok) {
      t.waiting = "cpu_budget";
      continue;
    }
    ready.push_back(Candidate{id, t.score, std::move(*fired)});
  }
  std::stable_sort(ready.begin(), ready.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return ready;
}

std::optional<ActionRequest> Engine::manual_action(const Round& k) {
  if (!policy_.act || manual_.empty()) return std::nullopt;
  ActionRequest r = std::move(manual_.front());
  manual_.pop_front();
  if (r.kind == ActionKind::Pool) r.compact_nodes = r.node >= 0 ? std::vector<int>{r.node} : scope_nodes();
  if (r.budget_ns == 0) r.budget_ns = action_budget_ns(policy_.compaction.cpu_budget_ns, k.used, true);
  return r;
}

// A value fragd raised goes back when the policy no longer asks for it, in observe mode too:
// fragd undoes what it changed.
std::optional<ActionRequest> Engine::policy_restore() {
  const CompactionPolicy& c = policy_.compaction;
  if (!proactiveness_raised() || now_ns_ < restore_next_ns_) return std::nullopt;
  if (policy_.act && c.method == CompactMethod::Proactiveness) return std::nullopt;
  return restore_request(Trigger::Policy, !policy_.act ? "policy changed: mode observe"
                                                       : std::string("policy changed: method ") + method_name(c.method));
}

// A raise ends after proactiveness.hold, once no trigger holds, or when the cpu budget is spent.
std::optional<ActionRequest> Engine::held_restore(const Round& k) {
  const CompactionPolicy& c = policy_.compaction;
  const uint64_t now = now_ns_;
  if (c.method != CompactMethod::Proactiveness || !raised_since_ns_ || now < restore_next_ns_) return std::nullopt;
  const uint64_t held = now - std::min(now, *raised_since_ns_);
  if (held >= c.proactiveness.hold_ns)
    return restore_request(Trigger::Hold, "held " + format_duration(static_cast<double>(held)) + " (proactiveness.hold " +
                                              format_duration(static_cast<double>(c.proactiveness.hold_ns)) + ")");
  if (!any_trigger(inputs(k)))
    return restore_request(raised_trigger_, "no trigger holds any more: no node hot, no demand, reserve met");
  if (proactiveness_raised() && k.used > c.cpu_budget_ns)
    return restore_request(Trigger::Hold, "cpu budget: " + format_duration(static_cast<double>(k.used)) +
                                              " of compaction in the last 60s > " +
                                              format_duration(static_cast<double>(c.cpu_budget_ns)));
  return std::nullopt;
}

PoolInputs Engine::pool_inputs(const Round& k) const {
  return PoolInputs{k.left, action_budget_ns(policy_.compaction.cpu_budget_ns, k.used, true)};
}

ActionRequest Engine::pool_request(const PoolTrigger& t, const PoolKey& key, PoolWant w) const {
  ActionRequest r;
  r.kind = ActionKind::Pool;
  r.trigger = t.kind();
  r.node = key.first;
  r.size_kib = key.second;
  r.target = w.target;
  r.restore_to = w.restore_to;
  r.compact_nodes = key.first >= 0 ? std::vector<int>{key.first} : scope_nodes();
  r.budget_ns = w.budget_ns;
  r.reason = std::move(w.reason);
  return r;
}

std::optional<ActionRequest> Engine::pool_action(const Round& k) {
  const PoolTrigger& t = pool_target_trigger();
  const PoolInputs in = pool_inputs(k);
  for (const auto& [key, p] : pool_state_) {
    // Leased pages ride on the policy's target (concerns/act/leases.h).
    const PoolFacts f{key, p.observed ? std::optional<uint64_t>(p.s.reached) : std::nullopt, p.s.target,
                      leases_.leased(key), now_ns_ < p.s.next_allowed_ns, false};
    if (auto w = t.fires(f, in)) return pool_request(t, key, std::move(*w));
  }
  return std::nullopt;
}

ActionRequest Engine::compact_request(const Candidate& best, const Round& k, uint64_t page_kib) const {
  const CompactionPolicy& c = policy_.compaction;
  ActionRequest r;
  r.trigger = best.fired.trigger;
  r.kind = ActionKind::Compact;
  r.node = best.node;
  r.reason = best.fired.reason;
  r.budget_ns = k.left;
  if (c.method != CompactMethod::Pool) return r;
  const NodeTrack& t = node_state_.at(best.node);
  r.have_blocks = reserve_blocks(t.seen, c);
  r.goal_blocks = goal_blocks(t, inputs(k), c.cpu_budget_ns > k.used ? c.cpu_budget_ns - k.used : 0);
  // The goal's temporary pool is the node's pool of reserve.order: not while leases hold it.
  const uint64_t goal_pool_kib = page_kib << c.reserve.order;
  if (leases_.leased({best.node, goal_pool_kib}) || lease_pools_.count({best.node, goal_pool_kib})) r.goal_blocks = 0;
  if (r.goal_blocks == 0) r.reason += "; the goal is near all the node's free memory: whole node";
  else r.reason += strf("; goal %llu free order-%u blocks (has %llu)", static_cast<unsigned long long>(r.goal_blocks),
                        c.reserve.order, static_cast<unsigned long long>(r.have_blocks));
  return r;
}

ActionRequest Engine::raise_request(const std::vector<Candidate>& ready) {
  const Candidate& best = ready.front();
  ActionRequest r;
  r.trigger = best.fired.trigger;
  r.kind = ActionKind::RaiseProactiveness;
  r.node = -1;
  r.proactiveness = policy_.compaction.proactiveness.value;
  r.reason = strf("node %d: ", best.node) + best.fired.reason;
  if (ready.size() > 1) r.reason += strf(" (and %zu more nodes)", ready.size() - 1);
  raise_marks_.clear();
  for (const auto& cand : ready) {
    const NodeTrack& t = node_state_.at(cand.node);
    raise_marks_[cand.node] = RaiseMark{t.score, reserve_blocks(t.seen, policy_.compaction)};
  }
  return r;
}

// The steps in the order they win: the guard's put-back, then (nothing in flight) a manual
// request, a restore the policy asks for, a lease pool put back, and in act mode the end of a
// raise, a pool target, a node's trigger.
std::optional<ActionRequest> Engine::decide(const Observation& o) {
  ingest(o);
  const Round k = begin_round();
  std::vector<Candidate> ready = ready_nodes(k);  // every node's waiting, whatever is returned

  note_ended(leases_.expire(now_ns_));
  if (auto r = guard_action(o)) return issue(std::move(*r));  // observe mode too: a put-back
  if (in_flight_) return std::nullopt;
  if (auto r = manual_action(k)) return issue(std::move(*r));
  if (auto r = policy_restore()) return r;  // restore_request issued it
  // Pages of ended leases go back, in observe mode too (fragd undoes what it changed).
  if (auto r = lease_pool_action(k)) return issue(std::move(*r));
  if (!policy_.act) return std::nullopt;
  if (auto r = held_restore(k)) return r;
  if (auto r = pool_action(k)) return issue(std::move(*r));

  const bool proactive = policy_.compaction.method == CompactMethod::Proactiveness;
  if (ready.empty() || (proactive && raised_since_ns_)) return std::nullopt;
  if (!proactive) return issue(compact_request(ready.front(), k, o.page_kib));
  return issue(raise_request(ready));
}

}  // namespace fragd
