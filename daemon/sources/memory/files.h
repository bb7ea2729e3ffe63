// SPDX-License-Identifier: Apache-2.0
// The /proc and sysfs files of a tick's memory snapshot (kernel/procfs.h read_snapshot), read
// as often as each may be: buddyinfo and zoneinfo every tick (without both there is no
// snapshot), pagetypeinfo every pagetypeinfo_interval (it holds the zone lock with interrupts
// off) and the per-size THP statistics every 10 s (some 150 files), as the free page reporting
// device, their values carried over in between. A source that fails is counted, logged once
// per cause (and once when it reads well again) and read again after one tick, then at
// doubling intervals up to 60 s; its part of the snapshot is absent meanwhile.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kernel/procfs.h"
#include "kernel/source_faults.h"

namespace fragd {

class MemoryFiles {
 public:
  static constexpr uint64_t kMthpIntervalNs = 10'000'000'000ULL;
  static constexpr uint64_t kMaxRetryNs = 60'000'000'000ULL;

  // `errors` counts failed reads by source; it outlives this.
  MemoryFiles(std::string proc_root, std::string sys_root, uint64_t tick_ns, uint64_t pagetypeinfo_ns,
              std::map<std::string, uint64_t>& errors)
      : proc_root_(std::move(proc_root)),
        sys_root_(std::move(sys_root)),
        pagetypeinfo_ns_(pagetypeinfo_ns),
        faults_(tick_ns, kMaxRetryNs),
        errors_(errors) {}

  // A tick at `now`: `mem` becomes the new snapshot, stays as it is while buddyinfo or zoneinfo
  // waits for its retry, or is reset when either fails. True when it was read anew.
  bool tick(uint64_t now, std::optional<MemSnapshot>& mem);

  // The same back-off for other sources read each tick (the daemon's node list, "nodes").
  SourceFaults& faults() { return faults_; }

 private:
  void note(const SourceRead& r, uint64_t now);

  std::string proc_root_, sys_root_;
  uint64_t pagetypeinfo_ns_;
  SourceFaults faults_;
  std::map<std::string, uint64_t>& errors_;
  uint64_t last_pti_ns_ = 0, last_mthp_ns_ = 0, last_reporting_ns_ = 0;
};

}  // namespace fragd
