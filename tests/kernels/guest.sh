#!/bin/busybox sh
# SPDX-License-Identifier: Apache-2.0
# fragd's guest suite: runs as /init of a small initramfs (busybox-static, fragd,
# fragctl, fragmenter, bpftool, curl and their libraries) on the kernel under test,
# prints one "FRAGD-..." line per fact or check on the serial console, and
# powers the guest off. tests/kernels/matrix.sh reads those lines; the checks
# against the per-kernel table of programs are made there, on the host.
#
#   FRAGD-KERNEL <uname -r> <nodes> </sys/devices/system/node/online>
#   FRAGD-PROGRAM <program> <tracepoint> <attached 0|1>
#   FRAGD-CHECK <name> ok|FAIL <detail>
#   FRAGD-SERIES <series the shipped config exports> <zones in the pageblock sample>
#   FRAGD-END
. /guest_setup.sh
# metric, sample, vmstat, free_blocks9, node_unreclaimable: tests/tools/suite_lib.sh, which
# matrix.sh copies into the initramfs.
. /suite_lib.sh

FAILED=0
check() { # NAME OK(0|1) DETAIL
	if [ "$2" = 0 ]; then echo "FRAGD-CHECK $1 ok $3"; else echo "FRAGD-CHECK $1 FAIL $3"; FAILED=1; fi
}
finish() {
	[ -n "$FRAGD_PID" ] && kill -TERM "$FRAGD_PID" 2>/dev/null
	[ -n "$FRAG_PID" ] && kill -TERM "$FRAG_PID" 2>/dev/null
	echo "FRAGD-END"
	sync
	poweroff -f
}
URL=http://127.0.0.1:9717/metrics
SOCK=/run/fragd.sock
scrape() { curl -sf --max-time 10 "$URL"; }
node_free9() { awk -v n="$1," '$2 == n { s += $(5 + 9) + 2 * $(5 + 10) } END { print s + 0 }' /proc/buddyinfo; }

start_fragd() { # CONFIG
	/fragd --config "$1" --listen 127.0.0.1:9717 --socket "$SOCK" >>/tmp/fragd.log 2>&1 &
	FRAGD_PID=$!
	i=0
	while [ $i -lt 600 ]; do
		if scrape >/tmp/m.prom && grep -q '^fragd_node_fragmentation_score_percent' /tmp/m.prom; then return 0; fi
		kill -0 "$FRAGD_PID" 2>/dev/null || break
		sleep 0.2; i=$((i + 1))
	done
	echo "FRAGD-LOG $(tail -c 3000 /tmp/fragd.log | tr '\n' '|')"
	return 1
}
stop_fragd() { # sets RC
	kill -TERM "$FRAGD_PID"
	wait "$FRAGD_PID"
	RC=$?
	FRAGD_PID=
}

