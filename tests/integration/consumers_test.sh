#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Who pays, one consumer class at a time: on fragmented memory (1 page in 4 kept, the
# free 2 MiB blocks taken into the hugetlb pool), a workload that allocates as that class
# does, and the kernel's own record of the same stalls to compare with:
#   khugepaged  a 128 MiB madvise(MADV_HUGEPAGE) region of small pages that khugepaged
#               collapses (khugepaged/defrag 1: its 2 MiB allocations compact);
#   net         32 KiB netlink broadcasts queued on a receiver that never reads
#               (netlink_sendmsg's alloc_skb: order-3 kmalloc), kept to the end so
#               that free blocks of order 3 and above stay scarce;
#   slab        pipes resized to 4 MiB (pipe_resize_ring's 40 KiB kmalloc, order 4:
#               kmalloc's large allocations are the slab class's);
#   page_cache  a sequential read of a 1 GiB file on this host's file system
#               (readahead's large folios, orders up to 9).
# The kernel's record: a tracing instance with mm_compaction_try_to_compact_pages and
# mm_vmscan_direct_reclaim_begin (the events fragd counts stalls on), each with its
# kernel stack. For each workload, the stalls whose stack shows the workload's own
# path (khugepaged's task; netlink_sendmsg; pipe_fcntl through kmalloc_large;
# page_cache_ra_order or filemap_alloc_folio) are the least fragd's class must have
# gained, and every stall of the phase the most. attribution.stack_interval is 0s, so
# that fragd classifies each stall from its own stack.
# thp_fault and hugetlb: attribution_test.sh. Recorded stacks of every class:
# daemon/concerns/attribution.
source "$(dirname "$0")/lib.sh"
require_root
THP=/sys/kernel/mm/transparent_hugepage
[ -d $THP/khugepaged ] || skip_or_fail "no THP on this kernel ($THP/khugepaged)"
TR=/sys/kernel/tracing
[ -d $TR/instances ] || mount -t tracefs nodev $TR 2>/dev/null || true
[ -d $TR/instances ] || skip_or_fail "no tracefs at $TR"
heavy_lock
quiet_memory 0

cat >"$WORK/fragd.yaml" <<YAML
mode: observe
attribution: {top_callsites: 20, stack_interval: 0s}
YAML
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd

# The kernel's record, in an instance of its own (the global trace is left alone).
INST=$TR/instances/fragd-consumers-$$
mkdir "$INST" || skip_or_fail "cannot make a tracing instance $INST"
on_exit "rmdir $INST"
on_exit "echo 0 > $INST/tracing_on"
echo 8192 >"$INST/buffer_size_kb"
echo 1 >"$INST/options/stacktrace"
echo 1 >"$INST/events/compaction/mm_compaction_try_to_compact_pages/enable"
echo 1 >"$INST/events/vmscan/mm_vmscan_direct_reclaim_begin/enable"

log "fragmenting 95% of available memory (keeps 1 of every 4 pages)"
start_fragmenter "$BUILD/fragmenter" "$WORK" 95 360 || fail "$FRAG_ERROR"
grow_pool() { echo $(($(cat $HP) + $1)) >$HP; }
grow_pool "$(free_blocks9)"
log "fragmented; the pool took the free 2 MiB blocks ($(cat $HP) pages)"

# kernel_stalls FILE PATTERNS: "matching total" over the trace's stall events of order >= 1
# (fragd's bpf.min_order), where matching are those whose comm-pid line or stack has a line
# matching each of PATTERNS (regexes separated by "&").
kernel_stalls() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
pats = [re.compile(p) for p in sys.argv[2].split("&")]
events, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    if "mm_compaction_try_to_compact_pages:" in line or "mm_vmscan_direct_reclaim_begin:" in line:
        m = re.search(r"\border=(\d+)", line)
        cur = [line]
        if m and int(m.group(1)) >= 1:
            events.append(cur)
    elif "<stack trace>" in line:
        continue  # the stack's own header line, between the event and its frames
    elif cur is not None and line.lstrip().startswith("=>"):
        cur.append(line)
    else:
        cur = None
