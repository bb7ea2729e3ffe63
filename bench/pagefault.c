// SPDX-License-Identifier: Apache-2.0
/*
 * Order-0 page-fault microbenchmark for bench/run.sh.
 *
 *   pagefault [-m MiB] [-t seconds] [-w warmup_rounds]
 *
 * Maps one anonymous region (MADV_NOHUGEPAGE: every fault allocates one
 * order-0 page, so kmem:mm_page_alloc fires once per fault), then repeats
 * "write one byte to every 4 KiB page, MADV_DONTNEED the region" for the given
 * time. The same region is reused and the process is meant to be pinned to one
 * CPU (taskset): the pages released by MADV_DONTNEED go back to that CPU's
 * per-CPU free lists and are handed out again by the next round, so the guest
 * keeps recycling memory it already backs instead of touching memory the host
 * took back (see DESIGN.md "Machine caveats").
 *
 * Prints one line of key=value pairs; faults_per_s is the figure of merit:
 * pages touched per second of wall time over whole rounds (touch + DONTNEED).
 * minflt (from getrusage) must match faults, which checks that every touch
 * really faulted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void touch_and_release(volatile char *p, size_t len, size_t page)
{
	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
	if (madvise((void *)p, len, MADV_DONTNEED) != 0) {
		fprintf(stderr, "pagefault: madvise(MADV_DONTNEED): %s\n", strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t mib = 256;
	double seconds = 3.0;
	int warmup = 3;
	int opt;

	while ((opt = getopt(argc, argv, "m:t:w:")) != -1) {
		switch (opt) {
		case 'm': mib = strtoull(optarg, NULL, 10); break;
		case 't': seconds = strtod(optarg, NULL); break;
		case 'w': warmup = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-m MiB] [-t seconds] [-w warmup_rounds]\n", argv[0]);
			return 2;
		}
	}
	if (mib == 0 || seconds <= 0 || warmup < 0) {
		fprintf(stderr, "pagefault: bad arguments\n");
		return 2;
	}

	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = mib << 20;
	size_t pages = len / page;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "pagefault: mmap %zu MiB: %s\n", mib, strerror(errno));
		return 1;
	}
	if (madvise(p, len, MADV_NOHUGEPAGE) != 0) {
		fprintf(stderr, "pagefault: madvise(MADV_NOHUGEPAGE): %s\n", strerror(errno));
		return 1;
	}

	/* Pre-warm: the first rounds pull the pages onto this CPU's free lists. */
	for (int i = 0; i < warmup; i++)
		touch_and_release(p, len, page);

	long flt0 = minflt();
	double t0 = now_s(), t1;
	long rounds = 0;

	do {
		touch_and_release(p, len, page);
		rounds++;
		t1 = now_s();
	} while (t1 - t0 < seconds);

	long faults = minflt() - flt0;
	double elapsed = t1 - t0;
	unsigned long long touched = (unsigned long long)rounds * pages;

	printf("faults_per_s=%.0f rounds=%ld pages_per_round=%zu touched=%llu minflt=%ld elapsed_s=%.4f\n",
	       (double)touched / elapsed, rounds, pages, touched, faults, elapsed);
	munmap(p, len);
	return 0;
}
