#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Kubernetes manifests against the field's linter, kube-score: configs/kubernetes/base and the
# act overlay (rendered by tests/contract/render_overlay.py as kustomize would) show no critical
# finding and no warning that the DaemonSet's kube-score/ignore annotation does not name with its
# reason; fragd-monitoring.yaml is what scripts/gen-k8s-monitoring.py makes of the rules.
# Then kubeconform validates every document of the base, of the act overlay and of
# fragd-monitoring.yaml against the Kubernetes API's JSON schemas, strictly (an unknown field, a
# wrong type or a duplicated key is an error; so is a kind it has no schema for, except the two
# Prometheus Operator CRDs it is told to skip), and must reject a deliberately broken copy.
# kube-score and kubeconform are built with `go install` (pinned versions) into FRAGD_TOOLS
# (/var/cache/fragd-tools) the first time, and again whenever the binary there is not the pinned
# version (`go version -m` names the module and version it was built from); so are the schemas, from the kubernetes-validate
# package on PyPI (pinned, checked by hash), with their $refs turned into file:// URIs so that
# kubeconform reads them offline. No root.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${FRAGD_TOOLS:-/var/cache/fragd-tools}
PATH=$TOOLS/go/bin:$PATH  # the Go toolchain scripts/install-deps.sh pins
KUBE_SCORE=github.com/zegl/kube-score/cmd/kube-score@v1.20.0
KUBECONFORM=github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
# The newest Kubernetes whose schemas kubernetes-validate 1.37.0 bundles.
K8S_VERSION=1.37.0
SCHEMAS_PKG=kubernetes-validate==1.37.0
SCHEMAS_SHA256=85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9
SCHEMAS=$TOOLS/kubernetes-validate-1.37.0  # v$K8S_VERSION-local-strict/*.json, $refs as file:// URIs
# Custom resources: no schema bundled for them, so kubeconform skips these kinds by name.
CRD_KINDS=PodMonitor,PrometheusRule
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "[manifests_test] FAIL: $*" >&2; exit 1; }
skip_or_fail() { [ "${CI:-}" = true ] && fail "$* (CI=true)"; echo "[manifests_test] SKIP: $*"; exit 77; }

/usr/bin/python3 "$SRC/scripts/gen-k8s-monitoring.py" --check || fail "configs/kubernetes/fragd-monitoring.yaml is stale"

