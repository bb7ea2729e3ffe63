/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Compaction runs: one mm_compaction_begin/end pair per zone compaction, in
 * whichever task runs it. The BTF tracepoints pass struct compact_control,
 * which says who asked: an allocating task (direct), kcompactd on demand,
 * kcompactd's proactive compaction, or a write to compact_memory /
 * nodeN/compact (order -1) from fragd itself or from anyone else. Direct
 * compaction in one of fragd's own processes (a pool it grows to make free
 * blocks) counts as fragd's.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "compaction_logic.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Who is fragd, set between open and load. Process ids are those of fragd's
 * pid namespace (dev and inode of its /proc/self/ns/pid): fragd's getpid() and
 * the pids of the processes it starts to write compact_memory or nodeN/compact
 * are namespace-relative, bpf_get_current_pid_tgid() is not. fragd_pidns_ino
 * 0: fragd could not read its namespace, and tgids are compared as
 * bpf_get_current_pid_tgid() gives them (right in the initial namespace only).
 */
const volatile __u32 fragd_tgid = 0;
const volatile __u64 fragd_pidns_dev = 0;
const volatile __u64 fragd_pidns_ino = 0;

/* The processes fragd started to write a compaction or pool file, by tgid in fragd's pid namespace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u8);
} fragd_writers SEC(".maps");

/* Runs in progress, keyed by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct run);
} runs SEC(".maps");

FRAGD_STATS_MAP(compaction_stats, struct compaction_stats);

FRAGD_HIST_MAP(compaction_hist, FRAGD_NR_TRIGGERS);

/* The current task is fragd or one of the processes it started to write a compaction or pool file. */
static __always_inline int is_fragd(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (fragd_pidns_ino) {
		struct bpf_pidns_info ns = {};

		/* Fails for a task outside fragd's pid namespace: not fragd's. */
		if (bpf_get_ns_current_pid_tgid(fragd_pidns_dev, fragd_pidns_ino, &ns, sizeof(ns)))
			return 0;
		tgid = ns.tgid;
	}
	return tgid == fragd_tgid || bpf_map_lookup_elem(&fragd_writers, &tgid) != NULL;
}

static __always_inline __u32 trigger_of(struct compact_control *cc)
{
	if (cc->proactive_compaction)
		return FRAGD_TRIGGER_PROACTIVE;
	if (cc->order != -1 && !cc->direct_compaction)
		return FRAGD_TRIGGER_KCOMPACTD;
	/*
	 * A write to compact_memory or nodeN/compact, by fragd or by someone else;
	 * or direct compaction, which in fragd's own process (a pool grown to make
	 * free blocks) is fragd's doing too.
	 */
	if (is_fragd())
		return FRAGD_TRIGGER_FRAGD;
	return cc->direct_compaction ? FRAGD_TRIGGER_DIRECT : FRAGD_TRIGGER_MANUAL;
}

static __always_inline __u32 status_of(int status)
{
	if (status == bpf_core_enum_value(enum compact_result, COMPACT_SUCCESS))
		return FRAGD_CSTATUS_SUCCESS;
	if (status == bpf_core_enum_value(enum compact_result, COMPACT_COMPLETE))
		return FRAGD_CSTATUS_COMPLETE;
	if (status == bpf_core_enum_value(enum compact_result, COMPACT_PARTIAL_SKIPPED))
		return FRAGD_CSTATUS_PARTIAL_SKIPPED;
	if (status == bpf_core_enum_value(enum compact_result, COMPACT_CONTENDED))
		return FRAGD_CSTATUS_CONTENDED;
	return FRAGD_CSTATUS_OTHER;
}

SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(compaction_begin, struct compact_control *cc, unsigned long zone_start,
	     unsigned long zone_end, bool sync)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct run r;

	run_begin(&r, trigger_of(cc), bpf_ktime_get_ns());
	bpf_map_update_elem(&runs, &tid, &r, BPF_ANY);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(compaction_end, struct compact_control *cc, unsigned long zone_start,
	     unsigned long zone_end, bool sync, int status)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct compaction_stats *st = fragd_stats(&compaction_stats);
	struct run *r = bpf_map_lookup_elem(&runs, &tid);
	__u32 trigger;
	__u64 dur;

	if (!st)
		return 0;
	if (run_end(st, r, trigger_of(cc), status_of(status), bpf_ktime_get_ns(), &trigger, &dur))
		fragd_hist_add(&compaction_hist, trigger, dur);
	if (r)
		bpf_map_delete_elem(&runs, &tid);
	return 0;
}

