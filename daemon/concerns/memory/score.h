// SPDX-License-Identifier: Apache-2.0
// Fragmentation score math, computed from procfs snapshots the same way the
// kernel computes it (integer arithmetic included), so that fragd reports
// the very number kcompactd acts on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel/page_size.h"
#include "kernel/procfs.h"

namespace fragd {

// The order the kernel's proactive compaction scores against:
// COMPACTION_HPAGE_ORDER in mm/compaction.c, i.e. HPAGE_PMD_ORDER when THP
// is built in (PMD_SHIFT - PAGE_SHIFT otherwise, the same): a page table of
// page_kib holds page_kib * 1024 / 8 entries, so 9 with 4 KiB pages (2 MiB),
// 11 with 16 KiB (32 MiB), 13 with 64 KiB (512 MiB).
inline unsigned compaction_hpage_order(uint64_t page_kib) { return order_of(page_kib * 1024 / 8, 1); }
// The same for this kernel's pages (kernel/page_size.h).
inline unsigned compaction_hpage_order() { return compaction_hpage_order(kernel_page_kib()); }

// Free pages of a zone as the kernel's fill_contig_page_info (mm/vmstat.c)
// counts them: sum over orders of free_blocks[o] << o.
uint64_t buddy_free_pages(const ZoneFree& z);

// Free pages in blocks of order >= `order` (fill_contig_page_info's
// free_blocks_suitable << order).
uint64_t buddy_suitable_pages(const ZoneFree& z, unsigned order);

// Free blocks able to hold one block of `order`: sum over o >= order of
// free_blocks[o] << (o - order), saturating. For an order above the largest
// one listed, the largest blocks >> the difference (gigantic pages: whole runs
// of them at best). 0 for an empty list.
uint64_t blocks_of_order(const std::vector<uint64_t>& free_blocks, unsigned order);

// extfrag_for_order() in mm/vmstat.c, which fragmentation_score_zone() in
// mm/compaction.c calls with COMPACTION_HPAGE_ORDER:
//   (free_pages - suitable_pages) * 100 / free_pages, truncated; 0 when the
//   zone has no free pages. Range 0..100.
unsigned zone_score(const ZoneFree& z, unsigned order = compaction_hpage_order());

struct NodeScore {
  int node = 0;
  unsigned score = 0;          // fragmentation_score_node()
  uint64_t present_pages = 0;  // node_present_pages: sum of its zones' present_pages
};

// fragmentation_score_node() in mm/compaction.c: sum over the node's
// populated zones of fragmentation_score_zone_weighted(), which is
//   zone->present_pages * fragmentation_score_zone(zone)
//     / (zone->zone_pgdat->node_present_pages + 1)      (truncated per zone)
// One entry per node present in `zones`, ordered by node.
std::vector<NodeScore> node_scores(const std::vector<ZoneFree>& zones,
                                   unsigned order = compaction_hpage_order());

// unusable_free_index() in mm/vmstat.c (debugfs extfrag/unusable_index), per
// order o in [0, free_blocks.size()), in thousandths exactly as the kernel
// computes it: (free_pages - suitable_pages(o)) * 1000 / free_pages,
// truncated; 1000 when the zone has no free pages at all (the kernel reads
// "no free memory" as "all free memory unusable").
std::vector<unsigned> unusable_index_permille(const ZoneFree& z);

// The same as fractions 0.0..1.0 (permille / 1000), what debugfs prints as
// "0.123" and what the status answer carries.
std::vector<double> unusable_index(const ZoneFree& z);

// Whether memory changed enough since `then` for a new pageblock scan to see
// something new: in any zone, the free pages in blocks of at least
// `pageblock_order`, or all free pages, moved by `fraction` of the zone's
// present pages or more, or pageblocks holding that fraction of its pages
// changed migratetype, or the zones themselves differ. Small order-0 churn and
// a few blocks claimed by another migratetype on an idle host are not a change:
// a scan costs about 0.7 s of CPU per 24 GiB, and pageblocks.max_age bounds how
// stale the last one gets.
bool memory_changed(const MemSnapshot& then, const MemSnapshot& now, unsigned pageblock_order,
                    double fraction = 0.01);
// The same, saying what changed ("node 0 DMA32: free pages in blocks of order >= 9 moved by
// 16384, 1% of the zone is 7823"), or none.
std::optional<std::string> memory_change(const MemSnapshot& then, const MemSnapshot& now, unsigned pageblock_order,
                                         double fraction = 0.01);

// Whether memory changed lastingly since the last change reported: memory_change() at two ticks
// in a row. A move seen at one tick only starts no scan: free pages a balloon's free page
// reporting holds off the free lists for a moment (up to 32 blocks of 2 MiB at a time, more than
// 1% of a 3 GiB zone), a burst freed and taken again. The first snapshot is a change.
class LastingChange {
 public:
  // What changed, `now` then the new reference; or none.
  std::optional<std::string> see(const MemSnapshot& now, unsigned pageblock_order);

 private:
  std::optional<MemSnapshot> ref_;
  bool seen_once_ = false;  // the last tick saw a change too
};

}  // namespace fragd
