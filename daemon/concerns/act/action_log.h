// SPDX-License-Identifier: Apache-2.0
// The actions fragd finished: each logged (a warning for one cut short, failed, short of its
// target or stopped by the guard), counted for the metrics (ActStats), and the last ones kept
// for `fragctl status` and `fragctl action`; and the requests queued by hand not yet finished.
// With the protocol's views of an action (docs/control-protocol.md "Acting"): times in outcomes
// are CLOCK_MONOTONIC, `mono_now`/`real_now` convert them to Unix time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "concerns/act/engine.h"
#include "concerns/act/metrics.h"
#include "base/result.h"
#include "protocol/action.h"

namespace fragd {

ActionSummary action_summary(const ActionRequest& r);
ActionReport action_report(const ActionOutcome& o, uint64_t mono_now, uint64_t real_now);
// The log line of one finished action.
std::string outcome_line(const ActionOutcome& o);

class ActionLog {
 public:
  static constexpr size_t kKept = 64;  // outcomes kept for `fragctl action` and status

  // A request made by hand (fragctl compact, pool set) was queued.
  void queued(uint64_t id) { queued_.insert(id); }
  // An action finished: logged, counted in stats(), kept.
  void record(const ActionOutcome& o);
  // The state of action `id`: done (with its report), running (`running` is it), queued, or an
  // error naming an id fragd does not know (any more).
  Result<ActionStateReply> state(uint64_t id, const std::optional<ActionRequest>& running, uint64_t mono_now,
                                 uint64_t real_now) const;
  // The last `n` outcomes, oldest first.
  std::vector<ActionReport> last(size_t n, uint64_t mono_now, uint64_t real_now) const;
  // Actions cut short at their deadline, all kinds.
  uint64_t cuts() const;

  ActStats& stats() { return stats_; }
  const ActStats& stats() const { return stats_; }

 private:
  ActStats stats_;
  std::deque<ActionOutcome> recent_;  // the last kKept outcomes, oldest first
  std::set<uint64_t> queued_;
};

}  // namespace fragd
