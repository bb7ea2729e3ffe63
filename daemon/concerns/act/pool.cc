// SPDX-License-Identifier: Apache-2.0
#include "concerns/act/pool.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <time.h>

#include "base/text.h"

namespace fragd {

namespace {

// Pool writes in one resize, at most: with progress on every write a pool
// gets there in a few; this bounds a kernel that trickles pages.
constexpr unsigned kMaxAttempts = 16;
// Writes in a row without progress that end a grow.
constexpr unsigned kMaxMisses = 2;
// Below this many pages of room above the guard, a write takes all of it.
constexpr uint64_t kWholeRoomPages = 4;

std::string pool_label(const PoolRequest& r) {
  char buf[96];
  if (r.node < 0)
    std::snprintf(buf, sizeof buf, "global %llu kB pool", static_cast<unsigned long long>(r.size_kib));
  else
    std::snprintf(buf, sizeof buf, "node %d %llu kB pool", r.node, static_cast<unsigned long long>(r.size_kib));
  return buf;
}

std::string u(uint64_t v) { return std::to_string(v); }

}  // namespace

// vm.stat_refresh writes one drain makes at the most.
constexpr unsigned kMaxDrainWrites = 64;

PageListDrain drain_page_lists(Actuator& a, int node, unsigned order, uint64_t want, std::vector<ActionStep>& steps) {
  PageListDrain d;
  const uint64_t t0 = now_ns(CLOCK_MONOTONIC);
  auto before = a.free_blocks(node, order);
  if (!before) {
    d.error = before.error().message;
    return d;
  }
  uint64_t have = *before;
  for (unsigned idle = 0; have < want && idle < 3 && d.writes < kMaxDrainWrites && !a.stop_requested();) {
    auto w = a.refresh_vm_stats();
    auto now = w ? a.free_blocks(node, order) : Result<uint64_t>(w.error());
    if (!now) {
      d.error = now.error().message;
      break;
    }
    ++d.writes;
    idle = *now > have ? 0 : idle + 1;
    have = *now;
  }
  d.came_back = have > *before ? have - *before : 0;
  if (d.writes > 0 || !d.error.empty()) steps.push_back({"drain", node, 0, now_ns(CLOCK_MONOTONIC) - t0});
  return d;
}

std::string PageListDrain::text() const {
  if (!error.empty()) return "; the per-CPU page lists were not drained: " + error;
  if (writes == 0) return {};
  return "; " + u(came_back) + " freed blocks came back from a CPU's page list after " + std::to_string(writes) +
         (writes == 1 ? " write" : " writes") + " of vm.stat_refresh";
}

Result<GuardRoom> guard_room(Actuator& a, int node, uint64_t size_kib, uint64_t guard_kib) {
  auto pages = [&](uint64_t kib) { return size_kib == 0 || kib <= guard_kib ? 0 : (kib - guard_kib) / size_kib; };
  auto host = a.mem_available_kib();
  if (!host) return host.error();
  GuardRoom room{pages(*host), "MemAvailable " + u(*host) + " kB"};
  if (node < 0) return room;
  auto spare = a.spare_memory(node);
  if (!spare) return spare.error();
  if (pages(spare->kib) < room.pages)
    room = {pages(spare->kib), "node " + std::to_string(node) + " can spare " + u(spare->kib) + " kB (" + spare->how + ")"};
  return room;
}

namespace {

// One resize of one pool: its outcome built as it goes.
class Resize {
 public:
  Resize(Actuator& a, const PoolRequest& r) : a_(a), r_(r), name_(pool_label(r)) {}
  PoolOutcome run();

 private:
  PoolOutcome finish(const char* result, std::string detail) {
    out_.result = result;
    out_.detail = std::move(detail);
    return out_;
  }
  PoolOutcome fail(const Error& e) { return finish("error", e.message); }
  PoolOutcome exiting() {
    return finish("abandoned", "fragd is exiting: " + name_ + " left at " + u(out_.after) + " of target " + u(r_.target));
  }
  PoolOutcome cut(const Error& e) {
    return finish("cut", e.message + ": " + name_ + " left at " + u(out_.after) + " of target " + u(r_.target));
  }
  PoolOutcome shrink(uint64_t current);
  // Compacts only what the pool lacks: node by node, each until it has `lacking` more free
  // blocks of the page's order than now, and no further node once they exist. An outcome when
  // the resize ends there.
  std::optional<PoolOutcome> compact_lacking(uint64_t lacking);

