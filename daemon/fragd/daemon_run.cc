// SPDX-License-Identifier: Apache-2.0
#include "fragd/daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#ifdef FRAGD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "base/text.h"
#include "fragd/event_loop.h"
#include "fragd/settings.h"
#include "fragd/privileges.h"
#include "kernel/memmap.h"
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

}  // namespace

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

  // Act mode: one fragd per host acts (act/act_lock.h). The lock comes before the
  // control socket, BPF and any write, and what a fragd that died left changed goes back.
  if (cfg_.policy.act)
    if (auto r = take_act_lock("run in act mode"); !r) return log_error(r.error().message), 1;

  // Things that fail for reasons outside BPF come first: a taken socket.
  ControlOptions copt;
  copt.path = cfg_.socket;
  copt.group = cfg_.socket_gid;
  auto c = ControlServer::start(copt, [this](const ControlRequest& req, long uid,
                                             uint64_t token) -> std::optional<nlohmann::json> {
    // What the answer may carry depends on who asks (protocol/readers.h).
    return handle(req, reader_of(uid), token);
  });
  if (!c) return log_error(c.error().message), 1;
  control_ = std::move(*c);

  if (auto f = read_machine_facts(cfg_.proc_root, cfg_.sys_root)) facts_ = *f;
  else log_warn(f.error().message);
  engine_ = std::make_unique<Engine>(cfg_.policy);

  if (auto r = check_kernel_btf(); !r) return log_error(r.error().message), 1;
  if (auto r = check_bpf_privileges(); !r) return log_error(r.error().message), 1;
  uint64_t max_pfn = 0;
  if (auto zi = read_text_file(cfg_.proc_root + "/zoneinfo")) {
    if (auto sp = parse_zone_spans(*zi, cfg_.proc_root + "/zoneinfo")) {
      spans_ = std::move(*sp);
      for (const auto& z : spans_) max_pfn = std::max(max_pfn, z.end_pfn);
    }
  }
  auto b = BpfPrograms::create(bpf_options(cfg_, static_cast<uint32_t>(getpid()), max_pfn));
  if (!b) return log_error(b.error().message), 1;
  bpf_ = std::move(*b);
  // The processes that write compact_memory / nodeN/compact for fragd count as trigger "fragd".
  actuator_.set_writer_hooks(ChildWriteHooks{[this](pid_t pid) { return bpf_->own_writer(static_cast<uint32_t>(pid)); },
                                             [this](pid_t pid) { bpf_->disown_writer(static_cast<uint32_t>(pid)); }});
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
  counting_.start(start_ns_, bpf_->counting());
  self_.kernel = kernel_release();
  self_.counting.allocations_mode = cfg_.allocations;

  // Every capability was for loading and attaching: drop them while fragd has one
  // thread (capabilities are per thread), before the HTTP workers, the action
  // runner and the scanner start.
  // /proc/iomem shows addresses only through an fd opened with CAP_SYS_ADMIN: open it now for the scanner.
  const int iomem_fd = cfg_.scan_pageblocks ? ::open((cfg_.proc_root + "/iomem").c_str(), O_RDONLY | O_CLOEXEC) : -1;
  // /proc/kallsyms likewise (settings.h).
  const KallsymsFile ks = open_kallsyms(cfg_);
  if (!ks.warning.empty()) log_warn(ks.warning);
  symbols_ = std::make_unique<KernelSymbols>(ks.fd, ks.path);
  cgroup_paths_ = std::make_unique<CgroupPaths>(cfg_.sys_root);
  if (auto d = drop_capabilities()) log_info(*d);
  else return log_error(d.error().message), 1;
  auto m = MetricsServer::start(cfg_.listen, 3 * cfg_.tick_ns + 5'000'000'000ULL);
  if (!m) return log_error(m.error().message), 1;
  metrics_ = std::move(*m);
  // process_*: read at each scrape; absent if /proc/self cannot be read.
  metrics_->set_scrape_families([] {
    auto p = read_process_stats();
    return p ? process_families(*p) : Families{};
  });
  runner_ = std::make_unique<ActionRunner>(
      actuator_,
      [this]() -> uint64_t {
        auto s = reader_->read();
        return s ? s->compaction.pages_migrated[FRAGD_TRIGGER_FRAGD] : 0;
      },
      kSavedStateFile);
  if (auto r = runner_->start(); !r) return log_error(r.error().message), 1;

  for (const auto& p : bpf_->programs())
    if (!p.attached && !(p.per_page && cfg_.allocations != "exact"))
      log_warn("program " + p.name + " (" + p.tracepoint + ") is not attached: " + p.error);
  std::string absent;
  for (const auto& n : bpf_->absent()) absent += (absent.empty() ? "" : ", ") + n;
  if (!absent.empty()) log_info("not loaded, for tracepoints this kernel lacks: " + absent);
  log_info("fragd " FRAGD_VERSION " attached " + std::to_string(bpf_->attached_count()) + "/" +
           std::to_string(bpf_->programs().size()) + " BPF programs (allocation counting " +
           cfg_.allocations + ": " + (bpf_->counting() ? "on" : "off") + "); metrics on http://" + cfg_.listen +
           "/metrics, control socket " + cfg_.socket + ", mode " + cfg_.mode);

  tick();
  if (cfg_.scan_pageblocks) {
    const unsigned order = last_mem_ && last_mem_->pageblock_order ? last_mem_->pageblock_order : 9;
    if (auto s = PageblockScanner::start(scan_settings(cfg_, order), iomem_fd)) {
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
  ticks_ = TickClock(now_ns(), cfg_.tick_ns);
  notify("READY=1");
  EventLoop loop([] { return now_ns(); });
  loop.watch(sfd, [&](short) {
    signalfd_siginfo si;
    while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
      if (si.ssi_signo == SIGHUP) {
        reload("SIGHUP");
        continue;
      }
      log_info(std::string("received ") + strsignal(static_cast<int>(si.ssi_signo)) + ", detaching and exiting");
      loop.stop();
    }
  });
  loop.watch(tfd, [&](short) {
    uint64_t expirations;
    if (read(tfd, &expirations, sizeof(expirations)) > 0) {
      // The timer's due times are fixed; a loop busy past one of them shows as lateness,
      // and past a whole tick as expirations that were never ticked.
      ticks_.fired(now_ns(), expirations);
      self_.tick_late_max_seconds = ticks_.late_max_seconds();
      self_.ticks_missed = ticks_.missed();
      tick();
    }
  });
  loop.watch(runner_->event_fd(), [this](short) { on_finished(); });
  if (scanner_) loop.watch(scanner_->event_fd(), [this](short) { on_scan_done(); });
  loop.watch(metrics_->want_fd(), [this](short) {
    metrics_->take_want();
    publish_metrics();
  });
  if (ring_) loop.watch(ring_buffer__epoll_fd(ring_.get()), [this](short) { ring_buffer__consume(ring_.get()); });
  if (wakeups_)
    loop.watch(ring_buffer__epoll_fd(wakeups_.get()), [this](short) { ring_buffer__consume(wakeups_.get()); });
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
  // A running action ends first (a compaction write's process is killed, a
  // pool resize stops at its next step); then the saved settings go back.
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

int restore_saved_settings(const std::string& proc_root, const std::string& sys_root) {
  struct stat st;
  if (lstat(kRunDir, &st) != 0 && errno == ENOENT) {
    log_info(std::string("nothing to restore: ") + kRunDir + " does not exist");
    return 0;
  }
  SysfsActuator actuator(proc_root, sys_root);
  auto claim = claim_host_settings(actuator, "restore the saved settings");
  if (!claim) {
    const Error& e = claim.error();
    if (e.err != EWOULDBLOCK) return log_error(e.message), 1;
    // Not an error: the running fragd owns the saved settings and puts them back when it stops.
    log_info("nothing done: " + e.message.substr(e.message.find(": ") + 2) +
             "; it puts back what it changed when it stops");
    return 0;
  }
  const RestoreReport& rep = claim->report;
  for (const auto& m : rep.notes) log_info(m);
  for (const auto& m : rep.restored) log_info(m + " (from " + kSavedStateFile + ")");
  for (const auto& m : rep.failed) log_error(m);
  if (rep.restored.empty() && rep.failed.empty() && rep.notes.empty())
    log_info(std::string("nothing to restore: no setting saved in ") + kSavedStateFile);
  return rep.ok() ? 0 : 1;
}

}  // namespace fragd
