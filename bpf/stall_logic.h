/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The stall accounting of bpf/stalls.bpf.c: opening a stall, its phases, its
 * end, as functions of plain values and pointers. The BPF programs call them
 * with their task storage and per-CPU stats; tests/replay compiles the same
 * functions for user space and feeds them recorded event sequences
 * (BPF_PROG_TEST_RUN does not run tracepoint programs).
 *
 * The includer provides fragd_ktime() (bpf_ktime_get_ns in BPF, the replayed
 * event's time in the harness) and barrier_var() (bpf_helpers.h; an empty asm
 * in user space). Map lookups, ring buffers and histograms stay with the
 * caller: these functions say what to record.
 */
#ifndef FRAGD_STALL_LOGIC_H
#define FRAGD_STALL_LOGIC_H

#include "stalls.h"

/* What ended at an mm_page_alloc (stall_alloc_end). */
enum stall_alloc_end {
	ALLOC_UNSTALLED, /* no open stall of its order: fast, or failed without a stall */
	ALLOC_AT_SWITCH, /* the open stall began before counting switched */
	ALLOC_STALLED,   /* closed a stall: *dur and *now are set */
	ALLOC_OWN,       /* in one of fragd's own tasks: counted apart */
};

/* Orders above the table are counted in its last row. 64-bit so the verifier keeps the bound. */
FRAGD_INLINE __u64 clamp_order(__u32 order)
{
	__u64 o = order;

	if (o >= FRAGD_NR_ORDERS)
		o = FRAGD_NR_ORDERS - 1;
	barrier_var(o);
	if (o >= FRAGD_NR_ORDERS)
		o = FRAGD_NR_ORDERS - 1;
	return o;
}

/*
 * Gives up an open stall whose allocation ended unseen. It is counted only when
 * allocation counting was on for all of it (count_gen odd and unchanged since
 * it opened): then its mm_page_alloc would have closed it. With counting off
 * no stall is ever closed, and giving one up is routine.
 */
FRAGD_INLINE void stall_abandon(struct open_stall *s, struct alloc_stats *st, __u32 gen)
{
	/*
	 * A fresh load: where the compiler knows s->order equals the event's order it
	 * would reuse that register, bounded by an earlier clamp, and Debian 6.1's
	 * verifier follows the clamp's dead branch into an empty range ("R3 invalid
	 * mem access 'scalar'").
	 */
	__u32 order = *(volatile __u32 *)&s->order;

	if (st && s->gen == gen && (gen & 1))
		st->stalls_abandoned[clamp_order(order)]++;
	s->start_ns = 0;
}

/* No event of the open stall for longer than FRAGD_STALL_IDLE_NS: its allocation is over. */
FRAGD_INLINE int stall_stale(const struct open_stall *s, __u64 now)
{
	return now - s->last_ns > FRAGD_STALL_IDLE_NS;
}

/*
 * Adds the time since the phase's last mark to the stall and the counters, and
 * returns it (0 outside a phase): the caller adds it to the stall's site and cgroup.
 * Compaction time is marked at each zone run's end, so a direct compaction
 * whose task goes on to other work never runs on; reclaim is marked at its end.
 */
FRAGD_INLINE __u64 stall_mark_phase(struct open_stall *s, __u64 now, struct alloc_stats *st)
{
	__u64 d = now - s->last_ns;
	__u32 p;

	if (s->phase == PHASE_COMPACTION)
		p = FRAGD_PHASE_COMPACTION;
	else if (s->phase == PHASE_RECLAIM)
		p = FRAGD_PHASE_RECLAIM;
	else
		return 0;
	s->phase_ns[p] += d;
	if (st)
		st->phase_ns[clamp_order(s->order)][p] += d;
	s->last_ns = now;
	return d;
}

/*
 * A stall event of `order` (direct compaction or reclaim begins) in a task
 * whose storage is `s` (NULL: none could be had). Opens a stall, or enters a
 * new phase of the open one. Returns 1 when a stall opened (the caller sends
 * an armed wake-up).
 *
 * The open stall goes on only when it is of the same order and counting
 * period and had an event within FRAGD_STALL_IDLE_NS; otherwise its
 * allocation ended unseen and it is given up (stall_abandon).
 */
