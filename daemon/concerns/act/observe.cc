// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/observe.h"

#include <bit>
#include <map>

#include "concerns/memory/score.h"

namespace fragd {

Observation observation_of(uint64_t now_ns, const MemSnapshot* mem, const StallsSnapshot* stalls, const CompactionSnapshot* compaction, unsigned stall_order,
                           uint64_t page_kib) {
  Observation o;
  o.now_ns = now_ns;
  o.page_kib = page_kib;
  if (mem) {
    for (const auto& s : node_scores(mem->zones)) {
      NodeObservation n;
      n.node = s.node;
      n.score = s.score;
      n.total_pages = s.present_pages;
      for (const auto& z : mem->zones) {
        if (z.node != s.node) continue;
        n.free_pages += buddy_free_pages(z);
        if (n.free_blocks.size() < z.free_blocks.size()) n.free_blocks.resize(z.free_blocks.size(), 0);
        for (size_t i = 0; i < z.free_blocks.size(); i++) n.free_blocks[i] += z.free_blocks[i];
      }
      for (const auto& p : mem->hugepages) {
        if (p.node != s.node || page_kib == 0 || p.size_kib % page_kib != 0) continue;
        const uint64_t pages = p.size_kib / page_kib;
        if ((pages & (pages - 1)) != 0) continue;  // not a power of two: no order
        const auto order = static_cast<size_t>(std::countr_zero(pages));
        if (n.pool_pages.size() <= order) n.pool_pages.resize(order + 1, 0);
        n.pool_pages[order] += p.total;
      }
      o.nodes.push_back(std::move(n));
    }
    o.mem_available_kib = mem->mem_available_kib;
    std::map<uint64_t, uint64_t> global;
    for (const auto& p : mem->hugepages) {
      o.pools.push_back({p.node, p.size_kib, p.total});
      global[p.size_kib] += p.total;
    }
    for (const auto& [size, total] : global) o.pools.push_back({-1, size, total});
    if (auto it = mem->vm_sysctls.find("defrag_mode"); it != mem->vm_sysctls.end())
      o.guard.defrag_mode = static_cast<unsigned>(it->second);
    if (mem->memory_pressure && mem->memory_pressure->full_us)
      o.guard.pressure_full_s = static_cast<double>(*mem->memory_pressure->full_us) / 1e6;
  }
  o.guard.now_ns = now_ns;
  if (stalls) {
    // The rate check counts entries into direct compaction and reclaim, exact in every
    // bpf.allocations mode; the p99 check reads the stall times of counted allocations.
    for (unsigned ord = stall_order; ord < FRAGD_NR_ORDERS; ord++) {
      for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++) o.stall_hist += stalls->stall[ord][r];
      for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) o.stalls_total += stalls->alloc.direct_entries[ord][p];
    }
    for (unsigned ord = 0; ord < FRAGD_NR_ORDERS; ord++) o.guard.atomic_failures += stalls->alloc.failures[ord][0];
  }
  if (compaction) {
    o.fragd_compaction_ns = compaction->compaction_hist[FRAGD_TRIGGER_FRAGD].sum_ns;
    o.proactive_compaction_ns = compaction->compaction_hist[FRAGD_TRIGGER_PROACTIVE].sum_ns;
  }
  return o;
}

void add_forecast(Observation& o, const std::vector<NodeForecast>& forecast) {
  for (NodeObservation& n : o.nodes)
    for (const NodeForecast& f : forecast)
      if (f.node == n.node && f.ready) n.blocks_per_second = f.blocks_per_second;
}

}  // namespace fragd
