// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/concern.h"

#include <sys/stat.h>

#include "version.h"
#include "concerns/act/observe.h"
#include "base/format.h"
#include "base/text.h"
#include "policy/policy.h"
#include "protocol/wire.h"
#include "concerns/memory/score.h"
#include "concerns/pools/metrics.h"

namespace fragd {

namespace {
// The last tick's inputs, now.
Tick at_now(const Tick& last) {
  Tick t = last;
  t.now = now_ns();
  return t;
}
}  // namespace

ActConcern::ActConcern(Shared& sh, std::function<void()> retick, SupplyPort supply)
    : sh_(sh),
      retick_(std::move(retick)),
      supply_(std::move(supply)),
      engine_(sh.cfg.policy),
      actuator_(sh.cfg.proc_root, sh.cfg.sys_root) {}

Result<void> ActConcern::lock_if_acting() {
  if (!sh_.cfg.policy.act) return {};
  return take_act_lock("run in act mode");
}

Result<void> ActConcern::take_act_lock(const std::string& why) {
  if (act_lock_) return {};
  auto claim = claim_host_settings(actuator_, why);
  if (!claim) return claim.error();
  for (const auto& m : claim->report.notes) log_warn(m);
  for (const auto& m : claim->report.restored)
    log_warn(m + ", left changed by a fragd that did not exit cleanly (" + kSavedStateFile + ")");
  for (const auto& m : claim->report.failed) log_error(m);
  act_lock_ = std::move(claim->lock);
  if (auto ro = actuator_.read_only_paths(); !ro.empty()) {
    std::string list;
    bool trees_read_only = false;  // the node or hugepage tree: what every compaction and pool writes
    for (const auto& p : ro) {
      list += (list.empty() ? "" : ", ") + p;
      trees_read_only |= p.ends_with("/devices/system/node") || p.ends_with("/kernel/mm/hugepages");
    }
    // A warning when act mode cannot compact or size a pool (fragd.service without the drop-in);
    // a note when only vm sysctls are read-only (a container's /proc/sys, as the DaemonSet's act
    // overlay keeps it: method proactiveness, drop_caches and the page lists' drain are then unavailable).
    (trees_read_only ? log_warn : log_info)("act mode: " + list + (ro.size() == 1 ? " is" : " are") +
             " read-only for fragd, so the kernel will refuse fragd's writes there: " + read_only_fix("them"));
  }
  return {};
}

void ActConcern::own_writers(BpfPrograms& b) {
  actuator_.set_writer_hooks(ChildWriteHooks{[&b](pid_t pid) { return b.own_writer(static_cast<uint32_t>(pid)); },
                                             [&b](pid_t pid) { b.disown_writer(static_cast<uint32_t>(pid)); },
                                             {}});
}

Result<void> ActConcern::start_runner(BpfReader& r) {
  runner_ = std::make_unique<ActionRunner>(
      actuator_,
      [&r]() -> uint64_t {
        auto s = r.read_compaction_stats();  // one per-CPU array read
        return s ? s->pages_migrated[FRAGD_TRIGGER_FRAGD] : 0;
      },
      kSavedStateFile,
      [&r](unsigned order) -> uint64_t {  // one per-CPU array read, polled while a goal's pool grows
        auto a = r.read_alloc_stats();
        uint64_t n = 0;
        if (a)
          for (unsigned o = order; o < FRAGD_NR_ORDERS; o++)
            for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) n += a->direct_entries[o][p];
        return n;
      });
  return runner_->start();
}

void ActConcern::stop() {
  if (!runner_) return;
  runner_->stop();
  for (const auto& o : runner_->take_finished()) record(o);
  runner_.reset();
}

void ActConcern::tick(const Tick& t) {
  if (!runner_ || !t.mem) return;
  Observation o = observation_of(t.now, t.mem, t.stalls, t.compaction,
                                 std::max(sh_.cfg.policy.compaction.demand.min_order, sh_.cfg.min_order),
                                 t.machine().page_kib);
  if (t.forecast) add_forecast(o, *t.forecast);
  o.guard.counting = t.counting;
  auto r = engine_.decide(o);
  log_ended_leases();
  if (!r) return;
  log_debug("starting action " + std::to_string(r->id) + " " + action_name(r->kind) + ": " + r->reason);
  runner_->submit(*r, sh_.cfg.policy);
}

