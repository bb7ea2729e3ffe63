// SPDX-License-Identifier: Apache-2.0
// The protocol's messages (protocol/): each answer fragd sent (recorded from a
// live fragd in tests/fixtures/answers) read with from_json and written back
// with to_json is the same JSON, value for value and type for type, so fragd
// and fragctl agree on the wire; requests likewise. Bad answers (a missing
// key, a wrong type) are refused with an error naming the field.
#include <gtest/gtest.h>

#include <set>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/action.h"
#include "protocol/hist.h"
#include "protocol/map.h"
#include "protocol/request.h"
#include "protocol/status.h"
#include "protocol/wire.h"

using nlohmann::json;

namespace {

json answer(const std::string& name) {
  std::ifstream f(std::string(FRAGD_FIXTURES_DIR) + "/answers/" + name);
  EXPECT_TRUE(f) << name;
  return json::parse(f);
}

// Same values and the same JSON types (an integer stays an integer, a float a float;
// signed or unsigned is nlohmann's business, not the wire's).
void expect_same(const json& want, const json& got, const std::string& path = "") {
  if (want.is_number_integer() && got.is_number_integer()) {
    EXPECT_EQ(want.dump(), got.dump()) << path;
    return;
  }
  ASSERT_EQ(want.type(), got.type()) << path << ": " << want.dump() << " vs " << got.dump();
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << path << "." << it.key() << " lost";
      expect_same(it.value(), got[it.key()], path + "." + it.key());
    }
    for (auto it = got.begin(); it != got.end(); ++it)
      EXPECT_TRUE(want.contains(it.key())) << path << "." << it.key() << " added";
  } else if (want.is_array()) {
    ASSERT_EQ(want.size(), got.size()) << path;
    for (size_t i = 0; i < want.size(); ++i) expect_same(want[i], got[i], path + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(want, got) << path;
  }
}

template <class T>
void expect_round_trip(const std::string& fixture, const char* cmd) {
  const json a = answer(fixture);
  auto r = fragd::read_answer<T>(a, cmd);
  ASSERT_TRUE(r.ok()) << fixture << ": " << r.error().message;
  expect_same(a, json(*r));
  EXPECT_EQ(a.dump(), json(*r).dump()) << fixture;
}

TEST(ProtocolMessages, RecordedAnswersRoundTrip) {
  expect_round_trip<fragd::HistSnapshot>("hist.json", "hist");
  expect_round_trip<fragd::StatusReply>("status.json", "status");
  expect_round_trip<fragd::MapView>("map.json", "map");
  expect_round_trip<fragd::ActionStateReply>("action_done.json", "action");
  expect_round_trip<fragd::IdsReply>("ids.json", "compact");
  expect_round_trip<fragd::ReloadReply>("reload.json", "reload");
  expect_round_trip<fragd::TraceAck>("trace_ack.json", "trace");
}

TEST(ProtocolMessages, RefusalIsTheError) {
  auto r = fragd::read_answer<fragd::StatusReply>(answer("error.json"), "status");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("fragd refused 'status': bad request: unknown command", 0), 0u) << r.error().message;
  EXPECT_EQ(fragd::error_answer("no"), json::parse(R"({"ok":false,"error":"no"})"));
}

TEST(ProtocolMessages, StallEventRoundTrip) {
  fragd::StallEvent e;
  e.ts_ns = 1;
  e.pid = 2;
  e.tid = 3;
  e.comm = "stress";
  e.cgroup_id = 4;
  e.order = 9;
  e.gfp = 0xcc0;
  e.duration_ns = 5;
  e.compact_ns = 6;
  e.reclaim_ns = 7;
  e.result = "success";
  const json j = e;
  EXPECT_EQ(j.size(), 11u);
  EXPECT_EQ(json(j.get<fragd::StallEvent>()), j);
}

TEST(ProtocolMessages, ActionSummaryRoundTrip) {
  const json j = json::parse(R"({"id":40,"action":"pool","trigger":"manual","node":-1,"reason":"r",
                                 "size_kib":2048,"target":3})");
  EXPECT_EQ(json(j.get<fragd::ActionSummary>()), j);
}

