// SPDX-License-Identifier: Apache-2.0
// Migratetype fallbacks (bpf/pollution.bpf.c) and the pollution ledger they
// feed. Families fragd_fallback_total, fragd_polluted_*, fragd_pollution_*.
#pragma once

#include "base/family.h"
#include "concerns/pollution/maps.h"
#include "concerns/pollution/pollution.h"

namespace fragd {

// Pollution tracking for the metrics; absent when off.
struct PollutionStats {
  PollutionCounters counters;
  PollutionSummary summary;
};

void fallback_metrics(const fallback_stats& f, Families& out);
void pollution_metrics(const PollutionStats& p, Families& out);

}  // namespace fragd
