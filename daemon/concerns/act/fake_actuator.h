// SPDX-License-Identifier: Apache-2.0
// A simulated kernel behind the Actuator interface, for the pool strategy
// and decision-logic tests. It records every call and keeps a small model of
// each node:
//  - free_pages, of which blocks9 free 2 MiB (order-9) blocks; the node's
//    fragmentation score is derived from them as the kernel does for one
//    zone: (free - blocks9 * 512) * 100 / free.
//  - compaction turns free pages into blocks: blocks9 grows by at most
//    step_blocks, up to max_blocks9 (what the movable pages allow).
//  - hugetlb pools per (node, size): a grow allocates one page per free
//    block of the page's order and stops when there is none (plus
//    direct_yield pages the kernel's own direct compaction finds per write);
//    a shrink frees pages not in use (in_use stays). MemAvailable falls by
//    each allocated page.
//  - drop_caches turns cache_blocks of page cache into compactable blocks.
//  - a pool shrink leaves up to percpu_keep of the blocks it frees on a CPU's page list (not
//    free blocks until refresh_vm_stats brings back percpu_step a write).
//  - any operation can fail with an errno, once, n times or until cleared.
// Time-free: the replay harness in engine_test.cc gives it a clock.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "concerns/act/actuator.h"
#include "concerns/act/engine.h"

namespace fragd::test {

class FakeActuator : public Actuator {
 public:
  static constexpr uint64_t kBlockPages = 512;  // pages in an order-9 block

  struct Node {
    uint64_t free_pages = 0;
    uint64_t blocks9 = 0;
    uint64_t max_blocks9 = 0;                  // compaction's ceiling
    uint64_t step_blocks = ~0ULL;              // blocks one compaction adds at most
    uint64_t cache_blocks = 0;                 // freed into compactable blocks by drop_caches
    std::map<uint64_t, uint64_t> pool;         // size_kib -> pages
    std::map<uint64_t, uint64_t> in_use;       // size_kib -> pages a shrink cannot free
    unsigned compactions = 0;
    uint64_t percpu = 0;                       // freed blocks on a CPU's page list
  };

  std::map<int, Node> nodes;
  uint64_t mem_available = 16ULL * 1024 * 1024;  // kB
  // A node's spare memory (kB, Actuator::spare_memory), falling by each page its pools take; a
  // node not listed answers the host's MemAvailable.
  std::map<int, uint64_t> node_spare;
  uint64_t direct_yield = 0;                     // pages a pool write gets beyond the free blocks
  uint64_t percpu_keep = 0;                      // blocks a pool shrink leaves on a CPU's page list
  uint64_t percpu_step = 30;                     // blocks one drain write brings back
  unsigned proactiveness = 20;
  std::optional<unsigned> defrag_mode = 1;       // none: a kernel before 6.15
  uint64_t compact_cost_ns = 1'500'000'000ULL;   // compaction time one node compaction adds
  uint64_t fragd_compaction_ns = 0;              // cumulative, as BPF would count it
  uint64_t proactive_compaction_ns = 0;
  int stop_after = -1;                           // stop_requested() turns true after this many calls
  std::vector<std::string> calls;
  std::vector<uint64_t> deadlines;               // deadline() at each compact_node and grow_pool

  // Fails `op` with `err` `times` times (-1: until fail(op, 0)), after
  // letting `after` calls succeed.
  // ops: compact, read_proactiveness, write_proactiveness, read_defrag_mode, write_defrag_mode, read_pool,
  // write_pool, grow_pool, mem_available, spare_memory, free_blocks, node_score, drop_caches,
  // refresh_vm_stats.
  void fail(const std::string& op, int err, int times = -1, int after = 0) {
    if (err == 0) failures_.erase(op);
    else failures_[op] = {err, times, after};
  }

  // A node of `free_pages` whose score is `score`, and whose compaction can
  // bring the score down to `best` (exact when free_pages is a multiple of
  // 51200).
  void set_node(int node, uint64_t free_pages, unsigned score, unsigned best, unsigned step = 100) {
    Node& n = nodes[node];
    n.free_pages = free_pages;
    n.blocks9 = blocks_for_score(free_pages, score);
    n.max_blocks9 = std::max(n.blocks9, blocks_for_score(free_pages, best));
    n.step_blocks = step >= 100 ? ~0ULL : free_pages * step / (100 * kBlockPages);
  }
  static uint64_t blocks_for_score(uint64_t free_pages, unsigned score) {
    return free_pages * (100 - std::min(score, 100u)) / (100 * kBlockPages);
  }
  unsigned score_of(int node) const {
    auto it = nodes.find(node);
    if (it == nodes.end() || it->second.free_pages == 0) return 0;
    const Node& n = it->second;
    const uint64_t suitable = std::min(n.blocks9 * kBlockPages, n.free_pages);
    return static_cast<unsigned>((n.free_pages - suitable) * 100 / n.free_pages);
  }

