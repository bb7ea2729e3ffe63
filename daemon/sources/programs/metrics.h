// SPDX-License-Identifier: Apache-2.0
// The BPF programs themselves: attached or not, and their run statistics
// (kernel/bpf_loader.h). Families fragd_bpf_program_*.
#pragma once

#include <vector>

#include "base/family.h"
#include "kernel/bpf_loader.h"

namespace fragd {

void program_metrics(const std::vector<ProgramState>& programs, const std::vector<ProgramRunStats>& run_stats,
                     Families& out);

}  // namespace fragd
