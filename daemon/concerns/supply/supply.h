// SPDX-License-Identifier: Apache-2.0
// What a node can supply now: may it give COUNT pages of a size (a hugetlb page size, or plain
// free blocks of an order for a driver) at once, after one compaction, or not at all. Answered
// from what fragd already holds (the last tick's free lists and pools, the last pageblock scan or
// sampled round), never by reading anything: `fragctl preflight`, `fragctl ensure`'s refusals and
// the Node Feature Discovery labels all ask it. Pure: the unit tests feed recorded snapshots.
//
// Per node, for a page of order o (x86-64: 2 MiB is 9, 1 GiB is 18):
//   pool_free   the free pages of the node's hugetlb pool of that size (hugetlb sizes only);
//   free_blocks blocks of order >= o on the buddy free lists, as order-o blocks, in each zone no
//               more than its free pages above the zone's reserve (min watermark + lowmem
//               protection, which a pool write or a driver's allocation must leave) can hold;
//               for a 1 GiB page (above the buddy's largest order) the aligned free ranges of the
//               pageblock map;
//   makeable    more that one compaction could add: the scan's movable blocks that the free
//               pages can absorb (hugepages_compaction), as order-o blocks (a 2 MiB block is
//               2^(9-o) blocks of a smaller order; a larger order takes 2^(o-9) of them, their
//               adjacency not modelled), or for 1 GiB the ranges contiguous-range migration
//               could free; with the scan's 95% interval (a sampled round's; a full scan's is
//               the value itself);
//   pages_to_migrate  base pages compaction would move to make what the ask lacks beyond free
//               (the least occupied movable blocks first: a lower bound, the kernel's scanners
//               move more).
// The verdict: ready when the free pages cover the count, makeable when free + makeable do,
// no otherwise. Without a scan (pageblocks.scan off, or none finished yet) makeable is only
// bounded by the free pages the free lists do not hold as whole blocks: its point is that bound,
// and `basis` says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernel/memmap.h"
#include "kernel/procfs.h"
#include "concerns/pageblocks/pageblock.h"

namespace fragd {

enum class Verdict { Ready, Makeable, No };
const char* verdict_name(Verdict v);  // ready, makeable, no
// `fragctl preflight`'s exit status for a verdict: 0 ready, 3 makeable, 4 no.
int verdict_exit_status(Verdict v);

// What is asked: a hugetlb page size (size_kib, pool pages count) or an order's free blocks.
struct SupplyAsk {
  uint64_t size_kib = 0;        // set: a hugetlb page size in KiB
  std::optional<unsigned> order;  // set instead: free blocks of this order (a driver's buffers)
  uint64_t count = 0;
  int node = -1;  // < 0: every node
};

struct NodeSupply {
  int node = 0;
  uint64_t pool_free = 0, free_blocks = 0;
  uint64_t free = 0;  // pool_free + free_blocks
  uint64_t makeable = 0;
  Bounds makeable_ci;
  uint64_t pages_to_migrate = 0;  // for this node's share of what the ask lacks beyond free
  uint64_t total_pages = 0;       // the node's present pages (of the base size)
};

struct Supply {
  Verdict verdict = Verdict::No;
  uint64_t size_kib = 0;  // the page asked, in KiB
  unsigned order = 0;
  bool hugetlb = false;  // a hugetlb size: pool pages count, ensure grows the pool
  uint64_t count = 0;
  std::optional<int> node;  // none: every node
  uint64_t free = 0, makeable = 0, pages_to_migrate = 0;
  Bounds interval;  // 95% bounds of free + makeable
  double age_seconds = 0;  // the oldest input's age (the scan's, or the free lists')
  std::string basis;    // "scan", "sampled scan", "free lists only: ..."
  std::string reason;   // one line for a person: why this verdict
  std::vector<NodeSupply> nodes;
};

// What the estimate reads. `scan` may be null (no scan); `spans` give each zone's reserve when
// there is no scan; `scan_age_ns` and `mem_age_ns` are the inputs' ages.
struct SupplyInputs {
  const MemSnapshot* mem = nullptr;
  const ScanResult* scan = nullptr;
  std::string no_scan;  // why there is no scan (for `basis`)
  std::vector<ZoneSpan> spans;
  uint64_t page_kib = 4;
  uint64_t scan_age_ns = 0, mem_age_ns = 0;
};

// An error names what was asked and what this machine offers: a size the kernel has no hugetlb
// pool of, an order above the buddy allocator's largest, a node with no memory, a count of 0.
Result<Supply> estimate_supply(const SupplyAsk& ask, const SupplyInputs& in);

// Pages compaction would migrate to make `n` more huge pages in zone `z`: the lightest movable
// blocks (a sampled round's blocks each stand for counts[Movable] / sample size of them).
uint64_t migrate_cost(const ZoneScan& z, uint64_t n);

}  // namespace fragd
