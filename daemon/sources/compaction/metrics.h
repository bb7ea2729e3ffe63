// SPDX-License-Identifier: Apache-2.0
// Zone compaction runs (bpf/compaction.bpf.c): by trigger and status, their
// durations and pages moved. Families fragd_compaction_*.
#pragma once

#include "base/family.h"
#include "kernel/bpf_maps.h"

namespace fragd {

void compaction_metrics(const BpfSnapshot& bpf, Families& out);

}  // namespace fragd
