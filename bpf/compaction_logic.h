/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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

/*
 * A run in progress (map runs, keyed by thread id). A run that began before
 * fragd attached is first seen at a migration batch: its entry has start_ns 0
 * and gathers its pages until its end says who ran it.
 */
struct run {
	__u64 start_ns;        /* 0: begun before fragd attached */
	__u64 pages_migrated;  /* such a run's pages so far */
	__u64 pages_failed;
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
 * A migration batch of the thread whose run is `r` (NULL: no entry: the run
 * began before fragd attached). A run with a begin counts its pages at once,
 * by its trigger. One without keeps them in its entry until its end names the
 * trigger: returns 1 when the caller must store `fresh` as the thread's entry.
 */
FRAGD_INLINE int run_batch(struct compaction_stats *st, struct run *r, struct run *fresh, __u64 migrated,
			   __u64 failed)
{
	__u32 t;

	if (!r) {
		__builtin_memset(fresh, 0, sizeof(*fresh));
		fresh->pages_migrated = migrated;
		fresh->pages_failed = failed;
		return 1;
	}
	if (!r->start_ns) {
		r->pages_migrated += migrated;
		r->pages_failed += failed;
		return 0;
	}
	t = run_clamp_trigger(r->trigger);
	st->pages_migrated[t] += migrated;
	st->pages_failed[t] += failed;
	return 0;
}

/*
 * The end of the thread's run `r` (NULL: none seen), with the trigger and
 * status its end event gives. A run without a begin is counted once in
 * runs_unmatched, its batches' pages under the end's trigger; it is not in
 * runs[][] nor timed. Returns 1 when the run was timed: *trigger and *dur are
 * its duration sample. The caller deletes the thread's entry.
 */
FRAGD_INLINE int run_end(struct compaction_stats *st, const struct run *r, __u32 end_trigger, __u32 status,
			 __u64 now, __u32 *trigger, __u64 *dur)
{
	if (!r || !r->start_ns) {
		st->runs_unmatched++;
		if (r) {
			__u32 t = run_clamp_trigger(end_trigger);

			st->pages_migrated[t] += r->pages_migrated;
			st->pages_failed[t] += r->pages_failed;
		}
		return 0;
	}
	*trigger = run_clamp_trigger(r->trigger);
	st->runs[*trigger][status]++;
	*dur = now - r->start_ns;
	return 1;
}

#endif /* FRAGD_COMPACTION_LOGIC_H */
