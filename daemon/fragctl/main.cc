// fragctl: command-line client of fragd's control socket.
//
//   fragctl [--socket PATH] hist [--order N] [--interval SEC [--count N]] [--json]
//   fragctl [--socket PATH] status [--json]
//   fragctl [--socket PATH] trace [--json]
//   fragctl [--socket PATH] map [--node N] [--zone Z] [--max-age SEC] [--png FILE] [--json]
//   fragctl [--socket PATH] compact [--node N] [--timeout SEC] [--json]
//   fragctl [--socket PATH] pool set SIZE COUNT [--node N] [--timeout SEC] [--json]
//   fragctl [--socket PATH] reload
//   fragctl [--socket PATH] cost [--seconds N] [--json]   (root)
//   fragctl policy check FILE
//
// Exit status: 0 on success (and when Ctrl-C/SIGTERM ends `trace` or `hist
// --interval`), 1 on any error (fragd not running, refused request,
// malformed answer, fragd went away during `trace`, no pageblock map (fragd's
// scanner is off), no zone matching `map --node/--zone`, a PNG that cannot be
// written, an action whose result is neither ok nor dry_run, a wait that
// timed out, an invalid policy file), 2 on a usage error, 130 when a signal
// interrupts a one-shot request or a wait.
#include <signal.h>
#include <sys/signalfd.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "policy/config.h"
#include "fragctl/render/ctl_format.h"
#include "fragctl/render/map_view.h"
#include "policy/policy.h"
#include "fragctl/client.h"
#include "fragctl/cost.h"
#include "fragctl/render/map_png.h"
#include "version.h"

namespace {

using nlohmann::json;
using fragd::ctl::Client;

constexpr int kRequestTimeoutMs = 5000;
constexpr int kExitInterrupted = 130;

// Readable once SIGINT or SIGTERM arrived (both blocked, read through here).
int g_signal_fd = -1;

void setup_signals() {
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) == 0) g_signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (g_signal_fd < 0) {
    // Without a signalfd, keep the default handlers: a signal just ends fragctl.
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
  }
}

int fail(const std::string& message) {
  std::fprintf(stderr, "fragctl: %s\n", message.c_str());
  return 1;
}

int fail(const fragd::Error& e) {
  if (e.err == fragd::ctl::kInterrupted) return kExitInterrupted;
  return fail(e.message);
}

uint64_t page_kib() {
  long ps = sysconf(_SC_PAGESIZE);
  return ps > 0 ? static_cast<uint64_t>(ps) / 1024 : 4;
}

// The local wall-clock time, strftime-formatted.
std::string local_time(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

fragd::Result<Client> open_client(const std::string& socket_path) {
  auto c = Client::connect(socket_path);
  if (c) c->set_interrupt_fd(g_signal_fd);
  return c;
}

// Parses one line from fragd as JSON, or says what is wrong with it; `what`
// names the line in the message ("answer to 'hist'", "trace event").
fragd::Result<json> parse_line(const std::string& line, const std::string& what) {
  try {
    return json::parse(line);
  } catch (const json::exception& e) {
    std::string head = line.size() > 80 ? line.substr(0, 80) + "..." : line;
    return fragd::make_error("malformed " + what + " from fragd (not JSON: " + e.what() + "): " + head);
  }
}

// Sends `req` on `c` and reads the answer, with a read timeout. The answer
// is returned whatever its "ok"; the caller checks the envelope.
fragd::Result<json> ask_fragd(Client& c, const json& req, int timeout_ms = kRequestTimeoutMs) {
  const std::string cmd = req.value("cmd", std::string("?"));
  if (auto s = c.send_line(req.dump()); !s) return s.error();
  auto line = c.read_line(timeout_ms);
  if (!line) return line.error();
  if (!*line) return fragd::make_error("fragd closed the connection on " + c.path() + " without answering '" + cmd + "'");
  return parse_line(**line, "answer to '" + cmd + "'");
}

// One request/response exchange on a fresh connection, with a read timeout.
// `fields` are added to the request.
fragd::Result<json> request(const std::string& socket_path, const std::string& cmd, json fields = json::object(),
                            int timeout_ms = kRequestTimeoutMs) {
  auto c = open_client(socket_path);
  if (!c) return c.error();
  fields["cmd"] = cmd;
  auto j = ask_fragd(*c, fields, timeout_ms);
  if (!j) return j.error();
  if (auto ok = fragd::check_answer(*j, cmd); !ok) return ok.error();
  return j;
}

// Waits until CLOCK_MONOTONIC reaches `deadline_ms`; false if a signal came first.
bool sleep_until(int64_t deadline_ms) {
  for (;;) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
    if (now >= deadline_ms) return true;
    if (g_signal_fd < 0) {
      int64_t left = deadline_ms - now;
      timespec d{static_cast<time_t>(left / 1000), static_cast<long>(left % 1000) * 1000000};
      nanosleep(&d, nullptr);
      continue;
    }
    pollfd p{g_signal_fd, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(deadline_ms - now));
    if (rc > 0) return false;
  }
}

