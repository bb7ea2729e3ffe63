// SPDX-License-Identifier: Apache-2.0
// Allocation counting (bpf.allocations): when the per-page mm_page_alloc program should be
// attached, and for how long it was. `exact` attaches it for good and `off` never; `adaptive`
// wants it from a stall (the wake-up ring buffer's event, or stall entries that moved between
// ticks) until adaptive_hold has passed without one, and while a node has fewer free
// pageblocks than adaptive_free_blocks. The daemon attaches and detaches; this decides.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "concerns/stalls/metrics.h"

namespace fragd {

struct CountingSettings {
  std::string mode = "adaptive";  // bpf.allocations: adaptive, exact, off
  uint64_t hold_ns = 300'000'000'000ULL;
  uint64_t free_blocks = 0;  // 0: not a reason
};

// A switch the daemon is to make, and why (for its log line).
struct CountingSwitch {
  bool on = false;
  std::string why;
};

class CountingSteer {
 public:
  // `stats` receives the time counted and the switches made; it outlives this.
  CountingSteer(CountingSettings s, CountingStats& stats) : s_(std::move(s)), stats_(stats) {}
  void set(const CountingSettings& s) { s_ = s; }  // a reload: effective at the next decision
  // Counting time is accounted from `now`, with the program attached or not.
  void start(uint64_t now, bool counting) {
    counted_until_ns_ = now;
    stats_.counting = counting;
  }

  // The wake-up ring buffer's event: an allocation of `order` stalled at `now` while counting
  // was off. Adaptive mode switches on at once.
  std::optional<CountingSwitch> stalled(unsigned order, uint64_t now, bool counting);
  // A tick: `entries`, the direct stall entries of traced orders so far (a change since the
  // last tick is a stall), the free pageblocks of each node (nullptr: no snapshot). Adds the
  // time counted up to `now` and says what to switch, if anything.
  // `wanted`: another reason to count ("" none), such as the defrag_mode guard's atomic check.
  std::optional<CountingSwitch> tick(uint64_t now, uint64_t entries, const std::map<int, uint64_t>* free_blocks,
                                     bool counting, const std::string& wanted = "");
  // The daemon switched (or found it attached or not): counts the switch and the time before it.
  void switched(bool on, uint64_t now, bool was_counting);
  // Adds the time counting was on up to `now`.
  void account(uint64_t now, bool counting);

 private:
  CountingSettings s_;
  CountingStats& stats_;
  uint64_t last_stall_ns_ = 0;      // the last stall seen; 0: none yet
  uint64_t last_entries_ = 0;       // direct stall entries at the last tick
  uint64_t counted_until_ns_ = 0;   // counting time accounted up to here
};

}  // namespace fragd
