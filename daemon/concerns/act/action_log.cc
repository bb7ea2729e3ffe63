// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/action_log.h"

#include <cstdio>

#include "base/log.h"

namespace fragd {

namespace {

// What an action was asked to do, in either form the protocol carries it.
template <class Action>
Action asked(const ActionRequest& r) {
  Action a;
  a.id = r.id;
  a.action = action_name(r.kind);
  a.trigger = trigger_label(r.trigger);
  a.node = r.node;
  a.reason = r.reason;
  a.size_kib = r.size_kib;
  a.target = r.target;
  return a;
}

}  // namespace

ActionSummary action_summary(const ActionRequest& r) { return asked<ActionSummary>(r); }

ActionReport action_report(const ActionOutcome& o, uint64_t mono_now, uint64_t real_now) {
  const ActionRequest& r = o.req;
  ActionReport a = asked<ActionReport>(r);
  const uint64_t age = mono_now > o.start_ns ? mono_now - o.start_ns : 0;
  a.result = o.result;
  a.detail = o.detail;
  a.start_unix_ns = real_now > age ? real_now - age : 0;
  a.duration_ns = o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0;
  a.score_before = o.score_before;
  a.score_after = o.score_after;
  a.blocks_before = o.blocks_before;
  a.blocks_after = o.blocks_after;
  a.pages_migrated = o.pages_migrated;
  a.pool_before = o.pool_before;
  a.pool_after = o.pool_after;
  if (r.kind == ActionKind::Pool) {
    a.attempts = o.attempts;
    a.compactions = o.compactions;
  }
  if (r.goal_blocks > 0) a.goal_blocks = r.goal_blocks;
  for (const auto& st : o.steps) {
    ActionReport::Step e;
    e.step = st.step;
    e.node = st.node;
    if (st.step != "compact" && st.step != "drop_caches" && st.step != "drain") e.pool_after = st.pool_after;
    e.duration_ns = st.duration_ns;
    a.steps.push_back(std::move(e));
  }
  return a;
}

std::string outcome_line(const ActionOutcome& o) {
  const ActionRequest& r = o.req;
  char dur[32];
  std::snprintf(dur, sizeof(dur), "%.2f s", (o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0) / 1e9);
  std::string s = "action " + std::to_string(r.id) + " " + action_name(r.kind);
  if (r.kind == ActionKind::Pool) s += " " + std::to_string(r.size_kib) + "kB";
  s += r.node < 0 ? std::string(" (global)") : " node " + std::to_string(r.node);
  s += " [" + std::string(trigger_label(r.trigger)) + ": " + r.reason + "]: " + o.result;
  if (r.kind == ActionKind::Compact && o.score_before >= 0) {
    s += ", score " + std::to_string(o.score_before);
    if (o.score_after >= 0) s += " -> " + std::to_string(o.score_after);
    s += ", free blocks " + std::to_string(o.blocks_before) + " -> " + std::to_string(o.blocks_after);
    if (r.goal_blocks > 0) s += " (goal " + std::to_string(r.goal_blocks) + ")";
    s += ", " + std::to_string(o.pages_migrated) + " pages migrated";
  }
  if (r.kind == ActionKind::Pool)
    s += ", pool " + std::to_string(o.pool_before) + " -> " + std::to_string(o.pool_after) + " (target " +
         std::to_string(r.target) + "), " + std::to_string(o.attempts) + " writes, " +
         std::to_string(o.compactions) + " compactions";
  if (r.kind == ActionKind::RaiseProactiveness) s += ", vm.compaction_proactiveness=" + std::to_string(r.proactiveness);
  s += ", " + std::string(dur);
  if (!o.detail.empty()) s += ": " + o.detail;
  return s;
}

void ActionLog::record(const ActionOutcome& o) {
  queued_.erase(o.req.id);
  const std::string line = outcome_line(o);
  if (o.result == "cut")
    log_warn(line + " (cut short at its deadline: compaction.cpu_budget, or a fragctl request's --timeout; "
                    "counted in fragd_actions_total{result=\"cut\"} and fragctl status)");
  else if (o.result == "error" || o.result == "short" || o.result == "guard") log_warn(line);
  else log_info(line);
  const std::string a = action_name(o.req.kind);
  stats_.actions[{a, o.req.node, o.result}]++;
  if (o.result != "dry_run" && o.result != "abandoned") {
    stats_.durations[a].add(o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0);
    stats_.pages_migrated[a] += o.pages_migrated;
  }
  if (o.req.kind == ActionKind::Compact && o.result != "dry_run")
    stats_.last_score[o.req.node] = {o.score_before, o.score_after};
  for (const auto& s : o.steps) stats_.steps[s.step]++;
  recent_.push_back(o);
  while (recent_.size() > kKept) recent_.pop_front();
}

Result<ActionStateReply> ActionLog::state(uint64_t id, const std::optional<ActionRequest>& running, uint64_t mono_now,
                                          uint64_t real_now) const {
  for (const auto& o : recent_)
    if (o.req.id == id) return ActionStateReply{ActionState::Done, action_report(o, mono_now, real_now)};
  if (running && running->id == id) return ActionStateReply{ActionState::Running, std::nullopt};
  if (queued_.count(id)) return ActionStateReply{ActionState::Queued, std::nullopt};
  return make_error("unknown action id " + std::to_string(id));
}

std::vector<ActionReport> ActionLog::last(size_t n, uint64_t mono_now, uint64_t real_now) const {
  std::vector<ActionReport> out;
  for (size_t i = recent_.size() > n ? recent_.size() - n : 0; i < recent_.size(); i++)
    out.push_back(action_report(recent_[i], mono_now, real_now));
  return out;
}

uint64_t ActionLog::cuts() const {
  uint64_t n = 0;
  for (const auto& [k, count] : stats_.actions)
    if (std::get<2>(k) == "cut") n += count;
  return n;
}

}  // namespace fragd
