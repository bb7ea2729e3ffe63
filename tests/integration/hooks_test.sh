#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The launch hooks of configs/hooks and the Kubernetes example, run as their callers run them:
#  1. the libvirt hook's reading of domain XML and the fragctl commands it builds, with a
#     stand-in fragctl that records its arguments: a unit check of the parser and of the argument
#     lists only, which says nothing of fragd (parts 4 to 6 do);
#  2. the same for the Slurm Prolog and Epilog's reading of the job's request, run as slurmd runs
#     them (env -i: the SLURM_* variables, no PATH);
#  3. configs/kubernetes/examples/hugepage-initcontainer.yaml parses (yaml.safe_load_all) and
#     asks for what its workload requests, with the fragd image of the DaemonSet;
#  then, as root, against a real fragd in act mode and build/fragctl's `ensure` and `release`:
#  4. the Slurm Prolog makes and holds the job's pages (the 2 MiB pool has them free, fragd's status
#     shows the lease held), the job maps them, the Epilog ends the lease and the pool goes back to
#     its target (0), and the next job gets its own lease the same way; a request fragd refuses
#     fails the Prolog with fragd's reason, no page left;
#  5. a real libvirtd (libvirt 9.0 on Debian 12, started by hand: no systemd needed) with the hook
#     installed in /etc/libvirt/hooks/qemu.d starts a TCG domain backed by hugepages from an empty
#     pool: the hook's ensure made the pages, qemu maps them from hugetlbfs, `virsh destroy` runs
#     the release and the pool goes back to 0; a domain larger than the host, whose ensure fragd
#     refuses, is refused by libvirt with the hook's reason, and no qemu is left;
#  6. a real Slurm (22.05 on Debian 12: slurmctld, slurmd and munged started by hand with a private
#     config and key) runs the scripts as its Prolog and Epilog: a job with
#     --comment=fragd-hugepages=2MB:64 finds its pages free and maps them, the pool is back at 0
#     after it; a job fragd refuses drains the node ("Prolog error"), is requeued held, and
#     slurmd's log has the Prolog's reason.
# Everything it changes is put back on exit: the pool, a hugetlbfs mount it made, the hook file,
# /dev/kvm's group and mode (see below), and the daemons and domain it started.
source "$(dirname "$0")/lib.sh"
HOOKS=$SRC/configs/hooks

# --- 1. the libvirt hook's parser, with a recording fragctl (no fragd, no root)
cat >"$WORK/fragctl-rec" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$WORK/calls"
if [ -s "$WORK/fail-on" ] && [ "\$*" = "\$(cat "$WORK/fail-on")" ]; then
	echo "fragctl: recorded refusal" >&2
	exit 1
fi
exit 0
EOF
chmod +x "$WORK/fragctl-rec"
: >"$WORK/fail-on"

# hook NAME OP SUBOP XML [VAR=VALUE...]: the libvirt hook as libvirtd runs it, XML on stdin.
hook() {
	local name=$1 op=$2 subop=$3 xml=$4
	shift 4
	: >"$WORK/calls"
	env "$@" FRAGCTL="$WORK/fragctl-rec" "$HOOKS/libvirt-qemu" "$name" "$op" "$subop" - \
		<<<"$xml" >"$WORK/hook.out" 2>"$WORK/hook.err"
}
# calls_are WHAT LINE...: the recorded fragctl calls are LINE..., in order.
calls_are() {
	local what=$1
	shift
	if [ $# -eq 0 ]; then
		[ ! -s "$WORK/calls" ] || fail "$what: want no fragctl call, got: $(cat "$WORK/calls")"
		return 0
	fi
	diff <(printf '%s\n' "$@") "$WORK/calls" >"$WORK/calls.diff" ||
		fail "$what: fragctl calls differ (- want, + got):
$(cat "$WORK/calls.diff")"
}

default_kib=$(awk '$1 == "Hugepagesize:" { print $2 }' /proc/meminfo)
case $default_kib in
2048) plain="2MB 512" ;;
1048576) plain="1GB 1" ;;
*) fail "the default hugepage size is ${default_kib:-none} kB: this check knows 2048 and 1048576" ;;
esac
hook a prepare begin "<domain type='kvm'><name>a</name><memory>1048576</memory>
	<memoryBacking><hugepages/></memoryBacking></domain>" || fail "plain <hugepages/>: $(cat "$WORK/hook.err")"
calls_are "plain <hugepages/>, 1 GiB" "ensure $plain --for libvirt:a --hold 5m"

