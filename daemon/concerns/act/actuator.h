// SPDX-License-Identifier: Apache-2.0
// What fragd can do to the kernel, as an interface: the daemon's
// SysfsActuator (concerns/act/sysfs_actuator.h) writes the real files; the unit
// tests drive the decision logic and the pool strategy with a fake.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/result.h"
#include "policy/policy.h"

namespace fragd {

class Actuator {
 public:
  virtual ~Actuator() = default;

  // Compacts every zone of `node` (synchronous: returns when the kernel is
  // done). Fails with errno ECANCELED when fragd stopped it mid-way because
  // it is exiting: the action is "abandoned"; ETIMEDOUT when the deadline
  // (set_deadline) passed: the action is "cut".
  virtual Result<void> compact_node(int node) = 0;
  // The same, stopped once the node has at least `blocks` free blocks of `order` (larger ones
  // counted as several): the compaction a pool change asks for, sized to what it lacks. The
  // default compacts the whole node.
  virtual Result<void> compact_node_until(int node, unsigned /*order*/, uint64_t /*blocks*/) {
    return compact_node(node);
  }

  virtual Result<unsigned> read_proactiveness() = 0;
  virtual Result<void> write_proactiveness(unsigned value) = 0;
  // vm.defrag_mode (Linux 6.15+; ENOENT before), 0 or 1: the defrag_mode guard's setting.
  virtual Result<unsigned> read_defrag_mode() { return make_error("vm.defrag_mode: not offered here", ENOENT); }
  virtual Result<void> write_defrag_mode(unsigned /*value*/) {
    return make_error("vm.defrag_mode: not offered here", ENOENT);
  }

  // Hugetlb pool of `size_kib` pages on `node`; node < 0: the global pool.
  // A write succeeds even when the kernel could not allocate everything:
  // read the pool back.
  virtual Result<uint64_t> read_pool(int node, uint64_t size_kib) = 0;
  virtual Result<void> write_pool(int node, uint64_t size_kib, uint64_t count) = 0;
  // The same for a write that grows the pool, where the kernel may compact
  // for each page: fragd's daemon does it in a process it can kill
  // (ECANCELED when fragd stopped it, ETIMEDOUT at the deadline, as
  // compact_node) and that its BPF
  // programs know as fragd's own.
  virtual Result<void> grow_pool(int node, uint64_t size_kib, uint64_t count) {
    return write_pool(node, size_kib, count);
  }
  // The same, its write ended early once `give_way` (polled while the kernel grows the pool)
  // turns true: the pool keeps what it got, and the write counts as done. The default asks
  // once, before a write it then does not make.
  virtual Result<void> grow_pool_giving_way(int node, uint64_t size_kib, uint64_t count,
                                            const std::function<bool()>& give_way) {
    if (give_way && give_way()) return {};
    return grow_pool(node, size_kib, count);
  }

  virtual Result<uint64_t> mem_available_kib() = 0;
  // What a pool on `node` may take before it drains that node (policy.h read_spare_memory): the
  // node's free and reclaimable memory from its own meminfo; node < 0: the host's MemAvailable.
  virtual Result<SpareMemory> spare_memory(int node) = 0;
  // Free blocks able to hold one block of `order` on `node` (node < 0: every
  // node): sum over o >= order of free_blocks[o] << (o - order), from
  // /proc/buddyinfo. For an order above the buddy allocator's largest, the
  // largest blocks >> the difference.
  virtual Result<uint64_t> free_blocks(int node, unsigned order) = 0;
  // The node's fragmentation score now (concerns/memory/score.h).
  virtual Result<unsigned> node_score(int node) = 0;

  // vm.drop_caches = 1: clean page cache only.
  virtual Result<void> drop_caches() = 0;

  // One write of vm.stat_refresh: every CPU shrinks its per-CPU page lists a step
  // (decay_pcp_high). A freed 2 MiB page goes to the freeing CPU's list first, and since Linux
  // 6.7 a list that frees much grows to hold hundreds of them (its "high" tunes itself up to pcp
  // high_max): /proc/buddyinfo does not count them, they do not merge, and only that CPU
  // allocates from them, for the seconds the list takes to shrink back.
  virtual Result<void> refresh_vm_stats() = 0;

  // True once fragd is exiting: a multi-step action stops at its next step.
  virtual bool stop_requested() = 0;

  // The CLOCK_MONOTONIC time by which compact_node and grow_pool must be
  // done (0: none), set by the executor for each action from the compaction
  // budget it may use (ActionRequest::budget_ns). A write still under way
  // then is killed, and one asked for later is not started: both fail with
  // errno ETIMEDOUT, and the action is "cut".
  virtual void set_deadline(uint64_t deadline_ns) { deadline_ns_ = deadline_ns; }

  // The tree a canonical setting file (concerns/act/saved_state.h) is written in:
  // the root of its procfs or sysfs (tree_of). The default: "/proc", "/sys".
  virtual std::string tree_root(const std::string& canonical_file) const;
  uint64_t deadline() const { return deadline_ns_; }

 protected:
  uint64_t deadline_ns_ = 0;
};

}  // namespace fragd