print(sum(1 for e in events if all(any(p.search(l) for l in e) for p in pats)), len(events))
PY
}
consumer() { metric "$1" fragd_stalls_total "consumer=\"$2\""; }
entries() { metric "$1" fragd_direct_stall_entries_total ''; }

# phase NAME PATTERN CMD...: runs CMD with the trace on, then compares.
phase() {
  local name=$1 pat=$2 c0 c1 own total gained e0 e1
  shift 2
  grow_pool "$(free_blocks9)"
  # fragd's delta runs from the tick before the first scrape to the tick before the second: both
  # inside the trace, so every stall fragd counts the kernel traced too (another task's stall just
  # before the trace began or after it ended would otherwise count for fragd alone).
  echo >"$INST/trace"
  echo 1 >"$INST/tracing_on"
  sleep 2.5   # two ticks: the first scrape's figures were read with the trace on
  scrape >"$WORK/$name-0.prom"
  "$@"
  sleep 2.5   # two ticks: fragd reads the maps
  scrape >"$WORK/$name-1.prom"
  echo 0 >"$INST/tracing_on"
  cp "$INST/trace" "$WORK/$name.trace"
  read -r own total < <(kernel_stalls "$WORK/$name.trace" "$pat")
  c0=$(consumer "$WORK/$name-0.prom" "$name"); c1=$(consumer "$WORK/$name-1.prom" "$name")
  e0=$(entries "$WORK/$name-0.prom"); e1=$(entries "$WORK/$name-1.prom")
  gained=$((c1 - c0))
  log "$name: fragd consumer=\"$name\" +$gained stalls; the kernel traced $own stalls on the workload's path, $total in all (fragd's stall entries +$((e1 - e0)))"
  [ "$own" -gt 0 ] || fail "$name: the workload made no stall the kernel traced (memory not fragmented enough, or the workload did not allocate as expected): nothing to compare"
  [ "$gained" -ge "$own" ] || {
    grep -E "^fragd_stall(s_total|_callsite_seconds_total)" "$WORK/$name-1.prom" >&2
    fail "$name: fragd's consumer=\"$name\" gained $gained stalls, fewer than the $own the kernel traced on the workload's path"
  }
  [ "$gained" -le "$total" ] || fail "$name: fragd's consumer=\"$name\" gained $gained stalls, more than every stall the kernel traced ($total)"
}

# 1. khugepaged: small pages in a MADV_HUGEPAGE region, collapsed by khugepaged.
set_kernel_file $THP/enabled madvise
set_kernel_file $THP/khugepaged/defrag 1
set_kernel_file $THP/khugepaged/scan_sleep_millisecs 10
set_kernel_file $THP/khugepaged/alloc_sleep_millisecs 10
set_kernel_file $THP/khugepaged/pages_to_scan 8192
collapse() {
  local c0 pid
  c0=$(($(vmstat thp_collapse_alloc) + $(vmstat thp_collapse_alloc_failed)))
  /usr/bin/python3 - <<'PY' &
import mmap, time
m = mmap.mmap(-1, 128 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_NOHUGEPAGE)
for off in range(0, len(m), 4096):
    m[off] = 1
m.madvise(mmap.MADV_HUGEPAGE)
time.sleep(120)
PY
  pid=$!
  PIDS+=("$pid")
  # Until khugepaged has tried 32 collapses (thp_collapse_alloc and _failed), 60 s at most.
  wait_for 60 bash -c "[ \$((\$(awk '\$1 == \"thp_collapse_alloc\" || \$1 == \"thp_collapse_alloc_failed\" { s += \$2 } END { print s }' /proc/vmstat) - $c0)) -ge 32 ]" ||
    log "khugepaged: fewer than 32 collapses in 60 s"
  log "khugepaged: $(( $(vmstat thp_collapse_alloc) + $(vmstat thp_collapse_alloc_failed) - c0 )) collapse allocations (thp_collapse_alloc + _failed)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
phase khugepaged 'khugepaged-[0-9]+ ' collapse

# 2. net: 32 KiB netlink broadcasts (order-3 kmallocs in alloc_skb), queued on a receiver
# that never reads, until the sends stall. The receiver keeps them to the end: the free
# blocks of order 3 and above stay taken, so that the slab and page cache phases stall too.
netlink() {
  /usr/bin/python3 - >"$WORK/hog.out" <<'PY' &
import socket, struct, sys, time
NETLINK_USERSOCK, SO_SNDBUFFORCE, SO_RCVBUFFORCE = 2, 32, 33
def stalls():
    for l in open("/proc/vmstat"):
        k, v = l.split()
        if k == "compact_stall":
            return int(v)
r = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_USERSOCK)
r.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 1 << 30)
r.bind((0, 1))
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_USERSOCK)
s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 1 << 20)
s.bind((0, 0))
size = 32000  # with the skb's shared info: just under 32 KiB, an order-3 kmalloc
msg = struct.pack("=IHHII", size, 0x10, 0, 0, 0) + b"x" * (size - 16)
s0, sent = stalls(), 0
while sent < 48000 and stalls() - s0 < 40:  # 1.5 GB at most
    for _ in range(50):
        try:
            s.sendto(msg, (0, 1))  # to group 1; the unicast to port 0 after it is refused
        except OSError:
            pass
        sent += 1
