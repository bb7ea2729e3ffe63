// SPDX-License-Identifier: Apache-2.0
#include "concerns/stalls/concern.h"

#include <cstring>
#include <map>

#include "protocol/action.h"
#include "protocol/wire.h"
#include "concerns/memory/score.h"
#include "concerns/stalls/metrics.h"

namespace fragd {

StallsConcern::StallsConcern(Shared& sh, ControlServer& control, StallsPort bpf, uint64_t start_ns)
    : sh_(sh), control_(control), bpf_(std::move(bpf)), start_ns_(start_ns), counting_(settings(), stats_) {
  if (bpf_.slow_stalls_fd >= 0) ring_.reset(ring_buffer__new(bpf_.slow_stalls_fd, on_ring_event, this, nullptr));
  if (!ring_) log_warn("cannot open the slow-stall ring buffer: `fragctl trace` will show nothing");
  if (sh_.cfg.allocations == "adaptive") {
    if (bpf_.wakeups_fd >= 0) wakeups_.reset(ring_buffer__new(bpf_.wakeups_fd, on_wakeup, this, nullptr));
    if (!wakeups_)
      log_warn("cannot open the stall wake-up ring buffer: adaptive allocation counting switches on at the next "
               "tick after a stall, not during it");
    bpf_.arm_wakeup();
  }
  counting_.start(start_ns_, bpf_.counting());
  stats_.allocations_mode = sh_.cfg.allocations;
}

CountingSettings StallsConcern::settings() const {
  return {sh_.cfg.allocations, sh_.cfg.adaptive_hold_ns, sh_.cfg.adaptive_free_blocks};
}

int StallsConcern::on_ring_event(void* ctx, void* data, size_t size) {
  auto* c = static_cast<StallsConcern*>(ctx);
  if (size < sizeof(stall_event)) return 0;
  stall_event e;
  std::memcpy(&e, data, sizeof(e));
  c->stats_.trace_events++;
  if (c->control_.trace_subscribers())
    c->stats_.trace_events_unsent += c->control_.broadcast_trace(
        nlohmann::json(stall_message(e)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return 0;
}

int StallsConcern::on_wakeup(void* ctx, void* data, size_t size) {
  auto* c = static_cast<StallsConcern*>(ctx);
  uint32_t order = 0;
  if (size >= sizeof(order)) std::memcpy(&order, data, sizeof(order));
  if (auto sw = c->counting_.stalled(order, now_ns(), c->bpf_.counting())) c->switch_counting(*sw);
  return 0;
}

void StallsConcern::switch_counting(const CountingSwitch& sw) {
  const bool was = bpf_.counting();
  if (auto r = bpf_.set_counting(sw.on); !r) {
    sh_.warn.once("counting", r.error().message);
    return;
  }
  sh_.warn.cleared("counting", "allocation counting switches again");
  counting_.switched(sw.on, now_ns(), was);
  if (!sw.on) bpf_.arm_wakeup();
  log_info(std::string("allocation counting ") + (sw.on ? "on: " : "off: ") + sw.why);
}

void StallsConcern::tick(const Tick& t) {
  // Into the last tick's read: the histograms again only when a stall ended since.
  read_.tick(sh_.warn, [this](StallsSnapshot& s, HistWatch& w) { return bpf_.read(bpf_.maps, s, w); });
  uint64_t entries = 0;
  if (const StallsSnapshot* snap = read_.get())
    for (unsigned o = sh_.cfg.min_order; o < FRAGD_NR_ORDERS; o++)
      for (unsigned p = 0; p < FRAGD_NR_PHASES; p++) entries += snap->alloc.direct_entries[o][p];
  std::map<int, uint64_t> free_blocks;
  if (t.mem)
    for (const auto& z : t.mem->zones)
      if (z.present_pages > 0) free_blocks[z.node] += blocks_of_order(z.free_blocks, bpf_.pageblock_order);
  // The defrag_mode guard's atomic check counts failures: counting stays on while it watches.
  std::string guard;
  const DefragGuard& g = sh_.cfg.policy.compaction.defrag_guard;
  if (sh_.cfg.policy.act && g.enabled && g.atomic_failures_per_second > 0 && t.mem)
    if (auto it = t.mem->vm_sysctls.find("defrag_mode"); it != t.mem->vm_sysctls.end() && it->second == 1)
      guard = "the defrag_mode guard watches atomic failures (vm.defrag_mode 1)";
  if (auto sw = counting_.tick(t.now, entries, t.mem ? &free_blocks : nullptr, bpf_.counting(), guard))
    switch_counting(*sw);
}

void StallsConcern::status(StatusReply& s, const Tick&) const {
  s.allocations = AllocationCounting{sh_.cfg.allocations, bpf_.counting(), stats_.counting_seconds,
                                     sh_.cfg.adaptive_hold_ns, sh_.cfg.adaptive_free_blocks};
  if (const StallsSnapshot* snap = read_.get()) s.events_dropped = snap->alloc.events_dropped;
}

// Allocation counting, the stalls and failures, and the slow-stall stream.
void StallsConcern::metrics(const SeriesPlan& plan, const Tick&, Families& out) {
  families(snapshot(), stats_, plan, out);
}

void StallsConcern::families(const StallsSnapshot* maps, const CountingStats& stats, const SeriesPlan& plan,
                             Families& out) {
  counting_metrics(stats, out);
  if (maps) stall_metrics(plan, *maps, stats, out);
  trace_metrics(stats, out);
}

void StallsConcern::reload() { counting_.set(settings()); }

void StallsConcern::watch(EventLoop& loop) {
  if (ring_) loop.watch(ring_buffer__epoll_fd(ring_.get()), [this](short) { ring_buffer__consume(ring_.get()); });
  if (wakeups_)
    loop.watch(ring_buffer__epoll_fd(wakeups_.get()), [this](short) { ring_buffer__consume(wakeups_.get()); });
}

namespace {
constexpr std::array kStallsAnswered{Command::Hist, Command::Trace};
}  // namespace
const std::span<const Command> StallsConcern::kAnswers{kStallsAnswered};

std::optional<nlohmann::json> StallsConcern::answer(const ControlRequest& req, Reader, uint64_t, const Tick&) {
  if (req.cmd == Command::Trace) return TraceAck{};
  StallsSnapshot now;
  HistWatch every;  // due at a first read
  if (auto r = bpf_.read(bpf_.maps, now, every); !r) return error_answer(r.error().message);
  const StallsSnapshot* s = &now;
  HistSnapshot h;
  h.min_order = sh_.cfg.min_order;
  h.uptime_ns = now_ns() - start_ns_;
  h.counting_mode = sh_.cfg.allocations;
  h.counting = bpf_.counting();
  for (unsigned o = h.min_order; o < FRAGD_NR_ORDERS; o++) {
    const auto& a = s->alloc;
    OrderStats st;
    st.order = o;
    st.fast = a.allocs[o][FRAGD_OUTCOME_FAST];
    st.stalled = a.allocs[o][FRAGD_OUTCOME_STALLED];
    st.failed = a.allocs[o][FRAGD_OUTCOME_FAILED];
    st.compaction_ns = a.phase_ns[o][FRAGD_PHASE_COMPACTION];
    st.reclaim_ns = a.phase_ns[o][FRAGD_PHASE_RECLAIM];
    st.success = s->stall[o][FRAGD_RESULT_SUCCESS];
    st.failure = s->stall[o][FRAGD_RESULT_FAILURE];
    h.orders.push_back(std::move(st));
  }
  return h;
}

StallEvent stall_message(const stall_event& e) {
  // comm is whatever the task set (prctl PR_SET_NAME): keep printable ASCII only.
  std::string comm(e.comm, strnlen(e.comm, sizeof(e.comm)));
  for (char& ch : comm)
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  return StallEvent{.ts_ns = e.ts_ns, .pid = e.pid, .tid = e.tid, .cgroup_id = e.cgroup_id, .order = e.order,
                    .gfp = e.gfp, .comm = std::move(comm), .duration_ns = e.duration_ns,
                    .compact_ns = e.compact_ns, .reclaim_ns = e.reclaim_ns, .result = result_name(e.result)};
}

}  // namespace fragd
