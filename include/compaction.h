/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
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

#endif /* FRAGD_COMPACTION_H */