int64_t mono_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

fragd::Result<fragd::HistSnapshot> query_hist(const std::string& socket_path) {
  auto j = request(socket_path, "hist");
  if (!j) return j.error();
  return fragd::parse_hist_answer(*j);
}

struct HistArgs {
  std::optional<unsigned> order;
  double interval_s = 0;  // 0: cumulative, one answer
  uint64_t count = 0;     // intervals; 0: until Ctrl-C
  bool json = false;
};

int cmd_hist(const std::string& socket_path, const HistArgs& a) {
  fragd::HistViewOptions view;
  view.order = a.order;
  view.page_kib = page_kib();

  auto first = query_hist(socket_path);
  if (!first) return fail(first.error());

  if (a.interval_s <= 0) {
    if (a.json) {
      std::printf("%s\n",
                  fragd::hist_output_json(*first, view, local_time("%Y-%m-%dT%H:%M:%S%z"), std::nullopt).dump().c_str());
    } else {
      std::printf("Cumulative since fragd attached %s ago (use --interval SEC for per-interval figures).\n\n%s",
                  fragd::format_duration(first->uptime_ns, fragd::DurationStyle::Age).c_str(), fragd::format_hist_text(*first, view).c_str());
    }
    return 0;
  }

  if (!a.json)
    std::printf("Tracing high-order allocation stalls every %g s... Hit Ctrl-C to end.\n", a.interval_s);
  std::fflush(stdout);
  fragd::HistSnapshot older = std::move(*first);
  const int64_t start = mono_ms();
  const int64_t step = std::llround(a.interval_s * 1000.0);
  for (uint64_t i = 1; a.count == 0 || i <= a.count; ++i) {
    if (!sleep_until(start + static_cast<int64_t>(i) * step)) return 0;  // Ctrl-C
    auto newer = query_hist(socket_path);
    if (!newer) {
      if (newer.error().err == fragd::ctl::kInterrupted) return 0;
      return fail(newer.error());
    }
    fragd::HistSnapshot d = fragd::hist_interval(*newer, older);
    if (a.json) {
      const fragd::HistInterval interval{a.interval_s, newer->uptime_ns};
      std::printf("%s\n", fragd::hist_output_json(d, view, local_time("%Y-%m-%dT%H:%M:%S%z"), interval).dump().c_str());
    } else {
      std::printf("\n%s\n%s", local_time("%H:%M:%S").c_str(), fragd::format_hist_text(d, view).c_str());
    }
    std::fflush(stdout);
    older = std::move(*newer);
  }
  return 0;
}

int cmd_status(const std::string& socket_path, bool as_json) {
  auto j = request(socket_path, "status");
  if (!j) return fail(j.error());
  if (as_json) {
    std::printf("%s\n", fragd::status_output_json(*j).dump(2).c_str());
    return 0;
  }
  auto text = fragd::format_status(*j, page_kib());
  if (!text) return fail(text.error());
  std::fputs(text->c_str(), stdout);
  return 0;
}

int cmd_cost(const std::string& socket_path, double seconds, bool as_json) {
  auto st = request(socket_path, "status");
  if (!st) return fail(st.error());
  auto c = fragd::ctl::measure_cost(*st, seconds, g_signal_fd);
  if (!c) return fail(c.error());
  if (as_json) {
    std::printf("%s\n", c->dump(2).c_str());
    return 0;
  }
  auto text = fragd::format_cost(*c);
  if (!text) return fail(text.error());
  std::fputs(text->c_str(), stdout);
  return 0;
}

