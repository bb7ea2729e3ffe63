// SPDX-License-Identifier: Apache-2.0
#include "concerns/programs/reader.h"

#include "kernel/bpf_maps.h"

namespace fragd {

BpfReader::BpfReader(const BpfMapFds& maps) : maps_(maps), ncpus_(possible_cpus()) {}


namespace {


uint64_t compaction_runs(const compaction_stats& c) {
  uint64_t n = 0;
  for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++)
    for (unsigned st = 0; st < FRAGD_NR_CSTATUS; st++) n += c.runs[t][st];
  return n;
}

}  // namespace

Result<void> BpfReader::read_into(BpfSnapshot& s, HistCounts& seen) const {
  auto fail = [&seen](const Error& e) -> Result<void> {
    seen.runs.again();
    return e;
  };
  auto compaction = fragd::read_compaction_stats(maps_.compaction, ncpus_);
  if (!compaction) return fail(compaction.error());
  s.compaction = *compaction;
  if (seen.runs.due(compaction_runs(s.compaction))) {
    auto hist = read_compaction_hists(maps_.compaction, ncpus_);
    if (!hist) return fail(hist.error());
    s.compaction_hist = std::move(*hist);
  }
  auto fallback = read_fallback_stats(maps_.pollution, ncpus_);
  if (!fallback) return fail(fallback.error());
  s.fallback = *fallback;
  if (maps_.compaction.cma_traced) {
    auto cma = read_cma(maps_.compaction);
    if (!cma) return fail(cma.error());
    s.cma_traced = true;
    s.cma = std::move(cma->areas);
    s.cma_lost = cma->lost;
  }
  return {};
}

}  // namespace fragd
