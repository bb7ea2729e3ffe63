/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fragmenter: splinters free memory the way a long-running host does.
 *
 * Maps SIZE of anonymous memory in 4 KiB pages (MADV_NOHUGEPAGE), touches
 * every page, then frees KEEP-1 of every KEEP pages in each 2 MiB chunk, so
 * that free memory is left in order-0..order-1 holes between movable pages.
 * It then prints "ready <kept_kib>" on stdout and holds the memory until
 * stdin reaches EOF or it gets SIGTERM/SIGINT.
 *
 * --node N: the memory comes from node N alone (set_mempolicy MPOL_BIND before
 * anything is touched), and --percent P means P% of that node's MemFree
 * (/sys/devices/system/node/nodeN/meminfo) instead of the host's MemAvailable:
 * one node splintered, the others left alone.
 *
 * --share S: before "ready", S child processes share the kept pages (fork;
 * each waits until the fragmenter exits). A page mapped by S+1 processes
 * costs compaction S+1 reverse-map walks to move: a node compaction of the
 * same memory takes several times as long, as on a host with far more.
 *
 * --mlock 1: the kept pages are locked (mlock2 MLOCK_ONFAULT, after the holes are
 * made). With vm.compact_unevictable_allowed 0, compaction does not move them and
 * reclaim cannot free them: the holes stay holes, as between pinned pages.
 *
 * usage: fragmenter --percent P | --mib M   [--keep K]   [--share S]   [--node N]   [--mlock 1]
 *        (K default 4, S 0, N: no binding)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define USAGE "usage: fragmenter --percent P | --mib M [--keep K] [--share S] [--node N] [--mlock 1]\n"

static long mem_available_kib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Node N's MemFree in KiB; -1 when the node has no meminfo (does not exist). */
static long node_free_kib(long node)
{
	char path[64], line[256];
	long kib = -1, n;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%ld/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %ld MemFree: %ld kB", &n, &kib) == 2)
			break;
	fclose(f);
	return kib;
}

/* The kernel's list of nodes with memory ("0-1"), for error messages. */
static const char *memory_nodes(void)
{
	static char list[256] = "unknown";
	FILE *f = fopen("/sys/devices/system/node/has_memory", "r");

	if (f) {
		if (fgets(list, sizeof(list), f))
			list[strcspn(list, "\n")] = '\0';
		fclose(f);
	}
	return list;
}

static int parse_long(const char *s, long *out, long min)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || end == s || *end != '\0' || *out < min ? -1 : 0;
}

/* All of this process's memory from now on comes from `node` alone. */
static int bind_to_node(long node)
{
	unsigned long mask[16] = { 0 };
	const unsigned long bits = 8 * sizeof(mask[0]);

	if (node >= (long)(8 * sizeof(mask)) - 1 || node_free_kib(node) < 0) {
		fprintf(stderr, "fragmenter: --node %ld: no such node (nodes with memory: %s)\n",
			node, memory_nodes());
		return -1;
	}
	mask[node / bits] = 1UL << (node % bits);
	if (syscall(SYS_set_mempolicy, MPOL_BIND, mask, 8 * sizeof(mask))) {
		fprintf(stderr, "fragmenter: set_mempolicy(MPOL_BIND, node %ld): %s (nodes with memory: %s)\n",
			node, strerror(errno), memory_nodes());
		return -1;
	}
	return 0;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
	long percent = 0, mib = 0, keep = 4, share = 0, node = -1, lock = 0;
	const long page = 4096, chunk = 2L << 20;

	for (int i = 1; i + 1 < argc; i += 2) {
		long *dst = !strcmp(argv[i], "--percent") ? &percent :
			    !strcmp(argv[i], "--mib")     ? &mib :
			    !strcmp(argv[i], "--keep")    ? &keep :
			    !strcmp(argv[i], "--share")   ? &share :
			    !strcmp(argv[i], "--node")    ? &node :
			    !strcmp(argv[i], "--mlock")   ? &lock : NULL;
		/* Sizes and counts are positive; a node number and --mlock may be 0. */
		if (!dst || parse_long(argv[i + 1], dst, dst == &node || dst == &lock ? 0 : 1)) {
			fprintf(stderr, "fragmenter: bad argument '%s %s'\n" USAGE, argv[i], argv[i + 1]);
			return 2;
		}
	}
	if (argc % 2 == 0 || (!percent == !mib)) {
		fprintf(stderr, USAGE);
		return 2;
	}
	if (node >= 0 && bind_to_node(node))
		return 1;
	if (percent) {
		long avail = node >= 0 ? node_free_kib(node) : mem_available_kib();
		if (avail <= 0) {
			if (node >= 0)
				fprintf(stderr, "fragmenter: cannot read MemFree from /sys/devices/system/node/node%ld/meminfo\n", node);
			else
				fprintf(stderr, "fragmenter: cannot read MemAvailable from /proc/meminfo\n");
			return 1;
		}
		mib = avail / 1024 * percent / 100;
	}
	size_t len = (size_t)mib << 20;
	len -= len % chunk;

	char *base = mmap(NULL, len + chunk, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		fprintf(stderr, "fragmenter: mmap %zu MiB: %s\n", len >> 20, strerror(errno));
		return 1;
	}
	char *mem = (char *)(((unsigned long)base + chunk - 1) & ~(chunk - 1));
	if (madvise(mem, len, MADV_NOHUGEPAGE))
		fprintf(stderr, "fragmenter: MADV_NOHUGEPAGE: %s\n", strerror(errno));

	/*
	 * Every page faulted in by the kernel in one call (MADV_POPULATE_WRITE, 5.14+), in the
	 * same order a touch of each page would take them but without a user fault per page;
	 * touched one by one where the kernel lacks it.
	 */
	if (madvise(mem, len, MADV_POPULATE_WRITE)) {
		for (size_t off = 0; off < len; off += page)
			mem[off] = 1;
	}

	/* The KEEP-1 pages after each kept one are adjacent: one madvise frees them all. */
	long kept = 0;
	for (size_t off = 0; off < len; off += keep * page) {
		kept++;
		size_t gap = (keep - 1) * page;
		if (gap && off + page < len)
			madvise(mem + off + page, off + page + gap <= len ? gap : len - off - page, MADV_DONTNEED);
	}
	/* MLOCK_ONFAULT: the present pages are locked, the holes are not faulted back in. */
	if (lock && mlock2(mem, len, MLOCK_ONFAULT)) {
		fprintf(stderr, "fragmenter: mlock2 MLOCK_ONFAULT: %s\n", strerror(errno));
		return 1;
	}

	for (long i = 0; i < share; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "fragmenter: fork sharer %ld: %s\n", i + 1, strerror(errno));
			return 1;
		}
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
	}

	/* No SA_RESTART: the blocking read() below must return on a signal. */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready %ld\n", kept * (page / 1024));
	fflush(stdout);

	char buf[64];
	while (!stop && read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	munmap(base, len + chunk);
	return 0;
}
