// SPDX-License-Identifier: Apache-2.0
// fragd_bpf_map_memory_bytes: by default one series per object (map="all", its maps summed);
// with metrics.detail `programs` one per map; no family at all when the figures could not be read.
#include <gtest/gtest.h>

#include "concerns/programs/metrics.h"

namespace {

const std::vector<fragd::MapMemory> kMaps = {
    {"stalls", "stall_sites", 427072, 1},
    {"pollution", "polluted_blocks", 1799296, 1},
    {"stalls", fragd::kGlobalsMap, 16384, 2},
};

std::map<std::string, std::string> labels_of(const prometheus::ClientMetric& m) {
  std::map<std::string, std::string> labels;
  for (const auto& l : m.label) labels[l.name] = l.value;
  return labels;
}

TEST(MapMemoryMetrics, OneSeriesPerMapWithTheProgramsDetail) {
  fragd::SeriesPlan plan;
  plan.detail.add(fragd::Detail::Programs);
  fragd::Families out;
  fragd::map_memory_metrics(kMaps, plan, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "fragd_bpf_map_memory_bytes");
  EXPECT_EQ(out[0].type, prometheus::MetricType::Gauge);
  ASSERT_EQ(out[0].metric.size(), 3u);
  for (size_t i = 0; i < kMaps.size(); i++) {
    const auto& m = out[0].metric[i];
    EXPECT_EQ(labels_of(m), (std::map<std::string, std::string>{{"object", kMaps[i].object}, {"map", kMaps[i].map}}));
    EXPECT_EQ(m.gauge.value, static_cast<double>(kMaps[i].bytes));
  }
}

TEST(MapMemoryMetrics, ByDefaultOneSeriesPerObjectWithItsMapsSummed) {
  fragd::Families out;
  fragd::map_memory_metrics(kMaps, fragd::SeriesPlan{}, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].metric.size(), 2u);
  EXPECT_EQ(labels_of(out[0].metric[0]), (std::map<std::string, std::string>{{"object", "stalls"}, {"map", "all"}}));
  EXPECT_EQ(out[0].metric[0].gauge.value, 427072.0 + 16384.0);
  EXPECT_EQ(labels_of(out[0].metric[1]), (std::map<std::string, std::string>{{"object", "pollution"}, {"map", "all"}}));
  EXPECT_EQ(out[0].metric[1].gauge.value, 1799296.0);
}

TEST(MapMemoryMetrics, AbsentNotZeroWhenUnread) {
  fragd::Families out;
  fragd::map_memory_metrics({}, fragd::SeriesPlan{}, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
