// SPDX-License-Identifier: Apache-2.0
#include "concerns/compaction/maps.h"

#include <algorithm>
#include <cstring>

#include "kernel/bpf_maps.h"

namespace fragd {

Result<compaction_stats> read_compaction_stats(const CompactionMapFds& maps, int ncpus) {
  return read_percpu_value<compaction_stats>(maps.compaction_stats, ncpus, "compaction_stats");
}

Result<std::array<LatencyHist, FRAGD_NR_TRIGGERS>> read_compaction_hists(const CompactionMapFds& maps, int ncpus) {
  std::array<LatencyHist, FRAGD_NR_TRIGGERS> out;
  fragd_hist h;
  for (uint32_t t = 0; t < FRAGD_NR_TRIGGERS; t++) {
    if (auto r = read_percpu(maps.compaction_hist, t, ncpus, &h, "compaction_hist"); !r) return r.error();
    out[t] = hist_from_bpf(h);
  }
  return out;
}

Result<void> read_compaction(const CompactionMapFds& maps, CompactionSnapshot& s, HistWatch& watch) {
  static const int ncpus = possible_cpus();
  auto fail = [&watch](const Error& e) -> Result<void> {
    watch.again();
    return e;
  };
  auto stats = read_compaction_stats(maps, ncpus);
  if (!stats) return fail(stats.error());
  s.compaction = *stats;
  uint64_t runs = 0;
  for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++)
    for (unsigned st = 0; st < FRAGD_NR_CSTATUS; st++) runs += s.compaction.runs[t][st];
  if (watch.due(runs)) {
    auto hist = read_compaction_hists(maps, ncpus);
    if (!hist) return fail(hist.error());
    s.compaction_hist = std::move(*hist);
  }
  if (maps.cma_traced) {
    auto cma = read_cma(maps);
    if (!cma) return fail(cma.error());
    s.cma_traced = true;
    s.cma = std::move(cma->areas);
    s.cma_lost = cma->lost;
  }
  return {};
}

Result<CmaReading> read_cma(const CompactionMapFds& maps) {
  CmaReading out;
  std::vector<cma_area_key> keys;
  std::vector<cma_area_stats> vals;
  if (auto r = read_hash(maps.cma_areas, FRAGD_CMA_AREAS, keys, vals, "cma_areas"); !r) return r.error();
  for (size_t i = 0; i < keys.size(); i++) {
    CmaArea a;
    a.name.assign(keys[i].name, strnlen(keys[i].name, sizeof(keys[i].name)));
    for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++) {
      a.hist[r] = hist_from_bpf(vals[i].hist[r]);
      a.pages[r] = vals[i].pages[r];
    }
    a.busy_retries = vals[i].busy_retries;
    a.unmatched = vals[i].unmatched;
    out.areas.push_back(std::move(a));
  }
  std::sort(out.areas.begin(), out.areas.end(), [](const CmaArea& x, const CmaArea& y) { return x.name < y.name; });
  const uint32_t zero = 0;
  if (auto r = map_lookup(maps.cma_misc, &zero, &out.lost, "cma_misc", "0"); !r) return r.error();
  return out;
}

const char* trigger_name(unsigned t) {
  static const char* n[] = {"direct", "kcompactd", "proactive", "fragd", "manual"};
  return t < FRAGD_NR_TRIGGERS ? n[t] : "unknown";
}
const char* cstatus_name(unsigned s) {
  static const char* n[] = {"success", "complete", "partial_skipped", "contended", "other"};
  return s < FRAGD_NR_CSTATUS ? n[s] : "unknown";
}

}  // namespace fragd
