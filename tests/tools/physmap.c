/* SPDX-License-Identifier: Apache-2.0 */
/*
 * physmap: lays out memory at known physical pages for the pageblock-scanner
 * integration test. Reads its own /proc/self/pagemap: needs root (without
 * CAP_SYS_ADMIN the kernel reports every PFN as 0).
 *
 * physmap frag --mib M [--keep K | --drop K] --out FILE
 *   Touches M MiB of 4 KiB pages (MADV_NOHUGEPAGE) and finds the pageblocks
 *   (pfn >> 9) of which it holds all 512 pages, its "owned blocks". In each it
 *   keeps the pages at block offsets that are multiples of K (default 4) and
 *   frees the rest: every owned block holds 512/K movable (LRU, anon) pages at
 *   known offsets, the rest free. With --drop K it frees those pages instead
 *   and keeps the rest: blocks mostly in use, whose few holes an unmovable
 *   allocation can take without the kernel claiming the block for it. Pages of blocks it does not own all stay, so
 *   every hole it makes is in an owned block and allocations that follow (page
 *   tables, say) that outgrow the untouched memory fall into owned blocks.
 *   Checks that no kept page moved (run with vm.compaction_proactiveness=0).
 *   FILE: "# owned <blocks> kept_pages <pages> total_mib <M>", then one line
 *   "block <blocknr> kept <pages>" per owned block. Prints "ready <blocks>".
 *
 * physmap pgtables --count N --out FILE
 *   Maps N * 2 MiB (MAP_NORESERVE, MADV_NOHUGEPAGE) and reads one byte in each
 *   2 MiB: every read allocates one page-table page (and a PMD page per GiB),
 *   unmovable kernel memory. Reads map the shared zero page: no data pages.
 *   FILE: "# pgtables <N> pagetables_kib <delta> data_pfns <distinct>", then
 *   "data <pfn>" per distinct data page. Prints "ready <N> pagetables_kib
 *   <delta>", the growth of PageTables in /proc/meminfo (system-wide).
 *
 * Both then hold their memory until stdin reaches EOF or SIGTERM/SIGINT and
 * exit 0, which frees it. Step timings go to stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define BLOCK_PAGES 512UL
#define CHUNK (2UL << 20)
#define PM_PRESENT (1ULL << 63)
#define PM_PFN ((1ULL << 55) - 1)
#define USAGE "usage: physmap frag --mib M [--keep K | --drop K] --out FILE\n" \
	      "       physmap pgtables --count N --out FILE\n"

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || end == s || *end != '\0' || *out <= 0 ? -1 : 0;
}

static long meminfo_kib(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256], name[64];
	long kib, found = -1;

	while (f && found < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %ld kB", name, &kib) == 2 && !strcmp(name, key))
			found = kib;
	if (f)
		fclose(f);
	return found;
}

/* Maps len bytes (plus slack), 2 MiB aligned, without transparent huge pages. */
static char *map_aligned(size_t len)
{
	char *base = mmap(NULL, len + CHUNK, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		fprintf(stderr, "physmap: mmap %zu MiB: %s; lower the size or check "
			"vm.overcommit_memory and ulimit -v\n", len >> 20, strerror(errno));
		return NULL;
	}
	char *mem = (char *)(((uintptr_t)base + CHUNK - 1) & ~(CHUNK - 1));
	if (madvise(mem, len, MADV_NOHUGEPAGE)) {
		fprintf(stderr, "physmap: madvise MADV_NOHUGEPAGE: %s; a kernel without "
			"THP is fine, otherwise this is a bug\n", strerror(errno));
		return NULL;
	}
	return mem;
}

