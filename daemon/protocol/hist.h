// SPDX-License-Identifier: Apache-2.0
// The answer to {"cmd":"hist"} (docs/control-protocol.md): per order the
// allocations by outcome, the time stalled in each phase and the stall
// latency histograms, in the sparse JSON form of a LatencyHist defined here.
// fragd fills it from its BPF snapshot; fragctl reads it, takes intervals of
// it and renders it (fragctl/render/hist.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/histogram.h"
#include "base/result.h"

namespace fragd {

// Sparse form: {"count":N,"sum_ns":S,"buckets":[[index,count],...]}, only
// non-zero buckets, by ascending index. from_json rejects a non-object,
// missing or non-integer count/sum_ns/buckets, a pair that is not [unsigned,
// unsigned], and an index >= FRAGD_HIST_BUCKETS; a repeated index adds up.
void to_json(nlohmann::json& j, const LatencyHist& h);
void from_json(const nlohmann::json& j, LatencyHist& h);
// The same as a Result (never an exception).
Result<LatencyHist> parse_latency_hist(const nlohmann::json& j);

// One order of a "hist" answer.
struct OrderStats {
  unsigned order = 0;
  uint64_t fast = 0, stalled = 0, failed = 0;  // allocations by outcome
  uint64_t compaction_ns = 0, reclaim_ns = 0;  // time stalled in each phase
  LatencyHist success;  // stalls that ended with the page granted
  LatencyHist failure;  // stalls that ended without a page
  uint64_t allocations() const { return fast + stalled + failed; }
};

// The answer to "hist" (cumulative since fragd attached; fragctl also keeps
// intervals in it). Its "hist_scheme" is fragd_common.h's: an answer with
// another is refused (use the fragctl of the same build).
struct HistSnapshot {
  unsigned min_order = 0;
  uint64_t uptime_ns = 0;
  // Allocation counting (bpf.allocations), "allocations": {"mode","counting"};
  // empty from a fragd that does not say.
  std::string counting_mode;
  std::optional<bool> counting;
  std::vector<OrderStats> orders;  // ascending order
  const OrderStats* find(unsigned order) const;
};
// from_json: orders above 10, missing or non-integer counters, malformed
// histograms and a repeated order are errors; orders come out sorted.
void to_json(nlohmann::json& j, const HistSnapshot& s);
void from_json(const nlohmann::json& j, HistSnapshot& s);

// One line of the trace stream: a slow allocation stall.
struct StallEvent {
  uint64_t ts_ns = 0, pid = 0, tid = 0, cgroup_id = 0, order = 0, gfp = 0;
  std::string comm;    // printable ASCII (fragd replaces the rest by '?')
  uint64_t duration_ns = 0, compact_ns = 0, reclaim_ns = 0;
  std::string result;  // success, failure
};
// from_json needs comm, pid, order, duration_ns and result; the rest default to 0.
void to_json(nlohmann::json& j, const StallEvent& e);
void from_json(const nlohmann::json& j, StallEvent& e);

}  // namespace fragd
