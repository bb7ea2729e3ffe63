// fragd: watches high-order allocation stalls, compaction and memory
// fragmentation with BPF tracepoints and /proc, and exports them.
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <set>

#ifdef FRAGD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "policy/config.h"
#include "act/engine.h"
#include "base/log.h"
#include "kernel/procfs.h"
#include "sources/pageblocks/pageblock.h"
#include "base/text.h"
#include "sources/pollution/pollution.h"
#include "sources/memory/score.h"
#include "kernel/source_faults.h"
#include "kernel/bpf_loader.h"
#include "kernel/bpf_maps.h"
#include "fragd/control.h"
#include "fragd/http.h"
#include "fragd/exporter.h"
#include "fragd/privileges.h"
#include "act/runner.h"
#include "sources/pageblocks/scanner.h"
#include "act/sysfs_actuator.h"
#include "fragd/views.h"
#include "version.h"

namespace fragd {
namespace {


void notify(const char* state) {
#ifdef FRAGD_HAVE_SYSTEMD
  sd_notify(0, state);
#else
  (void)state;
#endif
}

class Daemon {
 public:
  explicit Daemon(Config cfg) : cfg_(std::move(cfg)) {}
  int run();

 private:
  void tick();
  nlohmann::json handle(const ControlRequest& req);
  static int on_ring_event(void* ctx, void* data, size_t size);
  static int on_wakeup(void* ctx, void* data, size_t size);