# Two guest cells: cell 0 on 1 GiB pages bound to host node 1 (memnode), cell 1 on 2 MiB pages
# (the <page> without nodeset) from host nodes 0-1 (numatune memory): 2 GiB + 1 KiB round up to
# 1025 pages, split 513/512.
hook b prepare begin "<domain type='kvm'><name>b</name><memory unit='GiB'>6</memory>
	<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/><page size='2048'/></hugepages></memoryBacking>
	<numatune><memory mode='strict' nodeset='0-1'/><memnode cellid='0' mode='strict' nodeset='1'/></numatune>
	<cpu><numa><cell id='0' cpus='0' memory='4' unit='GiB'/><cell id='1' cpus='1' memory='2097153' unit='KiB'/></numa></cpu>
	</domain>" FRAGD_HOLD=2m FRAGD_WITHIN=90s FRAGD_SOCKET=/run/other.sock || fail "two cells: $(cat "$WORK/hook.err")"
calls_are "two cells, two sizes, memnode and numatune memory" \
	"--socket /run/other.sock ensure 2MB 513 --node 0 --for libvirt:b --hold 2m --within 90s" \
	"--socket /run/other.sock ensure 2MB 512 --node 1 --for libvirt:b --hold 2m --within 90s" \
	"--socket /run/other.sock ensure 1GB 4 --node 1 --for libvirt:b --hold 2m --within 90s"

# Pages for cell 1 only: cell 0 is not hugepage-backed. Units in bytes and MiB; a nodeset with an
# exclusion; placement='auto' (no nodeset) is the global pool.
hook c prepare begin "<domain type='kvm'><name>c</name><memory unit='KiB'>1572864</memory>
	<memoryBacking><hugepages><page size='2097152' unit='b' nodeset='1'/></hugepages></memoryBacking>
	<numatune><memnode cellid='1' mode='interleave' nodeset='0-2,^1'/></numatune>
	<cpu><numa><cell id='0' cpus='0' memory='1024' unit='MiB'/><cell id='1' cpus='1' memory='512' unit='MiB'/></numa></cpu>
	</domain>" || fail "one backed cell: $(cat "$WORK/hook.err")"
calls_are "cell 1 alone, nodeset 0-2,^1" "ensure 2MB 128 --node 0 --for libvirt:c --hold 5m" \
	"ensure 2MB 128 --node 2 --for libvirt:c --hold 5m"
hook d prepare begin "<domain type='kvm'><name>d</name><memory unit='M'>100</memory>
	<memoryBacking><hugepages><page size='2' unit='M'/></hugepages></memoryBacking>
	<numatune><memory mode='strict' placement='auto'/></numatune></domain>" || fail "placement auto: $(cat "$WORK/hook.err")"
calls_are "placement auto, 100 MiB" "ensure 2MB 50 --for libvirt:d --hold 5m"

# No hugepages, the other operations, release.
hook e prepare begin "<domain type='kvm'><name>e</name><memory>1048576</memory></domain>" ||
	fail "a domain without hugepages made the hook fail: $(cat "$WORK/hook.err")"
calls_are "no hugepage backing"
for op in "start begin" "started begin" "stopped end" "migrate begin" "restore begin" "reconnect begin"; do
	# shellcheck disable=SC2086 # OP SUBOP
	hook a $op "<domain type='kvm'><name>a</name><memory>1048576</memory><memoryBacking><hugepages/></memoryBacking></domain>" ||
		fail "$op: the hook failed: $(cat "$WORK/hook.err")"
	calls_are "$op"
	[ ! -s "$WORK/hook.out" ] || fail "$op: the hook printed to stdout (libvirt reads a migrate hook's stdout as the new XML)"
done
hook "my vm" release end "<domain type='kvm'><name>my vm</name></domain>" || fail "release: $(cat "$WORK/hook.err")"
calls_are "release end" "release --for libvirt:my vm"

# A refusal: the leases made before it are released, the reason is on stderr, exit 1.
echo "ensure 2MB 512 --node 1 --for libvirt:b --hold 5m" >"$WORK/fail-on"
! hook b prepare begin "<domain type='kvm'><name>b</name><memory unit='GiB'>6</memory>
	<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/><page size='2048'/></hugepages></memoryBacking>
	<numatune><memory mode='strict' nodeset='0-1'/><memnode cellid='0' mode='strict' nodeset='1'/></numatune>
	<cpu><numa><cell id='0' cpus='0' memory='4' unit='GiB'/><cell id='1' cpus='1' memory='2097153' unit='KiB'/></numa></cpu>
	</domain>" || fail "a refused ensure: the hook exited 0"
calls_are "a refused ensure" "ensure 2MB 513 --node 0 --for libvirt:b --hold 5m" \
	"ensure 2MB 512 --node 1 --for libvirt:b --hold 5m" "release --for libvirt:b"
grep -qx "fragd-hook: fragd cannot make 512 2MB hugepages on node 1 for domain b: fragctl: recorded refusal" "$WORK/hook.err" ||
	fail "a refused ensure: stderr does not give fragctl's reason: $(cat "$WORK/hook.err")"
