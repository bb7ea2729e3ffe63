/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shared between bpf/alloc.bpf.c and the daemon: high-order allocation stalls. */
#ifndef FRAGD_ALLOC_H
#define FRAGD_ALLOC_H

#include "fragd_common.h"

#define FRAGD_COMM_LEN 16

/* Counters, one per CPU (map alloc_stats, a single-entry per-CPU array). */
struct alloc_stats {
	__u64 allocs[FRAGD_NR_ORDERS][FRAGD_NR_OUTCOMES];
	__u64 phase_ns[FRAGD_NR_ORDERS][FRAGD_NR_PHASES];
	/* Entries into direct compaction / direct reclaim (an allocation may enter several times). */
	__u64 direct_entries[FRAGD_NR_ORDERS][FRAGD_NR_PHASES];
	__u64 events_dropped;  /* slow-stall events the ring buffer had no room for */
};

/* Key of map stall_hist (per-CPU array of struct fragd_hist). */
#define FRAGD_STALL_HIST_KEY(order, result) ((order) * FRAGD_NR_RESULTS + (result))
#define FRAGD_STALL_HIST_ENTRIES (FRAGD_NR_ORDERS * FRAGD_NR_RESULTS)

/* A stall slower than the threshold, sent over ring buffer slow_stalls. */
struct stall_event {
	__u64 ts_ns;        /* CLOCK_MONOTONIC (bpf_ktime_get_ns) at completion */
	__u64 cgroup_id;
	__u64 gfp;
	__u64 duration_ns;  /* first stall event to completion */
	__u64 compact_ns;   /* time in direct compaction */
	__u64 reclaim_ns;   /* time in direct reclaim */
	__u32 pid;          /* tgid */
	__u32 tid;
	__u32 order;
	__u32 result;       /* enum fragd_result */
	char comm[FRAGD_COMM_LEN];
};

#endif /* FRAGD_ALLOC_H */
