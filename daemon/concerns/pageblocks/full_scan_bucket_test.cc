// SPDX-License-Identifier: Apache-2.0
#include "concerns/pageblocks/full_scan_bucket.h"

#include <gtest/gtest.h>

namespace {

using fragd::FullScanBucket;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1'000 * kMs;

// Runs full scans back to back from `t` while the bucket lets them; the first costs `first_ns`,
// the others `rest_ns` (CPU time, which here is also their wall time). Returns how many ran.
int burst(FullScanBucket& b, uint64_t& t, uint64_t first_ns, uint64_t rest_ns, int asked) {
  int ran = 0;
  for (int i = 0; i < asked; i++) {
    if (b.wait_ns(t) != 0) continue;
    const uint64_t cost = ran == 0 ? first_ns : rest_ns;
    t += cost;
    b.spent(cost, t);
    ran++;
  }
  return ran;
}

TEST(FullScanBucket, FiveInABurstWhateverTheFirstScanCost) {
  // The first scan on cold caches cost a third more than the next ones (seen under ASan): a
  // bucket of CPU time sized from it let 6 of 8 run.
  for (uint64_t first : {300 * kMs, 400 * kMs, 900 * kMs}) {
    FullScanBucket b(0.02, 5);
    uint64_t t = 1 * kS;
    EXPECT_EQ(burst(b, t, first, 300 * kMs, 8), 5) << "first scan " << first / kMs << " ms";
  }
}

TEST(FullScanBucket, TheNextScanWaitsForItsShareOfACoreThenRuns) {
  FullScanBucket b(0.02, 5);
  uint64_t t = 1 * kS;
  ASSERT_EQ(burst(b, t, 300 * kMs, 300 * kMs, 5), 5);
  const uint64_t wait = b.wait_ns(t);
  // One scan of 300 ms at 2% of a core: 15 s of refill, less what the burst's own 1.2 s gave.
  EXPECT_GT(wait, 13 * kS);
  EXPECT_LE(wait, 15 * kS + 1);
  EXPECT_NE(b.wait_ns(t + wait - 10 * kMs), 0u);
  EXPECT_EQ(b.wait_ns(t + wait), 0u);
}

TEST(FullScanBucket, OverTimeTheScansCpuStaysAtTheShare) {
  FullScanBucket b(0.02, 5);
  uint64_t t = 0, cpu = 0;
  const uint64_t end = 3600 * kS;
  while (t < end) {
    const uint64_t w = b.wait_ns(t);
    if (w) {
      t += w;
      continue;
    }
    const uint64_t cost = (t / kS) % 2 ? 200 * kMs : 400 * kMs;  // costs that vary
    t += cost;
    cpu += cost;
    b.spent(cost, t);
  }
  const double share = static_cast<double>(cpu) / static_cast<double>(t);
  // 2% of the hour, plus at most the burst of 5 (2 s of 3600: 0.06%).
  EXPECT_GT(share, 0.015);
  EXPECT_LT(share, 0.0215);
}

TEST(FullScanBucket, NoScanYetNoWait) {
  FullScanBucket b(0.00001, 5);
  EXPECT_EQ(b.wait_ns(123), 0u);
}

}  // namespace
