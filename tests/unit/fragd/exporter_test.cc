// SPDX-License-Identifier: Apache-2.0
// The exporter: which families each source contributes, from synthetic snapshots,
// and that a source that is off contributes nothing (absent, not zero).
#include "fragd/exporter.h"

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

TEST(Exporter, NothingReadYetExportsOnlyFragdsOwnFamilies) {
  const auto fs = fragd::build_families({});
  const auto n = names(fs);
  EXPECT_TRUE(n.count("fragd_build_info"));
  EXPECT_TRUE(n.count("fragd_collect_errors_total"));
  EXPECT_TRUE(n.count("fragd_collector_tick_seconds"));
  // No BPF snapshot, no memory snapshot, no act stats, no scan, no ledger: none of their families.
  for (const char* absent : {"fragd_alloc_total", "fragd_compaction_runs_total", "fragd_zone_fragmentation_score_percent",
                             "fragd_hugepages", "fragd_hugepages_target", "fragd_policy_info", "fragd_scans_total", "fragd_polluted_pageblocks"})
    EXPECT_FALSE(n.count(absent)) << absent;
}

TEST(Exporter, MemoryAndPoolsComeFromTheMemorySnapshot) {
  const auto mem = one_zone();
  fragd::ExportFrame f;
  f.mem = &mem;
  const auto fs = fragd::build_families(f);
  const auto* score = find(fs, "fragd_zone_fragmentation_score_percent");
  ASSERT_NE(score, nullptr);
  ASSERT_EQ(score->metric.size(), 1u);
  EXPECT_EQ(score->metric[0].gauge.value, 100);
  const auto* hp = find(fs, "fragd_hugepages");
  ASSERT_NE(hp, nullptr);
  ASSERT_EQ(hp->metric.size(), 2u);  // total and free
  EXPECT_EQ(find(fs, "fragd_hugepages_target"), nullptr);  // no target without act stats
  EXPECT_EQ(hp->metric[0].label[2].value, "total");
  EXPECT_EQ(hp->metric[0].gauge.value, 3);
  const auto* pb = find(fs, "fragd_pageblocks");
  ASSERT_NE(pb, nullptr);
  EXPECT_EQ(pb->metric.size(), 2u);
}

TEST(Exporter, StallOutcomesFollowAllocationCounting) {
  fragd::BpfSnapshot bpf{};
  bpf.alloc.allocs[9][FRAGD_OUTCOME_FAST] = 7;
  bpf.alloc.allocs[9][FRAGD_OUTCOME_STALLED] = 2;
  fragd::SelfStats self;
  fragd::ExportFrame f;
  f.plan = fragd::widest_plan(9);
  f.bpf = &bpf;
  f.self = &self;

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
  EXPECT_EQ(outcomes(fragd::build_families(f)), (std::set<std::string>{"fast", "stalled", "failed", "at_switch"}));
  // adaptive, counting off: stalls are still counted (each switches counting on), fast ones are not
  self.counting.allocations_mode = "adaptive";
  self.counting.counting = false;
  EXPECT_EQ(outcomes(fragd::build_families(f)), (std::set<std::string>{"stalled", "at_switch"}));
  // off: the family is absent, the exact entry counters stay
  self.counting.allocations_mode = "off";
  const auto off = fragd::build_families(f);
  EXPECT_EQ(find(off, "fragd_alloc_total"), nullptr);
  EXPECT_EQ(find(off, "fragd_alloc_stall_seconds"), nullptr);
  EXPECT_NE(find(off, "fragd_direct_stall_entries_total"), nullptr);
}

TEST(Exporter, FailuresSplitBySleepingAndGroupedFromOrderZero) {
  fragd::BpfSnapshot bpf{};
  bpf.alloc.failures[0][0] = 5;  // order-0 atomic failures: below min_order, still counted
  bpf.alloc.failures[2][0] = 1;
  bpf.alloc.failures[3][1] = 4;
  bpf.alloc.failures[9][1] = 2;
  bpf.alloc.failures[10][1] = 1;
  fragd::SelfStats self;
  self.counting.allocations_mode = "adaptive";
  self.counting.counting = false;
  fragd::ExportFrame f;
  f.plan = fragd::series_plan(fragd::SeriesSettings{}, 1, 4);  // the default groups: 0, 1-3, 4-8, 9-10
  f.bpf = &bpf;
  f.self = &self;
  // Counted only while counting is on: absent while it is off.
  EXPECT_EQ(find(fragd::build_families(f), "fragd_alloc_failures_total"), nullptr);
  self.counting.counting = true;
  const auto fs = fragd::build_families(f);
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

TEST(Exporter, ActModeTargetsAreAFamilyOfTheirOwn) {
  const auto mem = one_zone();
  fragd::ActStats act;
  fragd::PoolState p;
  p.node = -1;
  p.size_kib = 2048;
  p.target = 16;
  act.pools.push_back(p);
  fragd::ExportFrame f;
  f.mem = &mem;
  f.act = &act;
  const auto fs = fragd::build_families(f);
  const auto* hp = find(fs, "fragd_hugepages");
  ASSERT_NE(hp, nullptr);
  EXPECT_EQ(hp->metric.size(), 2u);  // total and free: what the kernel holds
  const auto* tg = find(fs, "fragd_hugepages_target");
  ASSERT_NE(tg, nullptr);
  ASSERT_EQ(tg->metric.size(), 1u);
  EXPECT_EQ(tg->metric[0].label[0].value, "all");  // the global pool: the node label of every family
  EXPECT_EQ(tg->metric[0].label[1].value, "2048kB");
  EXPECT_EQ(tg->metric[0].gauge.value, 16);
  EXPECT_NE(find(fs, "fragd_policy_info"), nullptr);
}

}  // namespace

TEST(Exporter, CmaFamiliesOnlyWhereTheKernelTracesCma) {
  fragd::BpfSnapshot bpf{};
  fragd::ExportFrame f;
  f.bpf = &bpf;
  // A kernel without CMA: absent, not zero.
  for (const char* absent : {"fragd_cma_alloc_seconds", "fragd_cma_alloc_pages_total",
                             "fragd_cma_alloc_busy_retries_total", "fragd_cma_events_lost_total"})
    EXPECT_EQ(find(fragd::build_families(f), absent), nullptr) << absent;

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
  const auto fs = fragd::build_families(f);
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
