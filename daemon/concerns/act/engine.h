// SPDX-License-Identifier: Apache-2.0
// The decision logic of act mode: from each tick's observation (node scores,
// free blocks, stalls seen by BPF, compaction time, pools) it decides which
// action to start, within the policy's limits, and learns from each action's
// measured result. Pure: no I/O and no clock of its own (time comes in the
// observation), so the unit tests replay recorded sequences.
//
// Rules (docs/configuration.md "Policy" says the same for operators):
//  - At most one action in flight; decide() keeps observing while one runs.
//  - Observe mode (policy.act false) decides nothing; manual requests are
//    refused with the fix. dry_run decides as act mode does; the runner then
//    writes nothing and reports result "dry_run".
//  - Compaction of a node in scope starts when one trigger holds (concerns/act/triggers.h, asked in
//    this order; the first that fires names the action):
//      score:   hysteresis. The node turns "hot" when its score is > high and
//               stays hot until its score is < low; while hot it is compacted,
//               once the node's free memory has settled (as for the reserve).
//      demand:  stalled allocations of order >= demand.min_order per second
//               over demand.window above the limit, or their p99 over the
//               window above the limit (with >= kDemandP99MinStalls stalls);
//               only nodes whose score is >= score.low (something to compact).
//      reserve: free blocks of reserve.order (larger ones counted as several)
//               < the reserve goal: reserve.blocks while the node's free
//               pages could hold them, or reserve.memory_percent of the
//               node's pages capped at half its free pages, the larger,
//               less the node's hugetlb pool pages of reserve.order or larger
//               (as blocks of it) with reserve.count_pools; only once the
//               node's free memory has settled: neither fallen nor risen by
//               more than 1% of the node over compaction.settle (until then
//               "settling"). Demand and the forecast do not wait for it.
//      forecast: (off by default) the node's free 2 MiB blocks fall, and at
//               the rate they fell over forecast_window they run out within
//               forecast.horizon (free blocks / blocks lost per second).
//    and every limit allows it:
//      min_interval since the node's last action ended;
//      cpu budget: compaction time caused by fragd in the last 60 s (trigger
//      "fragd", plus "proactive" while fragd holds proactiveness raised) plus
//      the expected duration (mean of fragd's last compactions) <= budget;
//      back-off: after a compaction that did not help (score fell by less
//      than backoff.min_gain and no reserve block was added), the node's
//      floor is the score it reached; the next try waits
//      min_interval * 2^(misses) (capped at backoff.max) unless the score
//      climbs to floor + min_gain or more. A compaction that helps clears it.
//  - method pool (the default) sizes each compaction: its goal is the most
//    free blocks of reserve.order any holding trigger asks for (reserve: the
//    reserve goal; score: the blocks that bring the score to score.low,
//    (100 - low)% of the free pages; demand: the blocks there are plus the
//    stalls of the demand window; forecast: the blocks there are plus those
//    the horizon takes at that rate), at least one more than the node has, at
//    most what its free pages hold, and at most what the cpu budget left
//    pays for at the node's learned time per block. A goal of 90% or more of
//    what the free pages hold compacts the whole node (goal 0). The runner
//    grows a temporary hugetlb pool on the node to the goal and frees it.
//    A goal-sized compaction helps when it added blocks; each one that did
//    teaches the node's pages migrated and time per block gained.
//  - method proactiveness: instead of compacting, raise
//    vm.compaction_proactiveness to proactiveness.value once (global) while
//    any node is triggered; restore it when no node is hot and no demand or
//    reserve trigger holds, or after proactiveness.hold, or when the policy
//    changes method or mode.
//    While raised, the raise counts as one action on each node that
//    triggered it: its gain (score at raise vs at restore) teaches the
//    back-off, and min_interval runs from the restore. fragd also restores
//    early when the cpu budget is spent (proactive compaction counts while
//    raised). A restore that fails is retried with the back-off waits; a
//    raised value is restored even in observe mode. Under dry_run the raise
//    is only simulated (proactiveness_raised() stays false) so that its
//    restore is decided and logged too.
//  - Pools (the pool triggers, concerns/act/triggers.h): each target (policy, or set at run
//    time by `fragctl pool set`, which lasts until the next reload) whose observed count
//    differs gets a pool action (a policy target listing nodes is that count on each
//    listed node); after a result other than ok the pool waits like a node
//    (min_interval doubling up to backoff.max) unless its target changes;
//    after ok it waits min_interval (so a pool the kernel keeps moving is
//    never resized in a loop). A run-time target replaces the targets of
//    that size it overlaps (a node pool and the global one) until reload.
//  - Outcomes: "ok"/"no_gain" of a compaction teach (compaction_helped());
//    "error" and "refused" count as a miss without a floor (time-only
//    back-off); "dry_run" sets the last-action time and teaches nothing;
//    "abandoned" (fragd exiting) teaches nothing. "yielded" (a goal's pool that
//    gave way to other processes stalling, executor.h) waits as a miss does
//    (time-only back-off), so the node is not tried again while they run. "cut" (a write killed at
//    the action's deadline, below) teaches as ok/no_gain do: the compaction
//    ran, for as long as it was let, and its time counts in the budget.
//  - Every compaction or pool-growing write runs under a deadline: the
//    action's budget_ns (action_budget_ns) from its start. Automatic
//    compactions and pool targets get the budget left in the window and wait
//    (waiting "cpu_budget") while none is left; a manual request gets its own
//    bound (fragctl's --timeout, 300 s by default, sent as timeout_ms), or the
//    whole compaction.cpu_budget when it names none.
//  - An observation with no nodes (a failed read) keeps what fragd knows;
//    a node missing from an observation that lists others is forgotten.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/histogram.h"
#include "concerns/act/defrag_guard.h"
#include "concerns/act/leases.h"
#include "policy/policy.h"
#include "base/result.h"

