// SPDX-License-Identifier: Apache-2.0
// `fragctl hist`: the answer to {"cmd":"hist"} (protocol/hist.h) as text
// (bcc-style log2 histograms) and as the JSON fragctl prints, and intervals
// between two answers. Pure logic, unit-tested on fixtures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/histogram.h"
#include "base/result.h"
#include "protocol/hist.h"

namespace fragd {

// Size of an allocation of `order` pages of `page_kib` KiB: "2048 KiB".
std::string format_order_size(unsigned order, uint64_t page_kib);

// Reads an answer to {"cmd":"hist"} (envelope included; protocol/hist.h says what is checked).
Result<HistSnapshot> parse_hist_answer(const nlohmann::json& answer);

// newer - older, order by order. If fragd restarted in between (uptime went
// backwards) the interval is `newer` as a whole; a single counter that went
// backwards is clamped at 0 (see LatencyHist's operator-).
HistSnapshot hist_interval(const HistSnapshot& newer, const HistSnapshot& older);

struct HistViewOptions {
  std::optional<unsigned> order;  // only this order (shown even if idle)
  uint64_t page_kib = 4;          // page size, for the size of an order
};

// Orders shown: the selected one, or every order with an allocation.
std::vector<const OrderStats*> shown_orders(const HistSnapshot& s, const HistViewOptions& opt);

// "order 9 (2048 KiB): fast 1418  stalled 1582  failed 1300  stall p50 312.0us
//  p90 455.1us p99 501.2us max 524.3us  compaction 812.3ms reclaim 0.0ms"
// (one line, no newline). Percentiles are those of stalls that succeeded.
std::string format_order_header(const OrderStats& o, uint64_t page_kib);

// For each shown order: the header line, the log2 histogram (usecs) of
// stalled successes, then, if any, that of stalled failures under the title
// "  stalls that failed (N):"; orders separated by a blank line. When no
// order is shown: a single line saying there was no allocation.
std::string format_hist_text(const HistSnapshot& s, const HistViewOptions& opt);

// Machine-readable form of the shown orders:
// {"uptime_ns":..,"orders":[{"order":9,"size_kib":2048,"fast":..,"stalled":..,
//  "failed":..,"phase_ns":{"compaction":..,"reclaim":..},
//  "stall":{"success":H,"failure":H}}]} where H is {"count","sum_ns","p50_ns",
// "p90_ns","p99_ns","max_ns" (null when empty),"buckets":[[lower_ns,upper_ns,
// count],...]} with upper_ns null for the open-ended last bucket.
nlohmann::json hist_report_json(const HistSnapshot& s, const HistViewOptions& opt);
nlohmann::json latency_report_json(const LatencyHist& h);

// What `fragctl hist --json` prints: hist_report_json plus "time" (local, ISO 8601),
// "cumulative", "interval_s" and "interval_ns" (null when cumulative; interval_ns is
// the interval as fragd measured it, s.uptime_ns) and, for an interval, "uptime_ns"
// of the newer answer.
struct HistInterval {
  double seconds = 0;      // as asked (--interval)
  uint64_t uptime_ns = 0;  // fragd's uptime at the newer answer
};
nlohmann::json hist_output_json(const HistSnapshot& s, const HistViewOptions& opt, const std::string& time,
                                std::optional<HistInterval> interval);

}  // namespace fragd