void ActConcern::record(const ActionOutcome& o) {
  engine_.finished(o);
  actions_.record(o);
  if (o.req.lease && o.result == "ok") actions_.stats().leases["made"]++;
  log_ended_leases();
}

void ActConcern::log_ended_leases() {
  ActStats& st = actions_.stats();
  for (const auto& l : engine_.take_ended_leases()) {
    const char* how = l.held_ns == 0                                  ? "not_made"
                      : l.end == "released"                           ? "released"
                      : l.end.rfind("hold of", 0) == 0                ? "hold_over"
                                                                      : "observe";
    st.leases[how]++;
    log_info(strf("lease %llu for %s (%llu x %s) ended: %s", static_cast<unsigned long long>(l.id), l.consumer.c_str(),
                  static_cast<unsigned long long>(l.count), format_size_kib(l.size_kib).c_str(), l.end.c_str()));
  }
}

LeaseView ActConcern::lease_view(const Lease& l, uint64_t now) const {
  LeaseView v;
  v.id = l.id;
  v.consumer = l.consumer;
  if (l.node >= 0) v.node = l.node;
  v.size_kib = l.size_kib;
  v.count = l.count;
  v.state = lease_state_name(l.state);
  v.age_ns = now > l.asked_ns ? now - l.asked_ns : 0;
  v.expires_in_ns = l.state == LeaseState::Held && l.expires_ns > now ? l.expires_ns - now : 0;
  v.action = l.action_id;
  v.end = l.end;
  return v;
}

void ActConcern::on_finished() {
  auto done = runner_->take_finished();
  for (const auto& o : done) record(o);
  // Fresh numbers before the next decision: the action changed them.
  if (!done.empty()) retick_();
}

void ActConcern::watch(EventLoop& loop) {
  if (runner_) loop.watch(runner_->event_fd(), [this](short) { on_finished(); });
}

void ActConcern::metrics(const SeriesPlan& plan, const Tick&, Families& out) {
  ActStats& act = actions_.stats();
  const Policy& p = sh_.cfg.policy;
  act.nodes = engine_.nodes();
  act.pools = engine_.pools();
  act.proactiveness_raised = engine_.proactiveness_raised();
  act.budget_used_ns = engine_.budget_used_ns();
  act.budget_ns = p.compaction.cpu_budget_ns;
  act.mode = p.act ? "act" : "observe";
  act.dry_run = p.dry_run;
  act.method = method_name(p.compaction.method);
  act.leased_pages.clear();
  for (const auto& l : engine_.leases().live()) act.leased_pages[{l.node, l.size_kib}] += l.count;
  families(act, plan, out);
}

void ActConcern::families(const ActStats& act, const SeriesPlan& plan, Families& out) {
  act_metrics(act, plan, out);
  std::vector<PoolGauge> targets;
  for (const auto& p : act.pools) targets.push_back({p.node, p.size_kib, p.target});
  pool_target_metrics(targets, out);
}

// The policy's part of the status answer: policy, its nodes, pools, actions.
void ActConcern::status(StatusReply& s, const Tick&) const {
  const uint64_t mono = now_ns(), real = now_ns(CLOCK_REALTIME);
  PolicyStatus p;
  p.mode = sh_.cfg.policy.act ? "act" : "observe";
  p.dry_run = sh_.cfg.policy.dry_run;
  p.method = method_name(sh_.cfg.policy.compaction.method);
  p.source = sh_.cfg.source;
  p.reloads = actions_.stats().reloads_ok;
  p.reload_errors = actions_.stats().reloads_failed;
  p.proactiveness_raised = engine_.proactiveness_raised();
  p.budget_used_ns = engine_.budget_used_ns();
  p.budget_ns = sh_.cfg.policy.compaction.cpu_budget_ns;
  p.budget_cuts = actions_.cuts();
  s.policy = p;
  s.policy_nodes.emplace();
  for (const auto& n : engine_.nodes()) {
    PolicyNodeStatus ns;
    ns.node = n.node;
    ns.score = n.score;
    ns.hot = n.hot;
    if (n.floor) ns.floor = *n.floor;
    ns.misses = n.misses;
    ns.waiting = n.waiting;
    ns.next_allowed_in_ns = n.next_allowed_ns > mono ? n.next_allowed_ns - mono : 0;
    s.policy_nodes->push_back(std::move(ns));
  }
  s.pools.emplace();
  for (const auto& pool : engine_.pools())
    s.pools->push_back({pool.node, pool.size_kib, pool.target, pool.reached, pool.manual, pool.last_result});
  s.actions = actions_.last(20, mono, real);
  s.leases.emplace();
  for (const auto& l : engine_.leases().live()) s.leases->push_back(lease_view(l, mono));
  for (const auto& l : engine_.leases().ended()) s.leases->push_back(lease_view(l, mono));
  auto r = runner_ ? runner_->running() : std::nullopt;
  s.action_running = r ? std::optional<ActionSummary>(action_summary(*r)) : std::nullopt;
}

