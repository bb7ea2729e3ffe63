// SPDX-License-Identifier: Apache-2.0
// The Engine's leases (`fragctl ensure`, `fragctl release`): concerns/act/leases.h keeps them, this file
// turns them into pool actions. Split from engine.cc by concern.
#include "concerns/act/engine.h"
#include "concerns/act/engine_detail.h"

#include <algorithm>

#include "base/format.h"
#include "base/text.h"
#include "concerns/act/triggers.h"

namespace fragd {

using namespace engine_detail;

namespace {

Error observe_refusal() {
  return make_error(
      "ensure refused: fragd runs in observe mode and changes nothing; set `mode: act` in the policy file and "
      "reload (`fragctl reload`), or ask `fragctl preflight` what this node can supply");
}

}  // namespace

Result<Engine::EnsureQueued> Engine::request_ensure(const std::string& consumer, int node, uint64_t size_kib,
                                                    uint64_t count, uint64_t hold_ns, const MachineFacts& m,
                                                    uint64_t budget_ns) {
  if (!policy_.act)
    return observe_refusal();
  if (std::find(m.hugepage_kib.begin(), m.hugepage_kib.end(), size_kib) == m.hugepage_kib.end()) {
    std::string offered;
    for (uint64_t s : m.hugepage_kib) offered += (offered.empty() ? "" : ", ") + format_size_kib(s);
    return make_error("ensure refused: the kernel offers no " + format_size_kib(size_kib) + " huge pages (offered: " +
                      (offered.empty() ? std::string("none") : offered) + "); for plain free blocks use --order");
  }
  if (node >= 0 && std::find(m.nodes.begin(), m.nodes.end(), node) == m.nodes.end())
    return make_error(strf("ensure refused: node %d does not exist on this machine (nodes with memory: %s)", node,
                           join_ints(m.nodes).c_str()));
  const PoolKey key{node < 0 ? -1 : node, size_kib};
  // The global pool is the sum of the node pools: leases (and policy targets) of one size are
  // on the one or on the others, never both, or each would undo the other's writes.
  auto other_kind = [&](const PoolKey& k) { return k.second == size_kib && (k.first < 0) != (key.first < 0); };
  for (const auto& [k, p] : pool_state_)
    if (other_kind(k))
      return make_error("ensure refused: the policy holds " + pool_label(k.first, size_kib) + " at " +
                        std::to_string(p.s.target) + (key.first < 0 ? "; name a node with --node" : "; leave out --node"));
  for (const auto& k : leases_.pools())
    if (other_kind(k))
      return make_error("ensure refused: leases hold " + pool_label(k.first, size_kib) +
                        (key.first < 0 ? "; name a node with --node" : "; leave out --node"));

  // The pool's base: the policy's target, the base its leases began from, or its size now.
  uint64_t base = 0;
  if (auto p = pool_state_.find(key); p != pool_state_.end()) {
    base = p->second.s.target;
  } else if (auto lp = lease_pools_.find(key); lp != lease_pools_.end()) {
    base = lp->second.base;
  } else if (auto o = observed_pools_.find(key); o != observed_pools_.end()) {
    base = o->second;
  } else {
    return make_error("ensure refused: fragd has not read " + pool_label(key.first, size_kib) +
                      " yet (its nr_hugepages under /sys): wait one tick and ask again");
  }
  auto lease = leases_.add(consumer, key.first, size_kib, count, hold_ns, now_ns_, next_lease_);
  if (!lease) return lease.error();
  next_lease_++;
  if (!pool_state_.count(key)) lease_pools_.try_emplace(key, LeasePool{base, 0, 0});

  ActionRequest r;
  r.id = next_id_++;
  r.kind = ActionKind::Pool;
  r.trigger = Trigger::Lease;
  r.node = key.first;
  r.size_kib = size_kib;
  r.target = base + leases_.leased(key);
  r.restore_to = base;
  r.lease = lease->id;
  r.budget_ns = budget_ns;
  r.reason = strf("ensure for %s: %llu x %s on %s, held %s (lease %llu)", consumer.c_str(),
                  static_cast<unsigned long long>(count), format_size_kib(size_kib).c_str(),
                  key.first < 0 ? "the host" : strf("node %d", key.first).c_str(),
                  format_duration(static_cast<double>(hold_ns), DurationStyle::Exact).c_str(),
                  static_cast<unsigned long long>(lease->id));
  leases_.set_action(lease->id, r.id);
  lease->action_id = r.id;
  manual_.push_back(r);
  return EnsureQueued{*lease, r.id, r.target};
}

Result<uint64_t> Engine::request_blocks(int node, uint64_t goal_blocks, uint64_t have_blocks, const std::string& reason,
                                        uint64_t budget_ns) {
  if (!policy_.act)
    return observe_refusal();
  ActionRequest r;
  r.id = next_id_++;
  r.kind = ActionKind::Compact;
  r.trigger = Trigger::Lease;
  r.node = node;
  r.goal_blocks = goal_blocks;
  r.have_blocks = have_blocks;
  r.reason = reason;
  r.budget_ns = budget_ns;
  manual_.push_back(r);
  return r.id;
}

std::vector<Lease> Engine::release(const std::optional<std::string>& consumer, std::optional<uint64_t> lease_id) {
  auto out = leases_.release(consumer, lease_id, "released", now_ns_);
  note_ended(out);
  return out;
}

void Engine::note_ended(std::vector<Lease> v) {
  for (auto& l : v) ended_leases_.push_back(std::move(l));
}

std::vector<Lease> Engine::take_ended_leases() {
  std::vector<Lease> out;
  out.swap(ended_leases_);
  return out;
}

std::optional<ActionRequest> Engine::lease_pool_action(const Round& k) {
  const PoolTrigger& t = lease_pool_trigger();
  const PoolInputs in = pool_inputs(k);
  for (auto it = lease_pools_.begin(); it != lease_pools_.end();) {
    const PoolKey& key = it->first;
    const LeasePool& lp = it->second;
    auto o = observed_pools_.find(key);
    PoolFacts f{key, o == observed_pools_.end() ? std::nullopt : std::optional<uint64_t>(o->second), lp.base,
                leases_.leased(key), now_ns_ < lp.next_allowed_ns, false};
    // The policy names it now (its loop holds base + leases), or it is back at its base with no
    // lease left: no longer a lease pool.
    if (pool_state_.count(key) || (f.observed && !f.waiting && f.leased == 0 && *f.observed == lp.base)) {
      it = lease_pools_.erase(it);
      continue;
    }
    for (const auto& q : manual_) f.lease_queued = f.lease_queued || (q.lease && q.node == key.first && q.size_kib == key.second);
    if (auto w = t.fires(f, in)) return pool_request(t, key, std::move(*w));
    ++it;
  }
  return std::nullopt;
}

}  // namespace fragd
