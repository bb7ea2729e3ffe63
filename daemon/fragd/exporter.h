// SPDX-License-Identifier: Apache-2.0
// The exporter's families: when a scrape asks for them (MetricsServer::want_fd), the Daemon
// builds fragd's own families here and asks each concern for its own (Concern::metrics);
// scrapes until the next tick share that set. Nothing is built while nobody scrapes.
#pragma once

#include <optional>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/family.h"
#include "base/series.h"
#include "fragd/control_stats.h"
#include "concerns/programs/reader.h"
#include "kernel/bpf_memory.h"
#include "kernel/bpf_object.h"
#include "kernel/process.h"
#include "kernel/procfs.h"
#include "concerns/stalls/metrics.h"

namespace fragd {

// fragd's own health: read and write faults, the collector's ticks.
struct SelfStats {
  uint64_t collect_errors_bpf = 0;
  // Failed reads of a /proc or sysfs source, by source: kSnapshotSources (kernel/procfs.h) and
  // "nodes" (the node list and sizes of read_machine_facts).
  std::map<std::string, uint64_t> collect_errors_files;
  // Writes the kernel refused, by (allow-listed file pattern, errno name) (concerns/act/sysfs_actuator.h).
  std::map<std::pair<std::string, std::string>, uint64_t> kernel_write_errors;
  double last_tick_seconds = 0;      // duration of the last collector tick
  double tick_late_max_seconds = 0;  // largest delay of a tick after its due time
  uint64_t ticks_missed = 0;         // ticks that never ran because the loop was a whole tick late
  std::vector<ProgramRunStats> run_stats;  // per program, from bpf_prog_info
  std::vector<MapMemory> map_memory;       // per BPF map, the kernel's memlock figure
  CountingStats counting;                  // allocation counting and the slow-stall stream
  ControlStats control;                    // control connections dropped and refused, by reason
  std::string kernel;                      // the kernel release, a label of fragd_build_info
};

// fragd's own families: fragd_build_info, the programs and their maps, fragd's health (self).
// Each concern adds its own (Concern::metrics). Pure: no I/O.
Families own_families(const SelfStats& self, const std::vector<ProgramState>& programs, const SeriesPlan& plan);

// The process_* families of every Prometheus client library (same names and meanings), built
// at each scrape as those libraries do, not at each tick.
Families process_families(const ProcessStats& p);

}  // namespace fragd
