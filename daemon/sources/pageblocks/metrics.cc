#include "sources/pageblocks/metrics.h"

namespace fragd {

void scan_metrics(const ScanStats& scan, Families& out) {
  {
    FamilyBuilder runs("fragd_scans_total",
                       "Pageblock scans of /proc/kpageflags, by result; result=\"unchanged\" counts the intervals "
                       "that found free memory and pageblock types unchanged and did not scan "
                       "(pageblocks.max_age bounds how old a scan gets).",
                       MetricType::Counter);
    runs.counter({{"result", "ok"}}, scan.ok);
    runs.counter({{"result", "error"}}, scan.failed);
    runs.counter({{"result", "unchanged"}}, scan.skipped);
    emit(out, runs);
  }
  if (scan.scan) {
    const ScanResult& r = *scan.scan;
    FamilyBuilder cls("fragd_pageblock_class",
                      "Pageblocks by what their pages hold (/proc/kpageflags): free (every page free), movable "
                      "(in use, movable pages only), hybrid (movable pages polluted by unmovable ones: never a huge "
                      "page until those are freed), unmovable (mostly kernel pages), huge (a hugetlb page or THP), "
                      "offline (holes, offline memory).",
                      MetricType::Gauge);
    FamilyBuilder obt("fragd_hugepages_obtainable",
                      "Huge pages (one per pageblock) obtainable in the zone: how=\"free\" free blocks now, "
                      "how=\"compaction\" further ones a full compaction could make (movable blocks, bounded by the "
                      "free pages above the zone's reserve). Their sum is what compaction and then a pool write "
                      "would get.",
                      MetricType::Gauge);
    FamilyBuilder pol("fragd_hugepages_polluted",
                      "Huge pages lost to pollution: hybrid pageblocks, which compaction cannot free while their "
                      "unmovable pages live.",
                      MetricType::Gauge);
    FamilyBuilder cost("fragd_compaction_cost_pages",
                       "Pages compaction would have to migrate to make the how=\"compaction\" huge pages: the "
                       "movable pages of that many least-occupied movable blocks (a lower bound).",
                       MetricType::Gauge);
    for (const auto& z : r.zones) {
      const std::string n = node_label(z.node);
      for (size_t c = 0; c < kBlockClasses; c++)
        cls.gauge({{"node", n}, {"zone", z.zone}, {"class", block_class_name(static_cast<BlockClass>(c))}},
                  z.counts[c]);
      obt.gauge({{"node", n}, {"zone", z.zone}, {"how", "free"}}, z.hugepages_free);
      obt.gauge({{"node", n}, {"zone", z.zone}, {"how", "compaction"}}, z.hugepages_compaction);
      pol.gauge({{"node", n}, {"zone", z.zone}}, z.hugepages_polluted);
      cost.gauge({{"node", n}, {"zone", z.zone}}, z.compaction_cost_pages);
    }
    emit(out, cls, obt, pol, cost);
    FamilyBuilder dur("fragd_scan_duration_seconds", "Wall time of the last pageblock scan.", MetricType::Gauge);
    dur.gauge({}, r.duration_ns / 1e9);
    FamilyBuilder ts("fragd_scan_timestamp_seconds", "Unix time the last pageblock scan began.", MetricType::Gauge);
    ts.gauge({}, r.wall_time_ns / 1e9);
    emit(out, dur, ts);
  }

}

}  // namespace fragd