  // The kernel's proactive compaction over `ticks` of 500 ms: a node whose
  // score is above the proactiveness thresholds gets one step of compaction
  // per tick, costing `cost_ns` each (mm/compaction.c's thresholds).
  void kcompactd(unsigned ticks, uint64_t cost_ns) {
    if (proactiveness == 0) return;
    const unsigned low = std::max(100u - proactiveness, 5u);
    const unsigned high = std::min(low + 10, 100u);
    for (unsigned i = 0; i < ticks; ++i)
      for (auto& [id, n] : nodes) {
        if (score_of(id) <= high || n.blocks9 >= n.max_blocks9) continue;
        grow_blocks(n);
        proactive_compaction_ns += cost_ns;
      }
  }

  // -- Actuator ----------------------------------------------------------
  Result<void> compact_node(int node) override { return compact(node, "compact " + std::to_string(node), {}); }
  // Stops once the node has `blocks` free order-9 blocks (another order: the whole node).
  Result<void> compact_node_until(int node, unsigned order, uint64_t blocks) override {
    return compact(node, "compact " + std::to_string(node) + " until " + std::to_string(blocks),
                   order == 9 ? std::optional<uint64_t>(blocks) : std::nullopt);
  }
  Result<unsigned> read_proactiveness() override {
    calls.push_back("read_proactiveness");
    if (auto e = failing("read_proactiveness", "read /proc/sys/vm/compaction_proactiveness")) return *e;
    return proactiveness;
  }
  Result<void> write_proactiveness(unsigned value) override {
    calls.push_back("write_proactiveness " + std::to_string(value));
    if (auto e = failing("write_proactiveness", "write /proc/sys/vm/compaction_proactiveness")) return *e;
    proactiveness = value;
    return {};
  }
  Result<unsigned> read_defrag_mode() override {
    calls.push_back("read_defrag_mode");
    if (!defrag_mode) return make_error("open /proc/sys/vm/defrag_mode: No such file or directory", ENOENT);
    if (auto e = failing("read_defrag_mode", "read /proc/sys/vm/defrag_mode")) return *e;
    return *defrag_mode;
  }
  Result<void> write_defrag_mode(unsigned value) override {
    calls.push_back("write_defrag_mode " + std::to_string(value));
    if (!defrag_mode) return make_error("open /proc/sys/vm/defrag_mode: No such file or directory", ENOENT);
    if (auto e = failing("write_defrag_mode", "write /proc/sys/vm/defrag_mode")) return *e;
    defrag_mode = value;
    return {};
  }
  Result<uint64_t> read_pool(int node, uint64_t size_kib) override {
    calls.push_back("read_pool " + std::to_string(node) + " " + std::to_string(size_kib));
    if (auto e = failing("read_pool", "read " + pool_path(node, size_kib))) return *e;
    if (node >= 0 && !nodes.count(node)) return sys_error("read " + pool_path(node, size_kib), ENOENT);
    return pool_total(node, size_kib);
  }
  Result<void> write_pool(int node, uint64_t size_kib, uint64_t count) override {
    calls.push_back("write_pool " + std::to_string(node) + " " + std::to_string(size_kib) + " " +
                    std::to_string(count));
    if (auto e = failing("write_pool", "write " + pool_path(node, size_kib))) return *e;
    if (node >= 0 && !nodes.count(node)) return sys_error("write " + pool_path(node, size_kib), ENOENT);
    uint64_t have = pool_total(node, size_kib);
    uint64_t yield = direct_yield;
    const uint64_t per_page = std::max<uint64_t>(1, size_kib / (kBlockPages * 4));
    // Grow: one page at a time, node by node (the global pool round-robins).
    bool progress = true;
    while (have < count && progress) {
      progress = false;
      for (auto& [id, n] : nodes) {
        if (have >= count) break;
        if (node >= 0 && id != node) continue;
        if (n.blocks9 < per_page && yield > 0 && n.max_blocks9 >= per_page) {
          n.blocks9 = std::min(n.max_blocks9, n.blocks9 + per_page);  // found by direct compaction
          --yield;
        }
        if (n.blocks9 < per_page) continue;
        n.blocks9 -= per_page;
        n.max_blocks9 -= per_page;
        n.free_pages -= per_page * kBlockPages;
        n.pool[size_kib]++;
        mem_available -= std::min(mem_available, size_kib);
        if (auto sp = node_spare.find(id); sp != node_spare.end()) sp->second -= std::min(sp->second, size_kib);
        ++have;
        progress = true;
      }
    }
    // Shrink: free what is not in use.
    for (auto& [id, n] : nodes) {
      if (have <= count) break;
      if (node >= 0 && id != node) continue;
      uint64_t& p = n.pool[size_kib];
      const uint64_t busy = n.in_use[size_kib];
      while (have > count && p > busy) {
        --p;
        --have;
        if (n.percpu < percpu_keep) {
          n.percpu += per_page;
        } else {
          n.blocks9 += per_page;
          n.max_blocks9 += per_page;
          n.free_pages += per_page * kBlockPages;
        }
        mem_available += size_kib;
        if (auto sp = node_spare.find(id); sp != node_spare.end()) sp->second += size_kib;
      }
    }
    return {};
  }
  // A pool write that may compact (in fragd's killable child in the daemon).
  Result<void> grow_pool(int node, uint64_t size_kib, uint64_t count) override {
    calls.push_back("grow_pool " + std::to_string(node) + " " + std::to_string(size_kib) + " " +
                    std::to_string(count));
    deadlines.push_back(deadline());
    if (auto e = failing("grow_pool", "write " + pool_path(node, size_kib))) return *e;
    return write_pool(node, size_kib, count);
  }
  // The same, a page at a time, asking give_way before each: it stops there, as the daemon's
  // writer is killed, with the pool at what it got.
  Result<void> grow_pool_giving_way(int node, uint64_t size_kib, uint64_t count,
                                    const std::function<bool()>& give_way) override {
    calls.push_back("grow_pool " + std::to_string(node) + " " + std::to_string(size_kib) + " " +
                    std::to_string(count) + " giving way");
    deadlines.push_back(deadline());
    if (auto e = failing("grow_pool", "write " + pool_path(node, size_kib))) return *e;
    for (uint64_t have = pool_total(node, size_kib); have < count; ++have) {
      if (give_way && give_way()) return {};
      if (auto w = write_pool(node, size_kib, have + 1); !w) return w;
      if (pool_total(node, size_kib) <= have) break;  // no page: the kernel could not make one
    }
    return {};
  }
  Result<uint64_t> mem_available_kib() override {
    calls.push_back("mem_available");
    if (auto e = failing("mem_available", "read /proc/meminfo")) return *e;
    return mem_available;
  }
  Result<SpareMemory> spare_memory(int node) override {
    calls.push_back("spare_memory " + std::to_string(node));
    if (auto e = failing("spare_memory", "read node meminfo")) return *e;
    if (auto sp = node_spare.find(node); node >= 0 && sp != node_spare.end())
      return SpareMemory{sp->second, kNodeSpareHow};
    return SpareMemory{mem_available, "MemAvailable"};
  }
  Result<uint64_t> free_blocks(int node, unsigned order) override {
    calls.push_back("free_blocks " + std::to_string(node) + " " + std::to_string(order));
    if (auto e = failing("free_blocks", "read /proc/buddyinfo")) return *e;
    uint64_t b = 0;
    for (const auto& [id, n] : nodes)
      if (node < 0 || id == node) b += n.blocks9;
    return order >= 9 ? b >> (order - 9) : b << (9 - order);
  }
  Result<unsigned> node_score(int node) override {
    calls.push_back("node_score " + std::to_string(node));
    if (auto e = failing("node_score", "read /proc/buddyinfo")) return *e;
    if (!nodes.count(node)) return make_error("node " + std::to_string(node) + " is not in /proc/buddyinfo", ENOENT);
    return score_of(node);
  }
  Result<void> drop_caches() override {
    calls.push_back("drop_caches");
    if (auto e = failing("drop_caches", "write /proc/sys/vm/drop_caches")) return *e;
    for (auto& [id, n] : nodes) {
      n.free_pages += n.cache_blocks * kBlockPages;
      n.max_blocks9 += n.cache_blocks;
      n.cache_blocks = 0;
    }
    return {};
  }
  // Each write brings back percpu_step of every node's blocks on a CPU's page list.
  Result<void> refresh_vm_stats() override {
    calls.push_back("refresh_vm_stats");
    if (auto e = failing("refresh_vm_stats", "write /proc/sys/vm/stat_refresh")) return *e;
    for (auto& [id, n] : nodes) {
      const uint64_t back = std::min(percpu_step, n.percpu);
      n.percpu -= back;
      n.blocks9 += back;
      n.max_blocks9 += back;
      n.free_pages += back * kBlockPages;
    }
    return {};
  }
  bool stop_requested() override {
    if (stop_after < 0) return false;
    if (stop_after == 0) return true;
    --stop_after;
    return false;
  }

