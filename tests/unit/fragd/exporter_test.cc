// SPDX-License-Identifier: Apache-2.0
// The families: fragd's own (the exporter), and those each source's metrics function makes of
// synthetic snapshots (the functions a concern's metrics() calls), and that a source that is off
// contributes nothing (absent, not zero). The concerns' own composition: concerns_test.cc.
#include "fragd/exporter.h"
#include "concerns/compaction/metrics.h"
#include "concerns/memory/metrics.h"
#include "concerns/pools/metrics.h"
#include "concerns/stalls/metrics.h"

#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <set>
#include <string>

namespace {

std::set<std::string> names(const fragd::Families& fs) {
  std::set<std::string> out;
  for (const auto& f : fs) out.insert(f.name);
  return out;
}

const prometheus::MetricFamily* find(const fragd::Families& fs, const std::string& name) {
  auto it = std::find_if(fs.begin(), fs.end(), [&](const auto& f) { return f.name == name; });
  return it == fs.end() ? nullptr : &*it;
}

fragd::MemSnapshot one_zone() {
  fragd::MemSnapshot m;
  fragd::ZoneFree z;
  z.node = 0;
  z.zone = "Normal";
  z.present_pages = 1 << 20;
  z.free_blocks = std::vector<uint64_t>(11, 0);
  z.free_blocks[0] = 512;  // 512 free pages, none in a 2 MiB block: score 100
  z.pageblocks = {{"Movable", 100}, {"Unmovable", 4}};
  m.zones.push_back(z);
  m.hugepages.push_back({0, 2048, 3, 1});
  return m;
}

TEST(Exporter, FragdsOwnFamiliesCarryNoSourcesFamily) {
  const auto fs = fragd::own_families(fragd::SelfStats{}, {}, fragd::widest_plan(1));
  const auto n = names(fs);
  EXPECT_TRUE(n.count("fragd_build_info"));
  EXPECT_TRUE(n.count("fragd_collect_errors_total"));
  EXPECT_TRUE(n.count("fragd_collector_tick_seconds"));
  // The stalls, memory, act, scan and ledger families are the concerns' own (Concern::metrics).
  for (const char* absent : {"fragd_alloc_total", "fragd_compaction_runs_total", "fragd_zone_fragmentation_score_percent",
                             "fragd_hugepages", "fragd_hugepages_target", "fragd_policy_info", "fragd_scans_total", "fragd_polluted_pageblocks"})
    EXPECT_FALSE(n.count(absent)) << absent;
}

TEST(Exporter, MemoryAndPoolsComeFromTheMemorySnapshot) {
  const auto mem = one_zone();
  fragd::Families fs;
  fragd::memory_metrics(mem, fragd::widest_plan(1), fs);
  fragd::pool_metrics(mem, fs);
  const auto* score = find(fs, "fragd_zone_fragmentation_score_percent");
  ASSERT_NE(score, nullptr);
  ASSERT_EQ(score->metric.size(), 1u);
  EXPECT_EQ(score->metric[0].gauge.value, 100);
  const auto* hp = find(fs, "fragd_hugepages");
  ASSERT_NE(hp, nullptr);
  ASSERT_EQ(hp->metric.size(), 2u);  // total and free
  EXPECT_EQ(hp->metric[0].label[2].value, "total");
  EXPECT_EQ(hp->metric[0].gauge.value, 3);
  const auto* pb = find(fs, "fragd_pageblocks");
  ASSERT_NE(pb, nullptr);
  EXPECT_EQ(pb->metric.size(), 2u);
}

TEST(Exporter, StallOutcomesFollowAllocationCounting) {
  fragd::StallsSnapshot bpf{};
  bpf.alloc.allocs[9][FRAGD_OUTCOME_FAST] = 7;
  bpf.alloc.allocs[9][FRAGD_OUTCOME_STALLED] = 2;
  fragd::SelfStats self;
  const fragd::SeriesPlan plan = fragd::widest_plan(9);
  auto build = [&] {
    fragd::Families out;
    fragd::stall_metrics(plan, bpf, self.counting, out);
    return out;
  };

  auto outcomes = [&](const fragd::Families& fs) {
    std::set<std::string> out;
    if (const auto* t = find(fs, "fragd_alloc_total"))
      for (const auto& m : t->metric)
        for (const auto& l : m.label)
          if (l.name == "outcome") out.insert(l.value);
    return out;
  };
  self.counting.allocations_mode = "exact";
  self.counting.counting = true;
  EXPECT_EQ(outcomes(build()), (std::set<std::string>{"fast", "stalled", "failed", "at_switch"}));
  // adaptive, counting off: stalls are still counted (each switches counting on), fast ones are not
  self.counting.allocations_mode = "adaptive";
  self.counting.counting = false;
  EXPECT_EQ(outcomes(build()), (std::set<std::string>{"stalled", "at_switch"}));
  // off: the family is absent, the exact entry counters stay
  self.counting.allocations_mode = "off";
  const auto off = build();
  EXPECT_EQ(find(off, "fragd_alloc_total"), nullptr);
  EXPECT_EQ(find(off, "fragd_alloc_stall_seconds"), nullptr);
  EXPECT_NE(find(off, "fragd_direct_stall_entries_total"), nullptr);
}

TEST(Exporter, FailuresSplitBySleepingAndGroupedFromOrderZero) {
  fragd::StallsSnapshot bpf{};
  bpf.alloc.failures[0][0] = 5;  // order-0 atomic failures: below min_order, still counted
  bpf.alloc.failures[2][0] = 1;
  bpf.alloc.failures[3][1] = 4;
  bpf.alloc.failures[9][1] = 2;
  bpf.alloc.failures[10][1] = 1;
  fragd::SelfStats self;
  self.counting.allocations_mode = "adaptive";
  self.counting.counting = false;
  const fragd::SeriesPlan plan = fragd::series_plan(fragd::SeriesSettings{}, 1, 4);  // groups 0, 1-3, 4-8, 9-10
  auto build = [&] {
    fragd::Families out;
    fragd::stall_metrics(plan, bpf, self.counting, out);
    return out;
  };
  // Counted only while counting is on: absent while it is off.
  EXPECT_EQ(find(build(), "fragd_alloc_failures_total"), nullptr);
  self.counting.counting = true;
  const auto fs = build();
  const auto* fam = find(fs, "fragd_alloc_failures_total");
  ASSERT_NE(fam, nullptr);
  std::map<std::pair<std::string, std::string>, double> got;
  for (const auto& m : fam->metric) {
    std::map<std::string, std::string> l;
    for (const auto& x : m.label) l[x.name] = x.value;
    got[{l["order"], l["can_sleep"]}] = m.counter.value;
  }
  const std::map<std::pair<std::string, std::string>, double> want = {
      {{"0", "false"}, 5}, {{"0", "true"}, 0},   {{"1-3", "false"}, 1}, {{"1-3", "true"}, 4},
      {{"4-8", "false"}, 0}, {{"4-8", "true"}, 0}, {{"9-10", "false"}, 0}, {{"9-10", "true"}, 3}};
  EXPECT_EQ(got, want);
}

}  // namespace

