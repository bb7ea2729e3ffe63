// Runs one act-mode action against an Actuator and measures its outcome
// (scores and free blocks before and after, pool read back, pages migrated).
// The daemon's ActionRunner calls it on its worker thread with the sysfs
// actuator; the engine's replay tests call it with the fake one, so both run
// the same steps. Times (start_ns, end_ns) are left to the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "act/actuator.h"
#include "act/engine.h"
#include "policy/policy.h"

namespace fragd {

class ActionExecutor {
 public:
  struct Hooks {
    // Cumulative pages migrated by fragd's own compactions; empty: 0.
    std::function<uint64_t()> pages_migrated;
    // Called with vm.compaction_proactiveness's value before fragd first
    // raises it, to keep it somewhere that outlives fragd; an error aborts
    // the raise. Empty: nothing kept.
    std::function<Result<void>(unsigned)> remember;
    // Called once that value is back in place.
    std::function<void()> forget;
  };

  ActionExecutor(Actuator& a, Hooks hooks) : act_(a), hooks_(std::move(hooks)) {}

  // dry_run (policy.dry_run): reads only, result "dry_run".
  ActionOutcome run(const ActionRequest& r, const Policy& p);
  // Puts back the proactiveness value fragd replaced, if it replaced one.
  Result<void> restore();
  std::optional<unsigned> saved_proactiveness() const { return saved_; }

 private:
  uint64_t migrated() const { return hooks_.pages_migrated ? hooks_.pages_migrated() : 0; }

  Actuator& act_;
  Hooks hooks_;
  std::optional<unsigned> saved_;
};

}  // namespace fragd
