/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * High-order allocation stalls, timed with tracepoints only.
 *
 * There is no tracepoint at allocation entry. Per task, the first stall event
 * (mm_compaction_try_to_compact_pages or mm_vmscan_direct_reclaim_begin) of
 * order >= min_order opens a stall; kmem:mm_page_alloc of that order in that
 * task closes it (granted if page != NULL). Per-task state lives in task storage. mm_page_alloc with no open stall is
 * a fast-path allocation. The stall time is therefore a lower bound of the
 * allocation's latency: the fast-path attempt before the first stall event is
 * not seen.
 *
 * mm_page_alloc fires for every page, so fragd attaches page_alloc_btf only
 * while allocation counting is on (bpf.allocations). Everything else here is
 * on the slow path and stays attached: entries into direct compaction and
 * reclaim, and the time spent in each (reclaim: begin to end; compaction:
 * try_to_compact_pages to the end of its last zone run), are exact whether
 * mm_page_alloc is watched or not.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "stall_logic.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Knobs, set by fragd between open and load. */
const volatile __u32 min_order = 1;
const volatile __u64 slow_stall_ns = 10 * 1000 * 1000ULL;
/* A stack is taken at most this often per (task kind, gfp, order); 0: at every stall. */
const volatile __u64 stack_interval_ns = 1000 * 1000 * 1000ULL;

/* Allocation counting state, written by fragd (include/stalls.h). */
__u32 count_gen = 0;
__u32 wake_armed = 0;

/* PF_MEMALLOC (include/linux/sched.h): set around direct compaction and reclaim. */
#define FRAGD_PF_MEMALLOC 0x00000800
/* PF_KTHREAD: a kernel thread. */
#define FRAGD_PF_KTHREAD 0x00200000

/*
 * Open stalls in task-local storage: a pointer walk from the current task
 * instead of a hash lookup on every high-order allocation, and freed with
 * the task if it dies mid-stall. start_ns == 0 means no stall is open.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct open_stall);
} open_stalls SEC(".maps");

FRAGD_STATS_MAP(alloc_stats, struct alloc_stats);

FRAGD_HIST_MAP(stall_hist, FRAGD_STALL_HIST_ENTRIES);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} slow_stalls SEC(".maps");

/* One record (the stall's order) when a stall opens while fragd asked for a wake-up. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} alloc_wakeups SEC(".maps");

/*
 * Attribution: stall entries and phase time by site (task kind, gfp, order,
 * kernel stack) and by cgroup. fragd reads them, names the consumer and the call
 * site from the stack, and deletes the entries of cgroups that are gone.
 *
 * stall_stacks: a stack's id is its hash's bucket. Flags 0: a stack whose bucket
 * holds another one gets -EEXIST and its stalls count under no stack (call site
 * "unknown", alloc_stats.stacks_lost). The map is sized, not recycled, because fragd
 * relies on an id naming one stack for good: it reads each id's frames once and
 * classifies each site (task kind, gfp, order, stack id) once (daemon/concerns/attribution).
 * BPF_F_REUSE_STACKID would overwrite a bucket with the colliding stack, so an id
 * would name another stack later, its stalls added to the first one's site and
 * named with its frames, and the loss would go uncounted; deleting ids fragd has
 * read would do the same to the next stack hashed to that bucket. The stacks that
 * stall on a host are its call paths into direct compaction and reclaim, a set
 * that stops growing (hundreds), so the map fills once: with n distinct stacks in
 * m buckets about n*n/(2m) collide, 5 of 300 at the default 8192 (include/stalls.h),
 * 22 at 2048. attribution.stacks sizes it for a host that shows more in
 * fragd_stall_stacks_lost_total.
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, FRAGD_STALL_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FRAGD_STACK_DEPTH * sizeof(__u64));
} stall_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FRAGD_STALL_SITES);
	__type(key, struct stall_site_key);
	__type(value, struct stall_attr);
} stall_sites SEC(".maps");

/* Failed allocations by site: entries is the count (bpf/stalls.bpf.c failure_site). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FRAGD_FAILURE_SITES);
	__type(key, struct stall_site_key);
	__type(value, struct stall_attr);
} failure_sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FRAGD_STALL_CGROUPS);
	__type(key, __u64);
	__type(value, struct stall_attr);
} stall_cgroups SEC(".maps");

/*
 * The last stack taken per (task kind, gfp, order) and when. Unwinding the kernel stack is the
 * costly part of a stall event (bench/stall_cost.sh: 8.9 us a run with a stack at every stall,
 * 1.1 us sampled, on stalls of 0.5 ms), so stalls of one kind within stack_interval_ns count
 * under the stack taken last. LRU: a kind not seen for long makes room.
 */
