#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The image in a real container runtime, run exactly as the DaemonSet says: podman (with runc,
# Kubernetes' default runtime under containerd) runs fragd:<version>, built by
# scripts/build-image.sh, with the pod's security context translated to podman's flags from
# configs/kubernetes itself (python3-yaml), so that a change to a manifest changes this test:
# the added capabilities and no other (--cap-drop=ALL --cap-add=...), a read-only root file
# system (no tmpfs on /run or /tmp either), the pod's own pid namespace (no hostPID), the hostPath and
# ConfigMap mounts with their readOnly flags, the runtime's default seccomp profile, the
# AppArmor profile, the memory and CPU limits, the command, the arguments and the grace period.
#  1. observe (configs/kubernetes/base): every BPF program fragd should attach is attached, by
#     fragd's own account in /metrics and `fragctl status --json` alike; /metrics passes
#     promtool check metrics; the liveness and readiness paths answer 200; the container's
#     mounts are read-only where the manifest says so;
#  2. act (configs/kubernetes/act: its policy with `mode: act`, its writable /sys mounts and
#     AppArmor profile): `fragctl compact` and `fragctl pool set`, run inside the pod as the
#     manifest's header says (exec), make fragd write node0/compact (the host's compact_*
#     counters rise) and the node's and the global 2 MiB pools (the host's nr_hugepages);
#  3. in both, from inside the running container (a static busybox mounted read-only at
#     /probe/busybox and run with podman exec: it gets the container's capabilities, seccomp
#     filter and mounts), every file under /sys and /proc/sys and the root file system refuse to
#     open for writing, except the overlay's two /sys trees in act mode and /run/fragd. Opening
#     a file for appending writes nothing, so the sweep changes no setting.
# The pod's network namespace is the container's own (--network=none: loopback only, no bridge;
# fragd listens on 0.0.0.0:<containerPort> as in the manifest) and the test reaches /metrics in
# it with nsenter, as a kubelet probe reaches the pod. A rootful CNI bridge (podman's default)
# would leave net.ipv4.ip_forward=1, a bridge, nftables tables and a /run/netns mount behind.
# The hostPath of type DirectoryOrCreate (/run/fragd: socket, act lock, saved settings) is a
# directory of the test's own, not the node's, so a fragd service of this host is left alone.
# podman keeps its storage, state and network config under the test's directory, with cgroupfs
# and a cgroup parent of its own; everything is removed on exit, and nr_hugepages is restored.
source "$(dirname "$0")/lib.sh"
require_root
T0=$SECONDS
for tool in cpack mmdebstrap buildah podman runc nsenter curl promtool; do
  command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed (scripts/install-deps.sh installs it)"
done
PY=/usr/bin/python3   # Debian's, with python3-yaml and python3-prometheus-client (not a pyenv one)
"$PY" -c 'import yaml, prometheus_client' 2>/dev/null ||
  skip_or_fail "python3-yaml or python3-prometheus-client is not installed (scripts/install-deps.sh)"
BUSYBOX=/bin/busybox
[ -x $BUSYBOX ] && ! ldd $BUSYBOX >/dev/null 2>&1 ||
  skip_or_fail "no static $BUSYBOX for the probe (Debian package busybox-static; scripts/install-deps.sh)"
[ -f "$BUILD/CPackConfig.cmake" ] || fail "$BUILD has no CPackConfig.cmake: configure it again (cmake -S $SRC -B $BUILD)"
K8S="$SRC/configs/kubernetes"
[ -d /sys/devices/system/node/node0 ] || skip_or_fail "no /sys/devices/system/node/node0 (CONFIG_NUMA off): act mode's node pool"

# --- Leave the host as found: what podman, runc and this test may create outside $WORK.
CG_PARENT="fragd-runtime-test-$$"
shared_cleanup() {
  local d p
  # conmon runs `podman container cleanup` when a container ends, after `podman rm` returns: wait
  # for this test's podman processes (their command lines name $WORK), then end any left by pid.
  for _ in $(seq 1 50); do pgrep -f -- "$WORK/storage" >/dev/null || break; sleep 0.2; done
  for p in $(pgrep -f -- "$WORK/storage"); do kill -TERM "$p" 2>/dev/null || true; done
  # The containers' cgroups (cgroupfs: one directory per hierarchy), deepest first.
  for d in $(find /sys/fs/cgroup -mindepth 2 -maxdepth 4 -type d -path "*/$CG_PARENT*" 2>/dev/null | sort -r); do
    rmdir "$d" 2>/dev/null || true
  done
  # Mounts podman made under $WORK (a container's /dev/shm), deepest first.
  for d in $(awk -v w="$WORK/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount "$d" 2>/dev/null || umount -l "$d" 2>/dev/null || true
  done
  for d in "${CREATED[@]}"; do rm -rf "$d"; done
}
CREATED=()
# runc's state directory and the image library's blob cache are not under podman's --root.
# podman takes a lock file in CNI's default config directory even with --network-config-dir.
for d in /run/runc /var/lib/containers /etc/cni/net.d/cni.lock; do [ -e "$d" ] || CREATED+=("$d"); done
on_exit "shared_cleanup"

# --- 1. The image.
bash "$SRC/scripts/build-image.sh" "$BUILD" "$WORK/image" >"$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log" >&2; fail "scripts/build-image.sh failed (above)"; }
IMAGE=$(awk '$1 == "image" { print $2 }' "$WORK/image/image.txt")
ARCHIVE=$(awk '$1 == "archive" { print $2 }' "$WORK/image/image.txt")
log "built $IMAGE ($ARCHIVE) in $((SECONDS - T0)) s"

