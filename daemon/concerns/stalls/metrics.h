// SPDX-License-Identifier: Apache-2.0
// Allocation stalls (bpf/stalls.bpf.c): counted allocations by outcome, stall
// times, direct compaction and reclaim entries and time, allocation counting
// (bpf.allocations) and the slow-stall event stream. Families fragd_alloc_*,
// fragd_direct_stall_entries_total, fragd_events_dropped_total, fragd_slow_stall_events_total,
// fragd_trace_events_unsent_total.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/family.h"
#include "concerns/stalls/maps.h"

namespace fragd {

// Allocation counting (bpf.allocations) and the slow-stall event stream, as the daemon keeps them.
struct CountingStats {
  // The mm_page_alloc program attached now, for how long in all.
  std::string allocations_mode = "exact";
  bool counting = true;
  double counting_seconds = 0;
  std::map<std::string, uint64_t> counting_switches;  // "on" / "off" -> switches
  uint64_t trace_events = 0;         // slow-stall events read from the ring buffer
  uint64_t trace_events_unsent = 0;  // not delivered to a `fragctl trace` client that lagged
};

void counting_metrics(const CountingStats& self, Families& out);
// By the plan's traced order groups; stall times by result only with detail `results`.
void stall_metrics(const SeriesPlan& plan, const StallsSnapshot& maps, const CountingStats& self, Families& out);
void trace_metrics(const CountingStats& self, Families& out);

}  // namespace fragd
