// SPDX-License-Identifier: Apache-2.0
#include "fragd/daemon.h"

#include <signal.h>

#include <cstring>

#ifdef FRAGD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "base/text.h"
#include "fragd/event_loop.h"
#include "fragd/programs.h"
#include "fragd/privileges.h"

namespace fragd {
namespace {

void notify(const char* state) {
#ifdef FRAGD_HAVE_SYSTEMD
  sd_notify(0, state);
#else
  (void)state;
#endif
}

// The concerns' ports to the loaded programs and their reader (both live as long as the Daemon).
StallsPort stalls_port(BpfPrograms& progs) {
  return {progs.slow_stalls_fd(),
          progs.wakeups_fd(),
          [&progs] { return progs.counting(); },
          [&progs](bool on) { return progs.set_counting(on); },
          [&progs] { progs.arm_wakeup(); },
          progs.pageblock_order(),
          progs.map_fds().stalls};
}
AttributionMaps attribution_maps(const BpfReader& reader) {
  return {[&reader](auto& sites, auto& cgroups) { return reader.read_attribution(sites, cgroups); },
          [&reader](int32_t id) { return reader.read_stack(id); },
          [&reader](uint64_t id) { reader.forget_cgroup(id); }};
}
PollutionPort pollution_port(const BpfPrograms& progs, const BpfReader& reader) {
  return {progs.pollution_enabled(),
          progs.pageblock_order(),
          [&reader] { return reader.read_pollution_counters(); },
          [&reader] { return reader.read_pollution(); },
          {[&reader](uint64_t b) { return reader.polluted_last_boot_ns(b); },
           [&reader](uint64_t b) { return reader.release_polluted(b); }},
          [&reader] { return reader.read_fallback(); }};
}

}  // namespace

// Start-up, in the order privileges allow: what fails for reasons outside BPF first, then BPF,
// then what needs a capability (kallsyms, iomem), then the capabilities go, then the threads.
int Daemon::start() {
  act_ = std::make_unique<ActConcern>(sh_, [this] { tick(); }, [this](const SupplyAsk& a, const Tick& t) -> Result<Supply> {
    if (!pageblocks_) return make_error("fragd is starting: ask again in a second");
    return pageblocks_->supply(a, t);
  });
  // Act mode: one fragd per host acts (concerns/act/act_lock.h), and what a fragd that died left
  // changed goes back, before the control socket, BPF and any write.
  if (auto r = act_->lock_if_acting(); !r) return log_error(r.error().message), 1;
  ControlOptions copt;
  copt.path = sh_.cfg.socket;
  copt.group = sh_.cfg.socket_gid;
  auto c = ControlServer::start(copt, [this](const ControlRequest& req, long uid, uint64_t token) {
    return handle(req, reader_of(uid), token);  // what the answer may carry depends on who asks
  });
  if (!c) return log_error(c.error().message), 1;
  control_ = std::move(*c);
  memory_ = std::make_unique<MemoryConcern>(sh_);
  auto loaded = load_programs(sh_.cfg);
  if (!loaded) return log_error(loaded.error().message), 1;
  programs_ = std::move(loaded->programs);
  reader_ = std::move(loaded->reader);
  self_.kernel = kernel_release();
  act_->own_writers(*programs_);
  stalls_ = std::make_unique<StallsConcern>(sh_, *control_, stalls_port(*programs_), loaded->start_ns);
  compaction_ = std::make_unique<CompactionConcern>(sh_, CompactionPort{programs_->map_fds().compaction});
  // Every capability was for loading and attaching, and for the files opened here: drop them
  // while fragd has one thread (capabilities are per thread), before the HTTP workers, the
  // action runner and the scanner start.
  attribution_ = std::make_unique<AttributionConcern>(sh_, attribution_maps(*reader_), loaded->start_ns);
  pageblocks_ = std::make_unique<PageblocksConcern>(sh_, *control_, pollution_port(*programs_, *reader_),
                                                    std::move(loaded->spans));
  features_ = std::make_unique<FeaturesConcern>(
      sh_, [this](const SupplyAsk& a, const Tick& t) { return pageblocks_->supply(a, t); },
      [this] { return pageblocks_->scanned(); });
  if (auto d = drop_capabilities()) log_info(*d);
  else return log_error(d.error().message), 1;
  auto m = MetricsServer::start(sh_.cfg.listen, 3 * sh_.cfg.tick_ns + 5'000'000'000ULL);
  if (!m) return log_error(m.error().message), 1;
  metrics_ = std::move(*m);
  metrics_->set_scrape_families([] {  // process_*: read at each scrape; absent if /proc/self cannot be read
    auto p = read_process_stats();
    return p ? process_families(*p) : Families{};
  });
  if (auto r = act_->start_runner(*reader_); !r) return log_error(r.error().message), 1;
  concerns_ = {memory_.get(), attribution_.get(), stalls_.get(), compaction_.get(),
               act_.get(),    pageblocks_.get(),  features_.get()};
  log_programs(sh_.cfg, *programs_);
  tick();
  pageblocks_->start_scanner(memory_->snapshot());
  return 0;
}

int Daemon::run() {
  signal(SIGPIPE, SIG_IGN);
  EventLoop loop([] { return now_ns(); });
  // Blocked before start() makes any thread, so that every thread inherits the mask.
  auto sig = loop.signals({SIGINT, SIGTERM, SIGHUP}, [&](int signo) {
    if (signo == SIGHUP) return (void)reload("SIGHUP");
    log_info(std::string("received ") + strsignal(signo) + ", detaching and exiting");
    loop.stop();
  });
  if (!sig) return log_error(sig.error().message), 1;
  if (int code = start()) return stop(), code;
  // The timer's due times are fixed; a loop busy past one of them shows as lateness,
  // and past a whole tick as expirations that were never ticked.
  auto timer = loop.timer(sh_.cfg.tick_ns, [this](uint64_t expirations) {
    ticks_.fired(now_ns(), expirations);
    self_.tick_late_max_seconds = ticks_.late_max_seconds();
    self_.ticks_missed = ticks_.missed();
    tick();
  });
  if (!timer) return log_error(timer.error().message), stop(), 1;
  ticks_ = TickClock(now_ns(), sh_.cfg.tick_ns);
  notify("READY=1");
  for (Concern* c : concerns_) c->watch(loop);
  loop.watch(metrics_->want_fd(), [this](short) {
    metrics_->take_want();
    publish_metrics();
  });
  loop.watch_set([this] { return control_->poll_fds(); }, [this](const pollfd& p) { control_->on_poll(p.fd, p.revents); },
                 [this] { return control_->timeout_ms(); }, [this] { control_->service(); });
  // The watchdog (WatchdogSec= in the unit): pinged from this loop, so a loop stuck anywhere
  // (a tick, a control client, a reload) stops the pings. Every quarter of the interval,
  // whatever tick_interval is: the poll wakes up for it.
#ifdef FRAGD_HAVE_SYSTEMD
  if (uint64_t usec = 0; sd_watchdog_enabled(0, &usec) > 0) loop.every(usec * 1000 / 4, [] { notify("WATCHDOG=1"); });
#endif
  const int exit_code = loop.run();
  if (exit_code) log_error("poll: " + std::string(strerror(loop.error())));
  notify("STOPPING=1");
  metrics_->set_readiness("stopping: fragd is exiting");
  stop();
  return exit_code;
}

// A running action ends first and the saved settings go back (ActConcern::stop); then the
// scanner, the ring buffers and the control server; the BPF programs detach last.
void Daemon::stop() {
  if (act_) act_->stop();
  concerns_.clear();
  features_.reset();  // its file goes: a stopped fragd labels nothing
  pageblocks_.reset();
  stalls_.reset();
  compaction_.reset();
  attribution_.reset();
  memory_.reset();
  control_.reset();
  reader_.reset();
  programs_.reset();
  act_.reset();  // the act lock goes after what the runner put back
}

}  // namespace fragd
