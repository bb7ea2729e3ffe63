#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Who stalls, who pays, where, against what the test did. On memory fragmented
# (1 page in 4 kept) with every free 2 MiB block taken into the hugetlb pool, so that
# each later 2 MiB allocation compacts:
#  1. cgroup A grows the pool by 20 pages (until the kernel counts a stall), cgroup B faults 256 MiB of MADV_HUGEPAGE
#     memory: each cgroup has its own series with stalls; consumer hugetlb and
#     thp_fault hold at least A's and B's stalls; a hugetlb call site and a THP fault
#     call site have stall time (kernel frames named through /proc/kallsyms);
#  1a. cgroup C, whose name is not UTF-8 (bytes 0xff 0xfe: any bytes but '/' make a cgroup
#     name, and a user may make one in its delegated subtree), grows the pool too: its series
#     names it with each bad byte written \xnn, `fragctl top` the same, and every scrape is
#     UTF-8 throughout, accepted by promtool and by Prometheus' Python parser;
#  2. 200 more cgroups grow the pool by one page each, with no free 2 MiB block left
#     before each: at most K + 1 cgroup series
#     (attribution.top_cgroups 5), the others summed in "other", which grew;
#     `fragctl top` shows the same counts and names the stacks' frames;
#  1b. B's THP coverage (fragd_thp_cgroup_anon_*) equals its memory.stat (v2, or the v1
#     memory controller of a hybrid host) while B holds its memory;
#  3. the cgroups are deleted: their series vanish at the next sweep (10 s),
#     fragd_cgroups_removed_total grows by exactly the number of them that had an entry in
#     fragd's BPF map stall_cgroups (bpftool, before the deletion), "other" never shrinks;
# and at every scrape the sums over consumer, over cgroup (with "other") equal
# fragd_direct_stall_entries_total and the stall seconds equal
# fragd_alloc_stall_phase_seconds_total (both summed over phase).
source "$(dirname "$0")/lib.sh"
require_root
CGROOT=/sys/fs/cgroup
[ -f $CGROOT/cgroup.controllers ] || CGROOT=/sys/fs/cgroup/unified
[ -f $CGROOT/cgroup.controllers ] || skip_or_fail "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified"
THP=/sys/kernel/mm/transparent_hugepage
grep -q '\[never\]' $THP/enabled && skip_or_fail "THP is off on this host ($THP/enabled)"
command -v promtool >/dev/null || skip_or_fail "promtool missing (Debian package prometheus)"
heavy_lock
quiet_memory 0

K=5
cat >"$WORK/fragd.yaml" <<YAML
mode: observe
attribution: {top_cgroups: $K, top_callsites: 10}
YAML
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd

CGS=()
# On a hybrid host the memory controller is v1's (/sys/fs/cgroup/memory): each test cgroup gets
# a v1 memory cgroup of the same path, as systemd keeps them, and its processes join both.
V1MEM=/sys/fs/cgroup/memory
[ "$CGROOT" != /sys/fs/cgroup/unified ] || [ -f $V1MEM/cgroup.procs ] || V1MEM=
[ "$CGROOT" = /sys/fs/cgroup/unified ] || V1MEM=
# rmcg DIR: ends the processes left in cgroup DIR (a failed test leaves B's), then removes it.
rmcg() {
  [ -d "$1" ] || return 0
  local p
  for p in $(cat "$1/cgroup.procs"); do kill -KILL "$p" 2>/dev/null || true; done
  for p in $(seq 1 50); do [ -z "$(cat "$1/cgroup.procs")" ] && break; sleep 0.1; done
  rmdir "$1"
}
mkcg() {
  mkdir "$CGROOT/$1"
  CGS+=("$1")
  on_exit "rmcg '$CGROOT/$1'"
  if [ -n "$V1MEM" ]; then
    mkdir "$V1MEM/$1"
    on_exit "rmcg '$V1MEM/$1'"
  fi
}
# in_cgroup CG CMD...: CMD in a new process that first moves itself into CG.
in_cgroup() {
  local cg=$1
  shift
  bash -c 'echo $$ >"$0/cgroup.procs" && { [ -z "$1" ] || echo $$ >"$1/cgroup.procs"; } && shift && exec "$@"' \
    "$CGROOT/$cg" "${V1MEM:+$V1MEM/$cg}" "$@"
}
grow_pool() { echo $(($(cat $HP) + $1)) >$HP; }

