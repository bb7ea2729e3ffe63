// SPDX-License-Identifier: Apache-2.0
// Zone compaction runs (bpf/compaction.bpf.c): by trigger and status, their
// durations and pages moved. Families fragd_compaction_*.
#pragma once

#include "base/family.h"
#include "base/series.h"
#include "concerns/compaction/maps.h"

namespace fragd {

// Runs by status only with metrics.detail `statuses`; durations as count and sum alone with
// coarse buckets; CMA times with the buckets their quantiles need.
void compaction_metrics(const SeriesPlan& plan, const CompactionSnapshot& bpf, Families& out);

}  // namespace fragd