int cmd_trace(const std::string& socket_path, bool as_json) {
  auto c = open_client(socket_path);
  if (!c) return fail(c.error());
  if (auto s = c->send_line(json{{"cmd", "trace"}}.dump()); !s) return fail(s.error());
  auto ack_line = c->read_line(kRequestTimeoutMs);
  if (!ack_line) return ack_line.error().err == fragd::ctl::kInterrupted ? 0 : fail(ack_line.error());
  if (!*ack_line) return fail("fragd closed the connection on " + socket_path + " without answering 'trace'");
  auto ack = parse_line(**ack_line, "answer to 'trace'");
  if (!ack) return fail(ack.error());
  if (auto ok = fragd::check_answer(*ack, "trace"); !ok) return fail(ok.error());

  if (!as_json) std::printf("%s\n", fragd::trace_header().c_str());
  std::fflush(stdout);
  for (;;) {
    auto line = c->read_line(-1);
    if (!line) return line.error().err == fragd::ctl::kInterrupted ? 0 : fail(line.error());
    if (!*line) return fail("fragd closed the trace stream (did it exit?)");
    const std::string& l = **line;
    if (l.empty()) continue;
    if (as_json) {
      std::printf("%s\n", l.c_str());
      std::fflush(stdout);
      continue;
    }
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    auto ev = parse_line(l, "trace event");
    if (!ev) {
      std::fprintf(stderr, "fragctl: %s (skipped)\n", ev.error().message.c_str());
      continue;
    }
    if (ev->is_object() && ev->contains("ok")) {  // an error in the middle of the stream
      if (auto ok = fragd::check_answer(*ev, "trace"); !ok) return fail(ok.error());
      continue;
    }
    auto text = fragd::format_trace_line(*ev, tm);
    if (!text) {
      std::fprintf(stderr, "fragctl: %s (skipped)\n", text.error().message.c_str());
      continue;
    }
    std::printf("%s\n", text->c_str());
    std::fflush(stdout);
  }
}

struct MapArgs {
  fragd::MapFilter filter;
  std::string png;  // empty: no picture
  bool json = false;
  double max_age_s = 5;  // a scan older than this is redone first
};

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// The pageblock map: text (default), the answer as JSON, or a PNG plus the
// summary lines of the text.
int cmd_map(const std::string& socket_path, const MapArgs& a) {
  // A scan reads every page's flags (~0.6 s for 24 GiB here); allow for a large host.
  auto j = request(socket_path, "map", json{{"max_age_ns", static_cast<int64_t>(a.max_age_s * 1e9)}}, 60000);
  if (!j) return fail(j.error());
  auto view = fragd::parse_map_answer(*j);
  if (!view) return fail(view.error());
  if (auto f = fragd::filter_map(*view, a.filter); !f) return fail(f.error());
  const std::string no_scan = "fragd has no pageblock map: " + view->scan_error;
  if (a.json) {
    if (auto f = fragd::filter_map_answer(*j, a.filter); !f) return fail(f.error());
    std::printf("%s\n", j->dump().c_str());
    return view->scanned ? 0 : fail(no_scan);
  }
  if (!view->scanned) return fail(no_scan);

  fragd::MapTextOptions text;
  text.page_kib = page_kib();
  if (!a.png.empty()) {
    fragd::MapPngOptions png;
    png.host = host_name();
    png.page_kib = text.page_kib;
    auto info = fragd::write_map_png(*view, a.png, png);
    if (!info) return fail(info.error());
    std::printf("map written to %s (%dx%d px, %s)\n", a.png.c_str(), info->width, info->height,
                fragd::format_size_kib((info->bytes + 1023) / 1024).c_str());
    text.rows = false;
  }
  std::fputs(fragd::format_map_text(*view, text).c_str(), stdout);
  return 0;
}

struct ActArgs {
  std::optional<int> node;
  double timeout_s = 300;
  bool json = false;
};

