// SPDX-License-Identifier: Apache-2.0
// fragd's action policy: when to compact, how, within which limits, and the
// hugetlb pool targets to reach. Parsed from the `compaction:` and
// `hugepages:` sections of the config file (policy/config.h) into these plain
// structs, then checked twice: parse_config() rejects what is wrong on any
// machine (types, ranges, low >= high, a 0 s interval); check_policy_on()
// rejects what is wrong on this machine (a node that does not exist, a page
// size the kernel does not offer, a pool target larger than memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace fragd {

// Where a value was written, for messages: "file:line:column".
struct SourceMark {
  int line = 0;    // 1-based; 0 = not from a file (a default)
  int column = 0;  // 1-based
};

// A set of NUMA nodes: every node, or a list.
struct NodeSet {
  bool all = true;
  std::vector<int> nodes;  // when !all: sorted, unique
  SourceMark mark;
  std::vector<SourceMark> marks;  // per entry of `nodes` when read from a list; may be empty
  bool contains(int node) const;
};

enum class CompactMethod {
  Node,            // write 1 to /sys/devices/system/node/nodeN/compact (synchronous, whole node)
  Proactiveness,   // raise vm.compaction_proactiveness for a while, then put it back
  Pool,            // grow a temporary hugetlb pool on the node by the blocks the goal misses, then free it
};

struct ScoreTrigger {
  bool enabled = true;
  unsigned high = 90;  // start when the node's fragmentation score is above this (0..100)
  unsigned low = 80;   // and keep going until it is below this; low < high
};

// Demand from the BPF side: stalled allocations of order >= min_order.
struct DemandTrigger {
  bool enabled = true;
  unsigned min_order = 4;            // 1..10; orders above PAGE_ALLOC_COSTLY_ORDER (3) by default
  double stalls_per_second = 10;     // over `window`; 0 = this check off
  uint64_t stall_p99_ns = 5'000'000; // p99 of the stalls in `window`; 0 = this check off
  uint64_t window_ns = 10'000'000'000ULL;
};
// The p99 check needs at least this many stalls in the window (p99 of a
// handful of samples is their maximum).
inline constexpr uint64_t kDemandP99MinStalls = 5;

// Keep at least `blocks` free blocks of `order` (counting larger blocks as
// several) on each node in scope. blocks = 0: off.
struct ReserveGoal {
  unsigned order = 9;
  uint64_t blocks = 0;
  unsigned memory_percent = 25;  // of the node's memory, as free blocks of `order`; 0 = off
  // The node's hugetlb pool pages of `order`'s size or larger count toward the reserve (a pool
  // already holds the huge pages it was grown for); false: free blocks only.
  bool count_pools = true;
  SourceMark mark;  // of `blocks`
};

// Compact ahead: when a node's free 2 MiB blocks will run out within `horizon` at the rate they
// fell over `forecast_window` (concerns/memory/forecast.h: the least-squares slope, once half a
// window was seen). Off by default.
struct ForecastTrigger {
  bool enabled = false;
  uint64_t horizon_ns = 300'000'000'000ULL;
};

struct ProactivenessMethod {
  unsigned value = 90;                       // vm.compaction_proactiveness while raised (1..100)
  uint64_t hold_ns = 60'000'000'000ULL;      // at most this long, then the old value goes back
};

// The vm.defrag_mode guard (Linux 6.15+): while defrag_mode is 1 and, over `window`, atomic
// allocations fail faster than atomic_failures_per_second or every task waits on memory more
// than pressure_full_percent of the time (PSI full), fragd writes 0 to vm.defrag_mode for `hold`,
// then puts the value back (and on exit). Off by default; act mode only.
struct DefragGuard {
  bool enabled = false;
  double atomic_failures_per_second = 1;  // fragd_alloc_failures_total{can_sleep="false"}; 0 = off
  double pressure_full_percent = 5;       // /proc/pressure/memory full; 0 = off
  uint64_t window_ns = 120'000'000'000ULL;
  uint64_t hold_ns = 600'000'000'000ULL;
};

struct Backoff {
  // A compaction that lowered the score by less than this (and did not add a
  // reserve block) did not help: fragd learns the score it reached as that
  // node's floor and waits before the next try, doubling the wait each time
  // (min_interval, 2x, 4x, ... up to `max`), unless the score climbs
  // min_gain above the floor (new fragmentation worth compacting).
  unsigned min_gain = 8;
  uint64_t max_ns = 600'000'000'000ULL;
};

struct CompactionPolicy {
  NodeSet nodes;
  CompactMethod method = CompactMethod::Pool;
  SourceMark method_mark;
  ScoreTrigger score;
  DemandTrigger demand;
  ReserveGoal reserve;
  ForecastTrigger forecast;
  ProactivenessMethod proactiveness;
  DefragGuard defrag_guard;
  uint64_t min_interval_ns = 10'000'000'000ULL;  // between two actions on one node; >= 1 s
  // The score and reserve triggers act on a node only once its free memory has moved (up or
  // down) by at most 1% of the node for this long: a consumer still taking memory would take the
  // blocks back, and one giving memory back frees pages a compaction would move. 0: at once.
  // Demand (stalls now) and the forecast do not wait.
  uint64_t settle_ns = 0;
  uint64_t cpu_budget_ns = 6'000'000'000ULL;     // compaction time per minute, all nodes; 0 < b <= 30 s
  Backoff backoff;
};

