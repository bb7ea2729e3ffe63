// SPDX-License-Identifier: Apache-2.0
// The pageblock picture under a CPU budget. A full scan reads every page frame's flags (about
// 0.1 us of kernel time per 4 KiB page: 27 ms per GiB, half a minute of a core at 1 TiB). A
// sampled round reads a fixed number of pageblocks, whatever the memory size:
//  - per zone, the next blocks of a keyed random permutation of the zone's blocks (BlockOrder):
//    each round's blocks are a simple random sample without replacement, and pass after pass
//    every block is read, so the map of each block's last class converges;
//  - the blocks a round may read are shared among the zones in proportion to their size
//    (stratified by node and zone), each zone at least kMinZoneSample (all of a small zone);
//  - each zone's counts are estimated from its sample, with 95% intervals (Wilson's score
//    interval with the finite-population correction); what the kernel counts exactly stays
//    exact: free pages (/proc/zoneinfo) and free 2 MiB blocks (/proc/buddyinfo).
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "kernel/procfs.h"
#include "concerns/pageblocks/pageblock.h"

namespace fragd {

// A keyed bijection of [0, n): a 4-round Feistel network on the smallest even number of bits
// that covers n, walked until the value falls below n (at most 4 steps on average).
class BlockOrder {
 public:
  BlockOrder(uint64_t n = 0, uint64_t key = 0);
  uint64_t size() const { return n_; }
  uint64_t at(uint64_t i) const;  // i < size()

 private:
  uint64_t n_ = 0, key_ = 0;
  unsigned half_bits_ = 1;
};

// Each zone is read at least this many blocks a round (all of a smaller zone).
inline constexpr uint64_t kMinZoneSample = 64;

// The blocks each zone reads this round: `budget` blocks shared in proportion to the zones'
// sizes, at least min(size, kMinZoneSample) each; a zone whose share covers it is read whole.
std::vector<uint64_t> share_blocks(const std::vector<uint64_t>& zone_blocks, uint64_t budget);

// Where each zone is in its permutation (one per zone of the map, by index).
struct SampleCursor {
  BlockOrder order;
  uint64_t next = 0;  // position in `order` of the next block to read
  uint64_t pass = 0;  // whole passes done
};

// The estimates of one zone from a simple random sample of its blocks (`sample`: the classes
// of the blocks read, each once). `z` holds the zone's span and map; sets counts, hugepages_*,
// compaction_cost_pages, sample_blocks and the intervals. `free_pages` and `free_blocks`
// (blocks of free pages of the pageblock order or more, counted in pageblocks) are the
// kernel's exact counts. Compaction's huge pages are min(movable blocks, room), room being
// the free pages compaction can use (free pages less those in unmovable and huge blocks,
// less the reserve) in blocks, less the free blocks; the interval takes each side's 97.5%
// interval (together at least 95%).
void estimate_zone_sampled(ZoneScan& z, const std::vector<BlockInfo>& sample, uint64_t free_pages,
                           uint64_t free_blocks, unsigned pageblock_order);

// Wilson's score interval of a proportion, k of n drawn without replacement from N, as counts
// of the N (z: the normal quantile, 1.96 for 95%).
Bounds count_interval(uint64_t k, uint64_t n, uint64_t N, double z);

// One sampled round: for each zone of `spans` (the map `map` follows them: a zone whose span
// changed starts a new map), reads the blocks share_blocks gives it out of `budget_blocks`
// through `read`, records their classes in the map, and estimates the zone
// (estimate_zone_sampled, or estimate_zone when it was read whole). `free` gives each zone's
// exact free pages and free blocks (a zone missing from it is estimated from the sample
// alone). Pages outside `ram` (when not empty) and outside their zone are holes. `now_boot_ns`
// stamps the blocks read. Returns the blocks read; fills map's time fields but duration.
Result<uint64_t> sample_round(ScanResult& map, std::vector<SampleCursor>& cursors,
                              const std::vector<ZoneSpan>& spans, const std::vector<PfnRange>& ram,
                              const std::vector<ZoneFree>& free, unsigned pageblock_order,
                              const FlagReader& read, uint64_t budget_blocks, uint64_t key_seed,
                              uint64_t now_boot_ns);

// After a full scan replaced the map: the cursors keep their places (the permutation of a
// zone whose span is unchanged goes on).
void sync_cursors(const ScanResult& map, std::vector<SampleCursor>& cursors, uint64_t key_seed);

}  // namespace fragd