Result<void> ActConcern::accept(const Config& next) {
  if (!next.policy.act) return {};
  return take_act_lock("switch to mode act");
}

void ActConcern::reload() {
  engine_.set_policy(sh_.cfg.policy);
  for (const auto& o : engine_.take_dropped()) record(o);
}

namespace {
constexpr std::array kActAnswered{Command::Compact, Command::Pool, Command::Action, Command::Ensure, Command::Release};
// A lease's hold when ensure names none.
constexpr uint64_t kDefaultHoldNs = 300'000'000'000ULL;
}  // namespace
const std::span<const Command> ActConcern::kAnswers{kActAnswered};

std::optional<nlohmann::json> ActConcern::answer(const ControlRequest& req, Reader, uint64_t, const Tick& last) {
  std::vector<uint64_t> ids;
  if (req.cmd == Command::Action) {
    auto r = actions_.state(*req.id, runner_ ? runner_->running() : std::nullopt, now_ns(), now_ns(CLOCK_REALTIME));
    if (!r) return error_answer(r.error().message);
    return *r;
  }
  if (req.cmd == Command::Ensure) return ensure(req, last);
  if (req.cmd == Command::Release) {
    ReleaseReply rr;
    const uint64_t now = now_ns();
    for (const auto& l : engine_.release(req.consumer, req.lease)) rr.released.push_back(lease_view(l, now));
    tick(at_now(last));  // the pool goes back now
    return rr;
  }
  const uint64_t timeout_ns = req.timeout_ms.value_or(0) * 1000000;
  if (req.cmd == Command::Compact) {
    auto r = engine_.request_compact(req.node.value_or(-1), last.machine(), timeout_ns);
    if (!r) return error_answer(r.error().message);
    ids = *r;
  } else {
    auto r = engine_.request_pool(*req.size_kib, req.node.value_or(-1), *req.count, last.machine(), timeout_ns);
    if (!r) return error_answer(r.error().message);
    ids = {*r};
  }
  for (auto id : ids) actions_.queued(id);
  tick(at_now(last));  // a tick of act's own on the last inputs starts it at once
  return IdsReply{ids};
}