# pinned TOOL PACKAGE@VERSION: TOOLS/TOOL is there and `go version -m` names the module (PACKAGE's
# path up to /cmd/) at that version as what it was built from.
pinned() {
  local mod=${2%@*} version=${2#*@}
  mod=${mod%%/cmd/*}
  command -v go >/dev/null && [ -x "$TOOLS/$1" ] && go version -m "$TOOLS/$1" 2>/dev/null |
    awk -v m="$mod" -v v="$version" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}
# install_pinned TOOL PACKAGE@VERSION: go install into a scratch GOBIN, then over TOOLS/TOOL, checked.
install_pinned() {
  [ -x "$TOOLS/$1" ] && echo "[manifests_test] $TOOLS/$1 is not ${2#*@} ($(go version -m "$TOOLS/$1" 2>/dev/null |
    awk '$1 == "mod" { print $2, $3 }' || true)): building ${2#*@}"
  command -v go >/dev/null || skip_or_fail "no go to build $1 ${2#*@} with, or to check that $TOOLS/$1 is that version"
  mkdir -p "$TOOLS"
  GOBIN="$WORK/bin" GOFLAGS=-mod=mod go install "$2" >"$WORK/go.log" 2>&1 ||
    { cat "$WORK/go.log" >&2; skip_or_fail "go install $2 failed (above)"; }
  mv -f "$WORK/bin/$1" "$TOOLS/$1"
  pinned "$1" "$2" || fail "go install $2 gave a $TOOLS/$1 that go version -m does not name as ${2#*@}"
}
pinned kube-score "$KUBE_SCORE" || install_pinned kube-score "$KUBE_SCORE"
echo "[manifests_test] kube-score ${KUBE_SCORE#*@} ($TOOLS/kube-score, checked with go version -m)"
/usr/bin/python3 "$SRC/tests/contract/render_overlay.py" "$SRC/configs/kubernetes/act" >"$WORK/act.yaml"
for m in "$SRC/configs/kubernetes/base/fragd-daemonset.yaml" "$WORK/act.yaml"; do
  if ! "$TOOLS/kube-score" score --output-format ci --exit-one-on-warning "$m" >"$WORK/score.txt" 2>&1; then
    grep -vE '^\[(OK|SKIPPED)\]' "$WORK/score.txt" >&2 || true
    fail "kube-score: findings in $(basename "$m") (above): fix each, or name it in the DaemonSet's kube-score/ignore annotation with its reason"
  fi
  echo "[manifests_test] kube-score $(basename "$m"): $(grep -c '^\[OK\]' "$WORK/score.txt") checks ok, no warning or critical; skipped: $(sed -n 's/^\[SKIPPED\].*Skipped because \(.*\) is ignored$/\1/p' "$WORK/score.txt" | tr '\n' ' ')(the annotation names two with their reasons; the others are optional checks kube-score leaves off), probe checks (no Service targets the pod)"
done

pinned kubeconform "$KUBECONFORM" || install_pinned kubeconform "$KUBECONFORM"
SCHEMAS=$(realpath -m "$SCHEMAS")
# Made anew if missing, or if its $refs name another place (a tools directory copied or moved).
if ! grep -qF "\"file://$SCHEMAS/v$K8S_VERSION-local-strict/_definitions.json#" \
  "$SCHEMAS/v$K8S_VERSION-local-strict/daemonset-apps-v1.json" 2>/dev/null; then
  pip=
  for py in python3 /usr/bin/python3; do "$py" -m pip --version >/dev/null 2>&1 && { pip="$py -m pip"; break; }; done
  [ -n "$pip" ] || skip_or_fail "no pip to download $SCHEMAS_PKG with"
  $pip download --no-deps --only-binary=:all: --disable-pip-version-check -q -d "$WORK/wheel" "$SCHEMAS_PKG" \
    >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log" >&2; skip_or_fail "pip download $SCHEMAS_PKG failed (above)"; }
  whl=$(echo "$WORK"/wheel/*.whl)
  echo "$SCHEMAS_SHA256  $whl" | sha256sum -c --quiet - >&2 || fail "$(basename "$whl") is not the one pinned (sha256)"
  mkdir -p "$TOOLS"
  tmp=$(mktemp -d "$TOOLS/.schemas.XXXXXX")
  # The schemas' $refs name "/api/_definitions.json#/$defs/...", resolved against their $id
  # (https://kubernetes.io/...): kubeconform would fetch that. Point them at the local copy.
  /usr/bin/python3 - "$whl" "$K8S_VERSION" "$tmp" "$SCHEMAS" <<'EOF' || fail "could not unpack the schemas"
import pathlib, sys, zipfile
whl, version, tmp, final = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
sub = f"v{version}-local-strict"
prefix = f"kubernetes_validate/kubernetes-json-schema/{sub}/"
defs = (final.resolve() / sub / "_definitions.json").as_uri()
(tmp / sub).mkdir()
n = 0
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.startswith(prefix) and name.endswith(".json"):
            text = z.read(name).decode().replace('"/api/_definitions.json#', f'"{defs}#')
            (tmp / sub / name[len(prefix):]).write_text(text)
            n += 1
if n < 100 or not (tmp / sub / "daemonset-apps-v1.json").exists():
    sys.exit(f"only {n} schemas under {prefix} in {whl}")
EOF
  chmod 755 "$tmp"
  rm -rf "$SCHEMAS.old"
  [ ! -e "$SCHEMAS" ] || mv -T "$SCHEMAS" "$SCHEMAS.old" 2>/dev/null || true
  mv -T "$tmp" "$SCHEMAS" 2>/dev/null || rm -rf "$tmp"  # another run got there first
  rm -rf "$SCHEMAS.old"
fi
# Offline: a schema that still named a remote URL would go to this proxy, where nothing listens,
# and fail as a missing schema.
kubeconform() {
  HTTPS_PROXY=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 \
    http_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy= "$TOOLS/kubeconform" -strict -summary \
    -kubernetes-version "$K8S_VERSION" -skip "$CRD_KINDS" \
    -schema-location "$SCHEMAS/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$@"
}

# It must reject what the API server would: a misspelled field of the DaemonSet's container, a
# string for a Deployment's replicas, and a kind it has no schema for (not skipped in silence).
sed 's/imagePullPolicy:/imagePullPolicyy:/' "$SRC/configs/kubernetes/base/fragd-daemonset.yaml" >"$WORK/broken.yaml"
grep -q imagePullPolicyy "$WORK/broken.yaml" || fail "the DaemonSet has no imagePullPolicy to misspell"
cat >>"$WORK/broken.yaml" <<'EOF'
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: broken
spec:
  replicas: "x"
  selector:
    matchLabels: {app: broken}
  template:
    metadata:
      labels: {app: broken}
    spec:
      containers:
        - name: broken
          image: registry.example/broken:1
---
apiVersion: apps/v1
kind: DaemonSett
metadata:
  name: broken
EOF
if kubeconform "$WORK/broken.yaml" >"$WORK/broken.txt" 2>&1; then
  cat "$WORK/broken.txt" >&2; fail "kubeconform accepted a broken manifest (above)"
fi
grep -q "DaemonSet fragd is invalid.*additional properties 'imagePullPolicyy' not allowed" "$WORK/broken.txt" &&
  grep -q "Deployment broken is invalid.*at '/spec/replicas': got string" "$WORK/broken.txt" &&
  grep -q "could not find schema for DaemonSett" "$WORK/broken.txt" ||
  { cat "$WORK/broken.txt" >&2; fail "kubeconform did not name each error of the broken manifest (above)"; }

monitoring=$SRC/configs/kubernetes/fragd-monitoring.yaml
if ! kubeconform -verbose "$SRC/configs/kubernetes/base/fragd-daemonset.yaml" "$WORK/act.yaml" "$monitoring" \
  >"$WORK/conform.txt" 2>&1; then
  grep -v ' is valid$' "$WORK/conform.txt" >&2 || true
  fail "kubeconform: the manifests do not validate against the Kubernetes $K8S_VERSION API (above)"
fi
summary=$(grep '^Summary:' "$WORK/conform.txt") || { cat "$WORK/conform.txt" >&2; fail "kubeconform printed no summary"; }
valid=$(sed -n 's/.* Valid: \([0-9]*\),.*/\1/p' <<<"$summary")
skipped=$(sed -n 's/.* Skipped: \([0-9]*\)$/\1/p' <<<"$summary")
docs=$(cat "$SRC/configs/kubernetes/base/fragd-daemonset.yaml" "$WORK/act.yaml" "$monitoring" | grep -c '^kind:')
crds=$(grep -cE "^kind: (${CRD_KINDS//,/|})$" "$monitoring")
[ "$skipped" = "$crds" ] && [ "$valid" = $((docs - crds)) ] && [ "$valid" -gt 0 ] ||
  { cat "$WORK/conform.txt" >&2; fail "kubeconform validated $valid and skipped $skipped of $docs documents; expected all but the $crds CRDs"; }
echo "[manifests_test] kubeconform ${KUBECONFORM#*@} -strict against Kubernetes $K8S_VERSION schemas ($SCHEMAS_PKG, offline):" \
  "$valid resources valid in fragd-daemonset.yaml, the act overlay and fragd-monitoring.yaml" \
  "($(sed -n 's/.* - \([A-Za-z]*\) .* is valid$/\1/p' "$WORK/conform.txt" | sort -u | tr '\n' ' ' | sed 's/ $//'));" \
  "skipped $skipped of kinds $CRD_KINDS (Prometheus Operator CRDs, no schema bundled);" \
  "rejects a broken copy (imagePullPolicyy, replicas: \"x\", unknown kind)"
echo "[manifests_test] PASS"