TEST(ProtocolMessages, ActionStepsRoundTrip) {
  const json j = json::parse(R"({"id":7,"action":"compact","trigger":"reserve","node":0,"reason":"r",
                                 "result":"ok","detail":"","goal_blocks":3072,
                                 "steps":[{"step":"grow","node":0,"duration_ns":812345,"pool_after":3072},
                                          {"step":"release","node":0,"duration_ns":9000,"pool_after":0},
                                          {"step":"compact","node":1,"duration_ns":5}]})");
  const auto r = j.get<fragd::ActionReport>();
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[2].step, "compact");
  EXPECT_FALSE(r.steps[2].pool_after.has_value());
  EXPECT_EQ(r.goal_blocks, 3072u);
  expect_same(j, json(r));
  EXPECT_THROW(json::parse(R"({"id":7,"action":"pool","node":0,"result":"ok","steps":{}})").get<fragd::ActionReport>(),
               fragd::Malformed);
}

// A signed field (a node) given an unsigned integer past INT64_MAX is refused, not wrapped negative.
TEST(ProtocolMessages, ASignedFieldRefusesAnUnsignedPastItsRange) {
  const json big = json::parse(R"({"id":1,"action":"compact","node":18446744073709551615,"result":"ok"})");
  fragd::ActionReport r;
  try {
    fragd::from_json(big, r);
    ADD_FAILURE() << "read as node " << r.node;
  } catch (const fragd::Malformed& m) {
    EXPECT_EQ(m.what, "outcome.node is not an integer");
  }
}

TEST(ProtocolMessages, RequestsRoundTrip) {
  for (const char* text : {R"({"cmd":"hist"})", R"({"cmd":"status"})", R"({"cmd":"trace"})", R"({"cmd":"reload"})",
                           R"({"cmd":"top"})",
                           R"({"cmd":"map","max_age_ns":0})", R"({"cmd":"action","id":7})",
                           R"({"cmd":"compact"})", R"({"cmd":"compact","node":1})",
                           R"({"cmd":"pool","size_kib":2048,"count":3,"node":0})",
                           R"({"cmd":"compact","node":1,"timeout_ms":300000})",
                           R"({"cmd":"pool","size_kib":2048,"count":3,"timeout_ms":100})"}) {
    auto r = fragd::parse_request(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message;
    EXPECT_EQ(json(*r), json::parse(text)) << text;
  }
  EXPECT_EQ(json(fragd::ControlRequest::pool(2048, 3, std::nullopt)),
            json::parse(R"({"cmd":"pool","size_kib":2048,"count":3})"));
  EXPECT_EQ(fragd::ControlRequest::pool(2048, 3, std::nullopt).access, fragd::Access::Act);
  EXPECT_EQ(json(fragd::ControlRequest::compact(0, 300000)), json::parse(R"({"cmd":"compact","node":0,"timeout_ms":300000})"));
  EXPECT_EQ(fragd::ControlRequest::of(fragd::Command::Reload).access, fragd::Access::Act);
  EXPECT_EQ(fragd::ControlRequest::map(5).access, fragd::Access::Read);
}

// Each request has one name on the wire, which parses back to it, and every name is in the
// list error messages give.
TEST(ProtocolMessages, EveryCommandHasOneNameThatParsesBack) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(fragd::Command::Release); ++i) {
    const auto c = static_cast<fragd::Command>(i);
    const std::string name(fragd::command_name(c));
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    EXPECT_NE(fragd::known_commands().find(name), std::string::npos) << name;
    const std::string fields = c == fragd::Command::Pool        ? R"(,"size_kib":2048,"count":1)"
                               : c == fragd::Command::Action    ? R"(,"id":1)"
                               : c == fragd::Command::Preflight ? R"(,"size_kib":2048,"count":1)"
                               : c == fragd::Command::Ensure    ? R"(,"order":4,"count":1,"for":"slurm:42")"
                               : c == fragd::Command::Release   ? R"(,"for":"libvirt:vm1")"
                                                                : "";
    auto r = fragd::parse_request(R"({"cmd":")" + name + "\"" + fields + "}");
    ASSERT_TRUE(r.ok()) << name << ": " << r.error().message;
    EXPECT_EQ(r->cmd, c) << name;
    EXPECT_EQ(json(*r)["cmd"], name);
  }
  EXPECT_EQ(names.size(), 12u);
  EXPECT_EQ(fragd::known_commands(),
            "hist, status, trace, top, map, action, compact, pool, reload, preflight, ensure, release");
}

