// SPDX-License-Identifier: Apache-2.0
#include "concerns/compaction/concern.h"

#include "concerns/compaction/metrics.h"

namespace fragd {

void CompactionConcern::tick(const Tick&) {
  read_.tick(sh_.warn, [this](CompactionSnapshot& s, HistWatch& w) { return bpf_.read(bpf_.maps, s, w); });
}

// Each trigger's runs (every status), pages migrated and failed, and time in compaction.
void CompactionConcern::status(StatusReply& s, const Tick&) const {
  const CompactionSnapshot* b = read_.get();
  if (!b) return;
  s.compaction.emplace();
  for (unsigned t = 0; t < FRAGD_NR_TRIGGERS; t++) {
    uint64_t runs = 0;
    for (unsigned st = 0; st < FRAGD_NR_CSTATUS; st++) runs += b->compaction.runs[t][st];
    s.compaction->push_back({trigger_name(t), runs, b->compaction.pages_migrated[t], b->compaction.pages_failed[t],
                             b->compaction_hist[t].sum_ns / 1e9});
  }
}

void CompactionConcern::metrics(const SeriesPlan& plan, const Tick&, Families& out) {
  families(plan, read_.get(), out);
}

void CompactionConcern::families(const SeriesPlan& plan, const CompactionSnapshot* maps, Families& out) {
  if (maps) compaction_metrics(plan, *maps, out);
}

}  // namespace fragd
