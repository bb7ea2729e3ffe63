// SPDX-License-Identifier: Apache-2.0
// Which series each family carries under a series plan (the config's metrics: section): order
// groups summing their orders, dimensions summed into "all" or left out, the classic buckets of
// each layout, and the fine buckets kept for the native histograms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <string>

#include "fragd/exporter.h"
#include "concerns/attribution/metrics.h"
#include "concerns/compaction/metrics.h"
#include "concerns/memory/metrics.h"
#include "concerns/pools/metrics.h"
#include "concerns/stalls/metrics.h"
#include "concerns/thp/metrics.h"

namespace fragd {
namespace {

const prometheus::MetricFamily* find(const Families& fs, const std::string& name) {
  auto it = std::find_if(fs.begin(), fs.end(), [&](const auto& f) { return f.name == name; });
  return it == fs.end() ? nullptr : &*it;
}

std::string label(const prometheus::ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label)
    if (l.name == name) return l.value;
  return "";
}

// The metric of `family` whose labels include every pair of `want`.
const prometheus::ClientMetric* metric(const Families& fs, const std::string& family,
                                       const std::map<std::string, std::string>& want) {
  const auto* f = find(fs, family);
  if (!f) return nullptr;
  for (const auto& m : f->metric)
    if (std::all_of(want.begin(), want.end(), [&](const auto& kv) { return label(m, kv.first) == kv.second; }))
      return &m;
  return nullptr;
}

size_t series(const Families& fs) {
  size_t n = 0;
  for (const auto& f : fs)
    for (const auto& m : f.metric) n += f.type == prometheus::MetricType::Histogram ? m.histogram.bucket.size() + 2 : 1;
  return n;
}

SeriesPlan default_plan() { return series_plan(SeriesSettings{}, 1, 4); }

// The default plan with `details` asked for as well.
SeriesPlan plan_with(std::initializer_list<Detail> details) {
  SeriesSettings s;
  for (Detail d : details) s.detail.add(d);
  return series_plan(s, 1, 4);
}

LatencyHist hist_at(uint64_t ns, uint64_t n) {
  LatencyHist h;
  h.add(ns, n);
  return h;
}

struct Stalls {
  StallsSnapshot st{};
  CompactionSnapshot bpf{};
  SelfStats self;
  Stalls() {
    self.counting.allocations_mode = "exact";
    self.counting.counting = true;
    st.alloc.allocs[5][FRAGD_OUTCOME_STALLED] = 3;
    st.alloc.allocs[7][FRAGD_OUTCOME_STALLED] = 4;
    st.alloc.allocs[9][FRAGD_OUTCOME_FAST] = 10;
    st.alloc.direct_entries[4][FRAGD_PHASE_COMPACTION] = 2;
    st.alloc.direct_entries[8][FRAGD_PHASE_COMPACTION] = 5;
    st.alloc.phase_ns[6][FRAGD_PHASE_RECLAIM] = 1'500'000'000;
    st.stall[5][FRAGD_RESULT_SUCCESS] = hist_at(300'000, 2);     // 300 us
    st.stall[7][FRAGD_RESULT_FAILURE] = hist_at(9'000'000, 1);   // 9 ms
    st.stall[10][FRAGD_RESULT_SUCCESS] = hist_at(2'000'000, 5);  // 2 ms
    for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) bpf.compaction_hist[t] = hist_at(50'000'000, t + 1);
    bpf.compaction.runs[FRAGD_TRIGGER_DIRECT][FRAGD_CSTATUS_SUCCESS] = 6;
    bpf.compaction.runs[FRAGD_TRIGGER_DIRECT][FRAGD_CSTATUS_CONTENDED] = 1;
  }
  Families build(const SeriesPlan& plan) {  // the stalls concern's families of these maps
    Families out;
    counting_metrics(self.counting, out);
    stall_metrics(plan, st, self.counting, out);
    compaction_metrics(plan, bpf, out);
    return out;
  }
};

TEST(SeriesFamilies, OrderGroupsSumTheirOrders) {
  Stalls s;
  const Families fs = s.build(default_plan());
  const auto* stalled = metric(fs, "fragd_alloc_total", {{"order", "4-8"}, {"outcome", "stalled"}});
  ASSERT_NE(stalled, nullptr);
  EXPECT_EQ(stalled->counter.value, 7);  // orders 5 and 7
  EXPECT_EQ(metric(fs, "fragd_alloc_total", {{"order", "9-10"}, {"outcome", "fast"}})->counter.value, 10);
  EXPECT_EQ(metric(fs, "fragd_alloc_total", {{"order", "1-3"}, {"outcome", "stalled"}})->counter.value, 0);
  EXPECT_EQ(metric(fs, "fragd_direct_stall_entries_total", {{"order", "4-8"}, {"phase", "compaction"}})->counter.value, 7);
  EXPECT_DOUBLE_EQ(metric(fs, "fragd_alloc_stall_phase_seconds_total", {{"order", "4-8"}, {"phase", "reclaim"}})->counter.value,
                   1.5);
  // No per-order series is left: every order label is a group's.
  for (const char* fam : {"fragd_alloc_total", "fragd_direct_stall_entries_total", "fragd_alloc_stall_phase_seconds_total",
                          "fragd_alloc_stalls_abandoned_total", "fragd_own_allocations_total", "fragd_alloc_stall_seconds"})
    for (const auto& m : find(fs, fam)->metric) {
      const std::string o = label(m, "order");
      EXPECT_TRUE(o == "1-3" || o == "4-8" || o == "9-10") << fam << " order " << o;
    }
}

TEST(SeriesFamilies, StallTimesMergeResultsWithCoarseBuckets) {
  Stalls s;
  const Families fs = s.build(default_plan());
  const auto* f = find(fs, "fragd_alloc_stall_seconds");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->metric.size(), 3u);  // a group each, result "all"
  const auto* mid = metric(fs, "fragd_alloc_stall_seconds", {{"order", "4-8"}, {"result", "all"}});
  ASSERT_NE(mid, nullptr);
  EXPECT_EQ(mid->histogram.sample_count, 3u);  // 2 successes at order 5, 1 failure at order 7
  ASSERT_EQ(mid->histogram.bucket.size(), 6u);  // 16.4 us, 262 us, 4.19 ms, 67.1 ms, 1.07 s, +Inf
  EXPECT_DOUBLE_EQ(mid->histogram.bucket[2].upper_bound, (1ULL << 22) / 1e9);
  EXPECT_EQ(mid->histogram.bucket[1].cumulative_count, 0u);  // nothing at or under 262 us
  EXPECT_EQ(mid->histogram.bucket[2].cumulative_count, 2u);  // the two of 300 us
  EXPECT_EQ(mid->histogram.bucket[3].cumulative_count, 3u);  // and the 9 ms failure
  EXPECT_TRUE(std::isinf(mid->histogram.bucket.back().upper_bound));
  // The fine buckets stay beside the family for the native histogram.
  ASSERT_EQ(fs.fine.count("fragd_alloc_stall_seconds"), 1u);
  const auto& fine = fs.fine.at("fragd_alloc_stall_seconds");
  ASSERT_EQ(fine.size(), f->metric.size());
  const size_t i = static_cast<size_t>(mid - f->metric.data());
  EXPECT_EQ(fine[i].count, 3u);
  EXPECT_EQ(fine[i].buckets[fragd_hist_bucket(300'000)], 2u);
  EXPECT_EQ(fine[i].buckets[fragd_hist_bucket(9'000'000)], 1u);

  // With detail results and fine buckets: a series per result, 26 buckets.
  SeriesSettings wide;
  wide.buckets = BucketLayout::Fine;
  wide.detail.add(Detail::Results);
  const Families w = s.build(series_plan(wide, 1, 4));
  EXPECT_EQ(find(w, "fragd_alloc_stall_seconds")->metric.size(), 6u);
  const auto* fail = metric(w, "fragd_alloc_stall_seconds", {{"order", "4-8"}, {"result", "failure"}});
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->histogram.sample_count, 1u);
  EXPECT_EQ(fail->histogram.bucket.size(), 26u);
}

TEST(SeriesFamilies, CompactionRunsByStatusOnlyWhenAskedDurationsCountAndSum) {
  Stalls s;
  const Families fs = s.build(default_plan());
  const auto* direct = metric(fs, "fragd_compaction_runs_total", {{"trigger", "direct"}});
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(label(*direct, "status"), "all");
  EXPECT_EQ(direct->counter.value, 7);
  EXPECT_EQ(find(fs, "fragd_compaction_runs_total")->metric.size(), size_t{FRAGD_NR_TRIGGERS});
  const auto* dur = metric(fs, "fragd_compaction_duration_seconds", {{"trigger", "kcompactd"}});
  ASSERT_NE(dur, nullptr);
  ASSERT_EQ(dur->histogram.bucket.size(), 1u);  // +Inf alone
  EXPECT_EQ(dur->histogram.sample_count, 2u);
  EXPECT_DOUBLE_EQ(dur->histogram.sample_sum, 0.1);

  const Families w = s.build(plan_with({Detail::Statuses}));
  EXPECT_EQ(find(w, "fragd_compaction_runs_total")->metric.size(), size_t{FRAGD_NR_TRIGGERS} * size_t{FRAGD_NR_CSTATUS});
  EXPECT_EQ(metric(w, "fragd_compaction_runs_total", {{"trigger", "direct"}, {"status", "contended"}})->counter.value, 1);
}

MemSnapshot three_zones() {
  MemSnapshot m;
  const char* names[] = {"DMA", "DMA32", "Normal"};
  for (int i = 0; i < 3; i++) {
    ZoneFree z;
    z.node = 0;
    z.zone = names[i];
    z.present_pages = 4096u << i;
    z.free_blocks = std::vector<uint64_t>(11, 0);
    z.free_blocks[0] = 10;
    z.free_blocks[5] = 2;
    z.free_blocks[9] = static_cast<uint64_t>(i);  // 0, 1, 2 blocks of 2 MiB
    z.pageblocks = {{"Movable", 10u + i}, {"Unmovable", 1}};
    m.zones.push_back(z);
  }
  for (uint64_t kib : {16, 32, 64, 2048}) m.mthp.push_back({kib, {{"anon_fault_alloc", kib}, {"nr_anon", 1}}});
  m.vmstat = {{"thp_fault_alloc", 1}, {"compact_stall", 2}};
  return m;
}

// The memory concern's families of a snapshot under `plan`.
Families memory_families(const MemSnapshot& mem, const SeriesPlan& plan) {
  Families out;
  memory_metrics(mem, plan, out);
  pool_metrics(mem, out);
  thp_metrics(mem, plan, out);
  return out;
}

// The families of three_zones() under `plan`.
Families zone_families(const SeriesPlan& plan) { return memory_families(three_zones(), plan); }

TEST(SeriesFamilies, ZonesSummedPerNodeUnlessAsked) {
  const Families fs = zone_families(default_plan());
  EXPECT_EQ(find(fs, "fragd_zone_fragmentation_score_percent"), nullptr);  // a zone's alone: with detail zones
  const auto* fb = find(fs, "fragd_free_blocks");
  ASSERT_NE(fb, nullptr);
  ASSERT_EQ(fb->metric.size(), 4u);  // orders 0, 1-3, 4-8, 9-10 of node 0
  const auto* nine = metric(fs, "fragd_free_blocks", {{"node", "0"}, {"zone", "all"}, {"order", "9-10"}});
  ASSERT_NE(nine, nullptr);
  EXPECT_EQ(nine->gauge.value, 3);  // 0 + 1 + 2
  EXPECT_EQ(metric(fs, "fragd_free_blocks", {{"order", "4-8"}})->gauge.value, 6);
  EXPECT_EQ(metric(fs, "fragd_pageblocks", {{"zone", "all"}, {"migratetype", "Movable"}})->gauge.value, 33);
  // Free pages of the node: 3 x (10 + 2 x 32) + 3 x 512.
  EXPECT_EQ(metric(fs, "fragd_zone_free_pages", {{"zone", "all"}})->gauge.value, 3 * (10 + 64) + 3 * 512);
  // The unusable index of the node's free memory, at each group's first order: for order 9 the
  // share of free pages not in 2 MiB blocks.
  const auto* ufi = metric(fs, "fragd_unusable_free_index_ratio", {{"zone", "all"}, {"order", "9"}});
  ASSERT_NE(ufi, nullptr);
  EXPECT_NEAR(ufi->gauge.value, 222.0 / (222 + 1536), 0.001);
  EXPECT_EQ(find(fs, "fragd_unusable_free_index_ratio")->metric.size(), 4u);

  const Families w = zone_families(plan_with({Detail::Zones}));
  EXPECT_EQ(find(w, "fragd_zone_fragmentation_score_percent")->metric.size(), 3u);
  EXPECT_EQ(find(w, "fragd_free_blocks")->metric.size(), 12u);
  EXPECT_EQ(metric(w, "fragd_free_blocks", {{"zone", "Normal"}, {"order", "9-10"}})->gauge.value, 2);
  EXPECT_EQ(metric(w, "fragd_free_blocks", {{"zone", "all"}}), nullptr);
}

// fragd_node_unreclaimable: one series per node that says, 1 when any of its zones says 1.
TEST(SeriesFamilies, NodeUnreclaimableOnePerNode) {
  MemSnapshot mem = three_zones();
  const Families none = memory_families(mem, default_plan());
  const auto* empty = find(none, "fragd_node_unreclaimable");
  EXPECT_TRUE(!empty || empty->metric.empty());  // no zoneinfo line: no series
  for (auto& z : mem.zones) z.node_unreclaimable = 0;
  ZoneFree other = mem.zones[2];
  other.node = 1;
  other.node_unreclaimable = 1;
  mem.zones.push_back(other);
  ZoneFree movable;  // empty: no line (-1)
  movable.node = 1;
  movable.zone = "Movable";
  mem.zones.push_back(movable);
  Families fs = memory_families(mem, default_plan());
  const auto* nu = find(fs, "fragd_node_unreclaimable");
  ASSERT_NE(nu, nullptr);
  ASSERT_EQ(nu->metric.size(), 2u);
  EXPECT_EQ(metric(fs, "fragd_node_unreclaimable", {{"node", "0"}})->gauge.value, 0);
  EXPECT_EQ(metric(fs, "fragd_node_unreclaimable", {{"node", "1"}})->gauge.value, 1);
  mem.zones[1].node_unreclaimable = 1;  // the node's flag, whichever zone prints it
  fs = memory_families(mem, default_plan());
  EXPECT_EQ(metric(fs, "fragd_node_unreclaimable", {{"node", "0"}})->gauge.value, 1);
}

TEST(SeriesFamilies, ThpThePmdSizeAloneKernelCountersWhenAsked) {
  const Families fs = zone_families(default_plan());
  const auto* alloc = find(fs, "fragd_thp_allocations_total");
  ASSERT_NE(alloc, nullptr);
  ASSERT_EQ(alloc->metric.size(), 1u);
  EXPECT_EQ(label(alloc->metric[0], "size"), "2048kB");
  EXPECT_EQ(find(fs, "fragd_thp_vmstat_total"), nullptr);
  EXPECT_EQ(find(fs, "fragd_compaction_vmstat_total"), nullptr);

  const Families w = zone_families(plan_with({Detail::ThpSizes, Detail::KernelCounters}));
  EXPECT_EQ(find(w, "fragd_thp_allocations_total")->metric.size(), 4u);
  EXPECT_EQ(metric(w, "fragd_thp_vmstat_total", {{"counter", "thp_fault_alloc"}})->counter.value, 1);
  EXPECT_EQ(metric(w, "fragd_compaction_vmstat_total", {{"counter", "compact_stall"}})->counter.value, 2);
}

TEST(SeriesFamilies, ProgramRunStatisticsWhenAskedRecursionMissesSummedOtherwise) {
  std::vector<ProgramState> programs{{"a", "kmem:mm_page_alloc", true, "", 1, -1, true},
                                     {"b", "compaction:mm_compaction_end", true, "", 2, -1, true}};
  SelfStats self;
  self.run_stats = {{"a", 1, 10, 1000, 2}, {"b", 2, 20, 2000, 3}};
  const Families fs = own_families(self, programs, default_plan());
  EXPECT_EQ(find(fs, "fragd_bpf_program_runs_total"), nullptr);
  EXPECT_EQ(find(fs, "fragd_bpf_program_run_seconds_total"), nullptr);
  const auto* miss = find(fs, "fragd_bpf_program_recursion_misses_total");
  ASSERT_NE(miss, nullptr);
  ASSERT_EQ(miss->metric.size(), 1u);
  EXPECT_EQ(label(miss->metric[0], "program"), "all");
  EXPECT_EQ(miss->metric[0].counter.value, 5);
  EXPECT_EQ(find(fs, "fragd_bpf_program_attached")->metric.size(), 2u);  // the alert reads each program

  const Families w = own_families(self, programs, plan_with({Detail::Programs}));
  EXPECT_EQ(find(w, "fragd_bpf_program_runs_total")->metric.size(), 2u);
  EXPECT_EQ(metric(w, "fragd_bpf_program_recursion_misses_total", {{"program", "b"}})->counter.value, 3);
}

TEST(SeriesFamilies, StallsByConsumerInOrderGroups) {
  AttributionView v;
  v.consumers[{5u, "slab"}] = {2, 1'000'000'000};
  v.consumers[{7u, "slab"}] = {3, 2'000'000'000};
  v.consumers[{9u, "thp_fault"}] = {1, 500'000'000};
  Families fs;
  attribution_metrics(v, default_plan(), fs);
  const auto* slab = metric(fs, "fragd_stalls_total", {{"order", "4-8"}, {"consumer", "slab"}});
  ASSERT_NE(slab, nullptr);
  EXPECT_EQ(slab->counter.value, 5);
  EXPECT_DOUBLE_EQ(metric(fs, "fragd_stall_seconds_total", {{"order", "4-8"}, {"consumer", "slab"}})->counter.value, 3);
  EXPECT_EQ(metric(fs, "fragd_stalls_total", {{"order", "9-10"}, {"consumer", "thp_fault"}})->counter.value, 1);
  EXPECT_EQ(find(fs, "fragd_stalls_total")->metric.size(), 2u);
}

// Nothing in the default plan grows with orders x buckets x results: the stall families of a
// frame with every order stalled stay the size of the groups.
TEST(SeriesFamilies, TheDefaultPlanDoesNotGrowWithOrdersBucketsResults) {
  Stalls s;
  for (unsigned o = 1; o < FRAGD_NR_ORDERS; o++)
    for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++)
      for (uint64_t ns = 2048; ns < (1ULL << 34); ns *= 2) s.st.stall[o][r].add(ns);
  const Families narrow = s.build(default_plan());
  const Families wide = s.build(widest_plan(1));
  // The stall histogram: 3 groups x (6 buckets + sum + count) against 10 orders x 2 results x 28.
  const auto count_of = [](const Families& fs, const char* name) {
    size_t n = 0;
    for (const auto& m : find(fs, name)->metric) n += m.histogram.bucket.size() + 2;
    return n;
  };
  EXPECT_EQ(count_of(narrow, "fragd_alloc_stall_seconds"), 24u);
  EXPECT_EQ(count_of(wide, "fragd_alloc_stall_seconds"), 560u);
  EXPECT_LT(series(narrow) * 4, series(wide));
}

}  // namespace
}  // namespace fragd
