// SPDX-License-Identifier: Apache-2.0
// Every key of the config file, declared once (policy/keys.h), and the rules
// between keys that run once their section is bound.
#include "policy/keys.h"

#include <grp.h>
#include <yaml-cpp/yaml.h>

#include <limits>
#include <type_traits>

#include "base/format.h"
#include "base/text.h"
#include "policy/values.h"

namespace fragd {

using namespace values;

namespace {

constexpr uint64_t kSecond = 1'000'000'000ULL;
constexpr uint64_t kMinute = 60 * kSecond;
constexpr uint64_t kHour = 60 * kMinute;
constexpr uint64_t kDay = 24 * kHour;
constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMinGuardKib = 64 * 1024;

// ---------------------------------------------------------------- rules on one key

Result<void> mode_sets_act(const std::string&, const YAML::Node&, Config& c) {
  c.policy.act = c.mode == "act";
  return {};
}

Result<void> listen_address(const std::string& file, const YAML::Node& n, Config& c) {
  if (auto r = check_listen_address(c.listen); !r) return bad(file, n, "listen", r.error().message);
  return {};
}

Result<void> socket_path(const std::string& file, const YAML::Node& n, Config& c) {
  if (c.socket.empty() || c.socket[0] != '/') return bad(file, n, "socket", "expected an absolute path");
  if (c.socket.size() >= 108) return bad(file, n, "socket", "path is longer than a Unix socket allows (107)");
  return {};
}

Result<void> features_file(const std::string& file, const YAML::Node& n, Config& c) {
  const std::string& p = c.nfd_features_file;
  if (p.empty()) return {};
  if (p[0] != '/' || p.back() == '/')
    return bad(file, n, "nfd.features_file", "expected an absolute path of a file (or \"\" for none), got '" + p + "'");
  return {};
}

// Resolved now, so that a typo fails --check-config and the reload check, not the start.
Result<void> group_exists(const std::string& file, const YAML::Node& n, Config& c) {
  const std::string& s = c.socket_group;
  const group* g = getgrnam(s.c_str());
  if (!g)
    return bad(file, n, "socket_group",
               "'" + s + "' is not a group on this host; create it (groupadd " + s +
                   ") or remove the key to keep the socket root's alone");
  c.socket_gid = g->gr_gid;
  return {};
}

// 1s..24h, with the reason for the lower bound.
Result<void> min_interval_range(const std::string& file, const YAML::Node& n, Config& c) {
  const uint64_t d = c.policy.compaction.min_interval_ns;
  const std::string key = "compaction.min_interval";
  if (d < kSecond)
    return bad(file, n, key,
               format_duration(d, DurationStyle::Exact) +
                   " is refused: acting that often would keep compaction running continuously; set at least 1s");
  if (d > kDay)
    return bad(file, n, key, "duration '" + format_duration(d, DurationStyle::Exact) + "' is out of range 1s..24h");
  return {};
}

// (0, 30s], with the reason for each bound.
Result<void> cpu_budget_range(const std::string& file, const YAML::Node& n, Config& c) {
  const uint64_t d = c.policy.compaction.cpu_budget_ns;
  const std::string key = "compaction.cpu_budget";
  if (d == 0)
    return bad(file, n, key,
               "0 is refused: no compaction could ever run; to stop acting use mode: observe, or set the "
               "triggers' enabled: false");
  if (d > 30 * kSecond)
    return bad(file, n, key,
               format_duration(d, DurationStyle::Exact) +
                   " of compaction per minute is refused: more than half a CPU; set at most 30s");
  return {};
}

Result<void> method_mark(const std::string&, const YAML::Node& n, Config& c) {
  c.policy.compaction.method_mark = mark_of(n);
  return {};
}

Result<void> reserve_mark(const std::string&, const YAML::Node& n, Config& c) {
  c.policy.compaction.reserve.mark = mark_of(n);
  return {};
}

Result<void> guard_floor(const std::string& file, const YAML::Node& n, Config& c) {
  HugepagePolicy& h = c.policy.hugepages;
  if (h.guard_kib < kMinGuardKib)
    return bad(file, n, "hugepages.guard",
               "'" + n.Scalar() + "' is refused: hugepage allocation could take MemAvailable " +
                   (h.guard_kib == 0 ? std::string("to zero") : "below " + format_size_kib(h.guard_kib, SizeStyle::Config)) +
                   " and set off the OOM killer; set at least 64MiB (default 1GiB)");
  h.guard_mark = mark_of(n);
  return {};
}

// ---------------------------------------------------------------- rules between keys

Result<void> score_thresholds(const std::string& file, const YAML::Node& n, Config& c) {
  const ScoreTrigger& s = c.policy.compaction.score;
  if (s.low < s.high) return {};
  const bool at_low = static_cast<bool>(n["low"]);
  return bad(file, at_low ? n["low"] : n["high"], at_low ? "compaction.score.low" : "compaction.score.high",
             "contradictory thresholds: low " + std::to_string(s.low) + " is not below high " + std::to_string(s.high) +
                 " (compaction starts above high and stops below low); make low smaller than high");
}

Result<void> demand_has_a_check(const std::string& file, const YAML::Node& n, Config& c) {
  const DemandTrigger& d = c.policy.compaction.demand;
  if (!d.enabled || d.stalls_per_second != 0 || d.stall_p99_ns != 0) return {};
  const char* at = n["enabled"] ? "enabled" : n["stalls_per_second"] ? "stalls_per_second" : "stall_p99";
  return bad(file, n[at], std::string("compaction.demand.") + at,
             "the demand trigger is enabled but both of its checks are off (stalls_per_second 0 and stall_p99 "
             "0); set enabled: false instead, or give one of them a limit");
}

Result<void> guard_has_a_check(const std::string& file, const YAML::Node& n, Config& c) {
  const DefragGuard& g = c.policy.compaction.defrag_guard;
  if (!g.enabled || g.atomic_failures_per_second != 0 || g.pressure_full_percent != 0) return {};
  const char* at = n["enabled"] ? "enabled" : n["atomic_failures_per_second"] ? "atomic_failures_per_second"
                                                                               : "pressure_full_percent";
  return bad(file, n[at], std::string("compaction.defrag_guard.") + at,
             "the defrag_mode guard is enabled but both of its checks are off (atomic_failures_per_second 0 and "
             "pressure_full_percent 0); set enabled: false instead, or give one of them a limit");
}

// The back-off starts at min_interval and doubles up to max.
Result<void> backoff_covers_min_interval(const std::string& file, const YAML::Node& n, Config& c) {
  const CompactionPolicy& p = c.policy.compaction;
  if (p.backoff.max_ns >= p.min_interval_ns) return {};
  const std::string max = format_duration(p.backoff.max_ns, DurationStyle::Exact);
  const std::string min = format_duration(p.min_interval_ns, DurationStyle::Exact);
  if (n["backoff"] && n["backoff"].IsMap() && n["backoff"]["max"])
    return bad(file, n["backoff"]["max"], "compaction.backoff.max",
               max + " is shorter than compaction.min_interval " + min +
                   " (the back-off starts at min_interval and doubles up to max); set max >= min_interval");
  return bad(file, n["min_interval"], "compaction.min_interval",
             min + " is longer than compaction.backoff.max " + max +
                 " (its default; the back-off starts at min_interval and doubles up to max); set backoff.max >= "
                 "min_interval");
}

Result<void> file_rules(const std::string& file, const YAML::Node& root, Config& c) {
  // The demand trigger counts stalls the BPF side traced: orders below
  // bpf.min_order never reach it.
  const DemandTrigger& d = c.policy.compaction.demand;
  const YAML::Node comp = root["compaction"];
  auto demand_given = [&](const char* key) {
    return comp && comp.IsMap() && comp["demand"] && comp["demand"].IsMap() && comp["demand"][key];
  };
  if (d.enabled && d.min_order < c.min_order) {
    const bool at_demand = demand_given("min_order");
    return bad(file, at_demand ? comp["demand"]["min_order"] : root["bpf"]["min_order"],
               at_demand ? "compaction.demand.min_order" : "bpf.min_order",
               "compaction.demand.min_order " + std::to_string(d.min_order) + " is below bpf.min_order " +
                   std::to_string(c.min_order) + ", so stalls of orders " + std::to_string(d.min_order) + ".." +
                   std::to_string(c.min_order - 1) +
                   " are never traced; raise compaction.demand.min_order to at least bpf.min_order or lower "
                   "bpf.min_order");
  }
  // The p99 check reads the stall histogram, which only allocation counting fills.
  if (c.policy.act && d.enabled && d.stall_p99_ns > 0 && c.allocations == "off") {
    const bool at_p99 = demand_given("stall_p99");
    return bad(file, at_p99 ? comp["demand"]["stall_p99"] : root["bpf"]["allocations"],
               at_p99 ? "compaction.demand.stall_p99" : "bpf.allocations",
               "compaction.demand.stall_p99 needs the stall times of counted allocations, and bpf.allocations "
               "is off, so it would never fire; set compaction.demand.stall_p99: 0 (the stall-rate check "
               "still works) or bpf.allocations: adaptive");
  }
  if (c.scan_max_age_ns < c.scan_ns) {
    const YAML::Node pb = root["pageblocks"];
    return bad(file, pb && pb.IsMap() && pb["max_age"] ? pb["max_age"] : pb["interval"], "pageblocks.max_age",
               "pageblocks.max_age " + format_duration(c.scan_max_age_ns, DurationStyle::Exact) +
                   " is below pageblocks.interval " + format_duration(c.scan_ns, DurationStyle::Exact) +
                   "; raise max_age to at least the interval");
  }
  return {};
}

}  // namespace

const std::vector<Key>& config_keys() {
  using enum KeyType;
  constexpr KeyTable kConfig = KeyTable::Config;
  constexpr KeyTable kPolicy = KeyTable::Policy;
  constexpr Reload kRestart = Reload::Restart;

  static const std::vector<Key> keys = {
      {.path = "", .type = Section, .rule = file_rules},
      {.path = "mode", .type = Choice, .table = kConfig, .choices = {"observe", "act"},
       .refusal = "is not a mode; use 'observe' (watch only) or 'act' (apply the policy)", .field = FIELD(mode), .rule = mode_sets_act,
       .doc = "`observe`: watch and export, change nothing; `act`: apply the policy (see Policy)"},
      {.path = "dry_run", .type = Bool, .table = kPolicy, .field = FIELD(policy.dry_run),
       .doc = "with `act`: decide and log every action (result `dry_run`), write nothing to the kernel"},
      {.path = "listen", .type = Text, .table = kConfig, .field = FIELD(listen),
       .rule = listen_address, .reload = kRestart, .doc = "address of `/metrics`: an IPv4 address and a port (host names are not looked up; Debian's civetweb serves no IPv6) (`--listen` overrides)"},
      {.path = "socket", .type = Text, .table = kConfig, .field = FIELD(socket),
       .rule = socket_path, .reload = kRestart, .doc = "control socket (`--socket` overrides); mode 0600, root's alone"},
      {.path = "socket_group", .type = Text, .table = kConfig, .field = FIELD(socket_group), .rule = group_exists,
       .reload = kRestart, .doc = "a group whose members may send read requests (`status`, `hist`, `trace`, `map`, `action`): the socket "
              "becomes 0660 root:GROUP. Acting requests (`compact`, `pool`, `reload`) stay root's. A member sees what "
              "the kernel shows every user: `map` without each block's class and the polluted blocks (physical "
              "addresses, from root-only /proc/kpageflags), `status` without the polluters, no kernel address "
              "anywhere; the answer's `withheld` says what was left out (docs/control-protocol.md). The group must "
              "exist when the file is checked"},
      {.path = "tick_interval", .type = Duration, .table = kConfig, .lo = 100'000'000, .hi = kHour, .field = FIELD(tick_ns), .reload = kRestart, .doc = "how often maps and /proc are read (100ms..1h)"},
      {.path = "pagetypeinfo_interval", .type = Duration, .table = kConfig, .lo = kSecond, .hi = kDay, .field = FIELD(pagetypeinfo_ns),
       .reload = kRestart, .doc = "how often /proc/pagetypeinfo is read (1s..24h): the kernel walks every free list with the zone lock "
              "held and interrupts off to print it, 3–16 ms per read on this machine when fragmented, so fragd does "
              "not read it every tick"},
      {.path = "forecast_window", .type = Duration, .table = kConfig, .lo = kMinute, .hi = kDay, .field = FIELD(forecast_window_ns),
       .doc = "the window (1m..24h) over which each node's free 2 MiB blocks are fitted to a line for "
              "`fragd_hugepages_exhaustion_seconds` and `fragd_free_hugepage_blocks_rate`: shorter follows a "
              "burst sooner, longer ignores one"},

      {.path = "bpf", .type = Section},
      {.path = "bpf.allocations", .type = Choice, .table = kConfig, .choices = {"adaptive", "exact", "off"},
       .refusal = "is not a counting mode; use 'adaptive' (count while memory needs watching), 'exact' (count every "
                  "high-order allocation, always) or 'off'", .field = FIELD(allocations),
       .reload = kRestart, .doc = "when the per-page `mm_page_alloc` counting program is attached: `adaptive` (from a stall until "
              "`adaptive_hold` without one), `exact` (always), `off` (never); see \"What counting every allocation "
              "costs\""},
      {.path = "bpf.adaptive_hold", .type = Duration, .table = kConfig, .lo = kSecond, .hi = kDay, .field = FIELD(adaptive_hold_ns),
       .doc = "`adaptive`: counting stays on this long after the last stall (1s..24h)"},
      {.path = "bpf.adaptive_free_blocks", .type = Integer, .table = kConfig, .lo = 0, .hi = 1'000'000'000,
       .field = FIELD(adaptive_free_blocks),
       .doc = "`adaptive`: also count while a node has fewer free pageblocks than this (0 = never for this reason)"},
      {.path = "bpf.min_order", .type = Integer, .table = kConfig, .lo = 1, .hi = 10, .field = FIELD(min_order), .reload = kRestart, .doc = "allocations below this order are not traced (1..10)"},
      {.path = "bpf.slow_stall_threshold", .type = Duration, .table = kConfig, .lo = 1'000, .hi = 60 * kSecond,
       .field = FIELD(slow_stall_ns), .reload = kRestart, .doc = "stalls at least this long go to `fragctl trace`"},
      {.path = "bpf.track_pollution", .type = Bool, .table = kConfig, .field = FIELD(track_pollution),
       .reload = kRestart, .doc = "the pollution ledger (`kmem:mm_page_alloc_extfrag`, fallbacks only; released by the pageblock scan)"},

      {.path = "attribution", .type = Section},
      {.path = "attribution.top_cgroups", .type = Integer, .table = kConfig, .lo = 1, .hi = 1000, .field = FIELD(top_cgroups),
       .doc = "cgroups with a stall series of their own (`fragd_cgroup_stall_seconds_total`), 1..1000: the first "
              "ones by stall time while fewer have one, each kept until its cgroup is deleted; the rest are "
              "cgroup=\"other\""},
      {.path = "attribution.top_callsites", .type = Integer, .table = kConfig, .lo = 1, .hi = 1000, .field = FIELD(top_callsites),
       .doc = "kernel call sites with a series of their own (`fragd_stall_callsite_seconds_total`), 1..1000; the "
              "rest are callsite=\"other\""},
      {.path = "attribution.stack_interval", .type = Duration, .table = kConfig, .lo = 0, .hi = kHour, .field = FIELD(stack_interval_ns),
       .reload = kRestart, .doc = "a stall's kernel stack is taken at most this often per (task kind, gfp flags, order) (0..1h; 0: at "
              "every stall); the stalls of that kind in between count under the stack taken last. Unwinding is the "
              "costly part of a stall event: see \"Who stalls, who pays, where\""},
      {.path = "attribution.stacks", .type = Integer, .table = kConfig, .lo = 1, .hi = 262'144, .field = FIELD(stall_stacks),
       .reload = kRestart, .doc = "buckets of the BPF map of stall stacks (1..262144; 184 bytes each, rounded up to a power of two). A "
              "stack whose bucket holds another stack is lost: its stalls count in `fragd_stall_stacks_lost_total` "
              "and under call site \"unknown\". With n distinct stacks about n*n/(2*stacks) are lost; fragd never "
              "recycles a bucket, so that a stack id names one stack for good"},

      {.path = "nfd", .type = Section},
      {.path = "nfd.features_file", .type = Text, .table = kConfig, .field = FIELD(nfd_features_file), .rule = features_file,
       .doc = "a Node Feature Discovery feature file fragd writes (\"\": none), in nfd-worker's features.d directory, "
              "e.g. /etc/kubernetes/node-feature-discovery/features.d/fragd: the 2 MiB and 1 GiB pages this node can "
              "supply and its fragmentation level as node labels (docs/deployment.md \"Scheduling on fragd's "
              "labels\"); removed when fragd stops, and its labels expire 15 minutes after fragd last wrote it"},
      {.path = "nfd.hold", .type = Duration, .table = kConfig, .lo = 0, .hi = kDay, .field = FIELD(nfd_hold_ns),
       .doc = "a label takes a new value only after the value stayed past its bucket's edge this long (0..24h)"},

      {.path = "pageblocks", .type = Section},
      {.path = "pageblocks.scan", .type = Bool, .table = kConfig, .field = FIELD(scan_pageblocks),
       .reload = kRestart, .doc = "classify pageblocks from /proc/kpageflags (root only; without it the feature is off with one warning)"},
      {.path = "pageblocks.interval", .type = Duration, .table = kConfig, .lo = kSecond, .hi = kDay, .field = FIELD(scan_ns),
       .reload = kRestart, .doc = "at most this often while free memory or pageblock types change (by 1% of a zone, seen at two "
              "ticks in a row; 1s..24h); `fragctl map` asks for a fresh scan itself"},
      {.path = "pageblocks.max_age", .type = Duration, .table = kConfig, .lo = kSecond, .hi = 7 * kDay, .field = FIELD(scan_max_age_ns), .reload = kRestart, .doc = "at least this often, changed or not (at least `interval`)"},
      {.path = "pageblocks.threads", .type = Integer, .table = kConfig, .lo = 1, .hi = 64, .field = FIELD(scan_threads), .reload = kRestart, .doc = "threads reading kpageflags in a full scan (1..64)"},
      {.path = "pageblocks.mode", .type = Choice, .table = kConfig, .choices = {"sample", "full"},
       .refusal = "is not a scan mode; use 'sample' (each round reads a random sample of pageblocks within "
                  "pageblocks.budget, whatever the memory size) or 'full' (each round reads every page frame)",
       .field = FIELD(scan_mode),
       .reload = kRestart, .doc = "`sample`: each round reads a random sample of each zone's pageblocks, as many as `budget` buys, "
              "estimates the counts with 95% intervals and updates the map `fragctl map` draws, which converges "
              "round by round; `full`: every round reads every page frame (about 27 ms of a core per GiB). "
              "`fragctl map --max-age` asks for a full scan in both (root, within `full_scan_budget`)"},
      {.path = "pageblocks.budget", .type = Number, .table = kConfig, .number_lo = 0.001, .number_hi = 100,
       .unit = "% of one core", .field = FIELD(scan_budget_percent),
       .reload = kRestart, .doc = "sample rounds: the scanner thread's CPU time per `interval`, in percent of one core "
              "(0.001..100); the blocks a round reads follow from what a block cost so far"},
      {.path = "pageblocks.full_scan_budget", .type = Number, .table = kConfig, .number_lo = 0.001, .number_hi = 100,
       .unit = "% of one core", .field = FIELD(full_scan_budget_percent),
       .reload = kRestart, .doc = "the full scans `fragctl map --max-age` asks for (root only), across all clients: "
              "their CPU time held to this share of one core, with a burst of 5 scans (0.001..100); past it a "
              "map is answered from the scanner's latest picture with a note saying when a full scan is possible. "
              "In `sample` mode also the start pass, whose rounds read every block once at this share, so that "
              "the 1 GiB estimates come: about 30 s per 24 GiB at 2%"},

      {.path = "metrics", .type = Section},
      {.path = "metrics.orders", .type = Orders, .table = kConfig, .lo = 1, .hi = 10, .field = FIELD(metrics.orders),
       .doc = "the per-order families (`fragd_alloc_*`, `fragd_direct_stall_entries_total`, `fragd_stalls_total`, "
              "`fragd_stall_seconds_total`, `fragd_own_allocations_total`, `fragd_free_blocks`, "
              "`fragd_unusable_free_index_ratio`) count orders in groups: each order listed (increasing, 1..10) "
              "starts one that runs up to the next, labelled `order=\"4-8\"` (one order alone: `\"9\"`); "
              "`bpf.min_order` and `compaction.demand.min_order` always start one, and the free lists' order 0 is "
              "a group of its own. The default keeps apart what decisions read: orders below the kernel's costly "
              "order 3, the demand trigger's orders, and the 2 MiB order 9 (THP, hugetlb) with 10; "
              "`[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]` exports every order on its own"},
      {.path = "metrics.buckets", .type = Choice, .table = kConfig, .choices = {"coarse", "fine"},
       .refusal = "is not a bucket layout; use 'coarse' (the buckets decisions read) or 'fine' (every power of two "
                  "from 1.024 us to 17.2 s)",
       .field = FIELD(metrics.buckets),
       .doc = "the classic buckets of the latency histograms in the text exposition. `coarse`: the stall and CMA "
              "times at 16.4 us, 262 us, 4.19 ms, 67.1 ms and 1.07 s (a p99 against the default 5 ms reads the "
              "4.19 ms bound), the compaction and action durations as count and sum alone (what the rules and "
              "the dashboard read of them); `fine`: every power of two of nanoseconds from 1.024 us to 17.2 s (25 "
              "buckets). A scraper that asks for the protobuf exposition gets native histograms with every fine "
              "BPF bucket whatever this says"},
      {.path = "metrics.detail", .type = Words, .table = kConfig,
       .choices = {"zones", "results", "statuses", "thp_sizes", "kernel_counters", "programs"}, .field = FIELD(metrics.detail),
       .doc = "dimensions kept apart, each summed into one series labelled `all` (or left out) otherwise: `zones` "
              "(`fragd_free_blocks`, `fragd_unusable_free_index_ratio`, `fragd_pageblocks`, `fragd_zone_free_pages` "
              "by zone, and `fragd_zone_fragmentation_score_percent`; otherwise per node with `zone=\"all\"`), "
              "`results` (`fragd_alloc_stall_seconds` by result; otherwise `result=\"all\"`), `statuses` "
              "(`fragd_compaction_runs_total` by status; otherwise `status=\"all\"`), `thp_sizes` (the per-size THP "
              "families for every mTHP size; otherwise the PMD size alone), `kernel_counters` "
              "(`fragd_thp_vmstat_total`, `fragd_compaction_vmstat_total`), `programs` "
              "(`fragd_bpf_program_runs_total`, `fragd_bpf_program_run_seconds_total`, which count only while the "
              "kernel's BPF statistics are on, and `fragd_bpf_program_recursion_misses_total` by program; "
              "otherwise one series, `program=\"all\"`; and `fragd_bpf_map_memory_bytes` by map; otherwise "
              "by object, `map=\"all\"`). docs/metrics.md \"Series\" gives what each costs"},

      {.path = "compaction", .type = Section, .rule = backoff_covers_min_interval, .sorted_hint = true},
      {.path = "compaction.nodes", .type = NodeList, .table = kPolicy, .field = FIELD(policy.compaction.nodes), .doc = "nodes fragd may compact: `all` or a list such as `[0, 1]`"},
      {.path = "compaction.method", .type = Choice, .table = kPolicy, .choices = {"node", "proactiveness", "pool"},
       .refusal = "is not a method; use pool (make the blocks a goal misses), node (write nodeN/compact) or "
                  "proactiveness (raise vm.compaction_proactiveness for a while)",
       .field = FIELD(policy.compaction.method), .rule = method_mark,
       .doc = "`pool`: make only the free blocks of `reserve.order` the goal misses (docs/configuration.md \"Demand-sized "
              "compaction\"): grow a hugetlb pool on the node by that many pages in a fragd process, so that the "
              "kernel's direct compaction makes each block, then free the pool; a whole-node compaction when the "
              "goal is near all the node's free memory. `node`: write 1 to `/sys/devices/system/node/nodeN/compact` "
              "(synchronous, whole node). `proactiveness`: raise `vm.compaction_proactiveness` to "
              "`proactiveness.value` while a trigger holds, then put the old value back"},
      {.path = "compaction.score", .type = Section, .rule = score_thresholds, .sorted_hint = true},
      {.path = "compaction.score.enabled", .type = Bool, .table = kPolicy, .field = FIELD(policy.compaction.score.enabled),
       .doc = "the fragmentation-score trigger (the kernel's node score, 0..100, exported as "
              "`fragd_node_fragmentation_score_percent`)"},
      {.path = "compaction.score.high", .type = Integer, .table = kPolicy, .lo = 0, .hi = 100, .unit = "percent", .field = FIELD(policy.compaction.score.high),
       .doc = "a node whose score rises above this is compacted... (0..100)"},
      {.path = "compaction.score.low", .type = Integer, .table = kPolicy, .lo = 0, .hi = 100, .unit = "percent", .field = FIELD(policy.compaction.score.low),
       .doc = "...until its score is below this (0..100, must be below `high`): hysteresis, so a node near one "
              "threshold does not flap"},
      {.path = "compaction.demand", .type = Section, .rule = demand_has_a_check, .sorted_hint = true},
      {.path = "compaction.demand.enabled", .type = Bool, .table = kPolicy, .field = FIELD(policy.compaction.demand.enabled),
       .doc = "the demand trigger: allocations that stalled (direct compaction or reclaim), as the BPF side sees "
              "them. Fires only on nodes whose score is at least `score.low` (something to compact)"},
      {.path = "compaction.demand.min_order", .type = Integer, .table = kPolicy, .lo = 1, .hi = 10, .field = FIELD(policy.compaction.demand.min_order),
       .doc = "count stalls of this order and above (1..10; at least `bpf.min_order`, since lower orders are not "
              "traced). 4 = above the kernel's costly order 3"},
      {.path = "compaction.demand.stalls_per_second", .type = Number, .table = kPolicy, .number_lo = 0,
       .number_hi = 1e9, .field = FIELD(policy.compaction.demand.stalls_per_second),
       .doc = "compact when more stalls per second than this over `window` (a number >= 0; 0 = this check off)"},
      {.path = "compaction.demand.stall_p99", .type = Duration, .table = kPolicy, .lo = 0, .hi = 60 * kSecond,
       .field = FIELD(policy.compaction.demand.stall_p99_ns),
       .doc = "compact when the p99 stall time over `window` is above this (0 = this check off; needs at least 5 "
              "stalls in the window)"},
      {.path = "compaction.demand.window", .type = Duration, .table = kPolicy, .lo = kSecond, .hi = kHour,
       .field = FIELD(policy.compaction.demand.window_ns),
       .doc = "how far back both demand checks look (1s..1h)"},
      {.path = "compaction.reserve", .type = Section, .sorted_hint = true},
      {.path = "compaction.reserve.order", .type = Integer, .table = kPolicy, .lo = 1, .hi = 10, .field = FIELD(policy.compaction.reserve.order),
       .doc = "the reserve goal's block order, in the kernel's pages (1..10; 2 MiB is 9 with 4 KiB pages, as on x86-64, "
              "7 with 16 KiB and 5 with 64 KiB)"},
      // The machine check bounds it by node memory; this bound only keeps `blocks << order` in range.
      {.path = "compaction.reserve.blocks", .type = Integer, .table = kPolicy, .lo = 0, .hi = uint64_t{1} << 40,
       .field = FIELD(policy.compaction.reserve.blocks), .rule = reserve_mark,
       .doc = "keep at least this many free blocks of `order` (larger blocks count as several) on each node in "
              "scope, e.g. for a known consumer of 2 MiB pages. 0 = off"},
      {.path = "compaction.reserve.memory_percent", .type = Integer, .table = kPolicy, .lo = 0, .hi = 100, .unit = "percent", .field = FIELD(policy.compaction.reserve.memory_percent),
       .doc = "...or this share of each node's memory as free blocks of `order`, whichever is more (0..100; 0 = "
              "off). Never more than half the node's free memory: it costs compaction, not memory"},
      {.path = "compaction.reserve.count_pools", .type = Bool, .table = kPolicy,
       .field = FIELD(policy.compaction.reserve.count_pools),
       .doc = "the node's hugetlb pool pages of `order`'s size or larger count toward the reserve, each as the "
              "blocks of `order` it spans: a pool already holds the huge pages it was grown for, so a host whose "
              "pools hold the reserve's share is not compacted for it again. false: free blocks only"},
      {.path = "compaction.forecast", .type = Section, .sorted_hint = true},
      {.path = "compaction.forecast.enabled", .type = Bool, .table = kPolicy, .field = FIELD(policy.compaction.forecast.enabled),
       .doc = "compact a node ahead of demand: when its free 2 MiB blocks fall, and at the rate they fell over "
              "`forecast_window` they run out within `horizon` (fragd_hugepages_exhaustion_seconds). Off by "
              "default. Needs half a `forecast_window` of ticks before it can fire"},
      {.path = "compaction.forecast.horizon", .type = Duration, .table = kPolicy, .lo = kSecond, .hi = kDay,
       .field = FIELD(policy.compaction.forecast.horizon_ns),
       .doc = "...this far ahead (1s..24h). With method pool the compaction's goal is the blocks there are "
              "plus those the horizon takes at that rate"},
      {.path = "compaction.defrag_guard", .type = Section, .rule = guard_has_a_check, .sorted_hint = true},
      {.path = "compaction.defrag_guard.enabled", .type = Bool, .table = kPolicy,
       .field = FIELD(policy.compaction.defrag_guard.enabled),
       .doc = "the `vm.defrag_mode` guard (act mode, Linux 6.15+): while `vm.defrag_mode` is 1 and one of its checks "
              "holds over `window`, fragd writes 0 for `hold`, logs why, then puts the value back (and on exit, like "
              "every setting it changes). Off by default. While it is on and defrag_mode is 1, allocation counting "
              "stays on (its atomic check counts with it; docs/configuration.md \"The defrag_mode guard\")"},
      {.path = "compaction.defrag_guard.atomic_failures_per_second", .type = Number, .table = kPolicy,
       .number_lo = 0, .number_hi = 1e9, .field = FIELD(policy.compaction.defrag_guard.atomic_failures_per_second),
       .doc = "...allocations that cannot sleep (`fragd_alloc_failures_total{can_sleep=\"false\"}`) failing faster than "
              "this per second over `window` (a number >= 0; 0 = this check off)"},
      {.path = "compaction.defrag_guard.pressure_full_percent", .type = Number, .table = kPolicy, .number_lo = 0,
       .number_hi = 100, .unit = "percent", .field = FIELD(policy.compaction.defrag_guard.pressure_full_percent),
       .doc = "...or every non-idle task waiting on memory (PSI `full`, /proc/pressure/memory) more than this share of "
              "`window` (0..100; 0 = this check off)"},
      {.path = "compaction.defrag_guard.window", .type = Duration, .table = kPolicy, .lo = 10 * kSecond, .hi = kHour,
       .field = FIELD(policy.compaction.defrag_guard.window_ns),
       .doc = "how far back both checks look (10s..1h); after fragd puts defrag_mode back, a whole window passes "
              "before they can act again"},
      {.path = "compaction.defrag_guard.hold", .type = Duration, .table = kPolicy, .lo = kSecond, .hi = kDay,
       .field = FIELD(policy.compaction.defrag_guard.hold_ns),
       .doc = "how long defrag_mode stays 0 before fragd puts back the value it had (1s..24h)"},
      {.path = "compaction.proactiveness", .type = Section, .sorted_hint = true},
      {.path = "compaction.proactiveness.value", .type = Integer, .table = kPolicy, .lo = 1, .hi = 100, .field = FIELD(policy.compaction.proactiveness.value),
       .doc = "with `method: proactiveness`: the value written to `vm.compaction_proactiveness` (1..100)"},
      {.path = "compaction.proactiveness.hold", .type = Duration, .table = kPolicy, .lo = kSecond, .hi = kDay,
       .field = FIELD(policy.compaction.proactiveness.hold_ns),
       .doc = "...for at most this long, then the previous value goes back (1s..24h). It also goes back when no "
              "trigger holds, on a policy change and on exit"},
      // Their rules check the range, with a reason for each bound.
      {.path = "compaction.min_interval", .type = Duration, .table = kPolicy, .lo = 0, .hi = kNoLimit, .field = FIELD(policy.compaction.min_interval_ns), .rule = min_interval_range,
       .doc = "least time between two actions on one node (1s..24h)"},
      {.path = "compaction.settle", .type = Duration, .table = kPolicy, .lo = 0, .hi = kHour,
       .field = FIELD(policy.compaction.settle_ns),
       .doc = "the score and reserve triggers act on a node only after its free memory has neither fallen nor "
              "risen by more than 1% of the node for this long (0s..1h; 0s = at once): while a consumer is still "
              "taking memory, the blocks a compaction makes are taken back; while one gives it back, compaction "
              "moves pages about to be freed. The demand and forecast triggers do not wait. While it waits, the "
              "node's `waiting` says `settling`"},
      {.path = "compaction.cpu_budget", .type = Duration, .table = kPolicy, .lo = 0, .hi = kNoLimit, .field = FIELD(policy.compaction.cpu_budget_ns), .rule = cpu_budget_range,
       .doc = "compaction time fragd may cause per minute, all nodes together (> 0, at most 30s). A compaction "
              "starts only if the longest of the last four would still fit, and every write fragd makes to a "
              "compaction or pool file (nodeN/compact, a pool growing, for a node, a goal, a pool target) is killed "
              "when what was left of the budget at the action's start has run out: the action is recorded `cut` "
              "(fragd_actions_total{result=\"cut\"}, fragctl status, a log line); the first action has the whole "
              "budget. Pool targets that grow wait while none is left. A manual request (fragctl compact, fragctl "
              "pool set) is not held back by what the automatic actions used but runs under its own deadline: "
              "fragctl's --timeout (300 s by default), or one whole budget from a client that names none. Counted from the runs of fragd's own writer processes, in a container's pid namespace too"},
      {.path = "compaction.backoff", .type = Section, .sorted_hint = true},
      {.path = "compaction.backoff.min_gain", .type = Integer, .table = kPolicy, .lo = 1, .hi = 100, .unit = "percentage points", .field = FIELD(policy.compaction.backoff.min_gain),
       .doc = "a compaction that lowered the score by less than this (and added no reserve block) did not help "
              "(1..100)"},
      {.path = "compaction.backoff.max", .type = Duration, .table = kPolicy, .lo = 0, .hi = kDay, .field = FIELD(policy.compaction.backoff.max_ns),
       .doc = "after compactions that did not help, fragd remembers the score reached as the node's floor and waits "
              "`min_interval`, then 2x, 4x, ... up to this, unless the score climbs `min_gain` above the floor "
              "(`min_interval`..24h)"},

      {.path = "hugepages", .type = Section, .sorted_hint = true},
      {.path = "hugepages.guard", .type = Size, .table = kPolicy, .field = FIELD(policy.hugepages.guard_kib), .rule = guard_floor,
       .doc = "never allocate hugepages when `MemAvailable` would fall below this (at least 64MiB); a pool on one "
              "node also keeps this much available on that node (its own MemAvailable, counted from `nodeN/meminfo` "
              "and `/proc/zoneinfo` as the kernel counts the host's), and near the guard grows in steps that read "
              "both again"},
      {.path = "hugepages.drop_caches", .type = Bool, .table = kPolicy, .field = FIELD(policy.hugepages.drop_caches),
       .doc = "drop clean page cache (`vm.drop_caches=1`) before a retry that follows an attempt without progress. "
              "Off by default: every reader of files pays for it"},
      {.path = "hugepages.pools", .type = Pools, .table = kPolicy, .field = FIELD(policy.hugepages.pools),
       .doc = "hugetlb pool targets, each `{size, node, count}`: fragd writes the target, reads the pool back and "
              "writes again while it makes progress (the kernel compacts for each page a write asks for); only after "
              "a write that added nothing does it compact, node by node, until the pages the pool lacks exist as "
              "free blocks, and try again (it stops after two attempts in a row without progress), never beyond "
              "`count`, never below the guard, and shrinks the pool when `count` is lowered (then puts back on "
              "the free lists the freed pages a CPU's page list kept, as after a goal's pool: step `drain`)"},
      {.path = "hugepages.pools[i].size", .type = PageSize, .table = kPolicy, .required = true,
       .doc = "a page size the kernel offers: `2MB`, `1GB` (also `2M`, `2MiB`, `2048kB`, `1G`, `1GiB`)"},
      {.path = "hugepages.pools[i].node", .type = Node, .table = kPolicy, .def = "all",
       .doc = "`all`: the global pool (`/sys/kernel/mm/hugepages`, the kernel spreads it over nodes); `N`: node N's "
              "pool"},
      // The machine check bounds it by memory; this bound keeps count * size in range.
      {.path = "hugepages.pools[i].count", .type = Integer, .table = kPolicy, .lo = 0, .hi = uint64_t{1} << 32,
       .required = true, .doc = "pages wanted (an integer >= 0)"},
  };
  return keys;
}

namespace {

std::string list_text(const auto& items, auto&& text) {
  std::string s = "[";
  for (const auto& i : items) s += (s.size() > 1 ? ", " : "") + text(i);
  return s + "]";
}

// `v`, a key's value, as the file would spell it.
template <class T>
std::string value_text(const Key& k, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, unsigned> || std::is_same_v<T, uint64_t>) {
    if (k.type == KeyType::Duration) return format_duration(static_cast<double>(v), DurationStyle::Exact);
    if (k.type == KeyType::Size) return format_size_kib(v, SizeStyle::Config);
    return std::to_string(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return strf("%g", v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_enum_v<T>) {
    return std::string(k.choices.at(static_cast<size_t>(v)));
  } else if constexpr (std::is_same_v<T, NodeSet>) {
    return v.all ? "all" : list_text(v.nodes, [](int n) { return std::to_string(n); });
  } else if constexpr (std::is_same_v<T, std::vector<unsigned>>) {
    return list_text(v, [](unsigned o) { return std::to_string(o); });
  } else if constexpr (std::is_same_v<T, DetailSet>) {
    std::vector<std::string> words;
    for (size_t i = 0; i < k.choices.size(); ++i)
      if (v.has(static_cast<Detail>(i))) words.emplace_back(k.choices[i]);
    return list_text(words, [](const std::string& w) { return w; });
  } else {
    static_assert(std::is_same_v<T, std::vector<PoolTarget>>, "a key type value_text cannot spell");
    // A default pool list is empty; written out, an entry would be {size, node, count}.
    return v.empty() ? "[]" : std::to_string(v.size()) + " pools";
  }
}

}  // namespace

std::string default_text(const Key& k) {
  Config defaults;
  std::string text(k.def);
  std::visit(
      [&](auto field) {
        if constexpr (!std::is_same_v<decltype(field), std::monostate>) text = value_text(k, field(defaults));
      },
      k.field);
  return text;
}

std::vector<std::string> keep_restart_keys(Config running, Config& next) {
  std::vector<std::string> changed;
  for (const Key& k : config_keys()) {
    if (k.reload != Reload::Restart) continue;
    std::visit(
        [&](auto field) {
          if constexpr (!std::is_same_v<decltype(field), std::monostate>) {
            // Keys read at start are scalars and strings; one of another type would always be
            // named (the unit test of an unchanged reload fails on it).
            using T = std::remove_reference_t<decltype(field(next))>;
            if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string>)
              if (field(next) == field(running)) return;
            changed.emplace_back(k.path);
            field(next) = field(running);
          }
        },
        k.field);
  }
  return changed;
}

const Key* find_key(std::string_view path) {
  for (const Key& k : config_keys())
    if (k.path == path) return &k;
  return nullptr;
}

std::string_view key_name(const Key& k) {
  const size_t dot = k.path.rfind('.');
  return dot == std::string_view::npos ? k.path : k.path.substr(dot + 1);
}

std::vector<const Key*> keys_below(std::string_view section) {
  std::vector<const Key*> out;
  const size_t skip = section.empty() ? 0 : section.size() + 1;
  for (const Key& k : config_keys()) {
    if (k.path.empty() || k.path.size() <= skip) continue;
    if (!section.empty() && (!k.path.starts_with(section) || k.path[section.size()] != '.')) continue;
    if (k.path.substr(skip).find('.') == std::string_view::npos) out.push_back(&k);
  }
  return out;
}

}  // namespace fragd
