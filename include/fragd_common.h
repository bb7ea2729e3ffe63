/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Constants and helpers shared by fragd's BPF programs and user space.
 * Plain C, fixed-width types only; included by the BPF programs in bpf/ and by daemon/.
 */
#ifndef FRAGD_COMMON_H
#define FRAGD_COMMON_H

#ifdef __BPF__
#include <linux/types.h>
#define FRAGD_INLINE static __always_inline
#else
#include <linux/types.h>
#define FRAGD_INLINE static inline
#endif

/* Orders 0..10 (MAX_PAGE_ORDER is 10 on x86_64); larger orders are clamped. */
#define FRAGD_NR_ORDERS 11

/* Allocation outcome, the `outcome` label of fragd_alloc_total. */
enum fragd_outcome {
	FRAGD_OUTCOME_FAST = 0,    /* granted without entering direct compaction/reclaim */
	FRAGD_OUTCOME_STALLED = 1, /* granted after a stall */
	FRAGD_OUTCOME_FAILED = 2,  /* not granted (page NULL), stalled or not */
	FRAGD_NR_OUTCOMES = 3,
};

/* Result of a stalled allocation, the `result` label of fragd_alloc_stall_seconds. */
enum fragd_result {
	FRAGD_RESULT_SUCCESS = 0,
	FRAGD_RESULT_FAILURE = 1,
	FRAGD_NR_RESULTS = 2,
};

/* Stall phases, the `phase` label of fragd_alloc_stall_phase_seconds_total. */
enum fragd_phase {
	FRAGD_PHASE_COMPACTION = 0,
	FRAGD_PHASE_RECLAIM = 1,
	FRAGD_NR_PHASES = 2,
};

/* Who ran a compaction, the `trigger` label of the fragd_compaction_* families. */
enum fragd_trigger {
	FRAGD_TRIGGER_DIRECT = 0,    /* an allocating task, in direct compaction */
	FRAGD_TRIGGER_KCOMPACTD = 1, /* kcompactd woken by kswapd/allocator demand */
	FRAGD_TRIGGER_PROACTIVE = 2, /* kcompactd's proactive compaction (vm.compaction_proactiveness) */
	FRAGD_TRIGGER_FRAGD = 3,     /* fragd itself (a write from fragd's process) */
	FRAGD_TRIGGER_MANUAL = 4,    /* other writers of compact_memory or nodeN/compact */
	FRAGD_NR_TRIGGERS = 5,
};

/* Status of a finished compaction run (decoded from enum compact_result). */
enum fragd_compact_status {
	FRAGD_CSTATUS_SUCCESS = 0,         /* COMPACT_SUCCESS: a page of the wanted order is free */
	FRAGD_CSTATUS_COMPLETE = 1,        /* COMPACT_COMPLETE: the whole zone was scanned */
	FRAGD_CSTATUS_PARTIAL_SKIPPED = 2, /* COMPACT_PARTIAL_SKIPPED: scanners met, parts skipped */
	FRAGD_CSTATUS_CONTENDED = 3,       /* COMPACT_CONTENDED: lock contention or a pending signal */
	FRAGD_CSTATUS_OTHER = 4,           /* any other compact_result */
	FRAGD_NR_CSTATUS = 5,
};

/* Migratetypes (decoded from enum migratetype with bpf_core_enum_value). */
enum fragd_migratetype {
	FRAGD_MT_UNMOVABLE = 0,
	FRAGD_MT_MOVABLE = 1,
	FRAGD_MT_RECLAIMABLE = 2,
	FRAGD_MT_HIGHATOMIC = 3,
	FRAGD_MT_CMA = 4,
	FRAGD_MT_ISOLATE = 5,
	FRAGD_MT_OTHER = 6,
	FRAGD_NR_MT = 7,
};

/*
 * Log-linear latency histogram over nanoseconds.
 *
 * Bucket 0 holds values below 2^FRAGD_HIST_MIN_SHIFT ns (1.024 us). Each power
 * of two from 2^MIN_SHIFT to 2^MAX_SHIFT ns is split into 2^SUB_BITS linear
 * buckets (8 per octave: a bucket is at most 12.5% wide, so a percentile read
 * at a bucket's midpoint is within +-6.25%). The last bucket holds values of
 * 2^MAX_SHIFT ns (17.2 s) and more.
 */
#define FRAGD_HIST_SUB_BITS 3
#define FRAGD_HIST_SUB (1u << FRAGD_HIST_SUB_BITS)
#define FRAGD_HIST_MIN_SHIFT 10
#define FRAGD_HIST_MAX_SHIFT 34
#define FRAGD_HIST_BUCKETS (2 + (FRAGD_HIST_MAX_SHIFT - FRAGD_HIST_MIN_SHIFT) * FRAGD_HIST_SUB)

/* floor(log2(v)) for v > 0, without loops (usable in BPF). */
FRAGD_INLINE __u32 fragd_log2(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
	s = (v > 0xFFFFULL) << 4;     v >>= s; r |= s;
	s = (v > 0xFFULL) << 3;       v >>= s; r |= s;
	s = (v > 0xFULL) << 2;        v >>= s; r |= s;
	s = (v > 0x3ULL) << 1;        v >>= s; r |= s;
	r |= (__u32)(v >> 1);
	return r;
}

FRAGD_INLINE __u32 fragd_hist_bucket(__u64 ns)
{
	__u32 k, sub;

	if (ns < (1ULL << FRAGD_HIST_MIN_SHIFT))
		return 0;
	k = fragd_log2(ns);
	if (k >= FRAGD_HIST_MAX_SHIFT)
		return FRAGD_HIST_BUCKETS - 1;
	sub = (__u32)(ns >> (k - FRAGD_HIST_SUB_BITS)) & (FRAGD_HIST_SUB - 1);
	return 1 + (k - FRAGD_HIST_MIN_SHIFT) * FRAGD_HIST_SUB + sub;
}

/* Inclusive lower bound of bucket b, in ns. */
FRAGD_INLINE __u64 fragd_hist_lower(__u32 b)
{
	__u32 k, sub;

	if (b == 0)
		return 0;
	if (b >= FRAGD_HIST_BUCKETS - 1)
		return 1ULL << FRAGD_HIST_MAX_SHIFT;
	k = FRAGD_HIST_MIN_SHIFT + (b - 1) / FRAGD_HIST_SUB;
	sub = (b - 1) % FRAGD_HIST_SUB;
	return (1ULL << k) + ((__u64)sub << (k - FRAGD_HIST_SUB_BITS));
}

/* Exclusive upper bound of bucket b, in ns (~0 for the last bucket). */
FRAGD_INLINE __u64 fragd_hist_upper(__u32 b)
{
	if (b >= FRAGD_HIST_BUCKETS - 1)
		return ~0ULL;
	return fragd_hist_lower(b + 1);
}

/* One latency histogram: buckets plus the count and sum needed by Prometheus. */
struct fragd_hist {
	__u64 buckets[FRAGD_HIST_BUCKETS];
	__u64 count;
	__u64 sum_ns;
};

#endif /* FRAGD_COMMON_H */
