// SPDX-License-Identifier: Apache-2.0
// fragctl hist: the allocations fragd counted and their stall latency histograms, cumulative or
// per interval.
#include <cmath>
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>

#include "base/format.h"
#include "fragctl/render/hist.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "fragd_common.h"
#include "kernel/page_size.h"
#include "protocol/hist.h"

namespace fragd::ctl {
namespace {

struct HistArgs {
  std::optional<unsigned> order;
  double interval_s = 0;  // 0: cumulative, one answer
  uint64_t count = 0;     // intervals; 0: until Ctrl-C
  bool json = false;
};

fragd::Result<fragd::HistSnapshot> query_hist(const std::string& socket_path) {
  auto j = request(socket_path, ControlRequest::of(Command::Hist));
  if (!j) return j.error();
  return fragd::parse_hist_answer(*j);
}

int cmd_hist(const std::string& socket_path, const HistArgs& a) {
  fragd::HistViewOptions view;
  view.order = a.order;
  view.page_kib = fragd::kernel_page_kib();

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

const bool registered_hist = declare_subcommand(
    {10, "[--socket PATH] hist [--order N] [--interval SEC [--count N]] [--json]", [](CLI::App& app) {
       auto a = std::make_shared<HistArgs>();
       auto order = std::make_shared<unsigned>(0);
       auto* hist = app.add_subcommand("hist", "High-order allocations and their stall latency histograms");
       auto* order_opt = hist->add_option("--order", *order, "Only this order")
                             ->type_name("N")
                             ->check(CLI::Range(0, FRAGD_NR_ORDERS - 1));
       auto* interval_opt =
           hist->add_option("--interval", a->interval_s,
                            "Print the figures of each interval of SEC seconds instead of cumulative ones")
               ->type_name("SEC")
               ->check(CLI::Range(0.1, 86400.0));
       hist->add_option("--count", a->count, "Number of intervals (default: until Ctrl-C)")
           ->type_name("N")
           ->needs(interval_opt)
           ->check(CLI::PositiveNumber);
       hist->add_flag("--json", a->json, "One JSON object per interval");
       hist->footer("");
       return std::pair{hist, Run([a, order, order_opt](const std::string& socket) {
                          if (order_opt->count() > 0) a->order = *order;
                          return cmd_hist(socket, *a);
                        })};
     }});

}  // namespace
}  // namespace fragd::ctl
