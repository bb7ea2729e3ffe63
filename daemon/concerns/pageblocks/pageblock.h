// SPDX-License-Identifier: Apache-2.0
// Pageblock scanner: classifies every pageblock of every zone from
// /proc/kpageflags (one 64-bit flag word per page frame) and derives how many
// huge pages are free now, how many compaction could make, how many are lost
// to pollution, and what compaction would have to migrate to make them.
//
// Page kinds, from the flags of include/uapi/linux/kernel-page-flags.h:
//   free      KPF_BUDDY (the kernel marks every page of a free buddy block)
//   huge      KPF_HUGE (hugetlb), or KPF_THP in a folio covering the whole block
//   movable   KPF_LRU, or a user page between LRU lists (KPF_ANON, KPF_MMAP,
//             KPF_SWAPBACKED, KPF_KSM, KPF_SWAPCACHE), or a THP smaller than a block
//   unmovable KPF_SLAB, KPF_PGTABLE, KPF_RESERVED (bit 32), or a compound page
//             none of the above: typed kernel memory that compaction cannot move
//   untyped   no flag at all: a kernel allocation without a page type
//             (vmalloc, stacks, drivers) or a free page on a per-CPU list;
//             kpageflags cannot tell the two apart
//   hole      outside every "System RAM" range of /proc/iomem, or KPF_NOPAGE /
//             KPF_OFFLINE
// A compound tail page takes the kind of its head (also across a block or a
// read boundary).
//
// Block classes, from the counts of kinds among a block's pages:
//   offline   any hole page
//   huge      every page huge
//   free      every page free
//   hybrid    movable pages and unmovable ones, movable the majority
//   unmovable unmovable pages and no more movable than unmovable; or only
//             untyped (and free) pages
//   movable   the rest: movable, free and untyped pages. Untyped pages alone
//             never make a block hybrid: on a host that just freed memory the
//             per-CPU lists hold thousands of free pages that look the same.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kernel/page_size.h"
#include "kernel/memmap.h"
#include "kernel/procfs.h"

