// SPDX-License-Identifier: Apache-2.0
// fragctl top: who stalls, who pays, where, screen after screen or the totals once.
#include <cmath>
#include <cstdio>
#include <memory>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/format.h"
#include "fragctl/render/top.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "protocol/top.h"
#include "protocol/wire.h"

namespace fragd::ctl {
namespace {

using nlohmann::json;

struct TopArgs {
  double interval_s = 2;
  uint64_t count = 0;  // screens; 0: until Ctrl-C
  bool once = false;   // the totals since fragd started, once
  std::string sort = "time";
  size_t limit = 10;
  bool stacks = false;
  bool json = false;
};

int cmd_top(const std::string& socket_path, const TopArgs& a) {
  auto query = [&]() -> fragd::Result<fragd::TopReply> {
    auto j = request(socket_path, ControlRequest::of(Command::Top));
    if (!j) return j.error();
    return fragd::read_answer<fragd::TopReply>(*j, "top");
  };
  fragd::TopViewOptions view;
  view.sort = a.sort;
  view.limit = a.limit;
  view.stacks = a.stacks;
  auto first = query();
  if (!first) return fail(first.error());
  if (a.once) {
    if (a.json) {
      std::printf("%s\n", json(*first).dump(2).c_str());
    } else {
      std::printf("fragd top: totals since fragd started %s ago\n\n%s",
                  fragd::format_duration(first->uptime_ns, fragd::DurationStyle::Age).c_str(),
                  fragd::format_top_text(*first, view).c_str());
    }
    return 0;
  }
  // A terminal gets a fresh screen each interval, as top does; a pipe gets them one after another.
  const bool tty = isatty(STDOUT_FILENO);
  view.interval_s = a.interval_s;
  fragd::TopReply older = std::move(*first);
  const int64_t start = mono_ms();
  const int64_t step = std::llround(a.interval_s * 1000.0);
  for (uint64_t i = 1; a.count == 0 || i <= a.count; ++i) {
    if (!sleep_until(start + static_cast<int64_t>(i) * step)) return 0;  // Ctrl-C
    auto newer = query();
    if (!newer) {
      if (newer.error().err == fragd::ctl::kInterrupted) return 0;
      return fail(newer.error());
    }
    const fragd::TopReply d = fragd::top_interval(*newer, older);
    if (a.json) {
      json j = d;
      j["interval_s"] = a.interval_s;
      j["time"] = local_time("%Y-%m-%dT%H:%M:%S%z");
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("%sfragd top  %s  every %g s, sorted by %s%s\n\n%s", tty ? "\033[H\033[2J" : (i > 1 ? "\n" : ""),
                  local_time("%H:%M:%S").c_str(), a.interval_s, a.sort == "stalls" ? "stalls" : "stall time",
                  tty ? "  (Ctrl-C ends)" : "", fragd::format_top_text(d, view).c_str());
    }
    std::fflush(stdout);
    older = std::move(*newer);
  }
  return 0;
}

const bool registered_top = declare_subcommand({
    30, "[--socket PATH] top [--interval SEC] [--count N | --once] [--sort time|stalls] [--limit N] [--stacks] [--json]",
    [](CLI::App& app) {
      auto a = std::make_shared<TopArgs>();
      auto* top =
          app.add_subcommand("top", "Who stalls, who pays, where: cgroups, consumers and call sites by stall time");
      top->add_option("--interval", a->interval_s, "Seconds between screens (default 2)")
          ->check(CLI::Range(0.1, 3600.0))
          ->type_name("SEC");
      top->add_option("--count", a->count, "Number of screens (default: until Ctrl-C)")->type_name("N");
      top->add_flag("--once", a->once, "One screen of the totals since fragd started, then exit");
      top->add_option("--sort", a->sort, "Sort rows by stall time or by number of stalls")
          ->check(CLI::IsMember({"time", "stalls"}))
          ->capture_default_str();
      top->add_option("--limit", a->limit, "Rows per table")->check(CLI::Range(1, 1000))->capture_default_str();
      top->add_flag("--stacks", a->stacks, "Also the whole kernel stacks of the stalls");
      top->add_flag("--json", a->json, "fragd's answer as JSON (with --interval: one object per interval)");
      top->footer(
          "Each screen shows the interval just past (and the %CPU its stall time is of one CPU); --once the totals "
          "since fragd started. Cgroups and call sites are those with a series of their own in fragd's metrics "
          "(attribution.top_cgroups, attribution.top_callsites), the rest summed as other.");
      return std::pair{top, Run([a](const std::string& socket) { return cmd_top(socket, *a); })};
    }});

}  // namespace
}  // namespace fragd::ctl