: >"$WORK/fail-on"
! hook f prepare begin "<domain type='kvm'><name>f</name><memory unit='parsecs'>1</memory><memoryBacking><hugepages/></memoryBacking></domain>" ||
	fail "an unknown unit: the hook exited 0"
calls_are "an unknown unit"
grep -q "unknown unit 'parsecs'" "$WORK/hook.err" || fail "an unknown unit: stderr says: $(cat "$WORK/hook.err")"
log "libvirt hook: XML read and fragctl commands built as expected (recording fragctl)"

# --- 2. the Slurm scripts' reading of the request, as slurmd runs them (no PATH), recording fragctl
# slurm prolog|epilog VAR=VALUE...
slurm() {
	local script=$HOOKS/slurm-$1
	shift
	: >"$WORK/calls"
	env -i FRAGCTL="$WORK/fragctl-rec" "$@" "$script" >"$WORK/slurm.out" 2>"$WORK/slurm.err"
}
slurm prolog SLURM_JOB_ID=41 SLURM_JOB_COMMENT="run 3 fragd-hugepages=2MB:16,1GB:1:0 fragd-hugepages=2MB:1" FRAGD_HUGEPAGES=2MB:99 ||
	fail "prolog, request in the comment: $(cat "$WORK/slurm.err")"
calls_are "prolog, request in the comment (the first word counts, before FRAGD_HUGEPAGES)" \
	"ensure 2MB 16 --for slurm:41 --hold 5m" "ensure 1GB 1 --node 0 --for slurm:41 --hold 5m"
slurm prolog SLURM_JOB_ID=42 SLURM_JOB_EXTRA=fragd-hugepages=2MB:8:1 FRAGD_SOCKET=/run/other.sock FRAGD_HOLD=1h FRAGD_WITHIN=30s ||
	fail "prolog, request in extra: $(cat "$WORK/slurm.err")"
calls_are "prolog, request in extra, settings" "--socket /run/other.sock ensure 2MB 8 --node 1 --for slurm:42 --hold 1h --within 30s"
slurm prolog SLURM_JOB_ID=43 FRAGD_HUGEPAGES=2MB:4 || fail "prolog, site default: $(cat "$WORK/slurm.err")"
calls_are "prolog, FRAGD_HUGEPAGES" "ensure 2MB 4 --for slurm:43 --hold 5m"
slurm prolog SLURM_JOB_ID=44 SLURM_JOB_COMMENT="no request" || fail "prolog without a request failed: $(cat "$WORK/slurm.err")"
calls_are "prolog without a request"
for bad in "2MB" "2MB:" "2MB:0" "2MB:x" "2MB:4:" "2MB:4:1:2" "*:4" ":4" "2MB:4,,1GB:1" "2MB:4:-1"; do
	! slurm prolog SLURM_JOB_ID=45 FRAGD_HUGEPAGES="$bad" || fail "prolog accepted the request '$bad'"
	calls_are "prolog, malformed '$bad' (checked before any call)"
	grep -q "is not SIZE:COUNT\[:NODE\]" "$WORK/slurm.err" || fail "prolog, '$bad': stderr says: $(cat "$WORK/slurm.err")"
done
echo "ensure 1GB 2 --node 1 --for slurm:46 --hold 5m" >"$WORK/fail-on"
! slurm prolog SLURM_JOB_ID=46 FRAGD_HUGEPAGES=2MB:4,1GB:2:1 || fail "prolog, refused: exited 0"
calls_are "prolog, refused" "ensure 2MB 4 --for slurm:46 --hold 5m" "ensure 1GB 2 --node 1 --for slurm:46 --hold 5m" "release --for slurm:46"
grep -qx "fragd-prolog: job 46: fragd cannot make 2 1GB hugepages on node 1: fragctl: recorded refusal" "$WORK/slurm.err" ||
	fail "prolog, refused: stderr says: $(cat "$WORK/slurm.err")"
: >"$WORK/fail-on"
slurm epilog SLURM_JOB_ID=47 || fail "epilog: $(cat "$WORK/slurm.err")"
calls_are "epilog" "release --for slurm:47"
slurm epilog SLURM_JOB_ID=48 FRAGCTL="$WORK/missing" || fail "epilog exited non-zero when fragctl is missing (it would drain the node)"
grep -q "fragd-epilog: job 48: cannot release its hugepages" "$WORK/slurm.err" || fail "epilog, fragctl missing: stderr says: $(cat "$WORK/slurm.err")"
log "Slurm Prolog and Epilog: requests read and fragctl commands built as expected (recording fragctl)"

# --- 3. the Kubernetes example
/usr/bin/python3 - "$SRC/configs/kubernetes/examples/hugepage-initcontainer.yaml" \
	"$SRC/configs/kubernetes/base/fragd-daemonset.yaml" <<'PY' >"$WORK/k8s.txt" || fail "the Kubernetes example: $(cat "$WORK/k8s.txt")"