// ensure: refused with the figure when no compaction could make the pages or the pool would
// take more than the node (or host) can spare above hugepages.guard; else a lease (hugetlb
// sizes) or goal compactions (an order's free blocks), queued like manual requests.
std::optional<nlohmann::json> ActConcern::ensure(const ControlRequest& req, const Tick& last) {
  const int node = req.node.value_or(-1);
  const uint64_t count = *req.count;
  const std::string consumer = *req.consumer;
  auto s = supply_(SupplyAsk{req.size_kib.value_or(0), req.order, count, node}, last);
  if (!s) return error_answer("ensure refused: " + s.error().message);
  const std::string what = strf("%llu x %s", static_cast<unsigned long long>(count), format_size_kib(s->size_kib).c_str());
  const std::string where = node >= 0 ? strf("node %d", node) : std::string("this host");
  if (count > s->interval.hi)
    return error_answer(strf("ensure refused: %s cannot supply %s even by compaction: %llu free and %llu more at most "
                             "(95%% upper bound); ask for at most %llu, or another node (fragctl preflight)",
                             where.c_str(), what.c_str(), static_cast<unsigned long long>(s->free),
                             static_cast<unsigned long long>(s->interval.hi - std::min(s->interval.hi, s->free)),
                             static_cast<unsigned long long>(s->interval.hi)));
  const uint64_t budget_ns = req.timeout_ms.value_or(0) * 1000000;
  EnsureReply reply;
  if (s->hugetlb) {
    // The pages come out of the node's free and reclaimable memory: never past the guard.
    auto spare = read_spare_memory(sh_.cfg.proc_root, sh_.cfg.sys_root, node);
    if (!spare) return error_answer("ensure refused: " + spare.error().message);
    const uint64_t guard = sh_.cfg.policy.hugepages.guard_kib;
    const uint64_t room = spare->kib > guard ? (spare->kib - guard) / s->size_kib : 0;
    if (count > room)
      return error_answer(strf("ensure refused: %s can spare %s (%s) and hugepages.guard keeps %s: room for %llu "
                               "pages of %s, not %llu; ask for at most %llu, name another node, or lower the guard",
                               where.c_str(), format_size_kib(spare->kib).c_str(), spare->how.c_str(),
                               format_size_kib(guard).c_str(), static_cast<unsigned long long>(room),
                               format_size_kib(s->size_kib).c_str(), static_cast<unsigned long long>(count),
                               static_cast<unsigned long long>(room)));
    auto q = engine_.request_ensure(consumer, node, s->size_kib, count, req.hold_ms ? *req.hold_ms * 1000000 : kDefaultHoldNs,
                                    last.machine(), budget_ns);
    if (!q) return error_answer(q.error().message);
    reply.lease = lease_view(q->lease, now_ns());
    reply.ids = {q->action_id};
    reply.target = q->target;
    reply.reason = strf("ensure for %s: %s on %s", consumer.c_str(), what.c_str(), where.c_str());
  } else {
    // Free blocks of an order: each node that lacks them compacted until it has enough free
    // 2 MiB blocks (reserve.order) to hold them; a larger order compacts the whole node.
    const unsigned ro = sh_.cfg.policy.compaction.reserve.order;
    uint64_t lack = count > s->free ? count - s->free : 0;
    for (const auto& n : s->nodes) {
      if (lack == 0) break;
      const uint64_t take = std::min(lack, n.makeable);
      if (take == 0) continue;
      lack -= take;
      uint64_t have = 0;
      if (last.mem)
        for (const auto& z : last.mem->zones)
          if (z.node == n.node) have += blocks_of_order(z.free_blocks, ro);
      const uint64_t more = s->order <= ro ? (take + (uint64_t{1} << (ro - s->order)) - 1) >> (ro - s->order) : 0;
      const uint64_t goal = more ? have + more : 0;
      auto id = engine_.request_blocks(n.node, goal, have,
                                       strf("ensure for %s: %llu more free order-%u blocks on node %d", consumer.c_str(),
                                            static_cast<unsigned long long>(take), s->order, n.node),
                                       budget_ns);
      if (!id) return error_answer(id.error().message);
      reply.ids.push_back(*id);
    }
    reply.reason = strf("ensure for %s: %s on %s", consumer.c_str(), what.c_str(), where.c_str());
    if (reply.ids.empty()) reply.reason += " (free now: nothing to make)";
  }
  for (auto id : reply.ids) actions_.queued(id);
  tick(at_now(last));
  return reply;
}

int restore_saved_settings(const std::string& proc_root, const std::string& sys_root) {
  struct stat st;
  if (lstat(kRunDir, &st) != 0 && errno == ENOENT) {
    log_info(std::string("nothing to restore: ") + kRunDir + " does not exist");
    return 0;
  }
  SysfsActuator actuator(proc_root, sys_root);
  auto claim = claim_host_settings(actuator, "restore the saved settings");
  if (!claim) {
    const Error& e = claim.error();
    if (e.err != EWOULDBLOCK) return log_error(e.message), 1;
    // Not an error: the running fragd owns the saved settings and puts them back when it stops.
    log_info("nothing done: " + e.message.substr(e.message.find(": ") + 2) +
             "; it puts back what it changed when it stops");
    return 0;
  }
  const RestoreReport& rep = claim->report;
  for (const auto& m : rep.notes) log_info(m);
  for (const auto& m : rep.restored) log_info(m + " (from " + kSavedStateFile + ")");
  for (const auto& m : rep.failed) log_error(m);
  if (rep.restored.empty() && rep.failed.empty() && rep.notes.empty())
    log_info(std::string("nothing to restore: no setting saved in ") + kSavedStateFile);
  return rep.ok() ? 0 : 1;
}

}  // namespace fragd
