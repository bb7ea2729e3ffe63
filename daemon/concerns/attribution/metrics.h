// SPDX-License-Identifier: Apache-2.0
// The attribution's families: fragd_stalls_total / fragd_stall_seconds_total by
// (order, consumer), fragd_cgroup_stalls_total / fragd_cgroup_stall_seconds_total
// by cgroup (top K + "other"), fragd_stall_callsite_seconds_total by call site
// (top K + "other"), fragd_attribution_map_full_total{map}, fragd_cgroups_removed_total.
#pragma once

#include "base/family.h"
#include "concerns/attribution/attribution.h"

namespace fragd {

// Stalls by consumer counted in the plan's traced order groups.
void attribution_metrics(const AttributionView& v, const SeriesPlan& plan, Families& out);

}  // namespace fragd
