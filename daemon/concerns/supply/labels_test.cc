// SPDX-License-Identifier: Apache-2.0
// The Node Feature Discovery labels (concerns/supply/labels.h): their buckets, and the time
// hysteresis that keeps them from changing at every wobble of the value.
#include "concerns/supply/labels.h"

#include <gtest/gtest.h>

namespace fragd {
namespace {

constexpr uint64_t kS = 1'000'000'000ULL;

TEST(Labels, Buckets) {
  EXPECT_EQ(pow2_floor(0), 0u);
  EXPECT_EQ(pow2_floor(1), 1u);
  EXPECT_EQ(pow2_floor(7), 4u);
  EXPECT_EQ(pow2_floor(8), 8u);
  auto b = label_buckets({512 * 11, 3, 86});
  EXPECT_EQ(b["fragd-hugepages-2Mi-gib"], "8");
  EXPECT_EQ(b["fragd-hugepages-1Gi-count"], "2");
  EXPECT_EQ(b["fragd-fragmentation"], "high");
  EXPECT_STREQ(fragmentation_level(49), "low");
  EXPECT_STREQ(fragmentation_level(50), "medium");
  EXPECT_STREQ(fragmentation_level(84), "medium");
  // Less than a GiB of 2 MiB pages is 0.
  EXPECT_EQ(label_buckets({511, 0, 0})["fragd-hugepages-2Mi-gib"], "0");
}

TEST(Labels, ValuesAreValidKubernetesLabelValues) {
  for (uint64_t v : {0ull, 1ull, 1000ull, 1ull << 40}) {
    for (const auto& [name, value] : label_buckets({v, v, static_cast<unsigned>(v % 101)})) {
      ASSERT_FALSE(value.empty());
      EXPECT_LE(value.size(), 63u);
      for (char c : value) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << value;
      EXPECT_LE(name.size(), 63u);
    }
  }
}

TEST(Labels, AChangeWaitsForTheHold) {
  LabelHysteresis h(300 * kS);
  auto [first, changed] = h.update(label_buckets({512 * 8, 0, 10}), 0);
  EXPECT_TRUE(changed);
  EXPECT_EQ(first.at("fragd-hugepages-2Mi-gib"), "8");
  // The value wobbles across the edge at 8 GiB every 10 s for 20 minutes: no change.
  for (uint64_t t = 10; t < 1200; t += 10) {
    const uint64_t pages = (t / 10) % 2 ? 512 * 7 : 512 * 9;
    auto [shown, ch] = h.update(label_buckets({pages, 0, 10}), t * kS);
    EXPECT_FALSE(ch) << t;
    EXPECT_EQ(shown.at("fragd-hugepages-2Mi-gib"), "8") << t;
  }
  // It stays below the edge: the label follows after the hold, once.
  uint64_t changes = 0;
  for (uint64_t t = 1200; t <= 1500; t += 10) changes += h.update(label_buckets({512 * 5, 0, 10}), t * kS).second;
  EXPECT_EQ(changes, 1u);
  EXPECT_EQ(h.labels().at("fragd-hugepages-2Mi-gib"), "4");
  EXPECT_EQ(h.changes().at("fragd-hugepages-2Mi-gib"), 1u);
}

TEST(Labels, FileText) {
  const std::string t = feature_file_text({{"fragd-fragmentation", "low"}}, "2026-12-02T10:00:00Z");
  EXPECT_NE(t.find("# +expiry-time=2026-12-02T10:00:00Z\n"), std::string::npos);
  EXPECT_NE(t.find("\nfragd-fragmentation=low\n"), std::string::npos);
}

}  // namespace
}  // namespace fragd
