// SPDX-License-Identifier: Apache-2.0
// The collector's tick schedule. A periodic timer's due times are fixed; a loop
// busy past one of them shows as lateness, and past a whole tick as expirations
// that were never ticked (fragd_collector_tick_late_max_seconds,
// fragd_collector_ticks_missed_total). Pure: time comes in as arguments.
#pragma once

#include <cstdint>

namespace fragd {

class TickClock {
 public:
  // The first tick is due at start_ns + tick_ns.
  TickClock(uint64_t start_ns, uint64_t tick_ns) : tick_ns_(tick_ns), due_ns_(start_ns + tick_ns) {}

  // The timer fired `expirations` times (timerfd's count) and the loop reads it at `now_ns`:
  // one tick runs now for all of them.
  void fired(uint64_t now_ns, uint64_t expirations);

  uint64_t due_ns() const { return due_ns_; }
  double late_max_seconds() const { return late_max_s_; }
  uint64_t missed() const { return missed_; }

 private:
  uint64_t tick_ns_;
  uint64_t due_ns_;
  double late_max_s_ = 0;
  uint64_t missed_ = 0;
};

}  // namespace fragd
