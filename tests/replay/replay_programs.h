// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fragd's BPF programs (bpf/stalls.bpf.c, bpf/compaction.bpf.c) as user-space
 * functions over the same accounting logic (bpf/stall_logic.h,
 * bpf/compaction_logic.h), one per program: what each program does around
 * the logic (task storage, the runs map, histograms, ring buffers) is done
 * here on plain memory. The replay test (replay_test.cc) calls them with
 * recorded event sequences.
 */
#ifndef FRAGD_REPLAY_PROGRAMS_H
#define FRAGD_REPLAY_PROGRAMS_H

#include "stalls.h"
#include "compaction.h"

#ifdef __cplusplus
extern "C" {
#endif

#define REPLAY_MAX_TASKS 64

/* The state of the programs' maps and globals after a replay. */
struct replay_state {
	__u64 now;            /* the clock (fragd_ktime) */
	__u32 min_order;      /* rodata of stalls.bpf.c */
	__u64 slow_stall_ns;
	__u32 count_gen;      /* .bss, as fragd writes it */
	__u32 wake_armed;
	int counting;         /* the mm_page_alloc program is attached */
	struct alloc_stats alloc;
	struct compaction_stats compaction;
	struct fragd_hist stall_hist[FRAGD_STALL_HIST_ENTRIES];
	struct fragd_hist compaction_hist[FRAGD_NR_TRIGGERS];
	__u64 wakeups;        /* records sent over alloc_wakeups */
	__u64 slow_events;    /* records sent over slow_stalls */
};

/* A fresh state: the programs loaded with fragd's defaults, counting off. */
void replay_init(struct replay_state *r);

/* fragd's side: attach or detach the mm_page_alloc program (BpfPrograms::set_counting), arm a wake-up. */
void replay_set_counting(struct replay_state *r, int on);
void replay_arm_wakeup(struct replay_state *r);
/* fragd marks thread `tid` as its own (BpfPrograms::own_writer: open_stalls.own = 1 through its pidfd). */
void replay_own(struct replay_state *r, __u32 tid);

/*
 * Tracepoints, in thread `tid`. storage = 0: the task storage cannot be had
 * (bpf_task_storage_get returns NULL). memalloc: PF_MEMALLOC is set.
 * trigger and status: what trigger_of and status_of make of the event.
 * mm_page_alloc reaches its program only while counting is on.
 */
void replay_try_to_compact(struct replay_state *r, __u32 tid, int order, __u64 gfp, int storage);
void replay_reclaim_begin(struct replay_state *r, __u32 tid, int order, __u64 gfp, int storage);
void replay_reclaim_end(struct replay_state *r, __u32 tid);
void replay_page_alloc(struct replay_state *r, __u32 tid, __u32 order, int granted);
void replay_compaction_begin(struct replay_state *r, __u32 tid, __u32 trigger);
void replay_compaction_end(struct replay_state *r, __u32 tid, __u32 trigger, __u32 status, int memalloc);
void replay_migratepages(struct replay_state *r, __u32 tid, __u64 migrated, __u64 failed);

#ifdef __cplusplus
}
#endif

#endif /* FRAGD_REPLAY_PROGRAMS_H */
