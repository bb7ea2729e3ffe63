// SPDX-License-Identifier: Apache-2.0
#include "concerns/stalls/maps.h"

#include "kernel/bpf_maps.h"

namespace fragd {

Result<alloc_stats> read_alloc_stats(const StallsMapFds& maps, int ncpus) {
  return read_percpu_value<alloc_stats>(maps.alloc_stats, ncpus, "alloc_stats");
}

Result<StallHists> read_stall_hists(const StallsMapFds& maps, int ncpus) {
  StallHists out;
  fragd_hist h;
  for (uint32_t o = 0; o < FRAGD_NR_ORDERS; o++)
    for (uint32_t res = 0; res < FRAGD_NR_RESULTS; res++) {
      if (auto r = read_percpu(maps.stall_hist, FRAGD_STALL_HIST_KEY(o, res), ncpus, &h, "stall_hist"); !r)
        return r.error();
      out[o][res] = hist_from_bpf(h);
    }
  return out;
}

Result<void> read_stalls(const StallsMapFds& maps, StallsSnapshot& s, HistWatch& watch) {
  static const int ncpus = possible_cpus();
  auto alloc = read_alloc_stats(maps, ncpus);
  if (!alloc) {
    watch.again();
    return alloc.error();
  }
  s.alloc = *alloc;
  uint64_t ends = 0;
  for (unsigned o = 0; o < FRAGD_NR_ORDERS; o++)
    ends += s.alloc.allocs[o][FRAGD_OUTCOME_STALLED] + s.alloc.allocs[o][FRAGD_OUTCOME_FAILED];
  if (!watch.due(ends)) return {};
  auto hists = read_stall_hists(maps, ncpus);
  if (!hists) {
    watch.again();
    return hists.error();
  }
  s.stall = std::move(*hists);
  return {};
}

const char* outcome_name(unsigned o) {
  static const char* n[] = {"fast", "stalled", "failed"};
  return o < FRAGD_NR_OUTCOMES ? n[o] : "unknown";
}
const char* result_name(unsigned r) { return r == FRAGD_RESULT_SUCCESS ? "success" : "failure"; }
const char* phase_name(unsigned p) { return p == FRAGD_PHASE_COMPACTION ? "compaction" : "reclaim"; }

}  // namespace fragd
