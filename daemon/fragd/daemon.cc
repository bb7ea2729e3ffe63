// SPDX-License-Identifier: Apache-2.0
#include "fragd/daemon.h"

#include <unistd.h>

#include "act/observe.h"
#include "base/text.h"
#include "fragd/views.h"
#include "policy/keys.h"
#include "protocol/wire.h"
#include "sources/memory/score.h"
#include "sources/pollution/pollution.h"
#include "version.h"

namespace fragd {

int Daemon::on_ring_event(void* ctx, void* data, size_t size) {
  auto* d = static_cast<Daemon*>(ctx);
  if (size < sizeof(stall_event)) return 0;
  stall_event e;
  std::memcpy(&e, data, sizeof(e));
  d->self_.counting.trace_events++;
  if (d->control_ && d->control_->trace_subscribers())
    d->self_.counting.trace_events_unsent += d->control_->broadcast_trace(
        nlohmann::json(stall_message(e)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return 0;
}

int Daemon::on_wakeup(void* ctx, void* data, size_t size) {
  auto* d = static_cast<Daemon*>(ctx);
  uint32_t order = 0;
  if (size >= sizeof(order)) std::memcpy(&order, data, sizeof(order));
  if (auto sw = d->counting_.stalled(order, now_ns(), d->bpf_->counting())) d->switch_counting(*sw);
  return 0;
}

void Daemon::switch_counting(const CountingSwitch& sw) {
  const bool was = bpf_->counting();
  if (auto r = bpf_->set_counting(sw.on); !r) {
    warn_once("counting", r.error().message);
    return;
  }
  warn_cleared("counting", "allocation counting switches again");
  counting_.switched(sw.on, now_ns(), was);
  if (!sw.on) bpf_->arm_wakeup();
  log_info(std::string("allocation counting ") + (sw.on ? "on: " : "off: ") + sw.why);
}

void Daemon::steer_counting(uint64_t now) {
  uint64_t entries = 0;
  if (last_bpf_)
    for (unsigned o = cfg_.min_order; o < FRAGD_NR_ORDERS; o++)
      for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) entries += last_bpf_->alloc.direct_entries[o][p];
  std::map<int, uint64_t> free_blocks;
  if (last_mem_)
    for (const auto& z : last_mem_->zones)
      if (z.present_pages > 0) free_blocks[z.node] += blocks_of_order(z.free_blocks, bpf_->pageblock_order());
  if (auto sw = counting_.tick(now, entries, last_mem_ ? &free_blocks : nullptr, bpf_->counting()))
    switch_counting(*sw);
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
  attribute(now_ns());
  steer_counting(now_ns());
  act(now_ns());
  if (bpf_->pollution_enabled()) refresh_pollution();
  if (scanner_ && last_mem_) {
    if (!scan_ref_ || memory_changed(*scan_ref_, *last_mem_, bpf_->pageblock_order())) {
      scanner_->mark_changed();
      scan_ref_ = *last_mem_;
    }
  }
  if (scanner_) {
    for (const auto& m : scanner_->take_messages())
      warn_once(m.rfind("pageblock scan failed", 0) == 0 ? std::string("scan failed") : m, m);
    const uint64_t ok = scanner_->scans_ok();
    if (ok > scans_ok_seen_) warn_cleared("scan failed", "pageblock scans work again");
    scans_ok_seen_ = ok;
  }
  self_.kernel_write_errors = actuator_.write_errors();
  self_.control = control_->stats();
  self_.last_tick_seconds = (now_ns() - t0) / 1e9;
  // The families are built when a scrape asks for them (publish_metrics), not here.
  metrics_->ticked();
  metrics_->set_readiness(unready_programs(bpf_->programs(), cfg_.allocations));
}

// The families from the state of the last tick: run when a scrape asks (MetricsServer::want_fd).
void Daemon::publish_metrics() {
  self_.run_stats = bpf_->run_stats();
  self_.map_memory = bpf_->map_memory();
  ScanStats scan;
  if (scanner_) {
    scan.scan = scanner_->latest();
    scan.ok = scanner_->scans_ok();
    scan.failed = scanner_->scans_failed();
    scan.skipped = scanner_->scans_skipped();
    scan.cost = scanner_->cost();
    scan.now_boot_ns = now_ns(CLOCK_BOOTTIME);
  }
  ActStats& act = actions_.stats();
  act.nodes = engine_->nodes();
  act.pools = engine_->pools();
  act.proactiveness_raised = engine_->proactiveness_raised();
  act.budget_used_ns = engine_->budget_used_ns();
  act.budget_ns = cfg_.policy.compaction.cpu_budget_ns;
  act.mode = cfg_.policy.act ? "act" : "observe";
  act.dry_run = cfg_.policy.dry_run;
  act.method = method_name(cfg_.policy.compaction.method);
  ExportFrame frame;
  frame.plan = series_plan(cfg_.metrics, cfg_.min_order, cfg_.policy.compaction.demand.min_order);
  frame.bpf = last_bpf_ ? &*last_bpf_ : nullptr;
  frame.mem = last_mem_ ? &*last_mem_ : nullptr;
  frame.programs = &bpf_->programs();
  frame.self = &self_;
  frame.act = &act;
  frame.scan = scanner_ ? &scan : nullptr;
  frame.pollution = pollution_ ? &*pollution_ : nullptr;
  const std::vector<NodeForecast> forecast = forecast_.forecast();
  frame.forecast = &forecast;
  frame.forecast_window_ns = forecast_.window_ns();
  frame.attribution = attribution_.view();
  frame.cgroup_anon = attribution_.cgroup_anon();
  metrics_->publish(build_families(frame));
}

// Who stalls, who pays, where (sources/attribution/rounds.h decides when to read).
void Daemon::attribute(uint64_t now) {
  if (!last_bpf_ || !symbols_ || !cgroup_paths_) return;
  attribution_.tick(
      now, last_bpf_->alloc,
      {[this](auto& sites, auto& cgroups) { return reader_->read_attribution(sites, cgroups); },
       [this](int32_t id) { return reader_->read_stack(id); }, [this](uint64_t id) { reader_->forget_cgroup(id); }},
      symbols_.get(), *cgroup_paths_,
      [this](const std::string& path) {
        return read_cgroup_anon(cgroup_paths_->root(), cfg_.sys_root + "/fs/cgroup/memory", path);
      },
      {[this](const std::string& k, const std::string& m) { warn_once(k, m); },
       [this](const std::string& k, const std::string& m) { warn_cleared(k, m); }});
}

// The /proc and sysfs sources (sources/memory/files.h), then what follows a new snapshot.
void Daemon::read_files(uint64_t now) {
  if (!files_.tick(now, last_mem_)) return;
  forecast_.observe(now, last_mem_->zones);
  check_nodes();
}

// Nodes come and go with the zones of the snapshot (a node taken offline,
// memory hot-removed): each change is logged once, and the machine facts (the
// nodes `fragctl compact --node` and `pool set --node` may name) are read
// again. The engine forgets a node missing from its observation, so fragd
// does not act on it, and its metrics go with its zones.
void Daemon::check_nodes() {
  if (auto change = nodes_.update(last_mem_->zones)) {
    for (int n : change->gone)
      log_warn("node " + std::to_string(n) + " went offline (no populated zone in " + cfg_.proc_root +
               "/zoneinfo): its metrics are gone and fragd does not act on it");
    for (int n : change->came) log_info("node " + std::to_string(n) + " is online");
    facts_stale_ = true;
  }
  if (!facts_stale_ || !files_.faults().due("nodes", now_ns())) return;
  if (auto f = read_machine_facts(cfg_.proc_root, cfg_.sys_root)) {
    facts_ = *f;
    facts_stale_ = false;
    if (files_.faults().ok("nodes", now_ns())) log_info("the node list under " + cfg_.sys_root + " reads again");
  } else {
    self_.collect_errors_files["nodes"]++;
    if (files_.faults().failed("nodes", errno_name(f.error().err), now_ns()))
      log_warn(f.error().message + " (fragctl requests naming a node are checked against the last good read)");
  }
}

void Daemon::act(uint64_t now) {
  if (!engine_ || !runner_ || !last_mem_) return;
  auto r = engine_->decide(observation_of(now, &*last_mem_, last_bpf_ ? &*last_bpf_ : nullptr,
                                          std::max(cfg_.policy.compaction.demand.min_order, cfg_.min_order)));
  if (!r) return;
  log_debug("starting action " + std::to_string(r->id) + " " + action_name(r->kind) + ": " + r->reason);
  runner_->submit(*r, cfg_.policy);
}

void Daemon::record(const ActionOutcome& o) {
  engine_->finished(o);
  actions_.record(o);
}

void Daemon::on_finished() {
  auto done = runner_->take_finished();
  for (const auto& o : done) record(o);
  // Fresh numbers before the next decision: the action changed them.
  if (!done.empty()) tick();
}

Result<void> Daemon::take_act_lock(const std::string& why) {
  if (act_lock_) return {};
  auto claim = claim_host_settings(actuator_, why);
  if (!claim) return claim.error();
  for (const auto& m : claim->report.notes) log_warn(m);
  for (const auto& m : claim->report.restored)
    log_warn(m + ", left changed by a fragd that did not exit cleanly (" + kSavedStateFile + ")");
  for (const auto& m : claim->report.failed) log_error(m);
  act_lock_ = std::move(claim->lock);
  return {};
}

nlohmann::json Daemon::reload(const std::string& why) {
  if (cfg_.source.empty())
    return error_answer("fragd was started without --config: there is no policy file to reload");
  auto c = load_and_check_config(cfg_.source, cfg_.proc_root, cfg_.sys_root);
  if (!c) {
    actions_.stats().reloads_failed++;
    log_error("reload (" + why + ") failed, keeping the running policy: " + c.error().message);
    return error_answer(c.error().message + " (the running policy is kept)");
  }
  if (c->policy.act)
    if (auto r = take_act_lock("switch to mode act"); !r) {
      actions_.stats().reloads_failed++;
      log_error("reload (" + why + ") refused, keeping the running policy: " + r.error().message);
      return error_answer(r.error().message + " (the running policy is kept)");
    }
  // What the command line set stays; keys read at start keep their running values (named in
  // the reply), and with socket_group the group the socket has; the rest apply now.
  Config next = std::move(*c);
  keep_command_line(cfg_, next);
  const std::vector<std::string> restart = keep_restart_keys(cfg_, next);
  next.socket_gid = cfg_.socket_gid;
  cfg_ = std::move(next);
  attribution_.set_limits(cfg_.top_cgroups, cfg_.top_callsites);
  forecast_.set_window(cfg_.forecast_window_ns);
  counting_.set({cfg_.allocations, cfg_.adaptive_hold_ns, cfg_.adaptive_free_blocks});
  engine_->set_policy(cfg_.policy);
  for (const auto& o : engine_->take_dropped()) record(o);
  if (auto f = read_machine_facts(cfg_.proc_root, cfg_.sys_root)) facts_ = *f;
  actions_.stats().reloads_ok++;
  std::string msg = "policy reloaded from " + cfg_.source + " (" + why + "): mode " + cfg_.mode +
                    (cfg_.policy.dry_run ? ", dry_run" : "") + ", method " +
                    method_name(cfg_.policy.compaction.method);
  if (!restart.empty()) {
    msg += "; changed but needing a restart:";
    for (const auto& k : restart) msg += " " + k;
  }
  log_info(msg);
  return ReloadReply{msg};
}

nlohmann::json Daemon::action_state(uint64_t id) const {
  auto r = actions_.state(id, runner_ ? runner_->running() : std::nullopt, now_ns(), now_ns(CLOCK_REALTIME));
  if (!r) return error_answer(r.error().message);
  return *r;
}

void Daemon::add_policy_status(StatusReply& s) const {
  const uint64_t mono = now_ns(), real = now_ns(CLOCK_REALTIME);
  PolicyStatus p;
  p.mode = cfg_.policy.act ? "act" : "observe";
  p.dry_run = cfg_.policy.dry_run;
  p.method = method_name(cfg_.policy.compaction.method);
  p.source = cfg_.source;
  p.reloads = actions_.stats().reloads_ok;
  p.reload_errors = actions_.stats().reloads_failed;
  p.proactiveness_raised = engine_->proactiveness_raised();
  p.budget_used_ns = engine_->budget_used_ns();
  p.budget_ns = cfg_.policy.compaction.cpu_budget_ns;
  p.budget_cuts = actions_.cuts();
  s.policy = p;
  s.policy_nodes.emplace();
  for (const auto& n : engine_->nodes()) {
    PolicyNodeStatus ns;
    ns.node = n.node;
    ns.score = n.score;
    ns.hot = n.hot;
    if (n.floor) ns.floor = *n.floor;
    ns.misses = n.misses;
    ns.waiting = n.waiting;
    ns.next_allowed_in_ns = n.next_allowed_ns > mono ? n.next_allowed_ns - mono : 0;
    s.policy_nodes->push_back(std::move(ns));
  }
  s.pools.emplace();
  for (const auto& p : engine_->pools())
    s.pools->push_back({p.node, p.size_kib, p.target, p.reached, p.manual, p.last_result});
  s.actions = actions_.last(20, mono, real);
  auto r = runner_ ? runner_->running() : std::nullopt;
  s.action_running = r ? std::optional<ActionSummary>(action_summary(*r)) : std::nullopt;
}

}  // namespace fragd
