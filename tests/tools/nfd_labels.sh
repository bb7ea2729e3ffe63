#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nfd_labels.sh FEATURES_DIR: the node labels that the real nfd-worker would publish from the
# feature files in FEATURES_DIR (NFD's "local" source), one name=value a line, sorted, on stdout.
# Lines nfd-worker rejects or overrides are named on stderr; exits 1 when nfd-worker fails.
#
# nfd-worker (NFD_WORKER, else what scripts/install-nfd-worker.sh prints) runs once:
#   nfd-worker -oneshot -no-publish -feature-sources=local -label-sources=local -owner-refs= \
#     -config= -kubeconfig=SCRATCH/kubeconfig -v=1
# -no-publish: no NodeFeature object is written; it still wants a kubeconfig to make its client,
# so it gets one naming 127.0.0.1:1, which it never calls. Its features.d folder is fixed
# (/etc/kubernetes/node-feature-discovery/features.d/, no flag or config key moves it), so it
# runs in a mount namespace of its own where a scratch overlay on /etc holds that folder, bound
# to FEATURES_DIR; the host's /etc is not touched. The namespace has no network. Root, or a user
# allowed to make user namespaces (then unshare maps that user to root).
# nfd-worker logs the labels at -v=1 (klog, stderr) as a YAML map:
#   I1202 00:30:48.910628 18058 nfd-worker.go:783] "feature discovery completed" labels=<
#   <TAB>fragd-fragmentation: medium
#   <TAB>fragd-hugepages-2Mi-gib: "3"
#    >
# Names as nfd-worker gives them to nfd-master, which puts the ones without a namespace in
# feature.node.kubernetes.io/ and drops those in a kubernetes.io namespace other than NFD's.
set -euo pipefail
FEATURES_D=/etc/kubernetes/node-feature-discovery/features.d

# Inside the namespace (this script run again by unshare): FEATURES_DIR is bound into SCRATCH
# before /etc is covered (it may be under /etc), and SCRATCH holds the overlay's tmpfs.
if [ "${1:-}" = --in-namespace ]; then
	scratch=$2 worker=$3
	mount --bind "$4" "$scratch/features"
	mount -t tmpfs -o size=1m,mode=0700 nfd-etc "$scratch/etc"
	mkdir "$scratch/etc/upper" "$scratch/etc/work"
	mount -t overlay -o "lowerdir=/etc,upperdir=$scratch/etc/upper,workdir=$scratch/etc/work" nfd-etc /etc
	mkdir -p "$FEATURES_D"
	mount --bind "$scratch/features" "$FEATURES_D"
	exec "$worker" -oneshot -no-publish -feature-sources=local -label-sources=local -owner-refs= \
		-config= -kubeconfig="$scratch/kubeconfig" -v=1
fi

if [ $# -ne 1 ] || ! [ -d "$1" ]; then
	echo "usage: nfd_labels.sh FEATURES_DIR (a folder of NFD feature files)" >&2
	exit 2
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(realpath "$1")
worker=${NFD_WORKER:-}
if [ -z "$worker" ]; then
	if ! worker=$("$ROOT/scripts/install-nfd-worker.sh" | tail -n 1); then
		echo "nfd_labels: scripts/install-nfd-worker.sh failed (above)" >&2
		exit 1
	fi
fi
if ! [ -x "$worker" ]; then
	echo "nfd_labels: no nfd-worker at $worker" >&2
	exit 1
fi

SCRATCH=$(mktemp -d /tmp/fragd-nfd.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
mkdir "$SCRATCH/features" "$SCRATCH/etc"
cat >"$SCRATCH/kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
clusters:
- name: none
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: none
  context:
    cluster: none
    user: none
users:
- name: none
  user: {}
current-context: none
EOF
userns=()
[ "$(id -u)" -eq 0 ] || userns=(--map-root-user)
rc=0
unshare "${userns[@]}" --mount --net --propagation private -- \
	"$0" --in-namespace "$SCRATCH" "$worker" "$dir" >"$SCRATCH/log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	cat "$SCRATCH/log" >&2
	echo "nfd_labels: nfd-worker ($worker) failed on $dir with exit code $rc (its log above)" >&2
	exit 1
fi

# klog: a message is "SDDDD hh:mm:ss.uuuuuu PID file:line] text"; a multi-line value is
# key=< then its lines, each after a tab, then " >".
/usr/bin/python3 - "$SCRATCH/log" "$worker" <<'PY'
import re
import sys

import yaml

log, worker = sys.argv[1], sys.argv[2]
lines = open(log, encoding="utf-8", errors="replace").read().split("\n")
header = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ [^ \]]+\] (.*)$")
notable = re.compile(r"ignoring label|does not match the whitelist|overriding label|"
                     r"features directory does not exist|failed to read")
block = None
for i, line in enumerate(lines):
    m = header.match(line)
    if not m:
        continue
    severity, text = m.groups()
    if severity != "I" or notable.search(text):
        print(f"nfd_labels: nfd-worker: {line}", file=sys.stderr)
    if text.startswith('"feature discovery completed" labels=<'):
        block = []
        for cont in lines[i + 1:]:
            if cont == " >":
                break
            if not cont.startswith("\t"):
                sys.exit(f"nfd_labels: nfd-worker's labels end unexpectedly at {cont!r} in its log")
            block.append(cont[1:])
        else:
            sys.exit("nfd_labels: nfd-worker's labels have no closing ' >' in its log")
if block is None:
    sys.stderr.write(open(log, encoding="utf-8", errors="replace").read())
    sys.exit(f"nfd_labels: {worker} logged no '\"feature discovery completed\" labels=<' line (its log above)")
# BaseLoader: every scalar a string, as the labels are ("3" stays 3, not an int; true not a bool).
labels = yaml.load("\n".join(block), Loader=yaml.BaseLoader) or {}
if not isinstance(labels, dict):
    sys.exit(f"nfd_labels: nfd-worker's labels are not a map: {block!r}")
for name in sorted(labels):
    print(f"{name}={labels[name]}")
PY
