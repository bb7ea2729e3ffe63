// SPDX-License-Identifier: Apache-2.0
#include "fragd/tick_clock.h"

#include <algorithm>

namespace fragd {

void TickClock::fired(uint64_t now_ns, uint64_t expirations) {
  if (expirations == 0) return;
  if (now_ns > due_ns_) late_max_s_ = std::max(late_max_s_, static_cast<double>(now_ns - due_ns_) / 1e9);
  missed_ += expirations - 1;
  due_ns_ += expirations * tick_ns_;
}

}  // namespace fragd
