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

const char* outcome_name(unsigned o);
const char* result_name(unsigned r);
const char* phase_name(unsigned p);

}  // namespace fragd
