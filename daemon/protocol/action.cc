// SPDX-License-Identifier: Apache-2.0
#include "protocol/action.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "protocol/fields.h"

namespace fragd {

using nlohmann::json;
using namespace wire;

}  // namespace fragd

// Each field of the action messages, once: its key and its member (protocol/fields.h).
template <>
struct fragd::wire::Fields<fragd::ActionSummary> {
  static auto list() {
    using T = ActionSummary;
    return std::make_tuple(field("id", &T::id), field_or_default("action", &T::action),
                           field_or_default("trigger", &T::trigger), field_or_default("node", &T::node),
                           field_or_default("reason", &T::reason), field("size_kib", &T::size_kib),
                           field("target", &T::target));
  }
};
template <>
struct fragd::wire::Fields<fragd::ActionReport::Step> {
  static auto list() {
    using T = ActionReport::Step;
    return std::make_tuple(field("step", &T::step), field_or_default("node", &T::node),
                           field("pool_after", &T::pool_after), field_or_default("duration_ns", &T::duration_ns));
  }
};
template <>
struct fragd::wire::Fields<fragd::ActionReport> {
  static auto list() {
    using T = ActionReport;
    return std::make_tuple(
        field("id", &T::id), field("action", &T::action), field_or_default("trigger", &T::trigger),
        field("node", &T::node), field_or_default("reason", &T::reason), field("result", &T::result),
        field_or_default("detail", &T::detail), field("size_kib", &T::size_kib), field("target", &T::target),
        field("start_unix_ns", &T::start_unix_ns), field("duration_ns", &T::duration_ns),
        field("score_before", &T::score_before), field("score_after", &T::score_after),
        field("blocks_before", &T::blocks_before), field("blocks_after", &T::blocks_after),
        field("pages_migrated", &T::pages_migrated), field("pool_before", &T::pool_before),
        field("pool_after", &T::pool_after), field("attempts", &T::attempts), field("compactions", &T::compactions),
        field("goal_blocks", &T::goal_blocks), field_or_default("steps", &T::steps));
  }
};
template <>
struct fragd::wire::Fields<fragd::IdsReply> {
  static auto list() { return std::make_tuple(field("ids", &IdsReply::ids)); }
};
template <>
struct fragd::wire::Fields<fragd::ReloadReply> {
  static auto list() { return std::make_tuple(field("message", &ReloadReply::message)); }
};
template <>
struct fragd::wire::Fields<fragd::TraceAck> {
  static auto list() { return std::make_tuple(field_or_default("stream", &TraceAck::stream)); }
};

namespace fragd {

void to_json(json& j, const ActionSummary& a) { j = write_object(a); }
void read_json(const json& j, ActionSummary& a, const std::string& path) {
  a = ActionSummary{};
  read_object(j, a, path);
}
void from_json(const json& j, ActionSummary& a) { read_json(j, a, "action_running"); }

void to_json(json& j, const ActionReport& r) { j = write_object(r); }
void read_json(const json& j, ActionReport& r, const std::string& path) {
  r = ActionReport{};
  read_object(j, r, path);
}
void from_json(const json& j, ActionReport& r) { read_json(j, r, "outcome"); }

void to_json(json& j, const IdsReply& r) {
  j = write_object(r);
  j["ok"] = true;
}
void from_json(const json& j, IdsReply& r) { read_object(j, r, ""); }

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
  r.outcome.emplace();
  read_json(*out, *r.outcome, "outcome");
}

void to_json(json& j, const ReloadReply& r) {
  j = write_object(r);
  j["ok"] = true;
}
void from_json(const json& j, ReloadReply& r) { read_object(j, r, ""); }

void to_json(json& j, const TraceAck& r) {
  j = write_object(r);
  j["ok"] = true;
}
void from_json(const json& j, TraceAck& r) {
  r = TraceAck{};
  read_object(j, r, "");
}

}  // namespace fragd
