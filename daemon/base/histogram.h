// fragd's log-linear latency histograms (include/fragd_common.h): interval
// arithmetic, percentiles and a bcc-style log2 text rendering. Pure logic,
// shared by the daemon and fragctl; their JSON form is the control
// protocol's (protocol/hist.h).
#pragma once

#include <cstdint>
#include <string>
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

// bcc-style log2 histogram (as printed by bcc's runqlat/biolatency):
//
//      usecs               : count     distribution
//      262.1 -> 524.3      : 1500     |****************************************|
//
// Rows are exact: row 0 is bucket 0, [0, 2^10) ns; row k >= 1 is the octave
// [2^(9+k), 2^(10+k)) ns, which is exactly the 8 fine buckets of that power of
// two (no fine bucket straddles two rows); the last row is the open-ended
// bucket [2^34 ns, inf). The bounds are shown converted to `unit`: "nsecs"
// shows integers with an inclusive upper bound as bcc does ("1024 -> 2047");
// "usecs" (the default) shows microseconds with 1 decimal and "msecs"
// milliseconds with 3 decimals, both as the half-open [lower -> upper) of the
// row, rounded (powers of two of ns are never whole usecs). Any other unit
// name is shown as given but scaled as usecs. Only rows from the first to the
// last non-empty one are printed; the star bar is 40 characters for the
// largest row, floor(40 * count / max) for the others. Every line ends with
// '\n'. Returns "" for an empty histogram.
std::string render_log2(const LatencyHist& h, std::string unit = "usecs");

}  // namespace fragd
