/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BPF-only helpers shared by fragd's programs. */
#ifndef FRAGD_MAPS_BPF_H
#define FRAGD_MAPS_BPF_H

#include "fragd_kernel.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "fragd_common.h"

/* The clock of the accounting logic (bpf/stall_logic.h, bpf/compaction_logic.h); the replay harness has its own. */
#define fragd_ktime() bpf_ktime_get_ns()

/* Per-CPU single-entry array holding a stats struct. */
#define FRAGD_STATS_MAP(name, vtype)                \
	struct {                                        \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);    \
		__uint(max_entries, 1);                     \
		__type(key, __u32);                         \
		__type(value, vtype);                       \
	} name SEC(".maps")

/* A per-CPU array of `n` latency histograms (struct fragd_hist), filled by fragd_hist_add. */
#define FRAGD_HIST_MAP(name, n)                     \
	struct {                                        \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);    \
		__uint(max_entries, n);                     \
		__type(key, __u32);                         \
		__type(value, struct fragd_hist);           \
	} name SEC(".maps")

static __always_inline void *fragd_stats(void *map)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(map, &zero);
}

/*
 * The bucket of `ns`, for indexing struct fragd_hist's buckets. The index is clamped as a
 * 64-bit value, then again after a compiler barrier, so the compare and the load use the
 * same register: older verifiers (Debian's 6.1) lose the bound of a 32-bit value copied to
 * another register ("R0 unbounded memory access").
 */
static __always_inline __u64 fragd_hist_index(__u64 ns)
{
	__u64 b = fragd_hist_bucket(ns);

	if (b > FRAGD_HIST_BUCKETS - 1)
		b = FRAGD_HIST_BUCKETS - 1;
	barrier_var(b);
	if (b > FRAGD_HIST_BUCKETS - 1)
		b = FRAGD_HIST_BUCKETS - 1;
	return b;
}

/* Adds one sample to histogram `key` of a per-CPU array of struct fragd_hist. */
static __always_inline void fragd_hist_add(void *map, __u32 key, __u64 ns)
{
	struct fragd_hist *h = bpf_map_lookup_elem(map, &key);

	if (!h)
		return;
	h->buckets[fragd_hist_index(ns)]++;
	h->count++;
	h->sum_ns += ns;
}

/* Kernel migratetype number -> enum fragd_migratetype, by CO-RE enum relocation. */
static __always_inline __u32 fragd_migratetype(int mt)
{
	if (mt == bpf_core_enum_value(enum migratetype, MIGRATE_UNMOVABLE))
		return FRAGD_MT_UNMOVABLE;
	if (mt == bpf_core_enum_value(enum migratetype, MIGRATE_MOVABLE))
		return FRAGD_MT_MOVABLE;
	if (mt == bpf_core_enum_value(enum migratetype, MIGRATE_RECLAIMABLE))
		return FRAGD_MT_RECLAIMABLE;
	if (mt == bpf_core_enum_value(enum migratetype, MIGRATE_HIGHATOMIC))
		return FRAGD_MT_HIGHATOMIC;
	if (bpf_core_enum_value_exists(enum migratetype, MIGRATE_CMA) &&
	    mt == bpf_core_enum_value(enum migratetype, MIGRATE_CMA))
		return FRAGD_MT_CMA;
	if (mt == bpf_core_enum_value(enum migratetype, MIGRATE_ISOLATE))
		return FRAGD_MT_ISOLATE;
	return FRAGD_MT_OTHER;
}

#endif /* FRAGD_MAPS_BPF_H */
