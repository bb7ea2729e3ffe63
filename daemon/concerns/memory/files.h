// SPDX-License-Identifier: Apache-2.0
// The /proc and sysfs files of a tick's memory snapshot (kernel/procfs.h read_snapshot), each
// read at the period kSourceSpecs gives it: at a tick (buddyinfo and zoneinfo at every one:
// without both there is no snapshot; pagetypeinfo every pagetypeinfo_interval, as it holds the
// zone lock with interrupts off; a free page reporting device every 10 s), or when a scrape
// asks for the families (vmstat; the per-size THP statistics, some 150 files, at most every
// 10 s), their values carried from snapshot to snapshot in between. A source that fails is
// counted, logged once per cause (and once when it reads well again) and read again after one
// tick, then at doubling intervals up to 60 s; its part of the snapshot is absent meanwhile.
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

  // Before a scrape's families are built from `mem`: the sources read for a scrape
  // (SourcePeriod::kScrape) that are due, read again into it.
  void scrape(uint64_t now, MemSnapshot& mem);

  // The same back-off for other sources read each tick (the daemon's node list, "nodes").
  SourceFaults& faults() { return faults_; }

 private:
  void note(const SourceRead& r, uint64_t now);
  bool due(const SourceSpec& s, uint64_t now) const;  // its interval passed since its last read

  std::string proc_root_, sys_root_;
  uint64_t pagetypeinfo_ns_;
  SourceFaults faults_;
  std::map<std::string, uint64_t>& errors_;
  std::map<std::string, uint64_t> last_read_ns_;  // by source: when it was last read
};

}  // namespace fragd
