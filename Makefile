# Thin wrapper over CMake. `make` builds; `make run` and `make test` also
# install whatever Debian packages are missing first.
BUILD   ?= build
JOBS    ?= $(shell nproc)
CONFIG  ?= configs/fragd.yaml

.PHONY: all build deps run test unit integration bench clean

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

test: deps
	$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -L unit

integration: build
	ctest --test-dir $(BUILD) --output-on-failure -L integration

# Tracing overhead (bench/run.sh), acting on fragmentation (bench/act.sh), the pageblock scan (bench/scan.sh),
# the dashboard's data drawn from a real Prometheus (bench/dashboard.sh -> docs/dashboard.png);
# BENCH_QUICK=1 makes each a smoke run that writes /tmp/fragd-bench-quick.md.
bench: deps
	$(MAKE) build
	bash bench/run.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/act.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/scan.sh
	FRAGD_BUILD_DIR=$(BUILD) bash bench/dashboard.sh

clean:
	rm -rf $(BUILD)