# The nodes the kernel brought online ("0", "0-1", "0,2-3"; a kernel without CONFIG_NUMA has no
# such file and one node), and how many the matrix asks for (fragd.nodes=N on the command line,
# the row's nodes in tests/kernels/kernels.tsv): the matrix compares the two.
ONLINE=$(cat /sys/devices/system/node/online 2>/dev/null || echo none)
NODES=$(echo "$ONLINE" | awk -F, '$0 == "none" { c = 1; next }
	{ for (i = 1; i <= NF; i++) c += split($i, r, "-") == 2 ? r[2] - r[1] + 1 : 1 } END { print c + 0 }')
WANT_NODES=$(sed -n 's/.*fragd\.nodes=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
echo "FRAGD-KERNEL $(uname -r) $NODES $ONLINE"

# 1. Load and attach, counting every allocation.
if ! start_fragd /etc/fragd-exact.yaml; then
	check start 1 "fragd did not serve metrics within 120 s"
	finish
fi
check start 0 "fragd attached: $(grep -o 'attached [0-9]*/[0-9]* BPF programs' /tmp/fragd.log)"
grep '^fragd_bpf_program_attached{' /tmp/m.prom | sed -E 's/^[^{]*\{program="([^"]*)",tracepoint="([^"]*)"\} ([01])$/FRAGD-PROGRAM \1 \2 \3/'

# 1a. The compaction settings as the kernel has them: vm.defrag_mode (6.15+) reported only
# where the file exists, proactiveness always.
pro_m=$(grep -c '^fragd_vm_compaction_proactiveness ' /tmp/m.prom)
pro_v=$(awk '$1 == "fragd_vm_compaction_proactiveness" { print $2 }' /tmp/m.prom)
dm_m=$(grep -c '^fragd_vm_defrag_mode ' /tmp/m.prom)
if [ -e /proc/sys/vm/defrag_mode ]; then dm_want=1; else dm_want=0; fi
check vm_settings "$([ "$pro_m" = 1 ] && [ "$pro_v" = "$(cat /proc/sys/vm/compaction_proactiveness)" ] && [ "$dm_m" = "$dm_want" ]; echo $?)" \
	"fragd_vm_compaction_proactiveness $pro_v (file $(cat /proc/sys/vm/compaction_proactiveness)); fragd_vm_defrag_mode series $dm_m, /proc/sys/vm/defrag_mode $([ $dm_want = 1 ] && echo present || echo absent)"

# 1a'. THP sizes: fragd_thp_allocations_total has a series for each size whose
# hugepages-<size>kB/stats the kernel has (6.9+), and none where it has none (absent, not 0).
k_sizes=$(for d in /sys/kernel/mm/transparent_hugepage/hugepages-*kB/stats; do [ -e "$d/anon_fault_alloc" ] && { d=${d%/stats}; echo "${d##*/hugepages-}"; }; done | sort | tr '\n' ' ')
f_sizes=$(grep '^fragd_thp_allocations_total{' /tmp/m.prom | grep 'path="anon_fault"' | sed -E 's/.*size="([^"]*)".*/\1/' | sort | tr '\n' ' ')
check thp_sizes "$([ "$k_sizes" = "$f_sizes" ]; echo $?)" \
	"fragd anon_fault sizes [${f_sizes% }], kernel stats [${k_sizes% }]"

# 1b. CMA (only a kernel booted with hugetlb_cma=): fragd reads the CMA pageblocks as the
# kernel lists them, and a 1 GiB pool page comes from the CMA area (cma:cma_alloc_* fire).
if grep -q 'hugetlb_cma=' /proc/cmdline; then
	# /proc/pagetypeinfo: the "Number of blocks type" header's columns line up with the zone lines'.
	kernel_cma=$(awk '/^Number of blocks type/ { for (i = 5; i <= NF; i++) if ($i == "CMA") c = i; next }
		c && /^Node/ && NF >= c { s += $c } END { print s + 0 }' /proc/pagetypeinfo)
	scrape >/tmp/cma0.prom
	fragd_cma=$(metric /tmp/cma0.prom fragd_pageblocks 'migratetype="CMA"')
	check cma_pageblocks "$([ "$kernel_cma" -gt 0 ] && [ "$fragd_cma" -eq "$kernel_cma" ]; echo $?)" \
		"fragd_pageblocks{migratetype=\"CMA\"} $fragd_cma, /proc/pagetypeinfo $kernel_cma"
	T=/sys/kernel/tracing
	G=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
	for e in cma_alloc_start cma_alloc_finish cma_alloc_busy_retry; do echo 1 >$T/events/cma/$e/enable; done
	echo >$T/trace
	# The area holds one 1 GiB page: the first comes from it, the second's cma_alloc fails
	# (the kernel then takes it from outside the area, or not at all).
	echo 1 >$G
	got=$(cat $G)
	echo 2 >$G
	starts=$(grep -c 'cma_alloc_start:' $T/trace)
	finishes=$(grep -c 'cma_alloc_finish:' $T/trace)
	# Success: a page; failure: page=0000000000000000 (or (nil)) in the event.
	k_fail=$(grep 'cma_alloc_finish:' $T/trace | grep -cE 'page=(0+|\(null\)|\(nil\)) ' || true)
	k_ok=$((finishes - k_fail))
	k_busy=$(grep -c 'cma_alloc_busy_retry:' $T/trace || true)
	for e in cma_alloc_start cma_alloc_finish cma_alloc_busy_retry; do echo 0 >$T/events/cma/$e/enable; done
	sleep 2.5
	scrape >/tmp/cma1.prom
	pool=$(metric /tmp/cma1.prom fragd_hugepages 'size="1048576kB",state="total"')
	check cma_pool "$([ "$got" = 1 ] && [ "$starts" -gt 0 ] && [ "$finishes" -gt 0 ] && [ "$pool" = "$(cat $G)" ]; echo $?)" \
		"1 GiB pool $got then $(cat $G), cma_alloc_start x$starts, cma_alloc_finish x$finishes, fragd_hugepages{size=\"1048576kB\",state=\"total\"} $pool"
	# fragd's CMA histograms against the kernel's own events, counted from fragd's start.
	f_ok=$(metric /tmp/cma1.prom fragd_cma_alloc_seconds_count 'result="success"')
	f_fail=$(metric /tmp/cma1.prom fragd_cma_alloc_seconds_count 'result="failure"')
	f_busy=$(metric /tmp/cma1.prom fragd_cma_alloc_busy_retries_total '')
	f_pages=$(metric /tmp/cma1.prom fragd_cma_alloc_pages_total 'result="success"')
	f_sum=$(awk '/^fragd_cma_alloc_seconds_sum\{.*result="success"/ { s += $2 } END { print s + 0 }' /tmp/cma1.prom)
	areas=$(grep -o '^fragd_cma_alloc_seconds_count{area="[^"]*"' /tmp/cma1.prom | sort -u | sed 's/.*area=//' | tr '\n' ' ')
	check cma_alloc "$([ "$k_ok" -ge 1 ] && [ "$f_ok" = "$k_ok" ] && [ "$f_fail" = "$k_fail" ] && [ "$f_busy" = "$k_busy" ] &&
		[ "$f_pages" = $((k_ok * 262144)) ] && [ "$f_sum" != 0 ]; echo $?)" \
		"fragd_cma_alloc_seconds_count success $f_ok failure $f_fail (kernel's events: $k_ok, $k_fail), busy retries $f_busy ($k_busy), pages $f_pages, $f_sum s, areas $areas"
	echo 0 >$G
fi

# 2. Counts against the kernel's: fragment, then grow the pool past the free 2 MiB blocks.
# No proactive compaction in the guest: it would make free blocks under the burst.
echo 0 >/proc/sys/vm/compaction_proactiveness
mkfifo /tmp/hold
/fragmenter --percent 90 </tmp/hold >/tmp/frag.out 2>&1 &
FRAG_PID=$!
exec 9>/tmp/hold
i=0
while ! grep -q '^ready' /tmp/frag.out && [ $i -lt 900 ]; do sleep 0.2; i=$((i + 1)); done
check fragment "$(grep -q '^ready' /tmp/frag.out; echo $?)" "$(cat /tmp/frag.out)"
sleep 1.5
scrape >/tmp/before.prom
s0=$(vmstat compact_stall); p0=$(cat /proc/sys/vm/nr_hugepages)
# kcompactd (woken by kswapd) can still free blocks under a write: grow again, up to 3
# writes, until some allocation had to stall. The totals cover every write.
try=0
while [ $try -lt 3 ]; do
	f=$(free_blocks9)
	echo $(($(cat /proc/sys/vm/nr_hugepages) + f + 100)) >/proc/sys/vm/nr_hugepages
	[ $(($(vmstat compact_stall) - s0)) -gt 0 ] && break
	try=$((try + 1))
done
grown=$(($(cat /proc/sys/vm/nr_hugepages) - p0)); stalls=$(($(vmstat compact_stall) - s0))
sleep 2.5
scrape >/tmp/after.prom
d() { echo $(($(metric /tmp/after.prom "$1" "$2") - $(metric /tmp/before.prom "$1" "$2"))); }
ok9=$(d fragd_alloc_total 'order="9",outcome="(fast|stalled)"')
entries=$(d fragd_direct_stall_entries_total 'phase="compaction"')
check stalls "$([ "$stalls" -gt 0 ]; echo $?)" "compact_stall +$stalls while growing the pool by $grown in $((try + 1)) write(s)"
check alloc_counts "$([ "$ok9" -eq "$grown" ]; echo $?)" "fragd counted $ok9 granted order-9 allocations, the pool grew $grown"
check stall_entries "$([ "$entries" -eq "$stalls" ]; echo $?)" "fragd $entries direct compaction entries, compact_stall +$stalls"
# Attribution: the pool's stalls are consumer hugetlb, all entries are some cgroup's, and the
# call site is named (fragd is root here: /proc/kallsyms shows addresses).
all=$(d fragd_direct_stall_entries_total '')
hug=$(d fragd_stalls_total 'consumer="hugetlb"')
cons=$(d fragd_stalls_total '')
cgs=$(d fragd_cgroup_stalls_total '')
site=$(awk '/^fragd_stall_callsite_seconds_total\{callsite="[^"]*huge[^"]*(folio|page)[^"]*"\}/ && $2 > 0 { print $1; exit }' /tmp/after.prom)
check attribution "$([ "$cons" -eq "$all" ] && [ "$cgs" -eq "$all" ] && [ "$hug" -ge "$entries" ] && [ -n "$site" ]; echo $?)" \
	"stall entries +$all: by consumer +$cons (hugetlb +$hug), by cgroup +$cgs; call site ${site:-none named}"
echo 0 >/proc/sys/vm/nr_hugepages

# 3. Score and free blocks on every node.
bad=""
n=0
while [ $n -lt "$NODES" ]; do
	grep -q "^fragd_node_fragmentation_score_percent{node=\"$n\"}" /tmp/after.prom || bad="$bad score:$n"
	grep -q "^fragd_free_blocks{node=\"$n\"," /tmp/after.prom || bad="$bad free_blocks:$n"
	# The node's node_unreclaimable as /proc/zoneinfo says it now (the guest is idle).
	want=$(node_unreclaimable $n)
	got=$(sample /tmp/after.prom "fragd_node_unreclaimable{node=\"$n\"}")
	[ -n "$want" ] && [ "$got" = "$want" ] || bad="$bad unreclaimable:$n(fragd ${got:-absent}, zoneinfo ${want:-absent})"
	n=$((n + 1))
done
check per_node "$([ -z "$bad" ]; echo $?)" "$NODES node(s)${bad:+, missing$bad}"

# 4. fragctl answers.
/fragctl --socket "$SOCK" status >/tmp/status.txt 2>&1
check fragctl_status "$(grep -q '^node 0: score' /tmp/status.txt; echo $?)" "$(head -3 /tmp/status.txt | tr '\n' '|')"
/fragctl --socket "$SOCK" hist --order 9 >/tmp/hist.txt 2>&1
check fragctl_hist "$(grep -q '^order 9' /tmp/hist.txt; echo $?)" "$(grep '^order 9' /tmp/hist.txt | cut -c1-120)"

# 5. SIGTERM detaches: fragd exits 0 and no tracing program is left.
stop_fragd
left=$(bpftool prog show 2>/dev/null | grep -cE 'tracepoint|raw_tracepoint|tracing')
check detach "$([ "$RC" = 0 ] && [ "$left" = 0 ]; echo $?)" "exit status $RC, $left tracing programs left"

# 6. Act mode compacts each node once, on that node; a pool lands on the node asked for.
if start_fragd /etc/fragd-act.yaml; then
	n=$((NODES - 1))
	b=$(node_free9 $n)
	scrape >/tmp/c0.prom
	/fragctl --socket "$SOCK" compact --node $n --timeout 300 >/tmp/compact.txt 2>&1
	rc=$?
	a=$(node_free9 $n)
	sleep 1.5
	scrape >/tmp/c1.prom
	runs=$(($(metric /tmp/c1.prom fragd_compaction_runs_total 'trigger="fragd"') - $(metric /tmp/c0.prom fragd_compaction_runs_total 'trigger="fragd"')))
	# fragctl exits 0 for ok and no_gain; the kernel ran the compaction fragd wrote (trigger
	# fragd) and fragd's outcome names the node. Whether it frees blocks is the kernel's
	# business (after failed direct compactions it may not): shown, not checked.
	check compact "$([ $rc = 0 ] && [ "$runs" -gt 0 ] && grep -q "compact node $n:" /tmp/compact.txt; echo $?)" \
		"node $n: $runs zone compaction runs by fragd, free 2 MiB blocks $b -> $a: $(tr '\n' '|' </tmp/compact.txt)"
	/fragctl --socket "$SOCK" pool set 2MB 8 --node $n --timeout 300 >/tmp/pool.txt 2>&1
	rc=$?
	got=$(cat /sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages)
	others=0
	m=0
	while [ $m -lt $n ]; do
		others=$((others + $(cat /sys/devices/system/node/node$m/hugepages/hugepages-2048kB/nr_hugepages)))
		m=$((m + 1))
	done
	check pool_node "$([ $rc = 0 ] && [ "$got" = 8 ] && [ "$others" = 0 ]; echo $?)" "node $n pool $got (want 8), other nodes $others: $(tr '\n' '|' </tmp/pool.txt)"
	/fragctl --socket "$SOCK" pool set 2MB 0 --node $n --timeout 300 >/dev/null 2>&1
	stop_fragd
	check act_exit "$RC" "exit status $RC"
else
	check compact 1 "fragd in act mode did not start"
fi
# 7. Act mode per NUMA node: with node 1 splintered and node 0 left alone, fragd's policy
# (compaction.nodes: all, the score trigger, a pool on node 1) must compact node 1 only
# and put the pool on node 1 only.
# The first fragmenter (step 2) gives its memory back first.
exec 9>&-
[ -n "$FRAG_PID" ] && wait "$FRAG_PID"
FRAG_PID=
if [ "${WANT_NODES:-1}" -lt 2 ]; then
	check numa_act 0 "one node asked for (tests/kernels/kernels.tsv), skipped"
elif [ "$NODES" -lt 2 ]; then
	check numa_act 1 "$WANT_NODES nodes asked for (tests/kernels/kernels.tsv), the guest has $NODES (online: $ONLINE)"
else
	POOL=64
	node_pool() { cat /sys/devices/system/node/node$1/hugepages/hugepages-2048kB/nr_hugepages; }
	node_memfree() { awk '$3 == "MemFree:" { print $4 }' /sys/devices/system/node/node$1/meminfo; }
	# Both nodes compacted first (the earlier steps leave node 0 at scores up to ~30): node 0's
	# score then stays far below high, and what follows on node 1 is the fragmenter's doing.
	echo 1 >/proc/sys/vm/compact_memory
	m0=$(node_memfree 0); m1=$(node_memfree 1)
	# 70% of node 1's free memory leaves more than $POOL free 2 MiB blocks there: the pool is
	# allocated without a compaction, and node 1's score stays above high for fragd's own.
	mkfifo /tmp/hold1
	/fragmenter --node 1 --percent 70 </tmp/hold1 >/tmp/frag1.out 2>&1 &
	FRAG_PID=$!
	exec 9>/tmp/hold1
	i=0
	while ! grep -q '^ready' /tmp/frag1.out && kill -0 "$FRAG_PID" 2>/dev/null && [ $i -lt 900 ]; do sleep 0.2; i=$((i + 1)); done
	f0=$(node_memfree 0); f1=$(node_memfree 1)
	# Node 0 may lose a little to the page cache, fragd's log and the like; not a tenth of node 1's.
	check numa_fragment "$(grep -q '^ready' /tmp/frag1.out && [ $((m1 - f1)) -gt 0 ] && [ $(((m0 - f0) * 10)) -lt $((m1 - f1)) ]; echo $?)" \
		"fragmenter --node 1: $(head -1 /tmp/frag1.out); MemFree node 0 $m0 -> $f0 kB, node 1 $m1 -> $f1 kB"
	b0=$(node_free9 0); b1=$(node_free9 1)
	cat >/tmp/fragd-numa.yaml <<-EOF
	mode: act
	pageblocks:
	  scan: false
	compaction:
	  nodes: all
	  score:
	    enabled: true
	    high: 40
	    low: 20
	  demand:
	    enabled: false
	hugepages:
	  guard: 64MiB
	  pools: [{size: 2MB, node: 1, count: $POOL}]
	EOF
	# The kernel's own account of who compacted which node: every zone compaction run starts
	# with compaction:mm_compaction_begin, which names the zone by its first pfn.
	T=/sys/kernel/tracing
	echo 1 >$T/events/compaction/mm_compaction_begin/enable
	echo >$T/trace
	if start_fragd /tmp/fragd-numa.yaml; then
		cp /tmp/m.prom /tmp/n0.prom
		# Runs by node, kcompactd's left out (the kernel wakes it on its own, on the node it
		# serves): "NODE COMM" per run of fragd or any other task, from the kernel's trace.
		awk '/^Node/ { n = $2; sub(/,/, "", n); sp = 0 } $1 == "spanned" { sp = $2 }
			$1 == "start_pfn:" && sp > 0 { printf "%x %s\n", $2, n }' /proc/zoneinfo >/tmp/zones
		runs() {
			awk 'NR == FNR { node[$1] = $2; next }
				/mm_compaction_begin:/ && $1 !~ /^kcompactd/ {
					z = $0; sub(/.*zone_start=0x/, "", z); sub(/ .*/, "", z)
					c = $1; sub(/-[0-9]+$/, "", c)
					print (z in node ? node[z] : "?"), c }' /tmp/zones $T/trace >/tmp/runs
			k0=$(awk '$1 != 1' /tmp/runs | wc -l); k1=$(awk '$1 == 1 && $2 == "fragd-write"' /tmp/runs | wc -l)
		}
		# Acted: the pool reached its target, an action on node 1 ended (ok, no_gain, or cut at
		# its deadline: under TCG a pool compaction zeroes its temporary pool's pages in software
		# and its share of compaction.cpu_budget often ends it first, sometimes before the kernel
		# compacted anything, when the pool's first blocks were free ones), and the kernel's record
		# shows fragd's writer compacting node 1. The promise is which node fragd compacts.
		i=0
		while [ $i -lt 120 ]; do
			scrape >/tmp/n1.prom || true
			c1=$(metric /tmp/n1.prom fragd_actions_total 'action="compact",node="1",result="(ok|no_gain|cut)"')
			runs
			[ "$c1" -gt 0 ] && [ "$k1" -gt 0 ] && [ "$(node_pool 1)" = "$POOL" ] && break
			kill -0 "$FRAGD_PID" 2>/dev/null || break
			sleep 1; i=$((i + 1))
		done
		# One more tick: an action on node 0 decided at the same time would show now.
		sleep 2.5
		scrape >/tmp/n1.prom
		a0=$(node_free9 0); a1=$(node_free9 1)
		echo 0 >$T/events/compaction/mm_compaction_begin/enable
		runs
		who=$(sort /tmp/runs | uniq -c | awk '{ printf "%s%s on node %s x%s", (NR > 1 ? ", " : ""), $3, $2, $1 }')
		p0=$(node_pool 0); p1=$(node_pool 1)
		score() { metric "$1" fragd_node_fragmentation_score_percent "node=\"$2\""; }
		c1=$(metric /tmp/n1.prom fragd_actions_total 'action="compact",node="1",result="(ok|no_gain|cut)"')
		c1all=$(metric /tmp/n1.prom fragd_actions_total 'action="compact",node="1",')
		c0=$(metric /tmp/n1.prom fragd_actions_total 'action="compact",node="0",')
		pool_acts=$(metric /tmp/n1.prom fragd_actions_total 'action="pool",node="1",result="ok"')
		check numa_compact "$([ "$c1" -gt 0 ] && [ "$c0" = 0 ] && [ "$k1" -gt 0 ] && [ "$k0" = 0 ]; echo $?)" \
			"after $i polls 1 s apart: fragd_actions_total{action=\"compact\"} node 1: $c1 ok|no_gain|cut ($c1all in all), node 0: $c0; zone compaction runs (mm_compaction_begin, kcompactd aside) node 1 by fragd-write: $k1, node 0 or unknown zone: $k0 (${who:-none}); score at start node 0 $(score /tmp/n0.prom 0), node 1 $(score /tmp/n0.prom 1); now node 0 $(score /tmp/n1.prom 0), node 1 $(score /tmp/n1.prom 1)"
		check numa_pool "$([ "$p1" = "$POOL" ] && [ "$p0" = 0 ]; echo $?)" \
			"2 MiB pool node 1: $p1 (want $POOL), node 0: $p0; fragd_actions_total{action=\"pool\",node=\"1\",result=\"ok\"} $pool_acts"
		grep 'action [0-9]* ' /tmp/fragd.log | sed 's/^/FRAGD-NOTE /'
		# The pool took its pages from node 1's free blocks: made blocks are free ones plus those.
		check numa_free_blocks "$([ $((a1 + p1)) -gt "$b1" ]; echo $?)" \
			"free 2 MiB blocks node 1: $b1 -> $a1 (and $p1 in its pool), node 0: $b0 -> $a0"
		stop_fragd
		check numa_act_exit "$RC" "exit status $RC"
	else
		check numa_compact 1 "fragd with /tmp/fragd-numa.yaml did not start"
	fi
	echo 0 >$T/events/compaction/mm_compaction_begin/enable
	echo 0 >/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages
	exec 9>&-
	wait "$FRAG_PID"
	FRAG_PID=

	# 7b. The guard per node: a task bound to node 1 holds 40% of node 1's free memory; a pool on
	# node 1 asked for 800 MiB, more than node 1 can spare, must stop where node 1's own spare
	# memory (its MemAvailable, counted as the kernel counts the host's) meets hugepages.guard,
	# though node 0 keeps the host's MemAvailable far above it (read after it, that and the
	# per-CPU lists' free pages must hold the guard). Then the bound
	# task grows by half the guard on node 1 and must get it: no OOM kill (the kernel's oom_kill
	# count), both processes alive.
	# A guard on MemAvailable alone lets the pool take node 1 down to its watermarks, and the
	# bound task's growth is OOM-killed.
	GUARD_KIB=131072
	# Free pages on node 1's per-CPU lists (kB): free, but out of MemFree. The kernel moves
	# pages between them and the free lists at any time (tens of MiB here), which MemFree shows
	# and the memory does not: the check below counts them as free.
	pcp1() { awk '$1 == "Node" { n = $2; sub(/,/, "", n) } n == 1 && $1 == "count:" { s += $2 } END { print s * 4 }' /proc/zoneinfo; }
	# Node 1's spare memory as fragd reads it (policy.h read_spare_memory): the node's MemAvailable,
	# counted as the kernel counts the host's.
	spare1() { awk 'FNR == NR { if ($1 == "Node") { n = $2; sub(/,/, "", n); next }
			if (n != 1) next
			if ($1 == "high") r += $2; else if ($1 == "low") l += $2
			else if ($1 == "protection:") { gsub(/[(),]/, " "); m = 0; for (i = 2; i <= NF; i++) if ($i + 0 > m) m = $i + 0; r += m }
			next }
		$3 == "MemFree:" { f = $4 } $3 == "Active(file):" || $3 == "Inactive(file):" { c += $4 }
		$3 == "SReclaimable:" && !kk { k = $4 } $3 == "KReclaimable:" { k = $4; kk = 1 }
		END { r *= 4; l *= 4; a = f > r ? f - r : 0; a += c - (c / 2 < l ? int(c / 2) : l); a += k - (k / 2 < l ? int(k / 2) : l); print a }' \
		/proc/zoneinfo /sys/devices/system/node/node1/meminfo; }
	avail() { awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo; }
	vmstat_of() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
	await_ready() { # FILE PID: 0 once FILE says ready, 1 when PID ended or 120 s passed
		i=0
		while [ $i -lt 600 ]; do
			grep -q '^ready' "$1" && return 0
			kill -0 "$2" 2>/dev/null || return 1
			sleep 0.2; i=$((i + 1))
		done
		return 1
	}
	cat >/tmp/fragd-guard.yaml <<-EOF
	mode: act
	pageblocks:
	  scan: false
	compaction:
	  score:
	    enabled: false
	  demand:
	    enabled: false
	hugepages:
	  guard: 128MiB
	EOF
	mkfifo /tmp/hold2 /tmp/hold3
	/fragmenter --node 1 --percent 40 --keep 1 </tmp/hold2 >/tmp/bound.out 2>&1 &
	BOUND_PID=$!
	exec 8>/tmp/hold2
	if await_ready /tmp/bound.out "$BOUND_PID" && start_fragd /tmp/fragd-guard.yaml; then
		oom0=$(vmstat_of oom_kill); s0=$(spare1); c0=$(pcp1)
		/fragctl --socket "$SOCK" pool set 2MB 400 --node 1 --timeout 300 >/tmp/guard.txt 2>&1
		p1=$(node_pool 1); p0=$(node_pool 0); s1=$(spare1); c1=$(pcp1); av=$(avail)
		made1=$(awk '$3 == "MemFree:" || $3 == "Active(file):" || $3 == "Inactive(file):" || $3 == "SReclaimable:" || $3 == "Unevictable:" || $3 == "FilePages:" {
			printf "%s%s %s", (n++ ? ", " : ""), $3, $4 }' /sys/devices/system/node/node1/meminfo)
		check numa_guard "$([ "$p1" -gt 0 ] && [ "$p1" -lt 400 ] && [ "$p0" = 0 ] && [ $((s1 + c1)) -ge "$GUARD_KIB" ] &&
			[ "$av" -gt $((GUARD_KIB + 262144)) ] && grep -q 'node 1 can spare' /tmp/guard.txt; echo $?)" \
			"bound task: $(head -1 /tmp/bound.out); pool node 1: $p1 of 400 (node 0: $p0); node 1 spare $s0 -> $s1 kB and per-CPU lists $c0 -> $c1 kB (now $made1), guard $GUARD_KIB kB; host MemAvailable $av kB: $(tr '\n' '|' </tmp/guard.txt)"
		/fragmenter --node 1 --mib $((GUARD_KIB / 2048)) --keep 1 </tmp/hold3 >/tmp/grow.out 2>&1 &
		GROW_PID=$!
		exec 7>/tmp/hold3
		await_ready /tmp/grow.out "$GROW_PID"
		grown=$?
		oom1=$(vmstat_of oom_kill)
		alive=0
		kill -0 "$BOUND_PID" 2>/dev/null && alive=$((alive + 1))
		kill -0 "$GROW_PID" 2>/dev/null && alive=$((alive + 1))
		[ "$oom1" = "$oom0" ] || dmesg | sed -n '/invoked oom-killer/,/Killed process/p' | grep -E 'invoked|Node 1|free:|Killed' | sed 's/^/FRAGD-NOTE /'
		check numa_guard_bound "$([ $grown = 0 ] && [ "$alive" = 2 ] && [ "$oom1" = "$oom0" ]; echo $?)" \
			"the bound task grew by $((GUARD_KIB / 2048)) MiB on node 1: $(head -1 /tmp/grow.out | tr '\n' ' ')(ready: $([ $grown = 0 ] && echo yes || echo no)); $alive of 2 processes alive; oom_kill $oom0 -> $oom1"
		exec 7>&-
		wait "$GROW_PID"
		/fragctl --socket "$SOCK" pool set 2MB 0 --node 1 --timeout 300 >/dev/null 2>&1
		stop_fragd
	else
		check numa_guard 1 "the bound task ($(head -1 /tmp/bound.out)) or fragd with /tmp/fragd-guard.yaml did not start"
	fi
	echo 0 >/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages
	exec 8>&-
	wait "$BOUND_PID"
fi
# 8. The series the shipped config exports on this guest's nodes and zones (docs/metrics.md "Series"),
# once the first sampled round is in.
if start_fragd /etc/fragd-default.yaml; then
	i=0
	until [ "$(metric /tmp/m.prom fragd_scans_total 'result="ok"')" -ge 1 ] || [ $i -ge 300 ]; do
		sleep 0.2; i=$((i + 1)); scrape >/tmp/m.prom
	done
	scrape >/tmp/m.prom
	echo "FRAGD-SERIES $(grep -vc '^#' /tmp/m.prom) $(grep -c '^fragd_pageblock_sample_blocks' /tmp/m.prom)"
	stop_fragd
fi
echo "FRAGD-RESULT $([ $FAILED = 0 ] && echo pass || echo fail)"
finish
