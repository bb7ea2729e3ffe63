// SPDX-License-Identifier: Apache-2.0
// `fragctl compact`, `pool set`, `reload` and the actions in `status`: the
// requests, the answers (protocol/action.h) read and checked, the outcome
// lines, and the wait for queued actions. Pure logic (the socket and the clock
// come in through ActionWaiter), unit-tested.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "protocol/action.h"

namespace fragd {

// --- Acting: compact, pool, action, reload (docs/control-protocol.md) ------

// Requests. node: nullopt = every node in the policy's scope (compact) or the
// global pool (pool).
nlohmann::json compact_request(std::optional<int> node);
nlohmann::json pool_request(uint64_t size_kib, uint64_t count, std::optional<int> node);
nlohmann::json action_request(uint64_t id);

// The ids of {"ok":true,"ids":[7,8]}, the answer to compact and pool. An empty
// list is an error (fragd queued nothing).
Result<std::vector<uint64_t>> parse_ids_answer(const nlohmann::json& answer, std::string_view cmd);

// The "message" of the answer to reload ("policy reloaded" if none). A
// refusal is "fragd refused 'reload': <error>" (fragd's error says that the
// running policy is kept, and why).
Result<std::string> parse_reload_answer(const nlohmann::json& answer);

// Reads one finished action (the "outcome" of an action answer, an entry of
// status' "actions"); protocol/action.h says what is checked.
Result<ActionReport> parse_outcome(const nlohmann::json& outcome);

// A node for a person: "all" for -1 (global), else its number.
std::string node_text(int64_t node);

// What the action is about: "compact node 0", "compact every node",
// "pool 2 MiB node 1", "pool 2 MiB node all", "proactiveness_raise".
std::string outcome_subject(const ActionReport& o);
// The same from its parts (an action asked, not yet finished: status' running one).
std::string action_subject(const std::string& action, int64_t node, std::optional<uint64_t> size_kib);
// One line, no newline, e.g.
//   compact node 0: ok, score 93 -> 4, 392114 pages migrated, 1.52 s (manual: fragctl compact)
//   pool 2 MiB node all: ok, 0 -> 3000 (target 3000), 2 writes, 1 compaction, 1.61 s (manual: fragctl pool set)
// A detail follows after "; ". Control characters of strings become '?'.
std::string format_outcome(const ActionReport& o);
// Why an unsuccessful action failed, for stderr: "<subject>: <result>: <detail>".
std::string outcome_failure(const ActionReport& o);

struct ActionAnswer {
  ActionState state = ActionState::Queued;
  ActionReport outcome;  // Done
};
// Parses the answer to {"cmd":"action","id":id}. A done answer must carry an
// outcome of that id. Refusals ("unknown action id 7") are errors.
Result<ActionAnswer> parse_action_answer(const nlohmann::json& answer, uint64_t id);

struct FinishedAction {
  ActionReport view;
};

// How wait_for_actions() talks to fragd and to the clock; the unit tests
// replace all of them.
struct ActionWaiter {
  // One exchange with fragd: the answer to `request`, whatever its "ok".
  std::function<Result<nlohmann::json>(const nlohmann::json& request)> ask;
  // CLOCK_MONOTONIC in ms.
  std::function<int64_t()> now_ms;
  // Sleeps until now_ms() >= deadline_ms; false when a signal cut it short.
  std::function<bool(int64_t deadline_ms)> sleep_until;
  // Called once per action as soon as it is seen done (may be empty).
  std::function<void(const FinishedAction&)> on_done;
  int64_t interval_ms = 200;
  int64_t timeout_ms = 300000;
};

// Polls each id with {"cmd":"action","id":..} every interval_ms until all are
// done; returns their outcomes in the order of `ids`. Errors: a refused or
// malformed answer (says which action), timeout (err ETIMEDOUT: which actions
// are still queued or running; they go on in fragd), a signal (err EINTR).
// What `fragctl compact|pool set --json` prints: the outcomes, one array.
nlohmann::json outcomes_output_json(const std::vector<FinishedAction>& finished);

Result<std::vector<FinishedAction>> wait_for_actions(const std::vector<uint64_t>& ids, const ActionWaiter& w);

}  // namespace fragd
