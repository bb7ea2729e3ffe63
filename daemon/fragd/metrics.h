// Prometheus exposition: each tick the collector builds every metric family
// from the latest snapshots; scrapes copy the last built set (no work per scrape).
#pragma once

#include <prometheus/metric_family.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <string>
#include <vector>

#include "act/engine.h"
#include "base/histogram.h"
#include "sources/pageblocks/pageblock.h"
#include "sources/pollution/pollution.h"
#include "kernel/procfs.h"
#include "base/result.h"
#include "kernel/bpf_loader.h"
#include "kernel/bpf_maps.h"

namespace fragd {

struct SelfStats {
  uint64_t collect_errors_bpf = 0;
  // Failed reads of a /proc or sysfs source, by source: kSnapshotSources (kernel/procfs.h) and
  // "nodes" (the node list and sizes of read_machine_facts).
  std::map<std::string, uint64_t> collect_errors_files;
  // Writes the kernel refused, by (allow-listed file pattern, errno name) (act/sysfs_actuator.h).
  std::map<std::pair<std::string, std::string>, uint64_t> kernel_write_errors;
  uint64_t trace_events = 0;             // slow-stall events read from the ring buffer
  uint64_t trace_events_unsent = 0;      // not delivered to a `fragctl trace` client that lagged
  double last_tick_seconds = 0;          // duration of the last collector tick
  double tick_late_max_seconds = 0;      // largest delay of a tick after its due time
  uint64_t ticks_missed = 0;             // ticks that never ran because the loop was a whole tick late
  // Allocation counting (bpf.allocations): the mm_page_alloc program attached now, for how long in all.
  std::string allocations_mode = "exact";
  bool counting = true;
  double counting_seconds = 0;
  std::map<std::string, uint64_t> counting_switches;  // "on" / "off" -> switches
  std::vector<ProgramRunStats> run_stats;              // per program, from bpf_prog_info
};

// What act mode did and where its policy stands, for the metrics.
struct ActStats {
  std::string mode = "observe";  // observe | act
  bool dry_run = false;
  std::string method = "node";
  std::map<std::tuple<std::string, int, std::string>, uint64_t> actions;  // (action, node, result) -> count
  std::map<std::string, LatencyHist> durations;                           // action -> durations
  std::map<std::string, uint64_t> pages_migrated;                         // action -> pages
  std::map<int, std::pair<int, int>> last_score;                          // node -> (before, after) of its last compaction
  std::vector<NodeState> nodes;
  std::vector<PoolState> pools;
  uint64_t reloads_ok = 0, reloads_failed = 0;
  bool proactiveness_raised = false;
  uint64_t budget_used_ns = 0, budget_ns = 0;
};

// The pageblock scan (sources/pageblocks/pageblock.h) for the metrics; absent when the
// scan is off (kpageflags unreadable, or pageblocks.scan: false).
struct ScanStats {
  std::shared_ptr<const ScanResult> scan;  // latest; null before the first scan ends
  uint64_t ok = 0, failed = 0;
  uint64_t skipped = 0;  // interval checks that found memory unchanged and did not scan
};

// Pollution tracking (bpf/fallback.bpf.c, sources/pollution/pollution.h); absent when off.
struct PollutionStats {
  PollutionCounters counters;
  PollutionSummary summary;
};

// Builds every family fragd exports. Pure: no I/O.
std::vector<prometheus::MetricFamily> build_families(unsigned min_order, const BpfSnapshot* bpf,
                                                     const MemSnapshot* mem,
                                                     const std::vector<ProgramState>& programs,
                                                     const SelfStats& self, const ActStats* act = nullptr,
                                                     const ScanStats* scan = nullptr,
                                                     const PollutionStats* pollution = nullptr);

}  // namespace fragd
