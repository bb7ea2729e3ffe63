// SPDX-License-Identifier: Apache-2.0
// The daemon: what fragd composes from the rooms below it (BPF programs and
// their maps, the /proc and sysfs readers, the sources' metrics, the act-mode
// engine and runner, the pageblock scanner, the control and HTTP servers) and
// the tick that moves them. daemon.cc: the tick and what it reads;
// daemon_control.cc: the control requests; daemon_run.cc: start, loop, stop.
#pragma once

#include <bpf/libbpf.h>

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "act/act_lock.h"
#include "act/action_log.h"
#include "act/engine.h"
#include "act/runner.h"
#include "act/sysfs_actuator.h"
#include "base/log.h"
#include "kernel/bpf_loader.h"
#include "kernel/bpf_maps.h"
#include "kernel/procfs.h"
#include "kernel/source_faults.h"
#include "kernel/kallsyms.h"
#include "sources/attribution/rounds.h"
#include "sources/memory/files.h"
#include "sources/memory/forecast.h"
#include "sources/memory/nodes.h"
#include "policy/config.h"
#include "protocol/readers.h"
#include "protocol/request.h"
#include "protocol/status.h"
#include "sources/pageblocks/pending.h"
#include "sources/pageblocks/scanner.h"
#include "sources/stalls/counting.h"
#include "fragd/control.h"
#include "fragd/exporter.h"
#include "fragd/http.h"
#include "fragd/tick_clock.h"

namespace fragd {

// `fragd --restore`: under the act lock, puts back the kernel settings a
// fragd that did not exit cleanly left changed (act/saved_state.h), and says
// what it did. 0 when nothing is left changed (or a running act-mode fragd
// holds them: it restores them itself), 1 when something could not be put back
// or the state file was refused.
int restore_saved_settings(const std::string& proc_root, const std::string& sys_root);

class Daemon {
 public:
  explicit Daemon(Config cfg) : cfg_(std::move(cfg)) {}
  int run();

 private:
  void tick();
  void publish_metrics();
  // Answers a request from `reader`; nothing yet for one answered later through the control
  // server's reply(token) (a map that waits for a scan).
  std::optional<nlohmann::json> handle(const ControlRequest& req, Reader reader, uint64_t token);
  static int on_ring_event(void* ctx, void* data, size_t size);
  static int on_wakeup(void* ctx, void* data, size_t size);

  // Allocation counting (bpf.allocations, sources/stalls/counting.h): counting_ decides, these
  // attach or detach the per-page mm_page_alloc program.
  void steer_counting(uint64_t now);
  void switch_counting(const CountingSwitch& sw);
  std::unique_ptr<ring_buffer, decltype(&ring_buffer__free)> wakeups_{nullptr, &ring_buffer__free};
  // The pageblock scan: memory as of the last change reported to the scanner.
  std::optional<MemSnapshot> scan_ref_;
  // Pollution ledger records released after scans found their blocks clean.
  uint64_t released_blocks_ = 0, released_pages_ = 0;
  uint64_t reconciled_scan_ns_ = 0;  // boot_time_ns of the last scan the ledger was reconciled with
  // The tick's ledger summary; read anew only when the BPF counters or a release moved it.
  void refresh_pollution();
  bool pollution_released_ = false;
  void reconcile_pollution(const ScanResult& scan);

  // Act mode.
  void act(uint64_t now);
  void on_finished();
  void record(const ActionOutcome& o);
  nlohmann::json reload(const std::string& why);
  nlohmann::json action_state(uint64_t id) const;
  // The policy's part of the status answer: policy, its nodes, pools, actions.
  void add_policy_status(StatusReply& s) const;
  // The map answer from `scan`, or with `scan_error` when there is none, as `reader` may see it.
  // max_blocks: the ledger blocks listed (most pages first).
  nlohmann::json map_answer(const ScanResult* scan, const std::string& scan_error, uint64_t max_blocks, Reader reader);
  // Answers `map` from the latest scan when it is recent enough, else defers it to the next scan.
  std::optional<nlohmann::json> map_request(int64_t max_age_ns, uint64_t max_blocks, uint64_t token, Reader reader);
  void on_scan_done();
  struct MapAsk {
    uint64_t max_blocks;  // ledger blocks the answer lists
    Reader reader;        // who asked: what the answer may carry
  };
  PendingMaps<MapAsk> pending_maps_;  // map requests waiting for a scan
  // Act mode, at start or at a reload into it: the host-wide act lock, then
  // the settings a fragd that did not exit cleanly left changed, put back.
  // `why` names what needs it, for the refusal.
  Result<void> take_act_lock(const std::string& why);

