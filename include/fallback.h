/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shared between bpf/fallback.bpf.c and the daemon: migratetype fallbacks and pollution. */
#ifndef FRAGD_FALLBACK_H
#define FRAGD_FALLBACK_H

#include "fragd_common.h"

/* Counters, one per CPU (map fallback_stats, a single-entry per-CPU array). */
struct fallback_stats {
	/* [requested migratetype][migratetype taken from][pageblock claimed 0/1] */
	__u64 fallbacks[FRAGD_NR_MT][FRAGD_NR_MT][2];
};

/*
 * Pollution: an UNMOVABLE or RECLAIMABLE allocation that fell back to a
 * MOVABLE pageblock without claiming it (change_ownership 0). Its pages stay
 * recorded until they are freed (kmem:mm_page_free) or, never handed out,
 * drained from a per-CPU list back to the buddy allocator
 * (kmem:mm_page_pcpu_drain). A block number is pfn >> pageblock_order.
 *
 * Maps:
 *   pollution_pages  HASH  pfn (__u64) -> order (__u32) of one recorded allocation
 *   block_pollution  ARRAY block (__u32) -> outstanding recorded pages (__u64);
 *                    mmapable; sized by user space to the blocks of RAM (at
 *                    most FRAGD_POLLUTION_MAX_BLOCKS). The release programs
 *                    test it first and return at once when it is 0.
 *   polluted_blocks  HASH  block (__u32) -> struct pollution_block, the record
 *                    of who polluted the block and when; deleted with the
 *                    block's last recorded page
 *   pollution_stats  PERCPU_ARRAY, one struct pollution_stats
 * HASH maps, not LRU: an eviction would leave counts nobody releases; an
 * insert into a full map is counted instead (untracked_full, blocks_unrecorded).
 */
#define FRAGD_POLLUTION_MAX_BLOCKS (1u << 22)  /* 8 TiB of RAM in 2 MiB pageblocks */
#define FRAGD_POLLUTION_PAGE_ENTRIES 131072    /* recorded allocations (pollution_pages) */
#define FRAGD_POLLUTION_BLOCK_ENTRIES 65536    /* block records (polluted_blocks), at most */

/* Value of polluted_blocks. */
struct pollution_block {
	__u64 first_ns;   /* CLOCK_BOOTTIME ns of the first recorded fallback since the block was clean */
	__u64 last_ns;    /* CLOCK_BOOTTIME ns of the latest */
	__u64 cgroup_id;  /* cgroup v2 id of the task of the first fallback */
	__u32 events;     /* recorded fallbacks into the block since it was clean */
	__u32 pid;        /* tgid of the task of the first fallback */
	__u32 alloc_mt;   /* enum fragd_migratetype of the first fallback: UNMOVABLE or RECLAIMABLE */
	__u32 pad;
	char comm[16];    /* comm of the task of the first fallback */
};

/*
 * Counters, one per CPU (map pollution_stats). Gauges are differences of
 * monotonic sums: recorded pages = pages_added - pages_released - pages_stale;
 * polluted blocks = blocks_added - blocks_released.
 */
struct pollution_stats {
	__u64 events;            /* polluting fallbacks seen */
	__u64 untracked_full;    /* not recorded: pollution_pages was full */
	__u64 untracked_range;   /* not recorded: block beyond block_pollution, or the
				    allocation is larger than a pageblock */
	__u64 pages_added;       /* pages recorded */
	__u64 pages_released;    /* recorded pages freed or drained */
	__u64 pages_stale;       /* recorded pages found allocated again: their release was missed */
	__u64 blocks_added;      /* blocks that went from no recorded page to some */
	__u64 blocks_released;   /* blocks whose last recorded page went */
	__u64 blocks_unrecorded; /* a block got pages but no pollution_block: polluted_blocks full,
				    or its record was deleted by a release racing with a new fallback */
};

#endif /* FRAGD_FALLBACK_H */
