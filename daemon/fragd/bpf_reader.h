// Reads fragd's BPF maps into plain totals (per-CPU values summed).
#pragma once

#include <array>
#include <cstdint>

#include "alloc.h"
#include "compaction.h"
#include "core/histview.h"
#include "core/pollution.h"
#include "core/result.h"
#include "fallback.h"

namespace fragd {

class BpfPrograms;

struct BpfSnapshot {
  alloc_stats alloc{};
  std::array<std::array<LatencyHist, FRAGD_NR_RESULTS>, FRAGD_NR_ORDERS> stall;  // [order][result]
  compaction_stats compaction{};
  std::array<LatencyHist, FRAGD_NR_TRIGGERS> compaction_hist;                     // [trigger]
  fallback_stats fallback{};
};

class BpfReader {
 public:
  explicit BpfReader(const BpfPrograms& progs);
  Result<BpfSnapshot> read() const;

  // The polluted pageblocks (bpf/fallback.bpf.c) and the pollution counters.
  // Blocks come with their outstanding pages from the per-block counts; a
  // record whose count is 0 (its last page going right now) is left out; at
  // most the record map's max_entries blocks, read by batch lookup, or key by
  // key on kernels without batch operations. first_ns/last_ns are converted to
  // CLOCK_REALTIME. Error when pollution tracking is off
  // (BpfPrograms::pollution_enabled() false) or a map cannot be read.
  // Without `records`, blocks carry only their number and pages, from the
  // mmapped per-block counts (what the metrics need each tick); the who/when
  // records (a hash of up to 65536 entries) are read only with `records`.
  Result<PollutionSnapshot> read_pollution(bool records) const;

 private:
  const BpfPrograms& progs_;
  int ncpus_;
};

const char* trigger_name(unsigned t);
const char* cstatus_name(unsigned s);
const char* migratetype_name(unsigned mt);
const char* outcome_name(unsigned o);
const char* result_name(unsigned r);
const char* phase_name(unsigned p);

}  // namespace fragd
