// SPDX-License-Identifier: Apache-2.0
// Acting through the control socket (docs/control-protocol.md "Acting"): the
// answers to compact and pool (the ids queued), to action (its state, and
// its outcome once done), to reload, and the action records status carries.
// ActionReport is the one form of a finished action on the wire: fragd builds
// it from act/'s record (concerns/act/concern.cc), fragctl reads and renders it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fragd {

// An action as asked: status' "action_running". Every field may be absent
// (action "?", node -1, the rest empty) from a fragd that does not send it.
struct ActionSummary {
  std::optional<uint64_t> id;
  std::string action = "?";  // compact, proactiveness_raise, proactiveness_restore, pool
  std::string trigger;       // score, demand, reserve, manual, pool, hold, policy
  int64_t node = -1;         // -1: global
  std::string reason;
  std::optional<uint64_t> size_kib, target;  // pool
};
void to_json(nlohmann::json& j, const ActionSummary& a);
void from_json(const nlohmann::json& j, ActionSummary& a);
// The same, naming a bad field by its path from `path` (protocol/fields.h).
void read_json(const nlohmann::json& j, ActionSummary& a, const std::string& path);

// One finished action: the "outcome" of an action answer, an entry of status'
// "actions", what `fragctl compact|pool set --json` prints. id, action, node
// and result are required; the figures are optional (absent: not shown), with
// the protocol's "does not apply" values (0, or -1 for scores) kept as sent.
struct ActionReport {
  uint64_t id = 0;
  std::string action;   // compact, proactiveness_raise, proactiveness_restore, pool, defrag_mode_off, defrag_mode_restore
  std::string trigger;  // score, demand, reserve, manual, pool, hold, policy, forecast, lease, guard; "" if absent
  int64_t node = -1;    // -1: global
  std::string reason;
  std::string result;   // ok, no_gain, short, guard, error, dry_run, abandoned, refused, cut, yielded
  std::string detail;
  std::optional<uint64_t> start_unix_ns, duration_ns;
  std::optional<int64_t> score_before, score_after;  // -1: not measured
  std::optional<uint64_t> blocks_before, blocks_after, pages_migrated;
  std::optional<uint64_t> size_kib, target, pool_before, pool_after;
  std::optional<uint64_t> attempts, compactions;  // pool only: pool writes, node compactions
  std::optional<uint64_t> goal_blocks;            // compact with method pool: free blocks wanted
  struct Step {
    std::string step;  // grow, release, shrink, compact, drop_caches
    int64_t node = -1;
    std::optional<uint64_t> pool_after;
    uint64_t duration_ns = 0;
  };
  std::vector<Step> steps;  // pool, and compact with a goal: in order
  // ok, dry_run and no_gain are successes; every other result is not.
  // no_gain: the compaction ran as asked; the node had nothing more to give.
  bool succeeded() const { return result == "ok" || result == "dry_run" || result == "no_gain"; }
};
// Errors name the action: "outcome of action 7: missing \"result\"".
void to_json(nlohmann::json& j, const ActionReport& r);
void from_json(const nlohmann::json& j, ActionReport& r);
void read_json(const nlohmann::json& j, ActionReport& r, const std::string& path);

// {"ok":true,"ids":[7,8]}: the answer to compact and pool.
struct IdsReply {
  std::vector<uint64_t> ids;
};
void to_json(nlohmann::json& j, const IdsReply& r);
void from_json(const nlohmann::json& j, IdsReply& r);

// The answer to {"cmd":"action","id":N}: queued, running, or done with its outcome.
enum class ActionState { Queued, Running, Done };
struct ActionStateReply {
  ActionState state = ActionState::Queued;
  std::optional<ActionReport> outcome;  // done
};
void to_json(nlohmann::json& j, const ActionStateReply& r);
void from_json(const nlohmann::json& j, ActionStateReply& r);

// {"ok":true,"message":...}: the answer to reload (message absent from an old fragd).
struct ReloadReply {
  std::optional<std::string> message;
};
void to_json(nlohmann::json& j, const ReloadReply& r);
void from_json(const nlohmann::json& j, ReloadReply& r);

// {"ok":true,"stream":"trace"}: the answer to trace; stall events follow (protocol/trace.h).
struct TraceAck {
  std::string stream = "trace";
};
void to_json(nlohmann::json& j, const TraceAck& r);
void from_json(const nlohmann::json& j, TraceAck& r);

}  // namespace fragd