// Sends an acting request (compact, pool), then follows every action it
// queued until done: one line per outcome as it finishes, or with --json the
// outcomes as one JSON array at the end. 0 only if every result is ok or
// dry_run.
int run_actions(const std::string& socket_path, const json& req, const ActArgs& a) {
  const std::string cmd = req.at("cmd").get<std::string>();
  auto c = open_client(socket_path);
  if (!c) return fail(c.error());
  auto answer = ask_fragd(*c, req);
  if (!answer) return fail(answer.error());
  auto ids = fragd::parse_ids_answer(*answer, cmd);
  if (!ids) return fail(ids.error());

  fragd::ActionWaiter w;
  w.ask = [&c](const json& r) { return ask_fragd(*c, r); };
  w.now_ms = mono_ms;
  w.sleep_until = sleep_until;
  w.interval_ms = 200;
  w.timeout_ms = std::llround(a.timeout_s * 1000.0);
  std::vector<fragd::FinishedAction> finished;
  w.on_done = [&](const fragd::FinishedAction& f) {
    finished.push_back(f);
    if (!a.json) std::printf("%s\n", fragd::format_outcome(f.view).c_str());
  };
  auto waited = fragd::wait_for_actions(*ids, w);

  if (a.json) {
    std::printf("%s\n", fragd::outcomes_output_json(finished).dump(2).c_str());
  }
  if (!waited) {
    if (waited.error().err == fragd::ctl::kInterrupted) {
      std::fprintf(stderr, "fragctl: %s\n", waited.error().message.c_str());
      return kExitInterrupted;
    }
    return fail(waited.error());
  }
  int rc = 0;
  for (const auto& f : *waited) {
    if (f.view.succeeded()) continue;
    fail(fragd::outcome_failure(f.view));
    rc = 1;
  }
  return rc;
}

// COUNT of `pool set`: a decimal number of pages, nothing else.
fragd::Result<uint64_t> parse_count(const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end)
    return fragd::make_error("COUNT '" + text + "' is not a number of hugepages (a decimal integer >= 0)");
  return v;
}

int cmd_pool_set(const std::string& socket_path, const std::string& size_text, const std::string& count_text,
                 const ActArgs& a) {
  auto size = fragd::parse_page_size_kib(size_text);
  if (!size) return fail(size.error());
  auto count = parse_count(count_text);
  if (!count) return fail(count.error());
  return run_actions(socket_path, fragd::pool_request(*size, *count, a.node), a);
}

int cmd_reload(const std::string& socket_path) {
  auto c = open_client(socket_path);
  if (!c) return fail(c.error());
  auto answer = ask_fragd(*c, json{{"cmd", "reload"}});
  if (!answer) return fail(answer.error());
  auto msg = fragd::parse_reload_answer(*answer);
  if (!msg) return fail(msg.error());
  std::printf("%s\n", msg->c_str());
  return 0;
}