# podman with everything of its own under $WORK: storage (vfs: no mounts), run root, libpod's
# state and events, network config; cgroupfs, as this host has no systemd. runc, not Debian's
# default crun: crun 1.8 refuses a hybrid cgroup layout whose v2 hierarchy still holds a controller
# ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2"), runc runs on it.
PM=(podman --root "$WORK/storage" --runroot "$WORK/runroot" --tmpdir "$WORK/libpod" --storage-driver vfs
  --network-config-dir "$WORK/cni" --cgroup-manager cgroupfs --events-backend file --runtime runc)
mkdir -p "$WORK/cni"
on_exit "${PM[*]} rm --all --force --time 0 >/dev/null 2>&1; ${PM[*]} rmi --all --force >/dev/null 2>&1"
# podman's default RLIMIT_NOFILE (1048576) needs CAP_SYS_RESOURCE to be set above the hard limit
# podman runs with, and podman lowers its own RLIMIT_NPROC to 32768; without that capability (this
# host's bounding set lacks it) runc fails with "error setting rlimit type 7 (or 6): operation not
# permitted". Then the container gets the host's limits instead (not part of the pod's spec).
RUN_EXTRA=(--cgroup-parent "/$CG_PARENT")
if (( ! ($(awk '$1 == "CapEff:" { print "0x" $2 }' /proc/self/status) >> 24 & 1) )); then
  nproc=$(ulimit -Hu); [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
  RUN_EXTRA+=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=$nproc:$nproc")
fi
loaded=$("${PM[@]}" load --quiet --input "$ARCHIVE" 2>&1) || fail "podman load $ARCHIVE failed: $loaded"
log "podman $(podman --version | awk '{print $3}') with runc $(runc --version | awk 'NR == 1 {print $3}'): $loaded"
# Can podman run a container here at all? If not, the host lacks something (skip; CI: fail).
out=$("${PM[@]}" run --rm --pull never "${RUN_EXTRA[@]}" --network none --volume "$BUSYBOX:/probe/busybox:ro" \
  --entrypoint /probe/busybox "$IMAGE" true 2>&1) || skip_or_fail "podman cannot run a container on this host: $out"

# tracefs, as on every node (systemd mounts it): the DaemonSet mounts the host's /sys/kernel/tracing.
if [ ! -d /sys/kernel/tracing/events ]; then
  mount -t tracefs tracefs /sys/kernel/tracing || skip_or_fail "cannot mount tracefs on /sys/kernel/tracing"
  on_exit "umount /sys/kernel/tracing"
fi

# --- The manifest, translated. k8s.py MODE DIR: writes DIR/flags (podman run's flags, one per
# line), DIR/env (shell variables) and DIR/mounts (each mount point and ro|rw).
cat >"$WORK/k8s.py" <<'PY'
import json, os, re, shlex, sys, yaml
kdir, mode, out = sys.argv[1:4]
def docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]
def die(msg):
    sys.exit("k8s.py: " + msg)
KEYS = {"containers": "name", "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort", "env": "name"}
def merge(dst, src):  # a strategic merge patch, as kustomize applies fragd-act-patch.yaml
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        elif isinstance(v, list) and k in KEYS and isinstance(dst.get(k), list):
            for item in v:
                same = [d for d in dst[k] if d.get(KEYS[k]) == item.get(KEYS[k])]
                if same: merge(same[0], item)
                else: dst[k].append(item)
        else:
            dst[k] = v
base = docs(os.path.join(kdir, "base/fragd-daemonset.yaml"))
ds = next(d for d in base if d["kind"] == "DaemonSet")
maps = {d["metadata"]["name"]: d for d in base if d["kind"] == "ConfigMap"}
if mode == "act":
    kust = docs(os.path.join(kdir, "act/kustomization.yaml"))[0]
    for p in kust.get("patches", []):
        patch = docs(os.path.join(kdir, "act", p["path"]))[0]
        if patch["kind"] != "DaemonSet" or patch["metadata"]["name"] != ds["metadata"]["name"]:
            die(p["path"] + " patches something other than the DaemonSet")
        merge(ds, patch)