template <class T>
fragd::Result<void> read_as(const json& answer, const std::string& cmd) {
  auto r = fragd::read_answer<T>(answer, cmd);
  if (!r) return r.error();
  return {};
}

// A key missing or of the wrong type: an Error naming the answer and the field, never an exception.
TEST(ProtocolMessages, BadAnswersNameTheField) {
  struct Case {
    const char* fixture;
    const char* cmd;
    const char* pointer;  // the field to break (JSON pointer)
    bool erase;           // erase it, or set it to an array (of no field's type)
    const char* expect;   // in the message
  };
  const Case cases[] = {
      {"hist.json", "hist", "/orders", true, "the answer: missing \"orders\""},
      {"hist.json", "hist", "/orders/0/fast", true, "orders[0]: missing \"fast\""},
      {"hist.json", "hist", "/orders/0/stalled", false, "orders[0].stalled is not a non-negative integer"},
      {"hist.json", "hist", "/orders/0/stall/success/sum_ns", true, "orders[0].stall.success: histogram: missing"},
      {"status.json", "status", "/nodes", true, "the answer: missing \"nodes\""},
      {"status.json", "status", "/nodes/0/score", false, "nodes[0].score is not a non-negative integer"},
      {"status.json", "status", "/nodes/0/zones/0/free_blocks/2", false, "nodes[0].zones[0].free_blocks[2] is not a"},
      {"status.json", "status", "/policy/dry_run", false, "policy.dry_run is not a boolean"},
      {"status.json", "status", "/policy_nodes/0/node", false, "policy_nodes[0].node is not an integer"},
      {"status.json", "status", "/actions/0/result", true, "actions[0]: missing \"result\""},
      {"status.json", "status", "/pollution", false, "pollution: not an object or null"},
      {"status.json", "status", "/pollution/tracked_blocks", true, "pollution: missing \"tracked_blocks\""},
      {"map.json", "map", "/scan/zones/0/classes", true, "scan.zones[0]: missing \"classes\""},
      {"map.json", "map", "/scan/pages_read", false, "scan.pages_read: not a non-negative integer"},
      {"action_done.json", "action", "/state", true, "no string \"state\""},
      {"action_done.json", "action", "/outcome/node", false, "outcome.node is not an integer"},
      {"action_done.json", "action", "/outcome/id", true, "outcome: missing \"id\""},
      {"ids.json", "compact", "/ids/0", false, "ids[0] is not a non-negative integer"},
      {"reload.json", "reload", "/message", false, "message is not a string"},
  };
  for (const auto& c : cases) {
    json a = answer(c.fixture);
    const json::json_pointer p(c.pointer);
    if (c.erase)
      a[p.parent_pointer()].erase(p.back());
    else
      a[p] = json::array();
    const std::string cmd = c.cmd;
    auto read = [&]() -> fragd::Result<void> {
      if (cmd == "hist") return read_as<fragd::HistSnapshot>(a, cmd);
      if (cmd == "status") return read_as<fragd::StatusReply>(a, cmd);
      if (cmd == "map") return read_as<fragd::MapView>(a, cmd);
      if (cmd == "action") return read_as<fragd::ActionStateReply>(a, cmd);
      if (cmd == "compact") return read_as<fragd::IdsReply>(a, cmd);
      return read_as<fragd::ReloadReply>(a, cmd);
    };
    fragd::Result<void> got;
    EXPECT_NO_THROW(got = read()) << c.fixture << " " << c.pointer;
    ASSERT_FALSE(got.ok()) << c.fixture << " " << c.pointer;
    const std::string want_prefix = std::string("malformed answer to '") + c.cmd + "' from fragd: ";
    EXPECT_EQ(got.error().message.rfind(want_prefix, 0), 0u) << got.error().message;
    EXPECT_NE(got.error().message.find(c.expect), std::string::npos) << got.error().message << " -- want " << c.expect;
  }
}

}  // namespace
