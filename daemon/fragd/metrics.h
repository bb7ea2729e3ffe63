// Prometheus exposition: each tick the collector builds every metric family
// from the latest snapshots; scrapes copy the last built set (no work per scrape).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <string>
#include <vector>

#include "core/engine.h"
#include "core/histview.h"
#include "core/pageblock.h"
#include "core/pollution.h"
#include "core/procfs.h"
#include "core/result.h"
#include "fragd/bpf_loader.h"
#include "fragd/bpf_reader.h"

namespace fragd {

struct SelfStats {
  uint64_t collect_errors_bpf = 0;
  uint64_t collect_errors_procfs = 0;
  uint64_t trace_events = 0;             // slow-stall events read from the ring buffer
  uint64_t trace_events_unsent = 0;      // not delivered to a `fragctl trace` client that lagged
  double last_tick_seconds = 0;          // duration of the last collector tick
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

// The pageblock scan (core/pageblock.h) for the metrics; absent when the
// scan is off (kpageflags unreadable, or pageblocks.scan: false).
struct ScanStats {
  std::shared_ptr<const ScanResult> scan;  // latest; null before the first scan ends
  uint64_t ok = 0, failed = 0;
};

// Pollution tracking (bpf/fallback.bpf.c, core/pollution.h); absent when off.
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

class SnapshotCollectable : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
  void set(std::vector<prometheus::MetricFamily> families);

 private:
  mutable std::mutex mu_;
  std::vector<prometheus::MetricFamily> families_;
};

class MetricsServer {
 public:
  // Binds ADDR:PORT; the error names the address and the fix when it is taken.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& listen);
  void publish(std::vector<prometheus::MetricFamily> families) { collectable_->set(std::move(families)); }

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<SnapshotCollectable> collectable_;
};

}  // namespace fragd
