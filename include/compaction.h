/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared between bpf/compaction.bpf.c and the daemon: compaction runs. */
#ifndef FRAGD_COMPACTION_H
#define FRAGD_COMPACTION_H

#include "fragd_common.h"

/* Counters, one per CPU (map compaction_stats, a single-entry per-CPU array). */
struct compaction_stats {
	__u64 runs[FRAGD_NR_TRIGGERS][FRAGD_NR_CSTATUS];
	__u64 pages_migrated[FRAGD_NR_TRIGGERS];
	__u64 pages_failed[FRAGD_NR_TRIGGERS];
	/*
	 * Runs whose begin was not seen (under way when fragd attached), once each
	 * at their end; their pages are in pages_migrated/failed under the trigger
	 * their end names, they are not in runs[][] nor in compaction_hist.
	 */
	__u64 runs_unmatched;
};

/* Map compaction_hist: per-CPU array of struct fragd_hist, key = enum fragd_trigger. */

/*
 * CMA allocations (cma:cma_alloc_start / cma_alloc_finish / cma_alloc_busy_retry, on
 * kernels built with CONFIG_CMA): map cma_areas, a hash keyed by the area's name (the
 * kernel's cma->name, cut to FRAGD_CMA_NAME - 1 bytes), FRAGD_CMA_AREAS areas at most
 * (the kernel's MAX_CMA_AREAS is 8 to 20 in common configurations; events of areas
 * beyond are counted in map cma_misc's areas_full).
 */
#define FRAGD_CMA_NAME 32
#define FRAGD_CMA_AREAS 64

struct cma_area_key {
	char name[FRAGD_CMA_NAME];
};

struct cma_area_stats {
	/* cma_alloc_start to cma_alloc_finish in the same task, by enum fragd_result (failure: no page). */
	struct fragd_hist hist[FRAGD_NR_RESULTS];
	__u64 pages[FRAGD_NR_RESULTS];  /* pages asked for by those allocations */
	__u64 busy_retries;             /* cma_alloc_busy_retry: a range was busy, tried the next one */
	__u64 unmatched;                /* finishes whose start was not seen (under way at attach): not timed */
};

/* Map cma_misc: one entry. */
struct cma_misc {
	__u64 areas_full;  /* events of an area that found cma_areas full: not counted */
	__u64 open_lost;   /* starts that could not be recorded (cma_open full): their finish is unmatched */
};

#endif /* FRAGD_COMPACTION_H */