  // Allocation counting (bpf.allocations): attaches or detaches the per-page
  // mm_page_alloc program. adaptive: on from a stall (at once, through the
  // wake-up ring buffer) until adaptive_hold has passed without one, and while
  // a node has fewer than adaptive_free_blocks free pageblocks.
  void steer_counting(uint64_t now);
  void switch_counting(bool on, const std::string& why);
  void account_counting(uint64_t now);  // adds the time counting was on up to `now`
  std::unique_ptr<ring_buffer, decltype(&ring_buffer__free)> wakeups_{nullptr, &ring_buffer__free};
  uint64_t last_stall_ns_ = 0;      // CLOCK_MONOTONIC of the last stall seen; 0: none yet
  uint64_t last_entries_ = 0;       // direct stall entries of order >= min_order at the last tick
  uint64_t counted_until_ns_ = 0;   // counting time accounted up to here
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
  Observation observe(uint64_t now) const;
  void act(uint64_t now);
  void on_finished();
  void record(const ActionOutcome& o);
  nlohmann::json reload(const std::string& why);
  nlohmann::json action_state(uint64_t id) const;
  nlohmann::json policy_status() const;
  // The map answer from `scan`, or with `scan_error` when there is none.
  nlohmann::json map_answer(const ScanResult* scan, const std::string& scan_error);
  // Answers `map` from the latest scan when it is recent enough, else defers it to the next scan.
  std::optional<nlohmann::json> map_request(int64_t max_age_ns, uint64_t token);
  void on_scan_done();
  struct PendingMap {
    uint64_t token;         // the control client owed the answer
    uint64_t oldest_ok_ns;  // CLOCK_REALTIME: a scan begun at or after this will do
    uint64_t scans_before;  // scans ended when it was asked
  };
  std::vector<PendingMap> pending_maps_;
  std::string state_file() const;

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
  uint64_t start_ns_ = 0;
  uint64_t next_tick_due_ns_ = 0;  // CLOCK_MONOTONIC time the next timer expiration is due
  uint64_t last_pti_ns_ = 0;
  std::set<std::string> warned_;
  // /proc and sysfs sources that fail: retried from one tick up to every 60 s, each cause logged once.
  SourceFaults faults_{cfg_.tick_ns, 60'000'000'000ULL};
  std::set<int> nodes_online_;  // nodes with present pages in the last snapshot
  bool facts_stale_ = false;    // the nodes changed: facts_ to be read again
  uint64_t scans_ok_seen_ = 0;
  void read_files(uint64_t now);
  void note_source(const SourceRead& r, uint64_t now);
  void check_nodes();

  MachineFacts facts_;
  std::unique_ptr<Engine> engine_;
  SysfsActuator actuator_{cfg_.proc_root, cfg_.sys_root};
  std::unique_ptr<ActionRunner> runner_;
  std::unique_ptr<PageblockScanner> scanner_;  // null when the scan is off
  std::string scan_off_;                         // why it is off
  std::vector<ZoneSpan> spans_;                  // zone spans, to place polluted blocks on nodes
  std::optional<PollutionStats> pollution_;      // last tick's; empty when off
  // The ledger's counters and blocks now, with who polluted each block.
  std::optional<PollutionStats> read_pollution();
  std::deque<ActionOutcome> recent_;   // last kRecentActions outcomes, oldest first
  std::set<uint64_t> queued_ids_;      // manual requests not yet finished
  ActStats act_;
  static constexpr size_t kRecentActions = 64;

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

int Daemon::on_ring_event(void* ctx, void* data, size_t size) {
  auto* d = static_cast<Daemon*>(ctx);
  if (size < sizeof(stall_event)) return 0;
  stall_event e;
  std::memcpy(&e, data, sizeof(e));
  d->self_.counting.trace_events++;
  if (d->control_ && d->control_->trace_subscribers())
    d->self_.counting.trace_events_unsent += d->control_->broadcast_trace(
        trace_event_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return 0;
}

int Daemon::on_wakeup(void* ctx, void* data, size_t size) {
  auto* d = static_cast<Daemon*>(ctx);
  uint32_t order = 0;
  if (size >= sizeof(order)) std::memcpy(&order, data, sizeof(order));
  d->last_stall_ns_ = now_ns();
  if (d->cfg_.allocations == "adaptive" && !d->bpf_->counting())
    d->switch_counting(true, "an allocation of order " + std::to_string(order) + " stalled");
  return 0;
}

void Daemon::account_counting(uint64_t now) {
  if (bpf_->counting()) self_.counting.counting_seconds += (now - counted_until_ns_) / 1e9;
  counted_until_ns_ = now;
}

void Daemon::switch_counting(bool on, const std::string& why) {
  account_counting(now_ns());
  if (auto r = bpf_->set_counting(on); !r) {
    warn_once("counting", r.error().message);
    return;
  }
  warn_cleared("counting", "allocation counting switches again");
  self_.counting.counting_switches[on ? "on" : "off"]++;
  if (!on) bpf_->arm_wakeup();
  log_info(std::string("allocation counting ") + (on ? "on: " : "off: ") + why);
}

void Daemon::steer_counting(uint64_t now) {
  if (last_bpf_) {
    uint64_t entries = 0;
    for (unsigned o = cfg_.min_order; o < FRAGD_NR_ORDERS; o++)
      for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) entries += last_bpf_->alloc.direct_entries[o][p];
    if (entries != last_entries_) last_stall_ns_ = now;
    last_entries_ = entries;
  }
  account_counting(now);
  self_.counting.counting = bpf_->counting();
  if (cfg_.allocations != "adaptive") return;
  std::string why;
  if (last_stall_ns_ && now - last_stall_ns_ < cfg_.adaptive_hold_ns) why = "stalls in the last " + format_duration(cfg_.adaptive_hold_ns, DurationStyle::Exact);
  if (why.empty() && cfg_.adaptive_free_blocks > 0 && last_mem_) {
    std::map<int, uint64_t> free_blocks;
    for (const auto& z : last_mem_->zones)
      if (z.present_pages > 0) free_blocks[z.node] += blocks_of_order(z.free_blocks, bpf_->pageblock_order());
    for (const auto& [node, n] : free_blocks)
      if (n < cfg_.adaptive_free_blocks) {
        why = "node " + std::to_string(node) + " has " + std::to_string(n) + " free pageblocks (< bpf.adaptive_free_blocks " +
              std::to_string(cfg_.adaptive_free_blocks) + ")";
        break;
      }
  }
  const bool want = !why.empty();
  if (want != bpf_->counting())
    switch_counting(want, want ? why : "no stall for " + format_duration(cfg_.adaptive_hold_ns, DurationStyle::Exact) + ", memory healthy");
  self_.counting.counting = bpf_->counting();
}

void Daemon::tick() {
  const uint64_t t0 = now_ns();
  if (auto s = reader_->read()) {
    last_bpf_ = std::move(*s);
    warn_cleared("bpf", "BPF maps readable again");
  } else {
    self_.collect_errors_bpf++;
    warn_once("bpf", s.error().message + " (counted in fragd_collect_errors_total{source=\"bpf\"}; not logged again "
                                         "until the maps read well)");
  }
  read_files(t0);
  steer_counting(now_ns());
  self_.run_stats = bpf_->run_stats();
  act(now_ns());
  if (bpf_->pollution_enabled()) refresh_pollution();
  ScanStats scan;
  if (scanner_ && last_mem_) {
    if (!scan_ref_ || memory_changed(*scan_ref_, *last_mem_, bpf_->pageblock_order())) {
      scanner_->mark_changed();
      scan_ref_ = *last_mem_;
    }
  }
  if (scanner_) {
    for (const auto& m : scanner_->take_messages())
      warn_once(m.rfind("pageblock scan failed", 0) == 0 ? std::string("scan failed") : m, m);
    scan.scan = scanner_->latest();
    scan.ok = scanner_->scans_ok();
    scan.failed = scanner_->scans_failed();
    scan.skipped = scanner_->scans_skipped();
    if (scan.ok > scans_ok_seen_) warn_cleared("scan failed", "pageblock scans work again");
    scans_ok_seen_ = scan.ok;
  }
  self_.kernel_write_errors = actuator_.write_errors();
  self_.last_tick_seconds = (now_ns() - t0) / 1e9;
  act_.nodes = engine_->nodes();
  act_.pools = engine_->pools();
  act_.proactiveness_raised = engine_->proactiveness_raised();
  act_.budget_used_ns = engine_->budget_used_ns();
  act_.budget_ns = cfg_.policy.compaction.cpu_budget_ns;
  act_.mode = cfg_.policy.act ? "act" : "observe";
  act_.dry_run = cfg_.policy.dry_run;
  act_.method = method_name(cfg_.policy.compaction.method);
  ExportFrame frame;
  frame.min_order = cfg_.min_order;
  frame.bpf = last_bpf_ ? &*last_bpf_ : nullptr;
  frame.mem = last_mem_ ? &*last_mem_ : nullptr;
  frame.programs = &bpf_->programs();
  frame.self = &self_;
  frame.act = &act_;
  frame.scan = scanner_ ? &scan : nullptr;
  frame.pollution = pollution_ ? &*pollution_ : nullptr;
  metrics_->publish(build_families(frame));
}

// The /proc and sysfs sources. One that fails is counted, logged once per
// cause (and once when it reads well again) and read again after one tick,
// then at doubling intervals up to 60 s; its metrics are absent meanwhile.
void Daemon::read_files(uint64_t now) {
  // buddyinfo and zoneinfo make the snapshot: while either waits there is none
  // (last_mem_ was reset when it failed).
  if (!faults_.due("buddyinfo", now) || !faults_.due("zoneinfo", now)) return;
  // pagetypeinfo only every pagetypeinfo_interval; in between, its counts are carried over.
  const bool pti_due = !last_mem_ || now - last_pti_ns_ >= cfg_.pagetypeinfo_ns;
  std::set<std::string> skip;
  for (const char* s : kSnapshotSources)
    if (!faults_.due(s, now)) skip.insert(s);
  std::vector<SourceRead> report;
  auto m = read_snapshot(cfg_.proc_root, cfg_.sys_root, pti_due ? nullptr : &*last_mem_, skip, report);
  for (const auto& r : report) note_source(r, now);
  if (!m) {
    last_mem_.reset();
    return;
  }
  if (pti_due) last_pti_ns_ = now;
  last_mem_ = std::move(*m);
  check_nodes();
}

void Daemon::note_source(const SourceRead& r, uint64_t now) {
  if (r.failed()) {
    self_.collect_errors_files[r.source]++;
    if (faults_.failed(r.source, r.cause, now))
      log_warn(r.message + " [" + r.cause + "]; counted in fragd_collect_errors_total{source=\"" + r.source +
               "\"}, read again at doubling intervals up to 60 s, not logged again until the cause changes or "
               "clears");
    return;
  }
  if (auto rec = faults_.ok(r.source, now)) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", rec->failing_ns / 1e9);
    log_info(r.source + " (" + r.path + ") readable again after " + std::to_string(rec->failures) +
             " failed reads in " + took + " (last cause " + rec->cause + ")");
  }
  // A file that parses with some lines skipped is used; its first bad line is logged once.
  const std::string lines = r.source + " lines";
  if (r.cause == "lines") {
    if (faults_.failed(lines, r.cause, now))
      log_warn(r.message + "; further skipped lines of " + r.path + " are not logged until it parses cleanly");
  } else if (faults_.ok(lines, now)) {
    log_info(r.path + " parses cleanly again");
  }
}

// Nodes come and go with the zones of the snapshot (a node taken offline,
// memory hot-removed): each change is logged once, and the machine facts (the
// nodes `fragctl compact --node` and `pool set --node` may name) are read
// again. The engine forgets a node missing from its observation, so fragd
// does not act on it, and its metrics go with its zones.
void Daemon::check_nodes() {
  std::set<int> online;
  for (const auto& z : last_mem_->zones)
    if (z.present_pages > 0) online.insert(z.node);
  if (online != nodes_online_) {
    if (!nodes_online_.empty()) {
      for (int n : nodes_online_)
        if (!online.count(n))
          log_warn("node " + std::to_string(n) + " went offline (no populated zone in " + cfg_.proc_root +
                   "/zoneinfo): its metrics are gone and fragd does not act on it");
      for (int n : online)
        if (!nodes_online_.count(n)) log_info("node " + std::to_string(n) + " is online");
      facts_stale_ = true;
    }
    nodes_online_ = std::move(online);
  }
  if (!facts_stale_ || !faults_.due("nodes", now_ns())) return;
  if (auto f = read_machine_facts(cfg_.proc_root, cfg_.sys_root)) {
    facts_ = *f;
    facts_stale_ = false;
    if (faults_.ok("nodes", now_ns())) log_info("the node list under " + cfg_.sys_root + " reads again");
  } else {
    self_.collect_errors_files["nodes"]++;
    if (faults_.failed("nodes", errno_name(f.error().err), now_ns()))
      log_warn(f.error().message + " (fragctl requests naming a node are checked against the last good read)");
  }
}

Observation Daemon::observe(uint64_t now) const {
  Observation o;
  o.now_ns = now;
  if (last_mem_) {
    for (const auto& s : node_scores(last_mem_->zones)) {
      NodeObservation n;
      n.node = s.node;
      n.score = s.score;
      for (const auto& z : last_mem_->zones) {
        if (z.node != s.node) continue;
        n.free_pages += buddy_free_pages(z);
        if (n.free_blocks.size() < z.free_blocks.size()) n.free_blocks.resize(z.free_blocks.size(), 0);
        for (size_t i = 0; i < z.free_blocks.size(); i++) n.free_blocks[i] += z.free_blocks[i];
      }
      o.nodes.push_back(std::move(n));
    }
    o.mem_available_kib = last_mem_->mem_available_kib;
    std::map<uint64_t, uint64_t> global;
    for (const auto& p : last_mem_->hugepages) {
      o.pools.push_back({p.node, p.size_kib, p.total});
      global[p.size_kib] += p.total;
    }
    for (const auto& [size, total] : global) o.pools.push_back({-1, size, total});
  }
  if (last_bpf_) {
    const unsigned from = std::max(cfg_.policy.compaction.demand.min_order, cfg_.min_order);
    // The rate check counts entries into direct compaction and reclaim, exact in every
    // bpf.allocations mode; the p99 check reads the stall times of counted allocations.
    for (unsigned ord = from; ord < FRAGD_NR_ORDERS; ord++) {
      for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++) o.stall_hist += last_bpf_->stall[ord][r];
      for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) o.stalls_total += last_bpf_->alloc.direct_entries[ord][p];
    }
    o.fragd_compaction_ns = last_bpf_->compaction_hist[FRAGD_TRIGGER_FRAGD].sum_ns;
    o.proactive_compaction_ns = last_bpf_->compaction_hist[FRAGD_TRIGGER_PROACTIVE].sum_ns;
  }
  return o;
}

void Daemon::act(uint64_t now) {
  if (!engine_ || !runner_ || !last_mem_) return;
  auto r = engine_->decide(observe(now));
  if (!r) return;
  log_debug("starting action " + std::to_string(r->id) + " " + action_name(r->kind) + ": " + r->reason);
  runner_->submit(*r, cfg_.policy);
}

void Daemon::record(const ActionOutcome& o) {
  engine_->finished(o);
  queued_ids_.erase(o.req.id);
  const std::string line = outcome_line(o);
  if (o.result == "error" || o.result == "short" || o.result == "guard") log_warn(line);
  else log_info(line);
  const std::string a = action_name(o.req.kind);
  act_.actions[{a, o.req.node, o.result}]++;
  if (o.result != "dry_run" && o.result != "abandoned") {
    act_.durations[a].add(o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0);
    act_.pages_migrated[a] += o.pages_migrated;
  }
  if (o.req.kind == ActionKind::Compact && o.result != "dry_run")
    act_.last_score[o.req.node] = {o.score_before, o.score_after};
  recent_.push_back(o);
  while (recent_.size() > kRecentActions) recent_.pop_front();
}

void Daemon::on_finished() {
  auto done = runner_->take_finished();
  for (const auto& o : done) record(o);
  // Fresh numbers before the next decision: the action changed them.
  if (!done.empty()) tick();
}

std::string Daemon::state_file() const {
  const auto slash = cfg_.socket.rfind('/');
  const std::string dir = slash == std::string::npos || slash == 0 ? "/run" : cfg_.socket.substr(0, slash);
  return dir + "/saved-compaction_proactiveness";
}

nlohmann::json Daemon::reload(const std::string& why) {
  if (cfg_.source.empty())
    return {{"ok", false}, {"error", "fragd was started without --config: there is no policy file to reload"}};
  auto c = load_and_check_config(cfg_.source, cfg_.proc_root, cfg_.sys_root);
  if (!c) {
    act_.reloads_failed++;
    log_error("reload (" + why + ") failed, keeping the running policy: " + c.error().message);
    return {{"ok", false}, {"error", c.error().message + " (the running policy is kept)"}};
  }
  std::vector<std::string> restart;
  if (c->listen != cfg_.listen) restart.push_back("listen");
  if (c->socket != cfg_.socket) restart.push_back("socket");
  if (c->socket_group != cfg_.socket_group) restart.push_back("socket_group");
  if (c->tick_ns != cfg_.tick_ns) restart.push_back("tick_interval");
  if (c->pagetypeinfo_ns != cfg_.pagetypeinfo_ns) restart.push_back("pagetypeinfo_interval");
  if (c->min_order != cfg_.min_order) restart.push_back("bpf.min_order");
  if (c->slow_stall_ns != cfg_.slow_stall_ns) restart.push_back("bpf.slow_stall_threshold");
  if (c->allocations != cfg_.allocations) restart.push_back("bpf.allocations");
  if (c->track_pollution != cfg_.track_pollution) restart.push_back("bpf.track_pollution");
  if (c->scan_pageblocks != cfg_.scan_pageblocks || c->scan_ns != cfg_.scan_ns ||
      c->scan_max_age_ns != cfg_.scan_max_age_ns || c->scan_threads != cfg_.scan_threads)
    restart.push_back("pageblocks");
  // Read each tick: effective at once.
  cfg_.adaptive_hold_ns = c->adaptive_hold_ns;
  cfg_.adaptive_free_blocks = c->adaptive_free_blocks;
  cfg_.mode = c->mode;
  cfg_.policy = c->policy;
  engine_->set_policy(cfg_.policy);
  for (const auto& o : engine_->take_dropped()) record(o);
  if (auto f = read_machine_facts(cfg_.proc_root, cfg_.sys_root)) facts_ = *f;
  act_.reloads_ok++;
  std::string msg = "policy reloaded from " + cfg_.source + " (" + why + "): mode " + cfg_.mode +
                    (cfg_.policy.dry_run ? ", dry_run" : "") + ", method " +
                    method_name(cfg_.policy.compaction.method);
  if (!restart.empty()) {
    msg += "; changed but needing a restart:";
    for (const auto& k : restart) msg += " " + k;
  }
  log_info(msg);
  return {{"ok", true}, {"message", msg}};
}

nlohmann::json Daemon::action_state(uint64_t id) const {
  for (const auto& o : recent_)
    if (o.req.id == id)
      return {{"ok", true}, {"state", "done"}, {"outcome", outcome_json(o, now_ns(), now_ns(CLOCK_REALTIME))}};
  if (auto r = runner_ ? runner_->running() : std::nullopt; r && r->id == id)
    return {{"ok", true}, {"state", "running"}};
  if (queued_ids_.count(id)) return {{"ok", true}, {"state", "queued"}};
  return {{"ok", false}, {"error", "unknown action id " + std::to_string(id)}};
}

nlohmann::json Daemon::policy_status() const {
  const uint64_t mono = now_ns(), real = now_ns(CLOCK_REALTIME);
  nlohmann::json j;
  j["policy"] = {{"mode", cfg_.policy.act ? "act" : "observe"},
                 {"dry_run", cfg_.policy.dry_run},
                 {"method", method_name(cfg_.policy.compaction.method)},
                 {"source", cfg_.source},
                 {"reloads", act_.reloads_ok},
                 {"reload_errors", act_.reloads_failed},
                 {"proactiveness_raised", engine_->proactiveness_raised()},
                 {"budget_used_ns", engine_->budget_used_ns()},
                 {"budget_ns", cfg_.policy.compaction.cpu_budget_ns}};
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : engine_->nodes())
    nodes.push_back({{"node", n.node},
                     {"score", n.score},
                     {"hot", n.hot},
                     {"floor", n.floor ? nlohmann::json(*n.floor) : nlohmann::json(nullptr)},
                     {"misses", n.misses},
                     {"waiting", n.waiting},
                     {"next_allowed_in_ns", n.next_allowed_ns > mono ? n.next_allowed_ns - mono : 0}});
  j["policy_nodes"] = nodes;
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& p : engine_->pools())
    pools.push_back({{"node", p.node},
                     {"size_kib", p.size_kib},
                     {"target", p.target},
                     {"reached", p.reached},
                     {"manual", p.manual},
                     {"last_result", p.last_result}});
  j["pools"] = pools;
  nlohmann::json actions = nlohmann::json::array();
  const size_t first = recent_.size() > 20 ? recent_.size() - 20 : 0;
  for (size_t i = first; i < recent_.size(); i++) actions.push_back(outcome_json(recent_[i], mono, real));
  j["actions"] = actions;
  auto r = runner_ ? runner_->running() : std::nullopt;
  j["action_running"] = r ? request_json(*r) : nlohmann::json(nullptr);
  return j;
}

