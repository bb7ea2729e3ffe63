#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Kubernetes manifests against the field's linter, kube-score: configs/kubernetes/base and the
# act overlay (rendered by tests/contract/render_overlay.py as kustomize would) show no critical
# finding and no warning that the DaemonSet's kube-score/ignore annotation does not name with its
# reason; fragd-monitoring.yaml is what scripts/gen-k8s-monitoring.py makes of the rules.
# kube-score is built with `go install` (a pinned version) into FRAGD_TOOLS
# (/var/cache/fragd-tools) the first time. No root.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${FRAGD_TOOLS:-/var/cache/fragd-tools}
KUBE_SCORE=github.com/zegl/kube-score/cmd/kube-score@v1.20.0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "[manifests_test] FAIL: $*" >&2; exit 1; }
skip_or_fail() { [ "${CI:-}" = true ] && fail "$* (CI=true)"; echo "[manifests_test] SKIP: $*"; exit 77; }

/usr/bin/python3 "$SRC/scripts/gen-k8s-monitoring.py" --check || fail "configs/kubernetes/fragd-monitoring.yaml is stale"

if [ ! -x "$TOOLS/kube-score" ]; then
  command -v go >/dev/null || skip_or_fail "no go to build kube-score with"
  mkdir -p "$TOOLS"
  GOBIN="$TOOLS" GOFLAGS=-mod=mod go install "$KUBE_SCORE" >"$WORK/go.log" 2>&1 ||
    { cat "$WORK/go.log" >&2; skip_or_fail "go install $KUBE_SCORE failed (above)"; }
fi
/usr/bin/python3 "$SRC/tests/contract/render_overlay.py" "$SRC/configs/kubernetes/base/fragd-daemonset.yaml" \
  "$SRC/configs/kubernetes/act/fragd-act-patch.yaml" >"$WORK/act.yaml"
for m in "$SRC/configs/kubernetes/base/fragd-daemonset.yaml" "$WORK/act.yaml"; do
  if ! "$TOOLS/kube-score" score --output-format ci --exit-one-on-warning "$m" >"$WORK/score.txt" 2>&1; then
    grep -vE '^\[(OK|SKIPPED)\]' "$WORK/score.txt" >&2 || true
    fail "kube-score: findings in $(basename "$m") (above): fix each, or name it in the DaemonSet's kube-score/ignore annotation with its reason"
  fi
  echo "[manifests_test] kube-score $(basename "$m"): $(grep -c '^\[OK\]' "$WORK/score.txt") checks ok, no warning or critical; skipped: $(sed -n 's/^\[SKIPPED\].*Skipped because \(.*\) is ignored$/\1/p' "$WORK/score.txt" | tr '\n' ' ')(the annotation names two with their reasons; the others are optional checks kube-score leaves off), probe checks (no Service targets the pod)"
done
echo "[manifests_test] PASS"
