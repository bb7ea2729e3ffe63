// SPDX-License-Identifier: Apache-2.0
// The Engine's side of the vm.defrag_mode guard (concerns/act/defrag_guard.h): its requests as actions.
#include "concerns/act/engine.h"

namespace fragd {

std::optional<ActionRequest> Engine::guard_action(const Observation& o) {
  auto g = guard_.decide(o.guard, policy_.act, policy_.compaction.defrag_guard, in_flight_.has_value());
  if (!g) return std::nullopt;
  ActionRequest r;
  r.kind = g->off ? ActionKind::DefragModeOff : ActionKind::DefragModeRestore;
  r.trigger = g->off ? Trigger::Guard : g->on_hold ? Trigger::Hold : Trigger::Policy;
  r.node = -1;
  r.reason = g->reason;
  return r;
}

}  // namespace fragd