log "fragmenting 60% of available memory (keeps 1 of every 4 pages)"
start_fragmenter "$BUILD/fragmenter" "$WORK" 60 360 || fail "$FRAG_ERROR"
free0=$(free_blocks9)
grow_pool "$free0"
log "fragmented; the pool took the $free0 free 2 MiB blocks (now $(cat $HP) pages, $(free_blocks9) free blocks left)"

# valid_scrape FILE: the scrape is UTF-8 throughout (Prometheus refuses a scrape whole for one
# label value that is not) and promtool accepts it.
valid_scrape() {
  /usr/bin/python3 - "$1" <<'PY' || fail "$1 is not UTF-8 (above): Prometheus would refuse every series of this scrape"
import sys
b = open(sys.argv[1], "rb").read()
try:
    b.decode("utf-8")
except UnicodeDecodeError as e:
    line = b[:e.start].count(b"\n") + 1
    print(f"byte 0x{b[e.start]:02x} on line {line}: {b.splitlines()[line - 1][:160]!r}")
    sys.exit(1)
PY
  promtool check metrics <"$1" >"$WORK/promtool.out" 2>&1 ||
    { cat "$WORK/promtool.out" >&2; fail "promtool check metrics rejected $1 (above)"; }
}
# check FILE: the scrape is valid; the sums over consumer and cgroup equal the stall totals.
check_sums() {
  valid_scrape "$1"
  /usr/bin/python3 - "$1" <<'PY' || fail "attribution sums differ from the stall totals in $1 (above)"
import sys
from prometheus_client.parser import text_string_to_metric_families
tot = {}
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        tot[s.name] = tot.get(s.name, 0) + s.value
entries = tot.get("fragd_direct_stall_entries_total", 0)
secs = tot.get("fragd_alloc_stall_phase_seconds_total", 0)
bad = []
for name, want in (("fragd_stalls_total", entries), ("fragd_cgroup_stalls_total", entries),
                   ("fragd_stall_seconds_total", secs), ("fragd_cgroup_stall_seconds_total", secs),
                   ("fragd_stall_callsite_seconds_total", secs)):
    got = tot.get(name)
    if got is None or abs(got - want) > 1e-6 * max(1.0, want):
        bad.append(f"{name} sums to {got}, the stall total is {want}")
for b in bad:
    print("FAIL", b)
print(f"sums: {entries:.0f} stall entries, {secs:.6f} s in stalls, equal over consumer, cgroup and call site" if not bad else "")
sys.exit(1 if bad else 0)
PY
}
# quiet_scrape FILE: after the work ended, two ticks, then the scrape.
quiet_scrape() { sleep 2.5; scrape >"$1"; }
cgval() { metric "$1" "$2" "cgroup=\"$3\""; }

# 1. Two cgroups, two consumers.
mkcg fragd-attr-a
mkcg fragd-attr-b
s0=$(scrape)
echo "$s0" >"$WORK/s0.prom"
# Right before each cgroup's work the pool takes the free 2 MiB blocks kcompactd made meanwhile.
# A compaction run may free more than the one block it was for, and kcompactd frees blocks
# between two writes: a cgroup's pages can all come without a stall. Each cgroup asks again,
# up to 10 times, until the kernel counts a stall (compact_stall, allocstall_*) during its write.
kernel_stalls() { awk '$1 == "compact_stall" || $1 ~ /^allocstall_/ { s += $2 } END { print s }' /proc/vmstat; }
# grow_stalling CG N: CG grows the pool by N pages until the kernel counts a stall; prints the tries.
grow_stalling() {
  local try k0
  for try in $(seq 1 10); do
    grow_pool "$(free_blocks9)"
    k0=$(kernel_stalls)
    in_cgroup "$1" bash -c "echo \$((\$(cat $HP) + $2)) > $HP"
    if [ "$(kernel_stalls)" -gt "$k0" ]; then echo "$try"; return 0; fi
  done
  return 1
}
tries_a=$(grow_stalling fragd-attr-a 20) || fail "cgroup A grew the pool by 20 pages 10 times and the kernel counted no stall: nothing to attribute"
BADCG=$'fragd-attr-\xff\xfe'
BADCG_LABEL='/fragd-attr-\xff\xfe'   # the label value: each byte that is not UTF-8 written \xnn
mkcg "$BADCG"
tries_c=$(grow_stalling "$BADCG" 10) || fail "cgroup C grew the pool by 10 pages 10 times and the kernel counted no stall: nothing to attribute"
log "the kernel counted stalls in cgroup A's write (try $tries_a) and C's (try $tries_c)"
grow_pool "$(free_blocks9)"
# B keeps its memory until the test is done with B's THP coverage (section 1b).
in_cgroup fragd-attr-b python3 - "$WORK/b.faulted" <<'PY' &
import mmap, sys, time
m = mmap.mmap(-1, 256 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_HUGEPAGE)
for off in range(0, len(m), 4096):
    m[off] = 1
