// SPDX-License-Identifier: Apache-2.0
#include "sources/programs/reader.h"

#include "kernel/bpf_maps.h"

namespace fragd {

BpfReader::BpfReader(const BpfMapFds& maps) : maps_(maps), ncpus_(possible_cpus()) {}

Result<BpfSnapshot> BpfReader::read() const {
  BpfSnapshot s;
  auto alloc = fragd::read_alloc_stats(maps_.stalls, ncpus_);
  if (!alloc) return alloc.error();
  s.alloc = *alloc;
  auto compaction = read_compaction(maps_.compaction, ncpus_);
  if (!compaction) return compaction.error();
  s.compaction = compaction->stats;
  s.compaction_hist = std::move(compaction->hist);
  auto fallback = read_fallback_stats(maps_.pollution, ncpus_);
  if (!fallback) return fallback.error();
  s.fallback = *fallback;
  auto stall = read_stall_hists(maps_.stalls, ncpus_);
  if (!stall) return stall.error();
  s.stall = std::move(*stall);
  if (maps_.compaction.cma_traced) {
    auto cma = read_cma(maps_.compaction);
    if (!cma) return cma.error();
    s.cma_traced = true;
    s.cma = std::move(cma->areas);
    s.cma_lost = cma->lost;
  }
  return s;
}

}  // namespace fragd