/* After each migration batch of a run; the classic record keeps nr_migrated and nr_failed. */
SEC("tracepoint/compaction/mm_compaction_migratepages")
int compaction_migratepages(struct trace_event_raw_mm_compaction_migratepages *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct compaction_stats *st = fragd_stats(&compaction_stats);
	struct run fresh;

	if (!st)
		return 0;
	if (run_batch(st, bpf_map_lookup_elem(&runs, &tid), &fresh, BPF_CORE_READ(ctx, nr_migrated),
		      BPF_CORE_READ(ctx, nr_failed)))
		bpf_map_update_elem(&runs, &tid, &fresh, BPF_NOEXIST);
	return 0;
}

/*
 * CMA allocations, timed from cma_alloc_start to cma_alloc_finish in the same task
 * (cma_alloc sleeps in the task that called it). Loaded only where the kernel has the
 * cma tracepoints (CONFIG_CMA). Raw tracepoints: the arguments keep their order (name
 * first, then pfn, page, count, align) in every kernel whose cma events carry the area's
 * name, while their types (count: int or long) and the trailing errorno vary; the
 * result is read from the page, NULL on failure in all of them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} cma_open SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FRAGD_CMA_AREAS);
	__type(key, struct cma_area_key);
	__type(value, struct cma_area_stats);
} cma_areas SEC(".maps");

/* Zeroes to create an area's entry from (its value is larger than the BPF stack). */
FRAGD_STATS_MAP(cma_zero, struct cma_area_stats);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cma_misc);
} cma_misc SEC(".maps");

static __always_inline struct cma_area_stats *cma_area(__u64 name)
{
	struct cma_area_key key = {};
	struct cma_area_stats *a;
	struct cma_misc *m;
	void *zero;

	bpf_probe_read_kernel_str(key.name, sizeof(key.name), (const void *)name);
	a = bpf_map_lookup_elem(&cma_areas, &key);
	if (a)
		return a;
	zero = fragd_stats(&cma_zero);
	if (zero)
		bpf_map_update_elem(&cma_areas, &key, zero, BPF_NOEXIST);
	a = bpf_map_lookup_elem(&cma_areas, &key);
	if (!a && (m = fragd_stats(&cma_misc)))
		__sync_fetch_and_add(&m->areas_full, 1);
	return a;
}

/* fragd_hist_add for a histogram that all CPUs share (atomic adds). */
static __always_inline void cma_hist_add(struct fragd_hist *h, __u64 ns)
{
	__sync_fetch_and_add(&h->buckets[fragd_hist_index(ns)], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum_ns, ns);
}

/* TP_PROTO(const char *name, unsigned long count, unsigned int align) */
SEC("raw_tp/cma_alloc_start")
int cma_alloc_start(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	struct cma_misc *m;

	if (bpf_map_update_elem(&cma_open, &tid, &now, BPF_ANY) && (m = fragd_stats(&cma_misc)))
		__sync_fetch_and_add(&m->open_lost, 1);
	return 0;
}

/* TP_PROTO(const char *name, unsigned long pfn, const struct page *page, unsigned long count, unsigned int align[, int errorno]) */
SEC("raw_tp/cma_alloc_finish")
int cma_alloc_finish(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 res = ctx->args[2] ? FRAGD_RESULT_SUCCESS : FRAGD_RESULT_FAILURE;
	struct cma_area_stats *a = cma_area(ctx->args[0]);
	__u64 *start = bpf_map_lookup_elem(&cma_open, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (a) {
		__sync_fetch_and_add(&a->pages[res & 1], ctx->args[3]);
		if (start && now >= *start)
			cma_hist_add(&a->hist[res & 1], now - *start);
		else
			__sync_fetch_and_add(&a->unmatched, 1);
	}
	if (start)
		bpf_map_delete_elem(&cma_open, &tid);
	return 0;
}

/* TP_PROTO(const char *name, unsigned long pfn, const struct page *page, unsigned long count, unsigned int align) */
SEC("raw_tp/cma_alloc_busy_retry")
int cma_alloc_busy_retry(struct bpf_raw_tracepoint_args *ctx)
{
	struct cma_area_stats *a = cma_area(ctx->args[0]);

	if (a)
		__sync_fetch_and_add(&a->busy_retries, 1);
	return 0;
}
