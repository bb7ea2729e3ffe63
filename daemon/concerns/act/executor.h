// SPDX-License-Identifier: Apache-2.0
// Runs one act-mode action against an Actuator and measures its outcome
// (scores and free blocks before and after, pool read back, pages migrated).
// The daemon's ActionRunner calls it on its worker thread with the sysfs
// actuator; the engine's replay tests call it with the fake one, so both run
// the same steps. Times (start_ns, end_ns) are left to the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "concerns/act/actuator.h"
#include "kernel/page_size.h"
#include "concerns/act/engine.h"
#include "policy/policy.h"

namespace fragd {

// The CLOCK_MONOTONIC deadline of an action started at `start_ns` that may
// use `budget_ns` of compaction (ActionRequest::budget_ns); 0: none.
uint64_t action_deadline_ns(uint64_t start_ns, uint64_t budget_ns);

class ActionExecutor {
 public:
  struct Hooks {
    // Cumulative pages migrated by fragd's own compactions; empty: 0.
    std::function<uint64_t()> pages_migrated;
    // Called with a setting's canonical file (saved_state.h), its value and
    // the value fragd is about to write, before fragd changes it for a while
    // (vm.compaction_proactiveness raised, a temporary pool), to keep it
    // somewhere that outlives fragd; an error aborts the change. Empty:
    // nothing kept.
    std::function<Result<void>(const std::string&, uint64_t, uint64_t)> remember;
    // Called once that file's value is back in place.
    std::function<void(const std::string&)> forget;
    // Cumulative entries of processes other than fragd's writers into direct compaction or
    // reclaim for allocations of the given order or above (BPF). Empty: a goal's temporary
    // pool never gives way.
    std::function<uint64_t(unsigned)> foreign_stalls;
  };

  // page_kib: the kernel's base page; a reserve order's pool is page_kib << order.
  ActionExecutor(Actuator& a, Hooks hooks, uint64_t page_kib = kernel_page_kib())
      : act_(a), hooks_(std::move(hooks)), page_kib_(page_kib) {}

  // dry_run (policy.dry_run): reads only, result "dry_run". The actuator's
  // deadline is action_deadline_ns(now, r.budget_ns) for the action's
  // writes: one killed there makes the result "cut".
  ActionOutcome run(const ActionRequest& r, const Policy& p);
  // Puts back the proactiveness value fragd replaced, if it replaced one.
  Result<void> restore();
  std::optional<unsigned> saved_proactiveness() const { return saved_; }
  std::optional<unsigned> saved_defrag_mode() const { return saved_defrag_; }

 private:
  ActionOutcome run_action(const ActionRequest& r, const Policy& p);
  void run_compact(const ActionRequest& r, const Policy& p, ActionOutcome& o);
  void run_raise(const ActionRequest& r, bool dry, ActionOutcome& o);
  void run_pool(const ActionRequest& r, const Policy& p, ActionOutcome& o);
  // The defrag_mode guard's two actions (concerns/act/defrag_guard.h): 0 written with the value before
  // saved, and that value put back while the setting still reads the 0 fragd wrote.
  void defrag_mode_off(ActionOutcome& o);
  void defrag_mode_restore(ActionOutcome& o);
  uint64_t migrated() const { return hooks_.pages_migrated ? hooks_.pages_migrated() : 0; }
  // Compact with method pool and a goal: the temporary pool (engine.h).
  void compact_to_goal(const ActionRequest& r, const Policy& p, ActionOutcome& o);
  // After a goal's pool held fewer than the goal: the node compacted until the missing blocks exist.
  void compact_missing(const ActionRequest& r, const Policy& p, uint64_t held, uint64_t take, ActionOutcome& o);
  // The node's score and free blocks of `order` after an action, into `o`.
  void measure_after(int node, unsigned order, ActionOutcome& o);

  Actuator& act_;
  Hooks hooks_;
  uint64_t page_kib_ = 4;
  std::optional<unsigned> saved_;
  std::optional<unsigned> saved_defrag_;  // vm.defrag_mode before the guard wrote 0
};

}  // namespace fragd