namespace fragd {

enum class BlockClass : uint8_t { Free = 0, Movable, Hybrid, Unmovable, Huge, Offline, Unseen };
// The classes a block can be found in; Unseen (a block of the map no scan has read yet) is not one.
inline constexpr size_t kBlockClasses = 6;

// "free", "movable", "hybrid", "unmovable", "huge", "offline": the `class` label ("unseen").
const char* block_class_name(BlockClass c);
// One character per class for text maps: '.' free, 'm' movable, 'x' hybrid,
// 'U' unmovable, 'H' huge, '-' offline ('?' unseen).
char block_class_char(BlockClass c);
// The reverse of block_class_char; false for any other character.
bool block_class_from_char(char ch, BlockClass& out);

// Page kinds (see the top of this file).
enum class PageKind : uint8_t { Free = 0, Movable, Unmovable, Untyped, Huge, Hole };

// kpageflags bits fragd reads.
namespace kpf {
inline constexpr int kLru = 5, kSlab = 7, kBuddy = 10, kMmap = 11, kAnon = 12, kSwapcache = 13,
                     kSwapbacked = 14, kCompoundHead = 15, kCompoundTail = 16, kHuge = 17, kNopage = 20,
                     kKsm = 21, kThp = 22, kOffline = 23, kPgtable = 26, kReserved = 32;
inline constexpr uint64_t bit(int b) { return uint64_t{1} << b; }
}  // namespace kpf

// One pageblock's summary.
struct BlockInfo {
  BlockClass cls = BlockClass::Unseen;
  uint16_t used = 0;       // pages not free (movable + unmovable + untyped + huge)
  uint16_t movable = 0;    // movable pages: what compaction migrates to free the block
  uint16_t unmovable = 0;  // typed unmovable pages
};

// A 95% interval of an estimate (lo == hi == the value when every block was read).
struct Bounds {
  uint64_t lo = 0, hi = 0;
};

// The zone's span (node, zone, start_pfn, end_pfn, reserve_pages), and what the scan found in it.
// A full scan reads every block; a sampled round (concerns/pageblocks/sample.h) reads a random
// sample of them, keeps each block's last class in `blocks` (the map, converging round by
// round) and estimates the counts below from the round's sample, with their intervals.
struct ZoneScan : ZoneSpan {
  uint64_t first_block = 0;          // block number (pfn >> order) of blocks[0]
  std::vector<BlockInfo> blocks;     // every block overlapping [start_pfn, end_pfn)
  // CLOCK_BOOTTIME when each block was last read (0: never; its class is Unseen).
  std::vector<uint64_t> seen_boot_ns;
  // Blocks the estimates below come from: blocks.size() when the zone was read whole (the
  // estimates are then exact and every interval is empty), fewer for a sample.
  uint64_t sample_blocks = 0;
  // 95% intervals of counts[], hugepages_compaction and hugepages_polluted.
  std::array<Bounds, kBlockClasses> counts_ci{};
  Bounds compaction_ci, polluted_ci;
  std::array<uint64_t, kBlockClasses> counts{};  // blocks per class
  uint64_t free_pages = 0;           // pages seen free (KPF_BUDDY)
  // Huge pages (one per block): free now; further ones a full compaction
  // followed by a pool write can make; ones lost to pollution (hybrid blocks).
  uint64_t hugepages_free = 0, hugepages_compaction = 0, hugepages_polluted = 0;
  // Pages compaction would migrate to make `hugepages_compaction` huge pages:
  // the movable pages of that many least-occupied movable blocks (a lower
  // bound: the kernel's scanners migrate more).
  uint64_t compaction_cost_pages = 0;
  // Movable pages of the movable blocks, ascending: cost_for(n) sums the first n.
  std::vector<uint16_t> movable_sorted;
  // 1 GiB pages (1 GiB-aligned ranges wholly in the zone): free now (every block
  // free), and further ones contiguous-range migration (alloc_contig_range, which a 1 GiB
  // pool write uses) could free: ranges without a typed unmovable page (free, movable and
  // untyped pages: untyped ones may be free pages on per-CPU lists), the least occupied
  // first, while the free pages outside them above the reserve can take their movable pages.
  uint64_t gigantic_free = 0, gigantic_migration = 0;
  // The pages in use of each range counted in gigantic_migration, ascending: what migrating it moves.
  std::vector<uint64_t> gigantic_used;
  // The longest run of free blocks, in pages (whole blocks only).
  uint64_t free_run_max_pages = 0;
  uint64_t cost_for(uint64_t n) const;
};


struct ScanResult {
  unsigned pageblock_order = 9;
  // The estimates come from a sample (some zone's sample_blocks < its blocks).
  bool sampled = false;
  // CLOCK_BOOTTIME when the map's least recently read block was read; 0 while some block of
  // the map was never read (the 1 GiB estimates and the longest free run wait for a whole map).
  uint64_t map_oldest_boot_ns = 0;
  uint64_t wall_time_ns = 0;   // CLOCK_REALTIME when the scan began
  uint64_t boot_time_ns = 0;   // CLOCK_BOOTTIME when the scan began (the BPF records' clock)
  uint64_t duration_ns = 0;
  uint64_t pages_read = 0;
  std::vector<ZoneScan> zones;
  // Non-fatal: a read that stopped short (memory hot-removed), etc.
  std::vector<std::string> warnings;
};

// Now, on the clocks a ScanResult carries (tests pass their own).
struct ScanClock {
  uint64_t wall_ns = 0;  // CLOCK_REALTIME
  uint64_t boot_ns = 0;  // CLOCK_BOOTTIME
  static ScanClock now();
};
// How old `r` is at `now`, on the boot clock: a wall clock set back or
// forward (NTP, an operator, a resumed VM) changes no age. The wall time is
// for display only.
uint64_t scan_age_ns(const ScanResult& r, const ScanClock& now);

// Reads `n` flag words starting at `pfn` into `out`; returns how many it read
// (fewer, or 0, past the end of memory) or an Error.
using FlagReader = std::function<Result<size_t>(uint64_t pfn, uint64_t* out, size_t n)>;

// The estimate of one zone from its classified blocks (fills counts,
// hugepages_*, compaction_cost_pages and movable_sorted). Compaction can turn
// a movable block into a huge page by migrating its movable pages into free
// pages elsewhere; every huge page it makes consumes a block's worth of free
// pages, so it makes at most min(movable blocks,
// (usable free pages - reserve_pages) / block_pages - hugepages_free), where
// usable free pages are those of free, movable and hybrid blocks (compaction
// takes no migration target from an unmovable block).
// Every block read: also sets the intervals (empty) and what estimate_from_map sets.
void estimate_zone(ZoneScan& z, unsigned pageblock_order);

// What needs the whole map rather than a sample: the longest run of free blocks and the 1 GiB
// estimates (gigantic_*), from each block's last class. Unseen blocks count as neither free
// nor movable, so while some are left these are lower bounds.
// giga_order: the order of 1 GiB in the kernel's pages (kernel/page_size.h).
void estimate_from_map(ZoneScan& z, unsigned pageblock_order, unsigned giga_order = gigantic_order(kernel_page_kib()));

// Marks as holes (KPF_NOPAGE) the flag words of pfns [first_pfn, first_pfn + n) that a read did
// not return (from `got` on), that lie outside `zone`, or outside every range of `ram` (when not
// empty).
void mark_holes(uint64_t* flags, uint64_t first_pfn, size_t n, size_t got, const ZoneSpan& zone,
                const std::vector<PfnRange>& ram);

// Classifies one block from the flag words of its `n` pages (n < block_pages
// at a zone edge: the missing pages count as holes). `carry` is the kind of
// the last compound head seen, for tails whose head came before (updated).
BlockInfo classify_block(const uint64_t* flags, size_t n, size_t block_pages, PageKind& carry);

// Scans every zone of `spans` through `read` (which must be safe to call
// from `threads` threads at once), `chunk_blocks` blocks per read (rounded up
// to a power of two, at least 8, so a compound page never straddles two reads). Pages
// outside `ram` (when not empty) and outside their zone are holes. A read
// that returns short (memory hot-removed, a zone that shrank) leaves the rest
// of its blocks offline, with a warning.
Result<ScanResult> scan_pageblocks(const std::vector<ZoneSpan>& spans, const std::vector<PfnRange>& ram,
                                   unsigned pageblock_order, const FlagReader& read,
                                   size_t chunk_blocks = 64, unsigned threads = 1);

// Where memory is, read live under proc_root: the zones' spans (/proc/zoneinfo), the RAM
// ranges (/proc/iomem through `iomem_fd` when >= 0, else opened; /sys/firmware/memmap under
// sys_root when it shows no address: a warning when neither does) and, with `with_free`, each
// zone's free pages and free blocks by order (/proc/zoneinfo, /proc/buddyinfo).
struct LiveLayout {
  std::vector<ZoneSpan> spans;
  std::vector<PfnRange> ram;
  std::vector<ZoneFree> free;
  std::vector<std::string> warnings;
};
Result<LiveLayout> read_live_layout(const std::string& proc_root, int iomem_fd, const std::string& sys_root,
                                    bool with_free);
// proc_root/kpageflags opened (Error naming the path and the fix), and a reader of it.
Result<int> open_kpageflags(const std::string& proc_root);
FlagReader fd_flag_reader(int fd, std::string path);

// The live scan: /proc/zoneinfo, /proc/iomem, /proc/kpageflags under
// proc_root. Error when kpageflags cannot be opened (names the path and the
// fix: run as root (the file is mode 0400), kernel with CONFIG_PROC_PAGE_MONITOR).
// `iomem_fd`, when >= 0, is /proc/iomem opened earlier (its addresses show only
// to an opener with CAP_SYS_ADMIN, which fragd drops after start-up).
Result<ScanResult> scan_live(const std::string& proc_root = "/proc", unsigned pageblock_order = 9,
                             unsigned threads = 1, int iomem_fd = -1, const std::string& sys_root = "");

}  // namespace fragd