struct PoolTarget {
  uint64_t size_kib = 2048;  // 2048 (2 MiB) or 1048576 (1 GiB), whatever the kernel offers
  NodeSet node;              // all: the global pool (the kernel spreads it over nodes)
  uint64_t count = 0;        // pages wanted
  SourceMark mark;           // of the list entry
  SourceMark size_mark, count_mark;
};

struct HugepagePolicy {
  // Never allocate when MemAvailable would fall below this. > 0.
  uint64_t guard_kib = 1024 * 1024;
  // Drop clean page cache (vm.drop_caches=1) before a retry that follows an
  // attempt without progress. Off by default: it costs every reader of files.
  bool drop_caches = false;
  std::vector<PoolTarget> pools;
  SourceMark guard_mark;
};

struct Policy {
  bool act = false;      // mode: act (false = observe)
  bool dry_run = false;  // decide and log, write nothing
  CompactionPolicy compaction;
  HugepagePolicy hugepages;
};

// What the machine offers, for check_policy_on().
struct MachineFacts {
  std::vector<int> nodes;                // online nodes with memory
  std::vector<uint64_t> hugepage_kib;    // sizes the kernel offers (kernel/mm/hugepages)
  uint64_t mem_total_kib = 0;            // /proc/meminfo MemTotal
  std::vector<uint64_t> node_total_kib;  // per entry of `nodes`: nodeN/meminfo MemTotal
  uint64_t page_kib = 4;                 // base page size
};

// Reads MachineFacts from proc_root/sys_root (no privileges needed):
//  - nodes: sys_root/devices/system/node/online (intersected with has_memory
//    when present; without has_memory, nodes whose MemTotal is 0 are left
//    out); without `online`, the nodeN directories that have a meminfo; without
//    devices/system/node (a kernel without NUMA sysfs), node 0 alone, holding
//    MemTotal;
//  - mem_total_kib: proc_root/meminfo MemTotal; node_total_kib: nodeN/meminfo
//    "Node N MemTotal:";
//  - hugepage_kib: the sizes of sys_root/kernel/mm/hugepages/hugepages-<N>kB,
//    ascending (none: a kernel without hugetlbfs).
Result<MachineFacts> read_machine_facts(const std::string& proc_root = "/proc",
                                        const std::string& sys_root = "/sys");

// What a pool may take from a node now (node >= 0): the node's MemAvailable, counted as the
// kernel counts the host's (si_mem_available) from sys_root's nodeN/meminfo and the node's zones
// in proc_root/zoneinfo: MemFree less the zones' high watermarks and lowmem reserves, plus the
// file pages and KReclaimable (SReclaimable before 4.20) less half of each, at most the zones'
// low watermarks. A pool that took more would reclaim the node's working set, swap its tasks or
// OOM-kill the ones bound to it: the pages below the watermarks are not theirs to allocate (a
// THP kernel raises them: min 34 MiB on a 1 GiB node of the 2-node guest). For the host (node <
// 0) proc_root/meminfo MemAvailable. `how` says what it counted.
struct SpareMemory {
  uint64_t kib = 0;
  std::string how;
};
Result<SpareMemory> read_spare_memory(const std::string& proc_root, const std::string& sys_root, int node);
// SpareMemory::how for a node.
extern const char* const kNodeSpareHow;
// The same from a meminfo file's text (`path` for messages) and, for a node, its zones' watermarks
// and reserves in kB (ZoneSpan's high + protection, and low, summed over the node's zones).
Result<SpareMemory> parse_spare_memory(const std::string& text, const std::string& path, int node,
                                       uint64_t reserve_kib = 0, uint64_t low_kib = 0);

// Checks the policy against the machine: listed nodes exist, pool sizes are
// offered, pools fit in memory minus the guard (each pool alone, the pools of
// one node together, all pools together), the reserve fits in each node in
// scope. Every error names `source` (the file) with the line:column of the
// offending entry, the key path and the fix, e.g.
//   fragd.yaml:31:13: key 'hugepages.pools[0].node': node 3 does not exist (online: 0)
Result<void> check_policy_on(const Policy& p, const MachineFacts& m, const std::string& source);

// "2MB", "2M", "2MiB", "2048kB", "1GB", "1G", "1GiB" -> KiB (binary units, as
// hugeadm reads them). Anything else -> Error.
Result<uint64_t> parse_page_size_kib(const std::string& text);
// "1GiB", "512MiB", "512M", "1G", "65536KiB", "65536kB" -> KiB (binary units).
// "0" needs no unit; another bare number is refused (which unit was meant?).
// K, KB, kB, KiB, M, MB, MiB, G, GB, GiB, T, TB, TiB are all binary, as in
// /proc/meminfo. Integers only.
Result<uint64_t> parse_size_kib(const std::string& text);

const char* method_name(CompactMethod m);  // "node", "proactiveness", "pool"

}  // namespace fragd