  // -- what the daemon would observe ---------------------------------------
  std::vector<NodeObservation> observe_nodes() const {
    std::vector<NodeObservation> v;
    for (const auto& [id, n] : nodes) {
      NodeObservation o;
      o.node = id;
      o.score = score_of(id);
      o.free_pages = n.free_pages;
      o.free_blocks.assign(11, 0);
      o.free_blocks[9] = n.blocks9;
      o.free_blocks[0] = n.free_pages - std::min(n.free_pages, n.blocks9 * kBlockPages);
      v.push_back(std::move(o));
    }
    return v;
  }
  std::vector<PoolObservation> observe_pools() const {
    std::map<uint64_t, uint64_t> global;
    std::vector<PoolObservation> v;
    for (const auto& [id, n] : nodes)
      for (const auto& [size, count] : n.pool) {
        v.push_back({id, size, count});
        global[size] += count;
      }
    for (const auto& [size, count] : global) v.push_back({-1, size, count});
    return v;
  }
  uint64_t pool_total(int node, uint64_t size_kib) const {
    uint64_t t = 0;
    for (const auto& [id, n] : nodes)
      if (node < 0 || id == node) {
        auto it = n.pool.find(size_kib);
        if (it != n.pool.end()) t += it->second;
      }
    return t;
  }
  unsigned count_calls(const std::string& prefix) const {
    unsigned k = 0;
    for (const auto& c : calls)
      if (c.rfind(prefix, 0) == 0) ++k;
    return k;
  }

