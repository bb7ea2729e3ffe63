// SPDX-License-Identifier: Apache-2.0
#include "concerns/thp/metrics.h"

#include <algorithm>
#include <string_view>

namespace fragd {

namespace {

// A stats file's value, or nothing when this kernel does not have that file.
const uint64_t* stat_of(const MthpStats& m, const std::string& name) {
  auto it = m.stats.find(name);
  return it == m.stats.end() ? nullptr : &it->second;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

void thp_metrics(const MemSnapshot& mem, const SeriesPlan& plan, Families& out) {
  FamilyBuilder alloc("fragd_thp_allocations_total",
                      "Transparent huge pages of this size allocated (per-size statistics, Linux 6.9+): "
                      "path=\"anon_fault\" at an anonymous page fault, \"shmem\" for shmem/tmpfs, \"swpin\" swapped "
                      "in whole, \"collapse\" by khugepaged to collapse smaller pages into one (Linux 7.2+).",
                      MetricType::Counter);
  FamilyBuilder fall("fragd_thp_fallbacks_total",
                     "Transparent huge pages of this size that were wanted but fell back to smaller pages: "
                     "cause=\"charge\" the memory cgroup refused the charge, \"alloc\" no page of that size could be "
                     "had (the fallback minus the charge failures); path=\"collapse\": khugepaged's allocations that "
                     "failed (Linux 7.2+), the range stays in smaller pages.",
                     MetricType::Counter);
  FamilyBuilder split("fragd_thp_splits_total",
                      "Huge pages of this size split into smaller ones: result=\"split\" done, \"failed\" tried and "
                      "failed, \"deferred\" queued for a later split (partly unmapped).",
                      MetricType::Counter);
  FamilyBuilder swp("fragd_thp_swapouts_total",
                    "Huge pages of this size swapped out: how=\"swap\" whole, \"zswap\" whole to zswap, "
                    "\"fallback\" split first.",
                    MetricType::Counter);
  FamilyBuilder anon("fragd_thp_anon_folios", "Anonymous huge pages of this size in use now (nr_anon).",
                     MetricType::Gauge);
  FamilyBuilder part("fragd_thp_anon_partially_mapped_folios",
                     "Anonymous huge pages of this size partly unmapped and queued for a split "
                     "(nr_anon_partially_mapped).",
                     MetricType::Gauge);
  FamilyBuilder exceed("fragd_thp_collapse_exceeded_total",
                       "Ranges khugepaged did not collapse into a huge page of this size because they held more "
                       "PTEs of a kind than it allows (Linux 7.2+; absent before): pte=\"none\" empty ones beyond "
                       "max_ptes_none, \"swap\" swapped-out ones, \"shared\" ones shared with another process.",
                       MetricType::Counter);
  struct Path {
    const char *path, *alloc, *fallback, *charge;
  };
  // A collapse's allocation failure is counted alone (no charge counterpart): cause "alloc".
  static const Path kPaths[] = {{"anon_fault", "anon_fault_alloc", "anon_fault_fallback", "anon_fault_fallback_charge"},
                                {"shmem", "shmem_alloc", "shmem_fallback", "shmem_fallback_charge"},
                                {"swpin", "swpin", "swpin_fallback", "swpin_fallback_charge"},
                                {"collapse", "collapse_alloc", "collapse_alloc_failed", nullptr}};
  uint64_t pmd_kib = 0;
  for (const MthpStats& m : mem.mthp) pmd_kib = std::max(pmd_kib, m.size_kib);
  for (const MthpStats& m : mem.mthp) {
    if (!plan.has(Detail::ThpSizes) && m.size_kib != pmd_kib) continue;
    const std::string size = std::to_string(m.size_kib) + "kB";
    for (const Path& p : kPaths) {
      if (const uint64_t* v = stat_of(m, p.alloc)) alloc.counter({{"size", size}, {"path", p.path}}, *v);
      const uint64_t* fb = stat_of(m, p.fallback);
      const uint64_t* ch = p.charge ? stat_of(m, p.charge) : nullptr;
      if (!fb) continue;
      // The kernel counts a charge failure in both files; read apart they may be one event out
      // of step, so "alloc" never goes below 0.
      const uint64_t charge = ch ? *ch : 0;
      fall.counter({{"size", size}, {"path", p.path}, {"cause", "alloc"}}, *fb > charge ? *fb - charge : 0);
      if (ch) fall.counter({{"size", size}, {"path", p.path}, {"cause", "charge"}}, *ch);
    }
    static const std::pair<const char*, const char*> kSplits[] = {
        {"split", "split"}, {"failed", "split_failed"}, {"deferred", "split_deferred"}};
    for (const auto& [result, file] : kSplits)
      if (const uint64_t* v = stat_of(m, file)) split.counter({{"size", size}, {"result", result}}, *v);
    static const std::pair<const char*, const char*> kSwap[] = {
        {"swap", "swpout"}, {"zswap", "zswpout"}, {"fallback", "swpout_fallback"}};
    for (const auto& [how, file] : kSwap)
      if (const uint64_t* v = stat_of(m, file)) swp.counter({{"size", size}, {"how", how}}, *v);
    static const std::pair<const char*, const char*> kExceed[] = {{"none", "collapse_exceed_none_pte"},
                                                                  {"swap", "collapse_exceed_swap_pte"},
                                                                  {"shared", "collapse_exceed_shared_pte"}};
    for (const auto& [pte, file] : kExceed)
      if (const uint64_t* v = stat_of(m, file)) exceed.counter({{"size", size}, {"pte", pte}}, *v);
    if (const uint64_t* v = stat_of(m, "nr_anon")) anon.gauge({{"size", size}}, *v);
    if (const uint64_t* v = stat_of(m, "nr_anon_partially_mapped")) part.gauge({{"size", size}}, *v);
  }
  emit(out, alloc, fall, split, swp, exceed, anon, part);
  if (!plan.has(Detail::KernelCounters)) return;

  FamilyBuilder thp("fragd_thp_vmstat_total",
                    "The kernel's THP event counters (/proc/vmstat thp_*: PMD-sized pages, 2 MiB on x86-64, and the zero page), "
                    "by counter name.",
                    MetricType::Counter);
  FamilyBuilder cmp("fragd_compaction_vmstat_total",
                    "The kernel's compaction counters (/proc/vmstat compact_*: stalls, failures, successes, pages "
                    "scanned and isolated, kcompactd wake-ups), by counter name.",
                    MetricType::Counter);
  for (const auto& [name, v] : mem.vmstat) {
    if (starts_with(name, "thp_")) thp.counter({{"counter", name}}, v);
    else if (starts_with(name, "compact_")) cmp.counter({{"counter", name}}, v);
  }
  emit(out, thp, cmp);
}

}  // namespace fragd
