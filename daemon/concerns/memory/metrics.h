// SPDX-License-Identifier: Apache-2.0
// Free memory by zone and order (/proc/buddyinfo, zoneinfo, pagetypeinfo) and
// the kernel's fragmentation scores computed from it. Families
// fragd_zone_fragmentation_score_percent, fragd_node_fragmentation_score_percent, fragd_free_blocks,
// fragd_unusable_free_index_ratio, fragd_pageblocks, fragd_zone_free_pages, the kernel's own
// fragd_zone_free_pageblock_pages, the compaction sysctls, fragd_free_page_reporting_order, and the
// pressure beside allocation stalls: reclaim's pages scanned and reclaimed (/proc/vmstat) and PSI's
// memory totals (fragd_memory_pressure_seconds_total).
#pragma once

#include "base/family.h"
#include "kernel/procfs.h"

namespace fragd {

// Free blocks by the plan's free-list order groups, the unusable index at each group's first
// order; per zone with metrics.detail `zones`, per node (zone="all") otherwise.
void memory_metrics(const MemSnapshot& mem, const SeriesPlan& plan, Families& out);

}  // namespace fragd
