// SPDX-License-Identifier: Apache-2.0
#include "act/pool.h"

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

PoolOutcome resize_pool(Actuator& a, const PoolRequest& r) {
  PoolOutcome out;
  const std::string name = pool_label(r);
  auto finish = [&out](const char* result, std::string detail) {
    out.result = result;
    out.detail = std::move(detail);
    return out;
  };
  auto fail = [&](const Error& e) { return finish("error", e.message); };
  auto exiting = [&]() {
    return finish("abandoned", "fragd is exiting: " + name + " left at " + u(out.after) + " of target " + u(r.target));
  };
  auto cut = [&](const Error& e) {
    return finish("cut", e.message + ": " + name + " left at " + u(out.after) + " of target " + u(r.target));
  };

  if (a.stop_requested()) return exiting();
  auto first = a.read_pool(r.node, r.size_kib);
  if (!first) return fail(first.error());
  uint64_t current = *first;
  out.before = out.after = current;
  if (current == r.target) return finish("ok", name + " already at its target " + u(r.target));

  if (current > r.target) {
    const uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    auto w = a.write_pool(r.node, r.size_kib, r.target);
    out.attempts = 1;
    if (!w) return fail(w.error());
    auto back = a.read_pool(r.node, r.size_kib);
    if (!back) return fail(back.error());
    out.steps.push_back({"shrink", r.node, *back, now_ns(CLOCK_MONOTONIC) - t0});
    out.after = *back;
    if (*back <= r.target) return finish("ok", name + " shrunk from " + u(current) + " to " + u(*back));
    return finish("short", name + " shrunk only to " + u(*back) + " of target " + u(r.target) +
                               ": pages in use stay in the pool until their users free them");
  }

  auto mono = [] { return now_ns(CLOCK_MONOTONIC); };
  unsigned misses = 0;
  bool compacted = false;  // since the last progress
  while (out.attempts < kMaxAttempts) {
    if (a.stop_requested()) return exiting();
    auto room = guard_room(a, r.node, r.size_kib, r.guard_kib);
    if (!room) return fail(room.error());
    if (room->pages == 0)
      return finish("guard", name + " stopped at " + u(current) + " of target " + u(r.target) + ": " + room->why +
                                 " leaves no room for another " + u(r.size_kib) + " kB page above the guard of " +
                                 u(r.guard_kib) + " kB");
    // Where the guard bounds the write, it takes three quarters of the room and the room is read
    // again: what the write reclaimed, and what the node's own tasks took meanwhile, count.
    const uint64_t reach = std::min(room->pages, r.target - current);  // what the pool may still take
    const uint64_t step = reach < r.target - current && room->pages >= kWholeRoomPages ? reach - reach / 4 : reach;
    const uint64_t goal = current + step;

    const uint64_t t0 = mono();
    auto w = a.grow_pool(r.node, r.size_kib, goal);
    out.attempts++;
    if (!w && w.error().err == ECANCELED) return exiting();  // the write's process was killed
    if (!w && w.error().err == ETIMEDOUT) {  // killed at the deadline: what it added stays
      if (auto back = a.read_pool(r.node, r.size_kib)) out.after = *back;
      out.steps.push_back({"grow", r.node, out.after, mono() - t0});
      return cut(w.error());
    }
    if (!w) return fail(w.error());
    auto back = a.read_pool(r.node, r.size_kib);
    if (!back) return fail(back.error());
    out.steps.push_back({"grow", r.node, *back, mono() - t0});
    out.after = *back;
    if (*back >= r.target) return finish("ok", name + " grown from " + u(out.before) + " to " + u(*back));
    const bool progress = *back > current;
    current = *back;
    if (progress) {
      misses = 0;
      compacted = false;
      continue;
    }
    ++misses;
    if (!compacted && !r.compact_nodes.empty()) {
      // Compact only what the pool lacks: node by node, each until it has that many more free
      // blocks of the page's order than now, and no further node once they exist.
      const unsigned order = order_of(r.size_kib, r.page_kib);
      uint64_t lacking = reach;  // the target, or less under the guard (not only this write's step)
      for (int node : r.compact_nodes) {
        if (lacking == 0) break;
        if (a.stop_requested()) return exiting();
        auto have = a.free_blocks(node, order);
        if (!have) return fail(have.error());
        const uint64_t c0 = mono();
        auto c = a.compact_node_until(node, order, *have + lacking);
        if (!c && c.error().err == ECANCELED) return exiting();  // the compaction's process was killed
        if (!c && c.error().err == ETIMEDOUT) {
          out.compactions++;
          out.steps.push_back({"compact", node, 0, mono() - c0});
          return cut(c.error());
        }
        if (!c) return fail(c.error());
        out.compactions++;
        out.steps.push_back({"compact", node, 0, mono() - c0});
        auto now_free = a.free_blocks(node, order);
        if (!now_free) return fail(now_free.error());
        lacking -= std::min(lacking, *now_free > *have ? *now_free - *have : 0);
      }
      compacted = true;
      continue;
    }
    if (r.drop_caches && !out.dropped_caches) {
      if (a.stop_requested()) return exiting();
      const uint64_t d0 = mono();
      auto d = a.drop_caches();
      if (!d) return fail(d.error());
      out.dropped_caches = true;
      out.steps.push_back({"drop_caches", -1, 0, mono() - d0});
      compacted = false;  // the dropped cache's pages are compaction's to use now
      continue;
    }
    if (misses >= kMaxMisses)
      return finish("short", name + " reached " + u(current) + " of target " + u(r.target) + ": " +
                                 u(kMaxMisses) + " writes in a row added no page (memory too fragmented or in use)");
  }
  return finish("short", name + " reached " + u(current) + " of target " + u(r.target) + " after " +
                             u(kMaxAttempts) + " writes, the most one resize makes");
}

}  // namespace fragd
