// SPDX-License-Identifier: Apache-2.0
#include "concerns/pageblocks/metrics.h"

#include <algorithm>
#include <map>

namespace fragd {

// The scanner's own counters: its scans, its CPU time, the blocks it read.
static void scanner_metrics(const ScanStats& scan, Families& out) {
  FamilyBuilder runs("fragd_scans_total",
                     "Pageblock scans of /proc/kpageflags, by result; result=\"unchanged\" counts the intervals "
                     "that found free memory and pageblock types unchanged and did not scan "
                     "(pageblocks.max_age bounds how old a scan gets).",
                     MetricType::Counter);
  runs.counter({{"result", "ok"}}, scan.ok);
  runs.counter({{"result", "error"}}, scan.failed);
  runs.counter({{"result", "unchanged"}}, scan.skipped);
  FamilyBuilder cpu("fragd_scan_cpu_seconds_total",
                    "CPU time (user and system) of the pageblock scanner thread: sample rounds, kept within "
                    "pageblocks.budget, and the full scans fragctl map --max-age asks for (with "
                    "pageblocks.threads above 1 a full scan's other threads are not counted).",
                    MetricType::Counter);
  cpu.counter({}, scan.cost.cpu_ns / 1e9);
  FamilyBuilder blocks("fragd_scan_pageblocks_read_total",
                       "Pageblocks whose page flags the scanner read, by how: \"sample\" (rounds of "
                       "pageblocks.mode: sample), \"full\" (full scans).",
                       MetricType::Counter);
  blocks.counter({{"how", "sample"}}, static_cast<double>(scan.cost.blocks_sample));
  blocks.counter({{"how", "full"}}, static_cast<double>(scan.cost.blocks_full));
  emit(out, runs, cpu, blocks);
}

// Each zone's pageblocks by class and the huge pages they hold, from the last round or map.
static void zone_metrics(const ScanResult& r, Families& out) {
  FamilyBuilder cls("fragd_pageblock_class",
                    "Pageblocks by what their pages hold (/proc/kpageflags): free (every page free), movable "
                    "(in use, movable pages only), hybrid (movable pages polluted by unmovable ones: never a huge "
                    "page until those are freed), unmovable (mostly kernel pages), huge (a hugetlb page or THP), "
                    "offline (holes, offline memory).",
                    MetricType::Gauge);
  FamilyBuilder obt("fragd_hugepages_obtainable",
                    "Huge pages obtainable in the zone, by size. size=\"2MiB\" (one per pageblock): how=\"free\" "
                    "free blocks now, how=\"compaction\" further ones a full compaction could make (movable "
                    "blocks, bounded by the free pages above the zone's reserve). size=\"1GiB\" (aligned 1 GiB "
                    "ranges): how=\"free\" wholly free now, how=\"compaction\" further ones contiguous-range "
                    "migration could free (ranges of free and movable blocks only, while free pages elsewhere "
                    "can take their pages). The sum is what a pool write of that size would get.",
                    MetricType::Gauge);
  FamilyBuilder run("fragd_free_contiguous_max_bytes",
                    "The longest run of physically contiguous free memory on the node, in whole pageblocks "
                    "(from the pageblock scan).",
                    MetricType::Gauge);
  std::map<int, uint64_t> longest;
  FamilyBuilder pol("fragd_hugepages_polluted",
                    "Huge pages lost to pollution: hybrid pageblocks, which compaction cannot free while their "
                    "unmovable pages live.",
                    MetricType::Gauge);
  FamilyBuilder cost("fragd_compaction_cost_pages",
                     "Pages compaction would have to migrate to make the how=\"compaction\" huge pages: the "
                     "movable pages of that many least-occupied movable blocks (a lower bound).",
                     MetricType::Gauge);
  FamilyBuilder bound("fragd_hugepages_obtainable_bound",
                      "The 95% interval of fragd_hugepages_obtainable{size=\"2MiB\",how=\"compaction\"} "
                      "when it is estimated from a sample of pageblocks (pageblocks.mode: sample); both bounds "
                      "equal the estimate when the zone was read whole.",
                      MetricType::Gauge);
  FamilyBuilder pol_bound("fragd_hugepages_polluted_bound",
                          "The 95% interval of fragd_hugepages_polluted when it is estimated from a sample of "
                          "pageblocks; both bounds equal it when the zone was read whole.",
                          MetricType::Gauge);
  FamilyBuilder sample("fragd_pageblock_sample_blocks",
                       "Pageblocks of the zone read for the last round's estimates: all of them "
                       "(fragd_pageblock_class summed) when the zone was read whole, a random sample otherwise. "
                       "A class share p estimated from n of N blocks is within "
                       "1.96*sqrt(p(1-p)/n*(1-n/N)) at 95%.",
                       MetricType::Gauge);
  // The 1 GiB ranges and the longest free run need every block: they wait for a whole map.
  const bool whole_map = r.map_oldest_boot_ns > 0;
  for (const auto& z : r.zones) {
    const std::string n = node_label(z.node);
    for (size_t c = 0; c < kBlockClasses; c++)
      cls.gauge({{"node", n}, {"zone", z.zone}, {"class", block_class_name(static_cast<BlockClass>(c))}},
                z.counts[c]);
    obt.gauge({{"node", n}, {"zone", z.zone}, {"size", "2MiB"}, {"how", "free"}}, z.hugepages_free);
    obt.gauge({{"node", n}, {"zone", z.zone}, {"size", "2MiB"}, {"how", "compaction"}}, z.hugepages_compaction);
    bound.gauge({{"node", n}, {"zone", z.zone}, {"size", "2MiB"}, {"how", "compaction"}, {"bound", "lower"}},
                z.compaction_ci.lo);
    bound.gauge({{"node", n}, {"zone", z.zone}, {"size", "2MiB"}, {"how", "compaction"}, {"bound", "upper"}},
                z.compaction_ci.hi);
    if (whole_map) {
      obt.gauge({{"node", n}, {"zone", z.zone}, {"size", "1GiB"}, {"how", "free"}}, z.gigantic_free);
      obt.gauge({{"node", n}, {"zone", z.zone}, {"size", "1GiB"}, {"how", "compaction"}}, z.gigantic_migration);
      longest[z.node] = std::max(longest[z.node], z.free_run_max_pages);
    }
    pol.gauge({{"node", n}, {"zone", z.zone}}, z.hugepages_polluted);
    pol_bound.gauge({{"node", n}, {"zone", z.zone}, {"bound", "lower"}}, z.polluted_ci.lo);
    pol_bound.gauge({{"node", n}, {"zone", z.zone}, {"bound", "upper"}}, z.polluted_ci.hi);
    cost.gauge({{"node", n}, {"zone", z.zone}}, z.compaction_cost_pages);
    sample.gauge({{"node", n}, {"zone", z.zone}}, static_cast<double>(z.sample_blocks));
  }
  for (const auto& [node, pages] : longest) run.gauge({{"node", node_label(node)}}, static_cast<double>(pages) * static_cast<double>(kernel_page_bytes()));
  emit(out, cls, obt, bound, run, pol, pol_bound, cost, sample);
}

// How old the whole map is, and when and how long the last scan ran.
static void map_metrics(const ScanStats& scan, const ScanResult& r, Families& out) {
  if (r.map_oldest_boot_ns > 0) {  // every block read once
    FamilyBuilder age("fragd_pageblock_map_age_seconds",
                      "Age of the pageblock map's least recently read block (the map fragctl map draws, and "
                      "the 1 GiB estimates' source); absent until every block was read once.",
                      MetricType::Gauge);
    age.gauge({}, scan.now_boot_ns > r.map_oldest_boot_ns ? (scan.now_boot_ns - r.map_oldest_boot_ns) / 1e9 : 0);
    emit(out, age);
  }
  FamilyBuilder dur("fragd_scan_duration_seconds", "Wall time of the last pageblock scan.", MetricType::Gauge);
  dur.gauge({}, r.duration_ns / 1e9);
  FamilyBuilder ts("fragd_scan_timestamp_seconds", "Unix time the last pageblock scan began.", MetricType::Gauge);
  ts.gauge({}, r.wall_time_ns / 1e9);
  emit(out, dur, ts);
}

void scan_metrics(const ScanStats& scan, Families& out) {
  scanner_metrics(scan, out);
  if (!scan.scan) return;
  zone_metrics(*scan.scan, out);
  map_metrics(scan, *scan.scan, out);
}

}  // namespace fragd
