/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The programs of bpf/stalls.bpf.c and bpf/compaction.bpf.c in user space:
 * each function below does what its program does, in the same order, around
 * the same logic headers; the BPF maps are plain memory (task storage: one
 * struct per thread; the runs map: one entry per thread). Keep each in step
 * with its program.
 */
#include <stdlib.h>
#include <string.h>

#include "replay_programs.h"

/* What maps.bpf.h gives the logic in BPF. */
#define barrier_var(var) __asm__ __volatile__("" : "+r"(var))
static __u64 replay_clock;
#define fragd_ktime() (replay_clock)

#include "stall_logic.h"
#include "compaction_logic.h"

/* One thread: its task storage (open_stalls) and its entry of map runs. */
struct replay_task {
	__u32 tid;
	int has_stall;
	struct open_stall stall;
	int has_run;
	struct run run;
};

static struct replay_task tasks[REPLAY_MAX_TASKS];
static int ntasks;

/* The thread's slot, made on first use (a replay names at most REPLAY_MAX_TASKS threads). */
static struct replay_task *task(__u32 tid)
{
	for (int i = 0; i < ntasks; i++)
		if (tasks[i].tid == tid)
			return &tasks[i];
	if (ntasks == REPLAY_MAX_TASKS)
		abort();
	memset(&tasks[ntasks], 0, sizeof(tasks[ntasks]));
	tasks[ntasks].tid = tid;
	return &tasks[ntasks++];
}

/* bpf_task_storage_get(&open_stalls, task, 0, create ? F_CREATE : 0) */
static struct open_stall *storage_get(__u32 tid, int create)
{
	struct replay_task *t = task(tid);

	if (!t->has_stall && create) {
		memset(&t->stall, 0, sizeof(t->stall));
		t->has_stall = 1;
	}
	return t->has_stall ? &t->stall : NULL;
}

void replay_own(struct replay_state *r, __u32 tid)
{
	(void)r;
	storage_get(tid, 1)->own = 1;
}

/* fragd_hist_add (maps.bpf.h) */
static void hist_add(struct fragd_hist *h, __u64 ns)
{
	__u32 b = fragd_hist_bucket(ns);

	h->buckets[b < FRAGD_HIST_BUCKETS ? b : FRAGD_HIST_BUCKETS - 1]++;
	h->count++;
	h->sum_ns += ns;
}

void replay_init(struct replay_state *r)
{
	memset(r, 0, sizeof(*r));
	r->min_order = 1;
	r->slow_stall_ns = 10 * 1000 * 1000ULL;
	ntasks = 0;
}

void replay_set_counting(struct replay_state *r, int on)
{
	if (!on == !r->counting)
		return;
	r->count_gen++;
	r->counting = on;
}

void replay_arm_wakeup(struct replay_state *r) { r->wake_armed = 1; }

/* on_stall_event, behind STALL_ENTRY */
static void stall_entry(struct replay_state *r, __u32 tid, int order, __u64 gfp, __u32 phase, int storage)
{
	if (order < 0 || (__u32)order < r->min_order)
		return;
	replay_clock = r->now;
	struct open_stall *s = storage ? storage_get(tid, 1) : NULL;

	if (stall_event(s, &r->alloc, order, gfp, phase, r->now, r->count_gen) && r->wake_armed) {
		r->wake_armed = 0;
		r->wakeups++;
	}
}

void replay_try_to_compact(struct replay_state *r, __u32 tid, int order, __u64 gfp, int storage)
{
	stall_entry(r, tid, order, gfp, PHASE_COMPACTION, storage);
}

void replay_reclaim_begin(struct replay_state *r, __u32 tid, int order, __u64 gfp, int storage)
{
	stall_entry(r, tid, order, gfp, PHASE_RECLAIM, storage);
}

void replay_reclaim_end(struct replay_state *r, __u32 tid)
{
	stall_phase_end(storage_get(tid, 0), &r->alloc, PHASE_RECLAIM, r->now);
}

/* page_alloc_btf / page_alloc_tp, then on_alloc */
void replay_page_alloc(struct replay_state *r, __u32 tid, __u32 order, int granted)
{
	__u64 now, dur;

	if (!r->counting || order < r->min_order)
		return;
	replay_clock = r->now;
	struct open_stall *s = storage_get(tid, 0);

	if (stall_alloc_end(s, &r->alloc, order, granted, 1, r->count_gen, &now, &dur) == ALLOC_STALLED) {
		__u32 result = granted ? FRAGD_RESULT_SUCCESS : FRAGD_RESULT_FAILURE;

		hist_add(&r->stall_hist[FRAGD_STALL_HIST_KEY(clamp_order(order), result)], dur);
		if (dur >= r->slow_stall_ns)
			r->slow_events++;
	}
}

void replay_compaction_begin(struct replay_state *r, __u32 tid, __u32 trigger)
{
	struct replay_task *t = task(tid);

	run_begin(&t->run, trigger, r->now);
	t->has_run = 1;
}

/* mm_compaction_end runs two programs: compaction_end (compaction.bpf.c) and compaction_run_end (stalls.bpf.c). */
void replay_compaction_end(struct replay_state *r, __u32 tid, __u32 trigger, __u32 status, int memalloc)
{
	struct replay_task *t = task(tid);
	__u32 hist_trigger;
	__u64 dur;

	if (run_end(&r->compaction, t->has_run ? &t->run : NULL, trigger, status, r->now, &hist_trigger, &dur))
		hist_add(&r->compaction_hist[hist_trigger], dur);
	t->has_run = 0;

	if (memalloc)
		stall_phase_end(storage_get(tid, 0), &r->alloc, PHASE_COMPACTION, r->now);
}

void replay_migratepages(struct replay_state *r, __u32 tid, __u64 migrated, __u64 failed)
{
	struct replay_task *t = task(tid);
	struct run fresh;

	if (run_batch(&r->compaction, t->has_run ? &t->run : NULL, &fresh, migrated, failed) && !t->has_run) {
		t->run = fresh;
		t->has_run = 1;
	}
}