pod = ds["spec"]["template"]["spec"]
if len(pod["containers"]) != 1 or pod.get("initContainers"):
    die("one container expected in the pod")
c = pod["containers"][0]
flags, env, mounts = [], {}, []
psc, sc = pod.get("securityContext", {}), c.get("securityContext", {})
known = {"runAsUser", "runAsGroup", "runAsNonRoot", "privileged", "capabilities", "readOnlyRootFilesystem",
         "seccompProfile", "appArmorProfile", "allowPrivilegeEscalation"}
if set(sc) - known or set(psc) - known:
    die("securityContext keys this test does not translate: %s" % sorted((set(sc) | set(psc)) - known))
get = lambda k, d=None: sc.get(k, psc.get(k, d))
flags.append("--user=%s:%s" % (get("runAsUser", 0), get("runAsGroup", 0)))
if get("privileged", False): flags.append("--privileged")
caps = sc.get("capabilities", {})
drop, add = caps.get("drop", []), caps.get("add", [])
flags += ["--cap-drop=ALL"] if "ALL" in drop else ["--cap-drop=CAP_" + x for x in drop]
flags += ["--cap-add=CAP_" + x for x in add]
if get("readOnlyRootFilesystem", False):
    flags += ["--read-only", "--read-only-tmpfs=false"]  # Kubernetes mounts no tmpfs on /run, /tmp
if get("allowPrivilegeEscalation") is False: flags.append("--security-opt=no-new-privileges")
sec = get("seccompProfile", {"type": "Unconfined"})  # the kubelet's default without SeccompDefault
if sec["type"] == "Unconfined": flags.append("--security-opt=seccomp=unconfined")
elif sec["type"] != "RuntimeDefault": die("seccompProfile %s is not translated" % sec)
aa = get("appArmorProfile", {"type": "RuntimeDefault"})
if aa["type"] == "Unconfined": flags.append("--security-opt=apparmor=unconfined")
elif aa["type"] == "Localhost": flags.append("--security-opt=apparmor=" + aa["localhostProfile"])
flags.append("--pid=host" if pod.get("hostPID") else "--pid=private")
if pod.get("hostIPC"): flags.append("--ipc=host")
flags.append("--network=host" if pod.get("hostNetwork") else "--network=none")
lim = c.get("resources", {}).get("limits", {})
UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 10**3, "M": 10**6, "G": 10**9}
if "memory" in lim:
    m = re.fullmatch(r"(\d+)([KMG]i?|k)?", str(lim["memory"]))
    flags.append("--memory=%d" % (int(m.group(1)) * UNITS.get(m.group(2) or "", 1)))
if "cpu" in lim:
    cpu = str(lim["cpu"])
    flags.append("--cpus=%g" % (int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)))
flags.append("--stop-timeout=%d" % pod.get("terminationGracePeriodSeconds", 30))
if c.get("command"): flags.append("--entrypoint=" + json.dumps(c["command"]))
vols = {v["name"]: v for v in pod.get("volumes", [])}
for vm in c.get("volumeMounts", []):
    v, ro, dst = vols[vm["name"]], bool(vm.get("readOnly")), vm["mountPath"]
    if vm.get("subPath") or vm.get("mountPropagation"): die("subPath and mountPropagation are not translated")
    if "hostPath" in v:
        hp = v["hostPath"]
        if hp.get("type") == "DirectoryOrCreate":  # the pod's own state on the node: the test's dir
            src = os.path.join(out, "host" + hp["path"])
            os.makedirs(src, exist_ok=True)
        else:
            src = hp["path"]
            if hp.get("type") == "Directory" and not os.path.isdir(src):
                die("hostPath %s (type Directory) does not exist on this host" % src)
    elif "configMap" in v:
        src = os.path.join(out, "configmap-" + v["configMap"]["name"])
        os.makedirs(src, exist_ok=True)
        for key, text in maps[v["configMap"]["name"]]["data"].items():
            if mode == "act" and key.endswith(".yaml"):  # the overlay's header: set `mode: act`
                text, n = re.subn(r"(?m)^mode: observe$", "mode: act", text)
                if n != 1: die("no `mode: observe` line in ConfigMap key " + key)
            with open(os.path.join(src, key), "w") as f: f.write(text)
    else:
        die("volume %s is neither hostPath nor configMap" % vm["name"])
    flags.append("--volume=%s:%s:%s" % (src, dst, "ro" if ro else "rw"))
    mounts.append("%s %s" % (dst, "ro" if ro else "rw"))
