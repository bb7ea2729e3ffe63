// SPDX-License-Identifier: Apache-2.0
// fragctl's --json output against tests/contract/fragctl-json.txt, without root: recorded
// answers of a live fragd (tests/fixtures/answers, recorded by
// tests/integration/contract_json_test.sh's fragd) go through what fragctl prints for each
// command, and the key paths that come out must be those the list names for it. The rules of
// the list are tests/contract/keypaths.py's; the live test checks the same list end to end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fragctl/render/ctl_format.h"
#include "fragctl/render/map_view.h"
#include "fragctl/render/preflight.h"
#include "fragctl/render/top.h"
#include "protocol/preflight.h"
#include "protocol/top.h"
#include "protocol/wire.h"
#include "contract.h"

using nlohmann::json;

namespace {

using contract::answer;
using contract::expect_contract;

TEST(ContractJson, Hist) {
  auto s = fragd::parse_hist_answer(answer("hist.json"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  fragd::HistViewOptions view;
  expect_contract("hist", {fragd::hist_output_json(*s, view, "2026-01-01T00:00:00+0000", std::nullopt),
                           fragd::hist_output_json(fragd::hist_interval(*s, *s), view, "2026-01-01T00:00:01+0000",
                                                   fragd::HistInterval{0.5, s->uptime_ns})});
}

TEST(ContractJson, Status) {
  const json a = answer("status.json");
  auto text = fragd::format_status(a);
  ASSERT_TRUE(text.ok()) << text.error().message;
  expect_contract("status", {fragd::status_output_json(a)});
}

TEST(ContractJson, Top) {
  const json a = answer("top.json");
  auto r = fragd::read_answer<fragd::TopReply>(a, "top");
  ASSERT_TRUE(r.ok()) << r.error().message;
  json interval = fragd::top_interval(*r, *r);
  interval["interval_s"] = 2.0;
  interval["time"] = "2026-01-01T00:00:02+0000";
  expect_contract("top", {json(*r), interval});
  EXPECT_FALSE(fragd::format_top_text(*r, {}).empty());
}

TEST(ContractJson, Preflight) {
  const json a = answer("preflight.json");
  auto r = fragd::read_answer<fragd::Supply>(a, "preflight");
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_contract("preflight", {json(*r)});
  EXPECT_EQ(fragd::format_preflight(*r), "this host: 100 x 2 MiB ready, 1761 free now [sampled scan, 9.81s old]\n");
}

TEST(ContractJson, Map) {
  json a = answer("map.json");
  ASSERT_TRUE(fragd::parse_map_answer(a).ok());
  ASSERT_TRUE(fragd::filter_map_answer(a, {}).ok());
  expect_contract("map", {a});
}

TEST(ContractJson, CompactAndPool) {
  auto done = fragd::parse_action_answer(answer("action_done.json"), 2);
  ASSERT_TRUE(done.ok()) << done.error().message;
  std::vector<fragd::FinishedAction> finished{{done->outcome}};
  expect_contract("compact", {fragd::outcomes_output_json(finished)});
}

}  // namespace
