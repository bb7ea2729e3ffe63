// SPDX-License-Identifier: Apache-2.0
#include "fragctl/render/actions.h"

#include <algorithm>
#include <cerrno>

#include "base/format.h"
#include "base/text.h"
#include "protocol/request.h"
#include "protocol/wire.h"

namespace fragd {

using json = nlohmann::json;

json compact_request(std::optional<int> node) { return ControlRequest::compact(node); }

json pool_request(uint64_t size_kib, uint64_t count, std::optional<int> node) {
  return ControlRequest::pool(size_kib, count, node);
}

json action_request(uint64_t id) { return ControlRequest::action(id); }

Result<std::vector<uint64_t>> parse_ids_answer(const json& answer, std::string_view cmd) {
  auto r = read_answer<IdsReply>(answer, cmd);
  if (!r) return r.error();
  if (r->ids.empty())
    return make_error("fragd accepted '" + std::string(cmd) +
                      "' but queued no action: nothing was done (see 'fragctl status')");
  return std::move(r->ids);
}

Result<std::string> parse_reload_answer(const json& answer) {
  auto r = read_answer<ReloadReply>(answer, "reload");
  if (!r) return r.error();
  return printable(r->message.value_or("policy reloaded"));
}

std::string node_text(int64_t node) { return node < 0 ? std::string("all") : std::to_string(node); }

namespace {

std::string u64_or_dash(std::optional<uint64_t> v) { return v ? std::to_string(*v) : std::string("-"); }

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string score_text(std::optional<int64_t> v) { return v && *v >= 0 ? std::to_string(*v) : std::string("-"); }

std::string seconds_text(uint64_t ns) { return strf("%.2f s", static_cast<double>(ns) / 1e9); }

// Why a result is not a success, when fragd gave no detail.
std::string default_failure_reason(const ActionReport& o) {
  const std::string target = o.target ? " of " + std::to_string(*o.target) : std::string();
  if (o.result == "no_gain")
    return "the score fell too little (" + score_text(o.score_before) + " -> " + score_text(o.score_after) + ")";
  if (o.result == "short") return "the pool stopped short of its target (" + u64_or_dash(o.pool_after) + target + ")";
  if (o.result == "guard")
    return "stopped by the MemAvailable guard (" + u64_or_dash(o.pool_after) + target + " pages)";
  if (o.result == "abandoned") return "fragd was exiting";
  if (o.result == "cut")
    return "cut short: its deadline ran out (compaction.cpu_budget, or the request's --timeout)";
  if (o.result == "refused") return "fragd refused it";
  return "fragd gave no detail";
}

}  // namespace

Result<ActionReport> parse_outcome(const json& outcome) {
  try {
    return outcome.get<ActionReport>();
  } catch (const Malformed& m) {
    return make_error(m.what);
  } catch (const json::exception& e) {
    return make_error(std::string("action outcome: ") + e.what());
  }
}

std::string action_subject(const std::string& action, int64_t node, std::optional<uint64_t> size_kib) {
  if (action == "compact") return node < 0 ? std::string("compact every node") : "compact node " + node_text(node);
  if (action == "pool")
    return "pool " + (size_kib ? format_size_kib(*size_kib) : std::string("?")) + " node " + node_text(node);
  std::string s = printable(action);
  if (node >= 0) s += " node " + std::to_string(node);
  return s;
}

std::string outcome_subject(const ActionReport& o) { return action_subject(o.action, o.node, o.size_kib); }

std::string format_outcome(const ActionReport& o) {
  std::string out = outcome_subject(o) + ": " + printable(o.result);
  auto part = [&out](const std::string& p) { out += ", " + p; };
  if (o.action == "pool") {
    if (o.pool_before || o.pool_after || o.target) {
      std::string p = u64_or_dash(o.pool_before) + " -> " + u64_or_dash(o.pool_after);
      if (o.target) p += " (target " + std::to_string(*o.target) + ")";
      part(p);
    }
    if (o.attempts) part(plural(*o.attempts, "write", "writes"));
    if (o.compactions) part(plural(*o.compactions, "compaction", "compactions"));
  } else {
    const bool measured = (o.score_before && *o.score_before >= 0) || (o.score_after && *o.score_after >= 0);
    if (measured) part("score " + score_text(o.score_before) + " -> " + score_text(o.score_after));
    // A dry run measures nothing after (it did nothing): its "after" fields are placeholders.
    const bool after_measured = o.result != "dry_run";
    if ((o.trigger == "reserve" || o.goal_blocks) && (o.blocks_before || o.blocks_after))
      part("free blocks " + u64_or_dash(o.blocks_before) + " -> " +
           (after_measured ? u64_or_dash(o.blocks_after) : std::string("-")) +
           (o.goal_blocks ? " (goal " + std::to_string(*o.goal_blocks) + ")" : std::string()));
    if (o.pages_migrated && (o.action == "compact" || *o.pages_migrated > 0))
      part(plural(*o.pages_migrated, "page migrated", "pages migrated"));
  }
  if (o.duration_ns) part(seconds_text(*o.duration_ns));
  if (!o.trigger.empty() || !o.reason.empty()) {
    out += " (" + printable(o.trigger);
    if (!o.trigger.empty() && !o.reason.empty()) out += ": ";
    out += printable(o.reason) + ")";
  }
  if (!o.detail.empty()) out += "; " + printable(o.detail);
  return out;
}

std::string outcome_failure(const ActionReport& o) {
  return outcome_subject(o) + ": " + printable(o.result) + ": " +
         (o.detail.empty() ? default_failure_reason(o) : printable(o.detail));
}

Result<ActionAnswer> parse_action_answer(const json& answer, uint64_t id) {
  const std::string which = strf("action %llu", static_cast<unsigned long long>(id));
  if (auto ok = check_answer(answer, "action"); !ok) return make_error("cannot follow " + which + ": " + ok.error().message);
  const std::string where = "malformed answer to 'action' (" + which + ") from fragd";
  ActionStateReply r;
  try {
    from_json(answer, r);
  } catch (const Malformed& m) {
    return make_error(where + ": " + m.what);
  } catch (const json::exception& e) {
    return make_error(where + ": " + e.what());
  }
  ActionAnswer a;
  a.state = r.state;
  if (r.state != ActionState::Done) return a;
  if (r.outcome->id != id)
    return make_error(where + strf(": the outcome is that of action %llu", static_cast<unsigned long long>(r.outcome->id)));
  a.outcome = std::move(*r.outcome);
  return a;
}

json outcomes_output_json(const std::vector<FinishedAction>& finished) {
  json arr = json::array();
  for (const auto& f : finished) arr.push_back(f.view);
  return arr;
}

Result<std::vector<FinishedAction>> wait_for_actions(const std::vector<uint64_t>& ids, const ActionWaiter& w) {
  std::vector<std::optional<FinishedAction>> done(ids.size());
  std::vector<ActionState> state(ids.size(), ActionState::Queued);
  const int64_t deadline = w.now_ms() + w.timeout_ms;
  // "action 8 (running), action 9 (queued)" for the ones not done.
  auto pending_text = [&]() {
    std::string t;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (done[i]) continue;
      if (!t.empty()) t += ", ";
      t += strf("action %llu (%s)", static_cast<unsigned long long>(ids[i]),
                state[i] == ActionState::Running ? "running" : "queued");
    }
    return t;
  };
  for (;;) {
    size_t pending = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (done[i]) continue;
      auto answer = w.ask(action_request(ids[i]));
      if (!answer) {
        if (answer.error().err == EINTR)
          return make_error("interrupted; fragd carries on with " + pending_text() + ": see 'fragctl status' for the outcome", EINTR);
        return answer.error();
      }
      auto a = parse_action_answer(*answer, ids[i]);
      if (!a) return a.error();
      state[i] = a->state;
      if (a->state != ActionState::Done) {
        ++pending;
        continue;
      }
      done[i] = FinishedAction{std::move(a->outcome)};
      if (w.on_done) w.on_done(*done[i]);
    }
    if (pending == 0) break;
    const int64_t now = w.now_ms();
    if (now >= deadline)
      return make_error(strf("gave up after %g s waiting for ", static_cast<double>(w.timeout_ms) / 1e3) +
                            pending_text() +
                            "; fragd carries on regardless: see 'fragctl status' for the outcome, or pass a longer "
                            "--timeout",
                        ETIMEDOUT);
    if (!w.sleep_until(std::min(now + w.interval_ms, deadline)))
      return make_error("interrupted; fragd carries on with " + pending_text() + ": see 'fragctl status' for the outcome", EINTR);
  }
  std::vector<FinishedAction> out;
  out.reserve(ids.size());
  for (auto& d : done) out.push_back(std::move(*d));
  return out;
}

}  // namespace fragd
