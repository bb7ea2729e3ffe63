// SPDX-License-Identifier: Apache-2.0
// The bucket that holds forced full scans (a root client's `map --max-age 0`) to a share of a
// core with a burst of a few scans: it holds up to `burst` scans and refills at `share` of a
// core's time divided by the last full scan's CPU time. A count of scans, not of nanoseconds:
// scans' costs differ (the first one, on cold caches, cost up to a third more than the next
// here), and a bucket of CPU time sized from one scan then let a sixth run in a burst of five.
// The refill, at the latest cost, keeps their CPU at the share over time.
#pragma once

#include <algorithm>
#include <cstdint>

namespace fragd {

class FullScanBucket {
 public:
  // share: of one core, > 0 (pageblocks.full_scan_budget: at least 0.001%); burst: scans.
  FullScanBucket(double share, uint64_t burst)
      : share_(std::max(share, 1e-9)), burst_(static_cast<double>(std::max<uint64_t>(burst, 1))) {}

  // A full scan ended at `now_ns` (a monotonic clock) after `cpu_ns` of CPU time.
  void spent(uint64_t cpu_ns, uint64_t now_ns) {
    refill(now_ns);
    if (!cost_ns_) tokens_ = burst_;  // the first one: the bucket was full
    cost_ns_ = std::max<uint64_t>(cpu_ns, 1);
    tokens_ -= 1;
  }
  // 0 when a full scan may run at `now_ns`, else the nanoseconds until one may.
  uint64_t wait_ns(uint64_t now_ns) {
    if (!cost_ns_) return 0;  // no full scan yet: the bucket is full
    refill(now_ns);
    if (tokens_ >= 1) return 0;
    return static_cast<uint64_t>((1 - tokens_) * static_cast<double>(cost_ns_) / share_) + 1;
  }

 private:
  void refill(uint64_t now_ns) {
    if (cost_ns_ && now_ns > last_ns_)
      tokens_ = std::min(burst_, tokens_ + share_ * static_cast<double>(now_ns - last_ns_) / static_cast<double>(cost_ns_));
    last_ns_ = std::max(last_ns_, now_ns);
  }
  double share_;
  double burst_;
  double tokens_ = 0;     // scans that may run now
  uint64_t cost_ns_ = 0;  // the last full scan's CPU time (0: none yet)
  uint64_t last_ns_ = 0;
};

}  // namespace fragd
