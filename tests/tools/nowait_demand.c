/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nowait_demand: growing demand for unmovable memory that cannot sleep, the
 * kind a host's network receive path makes (GFP_ATOMIC skbs), made from user
 * space without a kernel module.
 *
 * It creates a BPF hash map without preallocation (BPF_F_NO_PREALLOC) whose
 * values are VALUE bytes and inserts RATE elements a second. The kernel takes
 * each element from a per-CPU cache that it refills from irq_work with
 * GFP_NOWAIT (kernel/bpf/memalloc.c): no direct reclaim, no compaction. With
 * the default VALUE (16000 bytes) an element is one order-2 unmovable page
 * allocation (a large kmalloc). When the refill fails the insert returns
 * ENOMEM: that count is the kernel's own record of failed non-sleeping
 * allocations, element by element.
 *
 * Every second it prints "t <s> ok <inserted> enomem <failed>" (totals), runs
 * for SECONDS (or until MIB of values are held), prints "done ok N enomem M",
 * then holds the memory until stdin reaches EOF or SIGTERM/SIGINT.
 *
 * usage: nowait_demand --mib M [--rate R] [--seconds S] [--value V]
 *        (R default 200 a second, S 60, V 16000)
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define USAGE "usage: nowait_demand --mib M [--rate R] [--seconds S] [--value V]\n"

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long mib = 0, rate = 200, seconds = 60, value = 16000;
	for (int i = 1; i + 1 < argc; i += 2) {
		long *dst = !strcmp(argv[i], "--mib")     ? &mib :
			    !strcmp(argv[i], "--rate")    ? &rate :
			    !strcmp(argv[i], "--seconds") ? &seconds :
			    !strcmp(argv[i], "--value")   ? &value : NULL;
		char *end;
		if (!dst) {
			fprintf(stderr, "nowait_demand: unknown option %s\n" USAGE, argv[i]);
			return 2;
		}
		*dst = strtol(argv[i + 1], &end, 10);
		if (*end || *dst <= 0) {
			fprintf(stderr, "nowait_demand: %s needs a positive integer, got '%s'\n", argv[i], argv[i + 1]);
			return 2;
		}
	}
	if (argc % 2 == 0 || !mib) {
		fputs(USAGE, stderr);
		return 2;
	}
	long entries = (mib << 20) / value;
	if (entries < 1)
		entries = 1;
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "nowait_demand", sizeof(unsigned int), value, entries, &opts);
	if (fd < 0) {
		fprintf(stderr, "nowait_demand: cannot create a hash map of %ld values of %ld bytes: %s\n", entries, value,
			strerror(errno));
		return 1;
	}
	char *buf = calloc(1, value);
	if (!buf)
		return 1;
	/* Without SA_RESTART: a signal must end the hold's read(), which signal() would restart. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	long ok = 0, enomem = 0;
	double start = now_s(), next_print = start + 1;
	unsigned int key = 0;
	while (!stop && ok < entries) {
		double t = now_s();
		if (t - start >= seconds)
			break;
		if (t >= next_print) {
			printf("t %.0f ok %ld enomem %ld\n", next_print - start, ok, enomem);
			fflush(stdout);
			next_print += 1;
		}
		/* Paced: the n-th attempt waits until n / RATE s after the start. */
		double due = start + (double)(ok + enomem) / rate;
		if (due > t) {
			struct timespec ts = {(time_t)(due - t), (long)((due - t - (time_t)(due - t)) * 1e9)};
			nanosleep(&ts, NULL);
			continue;
		}
		if (bpf_map_update_elem(fd, &key, buf, BPF_NOEXIST) == 0) {
			ok++;
			key++;
		} else if (errno == ENOMEM) {
			enomem++;
		} else {
			fprintf(stderr, "nowait_demand: insert %u: %s\n", key, strerror(errno));
			return 1;
		}
	}
	printf("done ok %ld enomem %ld\n", ok, enomem);
	fflush(stdout);
	while (!stop) {
		char c;
		ssize_t n = read(0, &c, 1);
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	close(fd);
	return 0;
}