 private:
  struct Failure {
    int err;
    int times;
    int after;
  };
  std::map<std::string, Failure> failures_;

  std::optional<Error> failing(const std::string& op, const std::string& what) {
    auto it = failures_.find(op);
    if (it == failures_.end()) return std::nullopt;
    if (it->second.after > 0) {
      --it->second.after;
      return std::nullopt;
    }
    const int err = it->second.err;
    if (it->second.times > 0 && --it->second.times == 0) failures_.erase(it);
    return sys_error(what, err);
  }
  static std::string pool_path(int node, uint64_t size_kib) {
    const std::string dir = "hugepages-" + std::to_string(size_kib) + "kB/nr_hugepages";
    return node < 0 ? "/sys/kernel/mm/hugepages/" + dir
                    : "/sys/devices/system/node/node" + std::to_string(node) + "/hugepages/" + dir;
  }
  Result<void> compact(int node, std::string call, std::optional<uint64_t> stop_at) {
    calls.push_back(std::move(call));
    deadlines.push_back(deadline());
    if (auto e = failing("compact", "write /sys/devices/system/node/node" + std::to_string(node) + "/compact"))
      return *e;
    auto it = nodes.find(node);
    if (it == nodes.end())
      return sys_error("write /sys/devices/system/node/node" + std::to_string(node) + "/compact", ENOENT);
    Node& n = it->second;
    const uint64_t before = n.blocks9;
    grow_blocks(n);
    if (stop_at && n.blocks9 > std::max(before, *stop_at)) n.blocks9 = std::max(before, *stop_at);
    n.compactions++;
    fragd_compaction_ns += compact_cost_ns;
    return {};
  }
  static void grow_blocks(Node& n) {
    const uint64_t room = n.max_blocks9 > n.blocks9 ? n.max_blocks9 - n.blocks9 : 0;
    n.blocks9 += std::min(room, n.step_blocks);
  }
};

}  // namespace fragd::test