import sys
import yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
assert [d["kind"] for d in docs] == ["Pod"], [d["kind"] for d in docs]
spec = docs[0]["spec"]
ds = next(d for d in yaml.safe_load_all(open(sys.argv[2])) if d and d["kind"] == "DaemonSet")
image = ds["spec"]["template"]["spec"]["containers"][0]["image"]
[init] = spec["initContainers"]
assert init["image"] == image, (init["image"], image)
assert init["command"] == ["/usr/bin/fragctl"], init["command"]
a = init["args"]
i = a.index("ensure")
assert a[i + 1] == "2MB", a
count = int(a[i + 2])
assert a[a.index("--for") + 1] == "k8s:$(POD_NAMESPACE)/$(POD_NAME)" and a[a.index("--hold") + 1] == "10m", a
env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in init["env"]}
assert env == {"POD_NAMESPACE": "metadata.namespace", "POD_NAME": "metadata.name"}, env
assert init["securityContext"]["runAsUser"] == 0, init["securityContext"]
vols = {v["name"]: v for v in spec["volumes"]}
[m] = [m for m in init["volumeMounts"] if m["mountPath"] == "/run/fragd"]
assert vols[m["name"]]["hostPath"]["path"] == "/run/fragd", vols[m["name"]]
assert a[a.index("--socket") + 1] == "/run/fragd/fragd.sock", a
[app] = spec["containers"]
r = app["resources"]
assert r["requests"]["hugepages-2Mi"] == r["limits"]["hugepages-2Mi"] == f"{2 * count}Mi", (r, count)
assert any(v.get("emptyDir", {}).get("medium") == "HugePages-2Mi" for v in vols.values()), vols
print(count, " ".join(a[i:]))
PY
read -r k8s_count k8s_args <"$WORK/k8s.txt"
log "Kubernetes example: parses; the init container ensures $k8s_count pages of 2 MiB, the workload's request"

# --- as root, against a real fragd
require_root
"$BUILD/fragctl" --help 2>&1 | grep -qw ensure ||
	skip_or_fail "$BUILD/fragctl has no ensure command: parts 4 to 6 need fragctl ensure and release"
# fragctl accepts the example's argument list: it gets as far as the (absent) socket.
# shellcheck disable=SC2086 # the example's arguments, none with spaces
out=$("$BUILD/fragctl" --socket "$WORK/none.sock" $k8s_args 2>&1) && fail "fragctl $k8s_args succeeded without a fragd"
grep -q "fragd is not running" <<<"$out" || fail "fragctl refused the Kubernetes example's arguments: $out"

heavy_lock
T0=$SECONDS
POOL=/sys/kernel/mm/hugepages/hugepages-2048kB
pool() { cat "$POOL/$1"; }
pool_is() { [ "$(pool nr_hugepages)" -eq "$1" ]; }
save_sysctl "$POOL/nr_hugepages"
echo 0 >"$POOL/nr_hugepages"
pool_is 0 || fail "the 2 MiB pool cannot be emptied ($(pool nr_hugepages) pages): something uses them"
# Act mode that acts only when asked: no score, demand or reserve trigger, no pool of its own.
cat >"$WORK/act.yaml" <<'YAML'
mode: act
compaction:
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
hugepages:
  guard: 1GiB
  pools: []
YAML
# shellcheck disable=SC2119 # no extra arguments
FRAGD_CONFIG="$WORK/act.yaml" start_fragd
# Its first tick done, it has read the pools (ensure refuses a pool it has not read).
wait_scored || fail "fragd did not finish its first tick in 30 s"
# lease NAME: the state and count of NAME's newest lease in fragd's status ("held 64"), or nothing.
lease() {
	FRAGCTL status --json | /usr/bin/python3 -c '
import json, sys
mine = [l for l in json.load(sys.stdin).get("leases") or [] if l["for"] == sys.argv[1]]
if mine:
    print(mine[-1]["state"], mine[-1]["count"])' "$1"
}
lease_is() { [ "$(lease "$1")" = "$2" ]; }

# --- 4. Slurm: the Prolog and Epilog as slurmd runs them (env -i, no PATH) against this fragd
job=$((20000 + RANDOM))
# slurm_job prolog|epilog VAR=VALUE...: SCRIPT as slurmd runs it for job $job.
slurm_job() {
	local what=$1
	shift
	env -i FRAGCTL="$BUILD/fragctl" FRAGD_SOCKET="$SOCK" SLURM_SCRIPT_CONTEXT="${what}_slurmd" \
		SLURM_JOB_ID="$job" SLURM_JOB_UID=65534 SLURM_JOB_USER=nobody SLURM_JOB_PARTITION=batch \
		"$@" "$HOOKS/slurm-$what" >"$WORK/$what.out" 2>"$WORK/$what.err"
}
t=$SECONDS
slurm_job prolog SLURM_JOB_COMMENT="fragd-hugepages=2MB:64" FRAGD_WITHIN=60s ||
	fail "the Prolog failed: $(cat "$WORK/prolog.err")"
