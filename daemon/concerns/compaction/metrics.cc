// SPDX-License-Identifier: Apache-2.0
#include "concerns/compaction/metrics.h"

#include "concerns/stalls/maps.h"  // result_name: a CMA allocation succeeds or fails as a stall does

namespace fragd {

void compaction_metrics(const SeriesPlan& plan, const CompactionSnapshot& bpf, Families& out) {
  const auto& c = bpf.compaction;
  FamilyBuilder runs("fragd_compaction_runs_total",
                     "Zone compaction runs (mm_compaction_begin/end) by who ran them and how they ended "
                     "(status=\"all\": every status, unless metrics.detail lists statuses).",
                     MetricType::Counter);
  FamilyBuilder dur("fragd_compaction_duration_seconds", "Duration of zone compaction runs, by trigger.",
                    MetricType::Histogram);
  FamilyBuilder mig("fragd_compaction_pages_migrated_total", "Pages moved by compaction, by trigger.",
                    MetricType::Counter);
  FamilyBuilder fail("fragd_compaction_pages_failed_total", "Pages compaction failed to move, by trigger.",
                     MetricType::Counter);
  for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) {
    if (plan.has(Detail::Statuses)) {
      for (unsigned s = 0; s < FRAGD_NR_CSTATUS; s++)
        runs.counter({{"trigger", trigger_name(t)}, {"status", cstatus_name(s)}}, c.runs[t][s]);
    } else {
      double n = 0;
      for (unsigned s = 0; s < FRAGD_NR_CSTATUS; s++) n += c.runs[t][s];
      runs.counter({{"trigger", trigger_name(t)}, {"status", "all"}}, n);
    }
    dur.histogram({{"trigger", trigger_name(t)}}, bpf.compaction_hist[t], plan.buckets, HistogramUse::CountAndSum);
    mig.counter({{"trigger", trigger_name(t)}}, c.pages_migrated[t]);
    fail.counter({{"trigger", trigger_name(t)}}, c.pages_failed[t]);
  }
  emit(out, runs, dur, mig, fail);

  single(out, "fragd_compaction_events_unmatched_total",
         "Zone compaction runs whose start was not seen (under way when fragd attached), once each at "
         "their end; their pages are counted by the trigger their end names, they are not in "
         "fragd_compaction_runs_total nor timed.",
         MetricType::Counter, c.runs_unmatched);

  // CMA allocations: absent where the kernel has no cma tracepoints (no CONFIG_CMA).
  if (!bpf.cma_traced) return;
  FamilyBuilder cma("fragd_cma_alloc_seconds",
                    "Time of CMA allocations (cma_alloc: cma:cma_alloc_start to cma_alloc_finish in the same "
                    "task), by CMA area (the kernel's name, as in /sys/kernel/mm/cma) and result (failure: no "
                    "page). Absent on kernels without CMA.",
                    MetricType::Histogram);
  FamilyBuilder pages("fragd_cma_alloc_pages_total",
                      "Pages asked for by CMA allocations, by area and result.", MetricType::Counter);
  FamilyBuilder busy("fragd_cma_alloc_busy_retries_total",
                     "Busy ranges a CMA allocation stepped over (cma:cma_alloc_busy_retry: a page in the range "
                     "could not be migrated or isolated, the next range was tried), by area.",
                     MetricType::Counter);
  FamilyBuilder unmatched("fragd_cma_alloc_unmatched_total",
                          "CMA allocations whose start was not seen (under way when fragd attached, or not "
                          "recorded: fragd_cma_events_lost_total), by area: counted in the pages, not timed.",
                          MetricType::Counter);
  for (const auto& a : bpf.cma) {
    for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++) {
      cma.histogram({{"area", a.name}, {"result", result_name(r)}}, a.hist[r], plan.buckets, HistogramUse::Quantiles);
      pages.counter({{"area", a.name}, {"result", result_name(r)}}, a.pages[r]);
    }
    busy.counter({{"area", a.name}}, a.busy_retries);
    unmatched.counter({{"area", a.name}}, a.unmatched);
  }
  emit(out, cma, pages, busy, unmatched);
  FamilyBuilder lost("fragd_cma_events_lost_total",
                     "CMA events fragd could not count, by reason: areas_full (an area beyond the 64 fragd "
                     "follows), start_not_recorded (the table of allocations under way was full).",
                     MetricType::Counter);
  lost.counter({{"reason", "areas_full"}}, bpf.cma_lost.areas_full);
  lost.counter({{"reason", "start_not_recorded"}}, bpf.cma_lost.open_lost);
  emit(out, lost);
}

}  // namespace fragd
