// SPDX-License-Identifier: Apache-2.0
#include "base/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fragd {

namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

uint64_t sat_add(uint64_t a, uint64_t b) { return a > kU64Max - b ? kU64Max : a + b; }
uint64_t clamp_sub(uint64_t a, uint64_t b) { return a >= b ? a - b : 0; }

// Buckets of `h` with the size fixed to FRAGD_HIST_BUCKETS (a hand-built
// LatencyHist may have a shorter vector).
uint64_t bucket_at(const LatencyHist& h, size_t b) { return b < h.buckets.size() ? h.buckets[b] : 0; }

}  // namespace

void LatencyHist::add(uint64_t ns, uint64_t n) {
  if (buckets.size() != FRAGD_HIST_BUCKETS) buckets.resize(FRAGD_HIST_BUCKETS, 0);
  uint32_t b = fragd_hist_bucket(ns);
  buckets[b] = sat_add(buckets[b], n);
  count = sat_add(count, n);
  uint64_t add_sum = (n != 0 && ns > kU64Max / n) ? kU64Max : ns * n;
  sum_ns = sat_add(sum_ns, add_sum);
}

uint64_t LatencyHist::bucket_total() const {
  uint64_t t = 0;
  for (uint64_t c : buckets) t = sat_add(t, c);
  return t;
}

LatencyHist operator-(const LatencyHist& newer, const LatencyHist& older) {
  LatencyHist d;
  if (newer.count < older.count) {  // counters restarted from 0
    d = newer;
    d.buckets.resize(FRAGD_HIST_BUCKETS, 0);
    return d;
  }
  for (size_t b = 0; b < FRAGD_HIST_BUCKETS; ++b)
    d.buckets[b] = clamp_sub(bucket_at(newer, b), bucket_at(older, b));
  d.count = newer.count - older.count;
  d.sum_ns = clamp_sub(newer.sum_ns, older.sum_ns);
  return d;
}

LatencyHist& operator+=(LatencyHist& a, const LatencyHist& b) {
  a.buckets.resize(FRAGD_HIST_BUCKETS, 0);
  for (size_t i = 0; i < FRAGD_HIST_BUCKETS; ++i) a.buckets[i] = sat_add(a.buckets[i], bucket_at(b, i));
  a.count = sat_add(a.count, b.count);
  a.sum_ns = sat_add(a.sum_ns, b.sum_ns);
  return a;
}

LatencyHist operator+(const LatencyHist& a, const LatencyHist& b) {
  LatencyHist r = a;
  r += b;
  return r;
}

double percentile_ns(const LatencyHist& h, double q) {
  const uint64_t total = h.bucket_total();
  if (total == 0) return std::numeric_limits<double>::quiet_NaN();
  if (!(q >= 0.0)) q = 0.0;  // also catches NaN
  if (q > 1.0) q = 1.0;
  double r = std::ceil(q * static_cast<double>(total));
  if (r < 1.0) r = 1.0;
  if (r > static_cast<double>(total)) r = static_cast<double>(total);
  uint64_t rank = static_cast<uint64_t>(r);

  uint64_t before = 0;  // samples in the buckets below b
  for (uint32_t b = 0; b < FRAGD_HIST_BUCKETS; ++b) {
    uint64_t n = bucket_at(h, b);
    if (n == 0) continue;
    if (rank <= before + n) {
      if (b == FRAGD_HIST_BUCKETS - 1) return static_cast<double>(fragd_hist_lower(b));
      double lo = static_cast<double>(fragd_hist_lower(b));
      double width = static_cast<double>(fragd_hist_upper(b) - fragd_hist_lower(b));
      double pos = (static_cast<double>(rank - before) - 0.5) / static_cast<double>(n);
      return lo + width * pos;
    }
    before += n;
  }
  return std::numeric_limits<double>::quiet_NaN();  // unreachable: rank <= total
}

double max_ns(const LatencyHist& h) {
  for (int b = FRAGD_HIST_BUCKETS - 1; b >= 0; --b) {
    if (bucket_at(h, static_cast<size_t>(b)) == 0) continue;
    if (b == FRAGD_HIST_BUCKETS - 1) return static_cast<double>(fragd_hist_lower(b));
    return static_cast<double>(fragd_hist_upper(static_cast<uint32_t>(b)));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace fragd