struct stack_sample {
	__u64 last_ns;
	__s32 stack_id;
	__u32 pad;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct stall_site_key);  /* stack_id -1: the kind alone */
	__type(value, struct stack_sample);
} stack_samples SEC(".maps");

/*
 * A stack that found no room counts for its interval too: with flags 0 its bucket stays
 * another stack's, so taking it again at the next stall would fail again at the full cost.
 */
static __always_inline __s32 stall_stack(void *ctx, const struct stall_site_key *kind, __u64 now)
{
	struct stack_sample *last = bpf_map_lookup_elem(&stack_samples, kind);
	struct stack_sample fresh = {};

	if (last && now - last->last_ns < stack_interval_ns)
		return last->stack_id;
	fresh.last_ns = now;
	fresh.stack_id = bpf_get_stackid(ctx, &stall_stacks, 0);
	bpf_map_update_elem(&stack_samples, kind, &fresh, BPF_ANY);
	return fresh.stack_id;
}

/* Adds to `key`'s entry of `map`, making it; 1 when the map is full (nothing added). */
static __always_inline int attr_add(void *map, const void *key, __u64 entries, __u64 ns)
{
	struct stall_attr *a = bpf_map_lookup_elem(map, key);

	if (!a) {
		struct stall_attr zero = {};

		bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
		a = bpf_map_lookup_elem(map, key);
		if (!a)
			return 1;
	}
	__sync_fetch_and_add(&a->entries, entries);
	__sync_fetch_and_add(&a->ns, ns);
	return 0;
}

/* The stall's site and cgroup get `entries` and `ns`; what finds its map full goes to the stats. */
static __always_inline void attribute(const struct stall_site_key *site, __u64 cgroup_id, __u64 entries,
				      __u64 ns, struct alloc_stats *st)
{
	if (attr_add(&stall_sites, site, entries, ns) && st) {
		__u64 o = clamp_order(site->order);

		st->sites_full_entries[o] += entries;
		st->sites_full_ns[o] += ns;
	}
	if (attr_add(&stall_cgroups, &cgroup_id, entries, ns) && st) {
		st->cgroups_full_entries += entries;
		st->cgroups_full_ns += ns;
	}
}

static __always_inline __u32 task_kind(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	char comm[FRAGD_COMM_LEN] = {};

	if (!(task->flags & FRAGD_PF_KTHREAD))
		return FRAGD_TASK_USER;
	bpf_get_current_comm(comm, sizeof(comm));
	if (comm[0] == 'k' && comm[1] == 'h' && comm[2] == 'u' && comm[3] == 'g' && comm[4] == 'e' &&
	    comm[5] == 'p' && comm[6] == 'a' && comm[7] == 'g' && comm[8] == 'e' && comm[9] == 'd' && comm[10] == 0)
		return FRAGD_TASK_KHUGEPAGED;
	return FRAGD_TASK_KTHREAD;
}

