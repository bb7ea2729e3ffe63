// SPDX-License-Identifier: Apache-2.0
#include "concerns/programs/metrics.h"

#include <algorithm>

namespace fragd {

void program_metrics(const std::vector<ProgramState>& programs, const std::vector<ProgramRunStats>& run_stats,
                     const SeriesPlan& plan, Families& out) {
  FamilyBuilder f("fragd_bpf_program_attached",
                  "1 when the BPF program is attached to its tracepoint, 0 when it is not (its feature is off).",
                  MetricType::Gauge);
  for (const auto& p : programs) f.gauge({{"program", p.name}, {"tracepoint", p.tracepoint}}, p.attached);
  emit(out, f);
  // ebpf_exporter's convention: run counts and time accrue only while BPF run-time stats are on
  // (kernel.bpf_stats_enabled=1, or a BPF_ENABLE_STATS fd held, as `fragctl cost` does).
  FamilyBuilder runs("fragd_bpf_program_runs_total",
                     "Runs of each BPF program counted while the kernel's BPF run-time statistics were on "
                     "(kernel.bpf_stats_enabled, or `fragctl cost`); 0 otherwise.",
                     MetricType::Counter);
  FamilyBuilder secs("fragd_bpf_program_run_seconds_total",
                     "Run time of each BPF program while the kernel's BPF run-time statistics were on.",
                     MetricType::Counter);
  FamilyBuilder miss("fragd_bpf_program_recursion_misses_total",
                     "Runs of each BPF program the kernel skipped because another BPF program was running on "
                     "that CPU (their events are lost); program=\"all\": every program's, unless metrics.detail "
                     "lists programs.",
                     MetricType::Counter);
  if (!plan.has(Detail::Programs)) {
    double misses = 0;
    for (const auto& r : run_stats) misses += r.recursion_misses;
    miss.counter({{"program", "all"}}, misses);
    emit(out, miss);
    return;
  }
  for (const auto& r : run_stats) {
    runs.counter({{"program", r.name}}, r.run_cnt);
    secs.counter({{"program", r.name}}, r.run_time_ns / 1e9);
    miss.counter({{"program", r.name}}, r.recursion_misses);
  }
  emit(out, runs, secs, miss);
}

void map_memory_metrics(const std::vector<MapMemory>& maps, const SeriesPlan& plan, Families& out) {
  if (maps.empty()) return;
  FamilyBuilder f("fragd_bpf_map_memory_bytes",
                  "Kernel memory of fragd's BPF maps as the kernel accounts it (the memlock of each map's "
                  "fdinfo, as `bpftool map show` prints it), by object; map=\"all\": the object's maps summed, "
                  "unless metrics.detail lists programs (then one series per map; map=\"globals\": the object's "
                  "global variables). Fixed at load: the pollution ledger (polluted_blocks) is sized from the "
                  "physical memory, the per-CPU maps by the possible CPUs.",
                  MetricType::Gauge);
  if (plan.has(Detail::Programs)) {
    for (const auto& m : maps) f.gauge({{"object", m.object}, {"map", m.map}}, static_cast<double>(m.bytes));
  } else {
    // Objects in the order their first map comes, each once.
    std::vector<std::pair<std::string, double>> objects;
    for (const auto& m : maps) {
      auto it = std::find_if(objects.begin(), objects.end(), [&](const auto& o) { return o.first == m.object; });
      if (it == objects.end()) it = objects.insert(objects.end(), {m.object, 0.0});
      it->second += static_cast<double>(m.bytes);
    }
    for (const auto& [object, bytes] : objects) f.gauge({{"object", object}, {"map", "all"}}, bytes);
  }
  emit(out, f);
}

}  // namespace fragd
