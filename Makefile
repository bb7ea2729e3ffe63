# SPDX-License-Identifier: Apache-2.0
# Thin wrapper over CMake. `make` builds; `make run` and `make test` also
# install whatever Debian packages are missing first.
BUILD   ?= build
JOBS    ?= $(shell nproc)
CONFIG  ?= configs/fragd.yaml

# ccache, once installed (scripts/install-deps.sh): a file compiled before with the same flags in
# the same tree is not compiled again (CI rebuilds four trees from a fresh clone each run).
# CMake reads the launchers from the environment. No CCACHE_BASEDIR: with it ccache hands the
# compiler paths relative to that directory, which the debug info keeps ("../daemon/..." where a
# build without ccache writes "./daemon/...", CMakeLists.txt's prefix maps), so a build with
# ccache and one without would differ; tests/integration/image_test.sh builds one of each.
# The launchers are set only where ccache is installed; a fresh machine gets it from `make deps`,
# and `make test` builds in a make started after that. ccache's own settings are exported always,
# so that the tests `make test` runs see the settings the build was made with.
ifneq ($(shell command -v ccache 2>/dev/null),)
export CMAKE_C_COMPILER_LAUNCHER := ccache
export CMAKE_CXX_COMPILER_LAUNCHER := ccache
endif
unexport CCACHE_BASEDIR
export CCACHE_HASHDIR := 1

.PHONY: all build deps run test unit integration image deb test-service test-fresh bench bench-act bench-apps clean fuzz sanitize tsan test-kernels test-kernels-cma

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

deps:
	bash scripts/install-deps.sh

run: deps
	$(MAKE) build
	exec $(BUILD)/fragd --config $(CONFIG)

# ctest -j: the unit and contract tests run side by side; each integration test is RUN_SERIAL
# (tests/CMakeLists.txt), alone on the machine.
test: deps
	$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -L unit

integration: build
	ctest --test-dir $(BUILD) --output-on-failure -L integration

# The OCI image fragd:<version> from Debian packages (scripts/build-image.sh: cpack, mmdebstrap,
# buildah; no Docker, no registry) into $(BUILD)/image/fragd-<version>.oci.tar. Root.
image: deps
	$(MAKE) build
	bash scripts/build-image.sh $(BUILD) $(BUILD)/image

# fragd's .deb for each supported Debian release, each built in a clean chroot of its own release
# and lintian-clean by that release's lintian (scripts/build-deb.sh: mmdebstrap, the chroots cached
# in /var/cache/fragd-build) into $(BUILD)/deb/<suite>/fragd_<version>+deb<N>_amd64.deb. Root.
SUITES ?= bookworm trixie
# The suites build side by side (each has its own chroot, lock and ccache), each into
# $(BUILD)/deb/<suite>.log, printed when both are done.
deb: deps
	@mkdir -p $(BUILD)/deb; pids=; \
	for suite in $(SUITES); do \
	  bash scripts/build-deb.sh $$suite $(BUILD)/deb/$$suite >$(BUILD)/deb/$$suite.log 2>&1 & pids="$$pids $$!"; \
	done; rc=0; for p in $$pids; do wait $$p || rc=1; done; \
	for suite in $(SUITES); do cat $(BUILD)/deb/$$suite.log; done; exit $$rc

# fragd as a systemd service on each supported release (tests/service/run.sh): a Debian 12 and a
# Debian 13 system, each booted with its own stock kernel and systemd as PID 1 under qemu, the
# previous release (tests/service/previous-release, built from its tagged commit) installed by apt
# and upgraded to the release's package (make deb), then started, reloaded, killed, acted with,
# removed and purged through systemctl and apt. RELEASES="bookworm" picks some. Root.
RELEASES ?= bookworm trixie
test-service: deps
	$(MAKE) build
	$(MAKE) deb SUITES="$(RELEASES)"
	FRAGD_BUILD_DIR=$(BUILD) bash tests/service/run.sh $(RELEASES)

# README's `make test` and `make run` on a fresh machine of a release (tests/fresh/run.sh): a
# minbase root file system of SUITE with git and make alone, this checkout's HEAD cloned into it,
# both commands run there under CI=true against this host's kernel (~40 minutes). Not in .ci/run:
# it is make test again. FRESH_SUITE=bookworm for Debian 12. Root.
FRESH_SUITE ?= trixie
test-fresh: deps
	$(MAKE) build
	FRAGD_BUILD_DIR=$(BUILD) bash tests/fresh/run.sh $(FRESH_SUITE)

# The kernel matrix (tests/kernels): Debian 12's 6.1 and its 6.12 on a 2-node NUMA guest, Debian
# 13's 6.12, trixie-backports' newest 7.x and its RT build, each booted under qemu with fragd and
# its guest suite; kernels and each suite's apt lists cached in FRAGD_KERNEL_CACHE
# (/var/cache/fragd-kernels). KERNELS="deb12-6.1 ..." picks some, KERNELS=all adds those that run
# only when named (Debian 12's 1-node 6.12 and 6.12-rt, sid's newest: tests/kernels/kernels.tsv);
# KERNEL_JOBS (default 2) guests run at once.
test-kernels: deps
	$(MAKE) build
	FRAGD_BUILD_DIR=$(BUILD) bash tests/kernels/matrix.sh $(KERNELS)