if [ "$(pool nr_hugepages)" -lt 64 ] || [ "$(pool free_hugepages)" -lt 64 ]; then
	fail "after the Prolog the pool has $(pool nr_hugepages) pages, $(pool free_hugepages) free: want 64 free at least"
fi
lease_is "slurm:$job" "held 64" || fail "fragd's status shows slurm:$job's lease as '$(lease "slurm:$job")', want 'held 64'"
log "Slurm Prolog: job $job's 64 pages of 2 MiB made and held in $((SECONDS - t)) s (pool $(pool nr_hugepages), free $(pool free_hugepages))"
# The job (as nobody) maps and touches them: they are there for it.
free0=$(pool free_hugepages)
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 - "$POOL/free_hugepages" <<'PY' >"$WORK/job.out" 2>&1 ||
import mmap, sys
m = mmap.mmap(-1, 64 << 21, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40000)  # MAP_HUGETLB
for off in range(0, 64 << 21, 1 << 21):
    m[off] = 1
print(open(sys.argv[1]).read().strip())
PY
	fail "the job could not map 64 pages of 2 MiB: $(cat "$WORK/job.out")"
[ "$(cat "$WORK/job.out")" -eq $((free0 - 64)) ] || fail "the job's 64 pages left $(cat "$WORK/job.out") free of $free0"
slurm_job epilog || fail "the Epilog failed: $(cat "$WORK/epilog.err")"
[ ! -s "$WORK/epilog.err" ] || fail "the Epilog complained: $(cat "$WORK/epilog.err")"
wait_for 30 pool_is 0 || fail "after the Epilog the pool stays at $(pool nr_hugepages) pages (want its target, 0)"
lease_is "slurm:$job" "ended 64" || fail "after the Epilog fragd shows slurm:$job's lease as '$(lease "slurm:$job")'"
log "Slurm Epilog: the lease ended, the pool is back at 0"
# The next job on the node: a new lease on the same pool, made and held as the first was.
job=$((job + 1))
slurm_job prolog SLURM_JOB_COMMENT="fragd-hugepages=2MB:16" FRAGD_WITHIN=60s ||
	fail "the next job's Prolog failed (a second lease on the pool): $(cat "$WORK/prolog.err")"
lease_is "slurm:$job" "held 16" || fail "fragd shows the next job's lease as '$(lease "slurm:$job")', want 'held 16'"
slurm_job epilog || fail "the next job's Epilog failed: $(cat "$WORK/epilog.err")"
wait_for 30 pool_is 0 || fail "after the next job the pool stays at $(pool nr_hugepages) pages"
log "Slurm: the next job's 16 pages made, held and released the same way"
# A request fragd refuses: the Prolog fails with fragd's reason, and no page is left.
nodes=$(find /sys/devices/system/node -maxdepth 1 -name 'node[0-9]*' | wc -l)
job=$((job + 1))
! slurm_job prolog SLURM_JOB_COMMENT="fragd-hugepages=2MB:4,2MB:4:$nodes" || fail "the Prolog succeeded for node $nodes, which this host has not"
grep -q "^fragd-prolog: job $job: fragd cannot make 4 2MB hugepages on node $nodes: ." "$WORK/prolog.err" ||
	fail "the refused Prolog says: $(cat "$WORK/prolog.err")"
wait_for 30 pool_is 0 || fail "after the refused Prolog the pool stays at $(pool nr_hugepages) pages"
log "Slurm Prolog refused: $(cat "$WORK/prolog.err")"

# --- 5. libvirt: a real libvirtd starts a hugepage-backed domain through the hook
for c in libvirtd virtlogd virsh qemu-system-x86_64; do
	command -v "$c" >/dev/null ||
		skip_or_fail "$c missing (Debian: libvirt-daemon-system libvirt-daemon-system-sysv libvirt-clients qemu-system-x86)"
