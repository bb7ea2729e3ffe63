/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared between bpf/pollution.bpf.c and the daemon: migratetype fallbacks and pollution. */
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
 * MOVABLE pageblock without claiming it (change_ownership 0). The block is
 * recorded in the ledger, with who polluted it first and how many pages went
 * in since, until fragd's pageblock scan finds no unmovable page in it; fragd
 * then deletes the record. A block number is pfn >> pageblock_order.
 *
 * Maps:
 *   polluted_blocks  HASH  block (__u32) -> struct pollution_block; sized by
 *                    user space to the blocks of RAM (at most
 *                    FRAGD_POLLUTION_BLOCK_ENTRIES)
 *   pollution_stats  PERCPU_ARRAY, one struct pollution_stats
 * HASH, not LRU: an eviction would drop a polluted block silently; an insert
 * into a full map is counted instead (untracked_full).
 */
#define FRAGD_POLLUTION_BLOCK_ENTRIES 262144 /* block records, at most (512 GiB of 2 MiB blocks) */

/* Value of polluted_blocks. */
struct pollution_block {
	__u64 first_ns;   /* CLOCK_BOOTTIME ns of the first recorded fallback since the block was clean */
	__u64 last_ns;    /* CLOCK_BOOTTIME ns of the latest */
	__u64 cgroup_id;  /* cgroup v2 id of the task of the first fallback */
	__u64 pages;      /* pages handed out by recorded fallbacks since the block was clean */
	__u32 events;     /* recorded fallbacks into the block since it was clean */
	__u32 pid;        /* tgid of the task of the first fallback */
	__u32 alloc_mt;   /* enum fragd_migratetype of the first fallback: UNMOVABLE or RECLAIMABLE */
	__u32 pad;
	char comm[16];    /* comm of the task of the first fallback */
};

/*
 * Counters, one per CPU (map pollution_stats). Blocks and pages released
 * are counted by fragd in user space, where the ledger is reconciled.
 */
struct pollution_stats {
	__u64 events;            /* polluting fallbacks seen */
	__u64 untracked_full;    /* not recorded: the ledger was full */
	__u64 untracked_range;   /* not recorded: block number beyond 32 bits, or the
				    allocation is larger than a pageblock */
	__u64 pages_added;       /* pages recorded */
	__u64 blocks_added;      /* blocks recorded (new ledger entries) */
};

#endif /* FRAGD_FALLBACK_H */
