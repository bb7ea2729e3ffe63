// SPDX-License-Identifier: Apache-2.0
// fragctl's commands, one function each (main.cc parses the command line):
// the read commands (commands_read.cc) and the acting ones (commands_act.cc).
// Each returns fragctl's exit status (main.cc's header lists them).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "fragctl/render/map_view.h"
#include "protocol/request.h"

namespace fragd::ctl {

struct HistArgs {
  std::optional<unsigned> order;
  double interval_s = 0;  // 0: cumulative, one answer
  uint64_t count = 0;     // intervals; 0: until Ctrl-C
  bool json = false;
};

int cmd_hist(const std::string& socket_path, const HistArgs& a);
int cmd_status(const std::string& socket_path, bool as_json);
int cmd_cost(const std::string& socket_path, double seconds, bool as_json);
int cmd_trace(const std::string& socket_path, bool as_json);

struct TopArgs {
  double interval_s = 2;
  uint64_t count = 0;  // screens; 0: until Ctrl-C
  bool once = false;   // the totals since fragd started, once
  std::string sort = "time";
  size_t limit = 10;
  bool stacks = false;
  bool json = false;
};
int cmd_top(const std::string& socket_path, const TopArgs& a);

struct MapArgs {
  fragd::MapFilter filter;
  std::string png;  // empty: no picture
  bool json = false;
  double max_age_s = 5;  // a scan older than this is redone first
  std::optional<uint64_t> blocks;  // ledger blocks to list (absent: fragd's default, 256)
};

// The pageblock map: text (default), the answer as JSON, or a PNG plus the
// summary lines of the text.
int cmd_map(const std::string& socket_path, const MapArgs& a);

struct ActArgs {
  std::optional<int> node;
  double timeout_s = 300;
  bool json = false;
};
// --timeout in ms: how long fragctl waits for the outcome, and how long fragd lets each
// action the request queues compact (the request's timeout_ms).
// fragctl waits this much longer than --timeout for an outcome.
constexpr int64_t kCutGraceMs = 2000;
inline uint64_t timeout_ms(const ActArgs& a) { return static_cast<uint64_t>(std::llround(a.timeout_s * 1000.0)); }

// Sends an acting request (compact, pool), then follows every action it
// queued until done: one line per outcome as it finishes, or with --json the
// outcomes as one JSON array at the end. 0 only if every result is ok or
// dry_run.
int run_actions(const std::string& socket_path, const ControlRequest& req, const ActArgs& a);
int cmd_pool_set(const std::string& socket_path, const std::string& size_text, const std::string& count_text,
                 const ActArgs& a);
int cmd_reload(const std::string& socket_path);
// Validates a policy file here, without fragd and without privileges.
int cmd_policy_check(const std::string& path);

}  // namespace fragd::ctl
