// SPDX-License-Identifier: Apache-2.0
// Tests of the log-linear histogram buckets (include/fragd_common.h) and of
// base/histogram: percentiles and interval arithmetic.
#include "base/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using fragd::LatencyHist;

namespace {

constexpr uint32_t kLast = FRAGD_HIST_BUCKETS - 1;

// Values from 1 ns to 2^40 ns: every power of two and its neighbours, plus
// a log-uniform sample.
std::vector<uint64_t> probe_values() {
  std::vector<uint64_t> v;
  for (int k = 0; k <= 40; ++k) {
    uint64_t p = 1ULL << k;
    v.push_back(p);
    v.push_back(p + 1);
    if (p > 1) v.push_back(p - 1);
    v.push_back(p + p / 3);
  }
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exp(0.0, 40.0);
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<uint64_t>(std::exp2(exp(rng))));
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST(HistBuckets, ValueLiesWithinItsBucket) {
  for (uint64_t ns : probe_values()) {
    uint32_t b = fragd_hist_bucket(ns);
    ASSERT_LT(b, FRAGD_HIST_BUCKETS) << ns;
    EXPECT_LE(fragd_hist_lower(b), ns) << "ns=" << ns << " b=" << b;
    if (b != kLast) {
      EXPECT_LT(ns, fragd_hist_upper(b)) << "ns=" << ns << " b=" << b;
    }
  }
}

TEST(HistBuckets, BoundsRoundTrip) {
  EXPECT_EQ(FRAGD_HIST_BUCKETS, 194);
  for (uint32_t b = 0; b < FRAGD_HIST_BUCKETS; ++b) {
    EXPECT_EQ(fragd_hist_bucket(fragd_hist_lower(b)), b) << b;
    if (b != kLast) {
      EXPECT_EQ(fragd_hist_bucket(fragd_hist_upper(b) - 1), b) << b;
      EXPECT_EQ(fragd_hist_upper(b), fragd_hist_lower(b + 1)) << b;
    }
  }
  EXPECT_EQ(fragd_hist_bucket(0), 0u);
  EXPECT_EQ(fragd_hist_bucket(1023), 0u);
  EXPECT_EQ(fragd_hist_bucket(1024), 1u);
  EXPECT_EQ(fragd_hist_lower(kLast), 1ULL << 34);
  EXPECT_EQ(fragd_hist_upper(kLast), ~0ULL);
  EXPECT_EQ(fragd_hist_bucket(1ULL << 40), kLast);
  EXPECT_EQ(fragd_hist_bucket(~0ULL), kLast);
}

TEST(HistBuckets, Monotonic) {
  for (uint32_t b = 0; b + 1 < FRAGD_HIST_BUCKETS; ++b) EXPECT_LT(fragd_hist_lower(b), fragd_hist_lower(b + 1)) << b;
  uint32_t prev = 0;
  for (uint64_t ns : probe_values()) {
    uint32_t b = fragd_hist_bucket(ns);
    EXPECT_GE(b, prev) << ns;
    prev = b;
  }
}

TEST(HistBuckets, WidthAtMostOneEighthOfLowerBound) {
  for (uint32_t b = 1; b < kLast; ++b) {
    uint64_t lo = fragd_hist_lower(b), width = fragd_hist_upper(b) - lo;
    EXPECT_LE(width * 8, lo) << "bucket " << b << " [" << lo << ", " << fragd_hist_upper(b) << ")";
  }
}

TEST(HistPercentile, WithinTenPercentOfExactOnLogUniformSamples) {
  // 10000 samples log-uniform from 1 us to 10 s.
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> exponent(std::log10(1e3), std::log10(1e10));
  std::vector<uint64_t> samples;
  LatencyHist h;
  for (int i = 0; i < 10000; ++i) {
    auto ns = static_cast<uint64_t>(std::pow(10.0, exponent(rng)));
    samples.push_back(ns);
    h.add(ns);
  }
  std::sort(samples.begin(), samples.end());
  ASSERT_EQ(h.count, 10000u);
  ASSERT_EQ(h.bucket_total(), 10000u);
  for (double q : {0.5, 0.9, 0.99, 0.999, 0.1, 0.01}) {
    size_t rank = static_cast<size_t>(std::ceil(q * samples.size()));
    double exact = static_cast<double>(samples[rank - 1]);
    double est = fragd::percentile_ns(h, q);
    EXPECT_NEAR(est, exact, 0.10 * exact) << "q=" << q;
  }
}

TEST(HistPercentile, WithinTenPercentOnClusteredSamples) {
  // Two narrow clusters: most stalls ~300 us, a tail ~40 ms.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> fast(300e3, 20e3), slow(40e6, 2e6);
  std::vector<uint64_t> samples;
  LatencyHist h;
  for (int i = 0; i < 5000; ++i) {
    double v = i % 50 == 0 ? slow(rng) : fast(rng);
    auto ns = static_cast<uint64_t>(std::max(1.0, v));
    samples.push_back(ns);
    h.add(ns);
  }
  std::sort(samples.begin(), samples.end());
  for (double q : {0.5, 0.9, 0.99}) {
    double exact = static_cast<double>(samples[static_cast<size_t>(std::ceil(q * samples.size())) - 1]);
    EXPECT_NEAR(fragd::percentile_ns(h, q), exact, 0.10 * exact) << "q=" << q;
  }
}

TEST(HistPercentile, EdgeCases) {
  LatencyHist empty;
  EXPECT_TRUE(std::isnan(fragd::percentile_ns(empty, 0.5)));
  EXPECT_TRUE(std::isnan(fragd::max_ns(empty)));

  LatencyHist one;
  one.add(300000);  // bucket [294912, 327680)
  uint32_t b = fragd_hist_bucket(300000);
  double mid = (fragd_hist_lower(b) + fragd_hist_upper(b)) / 2.0;
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(one, 0.0), mid);
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(one, 0.5), mid);
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(one, 1.0), mid);
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(one, 7.0), mid);   // clamped
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(one, -1.0), mid);  // clamped
  EXPECT_DOUBLE_EQ(fragd::max_ns(one), static_cast<double>(fragd_hist_upper(b)));

  LatencyHist huge;
  huge.add(1ULL << 36, 10);
  huge.add(2000);
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(huge, 0.99), static_cast<double>(1ULL << 34));
  EXPECT_DOUBLE_EQ(fragd::max_ns(huge), static_cast<double>(1ULL << 34));

  // Interpolation across a bucket: 4 samples in one bucket at 1/8, 3/8, 5/8, 7/8.
  LatencyHist four;
  four.buckets[100] = 4;
  four.count = 4;
  double lo = fragd_hist_lower(100), w = fragd_hist_upper(100) - lo;
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(four, 0.25), lo + w * 0.125);
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(four, 0.50), lo + w * 0.375);
  EXPECT_DOUBLE_EQ(fragd::percentile_ns(four, 1.00), lo + w * 0.875);
}