void Daemon::refresh_pollution() {
  if (pollution_ && !pollution_released_) {
    auto c = reader_->read_pollution_counters();
    if (c && c->events == pollution_->counters.events) return;  // no fallback since: the blocks are the same
  }
  pollution_ = read_pollution();
  pollution_released_ = false;
}

std::optional<PollutionStats> Daemon::read_pollution() {
  auto p = reader_->read_pollution();
  if (!p) {
    self_.collect_errors_bpf++;
    warn_once(p.error().message);
    return std::nullopt;
  }
  PollutionStats ps;
  ps.counters = p->counters;
  ps.counters.released_blocks = released_blocks_;
  ps.counters.released_pages = released_pages_;
  ps.summary = summarize_pollution(p->blocks, spans_, p->pageblock_order);
  return ps;
}

nlohmann::json Daemon::map_answer(const ScanResult* scan, const std::string& scan_error) {
  nlohmann::json j = {{"ok", true}, {"scan", nullptr}, {"pollution", nullptr}};
  if (pollution_)
    if (auto p = read_pollution()) j["pollution"] = pollution_json(p->counters, p->summary, true);
  if (scan) j["scan"] = scan_json(*scan, now_ns(CLOCK_REALTIME));
  else j["scan_error"] = scan_error;
  return j;
}

