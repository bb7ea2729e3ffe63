/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The floor of any per-page hook: an empty BTF tracepoint program on
 * kmem:mm_page_alloc, the one per-page event fragd can attach to. Whatever a
 * program on that event does, it costs at least this (the kernel's dispatch).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/mm_page_alloc")
int floor_page_alloc(void *ctx)
{
	return 0;
}