open(sys.argv[1], "w").close()
time.sleep(120)
PY
BPID=$!
PIDS+=("$BPID")
wait_for 120 test -e "$WORK/b.faulted" || fail "cgroup B did not fault its 256 MiB in 120 s"
quiet_scrape "$WORK/s1.prom"
check_sums "$WORK/s1.prom"
a=$(cgval "$WORK/s1.prom" fragd_cgroup_stalls_total /fragd-attr-a)
b=$(cgval "$WORK/s1.prom" fragd_cgroup_stalls_total /fragd-attr-b)
[ "$a" -gt 0 ] || fail "the kernel counted a stall in cgroup A's pool write, and A has no stall series ($a): $(grep '^fragd_cgroup_stalls_total' "$WORK/s1.prom")"
[ "$b" -gt 0 ] || fail "cgroup B faulted huge pages on fragmented memory but has no stall series ($b)"
hug=$(( $(metric "$WORK/s1.prom" fragd_stalls_total 'consumer="hugetlb"') - $(metric "$WORK/s0.prom" fragd_stalls_total 'consumer="hugetlb"') ))
thp=$(( $(metric "$WORK/s1.prom" fragd_stalls_total 'consumer="thp_fault"') - $(metric "$WORK/s0.prom" fragd_stalls_total 'consumer="thp_fault"') ))
[ "$hug" -ge "$a" ] || fail "consumer hugetlb gained $hug stalls, fewer than cgroup A's $a pool stalls"
[ "$thp" -ge "$b" ] || fail "consumer thp_fault gained $thp stalls, fewer than cgroup B's $b fault stalls"
log "cgroup A $a stalls (hugetlb +$hug), cgroup B $b stalls (thp_fault +$thp)"
# 1a. C's series, read by Prometheus' own Python parser.
c=$(/usr/bin/python3 - "$WORK/s1.prom" "$BADCG_LABEL" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1], "rb").read().decode("utf-8")
got = [s.value for f in text_string_to_metric_families(text) for s in f.samples
       if s.name == "fragd_cgroup_stalls_total" and s.labels.get("cgroup") == sys.argv[2]]
print(int(got[0]) if len(got) == 1 else -1)
PY
) || fail "Prometheus' Python parser refused $WORK/s1.prom"
[ "$c" -gt 0 ] || fail "cgroup C (name not UTF-8) grew the pool on fragmented memory but has no series cgroup=\"$BADCG_LABEL\" with stalls ($c): $(grep '^fragd_cgroup_stalls_total' "$WORK/s1.prom")"
log "cgroup C, named with bytes 0xff 0xfe: $c stalls in cgroup=\"$BADCG_LABEL\"; the scrape is UTF-8 and promtool accepts it"
grep -E '^fragd_stall_callsite_seconds_total' "$WORK/s1.prom" | sed 's/^/    /'
hsite=$(awk '/^fragd_stall_callsite_seconds_total\{callsite="[^"]*huge[^"]*folio[^"]*"\}/ && $2 > 0' "$WORK/s1.prom" | head -1)
tsite=$(awk '/^fragd_stall_callsite_seconds_total\{callsite="(vma_alloc_anon_folio_pmd|do_huge_pmd_anonymous_page|alloc_anon_folio)"\}/ && $2 > 0' "$WORK/s1.prom" | head -1)
[ -n "$hsite" ] || fail "no hugetlb call site (a *huge*folio* function) with stall time"
[ -n "$tsite" ] || fail "no THP fault call site (vma_alloc_anon_folio_pmd / do_huge_pmd_anonymous_page) with stall time"
log "call sites: $hsite; $tsite"

# fragctl top: the same figures, its key paths as listed, the stacks named.
FRAGCTL top --once --json >"$WORK/top.json" || fail "fragctl top --once --json failed"
[ -n "${FRAGD_ATTR_OUT:-}" ] && cp "$WORK/top.json" "$FRAGD_ATTR_OUT/top.json"
python3 "$SRC/tests/contract/keypaths.py" check "$SRC/tests/contract/fragctl-json.txt" top <"$WORK/top.json" ||
  fail "fragctl top --json differs from tests/contract/fragctl-json.txt"
