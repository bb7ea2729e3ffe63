// fragctl's view of control-socket answers (docs/control-protocol.md): parse,
// validate and format them as text or JSON. Pure logic (no sockets, no
// clock), so it is unit-tested on fixtures. Malformed answers give an Error,
// never an exception.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/histview.h"
#include "core/result.h"

namespace fragd {

// Checks the envelope of an answer to `cmd`: a JSON object with "ok": true.
// Errors: "fragd refused '<cmd>': <error>" for "ok": false, "malformed answer
// to '<cmd>' from fragd: ..." otherwise.
Result<void> check_answer(const nlohmann::json& answer, std::string_view cmd);

// A latency in ns, unit chosen by size: "850ns", "312.0us", "12.3ms",
// "2.50s"; "-" for NaN (an empty histogram).
std::string format_ns(double ns);
// A long duration, for "since ...": "45s", "12m05s", "2h03m", "3d04h".
std::string format_age(uint64_t ns);
// Size of an allocation of `order` pages of `page_kib` KiB: "2048 KiB".
std::string format_order_size(unsigned order, uint64_t page_kib);

// One order of a "hist" answer.
struct OrderStats {
  unsigned order = 0;
  uint64_t fast = 0, stalled = 0, failed = 0;  // allocations by outcome
  uint64_t compaction_ns = 0, reclaim_ns = 0;  // time stalled in each phase
  LatencyHist success;  // stalls that ended with the page granted
  LatencyHist failure;  // stalls that ended without a page
  uint64_t allocations() const { return fast + stalled + failed; }
};

// A parsed "hist" answer (cumulative since fragd attached, or an interval).
struct HistSnapshot {
  unsigned min_order = 0;
  uint64_t uptime_ns = 0;
  std::vector<OrderStats> orders;  // ascending order
  const OrderStats* find(unsigned order) const;
};

// Parses an answer to {"cmd":"hist"} (envelope included). Rejects a histogram
// scheme other than fragd_common.h's, orders above 10, missing or
// non-integer counters, malformed histograms.
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

// Human view of an answer to {"cmd":"status"} (envelope included): daemon
// line; per node its score and per zone score, free pages, unusable index at
// order 9, free blocks of orders 0..10 in columns and a line of pageblocks by
// migratetype; hugepage pools; programs attached; events dropped; compaction
// runs by trigger. "nodes" must be an array; other missing fields show as "-".
Result<std::string> format_status(const nlohmann::json& answer, uint64_t page_kib = 4);

// Header and lines of `fragctl trace`, bcc style:
// "TIME     COMM             PID     ORDER RESULT      MS" (newline-free).
std::string trace_header();
// One event line; `local` is the wall-clock time it was received (HH:MM:SS).
// MS is duration_ns in ms with 3 decimals. Control characters of comm are
// replaced by '?'.
Result<std::string> format_trace_line(const nlohmann::json& event, const std::tm& local);

}  // namespace fragd