FRAGD_INLINE int stall_event(struct open_stall *s, struct alloc_stats *st, __u32 order, __u64 gfp,
			     __u32 phase, __u64 now, __u32 gen)
{
	if (s && s->own) {
		/* fragd's own process (a pool grown to make free blocks): not a stall of the host's. */
		if (st)
			st->own_entries[phase == PHASE_RECLAIM ? FRAGD_PHASE_RECLAIM : FRAGD_PHASE_COMPACTION]++;
		return 0;
	}
	if (st)
		st->direct_entries[clamp_order(order)][phase == PHASE_RECLAIM ? FRAGD_PHASE_RECLAIM
									  : FRAGD_PHASE_COMPACTION]++;
	if (!s) {
		if (st)
			st->events_no_storage++;
		return 0;
	}
	if (s->start_ns && s->order == order && s->gen == gen && !stall_stale(s, now)) {
		/* The previous phase ended at its last mark (a compaction run's end, a reclaim end). */
		s->phase = phase;
		s->last_ns = now;
		return 0;
	}
	if (s->start_ns)
		stall_abandon(s, st, gen);
	__builtin_memset(s, 0, sizeof(*s));  /* own is 0: fragd's tasks returned above */
	s->start_ns = now;
	s->last_ns = now;
	s->order = order;
	s->gfp = gfp;
	s->gen = gen;
	s->phase = phase;
	return 1;
}

/*
 * The end of a phase in the stall's task: a direct reclaim's end
 * (PHASE_RECLAIM: the phase closes) or a zone compaction run's end in direct
 * compaction (PHASE_COMPACTION: time up to here counts, the phase goes on
 * until the next event). Returns the time it counted.
 */
FRAGD_INLINE __u64 stall_phase_end(struct open_stall *s, struct alloc_stats *st, __u32 phase, __u64 now)
{
	__u64 d;

	if (!s || !s->start_ns || s->phase != phase)
		return 0;
	d = stall_mark_phase(s, now, st);
	if (phase == PHASE_RECLAIM)
		s->phase = PHASE_NONE;
	return d;
}

/*
 * A failed allocation in row `o` (clamp_order's), by whether it could sleep. The row is picked
 * by a branch, not by arithmetic on `o`: 6.1's verifier lost the bound then.
 */
FRAGD_INLINE void count_failure(struct alloc_stats *st, __u64 o, int can_sleep)
{
	if (can_sleep)
		st->failures[o][1]++;
	else
		st->failures[o][0]++;
}

/*
 * An allocation of `order` (>= min_order) ended in a task whose storage is `s`
 * (NULL: none). Counts it (one not granted also by whether it could sleep,
 * `can_sleep`: its gfp mask had __GFP_DIRECT_RECLAIM); when it closes the open stall, returns
 * ALLOC_STALLED with the time now and the stall's duration. The clock is read
 * only when a stall of its order is open: most allocations have none.
 */
FRAGD_INLINE int stall_alloc_end(struct open_stall *s, struct alloc_stats *st, __u32 order, int granted,
				 int can_sleep, __u32 gen, __u64 *now, __u64 *dur)
{
	__u64 o = clamp_order(order);

	if (s && s->own) {
		st->own_allocs[o]++;
		return ALLOC_OWN;
	}
	if (!granted)
		count_failure(st, o, can_sleep);
	if (!s || !s->start_ns || s->order != order) {
		/* No stall of this order in this task: the fast path (or a failure that never stalled). */
		st->allocs[o][granted ? FRAGD_OUTCOME_FAST : FRAGD_OUTCOME_FAILED]++;
		return ALLOC_UNSTALLED;
	}
	if (s->gen != gen) {
		/* Opened before this counting period: this allocation's, or one that ended unwatched. */
		st->allocs_at_switch[o]++;
		s->start_ns = 0;
		return ALLOC_AT_SWITCH;
	}
	*now = fragd_ktime();
	if (stall_stale(s, *now)) {
		/* The stall's allocation ended unseen long ago; this one took the fast path. */
		stall_abandon(s, st, gen);
		st->allocs[o][granted ? FRAGD_OUTCOME_FAST : FRAGD_OUTCOME_FAILED]++;
		return ALLOC_UNSTALLED;
	}
	*dur = *now - s->start_ns;
	s->phase = PHASE_NONE;
	st->allocs[o][granted ? FRAGD_OUTCOME_STALLED : FRAGD_OUTCOME_FAILED]++;
	s->start_ns = 0;  /* closed; the storage stays with the task for its next stall */
	return ALLOC_STALLED;
}

#endif /* FRAGD_STALL_LOGIC_H */
