// SPDX-License-Identifier: Apache-2.0
// fragctl trace: slow allocation stalls as fragd sees them, one line each, until Ctrl-C.
#include <cstdio>
#include <ctime>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "fragctl/render/trace.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "protocol/wire.h"

namespace fragd::ctl {
namespace {

using nlohmann::json;

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

const bool registered_trace = declare_subcommand({40, "[--socket PATH] trace [--json]", [](CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* trace = app.add_subcommand("trace", "Stream slow allocation stalls as they happen");
  trace->add_flag("--json", *json, "fragd's events as JSON lines");
  trace->footer("");
  return std::pair{trace, Run([json](const std::string& socket) { return cmd_trace(socket, *json); })};
}});

}  // namespace
}  // namespace fragd::ctl
