// SPDX-License-Identifier: Apache-2.0
#include "fragd/daemon.h"

#include "fragd/programs.h"
#include "policy/keys.h"
#include "protocol/wire.h"

namespace fragd {

// The one order there is: the memory concern's read of /proc and sysfs, then the stalls and
// compaction concerns' reads of their maps, then every other concern with all of them in its Tick.
void Daemon::tick() {
  const uint64_t t0 = now_ns();
  memory_->tick(Tick{now_ns()});
  stalls_->tick(last_tick());
  compaction_->tick(last_tick());
  const Tick t = last_tick();
  for (Concern* c : concerns_)
    if (c != memory_.get() && c != stalls_.get() && c != compaction_.get()) c->tick(t);
  self_.last_tick_seconds = (now_ns() - t0) / 1e9;
  // The families are built when a scrape asks for them (publish_metrics), not here.
  metrics_->ticked();
  metrics_->set_readiness(unready_programs(programs_->programs(), sh_.cfg.allocations));
}

// The families from the state of the last tick: run when a scrape asks (MetricsServer::want_fd).
void Daemon::publish_metrics() {
  // fragd's own counters: the Daemon's, and what each concern counted.
  self_.run_stats = programs_->run_stats();
  self_.map_memory = programs_->map_memory();
  self_.control = control_->stats();
  self_.collect_errors_bpf = stalls_->read_errors() + compaction_->read_errors() + pageblocks_->read_errors();
  self_.collect_errors_files = memory_->collect_errors();
  self_.counting = stalls_->counting_stats();
  self_.kernel_write_errors = act_->write_errors();
  const SeriesPlan plan = series_plan(sh_.cfg.metrics, sh_.cfg.min_order, sh_.cfg.policy.compaction.demand.min_order);
  Families out = own_families(self_, programs_->programs(), plan);
  const Tick last = last_tick();
  for (Concern* c : concerns_) c->metrics(plan, last, out);
  metrics_->publish(std::move(out));
}

std::optional<nlohmann::json> Daemon::handle(const ControlRequest& req, Reader reader, uint64_t token) {
  // parse_request checked every field's type and range; ControlServer answered
  // act requests from anyone but root already.
  if (req.cmd == Command::Reload) return reload("fragctl reload");
  if (req.cmd == Command::Status) {
    StatusReply r;
    program_status(sh_.cfg, *programs_, r);
    const Tick last = last_tick();
    for (const Concern* c : concerns_) c->status(r, last);
    restrict_status(r, reader);
    return r;
  }
  for (Concern* c : concerns_)
    if (c->answers(req.cmd)) return c->answer(req, reader, token, last_tick());
  return error_answer("no part of fragd answers \"" + std::string(command_name(req.cmd)) + "\"");  // not reached
}

Tick Daemon::last_tick() const {
  return Tick{now_ns(),
              memory_->snapshot(),
              &memory_->facts(),
              &memory_->tick_forecast(),
              programs_->counting(),
              stalls_ ? stalls_->snapshot() : nullptr,
              compaction_ ? compaction_->snapshot() : nullptr};
}

nlohmann::json Daemon::reload(const std::string& why) {
  const Config& cfg = sh_.cfg;
  if (cfg.source.empty()) return error_answer("fragd was started without --config: there is no policy file to reload");
  auto c = load_and_check_config(cfg.source, cfg.proc_root, cfg.sys_root);
  Result<void> ok = c ? Result<void>{} : Result<void>{c.error()};
  for (Concern* k : concerns_)
    if (ok) ok = k->accept(*c);
  if (!ok) {
    act_->stats().reloads_failed++;
    log_error("reload (" + why + ") " + (c ? "refused" : "failed") + ", keeping the running policy: " +
              ok.error().message);
    return error_answer(ok.error().message + " (the running policy is kept)");
  }
  // What the command line set stays; keys read at start keep their running values (named in
  // the reply), and with socket_group the group the socket has; the rest apply now.
  Config next = std::move(*c);
  keep_command_line(cfg, next);
  const std::vector<std::string> restart = keep_restart_keys(cfg, next);
  next.socket_gid = cfg.socket_gid;
  sh_.cfg = std::move(next);
  for (Concern* k : concerns_) k->reload();
  act_->stats().reloads_ok++;
  std::string msg = "policy reloaded from " + cfg.source + " (" + why + "): mode " + cfg.mode +
                    (cfg.policy.dry_run ? ", dry_run" : "") + ", method " + method_name(cfg.policy.compaction.method);
  if (!restart.empty()) {
    msg += "; changed but needing a restart:";
    for (const auto& k : restart) msg += " " + k;
  }
  log_info(msg);
  return ReloadReply{msg};
}

}  // namespace fragd
