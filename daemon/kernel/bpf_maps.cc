// SPDX-License-Identifier: Apache-2.0
#include "kernel/bpf_maps.h"

#include "base/text.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace fragd {
namespace {

// Sums a per-CPU value made only of __u64 fields into `out`.
template <class T>
Result<void> read_percpu(int fd, uint32_t key, int ncpus, T* out, const char* map) {
  static_assert(sizeof(T) % 8 == 0);
  constexpr size_t words = sizeof(T) / 8;
  std::vector<uint64_t> buf(words * ncpus);
  if (bpf_map_lookup_elem(fd, &key, buf.data()) != 0)
    return sys_error(std::string("read BPF map ") + map + " key " + std::to_string(key));
  std::vector<uint64_t> sum(words, 0);
  for (int c = 0; c < ncpus; c++)
    for (size_t i = 0; i < words; i++) sum[i] += buf[c * words + i];
  std::memcpy(static_cast<void*>(out), sum.data(), sizeof(T));
  return {};
}

LatencyHist to_hist(const fragd_hist& h) {
  LatencyHist l;
  l.buckets.assign(h.buckets, h.buckets + FRAGD_HIST_BUCKETS);
  l.count = h.count;
  l.sum_ns = h.sum_ns;
  return l;
}


// Reads every entry of hash map `fd` (at most `max` of them) into keys/values,
// by batches when the kernel has them (5.6+), else key by key.
template <class K, class V>
Result<void> read_hash(int fd, uint32_t max, std::vector<K>& keys, std::vector<V>& values, const char* map) {
  keys.assign(max, K{});
  values.assign(max, V{});
  uint32_t total = 0;
  uint64_t in_batch = 0, out_batch = 0;  // the kernel's token for a hash map is a __u32 bucket index
  bool first = true, batched = true;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  while (total < max) {
    uint32_t count = max - total;
    const int err = bpf_map_lookup_batch(fd, first ? nullptr : &in_batch, &out_batch, keys.data() + total,
                                         values.data() + total, &count, &opts);
    if (err < 0 && (-err == EINVAL || -err == ENOTSUP || -err == EOPNOTSUPP) && first) {
      batched = false;
      break;
    }
    total += std::min(count, max - total);
    if (err < 0) {
      if (-err == ENOENT) break;  // the end of the map
      if (-err == ENOSPC) break;  // the map grew while read and a bucket no longer fits: stop at max
      return make_error(std::string("batch lookup of BPF map ") + map + ": " + strerror(-err), -err);
    }
    in_batch = out_batch;
    first = false;
  }
  if (!batched) {
    total = 0;
    K key{}, next{};
    bool have = false;
    // A key deleted under us restarts the walk at the first key: bounded by max, deduplicated below.
    for (uint32_t i = 0; i < max; i++) {
      if (bpf_map_get_next_key(fd, have ? &key : nullptr, &next) != 0) break;
      key = next;
      have = true;
      if (bpf_map_lookup_elem(fd, &key, &values[total]) != 0) continue;  // deleted since
      keys[total++] = key;
    }
  }
  keys.resize(total);
  values.resize(total);
  return {};
}

// max_entries of map `fd`.
Result<uint32_t> map_max_entries(int fd, const char* map) {
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
    return sys_error(std::string("read the info of BPF map ") + map);
  return info.max_entries;
}

}  // namespace

BpfReader::BpfReader(const BpfMapFds& maps) : maps_(maps), ncpus_(libbpf_num_possible_cpus()) {}

Result<BpfSnapshot> BpfReader::read() const {
  if (ncpus_ <= 0) return make_error("cannot count possible CPUs (/sys/devices/system/cpu/possible)");
  BpfSnapshot s;
  if (auto r = read_percpu(maps_.alloc_stats, 0, ncpus_, &s.alloc, "alloc_stats"); !r) return r.error();
  if (auto r = read_percpu(maps_.compaction_stats, 0, ncpus_, &s.compaction, "compaction_stats"); !r)
    return r.error();
  if (auto r = read_percpu(maps_.fallback_stats, 0, ncpus_, &s.fallback, "fallback_stats"); !r)
    return r.error();
  fragd_hist h;
  for (uint32_t o = 0; o < FRAGD_NR_ORDERS; o++)
    for (uint32_t res = 0; res < FRAGD_NR_RESULTS; res++) {
      if (auto r = read_percpu(maps_.stall_hist, FRAGD_STALL_HIST_KEY(o, res), ncpus_, &h, "stall_hist"); !r)
        return r.error();
      s.stall[o][res] = to_hist(h);
    }
  for (uint32_t t = 0; t < FRAGD_NR_TRIGGERS; t++) {
    if (auto r = read_percpu(maps_.compaction_hist, t, ncpus_, &h, "compaction_hist"); !r)
      return r.error();
    s.compaction_hist[t] = to_hist(h);
  }
  if (maps_.cma_traced) {
    s.cma_traced = true;
    std::vector<cma_area_key> keys;
    std::vector<cma_area_stats> vals;
    if (auto r = read_hash(maps_.cma_areas, FRAGD_CMA_AREAS, keys, vals, "cma_areas"); !r) return r.error();
    for (size_t i = 0; i < keys.size(); i++) {
      CmaArea a;
      a.name.assign(keys[i].name, strnlen(keys[i].name, sizeof(keys[i].name)));
      for (unsigned r = 0; r < FRAGD_NR_RESULTS; r++) {
        a.hist[r] = to_hist(vals[i].hist[r]);
        a.pages[r] = vals[i].pages[r];
      }
      a.busy_retries = vals[i].busy_retries;
      a.unmatched = vals[i].unmatched;
      s.cma.push_back(std::move(a));
    }
    std::sort(s.cma.begin(), s.cma.end(), [](const CmaArea& x, const CmaArea& y) { return x.name < y.name; });
    const uint32_t zero = 0;
    if (bpf_map_lookup_elem(maps_.cma_misc, &zero, &s.cma_lost) != 0) return sys_error("read BPF map cma_misc");
  }
  return s;
}

