// SPDX-License-Identifier: Apache-2.0
// What the engine decides on (Observation, concerns/act/engine.h), built from a tick's snapshots: each
// node's score, free pages and free blocks by order; the hugepage pools by node and summed;
// stall entries and times of the demand trigger's orders; compaction time by trigger.
#pragma once

#include <cstdint>

#include "concerns/act/engine.h"
#include "concerns/programs/reader.h"
#include "kernel/procfs.h"
#include "concerns/memory/forecast.h"

namespace fragd {

// `mem`, `stalls` (the stalls concern's maps) or `compaction` (the compaction concern's) null:
// that part is left empty. Stalls are summed over orders from `stall_order` (the larger of
// compaction.demand.min_order and min_order) up.
// `page_kib`: the base page size, which gives each hugetlb pool's order (NodeObservation::pool_pages).
Observation observation_of(uint64_t now_ns, const MemSnapshot* mem, const StallsSnapshot* stalls,
                           const CompactionSnapshot* compaction, unsigned stall_order, uint64_t page_kib);
// Each node's free 2 MiB blocks gained per second, from the forecasts that are ready.
void add_forecast(Observation& o, const std::vector<NodeForecast>& forecast);

}  // namespace fragd
