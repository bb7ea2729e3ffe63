// SPDX-License-Identifier: Apache-2.0
// Where memory is: zone spans and reserves (/proc/zoneinfo) and the RAM ranges
// of /proc/iomem or /sys/firmware/memmap, in page frame numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kernel/page_size.h"

namespace fragd {

// A physical range [start_pfn, end_pfn).
struct PfnRange {
  uint64_t start_pfn = 0, end_pfn = 0;
};

// A zone's span as /proc/zoneinfo gives it ("start_pfn", "spanned") and the
// free pages a pool write must leave in it: its "min" watermark plus its
// largest "protection" (lowmem_reserve) entry, which is what an allocation
// that may use any zone (GFP_HIGHUSER_MOVABLE, as hugetlb's) must respect.
struct ZoneSpan {
  int node = 0;
  std::string zone;
  uint64_t start_pfn = 0, end_pfn = 0;  // end = start_pfn + spanned
  uint64_t reserve_pages = 0;
  // Its "low" and "high" watermarks and largest "protection" entry: what the kernel's
  // MemAvailable takes off a zone's free pages (high + protection) and its reclaimable ones (low).
  uint64_t low_pages = 0, high_pages = 0, protection_pages = 0;
};

// Parses the "start_pfn", "spanned", "min", "low", "high" and "protection" lines of
// /proc/zoneinfo for every zone with spanned > 0. Error names the path when
// no zone has them.
Result<std::vector<ZoneSpan>> parse_zone_spans(std::string_view text, std::string_view path);

// The top-level "System RAM" ranges of /proc/iomem, in pfns (pages of `page_bytes`, the
// kernel's: kernel/page_size.h). Error when there is none (unprivileged readers see all-zero
// addresses).
Result<std::vector<PfnRange>> parse_iomem_ram(std::string_view text, std::string_view path,
                                              uint64_t page_bytes = kernel_page_bytes());

// The "System RAM" ranges of the firmware's memory map, /sys/firmware/memmap/N/{start,end,type}
// under `sys_root`, in pfns. The same ranges as /proc/iomem's top level, but readable by uid 0
// without CAP_SYS_ADMIN (root's 0400 files): where /proc/iomem shows zeros, fragd reads these.
// Error when the directory is missing (no CONFIG_FIRMWARE_MEMMAP) or holds no RAM range.
Result<std::vector<PfnRange>> read_firmware_memmap_ram(const std::string& sys_root,
                                                       uint64_t page_bytes = kernel_page_bytes());

}  // namespace fragd
