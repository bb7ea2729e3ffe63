#include "sources/compaction/metrics.h"

namespace fragd {

void compaction_metrics(const BpfSnapshot& bpf, Families& out) {
  const auto& c = bpf.compaction;
  FamilyBuilder runs("fragd_compaction_runs_total",
                     "Zone compaction runs (mm_compaction_begin/end) by who ran them and how they ended.",
                     MetricType::Counter);
  FamilyBuilder dur("fragd_compaction_duration_seconds", "Duration of zone compaction runs, by trigger.",
                    MetricType::Histogram);
  FamilyBuilder mig("fragd_compaction_pages_migrated_total", "Pages moved by compaction, by trigger.",
                    MetricType::Counter);
  FamilyBuilder fail("fragd_compaction_pages_failed_total", "Pages compaction failed to move, by trigger.",
                     MetricType::Counter);
  for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) {
    for (unsigned s = 0; s < FRAGD_NR_CSTATUS; s++)
      runs.counter({{"trigger", trigger_name(t)}, {"status", cstatus_name(s)}}, c.runs[t][s]);
    dur.histogram({{"trigger", trigger_name(t)}}, bpf.compaction_hist[t]);
    mig.counter({{"trigger", trigger_name(t)}}, c.pages_migrated[t]);
    fail.counter({{"trigger", trigger_name(t)}}, c.pages_failed[t]);
  }
  emit(out, runs, dur, mig, fail);

  single(out, "fragd_compaction_events_unmatched_total",
         "Zone compaction runs whose start was not seen (under way when fragd attached), once each at "
         "their end; their pages are counted by the trigger their end names, they are not in "
         "fragd_compaction_runs_total nor timed.",
         MetricType::Counter, c.runs_unmatched);
}

}  // namespace fragd
