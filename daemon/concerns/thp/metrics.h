// SPDX-License-Identifier: Apache-2.0
// Transparent huge pages as the kernel counts them: per size (Linux 6.9+ per-size
// statistics, hugepages-<size>kB/stats) allocations, fallbacks, splits, swap-outs
// and anon folios in use, and the thp_* and compact_* counters of /proc/vmstat
// that node_exporter leaves out. Families fragd_thp_allocations_total,
// fragd_thp_fallbacks_total, fragd_thp_splits_total, fragd_thp_swapouts_total,
// fragd_thp_anon_folios, fragd_thp_anon_partially_mapped_folios,
// fragd_thp_vmstat_total, fragd_compaction_vmstat_total. A per-size family is
// absent (not zero) where the kernel lacks the statistic.
#pragma once

#include "base/family.h"
#include "kernel/procfs.h"

namespace fragd {

// The per-size families for the PMD size (the largest mTHP size: 2048 kB on x86-64) alone,
// every size with metrics.detail `thp_sizes`; the vmstat counters with `kernel_counters`.
void thp_metrics(const MemSnapshot& mem, const SeriesPlan& plan, Families& out);

}  // namespace fragd
