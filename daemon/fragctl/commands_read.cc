// SPDX-License-Identifier: Apache-2.0
#include "fragctl/commands.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/format.h"
#include "fragctl/cost.h"
#include "fragctl/render/cairo_lib.h"
#include "fragctl/render/ctl_format.h"
#include "fragctl/render/map_png.h"
#include "fragctl/render/top.h"
#include "protocol/top.h"
#include "fragctl/session.h"

namespace fragd::ctl {

using nlohmann::json;

namespace {

fragd::Result<fragd::HistSnapshot> query_hist(const std::string& socket_path) {
  auto j = request(socket_path, ControlRequest::of(Command::Hist));
  if (!j) return j.error();
  return fragd::parse_hist_answer(*j);
}


}  // namespace

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

int cmd_status(const std::string& socket_path, bool as_json) {
  auto j = request(socket_path, ControlRequest::of(Command::Status));
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
  auto j = request(socket_path, ControlRequest::of(Command::Status));
  if (!j) return fail(j.error());
  auto st = fragd::read_answer<fragd::StatusReply>(*j, "status");
  if (!st) return fail(st.error());
  auto c = fragd::ctl::measure_cost(*st, seconds, signal_fd());
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
  if (auto s = c->send_line(json(ControlRequest::of(Command::Trace)).dump()); !s) return fail(s.error());
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



// The pageblock map: text (default), the answer as JSON, or a PNG plus the
// summary lines of the text.
int cmd_map(const std::string& socket_path, const MapArgs& a) {
  // Before asking fragd for a scan: without libcairo there is nothing to draw with.
  if (!a.png.empty())
    if (auto c = fragd::load_cairo(); !c) return fail("--png " + a.png + ": " + c.error().message);
  // A scan reads every page's flags (~0.6 s for 24 GiB here); allow for a large host.
  auto j = request(socket_path, ControlRequest::map(static_cast<int64_t>(a.max_age_s * 1e9), a.blocks), 60000);
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


}  // namespace fragd::ctl
