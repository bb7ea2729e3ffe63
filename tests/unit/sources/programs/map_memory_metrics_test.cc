// SPDX-License-Identifier: Apache-2.0
// fragd_bpf_map_memory_bytes: one series per map entry, labelled by object and map, and no
// family at all when the figures could not be read.
#include <gtest/gtest.h>

#include "sources/programs/metrics.h"

namespace {

TEST(MapMemoryMetrics, OneSeriesPerMapWithTheKernelsBytes) {
  const std::vector<fragd::MapMemory> maps = {
      {"stalls", "stall_sites", 427072, 1},
      {"stalls", fragd::kGlobalsMap, 16384, 2},
      {"pollution", "polluted_blocks", 1799296, 1},
  };
  fragd::Families out;
  fragd::map_memory_metrics(maps, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "fragd_bpf_map_memory_bytes");
  EXPECT_EQ(out[0].type, prometheus::MetricType::Gauge);
  ASSERT_EQ(out[0].metric.size(), 3u);
  double sum = 0;
  for (size_t i = 0; i < maps.size(); i++) {
    const auto& m = out[0].metric[i];
    std::map<std::string, std::string> labels;
    for (const auto& l : m.label) labels[l.name] = l.value;
    EXPECT_EQ(labels, (std::map<std::string, std::string>{{"object", maps[i].object}, {"map", maps[i].map}}));
    EXPECT_EQ(m.gauge.value, static_cast<double>(maps[i].bytes));
    sum += m.gauge.value;
  }
  EXPECT_EQ(sum, 427072.0 + 16384.0 + 1799296.0);
}

TEST(MapMemoryMetrics, AbsentNotZeroWhenUnread) {
  fragd::Families out;
  fragd::map_memory_metrics({}, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
