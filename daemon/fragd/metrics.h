// Prometheus exposition: each tick the collector builds every metric family
// from the latest snapshots; scrapes copy the last built set (no work per scrape).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// Builds every family fragd exports. Pure: no I/O.
std::vector<prometheus::MetricFamily> build_families(unsigned min_order, const BpfSnapshot* bpf,
                                                     const MemSnapshot* mem,
                                                     const std::vector<ProgramState>& programs,
                                                     const SelfStats& self);

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
