// SPDX-License-Identifier: Apache-2.0
// fragctl cost: what fragd's BPF programs cost the host, measured with the kernel's run-time
// statistics over a window (root).
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "fragctl/cost.h"
#include "fragctl/render/cost_text.h"
#include "fragctl/session.h"
#include "fragctl/subcommand.h"
#include "protocol/status.h"
#include "protocol/wire.h"

namespace fragd::ctl {
namespace {

struct CostArgs {
  double seconds = 10;
  bool json = false;
};

int cmd_cost(const std::string& socket_path, const CostArgs& a) {
  auto j = request(socket_path, ControlRequest::of(Command::Status));
  if (!j) return fail(j.error());
  auto st = fragd::read_answer<fragd::StatusReply>(*j, "status");
  if (!st) return fail(st.error());
  auto c = fragd::ctl::measure_cost(*st, a.seconds, signal_fd());
  if (!c) return fail(c.error());
  if (a.json) {
    std::printf("%s\n", c->dump(2).c_str());
    return 0;
  }
  auto text = fragd::format_cost(*c);
  if (!text) return fail(text.error());
  std::fputs(text->c_str(), stdout);
  return 0;
}

const bool registered_cost = declare_subcommand({90, "[--socket PATH] cost [--seconds N] [--json]", [](CLI::App& app) {
  auto a = std::make_shared<CostArgs>();
  auto* cost = app.add_subcommand("cost", "What fragd's BPF programs cost: runs and ns per event and per page fault");
  cost->add_option("--seconds", a->seconds, "Measure over this many seconds")
      ->type_name("N")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cost->add_flag("--json", a->json, "The measurement as JSON");
  cost->footer("Root only: turns the kernel's BPF run-time statistics on for the window (BPF_ENABLE_STATS, "
               "CAP_SYS_ADMIN) and off again.");
  return std::pair{cost, Run([a](const std::string& socket) { return cmd_cost(socket, *a); })};
}});

}  // namespace
}  // namespace fragd::ctl