/* A stall event of `order` in the current task: open the stall or enter a new phase. */
static __always_inline void on_stall_event(void *ctx, __u32 order, __u64 gfp, __u32 phase)
{
	struct open_stall *s = bpf_task_storage_get(&open_stalls, bpf_get_current_task_btf(), 0,
						    BPF_LOCAL_STORAGE_GET_F_CREATE);
	struct alloc_stats *st = fragd_stats(&alloc_stats);
	struct stall_site_key site = {};
	__u64 cgroup_id;

	__u64 now = bpf_ktime_get_ns();
	int opened = stall_event(s, st, order, gfp, phase, now, count_gen);

	if (opened && wake_armed) {
		__u32 o = order;

		wake_armed = 0;
		if (bpf_ringbuf_output(&alloc_wakeups, &o, sizeof(o), BPF_RB_FORCE_WAKEUP) && st)
			st->wakeups_dropped++;
	}
	if (s && s->own)
		return;  /* fragd's own: counted apart by stall_event */
	if (s && !opened && s->start_ns) {
		/* The next event of an open stall: the same allocation, its site and cgroup. */
		if (s->site.stack_id < 0 && st)
			st->stacks_lost++;
		attribute(&s->site, s->cgroup_id, 1, 0, st);
		return;
	}
	site.gfp = gfp;
	site.order = order;
	site.task_kind = task_kind();
	/* The stack at the stall's first event, or the last one of its kind (stall_stack). */
	site.stack_id = -1;
	site.stack_id = stall_stack(ctx, &site, now);
	cgroup_id = bpf_get_current_cgroup_id();
	if (site.stack_id < 0 && st)
		st->stacks_lost++;
	attribute(&site, cgroup_id, 1, 0, st);
	if (s) {
		s->site = site;
		s->cgroup_id = cgroup_id;
	}
}

/* The end of a phase in the current task: its time to the counters, the site and the cgroup. */
static __always_inline void on_phase_end(struct open_stall *s, __u32 phase)
{
	struct alloc_stats *st = fragd_stats(&alloc_stats);
	__u64 d = stall_phase_end(s, st, phase, bpf_ktime_get_ns());

	if (d && s)
		attribute(&s->site, s->cgroup_id, 0, d, st);
}