# A CMA guest: Debian's kernels lack CONFIG_CMA, so tests/kernels/build-cma.sh builds one from
# linux-source-6.12 (once, cached: 8-15 min on 2 cores) and the guest boots with hugetlb_cma=1G.
# Not in .ci/run: a fresh CI machine would build the kernel every time.
test-kernels-cma: deps
	$(MAKE) build
	FRAGD_BUILD_DIR=$(BUILD) bash tests/kernels/matrix.sh cma-6.12

# Tracing overhead (bench/run.sh), acting on fragmentation (bench/act.sh), real workloads started on
# fragmented memory (bench/apps.sh) and where the VM's start time goes (bench/backing.sh), the pageblock scan (bench/scan.sh),
# the dashboard's data drawn from a real Prometheus (bench/dashboard.sh -> docs/dashboard.png),
# 50 scrapers and 20 fragctl clients (bench/load.sh), 10 minutes of churn with fragd acting (bench/soak.sh),
# the vm.defrag_mode guard acting on a memory-pressure storm (bench/defrag_guard.sh, ~8 min),
# defrag_mode's failures of allocations that cannot sleep and the guard on them, here and in a 7.x
# guest (bench/defrag_atomic.sh, ~45 min), and whether defrag_mode makes kswapd reclaim page cache
# beside them (BENCH_ATOMIC_PHASES=storm, on this host, ~15 min),
# fragd's CPU on a quiet and a busy host and the scan's cost by memory size (bench/cost.sh, ~50 min),
# what the BPF programs cost per event (bench/stall_cost.sh, ~9 min), preflight against what a
# compaction and a pool write reach (bench/preflight.sh, ~14 min), its latency under load and its
# CPU (bench/preflight_latency.sh, ~33 min) and the NFD labels under churn (bench/labels.sh, ~100 min);
# BENCH_QUICK=1 makes each a smoke run that writes /tmp/fragd-bench-quick.md.
bench: deps
	$(MAKE) build
	bash bench/run.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/act.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/apps.sh
	bash bench/backing.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/scan.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/dashboard.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/load.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/soak.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/stall_cost.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/defrag_guard.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/reaction.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/defrag_atomic.sh
	FRAGD_BUILD_DIR=$(BUILD) BENCH_ATOMIC_WHERE=host BENCH_ATOMIC_PHASES=storm bash bench/defrag_atomic.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/cost.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/preflight.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/preflight_latency.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/labels.sh

# Only the act-mode benchmark (bench/act.sh: every way of compacting, 3 interleaved rounds;
# REPEATS=N sets the rounds); it prints how long it took at the end. BENCH_QUICK=1: one
# short round that writes /tmp/fragd-bench-quick.md.
bench-act: deps
	$(MAKE) build
	FRAGD_BUILD_DIR=$(BUILD) bash bench/act.sh

# Real workloads started on fragmented memory (bench/apps.sh: a VM on hugetlbfs pages, a JVM with
# a THP heap, a DPDK-style hugetlb user; every mode that could serve each; 3 interleaved rounds).
bench-apps: deps
	$(MAKE) build
	FRAGD_BUILD_DIR=$(BUILD) bash bench/apps.sh

# libFuzzer targets (tests/fuzz), built with clang in $(BUILD)-fuzz and run for
# FUZZ_SECONDS each, FUZZ_JOBS at a time, on scratch copies of tests/fuzz/corpus.
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 2
fuzz:
	FUZZ_BUILD=$(BUILD)-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) JOBS=$(JOBS) bash tests/fuzz/run.sh

# ASan + LeakSanitizer + UBSan (cmake/Sanitize.cmake), built in $(BUILD)-asan: the unit tests (each
# GoogleTest binary run once: scripts/sanitize.sh) and the tests labelled `daemon`
# (tests/CMakeLists.txt: the control socket, /metrics, reloads, start and stop, fragctl, the hostile
# clients, the kallsyms copy), the set make tsan runs; any sanitizer report from any process fails
# the run. The other unit-labelled tests check documents and scripts, no sanitized code.
# SANITIZE_ARGS="-LE 'workload|image|unit'" adds every integration test but the workload and image
# ones (CI's run of 2026-12-02: that stage 1529 s against make tsan's 666 s for this set; CI's 90
# minutes could not hold both).
SANITIZE_ARGS ?= -L daemon
# The sanitizer trees build with Ninja where it is installed (scripts/install-deps.sh): it compiles
# a target's files while the libraries it links are still building, where Make's generator waits
# for each room library in turn, a core idle at every step of that chain. A tree configured
# before keeps its generator (cmake cannot switch one).
NINJA_G := $(if $(shell command -v ninja 2>/dev/null),-G Ninja)
generator = $(if $(wildcard $(1)/CMakeCache.txt),,$(NINJA_G))
sanitize:
	cmake -S . -B $(BUILD)-asan $(call generator,$(BUILD)-asan) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFRAGD_SANITIZE=ON
	cmake --build $(BUILD)-asan -j $(JOBS)
	bash scripts/sanitize.sh $(BUILD)-asan -j $(JOBS) $(SANITIZE_ARGS)

# ThreadSanitizer (cmake/Sanitize.cmake), built in $(BUILD)-tsan: the unit tests and the
# tests labelled `daemon` (tests/CMakeLists.txt: the daemon layer without a heavy
# memory workload); any data race or lock-order report fails the run.
tsan:
	cmake -S . -B $(BUILD)-tsan $(call generator,$(BUILD)-tsan) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFRAGD_TSAN=ON
	cmake --build $(BUILD)-tsan -j $(JOBS)
	bash scripts/sanitize.sh $(BUILD)-tsan -j $(JOBS) -L daemon

clean:
	rm -rf $(BUILD)