TEST(Exporter, CmaFamiliesOnlyWhereTheKernelTracesCma) {
  fragd::CompactionSnapshot bpf{};
  auto build = [&] {
    fragd::Families out;
    fragd::compaction_metrics(fragd::widest_plan(1), bpf, out);
    return out;
  };
  // A kernel without CMA: absent, not zero.
  for (const char* absent : {"fragd_cma_alloc_seconds", "fragd_cma_alloc_pages_total",
                             "fragd_cma_alloc_busy_retries_total", "fragd_cma_events_lost_total"})
    EXPECT_EQ(find(build(), absent), nullptr) << absent;

  bpf.cma_traced = true;
  fragd::CmaArea a;
  a.name = "hugetlb0";
  a.hist[FRAGD_RESULT_SUCCESS].buckets.assign(FRAGD_HIST_BUCKETS, 0);
  a.hist[FRAGD_RESULT_SUCCESS].buckets[100] = 1;
  a.hist[FRAGD_RESULT_SUCCESS].count = 1;
  a.hist[FRAGD_RESULT_SUCCESS].sum_ns = 250'000'000;
  a.pages = {262144, 262144};
  a.busy_retries = 3;
  bpf.cma.push_back(a);
  const auto fs = build();
  const auto* h = find(fs, "fragd_cma_alloc_seconds");
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->metric.size(), 2u);  // success and failure of hugetlb0
  EXPECT_EQ(h->metric[0].label[0].value, "hugetlb0");
  EXPECT_EQ(h->metric[0].label[1].value, "success");
  EXPECT_EQ(h->metric[0].histogram.sample_count, 1u);
  EXPECT_DOUBLE_EQ(h->metric[0].histogram.sample_sum, 0.25);
  EXPECT_EQ(h->metric[1].histogram.sample_count, 0u);
  const auto* busy = find(fs, "fragd_cma_alloc_busy_retries_total");
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->metric[0].counter.value, 3);
  const auto* pages = find(fs, "fragd_cma_alloc_pages_total");
  ASSERT_NE(pages, nullptr);
  EXPECT_EQ(pages->metric[1].counter.value, 262144);
}