static __always_inline void emit_slow(const struct open_stall *s, __u64 now, __u64 dur,
				      __u32 result, struct alloc_stats *st)
{
	struct stall_event *e = bpf_ringbuf_reserve(&slow_stalls, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		st->events_dropped++;
		return;
	}
	e->ts_ns = now;
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->gfp = s->gfp;
	e->duration_ns = dur;
	e->compact_ns = s->phase_ns[FRAGD_PHASE_COMPACTION];
	e->reclaim_ns = s->phase_ns[FRAGD_PHASE_RECLAIM];
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->order = s->order;
	e->result = result;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* gfp fields grew from 4 to 8 bytes around 5.18: read whatever size this kernel has. */
#define READ_GFP(ptr, field)                                              \
	({                                                                    \
		__u64 __v = 0;                                                    \
		if (bpf_core_field_size(ptr->field) == 4) {                       \
			__u32 __w = 0;                                                \
			bpf_core_read(&__w, sizeof(__w), &ptr->field);                \
			__v = __w;                                                    \
		} else {                                                          \
			bpf_core_read(&__v, sizeof(__v), &ptr->field);                \
		}                                                                 \
		__v;                                                              \
	})

/*
 * A failed allocation's site (task kind, gfp, order, kernel stack): fragd names its consumer as
 * for a stall. Only on the failure branch, so the cost of the stack (sampled per kind, as a
 * stall's) is paid per failure; a failure that finds the map full stays in alloc_stats.failures
 * alone (consumer "other" there).
 */
static __always_inline void failure_site(void *ctx, __u32 order, __u64 gfp)
{
	struct stall_site_key site = {};

	site.gfp = gfp;
	site.order = order;
	site.task_kind = task_kind();
	site.stack_id = -1;
	site.stack_id = stall_stack(ctx, &site, bpf_ktime_get_ns());
	attr_add(&failure_sites, &site, 1, 0);
}

/* End of an allocation attempt of order >= min_order. */
static __always_inline int on_alloc(void *ctx, __u32 order, bool granted, __u64 gfp)
{
	struct alloc_stats *st = fragd_stats(&alloc_stats);
	struct open_stall *s;
	__u64 now, dur;
	int end;

	if (!st)
		return 0;
	s = bpf_task_storage_get(&open_stalls, bpf_get_current_task_btf(), 0, 0);
	end = stall_alloc_end(s, st, order, granted, (gfp & FRAGD_GFP_DIRECT_RECLAIM) != 0, count_gen, &now, &dur);
	if (!granted && end != ALLOC_OWN)
		failure_site(ctx, order, gfp);
	if (end == ALLOC_STALLED) {
		__u32 result = granted ? FRAGD_RESULT_SUCCESS : FRAGD_RESULT_FAILURE;

		fragd_hist_add(&stall_hist, FRAGD_STALL_HIST_KEY(clamp_order(order), result), dur);
		if (dur >= slow_stall_ns)
			emit_slow(s, now, dur, result, st);
	}
	return 0;
}

/* A failed allocation below min_order: counted with its site, nothing else is traced at these orders. */
static __always_inline int on_low_failure(void *ctx, __u32 order, __u64 gfp)
{
	struct alloc_stats *st = fragd_stats(&alloc_stats);

	if (st) {
		count_failure(st, clamp_order(order), (gfp & FRAGD_GFP_DIRECT_RECLAIM) != 0);
		failure_site(ctx, order, gfp);
	}
	return 0;
}

/* kmem:mm_page_alloc as a BTF tracepoint: no record is built, cheapest on the order-0 path. */
SEC("tp_btf/mm_page_alloc")
int BPF_PROG(page_alloc_btf, struct page *page, unsigned int order, unsigned int gfp, int migratetype)
{
	if (order < min_order)
		return page ? 0 : on_low_failure(ctx, order, gfp);
	return on_alloc(ctx, order, page != NULL, gfp);
}

/* The same from the classic record, for kernels whose BTF lacks btf_trace_mm_page_alloc. */
SEC("tracepoint/kmem/mm_page_alloc")
int page_alloc_tp(struct trace_event_raw_mm_page_alloc *ctx)
{
	__u32 order = BPF_CORE_READ(ctx, order);
	bool granted = BPF_CORE_READ(ctx, pfn) != (unsigned long)-1;

	if (order < min_order)
		return granted ? 0 : on_low_failure(ctx, order, READ_GFP(ctx, gfp_flags));
	return on_alloc(ctx, order, granted, READ_GFP(ctx, gfp_flags));
}

/*
 * An event that opens (or continues) a stall: the record's order, then its gfp mask read
 * only for orders fragd traces (order -1, and orders below min_order, return at once).
 */
#define STALL_ENTRY(ctx, gfp_field, phase)                                        \
	({                                                                        \
		int __order = BPF_CORE_READ(ctx, order);                          \
		if (__order >= 0 && (__u32)__order >= min_order)                  \
			on_stall_event(ctx, __order, READ_GFP(ctx, gfp_field), phase); \
		0;                                                                \
	})

SEC("tracepoint/compaction/mm_compaction_try_to_compact_pages")
int try_to_compact(struct trace_event_raw_mm_compaction_try_to_compact_pages *ctx)
{
	return STALL_ENTRY(ctx, gfp_mask, PHASE_COMPACTION);
}

SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_begin")
int reclaim_begin(struct trace_event_raw_mm_vmscan_direct_reclaim_begin_template *ctx)
{
	return STALL_ENTRY(ctx, gfp_flags, PHASE_RECLAIM);
}

SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_end")
int reclaim_end(void *ctx)
{
	on_phase_end(bpf_task_storage_get(&open_stalls, bpf_get_current_task_btf(), 0, 0), PHASE_RECLAIM);
	return 0;
}

/*
 * The end of one zone's compaction run. In the task of an open compaction
 * phase with PF_MEMALLOC set (inside __alloc_pages_direct_compact), it is a
 * run of that direct compaction: time up to here counts. A task that writes
 * compact_memory runs compaction without PF_MEMALLOC and is left alone.
 */
SEC("tracepoint/compaction/mm_compaction_end")
int compaction_run_end(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct open_stall *s;

	if (!(task->flags & FRAGD_PF_MEMALLOC))
		return 0;
	s = bpf_task_storage_get(&open_stalls, task, 0, 0);
	on_phase_end(s, PHASE_COMPACTION);
	return 0;
}
