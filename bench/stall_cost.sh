#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What fragd's BPF programs cost per event, by the kernel's own BPF run-time statistics. As root
# after the build:
#
#   bash bench/stall_cost.sh      # 5 rounds, about 9 minutes; writes BENCHMARKS.md (stall_cost)
#
# Each round runs four arms in arm_order's order:
#   fault    fragd (bpf.allocations: exact) while `pagefault` faults order-0 pages on CPU 1:
#            `fragctl cost --seconds 4 --json` (page_alloc_btf's ns per run);
#   floor    bench/floor.c's empty tp_btf program on kmem:mm_page_alloc, the same faults, with
#            kernel.bpf_stats_enabled=1: bpftool's run_time_ns / run_cnt of the empty program;
#   shipped  fragd (shipped config, observe) while STALLS one-page hugetlb pool writes stall on
#            memory fragmented 60% with no free 2 MiB block left: `fragctl cost --json` over the
#            writes, compact_stall and fragd's order-9 stall counters before and after;
#   stack0   the same with `attribution.stack_interval: 0s` (a kernel stack at every stall).
# try_to_compact is the program that opens a stall and attributes it (site, cgroup, stack).
#
# Knobs: BENCH_STALL_ROUNDS (5), BENCH_STALL_WRITES (300), BENCH_STALL_SECONDS (20, the cost
# window of a stall arm), STALL_COST_YAML (appended to every arm's config), FRAGD_BUILD_DIR,
# BENCH_OUTPUT, BENCH_KEEP=1; BENCH_QUICK=1: 2 rounds of 100 writes in 8 s. Puts back
# vm.compaction_proactiveness, vm.nr_hugepages and kernel.bpf_stats_enabled on exit.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start stall_cost "it loads BPF and writes sysctls" fragd fragctl fragmenter -- gcc clang taskset bpftool \
	python3 curl flock
ROUNDS=${BENCH_STALL_ROUNDS:-$(q 5 2)}
STALLS=${BENCH_STALL_WRITES:-$(q 300 100)}
SECONDS_COST=${BENCH_STALL_SECONDS:-$(q 20 8)}
require_positive ROUNDS STALLS SECONDS_COST
OUT=$(report_output "$QUICK" "$ROOT")
STATS=/proc/sys/kernel/bpf_stats_enabled
bench_work stall-cost 10
build_fault_tools
STATS_ORIG=$(<"$STATS")
restore_on_exit() {
	restore_memory_settings
	[[ $(<"$STATS") == "$STATS_ORIG" ]] || echo "$STATS_ORIG" >"$STATS" || log "cannot restore $STATS=$STATS_ORIG"
}
take_heavy_lock
save_memory_settings
echo 0 >"$PRO"
begin_meta "$BUILD_DIR/fragd"
meta quick="$QUICK" rounds="$ROUNDS" stalls="$STALLS" cost_s="$SECONDS_COST" yaml="${STALL_COST_YAML:-}"

config() { # ARM -> its config file
	local f="$WORK/$1.yaml"
	sed 's/^mode: .*/mode: observe/' configs/fragd.yaml >"$f"
	if [[ $1 == fault ]]; then
		sed -i 's/^  allocations: adaptive$/  allocations: exact/' "$f"
		grep -q '^  allocations: exact$' "$f" || die "configs/fragd.yaml: no '  allocations: adaptive' line to make exact"
	fi
	[[ $1 != stack0 ]] || printf 'attribution: {stack_interval: 0s}\n' >>"$f"
	[[ -z ${STALL_COST_YAML:-} ]] || printf '%s\n' "$STALL_COST_YAML" >>"$f"
	echo "$f"
}
stall_counters() { curl -sf "$URL" | grep -E '^fragd_(alloc_stall_phase_seconds|direct_stall_entries)_total'; }

fault_arm() { # DIR
	FRAGD="$BUILD_DIR/fragd" start_fragd_in "$1" "$(config fault)"
	taskset -c 1 "$WORK/pagefault" -m 256 -t 6 -w 1 >"$1/pagefault.out" &
	local pf=$!
	sleep 1
	"$BUILD_DIR/fragctl" --socket "$SOCK" cost --seconds 4 --json >"$1/cost.json"
	wait "$pf"
	stop_pid "$FRAGD_PID" 30
}

floor_arm() { # DIR
	start_floor "$1"
	echo 1 >"$STATS"
	taskset -c 1 "$WORK/pagefault" -m 256 -t 3 -w 1 >"$1/pagefault.out"
	bpftool prog show name floor_page_alloc --json >"$1/floor.json"
	echo "$STATS_ORIG" >"$STATS"
	stop_pid "$FLOOR_PID" 15
}

stall_arm() { # DIR ARM
	local s0 s1 i
	FRAGD="$BUILD_DIR/fragd" start_fragd_in "$1" "$(config "$2")"
	FRAG_SYNC=0 start_fragmenter "$BUILD_DIR/fragmenter" "$1" 60 300 || die "$FRAG_ERROR"
	free_blocks9 >"$HP" # every free 2 MiB block into the pool: each page after it must compact
	sleep 2
	stall_counters >"$1/s0.prom"
	"$BUILD_DIR/fragctl" --socket "$SOCK" cost --seconds "$SECONDS_COST" --json >"$1/cost.json" &
	local cost=$!
	sleep 1
	s0=$(vmstat compact_stall)
	for ((i = 0; i < STALLS; i++)); do echo $(($(<"$HP") + 1)) >"$HP"; done
	s1=$(vmstat compact_stall)
	wait "$cost"
	stall_counters >"$1/s1.prom"
	echo "compact_stall=$((s1 - s0))" >"$1/run.env"
	echo 0 >"$HP"
	exec 9>&- # the fragmenter's FIFO: it ends at EOF
	stop_pid "$FRAG_PID" 60
	stop_pid "$FRAGD_PID" 30
}

for ((r = 1; r <= ROUNDS; r++)); do
	for arm in $(arm_order "$r" fault floor shipped stack0); do
		dir="$WORK/round$r/$arm"
		mkdir -p "$dir"
		case $arm in
		fault) fault_arm "$dir" ;;
		floor) floor_arm "$dir" ;;
		*) stall_arm "$dir" "$arm" ;;
		esac
		log "round $r $arm done"
	done
done
meta_minutes

# What the report reads, kept: `python3 bench/stall_cost_report.py bench/data/stall_cost OUT`.
keep_found stall_cost "$WORK" -name meta.env -o -name cost.json -o -name floor.json -o -name run.env \
	-o -name 's[01].prom' -o -name pagefault.out
FAILED=0
/usr/bin/python3 bench/stall_cost_report.py "$WORK" "$OUT"
