// SPDX-License-Identifier: Apache-2.0
// Pageblocks and the pollution ledger: the scanner thread (started after the first tick, when
// the pageblock order is known), the ledger's summary at each tick and its reconciliation with
// each scan (a block found clean is released), the `map` answer (deferred to the next scan when
// the latest is too old), the `preflight` answer, and the status answer's pollution and scan.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "concerns/concern.h"
#include "concerns/memory/score.h"
#include "fragd/control.h"
#include "protocol/readers.h"
#include "concerns/pageblocks/metrics.h"
#include "concerns/pageblocks/pending.h"
#include "concerns/pageblocks/scanner.h"
#include "concerns/pollution/maps.h"
#include "concerns/pollution/metrics.h"
#include "concerns/pollution/pollution.h"
#include "concerns/supply/supply.h"

namespace fragd {

// What the concern needs of the pollution ledger's BPF side (the loaded programs and their
// reader in fragd, stubs in unit tests).
struct PollutionPort {
  bool enabled = false;          // the ledger's programs are loaded
  unsigned pageblock_order = 9;  // as the programs were loaded with
  std::function<Result<PollutionCounters>()> read_counters;  // the per-CPU counters alone
  std::function<Result<PollutionSnapshot>()> read;           // counters and every block's record
  LedgerOps ledger;                                          // a record's latest fallback; its release
  std::function<Result<fallback_stats>()> read_fallback;     // the fallback counters (none: not read)
};

class PageblocksConcern : public Concern {
 public:
  // Opens /proc/iomem when the scan is on: before the capabilities are dropped (only an fd
  // opened with CAP_SYS_ADMIN shows addresses). `control` sends the deferred map answers; `spans`:
  // the zone spans at start, to place the ledger's blocks on nodes.
  PageblocksConcern(Shared& sh, ControlServer& control, PollutionPort ledger, std::vector<ZoneSpan> spans);
  ~PageblocksConcern() override;
  // After the first tick (its pageblock order): the scanner thread, or why the scan is off.
  void start_scanner(const MemSnapshot* mem);
  void tick(const Tick& t) override;
  void metrics(const SeriesPlan& plan, const Tick& last, Families& out) override;
  // Its families of the fallback counters, the ledger and the scanner (each null: none).
  static void families(const fallback_stats* fallback, const PollutionStats* pollution, const ScanStats* scan,
                       Families& out);
  void status(StatusReply& s, const Tick& last) const override;
  void watch(EventLoop& loop) override;
  static const std::span<const Command> kAnswers;  // defined with answer()
  bool answers(Command cmd) const override { return among(kAnswers, cmd); }
  // The map answer from a scan at most max_age_ns old (5 s at least for a reader not root: a
  // scan costs ~0.1 us of kernel time per page), or none yet: it follows through the control
  // server's reply(token) when the next scan ends.
  // preflight: what the host or a node can supply (concerns/supply), from the last tick and scan.
  std::optional<nlohmann::json> answer(const ControlRequest& req, Reader reader, uint64_t token,
                                       const Tick& last) override;
  // What the host or a node can supply at a tick: preflight's answer, ensure's check.
  Result<Supply> supply(const SupplyAsk& ask, const Tick& t) const;
  // A scan has ended (or the scan is off): supply() rests on the pageblock picture it will have.
  bool scanned() const { return !scanner_ || scanner_->latest() != nullptr; }
  // Reads of the ledger and the fallback counters that failed: fragd_collect_errors_total{source="bpf"}.
  uint64_t read_errors() const { return ledger_read_errors_ + fallback_.errors(); }

 private:
  void refresh_pollution();
  // The ledger's counters and blocks now, with who polluted each block.
  std::optional<PollutionStats> read_pollution(uint64_t max_blocks = kDefaultMapBlocks) const;
  void reconcile_pollution(const ScanResult& scan);
  struct MapAsk {
    uint64_t max_blocks;       // ledger blocks the answer lists
    Reader reader;             // who asked: what the answer may carry
    std::optional<int> node;   // only this node's zones (the answer of a large host stays small)
    std::optional<std::string> note;  // said beside the map
  };
  nlohmann::json map_answer(const ScanResult* scan, const std::string& scan_error, const MapAsk& ask) const;
  void on_scan_done();

  Shared& sh_;
  ControlServer& control_;
  PollutionPort ledger_;
  std::vector<ZoneSpan> spans_;
  mutable uint64_t ledger_read_errors_ = 0;  // counted by a read in status() too
  MapsRead<fallback_stats> fallback_{"fallback"};
  int iomem_fd_ = -1;
  std::unique_ptr<PageblockScanner> scanner_;  // null when the scan is off
  std::string scan_off_;                         // why it is off
  LastingChange scan_change_;                    // memory as of the last change reported to the scanner
  uint64_t scans_ok_seen_ = 0;
  PendingMaps<MapAsk> pending_maps_;  // map requests waiting for a scan
  // The ledger: the tick's summary, read anew only when the BPF counters or a release moved it.
  std::optional<PollutionStats> pollution_;  // empty when off
  bool pollution_released_ = false;
  uint64_t released_blocks_ = 0, released_pages_ = 0;
  uint64_t reconciled_scan_ns_ = 0;  // boot_time_ns of the last scan the ledger was reconciled with
};

}  // namespace fragd
