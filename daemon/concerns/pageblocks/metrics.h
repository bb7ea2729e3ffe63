// SPDX-License-Identifier: Apache-2.0
// The pageblock scan (concerns/pageblocks/pageblock.h): blocks by class, huge
// pages obtainable and lost to pollution, compaction's cost. Families
// fragd_scans_total, fragd_pageblock_class, fragd_hugepages_obtainable,
// fragd_hugepages_polluted, fragd_compaction_cost_pages, fragd_scan_*.
#pragma once

#include <cstdint>
#include <memory>

#include "base/family.h"
#include "concerns/pageblocks/pageblock.h"
#include "concerns/pageblocks/scanner.h"

namespace fragd {

// The scan for the metrics; absent when the scan is off (kpageflags unreadable, or pageblocks.scan: false).
struct ScanStats {
  std::shared_ptr<const ScanResult> scan;  // latest; null before the first scan ends
  uint64_t ok = 0, failed = 0;
  uint64_t skipped = 0;  // interval checks that found memory unchanged and did not scan
  ScanCost cost;
  uint64_t now_boot_ns = 0;  // CLOCK_BOOTTIME at the tick (the map's age)
};

void scan_metrics(const ScanStats& scan, Families& out);

}  // namespace fragd