ta=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(c["stalls"] for c in r["cgroups"] if c["cgroup"] == "/fragd-attr-a"))' "$WORK/top.json")
[ "$ta" = "$a" ] || fail "fragctl top shows $ta stalls for cgroup A, /metrics $a"
tc=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(c["stalls"] for c in r["cgroups"] if c["cgroup"] == sys.argv[2]))' "$WORK/top.json" "$BADCG_LABEL")
[ "$tc" = "$c" ] || fail "fragctl top shows $tc stalls for cgroup C as $BADCG_LABEL, /metrics $c"
FRAGCTL top --once --stacks >"$WORK/top.txt" || fail "fragctl top --once --stacks failed"
grep -q '^    only_alloc_fresh_hugetlb_folio$' "$WORK/top.txt" || fail "fragctl top --stacks names no hugetlb frame: $(head -40 "$WORK/top.txt")"
FRAGCTL top --interval 0.5 --count 1 >"$WORK/top-interval.txt" || fail "fragctl top --interval 0.5 --count 1 failed"
grep -q '^CGROUP' "$WORK/top-interval.txt" || fail "fragctl top --interval printed no screen"
sed 's/^/    /' "$WORK/top.txt" | head -30

# 1b. THP coverage of an exported cgroup: what fragd read (every 10 s) equals the kernel's
# memory.stat while B holds its memory still.
b_kernel() {
  if [ -f "$CGROOT/fragd-attr-b/memory.stat" ] && grep -q '^anon_thp ' "$CGROOT/fragd-attr-b/memory.stat"; then
    awk '$1 == "anon" { a = $2 } $1 == "anon_thp" { h = $2 } END { print a, h }' "$CGROOT/fragd-attr-b/memory.stat"
  elif [ -n "$V1MEM" ]; then
    awk '$1 == "total_rss" { a = $2 } $1 == "total_rss_huge" { h = $2 } END { print a, h }' "$V1MEM/fragd-attr-b/memory.stat"
  fi
}
read -r k_anon k_huge < <(b_kernel)
[ -n "${k_huge:-}" ] || skip_or_fail "no memory.stat with anon_thp (v2) or total_rss_huge (v1) for cgroup B"
b_fragd() { metric <(scrape) fragd_thp_cgroup_anon_huge_bytes 'cgroup="/fragd-attr-b"'; }
b_read() { [ "$(b_fragd)" -eq "$k_huge" ]; }
wait_for 25 b_read || fail "fragd_thp_cgroup_anon_huge_bytes{cgroup=\"/fragd-attr-b\"} is $(b_fragd), the kernel's memory.stat $k_huge (25 s: two sweeps)"
f_anon=$(metric <(scrape) fragd_thp_cgroup_anon_bytes 'cgroup="/fragd-attr-b"')
[ "$f_anon" -eq "$k_anon" ] || fail "fragd_thp_cgroup_anon_bytes for B is $f_anon, memory.stat says $k_anon"
[ "$k_huge" -gt 0 ] || fail "B faulted 256 MiB with MADV_HUGEPAGE and has no huge page: nothing to compare"
log "THP coverage of B: $((k_huge >> 20)) of $((k_anon >> 20)) MiB anon mapped huge, as memory.stat says ($( [ -f "$CGROOT/fragd-attr-b/memory.stat" ] && echo v2 || echo "v1 memory controller"))"
# $! is the subshell that ran in_cgroup; B's python is in the cgroup: end every process there.
b_procs() { cat "$CGROOT/fragd-attr-b/cgroup.procs"; }
for p in $(b_procs); do kill "$p" 2>/dev/null || true; done
wait "$BPID" 2>/dev/null || true
wait_for 10 bash -c "[ -z \"\$(cat $CGROOT/fragd-attr-b/cgroup.procs)\" ]" || fail "cgroup B still has processes: $(b_procs)"

# 2. 200 cgroups, one stall each at least: at most K + 1 series.
other1=$(cgval "$WORK/s1.prom" fragd_cgroup_stalls_total other)
# Each cgroup asks for one page, again up to 10 times until the kernel counts a stall.
stalled=0
for i in $(seq 1 200); do
  mkcg "fragd-attr-$i"
  if grow_stalling "fragd-attr-$i" 1 >/dev/null; then stalled=$((stalled + 1)); fi
done
log "$stalled of the 200 cgroups stalled, as the kernel counts"
[ "$stalled" -ge 150 ] || fail "only $stalled of 200 cgroups stalled in 10 tries each: the kernel did not compact (nothing to attribute)"
quiet_scrape "$WORK/s2.prom"
check_sums "$WORK/s2.prom"
series=$(grep -c '^fragd_cgroup_stalls_total{' "$WORK/s2.prom")
other2=$(cgval "$WORK/s2.prom" fragd_cgroup_stalls_total other)
[ "$series" -le $((K + 1)) ] || fail "$series cgroup series with attribution.top_cgroups $K (want <= $((K + 1)))"
# At most K of them have series of their own: the rest are "other", a stall each at least.
[ $((other2 - other1)) -ge $((stalled - K)) ] ||
  fail "\"other\" grew by $((other2 - other1)) stalls after $stalled cgroups stalled (want >= $((stalled - K)))"
