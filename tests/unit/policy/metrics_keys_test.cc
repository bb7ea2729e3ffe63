// SPDX-License-Identifier: Apache-2.0
// The metrics: section (which series /metrics carries): its keys as the file gives them, and
// what the binder refuses.
#include <gtest/gtest.h>

#include <string>

#include "policy/config.h"
#include "policy/keys.h"

namespace fragd {
namespace {

Config parsed(const std::string& text) {
  auto c = parse_config(text, "f.yaml");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c ? *c : Config{};
}

std::string error_of(const std::string& text) {
  auto c = parse_config(text, "f.yaml");
  return c ? "(accepted)" : c.error().message;
}

TEST(MetricsKeys, DefaultsSplitWhatDecisionsRead) {
  const Config c = parsed("mode: observe\n");
  EXPECT_EQ(c.metrics.orders, (std::vector<unsigned>{1, 4, 9}));
  EXPECT_EQ(c.metrics.buckets, BucketLayout::Coarse);
  EXPECT_EQ(c.metrics.detail.bits, 0u);
  // An empty section is every default.
  EXPECT_EQ(parsed("metrics:\n").metrics, SeriesSettings{});
}

TEST(MetricsKeys, TheWidestSetting) {
  const Config c = parsed(
      "metrics:\n"
      "  orders: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
      "  buckets: fine\n"
      "  detail: [zones, results, statuses, thp_sizes, kernel_counters, programs]\n");
  EXPECT_EQ(c.metrics.orders.size(), 10u);
  EXPECT_EQ(c.metrics.buckets, BucketLayout::Fine);
  for (unsigned d = 0; d < kDetailWords; d++) EXPECT_TRUE(c.metrics.detail.has(static_cast<Detail>(d))) << d;
  // The plan of that setting is the widest one.
  const SeriesPlan p = series_plan(c.metrics, c.min_order, c.policy.compaction.demand.min_order);
  const SeriesPlan w = widest_plan(c.min_order);
  ASSERT_EQ(p.traced.size(), w.traced.size());
  for (size_t i = 0; i < p.traced.size(); i++) EXPECT_EQ(p.traced[i].label, w.traced[i].label);
  EXPECT_EQ(p.detail, w.detail);
}

TEST(MetricsKeys, DetailWordsAreStoredAsTheirBits) {
  const Config c = parsed("metrics:\n  detail: [statuses, zones]\n");
  EXPECT_TRUE(c.metrics.detail.has(Detail::Zones));
  EXPECT_TRUE(c.metrics.detail.has(Detail::Statuses));
  EXPECT_FALSE(c.metrics.detail.has(Detail::Results));
  EXPECT_FALSE(c.metrics.detail.has(Detail::Programs));
  EXPECT_EQ(parsed("metrics:\n  detail: []\n").metrics.detail.bits, 0u);
  // The key's words are Detail's, in the order of its bits.
  const Key* k = find_key("metrics.detail");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->choices.size(), kDetailWords);
  for (unsigned d = 0; d < kDetailWords; d++) EXPECT_EQ(k->choices[d], detail_word(static_cast<Detail>(d)));
}

TEST(MetricsKeys, OrdersRefused) {
  EXPECT_EQ(error_of("metrics:\n  orders: [4, 2]\n"),
            "f.yaml:2:15: key 'metrics.orders[1]': order 2 does not come after 4; list each order once, in "
            "increasing order");
  EXPECT_EQ(error_of("metrics:\n  orders: [4, 4]\n"),
            "f.yaml:2:15: key 'metrics.orders[1]': order 4 does not come after 4; list each order once, in "
            "increasing order");
  EXPECT_EQ(error_of("metrics:\n  orders: []\n"),
            "f.yaml:2:11: key 'metrics.orders': the list is empty; list at least one order (1..10), e.g. [9]");
  EXPECT_EQ(error_of("metrics:\n  orders: [0]\n"), "f.yaml:2:12: key 'metrics.orders[0]': value 0 is out of range 1..10");
  EXPECT_EQ(error_of("metrics:\n  orders: [11]\n"),
            "f.yaml:2:12: key 'metrics.orders[0]': value 11 is out of range 1..10");
  EXPECT_EQ(error_of("metrics:\n  orders: 9\n"), "f.yaml:2:11: key 'metrics.orders': expected a list of orders like [1, 4, 9]");
  EXPECT_EQ(error_of("metrics:\n  orders: [\"9\"]\n"),
            "f.yaml:2:12: key 'metrics.orders[0]': expected an integer, got the string '9'; remove the quotes");
}

TEST(MetricsKeys, BucketsAndDetailRefused) {
  EXPECT_EQ(error_of("metrics:\n  buckets: native\n"),
            "f.yaml:2:12: key 'metrics.buckets': 'native' is not a bucket layout; use 'coarse' (the buckets "
            "decisions read) or 'fine' (every power of two from 1.024 us to 17.2 s)");
  EXPECT_EQ(error_of("metrics:\n  detail: [zone]\n"),
            "f.yaml:2:12: key 'metrics.detail[0]': 'zone' is not one of zones, results, statuses, thp_sizes, "
            "kernel_counters, programs");
  EXPECT_EQ(error_of("metrics:\n  detail: [zones, zones]\n"),
            "f.yaml:2:19: key 'metrics.detail[1]': 'zones' is listed twice; keep one");
  EXPECT_EQ(error_of("metrics:\n  detail: zones\n"),
            "f.yaml:2:11: key 'metrics.detail': expected a list of words from zones, results, statuses, thp_sizes, "
            "kernel_counters, programs (or [] for none)");
  EXPECT_NE(error_of("metrics:\n  bogus: 1\n").find("key 'metrics.bogus': unknown key (known keys here: buckets, "
                                                     "detail, orders)"),
            std::string::npos)
      << error_of("metrics:\n  bogus: 1\n");
}

}  // namespace
}  // namespace fragd
