// SPDX-License-Identifier: Apache-2.0
// The vm.defrag_mode guard (compaction.defrag_guard): defrag_mode (Linux 6.15+) makes the kernel
// reclaim and compact before it lets allocations mix pageblocks. Two failures come with it:
// allocations that cannot sleep fail while memory is free (they can do neither), and reclaim
// storms that pressure-based OOM killers answer. While defrag_mode is 1 and, over the window,
// atomic failures per second or PSI memory `full` stay above their limits, the guard asks to
// write 0 for `hold`, then to put the value back. Pure: samples in, requests out; the executor
// writes and saves the value (concerns/act/saved_state.h), so it goes back on exit too.
//
// Rules:
//  - A check needs a whole window of samples, all with defrag_mode 1; the atomic check also
//    needs allocation counting on in every one of them (failures are counted only then).
//  - Once fragd put the value back, the next window starts then: the guard acts again only on
//    what happened with defrag_mode on again.
//  - The hold ends the write: after `hold` the value goes back; it also goes back at once when
//    the policy no longer asks for the guard (observe mode, guard off), as every setting fragd
//    changed does.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "policy/policy.h"

namespace fragd {

// What the guard reads each tick.
struct GuardSample {
  uint64_t now_ns = 0;
  std::optional<unsigned> defrag_mode;  // none: the kernel has no vm.defrag_mode
  uint64_t atomic_failures = 0;         // cumulative, every order (fragd_alloc_failures_total{can_sleep="false"})
  bool counting = false;                // allocation counting on: atomic failures are counted
  std::optional<double> pressure_full_s;  // cumulative PSI memory full, seconds; none: no PSI
};

struct GuardRequest {
  bool off = false;  // true: write 0; false: put the saved value back
  bool on_hold = false;  // a put-back because the hold ended (else: the policy no longer asks)
  std::string reason;
};

class DefragModeGuard {
 public:
  // One tick. `act`: the policy is in act mode; `busy`: an action is in flight (nothing asked then).
  std::optional<GuardRequest> decide(const GuardSample& s, bool act, const DefragGuard& g, bool busy);
  // The executor's result of a request: "ok" changes the guard's state; anything else leaves it.
  void finished(bool off, const std::string& result, uint64_t end_ns);
  // fragd holds defrag_mode off since this time (none: it does not).
  std::optional<uint64_t> held_since() const { return off_since_; }
  // The rates over the last window, for status and logs (none: not a whole window).
  std::optional<double> atomic_per_second() const { return atomic_rate_; }
  std::optional<double> pressure_full_percent() const { return pressure_pct_; }

 private:
  void rates(const DefragGuard& g);
  void forget_window();  // the samples and the rates from them
  std::deque<GuardSample> window_;
  std::optional<uint64_t> off_since_;
  uint64_t retry_at_ = 0;  // a put-back that failed waits until then
  std::optional<double> atomic_rate_, pressure_pct_;
};

}  // namespace fragd
