/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shared between bpf/fallback.bpf.c and the daemon: migratetype fallbacks. */
#ifndef FRAGD_FALLBACK_H
#define FRAGD_FALLBACK_H

#include "fragd_common.h"

/* Counters, one per CPU (map fallback_stats, a single-entry per-CPU array). */
struct fallback_stats {
	/* [requested migratetype][migratetype taken from][pageblock claimed 0/1] */
	__u64 fallbacks[FRAGD_NR_MT][FRAGD_NR_MT][2];
};

#endif /* FRAGD_FALLBACK_H */
