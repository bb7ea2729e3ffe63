// SPDX-License-Identifier: Apache-2.0
// A scan's age, which decides whether `fragctl map` is answered from the
// latest scan or waits for a new one, is measured on the boot clock: setting
// the wall clock (NTP, an operator, a VM resumed) neither makes an old scan
// look fresh nor a fresh one look old. The clocks are injected.
#include "concerns/pageblocks/pageblock.h"

#include <gtest/gtest.h>

namespace fragd {
namespace {

constexpr uint64_t kScanAgeSecond = 1'000'000'000ULL;

ScanResult scan_at(uint64_t wall_ns, uint64_t boot_ns) {
  ScanResult r;
  r.wall_time_ns = wall_ns;
  r.boot_time_ns = boot_ns;
  return r;
}

TEST(ScanAge, WallClockSetBackDoesNotMakeAnOldScanFresh) {
  // Scanned 10 minutes ago; the wall clock was set back 10 minutes since.
  const ScanResult r = scan_at(1'700'000'000 * kScanAgeSecond, 1000 * kScanAgeSecond);
  const ScanClock now{1'700'000'000 * kScanAgeSecond + 1 * kScanAgeSecond, 1600 * kScanAgeSecond};
  EXPECT_EQ(scan_age_ns(r, now), 600 * kScanAgeSecond);
}

TEST(ScanAge, WallClockSetForwardDoesNotMakeAFreshScanOld) {
  // Scanned 2 s ago; the wall clock jumped an hour ahead since.
  const ScanResult r = scan_at(1'700'000'000 * kScanAgeSecond, 1000 * kScanAgeSecond);
  const ScanClock now{1'700'003'602 * kScanAgeSecond, 1002 * kScanAgeSecond};
  EXPECT_EQ(scan_age_ns(r, now), 2 * kScanAgeSecond);
}

TEST(ScanAge, NeverNegative) {
  const ScanResult r = scan_at(5 * kScanAgeSecond, 1000 * kScanAgeSecond);
  EXPECT_EQ(scan_age_ns(r, ScanClock{4 * kScanAgeSecond, 999 * kScanAgeSecond}), 0u);
}

}  // namespace
}  // namespace fragd
