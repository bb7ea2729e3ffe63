// SPDX-License-Identifier: Apache-2.0
// The hugetlb pool strategy: reach a target count when it is feasible,
// never beyond it, never below the guard (the host's MemAvailable, and a node's
// own spare memory for that node's pool). Pure logic over an
// Actuator, so it is tested with a fake one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "concerns/act/actuator.h"
#include "concerns/act/engine.h"
#include "kernel/page_size.h"

namespace fragd {

struct PoolRequest {
  int node = -1;               // < 0: the global pool
  uint64_t size_kib = 2048;
  uint64_t target = 0;
  std::vector<int> compact_nodes;  // nodes to compact when free blocks are short
  uint64_t guard_kib = 1024 * 1024;
  bool drop_caches = false;
  uint64_t page_kib = kernel_page_kib();  // the kernel's base page: the pool page's order
};

struct PoolOutcome {
  // ok: target reached; short: stopped after two attempts in a row without
  // progress; guard: stopped by the guard (guard_room); error: a read or
  // write failed (detail says which); abandoned: fragd is exiting; cut: a
  // grow or compaction write ran past the action's deadline (the actuator's,
  // the compaction budget) and was killed: the pool keeps what it reached.
  std::string result;
  std::string detail;
  uint64_t before = 0, after = 0;
  unsigned attempts = 0;     // pool writes
  unsigned compactions = 0;  // node compactions run
  bool dropped_caches = false;
  std::vector<ActionStep> steps;
};

// The blocks freed pool pages went back as, that a CPU's per-CPU page list kept instead of the
// free lists (Actuator::refresh_vm_stats): vm.stat_refresh is written until `node` (< 0: every
// node) has `want` free blocks of `order`, three writes in a row bring none back (the lists'
// floor, high_min, stays), 64 writes were made or fragd stops. Nothing is written when the
// node has them already; the writes together are one "drain" step in `steps`.
struct PageListDrain {
  unsigned writes = 0;
  uint64_t came_back = 0;  // free blocks the writes brought back
  std::string error;       // a refused write or an unreadable /proc/buddyinfo
  // What an outcome's detail appends: "" when nothing was written.
  std::string text() const;
};
PageListDrain drain_page_lists(Actuator& a, int node, unsigned order, uint64_t want, std::vector<ActionStep>& steps);

// Grow, with the least work (a pool write makes each page the way an
// allocation does: from a free block, or by direct compaction in the writing
// process until one block is free, which migrates about what the page needs):
//  1. current == target: ok, nothing written.
//  2. each attempt: room = guard_room(); none -> guard. goal = target when the room holds it,
//     else current + 3/4 of the room (all of it below 4 pages), so the room is read again
//     between writes near the guard. Write goal (Actuator::grow_pool), read back.
//  3. progress (read back > current): write again. None: a miss. After a
//     miss, compact compact_nodes once, sized to what the pool lacks (the
//     write's goal - current pages, each a free block of the page's order): each node
//     until it has that many more free blocks than before its compaction
//     (Actuator::compact_node_until), the lack less what the nodes before
//     made, and no further node once none is lacking; then try again. After a miss that followed a compaction,
//     drop caches when enabled and compact again; two misses in a row with
//     nothing left to try -> short. At most 16 attempts.
// Every write, compaction and cache drop is a step (in order) of the outcome.
// Shrink (current > target): write target, read back (the kernel keeps pages
// in use as surplus): ok when read back <= target... else short. The freed pages then are
// free blocks of their order, drain_page_lists putting back what a CPU's page list kept.
PoolOutcome resize_pool(Actuator& a, const PoolRequest& r);

// Pages of `size_kib` a pool on `node` may still take: the host's MemAvailable above guard_kib,
// and for a node's pool (node >= 0) that node's spare memory (Actuator::spare_memory) above
// guard_kib too: a host-wide figure alone lets one node's pool drain that node (reclaim its page
// cache, leave its bound tasks nothing) while the other nodes keep MemAvailable high. `why` names
// the figure that bounds it, for the guard's message.
struct GuardRoom {
  uint64_t pages = 0;
  std::string why;
};
Result<GuardRoom> guard_room(Actuator& a, int node, uint64_t size_kib, uint64_t guard_kib);

}  // namespace fragd