TEST(HistInterval, SubtractsAndClampsAtZero) {
  LatencyHist older, newer;
  older.add(5000, 3);
  newer.add(5000, 5);
  newer.add(1000000, 2);
  LatencyHist d = newer - older;
  EXPECT_EQ(d.count, 4u);
  EXPECT_EQ(d.sum_ns, 2 * 5000u + 2 * 1000000u);
  EXPECT_EQ(d.buckets[fragd_hist_bucket(5000)], 2u);
  EXPECT_EQ(d.buckets[fragd_hist_bucket(1000000)], 2u);
  EXPECT_EQ(d.bucket_total(), 4u);

  // One bucket behind while the total went forward: clamped, not wrapped.
  LatencyHist odd = older;
  odd.count = 10;
  odd.buckets[fragd_hist_bucket(5000)] = 1;
  LatencyHist c = odd - older;
  EXPECT_EQ(c.buckets[fragd_hist_bucket(5000)], 0u);
  EXPECT_EQ(c.count, 7u);
}

TEST(HistInterval, RestartTakesNewer) {
  LatencyHist older, newer;
  older.add(5000, 100);
  newer.add(7000, 4);  // fragd restarted: counts began again from 0
  LatencyHist d = newer - older;
  EXPECT_EQ(d.count, 4u);
  EXPECT_EQ(d.buckets[fragd_hist_bucket(7000)], 4u);
  EXPECT_EQ(d.buckets[fragd_hist_bucket(5000)], 0u);
  EXPECT_EQ(d.sum_ns, 28000u);
}

TEST(HistInterval, Merge) {
  LatencyHist a, b;
  a.add(5000, 2);
  b.add(5000, 1);
  b.add(1ULL << 35);
  LatencyHist m = a + b;
  EXPECT_EQ(m.count, 4u);
  EXPECT_EQ(m.buckets[fragd_hist_bucket(5000)], 3u);
  EXPECT_EQ(m.buckets[kLast], 1u);
  EXPECT_EQ(m.sum_ns, 15000u + (1ULL << 35));
  a += b;
  EXPECT_EQ(a.buckets, m.buckets);
}