/* PFNs of the n pages from addr, step bytes apart; 0 for a page not present. */
static int read_pfns(int fd, const char *addr, size_t n, size_t step, uint64_t *out)
{
	static uint64_t buf[65536];
	size_t per = step / PAGE, batch = per == 1 ? 65536 : 1;

	for (size_t i = 0; i < n; i += batch) {
		size_t cnt = n - i < batch ? n - i : batch;
		off_t off = (off_t)((uintptr_t)(addr + i * step) / PAGE * 8);
		ssize_t got = pread(fd, buf, cnt * 8, off);
		if (got != (ssize_t)(cnt * 8)) {
			fprintf(stderr, "physmap: read /proc/self/pagemap: %s\n",
				got < 0 ? strerror(errno) : "short read");
			return -1;
		}
		for (size_t j = 0; j < cnt; j++) {
			out[i + j] = buf[j] & PM_PRESENT ? buf[j] & PM_PFN : 0;
			if ((buf[j] & PM_PRESENT) && !out[i + j]) {
				fprintf(stderr, "physmap: /proc/self/pagemap shows PFN 0: "
					"run as root (CAP_SYS_ADMIN is needed to see PFNs)\n");
				return -1;
			}
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* 1 (--drop K): the slots at multiples of keep are freed, the rest kept. */
static int drop_mode;

/* A page of an owned block that stays: at an offset that is a multiple of
 * keep, or (drop_mode) at any other offset. */
static int kept_slot(const uint16_t *held, uint64_t pfn, long keep)
{
	return pfn && held[pfn / BLOCK_PAGES] == BLOCK_PAGES && (pfn % BLOCK_PAGES % keep == 0) != drop_mode;
}

static int frag(int pm, long mib, long keep, FILE *out, char *ready, size_t rlen)
{
	size_t len = ((size_t)mib << 20) & ~(CHUNK - 1), n = len / PAGE;
	if (!len)
		return fprintf(stderr, "physmap: --mib must be at least 2\n"), 2;
	char *mem = map_aligned(len);
	uint64_t *pfn = malloc(n * sizeof(*pfn)), *again = malloc(n * sizeof(*again)), max = 0;
	double t = now();

	if (!mem || !pfn || !again)
		return fprintf(stderr, "physmap: cannot map %ld MiB or its PFN tables\n", mib), 1;
	for (size_t i = 0; i < n; i++)
		mem[i * PAGE] = 1;
	fprintf(stderr, "physmap: touched %zu pages in %.2f s\n", n, now() - t);
	if (read_pfns(pm, mem, n, PAGE, pfn))
		return 1;
	for (size_t i = 0; i < n; i++)
		max = pfn[i] > max ? pfn[i] : max;
	size_t nblk = max / BLOCK_PAGES + 1, kept_pages = 0, owned = 0, moved = 0, run = 0;
	uint16_t *held = calloc(nblk, sizeof(*held)), *kept = calloc(nblk, sizeof(*kept));
	if (!held || !kept)
		return fprintf(stderr, "physmap: out of memory for %zu block counters\n", nblk), 1;
	for (size_t i = 0; i < n; i++)
		held[pfn[i] / BLOCK_PAGES] += pfn[i] != 0;

	/* Free the pages of owned blocks that are not kept slots, one madvise per
	 * virtual run. Pages of blocks not owned stay, so that all the free memory
	 * this creates lies in owned blocks. */
	t = now();
	for (size_t i = 0; i <= n; i++) {
		int owned_blk = i < n && pfn[i] && held[pfn[i] / BLOCK_PAGES] == BLOCK_PAGES;
		if (owned_blk && !kept_slot(held, pfn[i], keep)) {
			run++;
			continue;
		}
		if (run && madvise(mem + (i - run) * PAGE, run * PAGE, MADV_DONTNEED))
			return fprintf(stderr, "physmap: madvise MADV_DONTNEED: %s\n",
				       strerror(errno)), 1;
		run = 0;
		if (owned_blk) {
			kept[pfn[i] / BLOCK_PAGES]++;
			kept_pages++;
		}
	}
	fprintf(stderr, "physmap: freed %s1/%ld of owned blocks in %.2f s\n", drop_mode ? "" : "1 - ", keep,
		now() - t);

	/* Kept pages must still be where the block list says they are. */
	if (read_pfns(pm, mem, n, PAGE, again))
		return 1;
	for (size_t i = 0; i < n; i++)
		moved += kept_slot(held, pfn[i], keep) && again[i] != pfn[i];
	if (moved)
		return fprintf(stderr, "physmap: %zu kept pages moved (compaction ran); set "
			       "vm.compaction_proactiveness=0 while the test runs\n", moved), 1;

	for (size_t b = 0; b < nblk; b++)
		owned += held[b] == BLOCK_PAGES;
	fprintf(out, "# owned %zu kept_pages %zu total_mib %ld\n", owned, kept_pages, mib);
	for (size_t b = 0; b < nblk; b++)
		if (held[b] == BLOCK_PAGES)
			fprintf(out, "block %zu kept %u\n", b, kept[b]);
	if (fclose(out))
		return fprintf(stderr, "physmap: write output file: %s\n", strerror(errno)), 1;
	snprintf(ready, rlen, "ready %zu\n", owned);
	free(pfn), free(again), free(held), free(kept);
	return 0;
}

static int pgtables(int pm, long count, FILE *out, char *ready, size_t rlen)
{
	size_t len = (size_t)count * CHUNK;
	long before = meminfo_kib("PageTables");
	char *mem = map_aligned(len);
	uint64_t *pfn = malloc(count * sizeof(*pfn));
	double t = now();

	if (before < 0)
		return fprintf(stderr, "physmap: no PageTables line in /proc/meminfo\n"), 1;
	if (!mem || !pfn)
		return fprintf(stderr, "physmap: cannot map %ld x 2 MiB or its PFN table\n",
			       count), 1;
	for (long i = 0; i < count; i++)
		(void)*(volatile char *)(mem + i * CHUNK);
	long delta = meminfo_kib("PageTables") - before;
	fprintf(stderr, "physmap: touched %ld x 2 MiB in %.2f s\n", count, now() - t);
	if (read_pfns(pm, mem, count, CHUNK, pfn))
		return 1;

	/* Distinct data PFNs: sort, then print each once. */
	qsort(pfn, count, sizeof(*pfn), cmp_u64);
	long distinct = 0;
	for (long i = 0; i < count; i++)
		distinct += pfn[i] && (i == 0 || pfn[i] != pfn[i - 1]);
	fprintf(out, "# pgtables %ld pagetables_kib %ld data_pfns %ld\n", count, delta, distinct);
	for (long i = 0; i < count; i++)
		if (pfn[i] && (i == 0 || pfn[i] != pfn[i - 1]))
			fprintf(out, "data %llu\n", (unsigned long long)pfn[i]);
	if (fclose(out))
		return fprintf(stderr, "physmap: write output file: %s\n", strerror(errno)), 1;
	snprintf(ready, rlen, "ready %ld pagetables_kib %ld\n", count, delta);
	free(pfn);
	return 0;
}

int main(int argc, char **argv)
{
	long mib = 0, keep = 4, count = 0;
	const char *path = NULL;
	int is_frag = argc > 1 && !strcmp(argv[1], "frag");

	if (argc < 2 || (!is_frag && strcmp(argv[1], "pgtables")) || argc % 2)
		return fprintf(stderr, USAGE), 2;
	for (int i = 2; i + 1 < argc; i += 2) {
		long *dst = !strcmp(argv[i], "--mib") && is_frag ? &mib :
			    (!strcmp(argv[i], "--keep") || !strcmp(argv[i], "--drop")) && is_frag ? &keep :
			    !strcmp(argv[i], "--count") && !is_frag ? &count : NULL;
		if (!strcmp(argv[i], "--drop"))
			drop_mode = 1;
		if (!strcmp(argv[i], "--out"))
			path = argv[i + 1];
		else if (!dst || parse_long(argv[i + 1], dst) || keep > (long)BLOCK_PAGES)
			return fprintf(stderr, "physmap: bad argument '%s %s'\n" USAGE,
				       argv[i], argv[i + 1]), 2;
	}
	if (!path || (is_frag ? !mib : !count))
		return fprintf(stderr, USAGE), 2;

	int pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		return fprintf(stderr, "physmap: open /proc/self/pagemap: %s; needs a kernel "
			       "with CONFIG_PROC_PAGE_MONITOR, run as root\n", strerror(errno)), 1;
	FILE *out = fopen(path, "w");
	if (!out)
		return fprintf(stderr, "physmap: open %s for writing: %s\n", path,
			       strerror(errno)), 1;

	char ready[96];
	int rc = is_frag ? frag(pm, mib, keep, out, ready, sizeof(ready))
			 : pgtables(pm, count, out, ready, sizeof(ready));
	if (rc)
		return rc;

	/* No SA_RESTART: the blocking read() below must return on a signal. */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fputs(ready, stdout);
	fflush(stdout);

	char buf[64];
	while (!stop && read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	return 0; /* exit unmaps everything */
}
