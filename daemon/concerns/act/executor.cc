// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/executor.h"

#include "concerns/act/pool.h"
#include "concerns/act/saved_state.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <functional>

#include "base/text.h"

namespace fragd {

ActionOutcome ActionExecutor::run(const ActionRequest& r, const Policy& p) {
  // Every compaction and pool-growing write of the action ends by its deadline.
  act_.set_deadline(action_deadline_ns(now_ns(CLOCK_MONOTONIC), r.budget_ns));
  ActionOutcome o = run_action(r, p);
  act_.set_deadline(0);
  return o;
}

namespace {
void set_error(ActionOutcome& o, const Error& e) {
  o.result = "error";
  o.detail = e.message;
}
}  // namespace

uint64_t action_deadline_ns(uint64_t start_ns, uint64_t budget_ns) {
  if (budget_ns == 0) return 0;
  return start_ns > UINT64_MAX - budget_ns ? UINT64_MAX : start_ns + budget_ns;
}

ActionOutcome ActionExecutor::run_action(const ActionRequest& r, const Policy& p) {
  ActionOutcome o;
  o.req = r;
  const bool dry = p.dry_run;
  switch (r.kind) {
    case ActionKind::Compact:
      run_compact(r, p, o);
      break;
    case ActionKind::RaiseProactiveness:
      run_raise(r, dry, o);
      break;
    case ActionKind::RestoreProactiveness: {
      if (dry && !saved_) {
        o.result = "dry_run";
        break;
      }
      if (auto w = restore(); !w) set_error(o, w.error());
      else o.result = "ok";
      break;
    }
    case ActionKind::DefragModeOff:
    case ActionKind::DefragModeRestore:
      if (dry) o.result = "dry_run";
      else if (r.kind == ActionKind::DefragModeOff) defrag_mode_off(o);
      else defrag_mode_restore(o);
      break;
    case ActionKind::Pool:
      run_pool(r, p, o);
      break;
  }
  return o;
}

void ActionExecutor::run_compact(const ActionRequest& r, const Policy& p, ActionOutcome& o) {
  const bool dry = p.dry_run;
  const unsigned order = p.compaction.reserve.order;
  if (auto s = act_.node_score(r.node)) o.score_before = static_cast<int>(*s);
  if (auto b = act_.free_blocks(r.node, order)) o.blocks_before = *b;
  if (dry) {
    o.result = "dry_run";
    return;
  }
  std::string no_pool;
  if (r.goal_blocks > 0 && p.compaction.method == CompactMethod::Pool) {
    const uint64_t size_kib = page_kib_ << order;
    auto pool = act_.read_pool(r.node, size_kib);
    if (pool || pool.error().err != ENOENT) {
      compact_to_goal(r, p, o);
      return;
    }
    // No hugetlb pool of the reserve order's size (no hugetlbfs, or reserve.order
    // is not a hugepage size): the whole node, as method node.
    no_pool = strf("no %llu kB hugetlb pool on this kernel: the whole node was compacted",
                   static_cast<unsigned long long>(size_kib));
  }
  const uint64_t m0 = migrated();
  auto w = act_.compact_node(r.node);
  o.pages_migrated = migrated() - m0;
  measure_after(r.node, order, o);
  if (!w && w.error().err == ECANCELED) {  // fragd is exiting: the write's process was killed
    o.result = "abandoned";
    o.detail = w.error().message;
  } else if (!w && w.error().err == ETIMEDOUT) {  // the action's budget ran out: killed
    o.result = "cut";
    o.detail = w.error().message;
    if (!no_pool.empty()) o.detail += "; " + no_pool;
  } else if (!w) {
    set_error(o, w.error());
  } else {
    o.result = compaction_helped(o, p.compaction) ? "ok" : "no_gain";
    o.detail = no_pool;
  }
}

void ActionExecutor::run_raise(const ActionRequest& r, bool dry, ActionOutcome& o) {
  if (dry) {
    o.result = "dry_run";
    return;
  }
  if (!saved_) {
    auto cur = act_.read_proactiveness();
    if (!cur) {
      set_error(o, cur.error());
      return;
    }
    if (hooks_.remember)
      if (auto k = hooks_.remember(kProactivenessFile, *cur, r.proactiveness); !k) {
        set_error(o, k.error());
        return;
      }
    saved_ = *cur;
  } else if (hooks_.remember) {  // raised again, maybe to another value: the one fragd wrote
    if (auto k = hooks_.remember(kProactivenessFile, *saved_, r.proactiveness); !k) {
      set_error(o, k.error());
      return;
    }
  }
  if (auto w = act_.write_proactiveness(r.proactiveness); !w) set_error(o, w.error());
  else o.result = "ok";
}

void ActionExecutor::run_pool(const ActionRequest& r, const Policy& p, ActionOutcome& o) {
  const bool dry = p.dry_run;
  if (auto b = act_.read_pool(r.node, r.size_kib)) o.pool_before = o.pool_after = *b;
  if (dry) {
    o.result = "dry_run";
    return;
  }
  PoolRequest pr;
  pr.node = r.node;
  pr.size_kib = r.size_kib;
  pr.target = r.target;
  pr.compact_nodes = r.compact_nodes;
  pr.guard_kib = p.hugepages.guard_kib;
  pr.drop_caches = p.hugepages.drop_caches;
  pr.page_kib = page_kib_;
  // Leased pages above the pool's base go back should fragd stop (saved_state.h).
  const std::string file = pool_file(r.node, r.size_kib);
  if (r.restore_to && r.target > *r.restore_to && hooks_.remember)
    if (auto k = hooks_.remember(file, *r.restore_to, r.target); !k) {
      set_error(o, k.error());
      return;
    }
  const uint64_t m0 = migrated();
  const PoolOutcome po = resize_pool(act_, pr);
  if (r.restore_to && r.target <= *r.restore_to && po.after <= *r.restore_to && hooks_.forget) hooks_.forget(file);
  o.pages_migrated = migrated() - m0;
  o.result = po.result;
  o.detail = po.detail;
  o.pool_before = po.before;
  o.pool_after = po.after;
  o.attempts = po.attempts;
  o.compactions = po.compactions;
  o.steps = po.steps;
  if (po.dropped_caches) o.detail += std::string(o.detail.empty() ? "" : "; ") + "clean page cache dropped";
}

void ActionExecutor::defrag_mode_off(ActionOutcome& o) {
  auto cur = act_.read_defrag_mode();
  if (!cur) {
    o.result = "error";
    o.detail = cur.error().message;
    return;
  }
  if (*cur == 0) {
    o.result = "refused";
    o.detail = "vm.defrag_mode reads 0 already: nothing to turn off";
    return;
  }
  if (hooks_.remember)
    if (auto k = hooks_.remember(kDefragModeFile, *cur, 0); !k) {
      o.result = "error";
      o.detail = k.error().message;
      return;
    }
  saved_defrag_ = *cur;
  if (auto w = act_.write_defrag_mode(0); !w) {
    o.result = "error";
    o.detail = w.error().message;
    return;
  }
  o.result = "ok";
  o.detail = "vm.defrag_mode " + std::to_string(*cur) + " -> 0";
}

void ActionExecutor::defrag_mode_restore(ActionOutcome& o) {
  o.result = "ok";
  if (!saved_defrag_) {
    o.detail = "no vm.defrag_mode value saved: nothing to put back";
    return;
  }
  auto cur = act_.read_defrag_mode();
  if (!cur) {
    o.result = "error";
    o.detail = cur.error().message;
    return;
  }
  if (*cur != 0) {  // set since by someone else: theirs now
    o.detail = "vm.defrag_mode reads " + std::to_string(*cur) + ", not the 0 fragd wrote: left as it is";
  } else if (auto w = act_.write_defrag_mode(*saved_defrag_); !w) {
    o.result = "error";
    o.detail = w.error().message;
    return;
  } else {
    o.detail = "vm.defrag_mode 0 -> " + std::to_string(*saved_defrag_);
  }
  saved_defrag_.reset();
  if (hooks_.forget) hooks_.forget(kDefragModeFile);
}

Result<void> ActionExecutor::restore() {
  if (!saved_) return {};
  if (auto w = act_.write_proactiveness(*saved_); !w) return w;
  saved_.reset();
  if (hooks_.forget) hooks_.forget(kProactivenessFile);
  return {};
}

// The kernel has no "make N free blocks" call; a hugetlb pool of the goal's
// page size is one: each page the pool takes beyond the free blocks there
// are is made by direct compaction in the writing process, which stops as
// soon as it has one (the kernel captures the block for the allocation).
// The pool grows by the goal in fragd's own process (SysfsActuator::grow_pool:
// a killable child that fragd's BPF programs know as its own, so its stalls
// stay out of the stall statistics), and is put back at once: the blocks it
// held are free. Its size before is saved first (saved_state.h), so a fragd
// killed in between has it put back at its next start or by `fragd --restore`.
void ActionExecutor::measure_after(int node, unsigned order, ActionOutcome& o) {
  if (auto sc = act_.node_score(node)) o.score_after = static_cast<int>(*sc);
  if (auto b = act_.free_blocks(node, order)) o.blocks_after = *b;
}

// Pool writes one goal-sized compaction makes at most (each only while the one before added pages).
constexpr unsigned kGoalWrites = 4;
// Other processes' stalls a goal's pool gives way to, at the least.
constexpr uint64_t kGiveWayStalls = 4;

namespace {

// Grows node `node`'s pool of `size_kib` pages to `p0 + take` for a goal, through `give_way` when
// set. Direct compaction gives up early after failures in the zone (the kernel defers it for a
// number of attempts): it writes again while a write adds pages, as pool targets do, until the
// pages are held, a write fails, `gave_way()` or fragd stops. Sets `held`, the pages it holds.
Result<void> hold_pages(Actuator& act, int node, uint64_t size_kib, uint64_t p0, uint64_t take,
                        const std::function<bool()>& give_way, const std::function<bool()>& gave_way, ActionOutcome& o,
                        uint64_t& held) {
  Result<void> grow;
  for (unsigned i = 0; i < kGoalWrites; ++i) {
    const uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    grow = give_way ? act.grow_pool_giving_way(node, size_kib, p0 + take, give_way) : act.grow_pool(node, size_kib, p0 + take);
    o.attempts++;
    auto mid = act.read_pool(node, size_kib);
    const uint64_t now_held = mid && *mid > p0 ? *mid - p0 : 0;
    o.steps.push_back({"grow", node, mid ? *mid : 0, now_ns(CLOCK_MONOTONIC) - t0});
    const bool progress = now_held > held;
    held = std::max(held, now_held);
    if (!grow || !mid || held >= take || !progress || gave_way() || act.stop_requested()) break;
  }
  return grow;
}

}  // namespace

void ActionExecutor::compact_to_goal(const ActionRequest& r, const Policy& p, ActionOutcome& o) {
  const unsigned order = p.compaction.reserve.order;
  const uint64_t size_kib = page_kib_ << order;
  const std::string file = pool_file(r.node, size_kib);
  const std::string name = strf("node %d's %llu kB pool", r.node, static_cast<unsigned long long>(size_kib));
  auto mono = [] { return now_ns(CLOCK_MONOTONIC); };
  auto fail = [&o](const std::string& what) {
    o.result = "error";
    o.detail = what;
  };

  auto before = act_.read_pool(r.node, size_kib);
  if (!before) return fail(before.error().message);
  const uint64_t p0 = *before;
  // The pool holds the goal's memory for a moment: never past the guard, the host's or the node's.
  auto room = guard_room(act_, r.node, size_kib, p.hugepages.guard_kib);
  if (!room) return fail(room.error().message);
  const uint64_t take = std::min(r.goal_blocks, room->pages);
  if (take <= o.blocks_before) {
    o.result = "guard";
    o.detail = strf("goal %llu free blocks not tried: %s leaves room for %llu %llu kB pages above the guard of "
                    "%llu kB, no more than the node has free",
                    static_cast<unsigned long long>(r.goal_blocks), room->why.c_str(),
                    static_cast<unsigned long long>(room->pages), static_cast<unsigned long long>(size_kib),
                    static_cast<unsigned long long>(p.hugepages.guard_kib));
    return;
  }
  if (hooks_.remember)
    if (auto k = hooks_.remember(file, p0, p0 + take); !k) return fail(k.error().message);

  const uint64_t m0 = migrated();
  // A goal made ahead of demand (every trigger but demand and a manual request) gives way to
  // it: once processes other than fragd stall at the goal's order or above while the pool
  // grows, as demand (the demand trigger's rate, and kGiveWayStalls at least: not the odd
  // opportunistic page-cache folio), they are allocating such blocks now, and the pool would
  // hold the free ones they need. Its write is ended and the pool put back ("yielded").
  std::function<bool()> give_way;
  uint64_t stalls0 = 0, stalls_seen = 0;
  bool gave_way = false;
  if (hooks_.foreign_stalls && r.trigger != Trigger::Demand && r.trigger != Trigger::Manual) {
    stalls0 = hooks_.foreign_stalls(order);
    const uint64_t since = mono();
    const double rate = p.compaction.demand.stalls_per_second;
    give_way = [&, since, rate] {
      const uint64_t s = hooks_.foreign_stalls(order);
      const uint64_t n = s > stalls0 ? s - stalls0 : 0;
      const double elapsed_s = static_cast<double>(mono() - since) / 1e9;
      if (n >= kGiveWayStalls && static_cast<double>(n) > rate * elapsed_s) {
        gave_way = true;
        stalls_seen = n;
      }
      return gave_way;
    };
  }
  uint64_t held = 0;
  const Result<void> grow = hold_pages(act_, r.node, size_kib, p0, take, give_way, [&gave_way] { return gave_way; }, o,
                                       held);
  o.pages_migrated = migrated() - m0;

  const uint64_t t0 = mono();
  auto back = act_.write_pool(r.node, size_kib, p0);
  auto after = act_.read_pool(r.node, size_kib);
  o.steps.push_back({"release", r.node, after ? *after : 0, mono() - t0});
  if (back && after && *after <= p0) {
    if (hooks_.forget) hooks_.forget(file);
  }
  // Its blocks a CPU's page list kept, put back on the free lists.
  const std::string drained = back && held > 0 ? drain_page_lists(act_, r.node, order, held, o.steps).text() : "";
  measure_after(r.node, order, o);

  if (!back) return fail(name + " held " + std::to_string(held) + " pages and could not be put back to " +
                         std::to_string(p0) + ": " + back.error().message + " (kept in the saved state)");
  if (!grow && (grow.error().err == ECANCELED || grow.error().err == ETIMEDOUT)) {
    o.result = grow.error().err == ECANCELED ? "abandoned" : "cut";
    o.detail = grow.error().message + "; " + name + " held " + std::to_string(held) + " pages, put back to " +
               std::to_string(p0) + drained;
    return;
  }
  if (!grow) return fail(grow.error().message);
  if (gave_way) {
    o.result = "yielded";
    o.detail = strf("%s gave way after %llu of %llu pages for the goal of %llu free blocks: other processes "
                    "entered direct compaction or reclaim %llu times at order %u or above while it grew; put back "
                    "to %llu",
                    name.c_str(), static_cast<unsigned long long>(held), static_cast<unsigned long long>(take),
                    static_cast<unsigned long long>(r.goal_blocks), static_cast<unsigned long long>(stalls_seen),
                    order, static_cast<unsigned long long>(p0)) + drained;
    return;
  }
  o.detail = strf("%s held %llu of %llu pages for the goal of %llu free blocks, then freed them",
                  name.c_str(), static_cast<unsigned long long>(held), static_cast<unsigned long long>(take),
                  static_cast<unsigned long long>(r.goal_blocks)) + drained;
  compact_missing(r, p, held, take, o);
}

void ActionExecutor::compact_missing(const ActionRequest& r, const Policy& p, uint64_t held, uint64_t take,
                                     ActionOutcome& o) {
  const unsigned order = p.compaction.reserve.order;
  auto mono = [] { return now_ns(CLOCK_MONOTONIC); };
  // The pool's writes left blocks missing: the kernel deferred direct compaction (after
  // failures in the zone it skips up to 64 attempts; an order-9 allocation never reaches the
  // priority that ignores that), and writing again would not get past it. A node compaction is
  // not deferred: the node is compacted, and stopped once the goal's blocks exist (as a pool
  // target's compaction is), not run over the whole node, so it costs only what is missing.
  const uint64_t made = held > o.blocks_before ? held - o.blocks_before : 0;
  const uint64_t missing = take > o.blocks_before ? take - o.blocks_before : 0;
  if (held < take && !act_.stop_requested()) {
    const uint64_t c0 = mono();
    const uint64_t m1 = migrated();
    auto c = act_.compact_node_until(r.node, order, take);
    o.steps.push_back({"compact", r.node, 0, mono() - c0});
    o.pages_migrated += migrated() - m1;
    measure_after(r.node, order, o);
    if (!c && (c.error().err == ECANCELED || c.error().err == ETIMEDOUT)) {
      o.result = c.error().err == ECANCELED ? "abandoned" : "cut";
      o.detail += "; " + c.error().message;
      return;
    }
    if (!c) {
      o.result = "error";
      o.detail += "; then " + c.error().message;
      return;
    }
    o.detail += strf("; direct compaction made %llu of the %llu missing blocks (the kernel defers it after "
                     "failures): the node was compacted until it had %llu free blocks",
                     static_cast<unsigned long long>(made), static_cast<unsigned long long>(missing),
                     static_cast<unsigned long long>(take));
  }
  o.result = compaction_helped(o, p.compaction) ? "ok" : "no_gain";
}

}  // namespace fragd
