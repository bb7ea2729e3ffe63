// SPDX-License-Identifier: Apache-2.0
// The /metrics contract: every family fragd can export, its type and its label names,
// held to tests/contract/metrics.txt. A family is added, renamed or dropped only by
// changing that list in the same commit (and the CHANGELOG when a name changes).
// The live side is tests/integration/contract_metrics_test.sh.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "concerns/act/concern.h"
#include "concerns/compaction/concern.h"
#include "concerns/attribution/concern.h"
#include "concerns/memory/concern.h"
#include "concerns/pageblocks/concern.h"
#include "concerns/stalls/concern.h"
#include "fragd/exporter.h"

namespace {

const char* type_name(prometheus::MetricType t) {
  switch (t) {
    case prometheus::MetricType::Counter: return "counter";
    case prometheus::MetricType::Gauge: return "gauge";
    case prometheus::MetricType::Histogram: return "histogram";
    case prometheus::MetricType::Summary: return "summary";
    default: return "untyped";
  }
}

// What every source has something to say of, so that every family fragd can export appears
// with at least one sample.
struct FullFrame {
  fragd::CompactionSnapshot bpf{};
  fallback_stats fallback{};
  fragd::StallsSnapshot stalls{};
  fragd::MemSnapshot mem;
  std::vector<fragd::ProgramState> programs;
  fragd::SelfStats self;
  fragd::ActStats act;
  fragd::ScanStats scan;
  fragd::PollutionStats pollution;
  std::vector<fragd::NodeForecast> forecast;
  fragd::AttributionView attribution;
  std::map<std::string, fragd::CgroupAnon> cgroup_anon{{"/a", {100, 50, false}}};

  FullFrame() {
    fragd::ZoneFree z;
    z.node = 0;
    z.zone = "Normal";
    z.present_pages = 1 << 20;
    z.free_blocks = std::vector<uint64_t>(11, 1);
    z.pageblocks = {{"Movable", 100}};
    z.node_unreclaimable = 0;
    z.free_pages_blocks = 1536;
    mem.zones.push_back(z);
    mem.hugepages.push_back({0, 2048, 3, 1});
    programs.push_back({"handle_alloc", "kmem:mm_page_alloc", true, "", 1, -1, true});
    self.run_stats.push_back({"handle_alloc", 1, 10, 1000, 0});
    self.map_memory.push_back({"pollution", "polluted_blocks", 1799296, 1});
    self.kernel_write_errors[{"/sys/devices/system/node/node<N>/compact", "EBUSY"}] = 1;
    self.kernel = "6.18.0";
    self.counting.allocations_mode = "exact";
    self.counting.counting = true;
    act.mode = "act";
    act.actions[{"compact", -1, "ok"}] = 1;
    act.durations["compact"] = fragd::LatencyHist{};
    act.pages_migrated["compact"] = 1;
    act.last_score[0] = {90, 10};
    fragd::NodeState ns;
    ns.pages_per_block = 128;
    ns.ns_per_block = 1000000;
    act.nodes.push_back(ns);
    mem.vm_sysctls = {{"compaction_proactiveness", 20}, {"defrag_mode", 0}};
    mem.page_reporting = fragd::PageReporting{"virtio_balloon", "virtio0", 9};
    fragd::PoolState p;
    p.node = 0;
    p.size_kib = 2048;
    p.target = 4;
    act.pools.push_back(p);
    act.leased_pages[{0, 2048}] = 512;
    auto r = std::make_shared<fragd::ScanResult>();
    r->map_oldest_boot_ns = 1;  // a whole map: the families that wait for one are there
    fragd::ZoneScan zs;
    zs.zone = "Normal";
    r->zones.push_back(zs);
    scan.scan = r;
    pollution.summary.nodes.push_back({0, 1, 1});
    mem.mthp.push_back({2048,
                        {{"anon_fault_alloc", 1}, {"anon_fault_fallback", 1}, {"anon_fault_fallback_charge", 0},
                         {"split", 1}, {"swpout", 1}, {"nr_anon", 1}, {"nr_anon_partially_mapped", 0},
                         {"collapse_alloc", 1}, {"collapse_alloc_failed", 0}, {"collapse_exceed_none_pte", 1},
                         {"collapse_exceed_swap_pte", 0}, {"collapse_exceed_shared_pte", 0}}});
    mem.vmstat = {{"thp_fault_alloc", 1},   {"compact_stall", 1},  {"pgscan_direct", 10},
                  {"pgscan_kswapd", 20},    {"pgsteal_direct", 5}, {"pgsteal_kswapd", 15}};
    mem.memory_pressure = fragd::MemoryPressure{1500000, 250000};
    forecast.push_back({0, 100, -1.0, true, 100.0});
    bpf.cma_traced = true;
    fragd::CmaArea cma;
    cma.name = "hugetlb0";
    cma.pages[FRAGD_RESULT_SUCCESS] = 262144;
    bpf.cma.push_back(cma);
    attribution.consumers[{9u, "hugetlb"}] = {1, 1000};
    attribution.failures[{2u, false, "net"}] = 3;  // fragd_alloc_failures_by_consumer_total
    attribution.failures_counted[2][0] = 3;
    attribution.cgroups = {{"/a", {1, 1000}}, {"other", {0, 0}}};
    attribution.callsites = {{"alloc_pool_huge_folio", {1, 1000}}, {"other", {0, 0}}};
  }

