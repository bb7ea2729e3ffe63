// SPDX-License-Identifier: Apache-2.0
// The engine's outcomes (what a finished action teaches it), manual requests
// (fragctl compact / pool set) and its status. The decisions are in engine.cc.
#include "concerns/act/engine.h"
#include "concerns/act/engine_detail.h"

#include "base/format.h"
#include "base/text.h"
#include "concerns/act/triggers.h"

#include <algorithm>
#include <utility>

namespace fragd {

using namespace engine_detail;

// --------------------------------------------------------------- outcomes --

void Engine::teach(int node, bool helped, std::optional<unsigned> reached, uint64_t end_ns) {
  auto it = node_state_.find(node);
  if (it == node_state_.end()) return;  // forgotten meanwhile
  NodeTrack& t = it->second;
  t.last_end_ns = end_ns;
  if (helped) {
    t.misses = 0;
    t.floor.reset();
  } else {
    t.misses = std::min(t.misses + 1, kMaxMisses);
    t.floor = reached;
  }
}

void Engine::learn(int node, const ActionOutcome& r) {
  auto it = node_state_.find(node);
  if (it == node_state_.end() || r.blocks_after <= r.blocks_before || r.end_ns <= r.start_ns) return;
  NodeTrack& t = it->second;
  // Each earlier action counts half as much as the next: a node's cost per block
  // changes with what fills it.
  t.learned_pages = t.learned_pages / 2 + static_cast<double>(r.pages_migrated);
  t.learned_ns = t.learned_ns / 2 + static_cast<double>(r.end_ns - r.start_ns);
  t.learned_blocks = t.learned_blocks / 2 + static_cast<double>(r.blocks_after - r.blocks_before);
  t.pages_per_block = t.learned_pages / t.learned_blocks;
  t.ns_per_block = std::max<uint64_t>(static_cast<uint64_t>(t.learned_ns / t.learned_blocks), 1);
}

void Engine::finished(const ActionOutcome& r) {
  if (!in_flight_ || in_flight_->id != r.req.id) return;  // not the action fragd is waiting for
  const ActionRequest req = std::move(*in_flight_);
  in_flight_.reset();
  const uint64_t end = r.end_ns ? r.end_ns : now_ns_;
  switch (req.kind) {
    case ActionKind::Compact: return compact_finished(req, r, end);
    case ActionKind::RaiseProactiveness: return raise_finished(req, r.result, end);
    case ActionKind::RestoreProactiveness: return restore_finished(r.result, end);
    case ActionKind::DefragModeOff:
    case ActionKind::DefragModeRestore: return guard_.finished(req.kind == ActionKind::DefragModeOff, r.result, end);
    case ActionKind::Pool: return pool_finished(req, r, end);
  }
}

void Engine::compact_finished(const ActionRequest& req, const ActionOutcome& r, uint64_t end) {
  const std::string& res = r.result;
  if (res == "abandoned") return;
  if (res == "dry_run") {
    if (auto it = node_state_.find(req.node); it != node_state_.end()) it->second.last_end_ns = end;
    return;
  }
  if (res != "ok" && res != "no_gain" && res != "cut") {  // cut: it ran for the time it had
    teach(req.node, false, std::nullopt, end);  // error, refused: time-only back-off
    return;
  }
  if (r.end_ns > r.start_ns) {
    recent_durations_ns_.push_back(r.end_ns - r.start_ns);
    while (recent_durations_ns_.size() > kRecentDurations) recent_durations_ns_.pop_front();
  }
  std::optional<unsigned> reached;
  if (r.score_after >= 0) reached = static_cast<unsigned>(r.score_after);
  learn(req.node, r);
  teach(req.node, compaction_helped(r, policy_.compaction), reached, end);
}

void Engine::raise_finished(const ActionRequest& req, const std::string& res, uint64_t end) {
  if (res == "ok") {
    raised_since_ns_ = end;
    raised_dry_ = false;
    raised_trigger_ = req.trigger;
    restore_failures_ = 0;
    restore_next_ns_ = 0;
  } else if (res == "dry_run" && policy_.act && policy_.dry_run &&
             policy_.compaction.method == CompactMethod::Proactiveness) {
    raised_since_ns_ = end;
    raised_dry_ = true;
    raised_trigger_ = req.trigger;
  } else if (res == "dry_run" || res == "abandoned") {
    raise_marks_.clear();
  } else {
    for (const auto& [node, mark] : raise_marks_) teach(node, false, std::nullopt, end);
    raise_marks_.clear();
  }
}

void Engine::restore_finished(const std::string& res, uint64_t end) {
  if (res == "abandoned") return;  // the runner puts the value back as fragd exits
  if (res != "ok" && res != "dry_run") {
    restore_failures_ = std::min(restore_failures_ + 1, kMaxMisses);
    restore_next_ns_ = sat_add(end, wait_ns(restore_failures_));
    return;
  }
  const CompactionPolicy& c = policy_.compaction;
  const bool real = res == "ok" && !raised_dry_;
  for (const auto& [node, mark] : raise_marks_) {
    auto it = node_state_.find(node);
    if (it == node_state_.end()) continue;
    if (!real) {
      it->second.last_end_ns = end;
      continue;
    }
    const NodeTrack& t = it->second;
    const bool helped =
        static_cast<int>(mark.score) - static_cast<int>(t.score) >= static_cast<int>(c.backoff.min_gain) ||
        (c.reserve.blocks > 0 && reserve_blocks(t.seen, c) > mark.blocks);
    teach(node, helped, t.score, end);
  }
  raise_marks_.clear();
  raised_since_ns_.reset();
  raised_dry_ = false;
  restore_failures_ = 0;
  restore_next_ns_ = 0;
}

void Engine::pool_finished(const ActionRequest& req, const ActionOutcome& r, uint64_t end) {
  const std::string& res = r.result;
  if (req.lease) {
    const std::string why = strf("its pool reached %llu of %llu (%s%s%s)", static_cast<unsigned long long>(r.pool_after),
                                 static_cast<unsigned long long>(req.target), res.c_str(),
                                 r.detail.empty() ? "" : ": ", r.detail.c_str());
    if (auto l = leases_.made(req.id, res == "ok", why, end); l && l->state == LeaseState::Ended) note_ended({*l});
  }
  if (auto lp = lease_pools_.find({req.node, req.size_kib}); lp != lease_pools_.end() && req.lease == 0) {
    // A lease pool put back: retried after a failure with the back-off's waits.
    if (res == "ok") {
      lp->second.misses = 0;
      lp->second.next_allowed_ns = 0;
    } else if (res != "abandoned") {
      lp->second.misses = std::min(lp->second.misses + 1, kMaxMisses);
      lp->second.next_allowed_ns = sat_add(end, wait_ns(lp->second.misses));
    }
  }
  auto it = pool_state_.find({req.node, req.size_kib});
  if (it == pool_state_.end()) return;  // the target went with a reload
  PoolTrack& p = it->second;
  p.s.last_result = res;
  if (res == "ok" || res == "short" || res == "guard" || res == "cut") p.s.reached = r.pool_after;
  if (p.s.target != req.target) {  // a new target: act on it at once
    p.misses = 0;
    p.s.next_allowed_ns = 0;
  } else if (res == "ok") {
    p.misses = 0;
    p.s.next_allowed_ns = sat_add(end, policy_.compaction.min_interval_ns);
  } else if (res == "dry_run") {
    p.s.next_allowed_ns = sat_add(end, wait_ns(p.misses));
  } else if (res != "abandoned") {
    p.misses = std::min(p.misses + 1, kMaxMisses);
    p.s.next_allowed_ns = sat_add(end, wait_ns(p.misses));
  }
}

// ---------------------------------------------------------------- manual --

Result<std::vector<uint64_t>> Engine::request_compact(int node, const MachineFacts& m, uint64_t budget_ns) {
  if (!policy_.act)
    return make_error(
        "compaction refused: fragd runs in observe mode and changes nothing; set `mode: act` in the "
        "policy file and reload (`fragctl reload`) to allow actions");
  std::vector<int> targets;
  if (node >= 0) {
    if (std::find(m.nodes.begin(), m.nodes.end(), node) == m.nodes.end())
      return make_error(strf("compaction refused: node %d does not exist on this machine (nodes with memory: %s)",
                            node, join_ints(m.nodes).c_str()));
    targets.push_back(node);
  } else {
    for (int n : m.nodes)
      if (policy_.compaction.nodes.contains(n)) targets.push_back(n);
    if (targets.empty())
      return make_error("compaction refused: no node of compaction.nodes is on this machine (nodes with memory: " +
                        join_ints(m.nodes) + "); name one with --node");
  }
  std::vector<uint64_t> ids;
  for (int n : targets) {
    auto q = std::find_if(manual_.begin(), manual_.end(), [n](const ActionRequest& r) {
      return r.kind == ActionKind::Compact && r.node == n;
    });
    if (q != manual_.end()) {  // already queued: one compaction serves both, bounded by the longer
      q->budget_ns = std::max(q->budget_ns, budget_ns);
      ids.push_back(q->id);
      continue;
    }
    ActionRequest r;
    r.id = next_id_++;
    r.kind = ActionKind::Compact;
    r.trigger = Trigger::Manual;
    r.node = n;
    r.reason = node >= 0 ? strf("fragctl compact --node %d", n) : "fragctl compact";
    r.budget_ns = budget_ns;
    ids.push_back(r.id);
    manual_.push_back(std::move(r));
  }
  return ids;
}

Result<uint64_t> Engine::request_pool(uint64_t size_kib, int node, uint64_t count, const MachineFacts& m,
                                     uint64_t budget_ns) {
  if (!policy_.act)
    return make_error(
        "pool set refused: fragd runs in observe mode and changes nothing; set `mode: act` in the "
        "policy file and reload (`fragctl reload`) to allow actions");
  if (std::find(m.hugepage_kib.begin(), m.hugepage_kib.end(), size_kib) == m.hugepage_kib.end()) {
    std::string offered;
    for (uint64_t s : m.hugepage_kib) offered += (offered.empty() ? "" : ", ") + std::to_string(s) + " kB";
    return make_error(strf("pool set refused: the kernel offers no %llu kB huge pages (offered: %s)",
                          static_cast<unsigned long long>(size_kib), offered.empty() ? "none" : offered.c_str()));
  }
  uint64_t total_kib = m.mem_total_kib;
  std::string where = "this machine's";
  if (node >= 0) {
    auto it = std::find(m.nodes.begin(), m.nodes.end(), node);
    if (it == m.nodes.end())
      return make_error(strf("pool set refused: node %d does not exist on this machine (nodes with memory: %s)",
                            node, join_ints(m.nodes).c_str()));
    const size_t i = static_cast<size_t>(it - m.nodes.begin());
    total_kib = i < m.node_total_kib.size() ? m.node_total_kib[i] : 0;
    where = strf("node %d's", node);
  }
  if (total_kib > 0 && size_kib > 0 && count > total_kib / size_kib)
    return make_error(strf("pool set refused: %llu pages of %llu kB exceed %s memory (%llu kB); ask for at most %llu",
                          static_cast<unsigned long long>(count), static_cast<unsigned long long>(size_kib),
                          where.c_str(), static_cast<unsigned long long>(total_kib),
                          static_cast<unsigned long long>(total_kib / size_kib)));

  const int key_node = node < 0 ? -1 : node;
  // A run-time target replaces the targets of that size it overlaps (the
  // global pool is the sum of the node pools), until the next reload.
  for (auto it = pool_state_.begin(); it != pool_state_.end();) {
    const bool overlaps = it->first.second == size_kib && (it->first.first < 0) != (key_node < 0);
    it = overlaps ? pool_state_.erase(it) : std::next(it);
  }
  PoolTrack& p = pool_state_[{key_node, size_kib}];
  p.s.node = key_node;
  p.s.size_kib = size_kib;
  p.s.target = count;
  p.s.manual = true;
  p.s.next_allowed_ns = 0;
  p.misses = 0;

  const std::string reason = strf("fragctl pool set %llukB %llu", static_cast<unsigned long long>(size_kib),
                                 static_cast<unsigned long long>(count)) +
                             (node >= 0 ? strf(" --node %d", node) : "");
  for (auto& q : manual_)
    if (q.kind == ActionKind::Pool && q.node == key_node && q.size_kib == size_kib) {
      q.target = count;  // still queued: it takes the newer count and bound
      q.budget_ns = budget_ns;
      q.reason = reason;
      return q.id;
    }
  ActionRequest r;
  r.id = next_id_++;
  r.kind = ActionKind::Pool;
  r.trigger = Trigger::Manual;
  r.node = key_node;
  r.size_kib = size_kib;
  r.target = count;
  r.reason = reason;
  r.budget_ns = budget_ns;
  manual_.push_back(r);
  return r.id;
}

// ----------------------------------------------------------------- status --

std::vector<NodeState> Engine::nodes() const {
  std::vector<NodeState> v;
  for (const auto& [id, t] : node_state_) {
    if (!policy_.compaction.nodes.contains(id)) continue;
    NodeState s = t;  // the reported part of what the engine keeps
    s.node = id;
    v.push_back(std::move(s));
  }
  return v;
}

std::vector<PoolState> Engine::pools() const {
  std::vector<PoolState> v;
  for (const auto& [key, p] : pool_state_) v.push_back(p.s);
  return v;
}

}  // namespace fragd
