// SPDX-License-Identifier: Apache-2.0
#include "protocol/action.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/wire.h"

namespace fragd {

using nlohmann::json;
using namespace wire;

void to_json(json& j, const ActionSummary& a) {
  j = json{{"action", a.action}, {"trigger", a.trigger}, {"node", a.node}, {"reason", a.reason}};
  put(j, "id", a.id);
  put(j, "size_kib", a.size_kib);
  put(j, "target", a.target);
}

void from_json(const json& j, ActionSummary& a) {
  if (!j.is_object()) malformed("\"action_running\" is neither an object nor null");
  const std::string w = "action_running";
  a = ActionSummary{};
  a.id = opt_u64(j, "id", w);
  a.action = opt_str(j, "action", w).value_or("?");
  a.node = opt_i64(j, "node", w).value_or(-1);
  a.size_kib = opt_u64(j, "size_kib", w);
  a.target = opt_u64(j, "target", w);
  a.trigger = opt_str(j, "trigger", w).value_or("");
  a.reason = opt_str(j, "reason", w).value_or("");
}

void to_json(json& j, const ActionReport& r) {
  j = json{{"id", r.id},         {"action", r.action}, {"trigger", r.trigger}, {"node", r.node},
           {"reason", r.reason}, {"result", r.result}, {"detail", r.detail}};
  put(j, "size_kib", r.size_kib);
  put(j, "target", r.target);
  put(j, "start_unix_ns", r.start_unix_ns);
  put(j, "duration_ns", r.duration_ns);
  put(j, "score_before", r.score_before);
  put(j, "score_after", r.score_after);
  put(j, "blocks_before", r.blocks_before);
  put(j, "blocks_after", r.blocks_after);
  put(j, "pages_migrated", r.pages_migrated);
  put(j, "pool_before", r.pool_before);
  put(j, "pool_after", r.pool_after);
  put(j, "attempts", r.attempts);
  put(j, "compactions", r.compactions);
  put(j, "goal_blocks", r.goal_blocks);
  if (!r.steps.empty()) {
    json steps = json::array();
    for (const auto& s : r.steps) {
      json e{{"step", s.step}, {"node", s.node}, {"duration_ns", s.duration_ns}};
      put(e, "pool_after", s.pool_after);
      steps.push_back(std::move(e));
    }
    j["steps"] = std::move(steps);
  }
}

void from_json(const json& j, ActionReport& o) {
  if (!j.is_object()) malformed("an action outcome is not an object");
  o = ActionReport{};
  o.id = req_u64(j, "id", "action outcome");
  const std::string w = strf("outcome of action %llu", static_cast<unsigned long long>(o.id));
  o.action = req_str(j, "action", w);
  auto node = opt_i64(j, "node", w);
  if (!node) malformed(w + ": missing \"node\"");
  o.node = *node;
  o.result = req_str(j, "result", w);
  o.trigger = opt_str(j, "trigger", w).value_or("");
  o.reason = opt_str(j, "reason", w).value_or("");
  o.detail = opt_str(j, "detail", w).value_or("");
  o.start_unix_ns = opt_u64(j, "start_unix_ns", w);
  o.duration_ns = opt_u64(j, "duration_ns", w);
  o.score_before = opt_i64(j, "score_before", w);
  o.score_after = opt_i64(j, "score_after", w);
  o.blocks_before = opt_u64(j, "blocks_before", w);
  o.blocks_after = opt_u64(j, "blocks_after", w);
  o.pages_migrated = opt_u64(j, "pages_migrated", w);
  o.size_kib = opt_u64(j, "size_kib", w);
  o.target = opt_u64(j, "target", w);
  o.pool_before = opt_u64(j, "pool_before", w);
  o.pool_after = opt_u64(j, "pool_after", w);
  o.attempts = opt_u64(j, "attempts", w);
  o.compactions = opt_u64(j, "compactions", w);
  o.goal_blocks = opt_u64(j, "goal_blocks", w);
  if (auto it = j.find("steps"); it != j.end()) {
    if (!it->is_array()) malformed(w + ": \"steps\" is not an array");
    for (const auto& e : *it) {
      if (!e.is_object()) malformed(w + ": a step is not an object");
      ActionReport::Step s;
      s.step = req_str(e, "step", w + " step");
      s.node = opt_i64(e, "node", w + " step").value_or(-1);
      s.pool_after = opt_u64(e, "pool_after", w + " step");
      s.duration_ns = opt_u64(e, "duration_ns", w + " step").value_or(0);
      o.steps.push_back(std::move(s));
    }
  }
}

void to_json(json& j, const IdsReply& r) { j = json{{"ok", true}, {"ids", r.ids}}; }

void from_json(const json& j, IdsReply& r) {
  auto it = j.find("ids");
  if (it == j.end() || !it->is_array()) malformed("no \"ids\" array");
  r.ids.clear();
  for (const auto& v : *it) {
    if (!is_u64(v)) malformed("an entry of \"ids\" is not a non-negative integer");
    r.ids.push_back(to_u64(v));
  }
}

namespace {
const char* state_name(ActionState s) {
  return s == ActionState::Queued ? "queued" : s == ActionState::Running ? "running" : "done";
}
}  // namespace

void to_json(json& j, const ActionStateReply& r) {
  j = json{{"ok", true}, {"state", state_name(r.state)}};
  if (r.outcome) j["outcome"] = *r.outcome;
}

void from_json(const json& j, ActionStateReply& r) {
  auto st = j.find("state");
  if (st == j.end() || !st->is_string()) malformed("no string \"state\"");
  const std::string state = st->get<std::string>();
  r = ActionStateReply{};
  if (state == "queued" || state == "running") {
    r.state = state == "queued" ? ActionState::Queued : ActionState::Running;
    return;
  }
  if (state != "done")
    malformed("unknown state '" + printable(state) + "' (expected queued, running or done)");
  r.state = ActionState::Done;
  auto out = j.find("outcome");
  if (out == j.end() || !out->is_object()) malformed("state done without an \"outcome\" object");
  r.outcome = out->get<ActionReport>();
}

void to_json(json& j, const ReloadReply& r) {
  j = json{{"ok", true}};
  put(j, "message", r.message);
}

void from_json(const json& j, ReloadReply& r) {
  auto msg = j.find("message");
  r.message.reset();
  if (msg == j.end() || msg->is_null()) return;
  if (!msg->is_string()) malformed("\"message\" is not a string");
  r.message = msg->get<std::string>();
}

void to_json(json& j, const TraceAck& r) { j = json{{"ok", true}, {"stream", r.stream}}; }

void from_json(const json& j, TraceAck& r) { r.stream = opt_str(j, "stream", "trace answer").value_or("trace"); }

}  // namespace fragd