std::optional<nlohmann::json> Daemon::map_request(int64_t max_age_ns, uint64_t token) {
  if (!scanner_) return map_answer(nullptr, scan_off_);
  const uint64_t now = now_ns(CLOCK_REALTIME);
  auto latest = scanner_->latest();
  if (latest && latest->wall_time_ns + static_cast<uint64_t>(max_age_ns) >= now) return map_answer(latest.get(), "");
  // A scan takes most of a second: the scanner thread runs it and the answer follows
  // (on_scan_done), so that ticks and other clients never wait for it.
  pending_maps_.push_back({token, now - std::min<uint64_t>(now, static_cast<uint64_t>(max_age_ns)),
                           scanner_->scans_done()});
  scanner_->request();
  return std::nullopt;
}

// A block stays in the ledger until a scan that began after its last recorded
// fallback finds no unmovable page in it. The record is looked up once more
// right before its delete, so a fallback that landed since keeps it.
void Daemon::reconcile_pollution(const ScanResult& scan) {
  auto p = reader_->read_pollution();
  if (!p) return;
  std::map<uint64_t, uint64_t> pages;
  for (const auto& b : p->blocks) pages[b.block] = b.pages;
  for (uint64_t block : blocks_found_clean(p->blocks, scan)) {
    auto last = reader_->polluted_last_boot_ns(block);
    if (!last || *last >= scan.boot_time_ns) continue;
    if (auto r = reader_->release_polluted(block); !r) {
      warn_once("release", r.error().message);
      return;
    }
    released_blocks_++;
    released_pages_ += pages[block];
    pollution_released_ = true;
  }
}

