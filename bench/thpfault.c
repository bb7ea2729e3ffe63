// SPDX-License-Identifier: Apache-2.0
/*
 * THP fault burst for bench/act.sh: how long a task waits for 2 MiB pages
 * that the kernel has to find on a fragmented machine.
 *
 *   thpfault COUNT LATENCY_FILE
 *
 * Maps COUNT x 2 MiB of anonymous memory aligned on 2 MiB, asks for huge
 * pages on it (MADV_HUGEPAGE: with THP defrag "madvise" or stronger, a fault
 * that finds no free 2 MiB block enters direct compaction), then writes one
 * byte at the start of each 2 MiB region in turn, timing each first touch
 * with clock_gettime(CLOCK_MONOTONIC). Each touch is one page fault: a 2 MiB
 * page when an order-9 block is found, else a 4 KiB page. The time includes
 * zeroing the page, and on a VM touching memory the host took back (see
 * DESIGN.md "Machine caveats"), so it is noisy there.
 *
 * Granted huge pages are read from the mapping's AnonHugePages in
 * /proc/self/smaps after the burst. Writes one latency in nanoseconds per
 * line to LATENCY_FILE (in fault order) and prints one line of key=value
 * pairs on stdout: requested, granted, wall_ns (whole burst), start_ns.
 * The memory is released on exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HPAGE (2UL << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* AnonHugePages (KiB) of the mapping that starts at addr, -1 if not found. */
static long anon_huge_kib(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in_region = 0;
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start, end;
		long v;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2) {
			/* A mapping's header line ("start-end perms ..."); field lines never parse as hex-hex. */
			if (in_region)
				break;
			in_region = start == addr;
			continue;
		}
		if (in_region && sscanf(line, "AnonHugePages: %ld kB", &v) == 1) {
			kib = v;
			break;
		}
	}
	fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	char *end;
	long count;

	if (argc != 3) {
		fprintf(stderr, "usage: thpfault COUNT LATENCY_FILE\n");
		return 2;
	}
	errno = 0;
	count = strtol(argv[1], &end, 10);
	if (errno || end == argv[1] || *end != '\0' || count <= 0 || count > 1000000) {
		fprintf(stderr, "thpfault: COUNT must be an integer in 1..1000000, got '%s'\n", argv[1]);
		return 2;
	}
	size_t len = (size_t)count * HPAGE;
	uint64_t *lat = calloc((size_t)count, sizeof(*lat));
	if (!lat) {
		fprintf(stderr, "thpfault: cannot allocate %ld latency slots\n", count);
		return 1;
	}
	FILE *out = fopen(argv[2], "w");
	if (!out) {
		fprintf(stderr, "thpfault: cannot open %s: %s\n", argv[2], strerror(errno));
		return 1;
	}

	/* Over-map by 2 MiB, then trim head and tail so the mapping is exactly the aligned region. */
	char *raw = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
	if (raw == MAP_FAILED) {
		fprintf(stderr, "thpfault: mmap of %zu MiB: %s\n", (len + HPAGE) >> 20, strerror(errno));
		return 1;
	}
	char *mem = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	size_t head = (size_t)(mem - raw), tail = HPAGE - head;
	if (head)
		munmap(raw, head);
	if (tail)
		munmap(mem + len, tail);
	if (madvise(mem, len, MADV_HUGEPAGE)) {
		fprintf(stderr, "thpfault: madvise(MADV_HUGEPAGE): %s (is THP compiled in and not 'never'?)\n",
			strerror(errno));
		return 1;
	}

	volatile char *p = mem;
	uint64_t start = now_ns();
	for (long i = 0; i < count; i++) {
		uint64_t t0 = now_ns();
		p[(size_t)i * HPAGE] = 1;
		lat[i] = now_ns() - t0;
	}
	uint64_t wall = now_ns() - start;

	long kib = anon_huge_kib((uintptr_t)mem);
	if (kib < 0) {
		fprintf(stderr, "thpfault: mapping at %p not found in /proc/self/smaps\n", (void *)mem);
		return 1;
	}
	for (long i = 0; i < count; i++)
		fprintf(out, "%" PRIu64 "\n", lat[i]);
	if (fclose(out)) {
		fprintf(stderr, "thpfault: writing %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	printf("requested=%ld granted=%ld wall_ns=%" PRIu64 " start_ns=%" PRIu64 "\n", count, kib / 2048, wall,
	       start);
	munmap(mem, len);
	return 0;
}
