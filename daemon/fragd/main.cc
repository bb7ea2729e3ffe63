// fragd: watches high-order allocation stalls, compaction and memory
// fragmentation with BPF tracepoints and /proc, and exports them.
#include <bpf/libbpf.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>

#ifdef FRAGD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "core/config.h"
#include "core/log.h"
#include "core/procfs.h"
#include "fragd/bpf_loader.h"
#include "fragd/bpf_reader.h"
#include "fragd/control.h"
#include "fragd/metrics.h"
#include "fragd/views.h"
#include "version.h"

namespace fragd {
namespace {

uint64_t now_ns(clockid_t clk = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clk, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

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
  nlohmann::json handle(const std::string& cmd);
  static int on_ring_event(void* ctx, void* data, size_t size);

  Config cfg_;
  std::unique_ptr<BpfPrograms> bpf_;
  std::unique_ptr<BpfReader> reader_;
  std::unique_ptr<MetricsServer> metrics_;
  std::unique_ptr<ControlServer> control_;
  ring_buffer* ring_ = nullptr;
  std::optional<BpfSnapshot> last_bpf_;
  std::optional<MemSnapshot> last_mem_;
  SelfStats self_;
  uint64_t start_ns_ = 0;
  uint64_t last_pti_ns_ = 0;
  std::set<std::string> warned_;

  // A problem that persists is logged once, not every tick (it stays counted in metrics).
  void warn_once(const std::string& w) {
    if (warned_.size() < 1000 && warned_.insert(w).second) log_warn(w);
  }
};

int Daemon::on_ring_event(void* ctx, void* data, size_t size) {
  auto* d = static_cast<Daemon*>(ctx);
  if (size < sizeof(stall_event)) return 0;
  stall_event e;
  std::memcpy(&e, data, sizeof(e));
  d->self_.trace_events++;
  if (d->control_ && d->control_->trace_subscribers())
    d->self_.trace_events_unsent += d->control_->broadcast_trace(
        trace_event_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return 0;
}

void Daemon::tick() {
  const uint64_t t0 = now_ns();
  if (auto s = reader_->read()) {
    last_bpf_ = std::move(*s);
  } else {
    self_.collect_errors_bpf++;
    log_warn(s.error().message);
  }
  // pagetypeinfo only every pagetypeinfo_interval; in between, its counts are carried over.
  const bool pti_due = !last_mem_ || t0 - last_pti_ns_ >= cfg_.pagetypeinfo_ns;
  if (auto m = read_snapshot("/proc", "/sys", pti_due ? nullptr : &*last_mem_)) {
    if (pti_due) last_pti_ns_ = t0;
    for (const auto& w : m->warnings) warn_once(w);
    last_mem_ = std::move(*m);
  } else {
    self_.collect_errors_procfs++;
    warn_once(m.error().message);
    last_mem_.reset();
  }
  self_.last_tick_seconds = (now_ns() - t0) / 1e9;
  metrics_->publish(build_families(cfg_.min_order, last_bpf_ ? &*last_bpf_ : nullptr,
                                   last_mem_ ? &*last_mem_ : nullptr, bpf_->programs(), self_));
}

nlohmann::json Daemon::handle(const std::string& cmd) {
  if (cmd == "hist") {
    auto s = reader_->read();  // fresh, so `fragctl hist --interval` sees exact intervals
    if (!s) return {{"ok", false}, {"error", s.error().message}};
    return hist_answer(*s, cfg_.min_order, now_ns() - start_ns_);
  }
  if (cmd == "status")
    return status_answer(last_mem_ ? &*last_mem_ : nullptr, last_bpf_ ? &*last_bpf_ : nullptr, bpf_->programs(),
                         cfg_.tick_ns);
  if (cmd == "trace") return {{"ok", true}, {"stream", "trace"}};
  return {{"ok", false}, {"error", "unknown command '" + cmd + "' (known: hist, status, trace)"}};
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

  // Things that fail for reasons outside BPF come first: a taken port or socket.
  auto m = MetricsServer::start(cfg_.listen);
  if (!m) return log_error(m.error().message), 1;
  metrics_ = std::move(*m);
  auto c = ControlServer::start(cfg_.socket, [this](const std::string& cmd, const nlohmann::json&) {
    return handle(cmd);
  });
  if (!c) return log_error(c.error().message), 1;
  control_ = std::move(*c);

  if (auto r = check_kernel_btf(); !r) return log_error(r.error().message), 1;
  if (auto r = check_bpf_privileges(); !r) return log_error(r.error().message), 1;
  BpfOptions opts;
  opts.min_order = cfg_.min_order;
  opts.slow_stall_ns = cfg_.slow_stall_ns;
  opts.self_tgid = static_cast<uint32_t>(getpid());
  auto b = BpfPrograms::create(opts);
  if (!b) return log_error(b.error().message), 1;
  bpf_ = std::move(*b);
  reader_ = std::make_unique<BpfReader>(*bpf_);
  ring_ = ring_buffer__new(bpf_->slow_stalls_fd(), on_ring_event, this, nullptr);
  if (!ring_) log_warn("cannot open the slow-stall ring buffer: `fragctl trace` will show nothing");
  start_ns_ = now_ns();

  for (const auto& p : bpf_->programs())
    if (!p.attached) log_warn("program " + p.name + " (" + p.tracepoint + ") is not attached: " + p.error);
  log_info("fragd " FRAGD_VERSION " attached " + std::to_string(bpf_->attached_count()) + "/" +
           std::to_string(bpf_->programs().size()) + " BPF programs; metrics on http://" + cfg_.listen +
           "/metrics, control socket " + cfg_.socket + ", mode " + cfg_.mode);

  tick();
  itimerspec its{};
  its.it_interval.tv_sec = static_cast<time_t>(cfg_.tick_ns / 1'000'000'000ULL);
  its.it_interval.tv_nsec = static_cast<long>(cfg_.tick_ns % 1'000'000'000ULL);
  its.it_value = its.it_interval;
  timerfd_settime(tfd, 0, &its, nullptr);
  notify("READY=1");

  int exit_code = 0;
  for (bool running = true; running;) {
    std::vector<pollfd> fds{{sfd, POLLIN, 0}, {tfd, POLLIN, 0}};
    if (ring_) fds.push_back({ring_buffer__epoll_fd(ring_), POLLIN, 0});
    const size_t ctl_first = fds.size();
    for (int fd : control_->poll_fds()) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      log_error("poll: " + std::string(strerror(errno)));
      exit_code = 1;
      break;
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
          log_info("SIGHUP: configuration reload takes effect on restart in this version (" + cfg_.source + ")");
          continue;
        }
        log_info(std::string("received ") + strsignal(static_cast<int>(si.ssi_signo)) + ", detaching and exiting");
        running = false;
      }
      if (!running) break;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t expirations;
      if (read(tfd, &expirations, sizeof(expirations)) > 0) tick();
    }
    if (ring_ && (fds[2].revents & POLLIN)) ring_buffer__consume(ring_);
    for (size_t i = ctl_first; i < fds.size(); i++)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) control_->on_readable(fds[i].fd);
  }
  notify("STOPPING=1");
  if (ring_) ring_buffer__free(ring_);
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
  if (!check_path.empty()) {
    auto c = load_config(check_path);
    if (!c) {
      std::fprintf(stderr, "%s\n", c.error().message.c_str());
      return 1;
    }
    std::printf("%s: OK (mode %s)\n", check_path.c_str(), c->mode.c_str());
    return 0;
  }

  Config cfg;
  if (!config_path.empty()) {
    auto c = load_config(config_path);
    if (!c) {
      log_error(c.error().message);
      return 1;
    }
    cfg = *c;
  }
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
