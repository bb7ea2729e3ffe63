/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared between bpf/stalls.bpf.c and the daemon: high-order allocation stalls. */
#ifndef FRAGD_ALLOC_H
#define FRAGD_ALLOC_H

#include "fragd_common.h"

#define FRAGD_COMM_LEN 16

/*
 * Counters, one per CPU (map alloc_stats, a single-entry per-CPU array).
 *
 * Two kinds. Slow-path counters come from the stall events alone and are exact
 * whether or not the mm_page_alloc program is attached: direct_entries and
 * phase_ns. Allocation counters (allocs, allocs_at_switch and the stall
 * histogram) need the mm_page_alloc program, which fragd attaches only while
 * allocation counting is on (bpf.allocations): they cover the allocations that
 * ended while it was attached.
 */
struct alloc_stats {
	__u64 allocs[FRAGD_NR_ORDERS][FRAGD_NR_OUTCOMES];
	/*
	 * Time in direct compaction (try_to_compact_pages to the end of its last
	 * zone run) and direct reclaim (begin to end), added as each phase ends.
	 */
	__u64 phase_ns[FRAGD_NR_ORDERS][FRAGD_NR_PHASES];
	/* Entries into direct compaction / direct reclaim (an allocation may enter several times). */
	__u64 direct_entries[FRAGD_NR_ORDERS][FRAGD_NR_PHASES];
	/*
	 * Allocations that ended while counting was on, in a task whose stall of
	 * that order opened before counting switched on: whether that stall was
	 * this allocation's cannot be told, so it is counted here, not in allocs.
	 */
	__u64 allocs_at_switch[FRAGD_NR_ORDERS];
	__u64 events_dropped;  /* slow-stall events the ring buffer had no room for */
	/*
	 * Stalls opened while allocation counting was on whose allocation's end
	 * was never seen (a missed or skipped mm_page_alloc run): given up when
	 * the task's next stall or allocation of that order came more than
	 * FRAGD_STALL_IDLE_NS after the stall's last event, or when a stall of
	 * another order opened in the task, by the order of the stall given up.
	 */
	__u64 stalls_abandoned[FRAGD_NR_ORDERS];
	/* Stall events not followed: no task storage (its allocation failed, or it was busy on that CPU). */
	__u64 events_no_storage;
	/* Wake-ups (alloc_wakeups) the ring buffer had no room for. */
	__u64 wakeups_dropped;
	/*
	 * In fragd's own processes (struct open_stall.own), kept out of every
	 * counter above: entries into direct compaction / reclaim, and
	 * allocations of order >= min_order that ended while counting was on.
	 */
	__u64 own_entries[FRAGD_NR_PHASES];
	__u64 own_allocs[FRAGD_NR_ORDERS];
	/*
	 * Attribution (maps stall_sites and stall_cgroups) that found its map full:
	 * the entries and phase time that have no site / no cgroup of their own.
	 * With them, the sites' and the cgroups' sums each equal direct_entries
	 * and phase_ns.
	 */
	__u64 sites_full_entries[FRAGD_NR_ORDERS];
	__u64 sites_full_ns[FRAGD_NR_ORDERS];
	__u64 cgroups_full_entries;
	__u64 cgroups_full_ns;
	/*
	 * Stall events counted under a site with no stack (stack_id < 0): the stack
	 * taken for them found no room in map stall_stacks (its bucket holds another
	 * stack: a hash collision), or none could be taken. Their call site is "unknown".
	 */
	__u64 stacks_lost;
	/*
	 * Allocations not granted, of every order (below min_order too), seen while
	 * counting was on, by whether the allocation could sleep: [o][0] could not
	 * (no __GFP_DIRECT_RECLAIM: GFP_ATOMIC, GFP_NOWAIT), [o][1] could. fragd's
	 * own are left out, as from allocs.
	 */
	__u64 failures[FRAGD_NR_ORDERS][2];
};

/* __GFP_DIRECT_RECLAIM (include/linux/gfp_types.h): bit 10 on every kernel fragd supports. */
#define FRAGD_GFP_DIRECT_RECLAIM 0x400u

/* Who stalls (enum fragd_task_kind): the kind of task that entered the stall. */
enum fragd_task_kind { FRAGD_TASK_USER, FRAGD_TASK_KHUGEPAGED, FRAGD_TASK_KTHREAD };

/*
 * Where a stall came from: key of map stall_sites. Every stall event (an entry
 * into direct compaction or reclaim) counts one entry under the key of its task
 * and call path, and the phase time that follows goes to the same key.
 */
struct stall_site_key {
	__u64 gfp;
	__s32 stack_id;   /* kernel stack in map stall_stacks; < 0: none (no room: alloc_stats.stacks_lost) */
	__u32 order;
	__u32 task_kind;  /* enum fragd_task_kind */
	__u32 pad;
};

/* Value of maps stall_sites and stall_cgroups (key: cgroup v2 id). */
struct stall_attr {
	__u64 entries;
	__u64 ns;
};

#define FRAGD_STALL_SITES 4096
/* Map failure_sites: failed allocations by site (key struct stall_site_key, value struct
 * stall_attr, entries only). Fewer than stall sites: the ways into a failure are few. */
#define FRAGD_FAILURE_SITES 1024
#define FRAGD_STALL_CGROUPS 8192
/*
 * Buckets of map stall_stacks unless attribution.stacks says otherwise (fragd sizes the map
 * between open and load). See bpf/stalls.bpf.c for why the map is sized, not cleared.
 */
#define FRAGD_STALL_STACKS 8192
#define FRAGD_STACK_DEPTH 20

enum stall_phase { PHASE_NONE, PHASE_COMPACTION, PHASE_RECLAIM };

/*
 * A task's open stall (task storage open_stalls in BPF). start_ns == 0: no
 * stall is open. own = 1: one of fragd's own processes (the child that grows a
 * pool to make free blocks), set by fragd through the task's pidfd before it
 * writes (a pidfd names the task itself, in any pid namespace): its stalls
 * and allocations are counted in own_entries and own_allocs only.
 */
struct open_stall {
	__u64 start_ns;
	__u64 last_ns;    /* the stall's last event: its phase's start or last mark */
	__u64 phase_ns[FRAGD_NR_PHASES];
	__u64 gfp;
	__u32 order;
	__u32 phase;      /* enum stall_phase */
	__u32 gen;        /* count_gen when the stall opened */
	__u32 own;
	/* The site and cgroup of the stall's latest event: its phase time goes to them. */
	struct stall_site_key site;
	__u64 cgroup_id;
};

/*
 * An open stall with no event (a phase start or end) for longer than this is
 * given up: its allocation ended unseen. Between two events of one allocation
 * the kernel's slow path only retries (get_page_from_freelist, cond_resched,
 * a 1-jiffy memalloc_retry_wait); its longer sleeps (reclaim throttling, up to
 * HZ/10) happen inside direct reclaim, between its begin and end events, and
 * costly orders (> 3) never reach the OOM killer. One second is ten times the
 * longest of them. A task kept off the CPU for longer between two events of one
 * allocation has that stall split: counted abandoned, then timed from the next event.
 */
#define FRAGD_STALL_IDLE_NS 1000000000ULL

/*
 * Allocation counting state, in the object's .bss, written by fragd:
 * count_gen goes up by one each time the mm_page_alloc program is attached or
 * detached (it starts at 0, so it is odd while the program is attached);
 * wake_armed = 1 asks the next stall event to send one record over ring buffer
 * alloc_wakeups, so fragd can switch counting on within the stall instead of
 * at its next tick.
 */

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