print(f"ready: sent {sent} messages, compact_stall +{stalls() - s0}", flush=True)
time.sleep(3600)
PY
  HOG_PID=$!
  PIDS+=("$HOG_PID")
  wait_for 300 grep -q '^ready' "$WORK/hog.out" || fail "net: the netlink sender did not finish in 300 s"
  log "net: $(cat "$WORK/hog.out")"
}
phase net 'netlink_sendmsg' netlink

# 3. slab: pipes resized to 4 MiB. The ring of 1024 pipe_buffers is a 40 KiB kmalloc: too
# large for a slab cache, an order-4 allocation of kmalloc's own (slabs proper refill with
# a first try that may not reclaim, and the fragmented memory has their smaller orders).
# The pipes stay open until the phase's end, so that each ring takes a block. A pipe may
# grow past fs.pipe-max-size (1 MiB) only with CAP_SYS_RESOURCE, which a container's root
# may lack: the limit is raised to 4 MiB for the phase and put back. An order-4 allocation may
# fail after its stall (a costly order does not retry until the OOM killer): ENOMEM is counted,
# not an error of the test (one make test run here: after the net phase on fragmented memory).
PIPE_MAX=$(cat /proc/sys/fs/pipe-max-size)
save_sysctl /proc/sys/fs/pipe-max-size
pipes() {
  echo $((4 << 20)) >/proc/sys/fs/pipe-max-size
  /usr/bin/python3 - <<'PY'
import errno, fcntl, os, resource
def stalls():
    for l in open("/proc/vmstat"):
        k, v = l.split()
        if k == "compact_stall":
            return int(v)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 20000), hard))
held, failed, s0 = [], 0, stalls()
while len(held) < 8000 and stalls() - s0 < 40:
    for _ in range(50):
        r, w = os.pipe()
        try:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4 << 20)
        except OSError as e:  # the kernel stalled for the ring and gave up: still the phase's stall
            if e.errno != errno.ENOMEM:
                raise
            failed += 1
        held += [r, w]
print(f"resized {len(held) // 2 - failed} pipes ({failed} refused with ENOMEM), compact_stall +{stalls() - s0}")
PY
  echo "$PIPE_MAX" >/proc/sys/fs/pipe-max-size
}
phase slab 'pipe_fcntl|pipe_set_size|pipe_resize_ring&kmalloc_large' pipes

# 4. page_cache: readahead of a file written here, dropped from the page cache first.
FILE=$(mktemp /var/tmp/fragd-consumers.XXXXXX)
on_exit "rm -f $FILE"
readfile() {
  fallocate -l 1G "$FILE"
  /usr/bin/python3 - "$FILE" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
while os.read(fd, 1 << 20):
    pass
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
PY
}
phase page_cache 'page_cache_ra_order|filemap_alloc_folio|ra_alloc_folio' readfile
rm -f "$FILE"
kill "$HOG_PID"; wait "$HOG_PID" 2>/dev/null || true
log "PASS"