namespace fragd {

struct NodeFacts;      // concerns/act/triggers.h
struct TriggerInputs;  // concerns/act/triggers.h
struct PoolInputs;     // concerns/act/triggers.h
struct PoolWant;       // concerns/act/triggers.h
class PoolTrigger;     // concerns/act/triggers.h

enum class ActionKind { Compact, RaiseProactiveness, RestoreProactiveness, Pool, DefragModeOff, DefragModeRestore };
// compact, proactiveness_raise, proactiveness_restore, pool, defrag_mode_off, defrag_mode_restore
const char* action_name(ActionKind k);

enum class Trigger { Score, Demand, Reserve, Manual, Pool, Hold, Policy, Forecast, Lease, Guard };
// score, demand, reserve, manual, pool, hold, policy, forecast, lease, guard
const char* trigger_label(Trigger t);

struct ActionRequest {
  uint64_t id = 0;                 // unique, increasing
  ActionKind kind = ActionKind::Compact;
  Trigger trigger = Trigger::Score;
  int node = -1;                   // < 0: global (proactiveness, the global pool)
  std::string reason;              // "score 93 > high 40", "12.5 stalls/s > 10 over 10s", ...
  unsigned proactiveness = 0;      // RaiseProactiveness: the value to write
  uint64_t size_kib = 0;           // Pool
  uint64_t target = 0;             // Pool
  std::vector<int> compact_nodes;  // Pool: nodes to compact when blocks are short
  // Compact with method pool: the free blocks of reserve.order wanted on the
  // node and those it had when decided; goal 0: compact the whole node.
  uint64_t goal_blocks = 0, have_blocks = 0;
  // The time its compaction and pool-growing writes may take, from its start
  // (action_budget_ns); 0: the action writes no such file (proactiveness).
  uint64_t budget_ns = 0;
  // Pool: the lease it makes (`fragctl ensure`, concerns/act/leases.h; 0: none), and the count to put the
  // pool back to should fragd stop while the pool holds leased pages (saved_state.h; none: the
  // pool's size is the operator's state, kept).
  uint64_t lease = 0;
  std::optional<uint64_t> restore_to;
};

// The compaction time an action may use (its writes are killed past it):
// for a manual request (fragctl compact, fragctl pool set) that names no bound
// of its own the whole compaction.cpu_budget, whatever the automatic actions
// used, so that an operator is never locked out but no request runs unbounded
// (a request with timeout_ms runs under that instead: decide()); for any other
// the budget left in the window (`cpu_budget_ns` - `used_ns`, the whole
// budget before any history: nothing was used yet), 0 when none is left.
uint64_t action_budget_ns(uint64_t cpu_budget_ns, uint64_t used_ns, bool manual);

// One step of a multi-step action, in order: a pool write ("grow", "shrink",
// "release": a temporary pool freed), a node compaction ("compact"),
// "drop_caches" or "drain" (the blocks of a freed temporary pool or a shrunk pool that a
// CPU's page list kept, put back on the free lists: drain_page_lists in pool.h).
struct ActionStep {
  std::string step;
  int node = -1;             // compact: the node; a pool write: the pool's node (< 0: global)
  uint64_t pool_after = 0;   // a pool write: the pool read back after it
  uint64_t duration_ns = 0;
};

struct ActionOutcome {
  ActionRequest req;
  // ok | no_gain | short | guard | error | dry_run | abandoned | refused | cut | yielded
  // (cut: a write ran past the action's budget_ns and was killed)
  std::string result;
  std::string detail;               // error text, why a pool stopped, ...
  uint64_t start_ns = 0, end_ns = 0;
  int score_before = -1, score_after = -1;        // Compact: the node's score
  uint64_t blocks_before = 0, blocks_after = 0;   // Compact: free blocks of reserve.order
  uint64_t pages_migrated = 0;                    // trigger "fragd" pages, during the action
  uint64_t pool_before = 0, pool_after = 0;       // Pool
  unsigned attempts = 0, compactions = 0;         // Pool: pool writes, node compactions
  std::vector<ActionStep> steps;                  // Pool, and Compact with a goal
};

struct NodeObservation {
  int node = 0;
  unsigned score = 0;                // fragmentation_score_node()
  uint64_t free_pages = 0;
  uint64_t total_pages = 0;          // present pages of the node's zones
  std::vector<uint64_t> free_blocks; // per order, summed over the node's zones
  // Pages of the node's hugetlb pools per order (a 2 MiB page: order 9 on x86-64): with
  // reserve.count_pools they count toward the reserve, as larger free blocks do.
  std::vector<uint64_t> pool_pages;
  // Free 2 MiB blocks gained per second over forecast_window (< 0: lost); absent until
  // half a window was seen (concerns/memory/forecast.h).
  std::optional<double> blocks_per_second;
};

// Whether a compaction helped (backoff rule above): the score fell by at
// least backoff.min_gain, or, with a reserve goal set, free blocks of
// reserve.order were added. The runner's ok/no_gain label should agree.
bool compaction_helped(const ActionOutcome& r, const CompactionPolicy& p);

struct PoolObservation {
  int node = -1;  // < 0: global (sum over nodes)
  uint64_t size_kib = 0;
  uint64_t total = 0;  // nr_hugepages
};

struct Observation {
  uint64_t now_ns = 0;  // CLOCK_MONOTONIC
  std::vector<NodeObservation> nodes;
  // Cumulative since fragd started, summed over orders >= demand.min_order.
  uint64_t stalls_total = 0;
  LatencyHist stall_hist;
  // Cumulative compaction time seen by BPF, by trigger.
  uint64_t fragd_compaction_ns = 0;
  uint64_t proactive_compaction_ns = 0;
  uint64_t mem_available_kib = 0;
  uint64_t page_kib = 4;               // the kernel's base page (kernel/page_size.h)
  std::vector<PoolObservation> pools;  // global and per node
  GuardSample guard;                   // the defrag_mode guard's readings (concerns/act/defrag_guard.h)
};

// For `fragctl status` and metrics.
struct NodeState {
  int node = 0;
  unsigned score = 0;
  bool hot = false;
  std::optional<unsigned> floor;      // learned: the score compaction last reached without help
  unsigned misses = 0;                // compactions in a row that did not help
  uint64_t next_allowed_ns = 0;       // min_interval / back-off
  std::string waiting;                // "", "min_interval", "backoff", "cpu_budget", "settling"
  // Learned from fragd's compactions of the node that added blocks of
  // reserve.order (0: none yet): pages migrated and compaction wall time per
  // block gained, over the recent ones weighted by the blocks each gained
  // (each earlier one counts half as much as the next), so that one that
  // gained two blocks while memory was being taken does not set the rate.
  double pages_per_block = 0;
  uint64_t ns_per_block = 0;
};

struct PoolState {
  int node = -1;
  uint64_t size_kib = 0;
  uint64_t target = 0;
  uint64_t reached = 0;
  bool manual = false;                // set by `fragctl pool set`
  std::string last_result;
  uint64_t next_allowed_ns = 0;
};

class Engine {
 public:
  explicit Engine(Policy p);

