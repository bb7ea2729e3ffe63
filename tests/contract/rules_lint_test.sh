#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Prometheus rules against the field's linter, pint: `pint --offline lint` finds no problem of
# severity warning or above in configs/prometheus/fragd-rules.yml, with its offline checks (PromQL
# syntax, templates that use labels the query drops, ...) and fragd's own policy for alerts
# (below: a severity label of warning or critical; summary, description and a runbook_url naming
# the alert's section of docs/runbooks.md). Four broken copies must fail, each with the check that
# catches it.
# pint is built from its module (a pinned version, fetched with `go mod download`) into
# FRAGD_TOOLS (/var/cache/fragd-tools) the first time. No root.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS=${FRAGD_TOOLS:-/var/cache/fragd-tools}
PATH=$TOOLS/go/bin:$PATH  # the Go toolchain scripts/install-deps.sh pins
PINT=github.com/cloudflare/pint
PINT_VERSION=v0.87.0
RULES=$SRC/configs/prometheus/fragd-rules.yml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "[rules_lint_test] FAIL: $*" >&2; exit 1; }
skip_or_fail() { [ "${CI:-}" = true ] && fail "$* (CI=true)"; echo "[rules_lint_test] SKIP: $*"; exit 77; }

if [ "$("$TOOLS/pint" version 2>/dev/null | cut -d' ' -f1)" != "$PINT_VERSION" ]; then
  command -v go >/dev/null || skip_or_fail "no go to build pint with"
  (cd "$WORK" && GOFLAGS=-mod=mod go mod download -json "$PINT@$PINT_VERSION") >"$WORK/mod.json" 2>"$WORK/go.log" ||
    { cat "$WORK/mod.json" "$WORK/go.log" >&2; skip_or_fail "go mod download $PINT@$PINT_VERSION failed (above)"; }
  read -r dir commit < <(/usr/bin/python3 -c 'import json, sys; m = json.load(sys.stdin)
print(m["Dir"], m.get("Origin", {}).get("Hash", "unknown"))' <"$WORK/mod.json")
  # `go install ...@version` also asks for pint's list of versions, which is refused; the pinned
  # version itself downloads. So build it in its module directory.
  (cd "$dir" && GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath \
    -ldflags "-X main.version=$PINT_VERSION -X main.commit=$commit" -o "$WORK/pint" ./cmd/pint) >>"$WORK/go.log" 2>&1 ||
    { cat "$WORK/go.log" >&2; skip_or_fail "building pint $PINT_VERSION failed (above)"; }
  mkdir -p "$TOOLS"
  mv -f "$WORK/pint" "$TOOLS/pint"
fi

# fragd's policy for its alerts. {{ $alert }} is the rule's alert name; (?i) since the runbook
# page's anchors are in lower case; the build may prefix the URL with where the directory of
# README.md and docs/ is served (FRAGD_RUNBOOK_BASE_URL).
cat >"$WORK/pint.hcl" <<'EOF'
rule {
  match {
    kind = "alerting"
  }
  label "severity" {
    value    = "(warning|critical)"
    required = true
  }
  annotation "summary" {
    required = true
  }
  annotation "description" {
    required = true
  }
  annotation "runbook_url" {
    value    = "(?i)(https?://\\S+/)?docs/runbooks\\.md#runbook-{{ $alert }}"
    required = true
  }
}
EOF
pint() {
  (cd "$WORK" && "$TOOLS/pint" --offline --no-color --config "$WORK/pint.hcl" \
    lint --min-severity info --fail-on warning "$@")
}

if ! pint "$RULES" >"$WORK/lint.txt" 2>&1; then
  cat "$WORK/lint.txt" >&2
  fail "pint: problems of severity warning or above in fragd-rules.yml (above)"
fi
checked=$(sed -n 's/.*msg="Checking Prometheus rules" entries=\([0-9]*\) .*/\1/p' "$WORK/lint.txt")
records=$(grep -cE '^ *- record:' "$RULES")
alerts=$(grep -cE '^ *- alert:' "$RULES")
[ "$checked" = $((records + alerts)) ] ||
  { cat "$WORK/lint.txt" >&2; fail "pint checked ${checked:-no} rules; fragd-rules.yml has $((records + alerts))"; }
info=$(sed -n 's/.*msg="Problems found".*Information=\([0-9]*\).*/\1/p' "$WORK/lint.txt")
if [ -n "$info" ]; then grep -v '^level=' "$WORK/lint.txt"; fi

# Copies that must fail: an alert whose query drops a label its annotations use, a runbook_url
# that names another alert, a severity outside the policy, a PromQL syntax error.
mutate() {  # NAME SED-EXPRESSION: $WORK/NAME.yml, which must differ from the rules
  sed "$2" "$RULES" >"$WORK/$1.yml"
  ! cmp -s "$RULES" "$WORK/$1.yml" || fail "the $1 mutation no longer changes fragd-rules.yml"
}
mutate aggregated 's/^\( *expr: \)fragd_node_fragmentation_score_percent > 70$/\1max by (instance, job) (fragd_node_fragmentation_score_percent) > 70/'
mutate runbook 's/runbooks\.md#runbook-fragddown"/runbooks.md#runbook-fragdhighfragmentation"/'
mutate severity '/- alert: FragdDown/,/severity:/s/severity: critical/severity: page/'
mutate syntax 's/(rate(fragd_direct_stall_entries_total\[5m\]))$/(rate(fragd_direct_stall_entries_total[5m])/'
for bad in aggregated:alerts/template:FragdHighFragmentation runbook:alerts/annotation:FragdDown \
  severity:rule/label:FragdDown syntax:promql/syntax:fragd:stall_rate:5m; do
  name=${bad%%:*} rest=${bad#*:}
  check=${rest%%:*} rule=${rest#*:}
  if pint "$WORK/$name.yml" >"$WORK/$name.txt" 2>&1; then
    cat "$WORK/$name.txt" >&2; fail "pint passed the $name copy (above)"
  fi
  grep -qF "($check)" "$WORK/$name.txt" && grep -qF "\`$rule\`" "$WORK/$name.txt" ||
    { cat "$WORK/$name.txt" >&2; fail "pint did not report $check on $rule in the $name copy (above)"; }
done

echo "[rules_lint_test] pint $PINT_VERSION --offline lint fragd-rules.yml: $checked rules ($records recording," \
  "$alerts alerting), no problem of severity warning or above (${info:-0} information); policy: severity" \
  "warning|critical, summary, description, runbook_url docs/runbooks.md#runbook-<alert>; broken copies fail:" \
  "alerts/template, alerts/annotation, rule/label, promql/syntax"
echo "[rules_lint_test] PASS"