  // What a scrape serves: fragd's own families and each concern's (as Daemon::publish_metrics
  // asks them), then the process_* ones built at the scrape.
  fragd::Families families() {
    const fragd::SeriesPlan plan = fragd::widest_plan(1);
    fragd::Families out = fragd::own_families(self, programs, plan);
    fragd::MemoryConcern::families(&mem, forecast, 600'000'000'000ULL, plan, out);
    fragd::AttributionConcern::families(&attribution, &cgroup_anon, plan, out);
    fragd::StallsConcern::families(&stalls, self.counting, plan, out);
    fragd::CompactionConcern::families(plan, &bpf, out);
    fragd::ActConcern::families(act, plan, out);
    fragd::PageblocksConcern::families(&fallback, &pollution, &scan, out);
    for (auto& f : fragd::process_families(fragd::ProcessStats{1.5, 10 << 20, 100 << 20, 12, 1024, 1.7e9}))
      out.push_back(std::move(f));
    return out;
  }
};

// "name type label,label" per family, sorted by name; "-" when a family has no labels.
std::string contract_of(const fragd::Families& fs) {
  std::map<std::string, std::string> lines;
  for (const auto& f : fs) {
    std::set<std::string> labels;
    for (const auto& m : f.metric)
      for (const auto& l : m.label) labels.insert(l.name);
    std::string ls;
    for (const auto& l : labels) ls += (ls.empty() ? "" : ",") + l;
    lines[f.name] = f.name + " " + type_name(f.type) + " " + (ls.empty() ? "-" : ls);
  }
  std::string out;
  for (const auto& [_, l] : lines) out += l + "\n";
  return out;
}

std::string checked_in() {
  std::ifstream in(std::string(FRAGD_SOURCE_DIR) + "/tests/contract/metrics.txt");
  std::string out, line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') out += line + "\n";
  return out;
}

TEST(MetricsContract, EveryFamilyHasASampleInTheFullFrame) {
  FullFrame ff;
  for (const auto& f : ff.families())
    EXPECT_FALSE(f.metric.empty()) << f.name << " has no sample: give its source something in FullFrame";
}

TEST(MetricsContract, FamiliesTypesAndLabelsMatchTheCheckedInList) {
  FullFrame ff;
  const std::string now = contract_of(ff.families());
  if (const char* u = std::getenv("FRAGD_UPDATE_CONTRACT"); u && std::string(u) == "1") {
    std::ofstream out(std::string(FRAGD_SOURCE_DIR) + "/tests/contract/metrics.txt");
    out << "# Every family fragd exports: name, type, label names (\"-\": none).\n"
           "# The contract: tests/unit/fragd/metrics_contract_test.cc and\n"
           "# tests/integration/contract_metrics_test.sh hold fragd to it. Regenerate with\n"
           "#   FRAGD_UPDATE_CONTRACT=1 build/tests/fragd_unit_tests --gtest_filter='MetricsContract.*'\n"
           "# and say each rename in CHANGELOG.md.\n"
        << now;
  }
  EXPECT_EQ(now, checked_in()) << "the exported families differ from tests/contract/metrics.txt; if the change is "
                                  "meant, regenerate it (FRAGD_UPDATE_CONTRACT=1 build/tests/fragd_unit_tests "
                                  "--gtest_filter='MetricsContract.*') and add a CHANGELOG.md entry";
}

// The family names written in daemon/ are the listed ones: a family built where the
// full frame does not reach would otherwise escape the contract.
TEST(MetricsContract, FamilyNamesInTheSourceAreTheListedOnes) {
  std::set<std::string> listed, written;
  std::istringstream in(checked_in());
  for (std::string line; std::getline(in, line);) listed.insert(line.substr(0, line.find(' ')));
  const std::regex name_re("\"((?:fragd|process)_[a-z0-9_]+)\"");
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(FRAGD_SOURCE_DIR) + "/daemon")) {
    if (!e.is_regular_file()) continue;
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    for (std::sregex_iterator it(text.begin(), text.end(), name_re), end; it != end; ++it) written.insert((*it)[1]);
  }
  EXPECT_EQ(written, listed) << "a \"fragd_...\" name in daemon/ that is not a listed family, or the reverse";
}

}  // namespace