  Config cfg_;
  std::unique_ptr<BpfPrograms> bpf_;
  std::unique_ptr<BpfReader> reader_;
  std::unique_ptr<MetricsServer> metrics_;
  std::unique_ptr<ControlServer> control_;
  // After bpf_: freed before the maps it reads, and on every early return of run().
  std::unique_ptr<ring_buffer, decltype(&ring_buffer__free)> ring_{nullptr, &ring_buffer__free};
  std::optional<BpfSnapshot> last_bpf_;
  std::optional<MemSnapshot> last_mem_;
  SelfStats self_;
  CountingSteer counting_{{cfg_.allocations, cfg_.adaptive_hold_ns, cfg_.adaptive_free_blocks}, self_.counting};
  uint64_t start_ns_ = 0;
  TickClock ticks_{0, cfg_.tick_ns};  // the timer's due times; reset when the timer starts
  std::set<std::string> warned_;
  // The /proc and sysfs files of the snapshot, each as often as it may be read, with back-off.
  MemoryFiles files_{cfg_.proc_root, cfg_.sys_root, cfg_.tick_ns, cfg_.pagetypeinfo_ns, self_.collect_errors_files};
  OnlineNodes nodes_;           // nodes with present pages in the last snapshot
  bool facts_stale_ = false;    // the nodes changed: facts_ to be read again
  uint64_t scans_ok_seen_ = 0;
  void read_files(uint64_t now);
  void check_nodes();

  MachineFacts facts_;
  std::unique_ptr<Engine> engine_;
  // Before the runner: released only after the runner put back what it changed.
  std::unique_ptr<ActLock> act_lock_;
  SysfsActuator actuator_{cfg_.proc_root, cfg_.sys_root};
  std::unique_ptr<ActionRunner> runner_;
  std::unique_ptr<PageblockScanner> scanner_;  // null when the scan is off
  std::string scan_off_;                         // why it is off
  std::vector<ZoneSpan> spans_;                  // zone spans, to place polluted blocks on nodes
  std::optional<PollutionStats> pollution_;      // last tick's; empty when off
  BlockForecast forecast_{cfg_.forecast_window_ns};  // free 2 MiB blocks per node over forecast_window
  // Who stalls, who pays, where (sources/attribution): updated when the stall counters move.
  AttributionRounds attribution_{cfg_.top_cgroups, cfg_.top_callsites};
  std::unique_ptr<KernelSymbols> symbols_;  // /proc/kallsyms opened before the capabilities were dropped
  std::unique_ptr<CgroupPaths> cgroup_paths_;
  void attribute(uint64_t now);
  // The ledger's counters and blocks now, with who polluted each block.
  std::optional<PollutionStats> read_pollution(uint64_t max_blocks = kDefaultMapBlocks);
  ActionLog actions_;  // finished actions: logged, counted, the last ones kept; manual ones queued

  // A problem that persists is logged once, not every tick (it stays counted in metrics):
  // once per key, its cause, until warn_cleared(key) logs that it went away.
  void warn_once(const std::string& key, const std::string& message) {
    if (warned_.size() < 1000 && warned_.insert(key).second) log_warn(message);
  }
  void warn_once(const std::string& w) { warn_once(w, w); }
  void warn_cleared(const std::string& key, const std::string& message) {
    if (warned_.erase(key)) log_info(message);
  }
};

}  // namespace fragd
