// SPDX-License-Identifier: Apache-2.0
#include "concerns/pollution/maps.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/text.h"
#include "kernel/bpf_maps.h"

namespace fragd {

Result<fallback_stats> read_fallback_stats(const PollutionMapFds& maps, int ncpus) {
  return read_percpu_value<fallback_stats>(maps.fallback_stats, ncpus, "fallback_stats");
}

Result<PollutionCounters> read_pollution_counters(const PollutionMapFds& maps, int ncpus) {
  if (!maps.pollution_on)
    return make_error("the pollution ledger is off (see fragd's start-up warnings for why)", ENOENT);
  auto st = read_percpu_value<pollution_stats>(maps.pollution_stats, ncpus, "pollution_stats");
  if (!st) return st.error();
  return PollutionCounters{.events = st->events,
                           .untracked_full = st->untracked_full,
                           .untracked_range = st->untracked_range,
                           .added_pages = st->pages_added,
                           .added_blocks = st->blocks_added};
}

Result<PollutionSnapshot> read_pollution(const PollutionMapFds& maps, int ncpus) {
  auto c = read_pollution_counters(maps, ncpus);
  if (!c) return c.error();
  PollutionSnapshot snap;
  snap.pageblock_order = maps.pageblock_order;
  snap.counters = *c;

  auto max = map_max_entries(maps.polluted_blocks, "polluted_blocks");
  if (!max) return max.error();
  std::vector<uint32_t> keys;
  std::vector<pollution_block> recs;
  if (auto r = read_hash(maps.polluted_blocks, *max, keys, recs, "polluted_blocks"); !r) return r.error();

  const uint64_t boot_to_real = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_BOOTTIME);
  snap.blocks.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    const pollution_block& r = recs[i];
    PollutedBlock pb;
    pb.block = keys[i];
    pb.pages = r.pages;
    pb.events = r.events;
    pb.first_ns = r.first_ns + boot_to_real;
    pb.last_ns = r.last_ns + boot_to_real;
    pb.last_boot_ns = r.last_ns;
    pb.pid = r.pid;
    pb.comm.assign(r.comm, strnlen(r.comm, sizeof(r.comm)));
    pb.cgroup_id = r.cgroup_id;
    pb.alloc_mt = r.alloc_mt;
    snap.blocks.push_back(std::move(pb));
  }
  return snap;
}

Result<void> release_polluted(const PollutionMapFds& maps, uint64_t block) {
  const uint32_t key = static_cast<uint32_t>(block);
  return map_delete(maps.polluted_blocks, &key, "polluted_blocks", "block " + std::to_string(block));
}

Result<uint64_t> polluted_last_boot_ns(const PollutionMapFds& maps, uint64_t block) {
  const uint32_t key = static_cast<uint32_t>(block);
  pollution_block r{};
  if (auto l = map_lookup(maps.polluted_blocks, &key, &r, "polluted_blocks", std::to_string(block)); !l)
    return l.error();
  return r.last_ns;
}

LedgerSize pollution_ledger_size(uint64_t max_pfn, unsigned pageblock_order, uint64_t cap) {
  LedgerSize s;
  if (max_pfn == 0) {
    s.entries = cap;
    return s;
  }
  s.blocks = ((max_pfn - 1) >> pageblock_order) + 1;
  s.capped = s.blocks > cap;
  s.entries = std::min(s.blocks, cap);
  return s;
}

const char* migratetype_name(unsigned mt) {
  static const char* n[] = {"unmovable", "movable", "reclaimable", "highatomic", "cma", "isolate", "other"};
  return mt < FRAGD_NR_MT ? n[mt] : "unknown";
}

}  // namespace fragd
