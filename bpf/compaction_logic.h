/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The compaction run accounting of bpf/compaction.bpf.c: a run's begin, its
 * migration batches and its end, as functions of plain values and pointers.
 * The BPF programs call them with the thread's entry of map `runs` and the
 * per-CPU stats; tests/replay compiles the same functions for user space and
 * feeds them recorded event sequences. Map updates and histograms stay with
 * the caller: these functions say what to record.
 */
#ifndef FRAGD_COMPACTION_LOGIC_H
#define FRAGD_COMPACTION_LOGIC_H

#include "compaction.h"

/* A run in progress (map runs, keyed by thread id). */
struct run {
	__u64 start_ns;
	__u32 trigger;
	__u32 pad;
};

FRAGD_INLINE __u32 run_clamp_trigger(__u32 t)
{
	return t < FRAGD_NR_TRIGGERS ? t : FRAGD_TRIGGER_MANUAL;
}

/* A run begins: the thread's new entry. */
FRAGD_INLINE void run_begin(struct run *r, __u32 trigger, __u64 now)
{
	__builtin_memset(r, 0, sizeof(*r));
	r->start_ns = now;
	r->trigger = trigger;
}

/*
 * A migration batch of the thread whose run is `r` (NULL: no begin seen: the
 * run began before fragd attached). Returns 1 when the caller must store
 * `fresh` as the thread's run.
 */
FRAGD_INLINE int run_batch(struct compaction_stats *st, struct run *r, struct run *fresh, __u64 migrated,
			   __u64 failed)
{
	__u32 t;

	(void)fresh;
	if (!r) {
		st->runs_unmatched++;
		return 0;
	}
	t = run_clamp_trigger(r->trigger);
	st->pages_migrated[t] += migrated;
	st->pages_failed[t] += failed;
	return 0;
}

/*
 * The end of the thread's run `r` (NULL: none seen), with the trigger and
 * status its end event gives. Returns 1 when the run was timed: *trigger and
 * *dur are its duration sample. The caller deletes the thread's entry.
 */
FRAGD_INLINE int run_end(struct compaction_stats *st, const struct run *r, __u32 end_trigger, __u32 status,
			 __u64 now, __u32 *trigger, __u64 *dur)
{
	(void)end_trigger;
	if (!r) {
		st->runs_unmatched++;
		return 0;
	}
	*trigger = run_clamp_trigger(r->trigger);
	st->runs[*trigger][status]++;
	*dur = now - r->start_ns;
	return 1;
}

#endif /* FRAGD_COMPACTION_LOGIC_H */
