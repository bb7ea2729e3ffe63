/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The few kernel types fragd's BPF programs use, written by hand instead of a
 * vendored vmlinux.h. Every struct is marked preserve_access_index, so clang
 * emits CO-RE relocations and libbpf fixes each field offset against the
 * running kernel's BTF (/sys/kernel/btf/vmlinux) at load time: only the names
 * and types of the fields used must match, not the layout. Enum values are
 * placeholders, relocated with bpf_core_enum_value().
 *
 * Checked against Linux 6.18's BTF (bpftool btf dump file /sys/kernel/btf/vmlinux).
 */
#ifndef FRAGD_KERNEL_H
#define FRAGD_KERNEL_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <stdbool.h>

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct page;

/* include/linux/sched.h: only the PF_* flags word is read. */
struct task_struct {
	unsigned int flags;
};

/* mm/internal.h; tp_btf mm_compaction_begin/end pass it as their first argument. */
struct compact_control {
	int order;                 /* -1: whole-zone compaction (compact_memory, nodeN/compact, proactive) */
	bool direct_compaction;    /* run by an allocating task */
	bool proactive_compaction; /* kcompactd's proactive compaction */
};

/* Classic tracepoint records (the layouts of include/trace/events/{kmem,compaction,vmscan}.h). */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

struct trace_event_raw_mm_page_alloc {
	struct trace_entry ent;
	unsigned long pfn;          /* -1UL when the allocation failed */
	unsigned int order;
	unsigned long gfp_flags;    /* 4 bytes before 5.18: read with fragd_read_gfp() */
	int migratetype;
};

struct trace_event_raw_mm_page_alloc_extfrag {
	struct trace_entry ent;
	unsigned long pfn;
	int alloc_order;
	int fallback_order;
	int alloc_migratetype;
	int fallback_migratetype;
	int change_ownership;
};

struct trace_event_raw_mm_compaction_try_to_compact_pages {
	struct trace_entry ent;
	int order;
	unsigned long gfp_mask;
	int prio;
};

struct trace_event_raw_mm_compaction_migratepages {
	struct trace_entry ent;
	unsigned long nr_migrated;
	unsigned long nr_failed;
};

struct trace_event_raw_mm_vmscan_direct_reclaim_begin_template {
	struct trace_entry ent;
	int order;
	unsigned long gfp_flags;
};

struct trace_event_raw_mm_vmscan_direct_reclaim_end_template {
	struct trace_entry ent;
	unsigned long nr_reclaimed;
};

#pragma clang attribute pop

enum migratetype {
	MIGRATE_UNMOVABLE,
	MIGRATE_MOVABLE,
	MIGRATE_RECLAIMABLE,
	MIGRATE_HIGHATOMIC,
	MIGRATE_CMA,
	MIGRATE_ISOLATE,
};

enum compact_result {
	COMPACT_NOT_SUITABLE_ZONE,
	COMPACT_SKIPPED,
	COMPACT_DEFERRED,
	COMPACT_NO_SUITABLE_PAGE,
	COMPACT_CONTINUE,
	COMPACT_COMPLETE,
	COMPACT_PARTIAL_SKIPPED,
	COMPACT_CONTENDED,
	COMPACT_SUCCESS,
};

#endif /* FRAGD_KERNEL_H */
