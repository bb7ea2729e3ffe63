// SPDX-License-Identifier: Apache-2.0
// The BPF programs themselves: attached or not, and their run statistics
// (kernel/bpf_object.h), and what their maps take. Families fragd_bpf_program_*, fragd_bpf_map_*.
#pragma once

#include <vector>

#include "base/family.h"
#include "kernel/bpf_memory.h"
#include "kernel/bpf_object.h"

namespace fragd {

// Run counts and time by program with metrics.detail `programs` (absent otherwise: they count
// only while the kernel's BPF statistics are on); recursion misses by program with it, as one
// series (program="all") without.
void program_metrics(const std::vector<ProgramState>& programs, const std::vector<ProgramRunStats>& run_stats,
                     const SeriesPlan& plan, Families& out);

// fragd_bpf_map_memory_bytes: one series per object (map="all"), per map with metrics.detail
// `programs` (BpfPrograms::map_memory); absent when empty.
void map_memory_metrics(const std::vector<MapMemory>& maps, const SeriesPlan& plan, Families& out);

}  // namespace fragd
