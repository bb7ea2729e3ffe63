// SPDX-License-Identifier: Apache-2.0
// The stalls object's maps (bpf/stalls.bpf.c, include/stalls.h) read into plain totals: the
// allocation counters and the stall histograms; and the names of the outcomes, results and
// phases those maps count by.
#pragma once

#include <array>
#include <cstdint>

#include "base/histogram.h"
#include "base/result.h"
#include "stalls.h"

namespace fragd {

struct StallsMapFds {
  int alloc_stats = -1;  // PERCPU_ARRAY, one struct alloc_stats
  int stall_hist = -1;   // PERCPU_ARRAY, FRAGD_STALL_HIST_KEY(order, result) -> struct fragd_hist
};

using StallHists = std::array<std::array<LatencyHist, FRAGD_NR_RESULTS>, FRAGD_NR_ORDERS>;  // [order][result]

Result<alloc_stats> read_alloc_stats(const StallsMapFds& maps, int ncpus);
Result<StallHists> read_stall_hists(const StallsMapFds& maps, int ncpus);

// What the stalls concern reads at a tick and hands the others in the Tick.
struct StallsSnapshot {
  alloc_stats alloc{};
  StallHists stall;  // [order][result]
};
// A tick's read into the last one, `s`. A stall's end counts its allocation stalled or failed in
// alloc_stats, then adds to its histogram: the histograms are read only when `watch` says (a
// quiet host's tick reads the counters, not the 22 histograms). On an error `s` holds what was
// read before it and the next read reads the histograms.
Result<void> read_stalls(const StallsMapFds& maps, StallsSnapshot& s, HistWatch& watch);

const char* outcome_name(unsigned o);
const char* result_name(unsigned r);
const char* phase_name(unsigned p);

}  // namespace fragd