args = c.get("args", [])
opt = lambda name: next((a.split("=", 1)[1] for a in args if a.startswith(name + "=")), "")
probe = lambda p: c.get(p, {}).get("httpGet", {}).get("path", "")
port = c["readinessProbe"]["httpGet"]["port"]
if not isinstance(port, int): port = next(p["containerPort"] for p in c.get("ports", []) if p.get("name") == port)
env = {"IMAGE_REF": c["image"], "SOCKET": opt("--socket"), "PORT": port, "READY_PATH": probe("readinessProbe"),
       "LIVE_PATH": probe("livenessProbe"), "CAPS": " ".join(add), "GRACE": pod.get("terminationGracePeriodSeconds", 30),
       "NNP": 1 if get("allowPrivilegeEscalation") is False else 0,
       "RO_ROOT": 1 if get("readOnlyRootFilesystem", False) else 0}
with open(os.path.join(out, "flags"), "w") as f: f.write("\n".join(flags) + "\n")
with open(os.path.join(out, "mounts"), "w") as f: f.write("\n".join(mounts) + "\n")
with open(os.path.join(out, "env"), "w") as f:
    for k, v in env.items(): f.write("%s=%s\n" % (k, shlex.quote(str(v))))
    f.write("ARGS=(%s)\n" % " ".join(shlex.quote(a) for a in args))
PY

# cap_mask NAME...: the capability set of those names, as /proc/PID/status prints it.
cap_mask() {
  "$PY" - "$@" <<'PY'
import re, sys
nums = dict(re.findall(r"#define CAP_(\w+)\s+(\d+)", open("/usr/include/linux/capability.h").read()))
print("%016x" % sum(1 << int(nums[n]) for n in sys.argv[1:]))
PY
}

# The probe, run in the container by podman exec: its own status lines, then W|PATH for each path
# that opens for writing (appending: nothing is written) and R|REASON|PATH for each that does not:
# the paths given, and every file under /sys and /proc/sys with an owner's write bit.
PROBE_SH='BB=/probe/busybox
$BB grep -E "^(CapBnd|CapEff|Seccomp|NoNewPrivs):" /proc/self/status
check() { if err=$( { true >>"$1"; } 2>&1 ); then echo "W|$1"; else echo "R|${err##*: }|$1"; fi; }
for f in "$@"; do check "$f"; done
$BB find /sys /proc/sys -type f -perm -200 2>/dev/null | while read -r f; do check "$f"; done
$BB rm -f /run/fragd/.probe'
ROOT_PATHS=(/.probe /tmp/.probe /etc/.probe /usr/bin/fragd /etc/fragd/fragd.yaml /run/.probe /var/.probe
  /run/fragd/.probe)

