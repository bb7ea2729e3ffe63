// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
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