void Daemon::on_scan_done() {
  const uint64_t done = scanner_->take_event();
  auto latest = scanner_->latest();
  if (latest && bpf_->pollution_enabled() && latest->boot_time_ns > reconciled_scan_ns_) {
    reconciled_scan_ns_ = latest->boot_time_ns;
    reconcile_pollution(*latest);
  }
  const std::string error = scanner_->last_error();
  for (size_t i = 0; i < pending_maps_.size();) {
    const PendingMap& p = pending_maps_[i];
    if (latest && latest->wall_time_ns >= p.oldest_ok_ns) {
      control_->reply(p.token, map_answer(latest.get(), ""));
    } else if (!error.empty() && done > p.scans_before) {
      control_->reply(p.token, map_answer(nullptr, error));
    } else {
      i++;  // the scan that ended began before the request: the next one answers it
      scanner_->request();
      continue;
    }
    pending_maps_.erase(pending_maps_.begin() + static_cast<long>(i));
  }
}

nlohmann::json Daemon::handle(const ControlRequest& req) {
  // parse_request checked every field's type and range; ControlServer answered
  // act requests from anyone but root already.
  const std::string& cmd = req.cmd;
  if (cmd == "compact") {
    auto ids = engine_->request_compact(req.node.value_or(-1), facts_);
    if (!ids) return {{"ok", false}, {"error", ids.error().message}};
    for (auto id : *ids) queued_ids_.insert(id);
    act(now_ns());
    return {{"ok", true}, {"ids", *ids}};
  }
  if (cmd == "pool") {
    auto id = engine_->request_pool(*req.size_kib, req.node.value_or(-1), *req.count, facts_);
    if (!id) return {{"ok", false}, {"error", id.error().message}};
    queued_ids_.insert(*id);
    act(now_ns());
    return {{"ok", true}, {"ids", {*id}}};
  }
  if (cmd == "action") {
    return action_state(*req.id);
  }
  if (cmd == "reload") return reload("fragctl reload");
  if (cmd == "hist") {
    auto s = reader_->read();  // fresh, so `fragctl hist --interval` sees exact intervals
    if (!s) return {{"ok", false}, {"error", s.error().message}};
    auto j = hist_answer(*s, cfg_.min_order, now_ns() - start_ns_);
    j["allocations"] = {{"mode", cfg_.allocations}, {"counting", bpf_->counting()}};
    return j;
  }
  if (cmd == "status") {
    auto j = status_answer(last_mem_ ? &*last_mem_ : nullptr, last_bpf_ ? &*last_bpf_ : nullptr,
                           bpf_->programs(), cfg_.tick_ns);
    j.update(policy_status());
    j["allocations"] = {{"mode", cfg_.allocations},
                        {"counting", bpf_->counting()},
                        {"counting_seconds", self_.counting.counting_seconds},
                        {"hold_ns", cfg_.adaptive_hold_ns},
                        {"free_blocks_threshold", cfg_.adaptive_free_blocks}};
    auto p = pollution_ ? read_pollution() : std::nullopt;
    j["pollution"] = p ? pollution_json(p->counters, p->summary, false) : nlohmann::json(nullptr);
    auto latest = scanner_ ? scanner_->latest() : nullptr;
    j["scan"] = latest ? scan_summary_json(*latest, now_ns(CLOCK_REALTIME)) : nullptr;
    return j;
  }
  if (cmd == "trace") return {{"ok", true}, {"stream", "trace"}};
  return {{"ok", false},
          {"error", "unknown command '" + cmd + "' (known: hist, status, trace, map, compact, pool, action, reload)"}};
}

