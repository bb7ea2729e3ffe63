// SPDX-License-Identifier: Apache-2.0
// The memory families from recorded /proc files: the kernel's free pages in free pageblocks
// (nr_free_pages_blocks, Linux 6.15+) per node and per zone, absent where zoneinfo does not say
// it; the reclaim counters of /proc/vmstat; PSI's memory totals, absent without PSI.
#include "concerns/memory/metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kernel/procfs.h"
#include "concerns/memory/score.h"

namespace fragd {
namespace {

const std::string kFixtures = FRAGD_FIXTURES_DIR;

// Every sample of a family, keyed by its labels joined as "k=v,k=v".
std::map<std::string, double> samples(const Families& fs, const std::string& name) {
  std::map<std::string, double> out;
  for (const auto& f : fs) {
    if (f.name != name) continue;
    for (const auto& m : f.metric) {
      std::string key;
      for (const auto& l : m.label) key += (key.empty() ? "" : ",") + l.name + "=" + l.value;
      out[key] = f.type == MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return out;
}

SeriesPlan default_plan() { return series_plan(SeriesSettings{}, 1, 4); }

MemSnapshot one_node() {
  auto snap = read_snapshot(kFixtures + "/one_node", "/nonexistent/fragd-sys");
  EXPECT_TRUE(snap.ok()) << snap.error().message;
  return snap.ok() ? *snap : MemSnapshot{};
}

TEST(MemoryMetrics, FreePageblockPagesPerNodeAndPerZone) {
  const MemSnapshot mem = one_node();  // Linux 6.18: zoneinfo says nr_free_pages_blocks
  Families fs;
  memory_metrics(mem, default_plan(), fs);
  const auto node = samples(fs, "fragd_zone_free_pageblock_pages");
  ASSERT_EQ(node.size(), 1u);
  // DMA + DMA32 + Normal: the node's sum, which /proc/vmstat's nr_free_pages_blocks also says.
  EXPECT_EQ(node.at("node=0,zone=all"), 3584 + 762880 + 5189632);
  EXPECT_EQ(node.at("node=0,zone=all"), mem.vmstat.at("nr_free_pages_blocks"));

  Families zs;
  memory_metrics(mem, widest_plan(1), zs);
  const auto zone = samples(zs, "fragd_zone_free_pageblock_pages");
  ASSERT_EQ(zone.size(), 3u);  // the populated zones only
  EXPECT_EQ(zone.at("node=0,zone=DMA"), 3584);
  EXPECT_EQ(zone.at("node=0,zone=DMA32"), 762880);
  EXPECT_EQ(zone.at("node=0,zone=Normal"), 5189632);
  // In the recorded files the kernel's count is what fragd's free lists give at order >= 9.
  for (const ZoneFree& z : mem.zones) {
    if (!z.free_pages_blocks || z.present_pages == 0) continue;
    EXPECT_EQ(*z.free_pages_blocks, buddy_suitable_pages(z, 9)) << z.zone;
  }
}

TEST(MemoryMetrics, FreePageblockPagesAbsentWhereTheKernelDoesNotSayThem) {
  MemSnapshot mem = one_node();
  for (ZoneFree& z : mem.zones) z.free_pages_blocks.reset();  // a kernel before 6.15
  Families fs;
  memory_metrics(mem, widest_plan(1), fs);
  EXPECT_TRUE(samples(fs, "fragd_zone_free_pageblock_pages").empty());
  EXPECT_FALSE(samples(fs, "fragd_zone_free_pages").empty());  // the rest stays

  // One populated zone without it (its line garbled): no per-node sum that would be short.
  mem = one_node();
  mem.zones[1].free_pages_blocks.reset();
  Families ns;
  memory_metrics(mem, default_plan(), ns);
  EXPECT_TRUE(samples(ns, "fragd_zone_free_pageblock_pages").empty());
  Families per_zone;
  memory_metrics(mem, widest_plan(1), per_zone);
  EXPECT_EQ(samples(per_zone, "fragd_zone_free_pageblock_pages").size(), 2u);
}

TEST(MemoryMetrics, ReclaimCountersByTrigger) {
  MemSnapshot mem;
  mem.vmstat = {{"pgscan_direct", 120}, {"pgscan_kswapd", 4000}, {"pgsteal_direct", 100},
                {"pgsteal_kswapd", 3500}, {"pgscan_khugepaged", 7}, {"pgsteal_file", 9}};
  Families fs;
  memory_metrics(mem, default_plan(), fs);
  const auto scanned = samples(fs, "fragd_reclaim_pages_scanned_total");
  ASSERT_EQ(scanned.size(), 2u);
  EXPECT_EQ(scanned.at("trigger=direct"), 120);
  EXPECT_EQ(scanned.at("trigger=kswapd"), 4000);
  const auto reclaimed = samples(fs, "fragd_reclaim_pages_reclaimed_total");
  ASSERT_EQ(reclaimed.size(), 2u);
  EXPECT_EQ(reclaimed.at("trigger=direct"), 100);
  EXPECT_EQ(reclaimed.at("trigger=kswapd"), 3500);

  mem.vmstat.clear();  // vmstat unreadable: absent, not 0
  Families none;
  memory_metrics(mem, default_plan(), none);
  EXPECT_TRUE(samples(none, "fragd_reclaim_pages_scanned_total").empty());
  EXPECT_TRUE(samples(none, "fragd_reclaim_pages_reclaimed_total").empty());
}

TEST(MemoryMetrics, PressureTotalsInSecondsAbsentWithoutPsi) {
  const MemSnapshot mem = one_node();  // with pressure/memory
  Families fs;
  memory_metrics(mem, default_plan(), fs);
  const auto psi = samples(fs, "fragd_memory_pressure_seconds_total");
  ASSERT_EQ(psi.size(), 2u);
  EXPECT_DOUBLE_EQ(psi.at("stalled=some"), 36.324128);
  EXPECT_DOUBLE_EQ(psi.at("stalled=full"), 33.353147);

  MemSnapshot no_psi = mem;
  no_psi.memory_pressure.reset();
  Families none;
  memory_metrics(no_psi, default_plan(), none);
  EXPECT_TRUE(samples(none, "fragd_memory_pressure_seconds_total").empty());
  MemSnapshot some_only = mem;
  some_only.memory_pressure->full_us.reset();
  Families some;
  memory_metrics(some_only, default_plan(), some);
  EXPECT_EQ(samples(some, "fragd_memory_pressure_seconds_total").size(), 1u);
}

}  // namespace
}  // namespace fragd