  // On reload. Keeps each node's learning; drops run-time pool targets; a
  // change of method or mode while proactiveness is raised queues a restore.
  void set_policy(Policy p);
  const Policy& policy() const { return policy_; }

  // One tick. Returns at most one action (none while one is in flight).
  std::optional<ActionRequest> decide(const Observation& o);
  // The runner reports every action it was given, once, when it ends.
  void finished(const ActionOutcome& r);

  // `fragctl compact [--node N]` (node < 0: every node in scope, one by one)
  // and `fragctl pool set SIZE COUNT [--node N]`. Queued; decide() returns
  // them first, bypassing triggers, min_interval, back-off and the budget
  // gate (never overlap); each runs under its own deadline of one whole
  // compaction.cpu_budget (action_budget_ns). Errors: observe mode; a node or size not on this machine.
  // budget_ns: the request's own bound (fragctl's --timeout, the request's
  // timeout_ms); 0: one whole compaction.cpu_budget.
  Result<std::vector<uint64_t>> request_compact(int node, const MachineFacts& m, uint64_t budget_ns = 0);
  Result<uint64_t> request_pool(uint64_t size_kib, int node, uint64_t count, const MachineFacts& m,
                                uint64_t budget_ns = 0);

  // `fragctl ensure SIZE COUNT`: a lease of `count` pages of the (node or global) pool for
  // `consumer`, held for hold_ns once made, and the pool action that makes it (queued like a
  // manual request, under budget_ns). Errors: observe mode; a size or node not on this
  // machine; a pool not seen yet; the consumer already holding a lease on that pool; leases or
  // policy targets of that size on the global pool and on node pools at once.
  struct EnsureQueued {
    Lease lease;
    uint64_t action_id = 0;
    uint64_t target = 0;  // the pool's target with the lease
  };
  Result<EnsureQueued> request_ensure(const std::string& consumer, int node, uint64_t size_kib, uint64_t count,
                                      uint64_t hold_ns, const MachineFacts& m, uint64_t budget_ns);
  // `fragctl ensure --order K`: compact `node` until it has goal_blocks free blocks of
  // reserve.order (0: the whole node), for `consumer`. The id of the queued action.
  Result<uint64_t> request_blocks(int node, uint64_t goal_blocks, uint64_t have_blocks, const std::string& reason,
                                  uint64_t budget_ns);
  // `fragctl release`: ends the live leases of a consumer, or one lease; their pools go back.
  std::vector<Lease> release(const std::optional<std::string>& consumer, std::optional<uint64_t> lease_id);
  const Leases& leases() const { return leases_; }
  // Leases that ended since the last call (hold over, short, released, observe mode), to log.
  std::vector<Lease> take_ended_leases();

