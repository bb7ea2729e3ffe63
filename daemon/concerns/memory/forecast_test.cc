// SPDX-License-Identifier: Apache-2.0
// The exhaustion forecast: a least-squares line through each node's free 2 MiB
// blocks over the window; a forecast only for a node losing blocks, only once half
// a window was seen; samples older than the window drop out.
#include "concerns/memory/forecast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace fragd {
namespace {

constexpr uint64_t kForecastSecond = 1'000'000'000ULL;

TEST(Forecast, SteadyLossGivesBlocksOverRate) {
  BlockForecast f(100 * kForecastSecond);
  // Node 0 loses 10 blocks a second from 2000; node 1 holds 500.
  for (uint64_t t = 0; t <= 60; t++) f.observe(t * kForecastSecond, std::map<int, uint64_t>{{0, 2000 - 10 * t}, {1, 500}});
  const auto out = f.forecast();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].ready);
  EXPECT_NEAR(out[0].blocks_per_second, -10.0, 1e-9);
  EXPECT_EQ(out[0].free_blocks, 1400u);
  EXPECT_NEAR(out[0].exhaustion_seconds, 140.0, 1e-6);
  EXPECT_TRUE(out[1].ready);
  EXPECT_NEAR(out[1].blocks_per_second, 0.0, 1e-12);

  Families fs;
  forecast_metrics(out, f.window_ns(), fs);
  ASSERT_EQ(fs.size(), 2u);
  ASSERT_EQ(fs[0].name, "fragd_hugepages_exhaustion_seconds");
  ASSERT_EQ(fs[0].metric.size(), 1u);  // node 1 is not losing blocks: absent
  EXPECT_EQ(fs[0].metric[0].label[0].value, "0");
  EXPECT_NEAR(fs[0].metric[0].gauge.value, 140.0, 1e-6);
  ASSERT_EQ(fs[1].name, "fragd_free_hugepage_blocks_rate");
  EXPECT_EQ(fs[1].metric.size(), 2u);
}

TEST(Forecast, NothingBeforeHalfAWindow) {
  BlockForecast f(100 * kForecastSecond);
  for (uint64_t t = 0; t < 49; t++) f.observe(t * kForecastSecond, std::map<int, uint64_t>{{0, 1000 - t}});
  auto out = f.forecast();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].ready);
  Families fs;
  forecast_metrics(out, f.window_ns(), fs);
  EXPECT_TRUE(fs[0].metric.empty());
  EXPECT_TRUE(fs[1].metric.empty());
  f.observe(50 * kForecastSecond, std::map<int, uint64_t>{{0, 950}});
  EXPECT_TRUE(f.forecast()[0].ready);
}

TEST(Forecast, OldSamplesLeaveTheWindow) {
  BlockForecast f(60 * kForecastSecond);
  // A burst lost 3000 blocks long ago; since then, 10 minutes flat at 100.
  f.observe(0, std::map<int, uint64_t>{{0, 3100}});
  for (uint64_t t = 1; t <= 600; t++) f.observe(t * kForecastSecond, std::map<int, uint64_t>{{0, 100}});
  const auto out = f.forecast();
  EXPECT_TRUE(out[0].ready);
  EXPECT_NEAR(out[0].blocks_per_second, 0.0, 1e-12);
  EXPECT_EQ(out[0].exhaustion_seconds, 0.0);
}

TEST(Forecast, GainingNodeAndNodeThatLeaves) {
  BlockForecast f(20 * kForecastSecond);
  for (uint64_t t = 0; t <= 20; t++) f.observe(t * kForecastSecond, std::map<int, uint64_t>{{0, 10 + t}, {1, 100}});
  auto out = f.forecast();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_GT(out[0].blocks_per_second, 0.0);
  EXPECT_EQ(out[0].exhaustion_seconds, 0.0);
  f.observe(21 * kForecastSecond, std::map<int, uint64_t>{{0, 31}});  // node 1 went offline
  out = f.forecast();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].node, 0);
}

TEST(Forecast, FromZonesCountsBlocksOfOrderNineAndAbove) {
  BlockForecast f(4 * kForecastSecond);
  for (uint64_t t = 0; t <= 4; t++) {
    ZoneFree dma32, normal;
    dma32.node = normal.node = 0;
    dma32.present_pages = normal.present_pages = 1 << 18;
    dma32.free_blocks = std::vector<uint64_t>(11, 0);
    normal.free_blocks = std::vector<uint64_t>(11, 0);
    dma32.free_blocks[10] = 5;            // 10 blocks of 2 MiB
    normal.free_blocks[9] = 100 - 4 * t;  // loses 4 a second
    normal.free_blocks[8] = 1000;         // below 2 MiB: not counted
    f.observe(t * kForecastSecond, std::vector<ZoneFree>{dma32, normal});
  }
  const auto out = f.forecast();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].free_blocks, 10u + 84u);
  EXPECT_NEAR(out[0].blocks_per_second, -4.0, 1e-9);
  EXPECT_NEAR(out[0].exhaustion_seconds, 94.0 / 4.0, 1e-9);
}

}  // namespace
}  // namespace fragd
