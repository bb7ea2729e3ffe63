/* SPDX-License-Identifier: Apache-2.0 */
// floor: loads bench/floor.bpf.o (an empty tp_btf program on
// kmem:mm_page_alloc), prints "attached" once it is, and holds it until
// SIGINT or SIGTERM. The floor arm of bench/run.sh.
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;

	if (argc != 2) {
		fprintf(stderr, "usage: %s floor.bpf.o\n", argv[0]);
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "floor: cannot load %s\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "floor_page_alloc");
	link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		fprintf(stderr, "floor: cannot attach floor_page_alloc\n");
		bpf_object__close(obj);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return 0;
}