  Actuator& a_;
  const PoolRequest& r_;
  const std::string name_;
  PoolOutcome out_;
};

uint64_t mono() { return now_ns(CLOCK_MONOTONIC); }

PoolOutcome Resize::shrink(uint64_t current) {
  const unsigned order = order_of(r_.size_kib, r_.page_kib);
  const uint64_t t0 = mono();
  auto free0 = a_.free_blocks(r_.node, order);
  auto w = a_.write_pool(r_.node, r_.size_kib, r_.target);
  out_.attempts = 1;
  if (!w) return fail(w.error());
  auto back = a_.read_pool(r_.node, r_.size_kib);
  if (!back) return fail(back.error());
  out_.steps.push_back({"shrink", r_.node, *back, mono() - t0});
  out_.after = *back;
  // Each freed page is a free block of its order, unless a CPU's page list kept it: the next
  // allocation of that order on another CPU would stall for it.
  std::string drained;
  if (*back < current && !free0) drained = PageListDrain{0, 0, free0.error().message}.text();
  else if (*back < current) drained = drain_page_lists(a_, r_.node, order, *free0 + (current - *back), out_.steps).text();
  if (*back <= r_.target) return finish("ok", name_ + " shrunk from " + u(current) + " to " + u(*back) + drained);
  return finish("short", name_ + " shrunk only to " + u(*back) + " of target " + u(r_.target) +
                             ": pages in use stay in the pool until their users free them" + drained);
}

std::optional<PoolOutcome> Resize::compact_lacking(uint64_t lacking) {
  const unsigned order = order_of(r_.size_kib, r_.page_kib);
  for (int node : r_.compact_nodes) {
    if (lacking == 0) break;
    if (a_.stop_requested()) return exiting();
    auto have = a_.free_blocks(node, order);
    if (!have) return fail(have.error());
    const uint64_t c0 = mono();
    auto c = a_.compact_node_until(node, order, *have + lacking);
    if (!c && c.error().err == ECANCELED) return exiting();  // the compaction's process was killed
    if (!c && c.error().err != ETIMEDOUT) return fail(c.error());
    out_.compactions++;
    out_.steps.push_back({"compact", node, 0, mono() - c0});
    if (!c) return cut(c.error());  // killed at the deadline
    auto now_free = a_.free_blocks(node, order);
    if (!now_free) return fail(now_free.error());
    lacking -= std::min(lacking, *now_free > *have ? *now_free - *have : 0);
  }
  return std::nullopt;
}

PoolOutcome Resize::run() {
  if (a_.stop_requested()) return exiting();
  auto first = a_.read_pool(r_.node, r_.size_kib);
  if (!first) return fail(first.error());
  uint64_t current = *first;
  out_.before = out_.after = current;
  if (current == r_.target) return finish("ok", name_ + " already at its target " + u(r_.target));
  if (current > r_.target) return shrink(current);

  unsigned misses = 0;
  bool compacted = false;  // since the last progress
  while (out_.attempts < kMaxAttempts) {
    if (a_.stop_requested()) return exiting();
    auto room = guard_room(a_, r_.node, r_.size_kib, r_.guard_kib);
    if (!room) return fail(room.error());
    if (room->pages == 0)
      return finish("guard", name_ + " stopped at " + u(current) + " of target " + u(r_.target) + ": " + room->why +
                                 " leaves no room for another " + u(r_.size_kib) + " kB page above the guard of " +
                                 u(r_.guard_kib) + " kB");
    // Where the guard bounds the write, it takes three quarters of the room and the room is read
    // again: what the write reclaimed, and what the node's own tasks took meanwhile, count.
    const uint64_t reach = std::min(room->pages, r_.target - current);  // what the pool may still take
    const uint64_t step = reach < r_.target - current && room->pages >= kWholeRoomPages ? reach - reach / 4 : reach;

    const uint64_t t0 = mono();
    auto w = a_.grow_pool(r_.node, r_.size_kib, current + step);
    out_.attempts++;
    if (!w && w.error().err == ECANCELED) return exiting();  // the write's process was killed
    if (!w && w.error().err == ETIMEDOUT) {  // killed at the deadline: what it added stays
      if (auto back = a_.read_pool(r_.node, r_.size_kib)) out_.after = *back;
      out_.steps.push_back({"grow", r_.node, out_.after, mono() - t0});
      return cut(w.error());
    }
    if (!w) return fail(w.error());
    auto back = a_.read_pool(r_.node, r_.size_kib);
    if (!back) return fail(back.error());
    out_.steps.push_back({"grow", r_.node, *back, mono() - t0});
    out_.after = *back;
    if (*back >= r_.target) return finish("ok", name_ + " grown from " + u(out_.before) + " to " + u(*back));
    const bool progress = *back > current;
    current = *back;
    if (progress) {
      misses = 0;
      compacted = false;
      continue;
    }
    ++misses;
    if (!compacted && !r_.compact_nodes.empty()) {
      // The target, or less under the guard (not only this write's step).
      if (auto end = compact_lacking(reach)) return *end;
      compacted = true;
      continue;
    }
    if (r_.drop_caches && !out_.dropped_caches) {
      if (a_.stop_requested()) return exiting();
      const uint64_t d0 = mono();
      auto d = a_.drop_caches();
      if (!d) return fail(d.error());
      out_.dropped_caches = true;
      out_.steps.push_back({"drop_caches", -1, 0, mono() - d0});
      compacted = false;  // the dropped cache's pages are compaction's to use now
      continue;
    }
    if (misses >= kMaxMisses)
      return finish("short", name_ + " reached " + u(current) + " of target " + u(r_.target) + ": " + u(kMaxMisses) +
                                 " writes in a row added no page (memory too fragmented or in use)");
  }
  return finish("short", name_ + " reached " + u(current) + " of target " + u(r_.target) + " after " +
                             u(kMaxAttempts) + " writes, the most one resize makes");
}

}  // namespace

PoolOutcome resize_pool(Actuator& a, const PoolRequest& r) { return Resize(a, r).run(); }

}  // namespace fragd
