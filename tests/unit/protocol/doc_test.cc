// SPDX-License-Identifier: Apache-2.0
// docs/control-protocol.md names every key the protocol's structs write: the
// recorded answers (tests/fixtures/answers) read and written back, requests,
// a stall event and a pool outcome, each key looked up as "key" or `key`.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/top.h"

#include "protocol/action.h"
#include "protocol/hist.h"
#include "protocol/map.h"
#include "protocol/request.h"
#include "protocol/status.h"
#include "protocol/wire.h"

using nlohmann::json;

namespace {

void keys(const json& j, std::set<std::string>& out) {
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) {
      out.insert(it.key());
      keys(it.value(), out);
    }
  else if (j.is_array())
    for (const auto& x : j) keys(x, out);
}

template <class T>
json written(const std::string& fixture, const char* cmd) {
  std::ifstream f(std::string(FRAGD_FIXTURES_DIR) + "/answers/" + fixture);
  auto r = fragd::read_answer<T>(json::parse(f), cmd);
  EXPECT_TRUE(r.ok()) << fixture;
  return r ? json(*r) : json();
}

TEST(ProtocolDoc, NamesEveryKeyTheStructsWrite) {
  std::ifstream d(std::string(FRAGD_FIXTURES_DIR) + "/../../docs/control-protocol.md");
  ASSERT_TRUE(d) << "docs/control-protocol.md";
  std::stringstream ss;
  ss << d.rdbuf();
  const std::string doc = ss.str();

  std::set<std::string> all;
  keys(written<fragd::HistSnapshot>("hist.json", "hist"), all);
  keys(written<fragd::StatusReply>("status.json", "status"), all);
  keys(written<fragd::MapView>("map.json", "map"), all);
  keys(written<fragd::ActionStateReply>("action_done.json", "action"), all);
  keys(written<fragd::IdsReply>("ids.json", "compact"), all);
  keys(written<fragd::ReloadReply>("reload.json", "reload"), all);
  keys(written<fragd::TraceAck>("trace_ack.json", "trace"), all);
  keys(fragd::error_answer("x"), all);
  keys(json(fragd::StallEvent{}), all);
  keys(json(fragd::ControlRequest::pool(2048, 1, 0)), all);
  keys(json(fragd::ControlRequest::map(0)), all);
  keys(json(fragd::ControlRequest::action(1)), all);
  fragd::ActionReport pool;
  pool.attempts = pool.compactions = 1;
  pool.goal_blocks = 3;
  pool.steps.push_back({"grow", 0, 5, 1});
  keys(json(pool), all);
  fragd::MapView none;
  keys(json(none), all);  // scan_error
  fragd::TopReply top;
  top.nodes.push_back({});
  top.cgroups.push_back({"/a", {}});
  top.callsites.push_back({"f", {}});
  top.consumers.push_back({9, "hugetlb", {}});
  top.stacks.push_back({"hugetlb", "f", {"f"}, {}});
  keys(json(top), all);
  fragd::StatusReply st;
  st.warnings = std::vector<std::string>{"w"};
  st.programs = std::vector<fragd::ProgramStatus>{{"p", "t", false, 0, "why"}};
  st.action_running = fragd::ActionSummary{};
  st.withheld = "w";  // an answer to a reader other than root
  keys(json(st), all);
  fragd::MapView withheld;
  withheld.withheld = "w";
  keys(json(withheld), all);
  ASSERT_GT(all.size(), 100u);
  for (const auto& k : all)
    EXPECT_TRUE(doc.find("\"" + k + "\"") != std::string::npos || doc.find("`" + k + "`") != std::string::npos)
        << "docs/control-protocol.md does not name the key \"" << k << "\"";
}

}  // namespace
