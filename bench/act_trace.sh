# SPDX-License-Identifier: Apache-2.0
# The act benchmark's record of the kernel's compaction over each burst (sourced by bench/act.sh,
# which defines rmeta, log and R, the run's directory, before calling these).
# shellcheck shell=bash

# The kernel's deferral of direct compaction over each burst (compaction:mm_compaction_deferred,
# mm_compaction_defer_compaction, mm_compaction_defer_reset) and how its compaction runs ended
# (mm_compaction_end: mode/status) in a private tracefs instance: after failed sync compactions a zone
# skips up to 64 attempts at that order, and a pool write stops at its first page that fails, so
# the run's details say when a burst met a deferred zone. The same instance records, per task
# (kcompactd*, a pool writer, fragd), how many compaction runs began, how many pageblocks lay between
# their scanners at the start (mm_compaction_begin) and how many passes the migration scanner made
# over blocks (mm_compaction_isolate_migratepages: one or more per block it examines): a block whose
# skip hint is set is passed over without one. A node compaction leaves skip hints on the
# blocks it took nothing from, and the kernel clears them only when kswapd goes to sleep after a
# direct compaction's scanners met, or when a compaction restarts after the longest deferral
# (mm/compaction.c, __reset_isolation_suitable), so kswapd's wakes and sleeps (vmscan:) are
# counted too, and whether kswapd has given up on the node (node_unreclaimable) at the burst.
# It also counts each task's entries into direct compaction (mm_compaction_try_to_compact_pages,
# one per allocation that entered it, skipped and deferred zones included): the kernel's own
# record of which allocations stalled, which the stall goals count with (direct_entries).
# Without tracefs instances: not recorded.
TRACE_INST=
deferral_start() {
	trace_open TRACE_INST "fragd-bench-act-$$" 4096 compaction/mm_compaction_deferred \
		compaction/mm_compaction_defer_compaction compaction/mm_compaction_defer_reset compaction/mm_compaction_end \
		compaction/mm_compaction_begin compaction/mm_compaction_isolate_migratepages \
		compaction/mm_compaction_try_to_compact_pages vmscan/mm_vmscan_kswapd_wake vmscan/mm_vmscan_kswapd_sleep
}
deferral_stop() {
	[[ -n $TRACE_INST ]] || return 0
	echo 0 >"$TRACE_INST/tracing_on"
	grep -v '^#' "$TRACE_INST/trace" >"$R/deferral.trace" || true
	# One pass over the record: key=value lines for run.env. compaction_scan is "TASK runs R, blocks
	# spanned S, scanner passes P" per task, sorted by name (kcompactdN as one).
	python3 - "$R/deferral.trace" >>"$R/run.env" <<'PY'
import re, sys
line_re = re.compile(r"^\s*(.+)-\d+\s+\[\d+\]")
begin_re = re.compile(r"mm_compaction_begin:.*migrate_pfn=0x([0-9a-f]+) free_pfn=0x([0-9a-f]+)")
end_re = re.compile(r"mm_compaction_end:.*mode=([a-z]+) status=([a-z_]+)")
last_re = re.compile(r"(zone=[A-Za-z0-9]+).*(order=[0-9]+).*(limit=[0-9]+)")
count = {"deferred_checks": 0, "defer_resets": 0, "defers": 0, "kswapd_wakes": 0, "kswapd_sleeps": 0}
event_key = {"mm_compaction_deferred:": "deferred_checks", "mm_compaction_defer_reset:": "defer_resets",
             "mm_compaction_defer_compaction:": "defers", "mm_vmscan_kswapd_wake:": "kswapd_wakes",
             "mm_vmscan_kswapd_sleep:": "kswapd_sleeps"}
ends, runs, span, passes, direct = {}, {}, {}, {}, {}
deferred_last = ""
with open(sys.argv[1], errors="replace") as f:
    for line in f:
        m = line_re.match(line)
        if not m:
            continue
        task = re.sub(r"^kcompactd\d+$", "kcompactd", m.group(1))
        for event, key in event_key.items():
            if event in line:
                count[key] += 1
                if key == "deferred_checks":
                    d = last_re.search(line.split(event, 1)[1])
                    deferred_last = " ".join(d.groups()) if d else ""
        if "mm_compaction_try_to_compact_pages:" in line:
            direct[m.group(1)] = direct.get(m.group(1), 0) + 1
        if b := begin_re.search(line):
            runs[task] = runs.get(task, 0) + 1
            span[task] = span.get(task, 0) + (int(b.group(2), 16) - int(b.group(1), 16)) // 512
        elif "mm_compaction_isolate_migratepages:" in line:
            passes[task] = passes.get(task, 0) + 1
        elif e := end_re.search(line):
            k = f"{e.group(1)}/{e.group(2)}"
            ends[k] = ends.get(k, 0) + 1
for key, n in count.items():
    print(f"{key}={n}")
print("compaction_ends=" + ", ".join(f"{k} {n}" for k, n in sorted(ends.items())))
print(f"deferred_last={deferred_last}")
print("direct_entries=" + "; ".join(f"{t} {direct[t]}" for t in sorted(direct)))
print("compaction_scan=" + "; ".join(f"{t} runs {runs[t]}, blocks spanned {span[t]}, scanner passes "
                                     f"{passes.get(t, 0)}" for t in sorted(runs)))
PY
	rmeta trace_lost "$(trace_lost "$TRACE_INST")"
	trace_close TRACE_INST
}
