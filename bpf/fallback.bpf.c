// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Migratetype fallbacks: an allocation found no free page of its own
 * migratetype and took one from another type's free list. An UNMOVABLE or
 * RECLAIMABLE allocation that takes pages from a MOVABLE pageblock without
 * claiming it leaves a hybrid pageblock that compaction can no longer free.
 * change_ownership (claimed) exists only in the classic record.
 *
 * Pollution tracking (see include/fallback.h for the maps). The extfrag
 * record's pfn is the first page handed out: mm/page_alloc.c traces it after
 * taking the block off the free list and splitting off the remainder
 * (__rmqueue_claim / __rmqueue_steal since 6.15, __rmqueue_fallback before),
 * and alloc_order is the order handed out. Order-0..3 allocations are refilled
 * into a per-CPU list in batches (rmqueue_bulk), one event per page: the task
 * recorded is the one whose allocation caused the refill, and a page that
 * leaves the per-CPU list unused is released by mm_page_pcpu_drain.
 *
 * A high-order polluting allocation later split into order-0 pages
 * (split_page, alloc_pages_exact) is released when its first page is freed.
 * An allocation larger than a pageblock is not recorded (untracked_range).
 */
#include "maps.bpf.h"
#include "fallback.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#ifndef EEXIST
#define EEXIST 17
#endif


/* The kernel's pageblock_order (/proc/pagetypeinfo), set by fragd before load. */
const volatile __u32 pageblock_order = 9;

/*
 * Set by fragd once the release programs are attached too: a page recorded
 * with nothing to release it would stay counted for good.
 */
__u32 pollution_on = 0;

FRAGD_STATS_MAP(fallback_stats, struct fallback_stats);
FRAGD_STATS_MAP(pollution_stats, struct pollution_stats);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FRAGD_POLLUTION_PAGE_ENTRIES);
	__type(key, __u64);   /* pfn */
	__type(value, __u32); /* order */
} pollution_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FRAGD_POLLUTION_MAX_BLOCKS); /* resized by fragd before load */
	__type(key, __u32);   /* block */
	__type(value, __u64); /* outstanding recorded pages */
} block_pollution SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FRAGD_POLLUTION_BLOCK_ENTRIES); /* resized by fragd before load */
	__type(key, __u32);   /* block */
	__type(value, struct pollution_block);
} polluted_blocks SEC(".maps");

/* Outstanding pages of `pfn`'s block, NULL when the block is beyond block_pollution. */
static __always_inline __u64 *block_count(__u64 pfn, __u32 *block)
{
	__u64 b = pfn >> pageblock_order;

	if (b > 0xffffffffULL)
		return NULL;
	*block = (__u32)b;
	return bpf_map_lookup_elem(&block_pollution, block);
}

/*
 * Releases the recorded allocation starting at `pfn`, if any. The fast path
 * (a page of a block with nothing recorded, nearly every free) is one array
 * load. Only the CPU whose delete succeeds takes the pages off the count, so
 * concurrent releases of one pfn (a free racing a drain) count once.
 */
static __always_inline void release(__u64 pfn, bool stale)
{
	struct pollution_stats *st;
	__u64 *cnt, n, old;
	__u32 block, *order;

	cnt = block_count(pfn, &block);
	if (!cnt || !*cnt)
		return;
	order = bpf_map_lookup_elem(&pollution_pages, &pfn);
	if (!order)
		return;
	n = 1ULL << (*order & 31);
	if (bpf_map_delete_elem(&pollution_pages, &pfn) != 0)
		return;
	old = __sync_fetch_and_add(cnt, -n);
	st = fragd_stats(&pollution_stats);
	if (st) {
		if (stale)
			st->pages_stale += n;
		else
			st->pages_released += n;
	}
	if (old != n)
		return;
	/* The block's last recorded page: its record goes too. */
	bpf_map_delete_elem(&polluted_blocks, &block);
	if (st) {
		st->blocks_released++;
		/* A fallback into this block came in between and its record went with the delete. */
		if (*cnt && !bpf_map_lookup_elem(&polluted_blocks, &block))
			st->blocks_unrecorded++;
	}
}

/*
 * Records a polluting allocation of 2^order pages at `pfn`. Fallbacks run
 * under the zone lock, so two of them never race on one block (a block lies
 * in one zone); releases of other pages of the block run anywhere, at any
 * time. The count, not the record, decides: it only moves by atomic adds, and
 * only the release that takes it to 0 deletes the record. The record is
 * written before the count goes up; a fallback that lands between a release's
 * decrement to 0 and its delete loses its record (counted in
 * blocks_unrecorded), never its pages.
 */
static __always_inline void record(__u64 pfn, int order, __u32 alloc_mt, struct pollution_stats *st)
{
	struct pollution_block *b, nb = {};
	__u64 *cnt, n, now, old;
	__u32 block, ord;
	long err;

	st->events++;
	if (order < 0 || (__u32)order > pageblock_order) {
		st->untracked_range++;
		return;
	}
	cnt = block_count(pfn, &block);
	if (!cnt) {
		st->untracked_range++;
		return;
	}
	ord = order;
	n = 1ULL << ord;
	err = bpf_map_update_elem(&pollution_pages, &pfn, &ord, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* Still recorded, so its free was missed (a nested tracepoint is skipped):
		 * the page was free to be allocated now. Drop the old record, then retry. */
		release(pfn, true);
		err = bpf_map_update_elem(&pollution_pages, &pfn, &ord, BPF_NOEXIST);
	}
	if (err) {
		/* -E2BIG: pollution_pages is full (-EBUSY, -ENOMEM: a nested update, no memory). */
		st->untracked_full++;
		return;
	}

	now = bpf_ktime_get_boot_ns();
	b = bpf_map_lookup_elem(&polluted_blocks, &block);
	if (b && *cnt) {
		b->last_ns = now;
		b->events++;
	} else {
		/* A clean block (or the record of one whose last page is being released). */
		struct pollution_block *dst = b ? b : &nb;

		dst->first_ns = now;
		dst->last_ns = now;
		dst->cgroup_id = bpf_get_current_cgroup_id();
		dst->events = 1;
		dst->pid = bpf_get_current_pid_tgid() >> 32;
		dst->alloc_mt = alloc_mt;
		bpf_get_current_comm(dst->comm, sizeof(dst->comm));
		if (!b && bpf_map_update_elem(&polluted_blocks, &block, &nb, BPF_NOEXIST) != 0)
			st->blocks_unrecorded++;
	}

	old = __sync_fetch_and_add(cnt, n);
	st->pages_added += n;
	if (old == 0)
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

/*
 * Every page freed in the system passes here: the record's fields are read
 * with plain (CO-RE relocated) context loads, not helper calls, and a page of
 * a block with nothing recorded returns after one array load.
 */
SEC("tracepoint/kmem/mm_page_free")
int page_free(struct trace_event_raw_mm_page_free *ctx)
{
	release(ctx->pfn, false);
	return 0;
}

/* A page leaving a per-CPU free list for the buddy allocator (unused refills included). */
SEC("tracepoint/kmem/mm_page_pcpu_drain")
int page_pcpu_drain(struct trace_event_raw_mm_page *ctx)
{
	release(ctx->pfn, false);
	return 0;
}