int Daemon::run() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (sfd < 0 || tfd < 0) {
    log_error("cannot create signalfd/timerfd: " + std::string(strerror(errno)));
    return 1;
  }

  // Things that fail for reasons outside BPF come first: a taken socket.
  ControlOptions copt;
  copt.path = cfg_.socket;
  copt.group = cfg_.socket_gid;
  auto c = ControlServer::start(copt, [this](const ControlRequest& req, long uid,
                                             uint64_t token) -> std::optional<nlohmann::json> {
    if (req.cmd == "map") {
      // A scan costs ~0.1 us of kernel time per page: only root may ask for one more often than every 5 s.
      const int64_t age = req.max_age_ns.value_or(5'000'000'000);
      return map_request(uid == 0 ? age : std::max<int64_t>(age, 5'000'000'000), token);
    }
    return handle(req);
  });
  if (!c) return log_error(c.error().message), 1;
  control_ = std::move(*c);

  // A fragd that died holding vm.compaction_proactiveness raised left the old value behind.
  if (auto msg = ActionRunner::recover_saved_proactiveness(actuator_, state_file())) log_warn(*msg);
  if (auto f = read_machine_facts(cfg_.proc_root, cfg_.sys_root)) facts_ = *f;
  else log_warn(f.error().message);
  engine_ = std::make_unique<Engine>(cfg_.policy);

  if (auto r = check_kernel_btf(); !r) return log_error(r.error().message), 1;
  if (auto r = check_bpf_privileges(); !r) return log_error(r.error().message), 1;
  BpfOptions opts;
  opts.min_order = cfg_.min_order;
  opts.slow_stall_ns = cfg_.slow_stall_ns;
  opts.self_tgid = static_cast<uint32_t>(getpid());
  opts.track_pollution = cfg_.track_pollution;
  opts.count_allocations = cfg_.allocations == "exact";
  if (auto zi = read_text_file(cfg_.proc_root + "/zoneinfo")) {
    if (auto sp = parse_zone_spans(*zi, cfg_.proc_root + "/zoneinfo")) {
      spans_ = std::move(*sp);
      for (const auto& z : spans_) opts.max_pfn = std::max(opts.max_pfn, z.end_pfn);
    }
  }
  auto b = BpfPrograms::create(opts);
  if (!b) return log_error(b.error().message), 1;
  bpf_ = std::move(*b);
  reader_ = std::make_unique<BpfReader>(*bpf_);
  ring_.reset(ring_buffer__new(bpf_->slow_stalls_fd(), on_ring_event, this, nullptr));
  if (!ring_) log_warn("cannot open the slow-stall ring buffer: `fragctl trace` will show nothing");
  if (cfg_.allocations == "adaptive") {
    wakeups_.reset(ring_buffer__new(bpf_->wakeups_fd(), on_wakeup, this, nullptr));
    if (!wakeups_)
      log_warn("cannot open the stall wake-up ring buffer: adaptive allocation counting switches on at the next "
               "tick after a stall, not during it");
    bpf_->arm_wakeup();
  }
  start_ns_ = now_ns();
  counted_until_ns_ = start_ns_;
  self_.counting.allocations_mode = cfg_.allocations;
  self_.counting.counting = bpf_->counting();

  // Every capability was for loading and attaching: drop them while fragd has one
  // thread (capabilities are per thread), before the HTTP workers, the action
  // runner and the scanner start.
  // /proc/iomem shows addresses only through an fd opened with CAP_SYS_ADMIN: open it now for the scanner.
  const int iomem_fd = cfg_.scan_pageblocks ? ::open((cfg_.proc_root + "/iomem").c_str(), O_RDONLY | O_CLOEXEC) : -1;
  if (auto d = drop_capabilities()) log_info(*d);
  else return log_error(d.error().message), 1;
  auto m = MetricsServer::start(cfg_.listen, 3 * cfg_.tick_ns + 5'000'000'000ULL);
  if (!m) return log_error(m.error().message), 1;
  metrics_ = std::move(*m);
  runner_ = std::make_unique<ActionRunner>(
      actuator_,
      [this]() -> uint64_t {
        auto s = reader_->read();
        return s ? s->compaction.pages_migrated[FRAGD_TRIGGER_FRAGD] : 0;
      },
      state_file());
  if (auto r = runner_->start(); !r) return log_error(r.error().message), 1;

  for (const auto& p : bpf_->programs())
    if (!p.attached && !(p.per_page && cfg_.allocations != "exact"))
      log_warn("program " + p.name + " (" + p.tracepoint + ") is not attached: " + p.error);
  log_info("fragd " FRAGD_VERSION " attached " + std::to_string(bpf_->attached_count()) + "/" +
           std::to_string(bpf_->programs().size()) + " BPF programs (allocation counting " +
           cfg_.allocations + ": " + (bpf_->counting() ? "on" : "off") + "); metrics on http://" + cfg_.listen +
           "/metrics, control socket " + cfg_.socket + ", mode " + cfg_.mode);

  tick();
  if (cfg_.scan_pageblocks) {
    const unsigned order = last_mem_ && last_mem_->pageblock_order ? last_mem_->pageblock_order : 9;
    if (auto s = PageblockScanner::start(cfg_.scan_ns, cfg_.scan_threads, order, iomem_fd, cfg_.proc_root,
                                         cfg_.scan_max_age_ns)) {
      scanner_ = std::move(*s);
    } else {
      scan_off_ = s.error().message;
      log_warn(scan_off_);
    }
  } else {
    scan_off_ = "the pageblock scan is off (pageblocks.scan: false in " + cfg_.source + ")";
  }
  itimerspec its{};
  its.it_interval.tv_sec = static_cast<time_t>(cfg_.tick_ns / 1'000'000'000ULL);
  its.it_interval.tv_nsec = static_cast<long>(cfg_.tick_ns % 1'000'000'000ULL);
  its.it_value = its.it_interval;
  timerfd_settime(tfd, 0, &its, nullptr);
  next_tick_due_ns_ = now_ns() + cfg_.tick_ns;
  notify("READY=1");

  int exit_code = 0;
  for (bool running = true; running;) {
    std::vector<pollfd> fds{{sfd, POLLIN, 0}, {tfd, POLLIN, 0}};
    fds.push_back({runner_->event_fd(), POLLIN, 0});
    const size_t ring_idx = fds.size();
    if (ring_) fds.push_back({ring_buffer__epoll_fd(ring_.get()), POLLIN, 0});
    const size_t wake_idx = fds.size();
    if (wakeups_) fds.push_back({ring_buffer__epoll_fd(wakeups_.get()), POLLIN, 0});
    const size_t scan_idx = fds.size();
    if (scanner_) fds.push_back({scanner_->event_fd(), POLLIN, 0});
    const size_t ctl_first = fds.size();
    for (int fd : control_->poll_fds()) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), control_->timeout_ms()) < 0) {
      if (errno == EINTR) continue;
      log_error("poll: " + std::string(strerror(errno)));
      exit_code = 1;
      break;
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
          reload("SIGHUP");
          continue;
        }
        log_info(std::string("received ") + strsignal(static_cast<int>(si.ssi_signo)) + ", detaching and exiting");
        running = false;
      }
      if (!running) break;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t expirations;
      if (read(tfd, &expirations, sizeof(expirations)) > 0) {
        // The timer's due times are fixed; a loop busy past one of them shows as lateness,
        // and past a whole tick as expirations that were never ticked.
        const uint64_t now = now_ns();
        if (now > next_tick_due_ns_)
          self_.tick_late_max_seconds = std::max(self_.tick_late_max_seconds, (now - next_tick_due_ns_) / 1e9);
        if (expirations > 1) self_.ticks_missed += expirations - 1;
        next_tick_due_ns_ += expirations * cfg_.tick_ns;
        tick();
      }
    }
    if (fds[2].revents & POLLIN) on_finished();
    if (scanner_ && (fds[scan_idx].revents & POLLIN)) on_scan_done();
    if (ring_ && (fds[ring_idx].revents & POLLIN)) ring_buffer__consume(ring_.get());
    if (wakeups_ && (fds[wake_idx].revents & POLLIN)) ring_buffer__consume(wakeups_.get());
    for (size_t i = ctl_first; i < fds.size(); i++)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) control_->on_readable(fds[i].fd);
    control_->on_timer();
  }
  notify("STOPPING=1");
  // A running action ends first (a compaction finishes, a pool resize stops
  // at its next step); then vm.compaction_proactiveness goes back.
  runner_->stop();
  for (const auto& o : runner_->take_finished()) record(o);
  runner_.reset();
  scanner_.reset();
  ring_.reset();
  wakeups_.reset();
  control_.reset();
  bpf_.reset();  // detaches every program
  close(sfd);
  close(tfd);
  return exit_code;
}

}  // namespace
}  // namespace fragd

