// SPDX-License-Identifier: Apache-2.0
// THP coverage families from the per-size statistics and /proc/vmstat: each
// kernel file lands in its family and label, fallbacks split by cause sum to the
// kernel's fallback count, and what the kernel lacks is absent, not zero.
#include "concerns/thp/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fragd {
namespace {

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

TEST(ThpMetrics, PerSizeStatisticsByPathAndCause) {
  MemSnapshot mem;
  mem.mthp.push_back({64, {{"anon_fault_alloc", 40}, {"anon_fault_fallback", 9}, {"anon_fault_fallback_charge", 2}}});
  mem.mthp.push_back({2048,
                      {{"anon_fault_alloc", 300},
                       {"anon_fault_fallback", 25},
                       {"anon_fault_fallback_charge", 0},
                       {"shmem_alloc", 4},
                       {"shmem_fallback", 1},
                       {"split", 6},
                       {"split_failed", 1},
                       {"split_deferred", 3},
                       {"swpout", 2},
                       {"swpout_fallback", 5},
                       {"nr_anon", 280},
                       {"nr_anon_partially_mapped", 3}}});
  Families fs;
  thp_metrics(mem, widest_plan(1), fs);

  const auto alloc = samples(fs, "fragd_thp_allocations_total");
  EXPECT_EQ(alloc.at("size=64kB,path=anon_fault"), 40);
  EXPECT_EQ(alloc.at("size=2048kB,path=anon_fault"), 300);
  EXPECT_EQ(alloc.at("size=2048kB,path=shmem"), 4);
  EXPECT_EQ(alloc.count("size=2048kB,path=swpin"), 0u);  // no such file: absent, not 0
  EXPECT_EQ(alloc.size(), 3u);

  const auto fb = samples(fs, "fragd_thp_fallbacks_total");
  EXPECT_EQ(fb.at("size=64kB,path=anon_fault,cause=alloc"), 7);
  EXPECT_EQ(fb.at("size=64kB,path=anon_fault,cause=charge"), 2);
  EXPECT_EQ(fb.at("size=64kB,path=anon_fault,cause=alloc") + fb.at("size=64kB,path=anon_fault,cause=charge"), 9);
  EXPECT_EQ(fb.at("size=2048kB,path=anon_fault,cause=alloc"), 25);
  EXPECT_EQ(fb.at("size=2048kB,path=shmem,cause=alloc"), 1);
  EXPECT_EQ(fb.count("size=2048kB,path=shmem,cause=charge"), 0u);  // the kernel has no such file here

  const auto split = samples(fs, "fragd_thp_splits_total");
  EXPECT_EQ(split.at("size=2048kB,result=split"), 6);
  EXPECT_EQ(split.at("size=2048kB,result=failed"), 1);
  EXPECT_EQ(split.at("size=2048kB,result=deferred"), 3);
  const auto swp = samples(fs, "fragd_thp_swapouts_total");
  EXPECT_EQ(swp.at("size=2048kB,how=swap"), 2);
  EXPECT_EQ(swp.at("size=2048kB,how=fallback"), 5);
  EXPECT_EQ(swp.count("size=2048kB,how=zswap"), 0u);
  EXPECT_EQ(samples(fs, "fragd_thp_anon_folios").at("size=2048kB"), 280);
  EXPECT_EQ(samples(fs, "fragd_thp_anon_partially_mapped_folios").at("size=2048kB"), 3);
}

TEST(ThpMetrics, ChargeCountedAheadOfTheFallbackNeverGoesNegative) {
  // The two files are read one after the other: a charge failure may be in one and not yet in the other.
  MemSnapshot mem;
  mem.mthp.push_back({2048, {{"anon_fault_fallback", 3}, {"anon_fault_fallback_charge", 4}}});
  Families fs;
  thp_metrics(mem, widest_plan(1), fs);
  EXPECT_EQ(samples(fs, "fragd_thp_fallbacks_total").at("size=2048kB,path=anon_fault,cause=alloc"), 0);
}

TEST(ThpMetrics, VmstatThpAndCompactCountersByName) {
  MemSnapshot mem;
  mem.vmstat = {{"thp_fault_alloc", 11}, {"thp_fault_fallback", 2}, {"compact_stall", 5},
                {"compact_daemon_wake", 8}, {"nr_free_pages", 1000}, {"pgmigrate_success", 77}};
  Families fs;
  thp_metrics(mem, widest_plan(1), fs);
  const auto thp = samples(fs, "fragd_thp_vmstat_total");
  EXPECT_EQ(thp.size(), 2u);
  EXPECT_EQ(thp.at("counter=thp_fault_alloc"), 11);
  EXPECT_EQ(thp.at("counter=thp_fault_fallback"), 2);
  const auto cmp = samples(fs, "fragd_compaction_vmstat_total");
  EXPECT_EQ(cmp.size(), 2u);
  EXPECT_EQ(cmp.at("counter=compact_stall"), 5);
  EXPECT_EQ(cmp.at("counter=compact_daemon_wake"), 8);
}

// khugepaged's per-size statistics of Linux 7.2 (tests/fixtures/mthp/linux-7.2): its allocations
// as path "collapse", its failed allocations as a fallback, the ranges it passed over by the kind
// of PTE; a 6.18 tree (tests/fixtures/mthp/linux-6.18) has none of them and gets no such series.
TEST(ThpMetrics, CollapseStatisticsWhereTheKernelHasThem) {
  const std::string root = std::string(FRAGD_FIXTURES_DIR) + "/mthp/";
  std::vector<std::string> w;
  MemSnapshot mem;
  mem.mthp = read_mthp_stats(root + "linux-7.2", &w);
  ASSERT_TRUE(w.empty()) << w.front();
  ASSERT_EQ(mem.mthp.size(), 2u);
  Families fs;
  thp_metrics(mem, widest_plan(1), fs);
  const auto alloc = samples(fs, "fragd_thp_allocations_total");
  EXPECT_EQ(alloc.at("size=2048kB,path=collapse"), 2004);
  EXPECT_EQ(alloc.at("size=64kB,path=collapse"), 1004);
  EXPECT_EQ(alloc.at("size=2048kB,path=anon_fault"), 2001);
  const auto fb = samples(fs, "fragd_thp_fallbacks_total");
  EXPECT_EQ(fb.at("size=2048kB,path=collapse,cause=alloc"), 2005);
  EXPECT_EQ(fb.count("size=2048kB,path=collapse,cause=charge"), 0u);  // the kernel counts none per size
  const auto exceed = samples(fs, "fragd_thp_collapse_exceeded_total");
  ASSERT_EQ(exceed.size(), 6u);
  EXPECT_EQ(exceed.at("size=2048kB,pte=none"), 2006);
  EXPECT_EQ(exceed.at("size=2048kB,pte=shared"), 2007);
  EXPECT_EQ(exceed.at("size=2048kB,pte=swap"), 2008);
  EXPECT_EQ(exceed.at("size=64kB,pte=none"), 1006);

  // The default plan: the PMD size alone, the collapse series with it.
  Families pmd;
  thp_metrics(mem, series_plan(SeriesSettings{}, 1, 4), pmd);
  EXPECT_EQ(samples(pmd, "fragd_thp_collapse_exceeded_total").size(), 3u);

  MemSnapshot old;
  old.mthp = read_mthp_stats(root + "linux-6.18", &w);
  ASSERT_TRUE(w.empty()) << w.front();
  ASSERT_EQ(old.mthp.size(), 2u);
  Families os;
  thp_metrics(old, widest_plan(1), os);
  EXPECT_TRUE(samples(os, "fragd_thp_collapse_exceeded_total").empty());
  for (const auto& [labels, _] : samples(os, "fragd_thp_allocations_total"))
    EXPECT_EQ(labels.find("path=collapse"), std::string::npos) << labels;
  for (const auto& [labels, _] : samples(os, "fragd_thp_fallbacks_total"))
    EXPECT_EQ(labels.find("path=collapse"), std::string::npos) << labels;
  EXPECT_FALSE(samples(os, "fragd_thp_allocations_total").empty());  // the 6.9+ ones stay
}

TEST(ThpMetrics, KernelWithoutPerSizeStatisticsHasNoPerSizeSeries) {
  MemSnapshot mem;  // before 6.9: no stats folders
  Families fs;
  thp_metrics(mem, widest_plan(1), fs);
  for (const char* name : {"fragd_thp_allocations_total", "fragd_thp_fallbacks_total", "fragd_thp_splits_total",
                           "fragd_thp_swapouts_total", "fragd_thp_anon_folios"})
    EXPECT_TRUE(samples(fs, name).empty()) << name;
}

}  // namespace
}  // namespace fragd
