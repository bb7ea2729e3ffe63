/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Migratetype fallbacks: an allocation found no free page of its own
 * migratetype and took one from another type's free list. An UNMOVABLE or
 * RECLAIMABLE allocation that takes pages from a MOVABLE pageblock without
 * claiming it leaves a hybrid pageblock that compaction can no longer free.
 * change_ownership (claimed) exists only in the classic record.
 *
 * Pollution ledger (see include/pollution.h for the map). The extfrag
 * record's pfn is the first page handed out: mm/page_alloc.c traces it after
 * taking the block off the free list and splitting off the remainder
 * (__rmqueue_claim / __rmqueue_steal since 6.15, __rmqueue_fallback before),
 * and alloc_order is the order handed out. Order-0..3 allocations are refilled
 * into a per-CPU list in batches (rmqueue_bulk), one event per page: the task
 * recorded is the one whose allocation caused the refill.
 *
 * Nothing here watches page frees (that would put a program on every free):
 * fragd releases a block from the ledger when its pageblock scan finds no
 * unmovable page left in it. An allocation larger than a pageblock is not
 * recorded (untracked_range).
 */
#include "maps.bpf.h"
#include "pollution.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#ifndef EEXIST
#define EEXIST 17
#endif


/* The kernel's pageblock_order (/proc/pagetypeinfo), set by fragd before load. */
const volatile __u32 pageblock_order = 9;

/* Set by fragd once the ledger is sized and read back: recording starts then. */
__u32 pollution_on = 0;

FRAGD_STATS_MAP(fallback_stats, struct fallback_stats);
FRAGD_STATS_MAP(pollution_stats, struct pollution_stats);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FRAGD_POLLUTION_BLOCK_ENTRIES); /* resized by fragd before load */
	__type(key, __u32);   /* block */
	__type(value, struct pollution_block);
} polluted_blocks SEC(".maps");

/*
 * Records a polluting allocation of 2^order pages at `pfn`. Fallbacks run
 * under the zone lock, so two of them never race on one block (a block lies
 * in one zone); fragd deletes records from user space after a scan, only those
 * whose last event is older than the scan.
 */
static __always_inline void record(__u64 pfn, int order, __u32 alloc_mt, struct pollution_stats *st)
{
	struct pollution_block *b, nb = {};
	__u64 blk, n, now;
	__u32 block;
	long err;

	st->events++;
	blk = pfn >> pageblock_order;
	if (order < 0 || (__u32)order > pageblock_order || blk > 0xffffffffULL) {
		st->untracked_range++;
		return;
	}
	block = (__u32)blk;
	n = 1ULL << ((__u32)order & 31);
	now = bpf_ktime_get_boot_ns();
	b = bpf_map_lookup_elem(&polluted_blocks, &block);
	if (b) {
		b->last_ns = now;
		b->events++;
		__sync_fetch_and_add(&b->pages, n);
		st->pages_added += n;
		return;
	}
	nb.first_ns = now;
	nb.last_ns = now;
	nb.cgroup_id = bpf_get_current_cgroup_id();
	nb.events = 1;
	nb.pages = n;
	nb.pid = bpf_get_current_pid_tgid() >> 32;
	nb.alloc_mt = alloc_mt;
	bpf_get_current_comm(nb.comm, sizeof(nb.comm));
	err = bpf_map_update_elem(&polluted_blocks, &block, &nb, BPF_NOEXIST);
	if (err) {
		/* -E2BIG: the ledger is full (-EEXIST cannot happen under the zone lock). */
		st->untracked_full++;
		return;
	}
	st->pages_added += n;
	st->blocks_added++;
}

SEC("tracepoint/kmem/mm_page_alloc_extfrag")
int page_alloc_extfrag(struct trace_event_raw_mm_page_alloc_extfrag *ctx)
{
	struct fallback_stats *st = fragd_stats(&fallback_stats);
	struct pollution_stats *pst;
	__u32 alloc_mt, fallback_mt, claimed;

	if (!st)
		return 0;
	alloc_mt = fragd_migratetype(BPF_CORE_READ(ctx, alloc_migratetype));
	fallback_mt = fragd_migratetype(BPF_CORE_READ(ctx, fallback_migratetype));
	claimed = BPF_CORE_READ(ctx, change_ownership) ? 1 : 0;
	if (alloc_mt < FRAGD_NR_MT && fallback_mt < FRAGD_NR_MT)
		st->fallbacks[alloc_mt][fallback_mt][claimed]++;

	if (claimed || fallback_mt != FRAGD_MT_MOVABLE ||
	    (alloc_mt != FRAGD_MT_UNMOVABLE && alloc_mt != FRAGD_MT_RECLAIMABLE))
		return 0;
	if (!pollution_on)
		return 0;
	pst = fragd_stats(&pollution_stats);
	if (pst)
		record(BPF_CORE_READ(ctx, pfn), BPF_CORE_READ(ctx, alloc_order), alloc_mt, pst);
	return 0;
}