# start MODE: runs the DaemonSet's container of MODE (observe: base, act: the act overlay) as
# container fragd-MODE; sets CTR, CPID (fragd's pid on the host, from podman) and the manifest's
# variables (env); waits until /metrics lists the BPF programs and the readiness path answers 200.
start() {
  local mode=$1 d="$WORK/$1"
  mkdir -p "$d"
  "$PY" "$WORK/k8s.py" "$K8S" "$mode" "$d" || fail "cannot translate the $mode manifest (above)"
  mapfile -t FLAGS <"$d/flags"
  # shellcheck disable=SC1091
  source "$d/env"
  [ "$IMAGE_REF" = "$IMAGE" ] || fail "the DaemonSet runs image $IMAGE_REF, the build made $IMAGE"
  CTR="fragd-$mode"
  log "$mode: podman run ${FLAGS[*]} $IMAGE_REF ${ARGS[*]}"
  "${PM[@]}" run --detach --name "$CTR" --pull never "${RUN_EXTRA[@]}" "${FLAGS[@]}" \
    --volume "$BUSYBOX:/probe/busybox:ro" "$IMAGE_REF" "${ARGS[@]}" >"$d/run.out" 2>&1 ||
    { cat "$d/run.out" >&2; fail "$mode: podman cannot run the DaemonSet's container: $(tail -1 "$d/run.out")"; }
  CPID=$("${PM[@]}" inspect --format '{{.State.Pid}}' "$CTR")
  # conmon is podman's, started for this test: ended by pid if podman rm leaves it.
  local conmon
  conmon=$("${PM[@]}" inspect --format '{{.State.ConmonPid}}' "$CTR")
  on_exit "kill -0 $conmon 2>/dev/null && kill -TERM $conmon"
  on_exit "${PM[*]} rm --force --time 0 $CTR >/dev/null 2>&1"
  has_programs() { scrape >"$d/metrics.prom" 2>/dev/null && grep -q '^fragd_bpf_program_attached' "$d/metrics.prom"; }
  wait_for 30 has_programs || { "${PM[@]}" logs "$CTR" >&2; fail "$mode: fragd in the container served no metrics in 30 s"; }
  wait_for 30 http_ok "$READY_PATH" || { "${PM[@]}" logs "$CTR" >&2; fail "$mode: $READY_PATH did not answer 200 in 30 s"; }
}
# In the pod's network namespace, as Prometheus and the kubelet's probes reach the pod.
in_pod_net() { nsenter --net="/proc/$CPID/ns/net" "$@"; }
scrape() { in_pod_net curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics"; }
http_ok() { [ "$(in_pod_net curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT$1")" = 200 ]; }
CTL() { "${PM[@]}" exec "$CTR" /usr/bin/fragctl --socket "$SOCKET" "$@"; }

# check_pod MODE: the security context as the kernel shows it, the mounts, the programs, /metrics.
check_pod() {
  local mode=$1 d="$WORK/$1"
  # Mounts, from fragd's own mount table: the root, /sys, /proc/sys and each volume ro|rw as stated.
  { [ "$RO_ROOT" = 1 ] && echo "/ ro"; echo "/sys ro"; echo "/proc/sys ro"; cat "$d/mounts"; } >"$d/want-mounts"
  "$PY" - "/proc/$CPID/mountinfo" "$d/want-mounts" <<'PY' || fail "$mode: the container's mounts differ from the manifest (above)"
import sys
mounts = {}
for line in open(sys.argv[1]):
    f = line.split()
    mounts[f[4]] = "ro" if "ro" in f[5].split(",") else "rw"   # the last mount on a point wins
bad = []
for line in open(sys.argv[2]):
    point, want = line.split()
    if mounts.get(point) != want:
        bad.append("%s is %s, want %s" % (point, mounts.get(point, "not mounted"), want))
for b in bad: print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  # The OCI spec podman handed runc: the runtime's default seccomp profile (not unconfined; bpf() and
  # perf_event_open() allowed by it because of CAP_SYS_ADMIN), /proc/sys read-only, the manifest's
  # capabilities as the bounding set, no privileged mode.
  local spec profile
  spec=$("${PM[@]}" inspect --format '{{.OCIConfigPath}}' "$CTR")
  profile=$("${PM[@]}" info --format json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["host"]["security"]["seccompProfilePath"])')
  "$PY" - "$spec" "$profile" "$CAPS" "$NNP" <<'PY' || fail "$mode: the OCI spec podman generated is not the manifest's (above)"
import json, sys
spec, profile = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
caps, nnp = sorted("CAP_" + c for c in sys.argv[3].split()), sys.argv[4] == "1"
sec, bad = spec["linux"].get("seccomp"), []
if not sec: bad.append("no seccomp filter in the spec")
elif sec["defaultAction"] != profile["defaultAction"]:
    bad.append("seccomp default action %s, the default profile's is %s" % (sec["defaultAction"], profile["defaultAction"]))
else:
    allowed = {n for r in sec["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]}
    bad += ["%s not allowed by the seccomp filter" % n for n in ("bpf", "perf_event_open") if n not in allowed]
for k in ("bounding", "effective", "permitted"):
    if sorted(spec["process"]["capabilities"].get(k, [])) != caps:
        bad.append("%s capabilities %s, want %s" % (k, spec["process"]["capabilities"].get(k), caps))
if bool(spec["process"].get("noNewPrivileges")) != nnp: bad.append("noNewPrivileges is %s" % spec["process"].get("noNewPrivileges"))
if "/proc/sys" not in spec["linux"].get("readonlyPaths", []): bad.append("/proc/sys is not among the spec's read-only paths")
for b in bad: print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  # The programs: fragd's /metrics and its status answer agree, and only what fragd itself leaves
  # off (the allocation counter, bpf.allocations adaptive, until a stall) is detached.
  CTL status --json >"$d/status.json" || fail "$mode: fragctl status --json in the container failed"
  "$PY" - "$d/metrics.prom" "$d/status.json" <<'PY' || fail "$mode: BPF programs not attached as fragd says they should be (above)"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
m = {}
counting = None
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        if s.name == "fragd_bpf_program_attached": m[s.labels["program"]] = s.value == 1
        if s.name == "fragd_alloc_counting": counting = s.value == 1
st = {p["name"]: p for p in json.load(open(sys.argv[2])).get("programs", [])}
bad = []
if set(m) != set(st): bad.append("/metrics lists %s, fragctl status %s" % (sorted(m), sorted(st)))
for name, p in sorted(st.items()):
    if p.get("attached") != m.get(name): bad.append("%s: status attached=%s, metrics %s" % (name, p.get("attached"), m.get(name)))
    if not p.get("attached") and not (p.get("error") == "allocation counting is off" and counting is False):
        bad.append("%s is not attached: %s" % (name, p.get("error")))
for b in bad: print("  " + b, file=sys.stderr)
on = sum(1 for p in st.values() if p.get("attached"))
print("%d of %d programs attached (%s)" % (on, len(st), ", ".join(sorted(n for n, p in st.items() if p.get("attached")))))
sys.exit(1 if bad or on == 0 else 0)
PY
  promtool check metrics <"$d/metrics.prom" >"$d/promtool.out" 2>&1 ||
    { cat "$d/promtool.out" >&2; fail "$mode: promtool check metrics rejected the container's /metrics"; }
  http_ok "$LIVE_PATH" || fail "$mode: $LIVE_PATH did not answer 200"
  http_ok "$READY_PATH" || fail "$mode: $READY_PATH did not answer 200"
  log "$mode: $(grep -c '^fragd_' "$d/metrics.prom") samples pass promtool; $LIVE_PATH and $READY_PATH answer 200"
  # The memory limit holds fragd and its BPF maps (charged to the pod's memory cgroup).
  local cg peak limit
  cg=$(awk -F: '$2 == "memory" { print $3 }' "/proc/$CPID/cgroup")
  if [ -n "$cg" ] && [ -f "/sys/fs/cgroup/memory$cg/memory.max_usage_in_bytes" ]; then
    peak=$(cat "/sys/fs/cgroup/memory$cg/memory.max_usage_in_bytes") limit=$(cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes")
  else
    cg=$(awk -F: '$1 == "0" { print $3 }' "/proc/$CPID/cgroup")
    peak=$(cat "/sys/fs/cgroup$cg/memory.peak" 2>/dev/null || echo 0) limit=$(cat "/sys/fs/cgroup$cg/memory.max" 2>/dev/null || echo 0)
  fi
  log "$mode: the pod's memory cgroup: peak $(awk -v b="$peak" 'BEGIN { printf "%.1f", b / 1048576 }') MiB, limit $(
    awk -v b="$limit" 'BEGIN { if (b ~ /^[0-9]+$/) printf "%d MiB", b / 1048576; else print b }')"
  # Every thread of fragd gave its capabilities up after attaching, in the container too.
  local t v
  for t in /proc/$CPID/task/*; do
    v=$(awk '$1 == "CapEff:" { print $2 }' "$t/status")
    [ "$v" = 0000000000000000 ] || fail "$mode: thread $(basename "$t") of fragd keeps CapEff $v after attaching"
  done
}

# sweep MODE RW-PREFIX...: the probe in the running container; only paths under a RW-PREFIX open
# for writing (each RW-PREFIX must hold at least one such file); prints the tally.
sweep() {
  local mode=$1 d="$WORK/$1"; shift
  "${PM[@]}" exec "$CTR" /probe/busybox sh -c "$PROBE_SH" probe "${ROOT_PATHS[@]}" "${MUST_RW[@]}" \
    "${MUST_RO[@]}" >"$d/probe.out" 2>"$d/probe.err" || { cat "$d/probe.err" >&2; fail "$mode: the probe failed in the container"; }
  "$PY" - "$d/probe.out" "$(cap_mask $CAPS)" "$NNP" "$*" "${MUST_RW[*]}" "${MUST_RO[*]}" <<'PY' || fail "$mode: the probe found the container's limits wrong (above)"
import sys
out, caps, nnp, prefixes, must_rw, must_ro = sys.argv[1:7]
prefixes, must_rw, must_ro = prefixes.split(), must_rw.split(), must_ro.split()
status, writable, refused = {}, [], {}
for line in open(out):
    line = line.rstrip("\n")
    if line.startswith(("CapBnd:", "CapEff:", "Seccomp:", "NoNewPrivs:")):
        k, v = line.split(":", 1); status[k] = v.strip(); continue
    f = line.split("|")
    if f[0] == "W":
        if f[1] not in writable: writable.append(f[1])  # a path given is swept again
    else: refused.setdefault(f[2], f[1])
bad = []
# podman exec gets the container's process: its bounding and effective sets are exactly the manifest's.
for k in ("CapBnd", "CapEff"):
    if status.get(k) != caps: bad.append("%s is %s, want %s (the manifest's capabilities)" % (k, status.get(k), caps))
if status.get("Seccomp") != "2": bad.append("Seccomp is %s: no seccomp filter (want 2: the runtime's default profile)" % status.get("Seccomp"))
if status.get("NoNewPrivs") != nnp: bad.append("NoNewPrivs is %s, want %s" % (status.get("NoNewPrivs"), nnp))
under = lambda p, pre: p == pre or p.startswith(pre.rstrip("/") + "/")
for p in writable:
    if not any(under(p, pre) for pre in prefixes): bad.append("writable: " + p)
for pre in prefixes:
    if not any(under(p, pre) for p in writable): bad.append("nothing writable under " + pre)
for p in must_rw:
    if p not in writable: bad.append("not writable: %s (%s)" % (p, refused.get(p, "not probed")))
for p in must_ro:
    if p not in refused: bad.append("%s: %s" % (p, "writable" if p in writable else "not probed"))
for b in bad: print("  " + b, file=sys.stderr)
reasons = {}
for p, r in sorted(refused.items()): reasons.setdefault(r, []).append(p)
ksys = [p for p in refused if p.startswith("/proc/sys/kernel/")]
print("  CapBnd=CapEff=%s Seccomp=%s NoNewPrivs=%s" % (caps, status.get("Seccomp"), status.get("NoNewPrivs")))
print("  %d paths refuse writes (%d of them /proc/sys/kernel/*): %s" % (len(refused), len(ksys),
      "; ".join("%d %s (e.g. %s)" % (len(ps), r, " ".join(ps[:3])) for r, ps in sorted(reasons.items()))))
print("  %d writable: %s" % (len(writable), " ".join(sorted(writable))))
sys.exit(1 if bad else 0)
PY
}

# own_pids MODE: fragd's pid namespace is the pod's own, so from it no process of the host can be
# signalled (from the host's, uid 0 could signal every root process, capabilities dropped or not).
own_pids() {
  local mode=$1 host_ns ctr_ns
  host_ns=$(readlink /proc/self/ns/pid)
  ctr_ns=$(readlink "/proc/$CPID/ns/pid")
  [ "$host_ns" != "$ctr_ns" ] || fail "$mode: fragd runs in the host's pid namespace ($host_ns): it could signal every root process"
  if "${PM[@]}" exec "$CTR" /probe/busybox kill -0 $$ 2>/dev/null; then
    fail "$mode: a process in the pod could signal the host's process $$"
  fi
  log "$mode: fragd's pid namespace $ctr_ns, the host's $host_ns; kill -0 $$ (this test, on the host) from the pod: refused"
}

# stop MODE: podman stop with the grace period; fragd exits 0 on SIGTERM.
stop() {
  local mode=$1 rc
  "${PM[@]}" stop --time "$GRACE" "$CTR" >/dev/null || fail "$mode: podman stop failed"
  rc=$("${PM[@]}" inspect --format '{{.State.ExitCode}}' "$CTR")
  [ "$rc" = 0 ] || { "${PM[@]}" logs "$CTR" >&2; fail "$mode: fragd exited $rc on SIGTERM (want 0)"; }
  "${PM[@]}" logs "$CTR" >"$WORK/$mode/fragd.log" 2>&1
  # Nothing fragd needs is missing in the pod: it warns about none (an unreadable /proc/kallsyms or
  # /proc/iomem, a refused write, a program that did not attach would each be a warning). The one
  # warning about the host itself is let through: act mode's shipped reserve on a VM guest whose
  # balloon reports free pages (this machine's), which the pod read from the host's sysfs.
  if grep -iE 'warn|error' "$WORK/$mode/fragd.log" | grep -v 'free page reporting is on (' >&2; then
    fail "$mode: fragd warned in the container (above)"
  fi
  log "$mode: fragd's log: $(grep -m1 'capabilities after attaching' "$WORK/$mode/fragd.log" | sed 's/^.*capabilities/capabilities/')"
  "${PM[@]}" rm "$CTR" >/dev/null
}

heavy_lock   # act mode changes the host's hugepage pools, which other tests count
HP=/proc/sys/vm/nr_hugepages
NODE_HP=/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages
GLOBAL_HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
save_sysctl /proc/sys/vm/compaction_proactiveness
save_sysctl $HP
on_exit "echo 0 > $HP"
[ "$(cat $HP)" -eq 0 ] || fail "nr_hugepages is $(cat $HP) before the test: another test holds a pool"
# Never writable in either mode, named so that the sweep must have met them (/proc/sys/vm is not
# namespaced: the overlay leaves it read-only, and policies needing it need privileged: true).
ALWAYS_RO=(/proc/sys/vm/nr_hugepages /proc/sys/vm/compaction_proactiveness /proc/sys/vm/drop_caches /proc/sys/vm/stat_refresh
  /proc/sys/kernel/panic /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/tracing/tracing_on)

# --- 2. Observe: the base DaemonSet.
T1=$SECONDS
start observe
check_pod observe
own_pids observe
MUST_RW=()
MUST_RO=("${ALWAYS_RO[@]}" /sys/devices/system/node/node0/compact "$NODE_HP" "$GLOBAL_HP")
sweep observe /run/fragd
stop observe
log "observe: ran, checked and stopped (exit 0) in $((SECONDS - T1)) s"

# --- 3. Act: the act overlay, its policy with mode: act.
T1=$SECONDS
start act
check_pod act
own_pids act
MUST_RO=("${ALWAYS_RO[@]}")
MUST_RW=(/sys/devices/system/node/node0/compact "$NODE_HP" "$GLOBAL_HP")
sweep act /run/fragd /sys/devices/system/node /sys/kernel/mm/hugepages
grep -q 'fragd_policy_info{.*mode="act"' "$WORK/act/metrics.prom" || fail "act: fragd does not run the act policy"

# A node compaction by fragd: the host's compaction scanners ran.
# %.0f: awk (mawk) prints a sum past 2^31 as 2.39432e+09, and two such roundings compare equal.
scanned() { awk '$1 == "compact_migrate_scanned" || $1 == "compact_free_scanned" { n += $2 } END { printf "%.0f\n", n }' /proc/vmstat; }
before=$(scanned)
scrape >"$WORK/act/before.prom" || fail "act: /metrics stopped answering"
CTL compact --node 0 >"$WORK/act/compact.out" 2>&1 || { cat "$WORK/act/compact.out" >&2; fail "act: fragctl compact --node 0 failed"; }
after=$(scanned)
[ "$after" -gt "$before" ] || fail "act: fragctl compact ran, yet the host's compact_*_scanned stayed at $before"
log "act: fragctl compact --node 0: $(cat "$WORK/act/compact.out"); compact_migrate_scanned+compact_free_scanned $before -> $after"
# fragd's BPF programs know its writer as fragd's own from the pod's pid namespace: the runs count
# under trigger fragd, not as another process's.
scrape >"$WORK/act/compacted.prom" || fail "act: /metrics stopped answering"
runs() { metric "$1" fragd_compaction_runs_total "trigger=\"$2\""; }
r0=$(runs "$WORK/act/before.prom" fragd); r1=$(runs "$WORK/act/compacted.prom" fragd)
m0=$(runs "$WORK/act/before.prom" manual); m1=$(runs "$WORK/act/compacted.prom" manual)
[ "$r1" -gt "$r0" ] && [ "$m1" = "$m0" ] ||
  fail "act: the compaction fragd wrote from its pid namespace: fragd_compaction_runs_total{trigger=\"fragd\"} $r0 -> $r1, {trigger=\"manual\"} $m0 -> $m1"
log "act: zone compaction runs by fragd $r0 -> $r1, by another writer $m0 -> $m1"

# The node's pool and the global pool, by fragd, as the host sees them.
pool() {  # pool COUNT [--node N]: fragctl pool set 2MB COUNT in the pod; nr_hugepages must read WANT
  local want=$1; shift
  CTL pool set 2MB "$@" >"$WORK/act/pool.out" 2>&1 || { cat "$WORK/act/pool.out" >&2; fail "act: fragctl pool set 2MB $* failed"; }
  [ "$(cat $HP)" -eq "$want" ] || fail "act: after fragctl pool set 2MB $*, the host's nr_hugepages is $(cat $HP), want $want"
  log "act: fragctl pool set 2MB $*: $(cat "$WORK/act/pool.out"); host: nr_hugepages $(cat $HP), node0 $(cat $NODE_HP)"
}
pool 8 8 --node 0
[ "$(cat $NODE_HP)" -eq 8 ] || fail "act: node0's 2 MiB pool is $(cat $NODE_HP), want 8"
pool 16 16
pool 0 0
# /proc/sys is read-only in the pod: the shrink's drain of the CPUs' page lists is unavailable, said
# in the outcome, and not a refused write (the check below).
grep -q 'the per-CPU page lists were not drained: /proc/sys/vm/stat_refresh is read-only for fragd' "$WORK/act/pool.out" ||
  grep -q 'global 2048 kB pool shrunk from 16 to 0$' "$WORK/act/pool.out" ||
  fail "act: the shrink's outcome neither drained nor says the page lists' drain is read-only: $(cat "$WORK/act/pool.out")"
scrape >"$WORK/act/after.prom" || fail "act: /metrics stopped answering"
errors=$(metric "$WORK/act/after.prom" fragd_kernel_write_errors_total)
[ "$errors" -eq 0 ] || fail "act: fragd counts $errors refused kernel writes: $(grep '^fragd_kernel_write_errors_total' "$WORK/act/after.prom")"
# fragd's own account: the compaction (ok, or no_gain on memory compacted already), three pool
# changes, no action in error.
compacts=$(metric "$WORK/act/after.prom" fragd_actions_total 'action="compact",node="0",result="(ok|no_gain)"')
oks=$(metric "$WORK/act/after.prom" fragd_actions_total 'result="ok"')
errs=$(metric "$WORK/act/after.prom" fragd_actions_total 'result="error"')
[ "$compacts" -ge 1 ] && [ "$oks" -ge 3 ] && [ "$errs" -eq 0 ] ||
  fail "act: fragd_actions_total: $compacts compactions of node 0, $oks ok, $errs in error: $(grep '^fragd_actions_total' "$WORK/act/after.prom")"
stop act
log "act: ran, acted ($compacts compaction, $oks actions ok, none in error, no refused write), stopped (exit 0) in $((SECONDS - T1)) s"
[ "$(cat $HP)" -eq 0 ] || fail "nr_hugepages is $(cat $HP) after the act container stopped"
log "PASS in $((SECONDS - T0)) s"
