#include "fragd/bpf_reader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstring>
#include <vector>

#include "fragd/bpf_loader.h"

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

}  // namespace

BpfReader::BpfReader(const BpfPrograms& progs) : progs_(progs), ncpus_(libbpf_num_possible_cpus()) {}

Result<BpfSnapshot> BpfReader::read() const {
  if (ncpus_ <= 0) return make_error("cannot count possible CPUs (/sys/devices/system/cpu/possible)");
  BpfSnapshot s;
  if (auto r = read_percpu(progs_.alloc_stats_fd(), 0, ncpus_, &s.alloc, "alloc_stats"); !r) return r.error();
  if (auto r = read_percpu(progs_.compaction_stats_fd(), 0, ncpus_, &s.compaction, "compaction_stats"); !r)
    return r.error();
  if (auto r = read_percpu(progs_.fallback_stats_fd(), 0, ncpus_, &s.fallback, "fallback_stats"); !r)
    return r.error();
  fragd_hist h;
  for (uint32_t o = 0; o < FRAGD_NR_ORDERS; o++)
    for (uint32_t res = 0; res < FRAGD_NR_RESULTS; res++) {
      if (auto r = read_percpu(progs_.stall_hist_fd(), FRAGD_STALL_HIST_KEY(o, res), ncpus_, &h, "stall_hist"); !r)
        return r.error();
      s.stall[o][res] = to_hist(h);
    }
  for (uint32_t t = 0; t < FRAGD_NR_TRIGGERS; t++) {
    if (auto r = read_percpu(progs_.compaction_hist_fd(), t, ncpus_, &h, "compaction_hist"); !r)
      return r.error();
    s.compaction_hist[t] = to_hist(h);
  }
  return s;
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