for cg in /fragd-attr-a /fragd-attr-b; do
  [ "$(cgval "$WORK/s2.prom" fragd_cgroup_stalls_total $cg)" -ge "$(cgval "$WORK/s1.prom" fragd_cgroup_stalls_total $cg)" ] ||
    fail "the series of $cg went down"
done
log "200 cgroups: $series series (K = $K), \"other\" $other1 -> $other2 stalls"

# 3. Delete them all: series gone at the next sweep, counts kept in "other". fragd removes a
# deleted cgroup that has an entry in its BPF map stall_cgroups (one of its tasks entered direct
# compaction or reclaim): the map, read with bpftool before the deletion, says how many of the
# test cgroups (by cgroup id, the inode of their v2 directory) have one. Their tasks have all
# ended, so no entry is added after the read.
command -v bpftool >/dev/null || skip_or_fail "bpftool missing (Debian package bpftool)"
for cg in "${CGS[@]}"; do stat -c %i "$CGROOT/$cg"; done >"$WORK/cg-ids"
bpftool -j map show >"$WORK/maps.json" || fail "bpftool map show failed"
map_id=$(python3 - "$WORK/maps.json" "$FRAGD_PID" <<'PY'
import json, sys
maps = [m for m in json.load(open(sys.argv[1])) if m.get("name") == "stall_cgroups"]
mine = [m for m in maps if any(p.get("pid") == int(sys.argv[2]) for p in m.get("pids", []))]
pick = mine or (maps if len(maps) == 1 else [])
print(pick[0]["id"] if len(pick) == 1 else "")
PY
)
[ -n "$map_id" ] || fail "no single BPF map stall_cgroups held by fragd (pid $FRAGD_PID): $(grep -o '"name":"stall_cgroups"' "$WORK/maps.json" | wc -l) found"
bpftool -j map dump id "$map_id" >"$WORK/stall_cgroups.json" || fail "bpftool map dump id $map_id failed"
with_entries=$(python3 - "$WORK/stall_cgroups.json" "$WORK/cg-ids" <<'PY'
import json, sys
ids = {int(x) for x in open(sys.argv[2]).read().split()}
n = 0
for e in json.load(open(sys.argv[1])):
    k = e["formatted"]["key"] if "formatted" in e else int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little")
    n += int(k) in ids
print(n)
PY
)
log "$with_entries of the ${#CGS[@]} test cgroups have an entry in fragd's map stall_cgroups ($stalled stalled as the kernel counts)"
[ "$with_entries" -ge "$stalled" ] || fail "stall_cgroups holds $with_entries test cgroups, fewer than the $stalled the kernel's counters showed stalling"
removed0=$(metric <(scrape) fragd_cgroups_removed_total)
for cg in "${CGS[@]}"; do rmdir "$CGROOT/$cg"; [ -z "$V1MEM" ] || rmdir "$V1MEM/$cg"; done
removed_n() { echo $(($(metric <(scrape) fragd_cgroups_removed_total) - removed0)); }
removed() { [ "$(removed_n)" -ge "$with_entries" ]; }
wait_for 25 removed || fail "fragd_cgroups_removed_total grew by $(removed_n) in 25 s (two sweeps) after the test cgroups were deleted, $with_entries of them in its map"
sleep 11 # one more sweep: none is removed twice
quiet_scrape "$WORK/s3.prom"
check_sums "$WORK/s3.prom"
n=$(($(metric "$WORK/s3.prom" fragd_cgroups_removed_total) - removed0))
[ "$n" -eq "$with_entries" ] || fail "fragd_cgroups_removed_total grew by $n, want the $with_entries deleted cgroups in its map"
grep -q 'cgroup="/fragd-attr' "$WORK/s3.prom" && fail "a deleted cgroup still has a series: $(grep 'cgroup="/fragd-attr' "$WORK/s3.prom" | head -2)"
other3=$(cgval "$WORK/s3.prom" fragd_cgroup_stalls_total other)
[ "$other3" -ge "$other2" ] || fail "\"other\" went down from $other2 to $other3 when cgroups were deleted"
log "deleted: $n cgroups folded into \"other\" ($other3 stalls), as many as had entries in the map"
stop_fragd
log "PASS"