// Validates a policy file here, without fragd and without privileges.
int cmd_policy_check(const std::string& path) {
  auto cfg = fragd::load_and_check_config(path);
  if (!cfg) return fail(cfg.error());
  const fragd::Policy& p = cfg->policy;
  std::printf("%s: OK (mode %s%s, method %s, %zu pool target%s)\n", path.c_str(), p.act ? "act" : "observe",
              p.dry_run ? " with dry_run" : "", fragd::method_name(p.compaction.method), p.hugepages.pools.size(),
              p.hugepages.pools.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fragctl: query and drive fragd, the memory fragmentation and allocation-stall daemon"};
  app.footer(
      "Synopsis:\n"
      "  fragctl [--socket PATH] hist [--order N] [--interval SEC [--count N]] [--json]\n"
      "  fragctl [--socket PATH] status [--json]\n"
      "  fragctl [--socket PATH] trace [--json]\n"
      "  fragctl [--socket PATH] map [--node N] [--zone Z] [--max-age SEC] [--png FILE] [--json]\n"
      "  fragctl [--socket PATH] compact [--node N] [--timeout SEC] [--json]\n"
      "  fragctl [--socket PATH] pool set SIZE COUNT [--node N] [--timeout SEC] [--json]\n"
      "  fragctl [--socket PATH] reload\n"
      "  fragctl policy check FILE\n"
      "'fragctl COMMAND --help' tells more. Exit status: 0 success, 1 error, 2 usage error, 130 interrupted.");
  app.set_version_flag("--version", std::string("fragctl ") + FRAGD_VERSION);
  app.require_subcommand(1);

  std::string socket_path = "/run/fragd/fragd.sock";
  app.add_option("--socket", socket_path, "fragd's control socket")
      ->envname("FRAGD_SOCKET")
      ->type_name("PATH")
      ->capture_default_str();

  HistArgs hist_args;
  unsigned order = 0;
  auto* hist = app.add_subcommand("hist", "High-order allocations and their stall latency histograms");
  auto* order_opt = hist->add_option("--order", order, "Only this order")
                        ->type_name("N")
                        ->check(CLI::Range(0, FRAGD_NR_ORDERS - 1));
  auto* interval_opt = hist->add_option("--interval", hist_args.interval_s,
                                        "Print the figures of each interval of SEC seconds instead of cumulative ones")
                           ->type_name("SEC")
                           ->check(CLI::Range(0.1, 86400.0));
  hist->add_option("--count", hist_args.count, "Number of intervals (default: until Ctrl-C)")
      ->type_name("N")
      ->needs(interval_opt)
      ->check(CLI::PositiveNumber);
  hist->add_flag("--json", hist_args.json, "One JSON object per interval");
  hist->footer("");

  bool status_json = false;
  auto* status = app.add_subcommand("status", "Fragmentation scores, free blocks, hugepages, programs");
  status->add_flag("--json", status_json, "fragd's answer as JSON");
  status->footer("In act mode also the policy: its state per node, pool targets, the action running and the last "
                 "actions.");

  bool trace_json = false;
  auto* trace = app.add_subcommand("trace", "Stream slow allocation stalls as they happen");
  trace->add_flag("--json", trace_json, "fragd's events as JSON lines");
  trace->footer("");

  MapArgs map_args;
  int map_node = 0;
  std::string map_zone;
  auto* map = app.add_subcommand(
      "map", "Physical memory map: the class of every pageblock, and pages in use per block");
  auto* map_node_opt = map->add_option("--node", map_node, "Only the zones of this NUMA node")
                           ->type_name("N")
                           ->check(CLI::NonNegativeNumber);
  auto* map_zone_opt = map->add_option("--zone", map_zone, "Only zones of this name (DMA, DMA32, Normal, Movable)")
                           ->type_name("Z");
  auto* map_png_opt = map->add_option("--png", map_args.png,
                                      "Also draw the map and the pages-in-use plot into this PNG file")
                          ->type_name("FILE");
  map->add_flag("--json", map_args.json, "fragd's answer as JSON (only the zones selected)")->excludes(map_png_opt);
  map->add_option("--max-age", map_args.max_age_s,
                  "Use fragd's last scan if it is at most SEC old, else scan now (default 5; 0 = always scan; "
                  "fragd holds non-root callers to 5)")
      ->type_name("SEC")
      ->check(CLI::Range(0.0, 86400.0));
  map->footer(
      "Classes: . free  m movable  x hybrid (movable, polluted by unmovable pages)  U unmovable  H huge  - offline.\n"
      "Text: per zone a header (blocks per class, huge pages free now, by compaction and lost to pollution) and\n"
      "rows of 64 blocks, each after the physical address of its first block; then the pollution fragd tracked.\n"
      "Exit status: 1 when fragd has no map (its scanner needs root and /proc/kpageflags) or no zone matches.");

  // compact and pool set: ask fragd to act, then wait for the outcome.
  const char* const act_footer =
      "fragd must run with 'mode: act' in its policy (with 'dry_run: true' it decides and logs, writes nothing),\n"
      "and answers only root. Exit status: 0 if every action ended ok or dry_run; 1 otherwise (the reason on\n"
      "stderr), also when --timeout passed first (the action goes on in fragd: see 'fragctl status').";
  ActArgs compact_args;
  int compact_node = 0;
  auto* compact = app.add_subcommand(
      "compact", "Compact memory now: one synchronous compaction per node, and wait for the outcome");
  compact->footer(act_footer);
  auto* compact_node_opt = compact->add_option("--node", compact_node,
                                               "Only this NUMA node (default: every node of the policy's scope)")
                               ->type_name("N")
                               ->check(CLI::NonNegativeNumber);
  compact->add_option("--timeout", compact_args.timeout_s, "Wait at most SEC seconds for the outcome")
      ->type_name("SEC")
      ->check(CLI::Range(0.1, 604800.0))
      ->capture_default_str();
  compact->add_flag("--json", compact_args.json, "The outcomes as a JSON array");

  auto* pool = app.add_subcommand("pool", "Hugetlb pools managed by fragd");
  pool->require_subcommand(1);
  pool->footer("Synopsis:\n  fragctl [--socket PATH] pool set SIZE COUNT [--node N] [--timeout SEC] [--json]");
  ActArgs pool_args;
  int pool_node = 0;
  std::string pool_size, pool_count;
  auto* pool_set = pool->add_subcommand(
      "set", "Set a pool's target (until the next reload) and wait until fragd has reached it or given up");
  pool_set->footer(std::string("fragd compacts when free blocks are short, allocates, reads back, retries while it\n"
                               "makes progress, never goes beyond COUNT nor below its MemAvailable guard, and\n"
                               "shrinks the pool when COUNT is lower.\n") +
                   act_footer);
  pool_set->add_option("SIZE", pool_size, "Page size: 2MB, 2M, 2MiB, 2048kB, 1GB, 1G, 1GiB")->required();
  pool_set->add_option("COUNT", pool_count, "Hugepages wanted in the pool")->required();
  auto* pool_node_opt = pool_set->add_option("--node", pool_node, "The pool of this NUMA node (default: the global pool)")
                            ->type_name("N")
                            ->check(CLI::NonNegativeNumber);
  pool_set->add_option("--timeout", pool_args.timeout_s, "Wait at most SEC seconds for the outcome")
      ->type_name("SEC")
      ->check(CLI::Range(0.1, 604800.0))
      ->capture_default_str();
  pool_set->add_flag("--json", pool_args.json, "The outcomes as a JSON array");

  auto* reload = app.add_subcommand(
      "reload", "Make fragd re-read its config file (like SIGHUP); a bad file leaves the running policy in place");
  reload->footer("Root only. Exit status: 0 when fragd took the new policy; 1 otherwise (the reason on stderr).");

  double cost_seconds = 10;
  bool cost_json = false;
  auto* cost = app.add_subcommand("cost", "What fragd's BPF programs cost: runs and ns per event and per page fault");
  cost->add_option("--seconds", cost_seconds, "Measure over this many seconds")
      ->type_name("N")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cost->add_flag("--json", cost_json, "The measurement as JSON");
  cost->footer("Root only: turns the kernel's BPF run-time statistics on for the window (BPF_ENABLE_STATS, "
               "CAP_SYS_ADMIN) and off again.");

  auto* policy = app.add_subcommand("policy", "Policy files");
  policy->require_subcommand(1);
  policy->footer("Synopsis:\n  fragctl policy check FILE");
  std::string policy_file;
  auto* policy_check = policy->add_subcommand(
      "check", "Validate a config file against this machine, without fragd and without privileges");
  policy_check->footer(
      "Exit status: 0 when the file is valid; 1 otherwise, with file:line:column and the key on stderr.");
  policy_check->add_option("FILE", policy_file, "fragd's YAML config file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  setvbuf(stdout, nullptr, _IOLBF, 0);
  setup_signals();

  if (hist->parsed()) {
    if (order_opt->count() > 0) hist_args.order = order;
    return cmd_hist(socket_path, hist_args);
  }
  if (status->parsed()) return cmd_status(socket_path, status_json);
  if (trace->parsed()) return cmd_trace(socket_path, trace_json);
  if (map->parsed()) {
    if (map_node_opt->count() > 0) map_args.filter.node = map_node;
    if (map_zone_opt->count() > 0) map_args.filter.zone = map_zone;
    return cmd_map(socket_path, map_args);
  }
  if (compact->parsed()) {
    if (compact_node_opt->count() > 0) compact_args.node = compact_node;
    return run_actions(socket_path, fragd::compact_request(compact_args.node), compact_args);
  }
  if (pool_set->parsed()) {
    if (pool_node_opt->count() > 0) pool_args.node = pool_node;
    return cmd_pool_set(socket_path, pool_size, pool_count, pool_args);
  }
  if (reload->parsed()) return cmd_reload(socket_path);
  if (cost->parsed()) return cmd_cost(socket_path, cost_seconds, cost_json);
  if (policy_check->parsed()) return cmd_policy_check(policy_file);
  return 1;
}