Result<void> BpfReader::read_attribution(std::vector<SiteCount>& sites, std::vector<CgroupCount>& cgroups) const {
  std::vector<stall_site_key> skeys;
  std::vector<stall_attr> vals;
  if (auto r = read_hash(maps_.stall_sites, FRAGD_STALL_SITES, skeys, vals, "stall_sites"); !r)
    return r.error();
  sites.clear();
  for (size_t i = 0; i < skeys.size(); i++) sites.push_back({skeys[i], vals[i]});
  if (maps_.failure_sites >= 0) {
    if (auto r = read_hash(maps_.failure_sites, FRAGD_FAILURE_SITES, skeys, vals, "failure_sites"); !r)
      return r.error();
    for (size_t i = 0; i < skeys.size(); i++) sites.push_back({skeys[i], vals[i], true});
  }
  std::vector<uint64_t> ckeys;
  if (auto r = read_hash(maps_.stall_cgroups, FRAGD_STALL_CGROUPS, ckeys, vals, "stall_cgroups"); !r)
    return r.error();
  cgroups.clear();
  for (size_t i = 0; i < ckeys.size(); i++) cgroups.push_back({ckeys[i], vals[i]});
  return {};
}

Result<std::vector<uint64_t>> BpfReader::read_stack(int32_t id) const {
  std::vector<uint64_t> ips(FRAGD_STACK_DEPTH, 0);
  const uint32_t key = static_cast<uint32_t>(id);
  if (id < 0 || bpf_map_lookup_elem(maps_.stall_stacks, &key, ips.data()) != 0)
    return sys_error("read BPF map stall_stacks key " + std::to_string(id));
  while (!ips.empty() && ips.back() == 0) ips.pop_back();
  return ips;
}

void BpfReader::forget_cgroup(uint64_t cgroup_id) const {
  bpf_map_delete_elem(maps_.stall_cgroups, &cgroup_id);
}

Result<alloc_stats> BpfReader::read_alloc_stats() const {
  if (ncpus_ <= 0) return make_error("cannot count possible CPUs (/sys/devices/system/cpu/possible)");
  alloc_stats st{};
  if (auto r = read_percpu(maps_.alloc_stats, 0, ncpus_, &st, "alloc_stats"); !r) return r.error();
  return st;
}

Result<PollutionCounters> BpfReader::read_pollution_counters() const {
  if (!maps_.pollution_on)
    return make_error("the pollution ledger is off (see fragd's start-up warnings for why)", ENOENT);
  if (ncpus_ <= 0) return make_error("cannot count possible CPUs (/sys/devices/system/cpu/possible)");
  pollution_stats st{};
  if (auto r = read_percpu(maps_.pollution_stats, 0, ncpus_, &st, "pollution_stats"); !r) return r.error();
  return PollutionCounters{.events = st.events,
                           .untracked_full = st.untracked_full,
                           .untracked_range = st.untracked_range,
                           .added_pages = st.pages_added,
                           .added_blocks = st.blocks_added};
}

Result<PollutionSnapshot> BpfReader::read_pollution() const {
  auto c = read_pollution_counters();
  if (!c) return c.error();
  PollutionSnapshot snap;
  snap.pageblock_order = maps_.pageblock_order;
  snap.counters = *c;

  const int fd = maps_.polluted_blocks;
  auto max = map_max_entries(fd, "polluted_blocks");
  if (!max) return max.error();
  std::vector<uint32_t> keys;
  std::vector<pollution_block> recs;
  if (auto r = read_hash(fd, *max, keys, recs, "polluted_blocks"); !r) return r.error();

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

Result<void> BpfReader::release_polluted(uint64_t block) const {
  const uint32_t key = static_cast<uint32_t>(block);
  if (bpf_map_delete_elem(maps_.polluted_blocks, &key) != 0 && errno != ENOENT)
    return sys_error("delete block " + std::to_string(block) + " from BPF map polluted_blocks");
  return {};
}

Result<uint64_t> BpfReader::polluted_last_boot_ns(uint64_t block) const {
  const uint32_t key = static_cast<uint32_t>(block);
  pollution_block r{};
  if (bpf_map_lookup_elem(maps_.polluted_blocks, &key, &r) != 0)
    return sys_error("look up block " + std::to_string(block) + " in BPF map polluted_blocks");
  return r.last_ns;
}

const char* trigger_name(unsigned t) {
  static const char* n[] = {"direct", "kcompactd", "proactive", "fragd", "manual"};
  return t < FRAGD_NR_TRIGGERS ? n[t] : "unknown";
}
const char* cstatus_name(unsigned s) {
  static const char* n[] = {"success", "complete", "partial_skipped", "contended", "other"};
  return s < FRAGD_NR_CSTATUS ? n[s] : "unknown";
}
const char* migratetype_name(unsigned mt) {
  static const char* n[] = {"unmovable", "movable", "reclaimable", "highatomic", "cma", "isolate", "other"};
  return mt < FRAGD_NR_MT ? n[mt] : "unknown";
}
const char* outcome_name(unsigned o) {
  static const char* n[] = {"fast", "stalled", "failed"};
  return o < FRAGD_NR_OUTCOMES ? n[o] : "unknown";
}
const char* result_name(unsigned r) { return r == FRAGD_RESULT_SUCCESS ? "success" : "failure"; }
const char* phase_name(unsigned p) { return p == FRAGD_PHASE_COMPACTION ? "compaction" : "reclaim"; }

}  // namespace fragd