int main(int argc, char** argv) {
  using namespace fragd;
  CLI::App app{"fragd: traces high-order allocation stalls and compaction with BPF, scores memory "
               "fragmentation, and exports Prometheus metrics"};
  std::string config_path, check_path, listen, socket_path, log_level = "info";
  bool version = false;
  app.add_option("-c,--config", config_path, "policy/config file (YAML), e.g. configs/fragd.yaml");
  app.add_option("--check-config", check_path, "validate FILE and exit (needs no privileges)");
  app.add_option("--listen", listen, "serve /metrics on ADDR:PORT (default 127.0.0.1:9717)");
  app.add_option("--socket", socket_path, "control socket for fragctl (default /run/fragd/fragd.sock)");
  std::string procfs = "/proc", sysfs = "/sys";
  app.add_option("--path.procfs", procfs,
                 "where procfs is mounted: fragd reads /proc files and writes /proc/sys/vm there (default /proc)");
  app.add_option("--path.sysfs", sysfs,
                 "where sysfs is mounted: fragd reads and writes node and hugepage files there (default /sys; "
                 "tracefs and /sys/kernel/btf are always the real ones)");
  app.add_option("--log-level", log_level, "debug, info, warn or error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  app.add_flag("-V,--version", version, "print the version and exit");
  CLI11_PARSE(app, argc, argv);

  if (version) {
    std::printf("fragd %s\n", FRAGD_VERSION);
    return 0;
  }
  set_log_level(log_level == "debug" ? LogLevel::Debug
                : log_level == "warn" ? LogLevel::Warn
                : log_level == "error" ? LogLevel::Error
                                       : LogLevel::Info);
  for (auto [flag, dir] : {std::pair<const char*, std::string*>{"--path.procfs", &procfs}, {"--path.sysfs", &sysfs}}) {
    while (dir->size() > 1 && dir->back() == '/') dir->pop_back();
    struct stat st;
    const bool found = stat(dir->c_str(), &st) == 0;
    if (!found || !S_ISDIR(st.st_mode)) {
      log_error(std::string(flag) + " " + *dir + ": " + (found ? "not a directory" : std::strerror(errno)) +
                "; give the directory where " + (dir == &procfs ? "procfs" : "sysfs") + " is mounted");
      return 1;
    }
  }
  if (!check_path.empty()) {
    auto c = load_and_check_config(check_path, procfs, sysfs);
    if (!c) {
      std::fprintf(stderr, "%s\n", c.error().message.c_str());
      return 1;
    }
    std::printf("%s: OK (mode %s%s, method %s, %zu pool targets)\n", check_path.c_str(), c->mode.c_str(),
                c->policy.dry_run ? ", dry_run" : "", method_name(c->policy.compaction.method),
                c->policy.hugepages.pools.size());
    return 0;
  }

  Config cfg;
  if (!config_path.empty()) {
    auto c = load_and_check_config(config_path, procfs, sysfs);
    if (!c) {
      log_error(c.error().message);
      return 1;
    }
    cfg = *c;
  }
  cfg.proc_root = procfs;
  cfg.sys_root = sysfs;
  if (!listen.empty()) {
    if (auto r = check_listen_address(listen); !r) {
      log_error("--listen: " + r.error().message);
      return 1;
    }
    cfg.listen = listen;
  }
  if (!socket_path.empty()) cfg.socket = socket_path;
  return Daemon(std::move(cfg)).run();
}
