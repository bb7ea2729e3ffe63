// fragctl's view of control-socket answers (docs/control-protocol.md): parse,
// validate and format them as text or JSON. Pure logic (no sockets, no
// clock), so it is unit-tested on fixtures. Malformed answers give an Error,
// never an exception.
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/format.h"
#include "base/histogram.h"
#include "base/result.h"

namespace fragd {

// Checks the envelope of an answer to `cmd`: a JSON object with "ok": true.
// Errors: "fragd refused '<cmd>': <error>" for "ok": false, "malformed answer
// to '<cmd>' from fragd: ..." otherwise.
Result<void> check_answer(const nlohmann::json& answer, std::string_view cmd);

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
  // Allocation counting (bpf.allocations) when fragd answered; empty from a fragd that does not say.
  std::string counting_mode;
  std::optional<bool> counting;
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

// `fragctl cost`: one line per program (runs, runs/s, ns per run, ns per page
// fault over the window) and a total, from measure_cost's answer (fragctl/cost.h).
// Error naming the field when the answer is malformed.
Result<std::string> format_cost(const nlohmann::json& cost);

// Header and lines of `fragctl trace`, bcc style:
// "TIME     COMM             PID     ORDER RESULT      MS" (newline-free).
std::string trace_header();
// One event line; `local` is the wall-clock time it was received (HH:MM:SS).
// MS is duration_ns in ms with 3 decimals. Control characters of comm are
// replaced by '?'.
Result<std::string> format_trace_line(const nlohmann::json& event, const std::tm& local);

// --- Acting: compact, pool, action, reload (docs/control-protocol.md) ------

// Requests. node: nullopt = every node in the policy's scope (compact) or the
// global pool (pool).
nlohmann::json compact_request(std::optional<int> node);
nlohmann::json pool_request(uint64_t size_kib, uint64_t count, std::optional<int> node);
nlohmann::json action_request(uint64_t id);

// The ids of {"ok":true,"ids":[7,8]}, the answer to compact and pool. An empty
// list is an error (fragd queued nothing).
Result<std::vector<uint64_t>> parse_ids_answer(const nlohmann::json& answer, std::string_view cmd);

// The "message" of the answer to reload ("policy reloaded" if none). A
// refusal is "fragd refused 'reload': <error>" (fragd's error says that the
// running policy is kept, and why).
Result<std::string> parse_reload_answer(const nlohmann::json& answer);

// One finished action: the "outcome" of an action answer or an entry of
// status' "actions". id, action, node and result are required; the figures
// are optional (absent: not shown), with the protocol's "does not apply"
// values (0, or -1 for scores) kept as sent.
struct OutcomeView {
  uint64_t id = 0;
  std::string action;   // compact, proactiveness_raise, proactiveness_restore, pool
  std::string trigger;  // score, demand, reserve, manual, pool, hold, policy; "" if absent
  int64_t node = -1;    // -1: global
  std::string reason;
  std::string result;   // ok, no_gain, short, guard, error, dry_run, abandoned, refused
  std::string detail;
  std::optional<uint64_t> start_unix_ns, duration_ns;
  std::optional<int64_t> score_before, score_after;  // -1: not measured
  std::optional<uint64_t> blocks_before, blocks_after, pages_migrated;
  std::optional<uint64_t> size_kib, target, pool_before, pool_after;
  std::optional<uint64_t> attempts, compactions;  // pool: pool writes, node compactions
  // ok, dry_run and no_gain are successes; every other result is not.
  // no_gain: the compaction ran as asked; the node had nothing more to give.
  bool succeeded() const { return result == "ok" || result == "dry_run" || result == "no_gain"; }
};
Result<OutcomeView> parse_outcome(const nlohmann::json& outcome);

// What the action is about: "compact node 0", "compact every node",
// "pool 2 MiB node 1", "pool 2 MiB node all", "proactiveness_raise".
std::string outcome_subject(const OutcomeView& o);
// One line, no newline, e.g.
//   compact node 0: ok, score 93 -> 4, 392114 pages migrated, 1.52 s (manual: fragctl compact)
//   pool 2 MiB node all: ok, 0 -> 3000 (target 3000), 2 writes, 1 compaction, 1.61 s (manual: fragctl pool set)
// A detail follows after "; ". Control characters of strings become '?'.
std::string format_outcome(const OutcomeView& o);
// Why an unsuccessful action failed, for stderr: "<subject>: <result>: <detail>".
std::string outcome_failure(const OutcomeView& o);

enum class ActionState { Queued, Running, Done };

struct ActionAnswer {
  ActionState state = ActionState::Queued;
  nlohmann::json raw_outcome;  // Done: the outcome as sent (for --json)
  OutcomeView outcome;         // Done: parsed
};
// Parses the answer to {"cmd":"action","id":id}. A done answer must carry an
// outcome of that id. Refusals ("unknown action id 7") are errors.
Result<ActionAnswer> parse_action_answer(const nlohmann::json& answer, uint64_t id);

struct FinishedAction {
  nlohmann::json raw;
  OutcomeView view;
};

// How wait_for_actions() talks to fragd and to the clock; the unit tests
// replace all of them.
struct ActionWaiter {
  // One exchange with fragd: the answer to `request`, whatever its "ok".
  std::function<Result<nlohmann::json>(const nlohmann::json& request)> ask;
  // CLOCK_MONOTONIC in ms.
  std::function<int64_t()> now_ms;
  // Sleeps until now_ms() >= deadline_ms; false when a signal cut it short.
  std::function<bool(int64_t deadline_ms)> sleep_until;
  // Called once per action as soon as it is seen done (may be empty).
  std::function<void(const FinishedAction&)> on_done;
  int64_t interval_ms = 200;
  int64_t timeout_ms = 300000;
};

// Polls each id with {"cmd":"action","id":..} every interval_ms until all are
// done; returns their outcomes in the order of `ids`. Errors: a refused or
// malformed answer (says which action), timeout (err ETIMEDOUT: which actions
// are still queued or running; they go on in fragd), a signal (err EINTR).
// What `fragctl compact|pool set --json` prints: the outcomes as fragd sent them, one array.
nlohmann::json outcomes_output_json(const std::vector<FinishedAction>& finished);

Result<std::vector<FinishedAction>> wait_for_actions(const std::vector<uint64_t>& ids, const ActionWaiter& w);

}  // namespace fragd
