// SPDX-License-Identifier: Apache-2.0
// Memory: the /proc and sysfs snapshot (concerns/memory/files.h: each file as often as it may be
// read, with back-off), the nodes online and the machine facts requests are checked against,
// the forecast of each node's free 2 MiB blocks, the free page reporting of a VM guest, and the
// status answer's nodes and warnings.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "concerns/concern.h"
#include "concerns/memory/files.h"
#include "concerns/memory/forecast.h"
#include "concerns/memory/nodes.h"

namespace fragd {

class MemoryConcern : public Concern {
 public:
  // Reads the machine facts once (a failure is logged: requests naming a node are refused).
  explicit MemoryConcern(Shared& sh);
  // Reads /proc and sysfs: the Daemon hands what it read to the other concerns in the Tick.
  void tick(const Tick& t) override;
  void metrics(const SeriesPlan& plan, const Tick& last, Families& out) override;
  // Its families of a snapshot (null: none read yet) and a forecast over `window_ns`.
  static void families(const MemSnapshot* mem, const std::vector<NodeForecast>& forecast, uint64_t window_ns,
                       const SeriesPlan& plan, Families& out);
  void status(StatusReply& s, const Tick& last) const override;
  void reload() override;

  // What the last tick read (null: nothing yet), the machine facts, and the forecast the act
  // engine reads at a tick (empty unless compaction.forecast is on in act mode).
  const MemSnapshot* snapshot() const { return mem_ ? &*mem_ : nullptr; }
  const MachineFacts& facts() const { return facts_; }
  const std::vector<NodeForecast>& tick_forecast() const { return tick_forecast_; }
  // Failed reads by source (kSnapshotSources and "nodes"): fragd_collect_errors_total.
  const std::map<std::string, uint64_t>& collect_errors() const { return collect_errors_; }

 private:
  void check_nodes();
  void check_reporting();

  Shared& sh_;
  std::map<std::string, uint64_t> collect_errors_;  // before files_, which counts into it
  MemoryFiles files_;
  std::optional<MemSnapshot> mem_;         // the last good read
  MachineFacts facts_;
  std::vector<NodeForecast> tick_forecast_;  // at the last tick, with compaction.forecast on in act mode
  OnlineNodes nodes_;         // nodes with present pages in the last snapshot
  bool facts_stale_ = false;  // the nodes changed: facts to be read again
  BlockForecast forecast_;    // free 2 MiB blocks per node over forecast_window
  std::optional<PageReporting> reporting_seen_;  // the reporting device last logged (none: none)
  bool reporting_due_ = true;                    // look again whatever the device: at the start, after a reload
};

}  // namespace fragd