  bool busy() const { return in_flight_.has_value(); }
  const DefragModeGuard& defrag_guard() const { return guard_; }
  // True while fragd holds vm.compaction_proactiveness raised.
  bool proactiveness_raised() const { return raised_since_ns_.has_value() && !raised_dry_; }

  std::vector<NodeState> nodes() const;
  std::vector<PoolState> pools() const;
  // CPU budget: fragd-caused compaction time in the last 60 s, ns.
  uint64_t budget_used_ns() const;

  // Queued manual requests that will never be returned by decide(): a
  // reload to observe mode drops every one, any reload drops queued pool
  // requests (their run-time target is gone). Each comes back once, as an
  // outcome with result "refused" and the reason in detail, for the daemon
  // to record like a finished action.
  std::vector<ActionOutcome> take_dropped();

 private:
  // What nodes() reports of a node (NodeState), and what only the engine keeps.
  struct NodeTrack : NodeState {
    NodeObservation seen;  // as last observed
    std::deque<std::pair<uint64_t, uint64_t>> free_seen;  // (time, free pages) over compaction.settle
    std::optional<uint64_t> last_end_ns;
    double learned_pages = 0, learned_ns = 0, learned_blocks = 0;  // decayed sums
  };
  struct PoolTrack {
    PoolState s;
    bool observed = false;  // this tick's observation has the pool
    unsigned misses = 0;    // results other than ok in a row
  };
  // Cumulative counters with counter resets folded in (a counter that went
  // backwards restarted from 0: its new value is the increase), so that the
  // increase over a window is newest - baseline.
  struct Sample {
    uint64_t t = 0;
    uint64_t stalls = 0;
    LatencyHist hist;
    uint64_t caused_ns = 0;  // fragd-caused compaction time
  };
  struct Fired {
    Trigger trigger = Trigger::Score;
    std::string reason;
  };
  // The nodes that raised proactiveness, with their score and reserve
  // blocks then: the restore is judged against them.
  struct RaiseMark {
    unsigned score = 0;
    uint64_t blocks = 0;
  };

