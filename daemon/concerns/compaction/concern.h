// SPDX-License-Identifier: Apache-2.0
// Compaction: the zone compaction runs bpf/compaction.bpf.c records (by trigger and status,
// their durations and pages moved), as the fragd_compaction_* families and the status answer's
// compaction part. It reads nothing of its own: the maps come in the Tick the Daemon read.
#pragma once

#include "concerns/concern.h"

namespace fragd {

class CompactionConcern : public Concern {
 public:
  void status(StatusReply& s, const Tick& last) const override;
  void metrics(const SeriesPlan& plan, const Tick& last, Families& out) override;
};

}  // namespace fragd
