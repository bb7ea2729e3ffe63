// SPDX-License-Identifier: Apache-2.0
#include "fragctl/commands.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/format.h"
#include "fragctl/render/ctl_format.h"
#include "fragctl/session.h"
#include "policy/config.h"
#include "policy/policy.h"

namespace fragd::ctl {

using nlohmann::json;


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

  fragd::ActionWaiter w;
  w.ask = [&c](const json& r) { return ask_fragd(*c, r); };
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

namespace {

// COUNT of `pool set`: a decimal number of pages, nothing else.
fragd::Result<uint64_t> parse_count(const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end)
    return fragd::make_error("COUNT '" + text + "' is not a number of hugepages (a decimal integer >= 0)");
  return v;
}

}  // namespace

int cmd_pool_set(const std::string& socket_path, const std::string& size_text, const std::string& count_text,
                 const ActArgs& a) {
  auto size = fragd::parse_page_size_kib(size_text);
  if (!size) return fail(size.error());
  auto count = parse_count(count_text);
  if (!count) return fail(count.error());
  return run_actions(socket_path, ControlRequest::pool(*size, *count, a.node, timeout_ms(a)), a);
}

int cmd_reload(const std::string& socket_path) {
  auto c = open_client(socket_path);
  if (!c) return fail(c.error());
  auto answer = ask_fragd(*c, ControlRequest::of(Command::Reload));
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


}  // namespace fragd::ctl
