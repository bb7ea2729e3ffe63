// SPDX-License-Identifier: Apache-2.0
// `fragctl status`: the answer to {"cmd":"status"} (protocol/status.h) as
// text. Pure logic, unit-tested on fixtures.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"
#include "protocol/status.h"

namespace fragd {

// Human view of an answer to {"cmd":"status"} (envelope included): daemon
// line; per node its score and per zone score, free pages, unusable index at
// order 9, free blocks of orders 0..10 in columns and a line of pageblocks by
// migratetype; hugepage pools; programs attached; events dropped; compaction
// runs by trigger. "nodes" must be an array; other missing fields show as "-".
// In act mode's answers (keys "policy", "policy_nodes", "pools",
// "action_running", "actions", each shown when present) a policy block
// follows: mode, method, source, reloads, CPU budget; per node its policy
// state; pools target vs reached; the action running; the last
// kStatusActionsShown actions, newest last, times local (utc_times: UTC).
inline constexpr size_t kStatusActionsShown = 10;
Result<std::string> format_status(const nlohmann::json& answer, uint64_t page_kib = 4, bool utc_times = false);
// What `fragctl status --json` prints: fragd's answer as it came.
nlohmann::json status_output_json(const nlohmann::json& answer);

// The same from the answer as read.
std::string format_status(const StatusReply& s, uint64_t page_kib = 4, bool utc_times = false);

}  // namespace fragd
