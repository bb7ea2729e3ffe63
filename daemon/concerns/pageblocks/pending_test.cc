// SPDX-License-Identifier: Apache-2.0
// Map requests waiting for a scan, answered by the first scan that will do.
#include <gtest/gtest.h>

#include "concerns/pageblocks/pending.h"

namespace {

using fragd::PendingMaps;

TEST(PendingMaps, AScanThatBeganLateEnoughAnswersAndAnEarlierOneWaitsForTheNext) {
  PendingMaps<int> p;
  p.add(1, 1000, 5, 10);  // wants a scan begun at 1000 or later
  p.add(2, 3000, 5, 20);
  bool again = false;
  auto due = p.scan_ended(6, true, 2000, "", again);  // began at 2000: good for 1 only
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].token, 1u);
  EXPECT_EQ(due[0].ask, 10);
  EXPECT_TRUE(due[0].with_scan);
  EXPECT_TRUE(again) << "2 still waits: the next scan answers it";
  due = p.scan_ended(7, true, 3500, "", again);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].token, 2u);
  EXPECT_FALSE(again);
  EXPECT_EQ(p.size(), 0u);
}

TEST(PendingMaps, AFailedScanAnswersOnlyRequestsMadeBeforeItEnded) {
  PendingMaps<int> p;
  p.add(1, 1000, 5, 0);
  p.add(2, 1000, 7, 0);  // asked after scan 7 had ended
  bool again = false;
  auto due = p.scan_ended(7, false, 0, "kpageflags: EIO", again);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].token, 1u);
  EXPECT_FALSE(due[0].with_scan);
  EXPECT_TRUE(again);
  due = p.scan_ended(8, false, 0, "", again);  // no error, no scan: nothing to answer with
  EXPECT_TRUE(due.empty());
  EXPECT_TRUE(again);
}

}  // namespace

namespace {

TEST(PendingMaps, TheNewestOldestOkIsWhatOneScanMustBeginAfterToAnswerAll) {
  fragd::PendingMaps<int> p;
  EXPECT_EQ(p.newest_oldest_ok(), 0u);
  p.add(1, 500, 0, 1);
  p.add(2, 900, 0, 2);
  p.add(3, 0, 0, 3);
  EXPECT_EQ(p.newest_oldest_ok(), 900u);
  bool again = false;
  auto due = p.scan_ended(1, true, 600, "", again);  // a scan begun at 600 answers 1 and 3
  ASSERT_EQ(due.size(), 2u);
  EXPECT_TRUE(again);
  EXPECT_EQ(p.newest_oldest_ok(), 900u);
}

}  // namespace
