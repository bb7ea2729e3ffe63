// SPDX-License-Identifier: Apache-2.0
// Who pays for a stall (its consumer) and where it came from (its call site),
// from what the BPF side records at each stall event: the task's kind, the gfp
// mask, the order and the kernel stack (function names, innermost first).
//
// The stack decides when it names a known caller (each rule below looks at every
// frame outside the allocator's own before the next rule is tried); the flags
// decide otherwise (no stack, no symbols, or an unknown caller). The rules, in order:
//   khugepaged  the task is khugepaged, or a frame is khugepaged's collapse
//   hugetlb     a frame allocates a hugetlb folio (pool growth, surplus at fault)
//   net         a frame of the network stack's page and skb allocators
//   slab        a frame of the slab allocator or of kmalloc's large allocations
//   thp_fault   a frame of the anonymous or shmem huge page fault
//   page_cache  a frame of the page cache's large folio allocation (readahead)
// and without such a frame, by flags:
//   khugepaged  task khugepaged;  hugetlb  __GFP_COMP with __GFP_RETRY_MAYFAIL;
//   thp_fault   a user task's __GFP_MOVABLE|__GFP_COMP|__GFP_NOMEMALLOC;
//   page_cache  other __GFP_MOVABLE|__GFP_COMP;  slab  unmovable or reclaimable __GFP_COMP;
//   other       the rest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stalls.h"

namespace fragd {

inline constexpr const char* kConsumers[] = {"thp_fault", "khugepaged", "hugetlb", "slab", "net", "page_cache", "other"};

// The gfp bits the rules read (include/linux/gfp_types.h; the same from 6.1 to 6.18).
inline constexpr uint64_t kGfpMovable = 1u << 3, kGfpReclaimable = 1u << 4, kGfpRetryMayfail = 1u << 14,
                          kGfpComp = 1u << 18, kGfpNomemalloc = 1u << 19;

// The consumer of a stall at `key` whose stack has `frames` (empty: none).
std::string classify_consumer(const stall_site_key& key, const std::vector<std::string>& frames);

// The call site: the first frame outside the page allocator, compaction, reclaim and
// tracing ("unknown" without one).
std::string call_site(const std::vector<std::string>& frames);

// True for the page allocator's, compaction's, reclaim's and tracing's own frames.
bool allocator_frame(const std::string& fn);

}  // namespace fragd
