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

  // The pollution ledger (bpf/fallback.bpf.c): every recorded block with its
  // who/when record (first_ns/last_ns converted to CLOCK_REALTIME) and the
  // pollution counters. Error when the ledger is off or a map cannot be read.
  Result<PollutionSnapshot> read_pollution() const;
  // The counters alone (a per-CPU array read): enough to tell whether the ledger moved.
  Result<PollutionCounters> read_pollution_counters() const;
  // Deletes a block's record (the scan found it clean); a missing one is no error.
  Result<void> release_polluted(uint64_t block) const;
  // The block's latest recorded fallback, CLOCK_BOOTTIME ns (error when it has no record).
  Result<uint64_t> polluted_last_boot_ns(uint64_t block) const;

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
