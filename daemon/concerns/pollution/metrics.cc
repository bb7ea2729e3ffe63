// SPDX-License-Identifier: Apache-2.0
#include "concerns/pollution/metrics.h"

namespace fragd {

void fallback_metrics(const fallback_stats& f, Families& out) {
  FamilyBuilder fb("fragd_fallback_total",
                   "Allocations that took pages from another migratetype's free list (mm_page_alloc_extfrag); "
                   "claimed=\"false\" from a movable block by an unmovable/reclaimable request leaves a hybrid "
                   "pageblock.",
                   MetricType::Counter);
  for (unsigned i = 0; i < FRAGD_NR_MT; i++)
    for (unsigned j = 0; j < FRAGD_NR_MT; j++)
      for (unsigned cl = 0; cl < 2; cl++) {
        const uint64_t v = f.fallbacks[i][j][cl];
        if (v == 0 && (i == j || i == FRAGD_MT_OTHER || j == FRAGD_MT_OTHER || i >= FRAGD_MT_HIGHATOMIC ||
                       j >= FRAGD_MT_HIGHATOMIC))
          continue;  // impossible or exotic pairs appear only once seen
        fb.counter({{"alloc_migratetype", migratetype_name(i)},
                    {"fallback_migratetype", migratetype_name(j)},
                    {"claimed", cl ? "true" : "false"}},
                   v);
      }
  emit(out, fb);

}

void pollution_metrics(const PollutionStats& p, Families& out) {
  FamilyBuilder blocks("fragd_polluted_pageblocks",
                       "Movable pageblocks holding pages of unmovable or reclaimable allocations that fell back "
                       "into them without claiming them: fragd's ledger, recorded from kmem:mm_page_alloc_extfrag and "
                       "released when the pageblock scan finds no unmovable page left in the block (never "
                       "released while pageblocks.scan is false).",
                       MetricType::Gauge);
  FamilyBuilder pages("fragd_polluted_pages",
                      "Pages handed out by the recorded polluting fallbacks into the blocks of "
                      "fragd_polluted_pageblocks since each was last found clean.",
                      MetricType::Gauge);
  for (const auto& n : p.summary.nodes) {
    blocks.gauge({{"node", node_label(n.node)}}, n.blocks);
    pages.gauge({{"node", node_label(n.node)}}, n.pages);
  }
  emit(out, blocks, pages);
  const PollutionCounters& c = p.counters;
  FamilyBuilder ev("fragd_pollution_events_total",
                   "Polluting fallbacks: an unmovable or reclaimable allocation served from a movable pageblock "
                   "that kept its type.",
                   MetricType::Counter);
  ev.counter({}, c.events);
  FamilyBuilder un("fragd_pollution_untracked_total",
                   "Polluting fallbacks not recorded: reason=\"map_full\" (the ledger holds one record per "
                   "pageblock of RAM, 262144 at most), reason=\"range\" (larger than a pageblock).",
                   MetricType::Counter);
  un.counter({{"reason", "map_full"}}, c.untracked_full);
  un.counter({{"reason", "range"}}, c.untracked_range);
  FamilyBuilder rel("fragd_pollution_released_pages_total",
                    "Pages of ledger records released because a pageblock scan found their block clean.",
                    MetricType::Counter);
  rel.counter({}, c.released_pages);
  FamilyBuilder relb("fragd_pollution_released_pageblocks_total",
                     "Ledger records released because a pageblock scan found no unmovable page in their block.",
                     MetricType::Counter);
  relb.counter({}, c.released_blocks);
  emit(out, ev, un, rel, relb);
}

}  // namespace fragd
