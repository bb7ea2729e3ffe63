// SPDX-License-Identifier: Apache-2.0
// The series plan: order groups, the free lists' groups, the classic bucket layouts.
#include "base/series.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fragd {
namespace {

std::vector<std::string> labels(const std::vector<OrderGroup>& gs) {
  std::vector<std::string> out;
  for (const auto& g : gs) out.push_back(g.label);
  return out;
}

TEST(OrderGroups, EachStartRunsToTheNextAndTheLastToOrderTen) {
  const auto gs = order_groups(1, {1, 4, 9});
  EXPECT_EQ(labels(gs), (std::vector<std::string>{"1-3", "4-8", "9-10"}));
  ASSERT_EQ(gs.size(), 3u);
  EXPECT_EQ(gs[1].first, 4u);
  EXPECT_EQ(gs[1].last, 8u);
  // Every order of from..10 is in exactly one group.
  std::vector<int> covered(FRAGD_NR_ORDERS, 0);
  for (const auto& g : gs)
    for (unsigned o = g.first; o <= g.last; o++) covered[o]++;
  for (unsigned o = 1; o < FRAGD_NR_ORDERS; o++) EXPECT_EQ(covered[o], 1) << o;
  EXPECT_EQ(covered[0], 0);
}

TEST(OrderGroups, OneOrderAloneIsLabelledByItself) {
  EXPECT_EQ(labels(order_groups(1, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})),
            (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}));
  EXPECT_EQ(labels(order_groups(9, {9, 10})), (std::vector<std::string>{"9", "10"}));
}

TEST(OrderGroups, StartsBelowTheFirstOrderAndDuplicatesAreIgnored) {
  // bpf.min_order 5: orders 1..4 are not traced, so they start nothing.
  EXPECT_EQ(labels(order_groups(5, {1, 4, 9, 9})), (std::vector<std::string>{"5-8", "9-10"}));
  EXPECT_EQ(labels(order_groups(1, {})), (std::vector<std::string>{"1-10"}));
}

TEST(SeriesPlan, TheDemandTriggersOrderAlwaysStartsAGroup) {
  SeriesSettings s;
  s.orders = {9};
  const auto p = series_plan(s, 1, 6);
  EXPECT_EQ(labels(p.traced), (std::vector<std::string>{"1-5", "6-8", "9-10"}));
  // The free lists: order 0 alone, then the traced groups.
  EXPECT_EQ(labels(p.buddy), (std::vector<std::string>{"0", "1-5", "6-8", "9-10"}));
}

TEST(SeriesPlan, FreeListsSplitAtListedOrdersBelowTheTracedOnes) {
  // bpf.min_order 2: order 1 is not traced, but its free blocks are read.
  const auto p = series_plan(SeriesSettings{}, 2, 4);
  EXPECT_EQ(labels(p.traced), (std::vector<std::string>{"2-3", "4-8", "9-10"}));
  EXPECT_EQ(labels(p.buddy), (std::vector<std::string>{"0", "1", "2-3", "4-8", "9-10"}));
}

TEST(SeriesPlan, DefaultsAndTheWidest) {
  const auto p = series_plan(SeriesSettings{}, 1, 4);
  EXPECT_EQ(labels(p.traced), (std::vector<std::string>{"1-3", "4-8", "9-10"}));
  EXPECT_EQ(labels(p.buddy), (std::vector<std::string>{"0", "1-3", "4-8", "9-10"}));
  EXPECT_EQ(p.buckets, BucketLayout::Coarse);
  for (unsigned d = 0; d < kDetailWords; d++) EXPECT_FALSE(p.has(static_cast<Detail>(d))) << d;

  const auto w = widest_plan(2);
  EXPECT_EQ(labels(w.traced), (std::vector<std::string>{"2", "3", "4", "5", "6", "7", "8", "9", "10"}));
  EXPECT_EQ(w.buddy.size(), 11u);
  EXPECT_EQ(w.buckets, BucketLayout::Fine);
  for (unsigned d = 0; d < kDetailWords; d++) EXPECT_TRUE(w.has(static_cast<Detail>(d))) << d;
}

TEST(ClassicBuckets, FineIsEveryPowerOfTwoCoarseTheDecisionBounds) {
  const auto fine = classic_bucket_shifts(BucketLayout::Fine, HistogramUse::CountAndSum);
  ASSERT_EQ(fine.size(), 25u);
  EXPECT_EQ(fine.front(), 10u);  // 1.024 us
  EXPECT_EQ(fine.back(), 34u);   // 17.2 s
  EXPECT_EQ(classic_bucket_shifts(BucketLayout::Fine, HistogramUse::Quantiles), fine);
  // Coarse quantiles: 16.4 us .. 1.07 s a factor 16 apart; 2^22 ns = 4.19 ms sits below the
  // default 5 ms p99 of the demand trigger and the alert.
  EXPECT_EQ(classic_bucket_shifts(BucketLayout::Coarse, HistogramUse::Quantiles),
            (std::vector<unsigned>{14, 18, 22, 26, 30}));
  EXPECT_TRUE(classic_bucket_shifts(BucketLayout::Coarse, HistogramUse::CountAndSum).empty());
}

TEST(Detail, WordsAreTheKeysChoicesInTheOrderOfTheBits) {
  const char* words[] = {"zones", "results", "statuses", "thp_sizes", "kernel_counters", "programs"};
  ASSERT_EQ(std::size(words), kDetailWords);
  for (unsigned d = 0; d < kDetailWords; d++) EXPECT_STREQ(detail_word(static_cast<Detail>(d)), words[d]);
  DetailSet s;
  s.add(Detail::Statuses);
  EXPECT_TRUE(s.has(Detail::Statuses));
  EXPECT_FALSE(s.has(Detail::Zones));
}

}  // namespace
}  // namespace fragd
