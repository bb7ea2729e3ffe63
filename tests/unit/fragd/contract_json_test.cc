// SPDX-License-Identifier: Apache-2.0
// fragctl prints what fragd's views build for `trace --json` (each event as sent) and in
// `pool set --json` (the outcomes as sent): their key paths against
// tests/contract/fragctl-json.txt (see tests/unit/fragctl/render/contract_json_test.cc).
#include <gtest/gtest.h>

#include <cstring>

#include "contract.h"
#include "concerns/act/action_log.h"
#include "concerns/stalls/concern.h"

namespace {

TEST(ContractJson, Trace) {
  stall_event e{};
  std::strcpy(e.comm, "stress");
  e.order = 9;
  contract::expect_contract("trace", {nlohmann::json(fragd::stall_message(e))});
}

TEST(ContractJson, PoolOutcome) {
  fragd::ActionOutcome o;
  o.req.id = 3;
  o.req.kind = fragd::ActionKind::Pool;
  o.req.trigger = fragd::Trigger::Manual;
  o.req.size_kib = 2048;
  o.result = "dry_run";
  contract::expect_contract("pool", {nlohmann::json::array({nlohmann::json(fragd::action_report(o, 10, 20))})});
}

}  // namespace
