// SPDX-License-Identifier: Apache-2.0
// fragd's log-linear latency histograms (include/fragd_common.h): interval
// arithmetic and percentiles. Pure logic, shared by the daemon and fragctl;
// their JSON form is the control protocol's (protocol/hist.h), their text
// rendering fragctl's (fragctl/render/log2.h).
#pragma once

#include <cstdint>
#include <vector>

#include "fragd_common.h"

namespace fragd {

struct LatencyHist {
  // One counter per bucket of fragd_hist_bucket(); always FRAGD_HIST_BUCKETS long.
  std::vector<uint64_t> buckets = std::vector<uint64_t>(FRAGD_HIST_BUCKETS, 0);
  uint64_t count = 0;   // number of samples (as reported; see bucket_total())
  uint64_t sum_ns = 0;  // sum of all samples, ns

  // Records n samples of value ns (count, sum and bucket).
  void add(uint64_t ns, uint64_t n = 1);
  // Sum of the bucket counters. Equal to `count` for a consistent snapshot;
  // percentiles use this total, so a count read a moment apart from the
  // buckets (per-CPU maps are summed without a lock) cannot skew them.
  uint64_t bucket_total() const;
  bool empty() const { return bucket_total() == 0; }
};

// Interval between two cumulative snapshots: newer - older. Never negative: if
// the total count went backwards, fragd restarted and its counters began
// again from 0, so the interval is the newer snapshot itself (Prometheus'
// counter-reset rule); any other single counter that went backwards is
// clamped at 0.
LatencyHist operator-(const LatencyHist& newer, const LatencyHist& older);
// Merge (sum) of two histograms, e.g. of several orders; saturates at 2^64-1.
LatencyHist operator+(const LatencyHist& a, const LatencyHist& b);
LatencyHist& operator+=(LatencyHist& a, const LatencyHist& b);

// Quantile q (clamped to [0,1]) in ns. Finds the bucket holding the sample of
// rank r = max(1, ceil(q * total)) and interpolates linearly inside
// [lower, upper) of that bucket, placing the k-th of its n samples at
// (k - 0.5) / n of the width (samples spread evenly over the bucket). The
// open-ended last bucket returns its lower bound (2^34 ns). Returns NaN for an
// empty histogram (callers print "-" / JSON null).
double percentile_ns(const LatencyHist& h, double q);

// Upper bound of the highest non-empty bucket (its lower bound for the
// open-ended last bucket), in ns; NaN for an empty histogram.
double max_ns(const LatencyHist& h);


// When a tick reads a set of histograms: a count that moves with them (stalls ended, compaction
// runs) is due when it moved since the last read or at it (an end counts first, then writes its
// histogram: an end read between the two is read whole at the next read). Due at first.
class HistWatch {
 public:
  bool due(uint64_t count) {
    const bool d = moved_ || count != count_;
    moved_ = count != count_;
    count_ = count;
    return d;
  }
  void again() { moved_ = true; }  // the read failed: due at the next

 private:
  uint64_t count_ = 0;
  bool moved_ = true;
};

}  // namespace fragd
