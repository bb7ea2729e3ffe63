// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Migratetype fallbacks: an allocation found no free page of its own
 * migratetype and took one from another type's free list. An UNMOVABLE or
 * RECLAIMABLE allocation that takes pages from a MOVABLE pageblock without
 * claiming it leaves a hybrid pageblock that compaction can no longer free.
 * change_ownership (claimed) exists only in the classic record.
 */
#include "maps.bpf.h"
#include "fallback.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

FRAGD_STATS_MAP(fallback_stats, struct fallback_stats);

SEC("tracepoint/kmem/mm_page_alloc_extfrag")
int page_alloc_extfrag(struct trace_event_raw_mm_page_alloc_extfrag *ctx)
{
	struct fallback_stats *st = fragd_stats(&fallback_stats);
	__u32 alloc_mt, fallback_mt, claimed;

	if (!st)
		return 0;
	alloc_mt = fragd_migratetype(BPF_CORE_READ(ctx, alloc_migratetype));
	fallback_mt = fragd_migratetype(BPF_CORE_READ(ctx, fallback_migratetype));
	claimed = BPF_CORE_READ(ctx, change_ownership) ? 1 : 0;
	if (alloc_mt < FRAGD_NR_MT && fallback_mt < FRAGD_NR_MT)
		st->fallbacks[alloc_mt][fallback_mt][claimed]++;
	return 0;
}
