// SPDX-License-Identifier: Apache-2.0
#include "fragctl/act_wait.h"

#include <cstdio>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "fragctl/render/ctl_format.h"
#include "fragctl/session.h"

namespace fragd::ctl {

using nlohmann::json;

const char* const kActFooter =
    "fragd must run with 'mode: act' in its policy (with 'dry_run: true' it decides and logs, writes nothing),\n"
    "and answers only root. Exit status: 0 if every action ended ok or dry_run; 1 otherwise (the reason on\n"
    "stderr), also when --timeout passed first (the action goes on in fragd: see 'fragctl status').";

void add_wait_options(CLI::App* cmd, ActArgs& args) {
  cmd->add_option("--timeout", args.timeout_s, "Wait at most SEC seconds for the outcome")
      ->type_name("SEC")
      ->check(CLI::Range(0.1, 604800.0))
      ->capture_default_str();
  cmd->add_flag("--json", args.json, "The outcomes as a JSON array");
}

// Sends an acting request (compact, pool), then follows every action it
// queued until done: one line per outcome as it finishes, or with --json the
// outcomes as one JSON array at the end. 0 only if every result is ok or
// dry_run.
int run_actions(const std::string& socket_path, const ControlRequest& req, const ActArgs& a) {
  const std::string cmd(command_name(req.cmd));
  auto c = open_client(socket_path);
  if (!c) return fail(c.error());
  auto answer = ask_fragd(*c, req);
  if (!answer) return fail(answer.error());
  auto ids = fragd::parse_ids_answer(*answer, cmd);
  if (!ids) return fail(ids.error());
  return follow_actions(*c, *ids, a);
}

int follow_actions(Client& c, const std::vector<uint64_t>& ids, const ActArgs& a) {
  fragd::ActionWaiter w;
  w.ask = [&c](const json& r) { return ask_fragd(c, r); };
  w.now_ms = mono_ms;
  w.sleep_until = sleep_until;
  w.interval_ms = 200;
  // The action's own bound is --timeout from its start (fragd kills its write then): a little
  // longer here, so that an action cut at that bound still shows its outcome.
  w.timeout_ms = static_cast<int64_t>(timeout_ms(a)) + kCutGraceMs;
  std::vector<fragd::FinishedAction> finished;
  w.on_done = [&](const fragd::FinishedAction& f) {
    finished.push_back(f);
    if (!a.json) std::printf("%s\n", fragd::format_outcome(f.view).c_str());
  };
  auto waited = fragd::wait_for_actions(ids, w);

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

}  // namespace fragd::ctl