done
getent passwd libvirt-qemu >/dev/null || skip_or_fail "no user libvirt-qemu (Debian: libvirt-daemon-system)"
V=(virsh -q -c qemu:///system)
libvirt_up() { "${V[@]}" version >/dev/null 2>&1; }
! libvirt_up || skip_or_fail "a libvirt daemon already serves qemu:///system; the test starts its own, which loads its hook: stop that one"
DOM=fragd-hooks-$$
# libvirt probes qemu's capabilities as root, with KVM when /dev/kvm is there, then checks that
# its qemu user may open /dev/kvm; when not, it throws the probe away and probes again at every
# call (5 s each: a start took 56 s here). udev makes /dev/kvm root:kvm 0660 on a usual host; this
# machine has no udev: give it that mode for the test (the domain runs under TCG either way).
if [ -c /dev/kvm ]; then
	read -r kvm_owner kvm_mode < <(stat -c '%U:%G %a' /dev/kvm)
	if [ "${kvm_owner#*:}" != kvm ] || [ $((0$kvm_mode & 060)) -ne $((060)) ]; then
		on_exit "chown $kvm_owner /dev/kvm; chmod $kvm_mode /dev/kvm"
		chown root:kvm /dev/kvm
		chmod 0660 /dev/kvm
	fi
fi
# libvirt backs guest RAM with a file on the hugetlbfs mount of the page size (found at its start).
hp_mount=$(awk '$3 == "hugetlbfs" && ($4 ~ /pagesize=2M/ || $4 !~ /pagesize=/) { print $2; exit }' /proc/mounts)
if [ -z "$hp_mount" ]; then
	hp_mount=$(mktemp -d /run/fragd-hooks-hugepages.XXXXXX)
	chmod 0755 "$hp_mount"
	on_exit "rmdir $hp_mount"
	mount -t hugetlbfs -o pagesize=2M none "$hp_mount"
	on_exit "umount $hp_mount"
fi
# The hook: configs/hooks/libvirt-qemu behind a wrapper that points it at this test's fragd
# (libvirtd gives hooks no environment of its own) and logs each call.
hookdir=/etc/libvirt/hooks/qemu.d
if [ ! -d $hookdir ]; then
	mkdir -p $hookdir
	on_exit "rmdir $hookdir"
fi
hookfile=$hookdir/fragd-test-$$
on_exit "rm -f $hookfile"
cat >"$hookfile" <<EOF
#!/bin/sh
# fragd's tests/integration/hooks_test.sh, removed when it ends: configs/hooks/libvirt-qemu for its fragd
echo "\$*" >>"$WORK/libvirt-hook.log"
export FRAGCTL="$BUILD/fragctl" FRAGD_SOCKET="$SOCK" FRAGD_HOLD=2m FRAGD_WITHIN=60s
exec "$HOOKS/libvirt-qemu" "\$@"
EOF
chmod 0755 "$hookfile"
[ -e /run/libvirt ] || on_exit "rm -rf /run/libvirt"
[ -e "/var/log/libvirt/qemu/$DOM.log" ] || on_exit "rm -f /var/log/libvirt/qemu/$DOM.log"
cat >"$WORK/libvirtd.conf" <<EOF
log_level = 3
log_filters = "1:hook"
log_outputs = "1:file:$WORK/libvirtd.log"
EOF
# stop_libvirt: the domain, then the daemons (a libvirtd that exits leaves its domains running).
stop_libvirt() {
	local p
	"${V[@]}" destroy "$DOM" >/dev/null 2>&1 || true
	for p in ${LIBVIRTD_PID:-} ${VIRTLOGD_PID:-}; do
		kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	p=$(cat "/run/libvirt/qemu/$DOM.pid" 2>/dev/null) || return 0
	if [ -n "$p" ] && [ -e "/proc/$p" ] && grep -qF "guest=$DOM," "/proc/$p/cmdline"; then kill -KILL "$p"; fi
	LIBVIRTD_PID='' VIRTLOGD_PID=''
}
on_exit "stop_libvirt"
t=$SECONDS
if ! pgrep -x virtlogd >/dev/null; then
	virtlogd >"$WORK/virtlogd.out" 2>&1 8>&- &
	VIRTLOGD_PID=$!
fi
libvirtd -f "$WORK/libvirtd.conf" >"$WORK/libvirtd.out" 2>&1 8>&- &
LIBVIRTD_PID=$!
wait_for 60 libvirt_up || fail "libvirtd did not answer in 60 s: $(cat "$WORK/libvirtd.out")"
libvirt_version=$("${V[@]}" version --daemon | awk '/daemon/ { print $NF }')
log "libvirtd $libvirt_version up in $((SECONDS - t)) s (pid $LIBVIRTD_PID, hook $hookfile, hugetlbfs $hp_mount)"

cat >"$WORK/domain.xml" <<EOF
<domain type='qemu'>
  <name>$DOM</name>
  <memory unit='MiB'>64</memory>
  <memoryBacking><hugepages><page size='2' unit='M'/></hugepages></memoryBacking>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <on_poweroff>destroy</on_poweroff>
  <devices>
    <emulator>$(command -v qemu-system-x86_64)</emulator>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
pool_is 0 || fail "the pool holds $(pool nr_hugepages) pages before the domain starts"
t=$SECONDS
timeout 120 "${V[@]}" create "$WORK/domain.xml" >"$WORK/create.out" 2>&1 ||
	fail "virsh create failed: $(cat "$WORK/create.out"); hook calls: $(cat "$WORK/libvirt-hook.log" 2>/dev/null)"
grep -qx "$DOM prepare begin -" "$WORK/libvirt-hook.log" || fail "libvirt did not run the hook's prepare: $(cat "$WORK/libvirt-hook.log")"
qemu=$(cat "/run/libvirt/qemu/$DOM.pid")
# A file under the mount (in a chroot the kernel prints it from the host's root, with a prefix).
grep -qF "$hp_mount/libvirt/qemu/" "/proc/$qemu/maps" || fail "qemu $qemu maps nothing from $hp_mount: $(grep -i huge "/proc/$qemu/maps")"
used=$(($(pool nr_hugepages) - $(pool free_hugepages)))
[ "$used" -ge 32 ] || fail "the domain runs with $used pages of 2 MiB in use, want its 32"
lease_is "libvirt:$DOM" "held 32" || fail "fragd shows libvirt:$DOM's lease as '$(lease "libvirt:$DOM")', want 'held 32'"
log "libvirt: domain $DOM (64 MiB on 2 MiB pages, TCG) started in $((SECONDS - t)) s from an empty pool: hook ran prepare, qemu $qemu maps $hp_mount, $used pages in use"
t=$SECONDS
"${V[@]}" destroy "$DOM" >/dev/null || fail "virsh destroy $DOM failed"
wait_for 30 grep -qx "$DOM release end -" "$WORK/libvirt-hook.log" || fail "libvirt did not run the hook's release: $(cat "$WORK/libvirt-hook.log")"
wait_for 30 pool_is 0 || fail "after the domain ended the pool stays at $(pool nr_hugepages) pages (want 0)"
lease_is "libvirt:$DOM" "ended 32" || fail "after the domain ended fragd shows its lease as '$(lease "libvirt:$DOM")'"
log "libvirt: destroyed; the hook released the lease and the pool is back at 0 in $((SECONDS - t)) s"

# A start the hook refuses: the same domain with more memory than this host has; fragd refuses
# the ensure, and libvirt refuses the start with the hook's reason.
big_gib=$(($(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) / 1048576 + 8))
sed "s|<memory unit='MiB'>64</memory>|<memory unit='GiB'>$big_gib</memory>|" "$WORK/domain.xml" >"$WORK/big.xml"
: >"$WORK/libvirt-hook.log"
! timeout 120 "${V[@]}" create "$WORK/big.xml" >"$WORK/create.out" 2>&1 || fail "the domain of $big_gib GiB started"
grep -q "fragd-hook: fragd cannot make $((big_gib * 512)) 2MB hugepages for domain $DOM: .*ensure refused" "$WORK/create.out" ||
	fail "virsh does not give the hook's reason: $(cat "$WORK/create.out")"
! "${V[@]}" list --name | grep -qx "$DOM" || fail "domain $DOM runs although its hook failed"
grep -qx "$DOM release end -" "$WORK/libvirt-hook.log" || fail "libvirt ran no release after the refused start: $(cat "$WORK/libvirt-hook.log")"
pool_is 0 || fail "the refused start left $(pool nr_hugepages) pages in the pool"
log "libvirt refused the start of $big_gib GiB: $(grep -o 'fragd-hook: .*' "$WORK/create.out" | head -1)"
stop_libvirt
pool_is 0 || fail "the pool holds $(pool nr_hugepages) pages after libvirt"

# --- 6. a real Slurm: slurmctld and slurmd with a private config, munged with a private key, the
# scripts installed as its Prolog and Epilog (prolog.d/*, epilog.d/*) behind the wrapper their
# header shows
for c in slurmctld slurmd sbatch scontrol squeue scancel munged mungekey; do
	command -v "$c" >/dev/null || skip_or_fail "$c missing (Debian: slurmctld slurmd slurm-client munge)"
done
S=$WORK/slurm
mkdir -p "$S/state" "$S/spool"
# munged wants its socket's directories open to all (the test's directory is root's alone).
M=$(mktemp -d /run/fragd-hooks-munge.XXXXXX)
chmod 0755 "$M"
on_exit "rm -rf $M"
mungekey --create --keyfile="$M/munge.key"
munged -F --socket="$M/munge.sock" --key-file="$M/munge.key" --pid-file="$M/munged.pid" \
	--log-file="$M/munged.log" --seed-file="$M/munged.seed" >"$S/munged.out" 2>&1 8>&- &
PIDS+=($!)
wait_for 10 test -S "$M/munge.sock" || fail "munged did not start: $(cat "$S/munged.out")"
for what in prolog epilog; do
	mkdir "$S/$what.d"
	cat >"$S/$what.d/50-fragd" <<EOF
#!/bin/sh
export FRAGCTL="$BUILD/fragctl" FRAGD_SOCKET="$SOCK" FRAGD_WITHIN=60s
exec "$HOOKS/slurm-$what"
EOF
	chmod 0755 "$S/$what.d/50-fragd"
done
node=$(hostname -s)
cat >"$S/slurm.conf" <<EOF
ClusterName=fragdhooks
SlurmctldHost=$node
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$M/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
PrologFlags=Alloc
Prolog=$S/prolog.d/*
Epilog=$S/epilog.d/*
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=batch Nodes=$node Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$S/slurm.conf
# stop_slurm: cancel the jobs (their steps end with them), then stop the daemons.
stop_slurm() {
	local p
	if [ -n "${SLURMCTLD_PID:-}" ]; then
		scancel --full --partition=batch >/dev/null 2>&1 || true
		wait_for 30 slurm_idle || true
	fi
	for p in ${SLURMD_PID:-} ${SLURMCTLD_PID:-}; do
		kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	SLURMD_PID='' SLURMCTLD_PID=''
}
slurm_idle() { [ -z "$(squeue -h -t R,CG -o %i 2>/dev/null)" ]; }
on_exit "stop_slurm"
t=$SECONDS
slurmctld -D -f "$S/slurm.conf" >"$S/slurmctld.out" 2>&1 8>&- &
SLURMCTLD_PID=$!
slurmd -D -f "$S/slurm.conf" >"$S/slurmd.out" 2>&1 8>&- &
SLURMD_PID=$!
node_state() { scontrol show node "$node" -o 2>/dev/null | grep -o 'State=[^ ]*'; }
node_idle() { [ "$(node_state)" = State=IDLE ]; }
wait_for 60 node_idle || fail "slurmd's node is not idle after 60 s ($(node_state)): $(tail -5 "$S/slurmctld.log" "$S/slurmd.log")"
slurm_version=$(sbatch --version | awk '{ print $2 }')
log "Slurm $slurm_version up in $((SECONDS - t)) s: slurmctld $SLURMCTLD_PID, slurmd $SLURMD_PID"
job_state() { scontrol show job "$1" -o 2>/dev/null | grep -o 'JobState=[^ ]* Reason=[^ ]*'; }
job_done() { job_state "$1" | grep -qE '^JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)'; }
# The job prints the free pages it finds, then maps and touches 64.
cat >"$S/job.sh" <<EOF
#!/bin/sh
cat $POOL/free_hugepages
exec /usr/bin/python3 -c 'import mmap; m = mmap.mmap(-1, 64 << 21, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40000); m[::1 << 21] = b"x" * 64; print("mapped 64")'
EOF
t=$SECONDS
id=$(sbatch --parsable --comment="fragd-hugepages=2MB:64" -o "$S/job.out" "$S/job.sh")
wait_for 60 job_done "$id" || fail "job $id did not end in 60 s: $(job_state "$id")"
job_state "$id" | grep -q '^JobState=COMPLETED' ||
	fail "job $id: $(job_state "$id"): $(cat "$S/job.out"); slurmd: $(grep -i prolog "$S/slurmd.log")"
{ read -r free_at_start && read -r mapped; } <"$S/job.out" || fail "job $id wrote: $(cat "$S/job.out")"
if [ "$free_at_start" -lt 64 ] || [ "$mapped" != "mapped 64" ]; then
	fail "job $id found $free_at_start free pages and said '$mapped'"
fi
wait_for 30 pool_is 0 || fail "after job $id the pool stays at $(pool nr_hugepages) pages (the Epilog's release)"
lease_is "slurm:$id" "ended 64" || fail "after job $id fragd shows its lease as '$(lease "slurm:$id")'"
log "Slurm job $id (--comment=fragd-hugepages=2MB:64): found $free_at_start free pages, mapped 64, done in $((SECONDS - t)) s; pool back at 0"
# A request fragd refuses: slurmd drains the node and requeues the job held, its log has the reason.
id=$(sbatch --parsable --comment="fragd-hugepages=2MB:4:$nodes" -o /dev/null --wrap true)
held() { job_state "$id" | grep -q 'Reason=launch_failed_requeued_held'; }
wait_for 60 held || fail "job $id asking for node $nodes is not requeued held: $(job_state "$id")"
scontrol show node "$node" -o | grep -q 'Reason=Prolog error' || fail "the node was not drained for the Prolog: $(scontrol show node "$node" -o)"
grep -q "prolog failed: rc:1 output:fragd-prolog: job $id: fragd cannot make 4 2MB hugepages on node $nodes: ." "$S/slurmd.log" ||
	fail "slurmd's log does not give the Prolog's reason: $(grep -i prolog "$S/slurmd.log")"
pool_is 0 || fail "the refused job left $(pool nr_hugepages) pages in the pool"
log "Slurm job $id refused: node drained (Prolog error), job requeued held; slurmd logged: $(grep -o 'fragd-prolog: .*' "$S/slurmd.log" | tail -1)"
stop_slurm
stop_fragd
log "PASS ($((SECONDS - T0)) s with fragd, libvirtd and Slurm)"