  // What decide() works out once per tick for the steps after it.
  struct Round {
    std::optional<std::string> demand;  // demand_reason(), in act mode
    uint64_t demand_stalls = 0;         // over demand.window
    uint64_t used = 0;                  // budget_used_ns()
    uint64_t left = 0;                  // the deadline of an automatic action (action_budget_ns)
    bool budget_ok = false;             // an automatic compaction fits the budget
  };
  struct Candidate {  // a node whose trigger fired and whose limits allow it now
    int node;
    unsigned score;
    Fired fired;
  };

  void ingest(const Observation& o);
  void rebuild_pools();
  // decide()'s steps (engine.cc), in the order they win.
  Round begin_round() const;
  // Sets every node's waiting; the nodes that may act now, highest score first.
  std::vector<Candidate> ready_nodes(const Round& k);
  std::optional<ActionRequest> manual_action(const Round& k);
  std::optional<ActionRequest> policy_restore();
  std::optional<ActionRequest> held_restore(const Round& k);
  // The pool triggers (concerns/act/triggers.h): the pool action due, if any.
  std::optional<ActionRequest> pool_action(const Round& k);
  std::optional<ActionRequest> lease_pool_action(const Round& k);
  PoolInputs pool_inputs(const Round& k) const;
  ActionRequest pool_request(const PoolTrigger& t, const PoolKey& key, PoolWant w) const;
  ActionRequest compact_request(const Candidate& best, const Round& k, uint64_t page_kib) const;
  ActionRequest raise_request(const std::vector<Candidate>& ready);
  // The node triggers (concerns/act/triggers.h), asked in order: the first that fires, in scope.
  NodeFacts facts(const NodeTrack& n) const;
  TriggerInputs inputs(const Round& k) const;
  std::optional<Fired> node_trigger(const NodeTrack& n, const TriggerInputs& in) const;
  // In scope and some trigger would fire but for its free memory still moving.
  bool settling(const NodeTrack& n, const TriggerInputs& in) const;
  bool any_trigger(const TriggerInputs& in) const;
  std::optional<std::string> demand_reason() const;
  uint64_t wait_ns(unsigned misses) const;
  uint64_t expected_duration_ns() const;
  const Sample* baseline(uint64_t span_ns) const;
  // The node's free memory has moved (up or down) by at most 1% of the node over compaction.settle.
  bool settled(const NodeTrack& n) const;
  uint64_t window_stalls(uint64_t span_ns) const;
  // Method pool: the free blocks of reserve.order a compaction of the node should reach, the
  // most any trigger asks for, capped by what its free pages hold and the budget pays for;
  // 0: the whole node.
  uint64_t goal_blocks(const NodeTrack& n, const TriggerInputs& in, uint64_t room_ns) const;
  void learn(int node, const ActionOutcome& r);
  // finished()'s part for each kind of action (engine_outcomes.cc).
  void compact_finished(const ActionRequest& req, const ActionOutcome& r, uint64_t end);
  void raise_finished(const ActionRequest& req, const std::string& res, uint64_t end);
  void restore_finished(const std::string& res, uint64_t end);
  void pool_finished(const ActionRequest& req, const ActionOutcome& r, uint64_t end);
  std::vector<int> scope_nodes() const;
  ActionRequest issue(ActionRequest r);
  ActionRequest restore_request(Trigger t, std::string reason);
  void teach(int node, bool helped, std::optional<unsigned> reached, uint64_t end_ns);
  void drop_manual(bool pools_only, const std::string& why);

  Policy policy_;
  uint64_t next_id_ = 1;
  std::optional<ActionRequest> in_flight_;
  std::optional<uint64_t> raised_since_ns_;
  bool raised_dry_ = false;  // the raise was only decided (dry_run): nothing was written
  Trigger raised_trigger_ = Trigger::Score;
  std::map<int, RaiseMark> raise_marks_;      // of the raise in flight or held
  unsigned restore_failures_ = 0;
  uint64_t restore_next_ns_ = 0;
  std::deque<ActionRequest> manual_;
  std::vector<ActionOutcome> dropped_;
  std::map<int, NodeTrack> node_state_;
  std::map<std::pair<int, uint64_t>, PoolTrack> pool_state_;  // by (node, size_kib)
  // Leases, and the pools they grew that the policy does not name: each one's base (its size at
  // its first lease) and its waits after a resize that failed. Kept until the pool is back at base.
  struct LeasePool {
    uint64_t base = 0;
    unsigned misses = 0;
    uint64_t next_allowed_ns = 0;
  };
  Leases leases_;
  uint64_t next_lease_ = 1;
  std::map<PoolKey, LeasePool> lease_pools_;
  std::map<PoolKey, uint64_t> observed_pools_;  // every pool of the last observation: nr_hugepages
  std::vector<Lease> ended_leases_;             // for take_ended_leases()
  // The defrag_mode guard's action due, if any (decide(); concerns/act/engine_guard.cc).
  std::optional<ActionRequest> guard_action(const Observation& o);
  DefragModeGuard guard_;
  void note_ended(std::vector<Lease> v);
  std::deque<Sample> samples_;
  struct Raw {  // the last observation's counters as read
    uint64_t stalls = 0;
    LatencyHist hist;
    uint64_t fragd_ns = 0, proactive_ns = 0;
    bool raised = false;  // fragd held proactiveness raised then
  };
  std::optional<Raw> raw_;
  std::deque<uint64_t> recent_durations_ns_;  // last compactions
  uint64_t now_ns_ = 0;
};

}  // namespace fragd
