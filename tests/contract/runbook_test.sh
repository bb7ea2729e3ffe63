#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runbook URLs set at build time (FRAGD_RUNBOOK_BASE_URL, cmake/RunbookUrls.cmake): with a base,
# every alert of the rules and of the generated PrometheusRule links to <base>docs/runbooks.md#runbook-
# <alert in lower case>, a '### Runbook <alert>' section docs/runbooks.md has, and every such section
# is an alert's; promtool still passes the rules; a base that is not an http(s) URL fails the build
# with a message naming the setting. No root.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "[runbook_test] FAIL: $*" >&2; exit 1; }
BASE=https://docs.example.com/fragd

cmake -DBASE="$BASE" -DSOURCE_DIR="$SRC" -DOUT_DIR="$WORK" -P "$SRC/cmake/RunbookUrls.cmake" ||
  fail "cmake/RunbookUrls.cmake failed with base $BASE"
/usr/bin/python3 - "$WORK/fragd-rules.yml" "$WORK/fragd-monitoring.yaml" "$SRC/docs/runbooks.md" "$BASE/" <<'PY' ||
import re, sys, yaml
rules, monitoring, runbooks, base = sys.argv[1:]
headings = set(re.findall(r"^### Runbook (\S+)$", open(runbooks).read(), re.M))
bad, n, alerts = [], 0, set()
def check(where, groups):
    global n
    for g in groups:
        for r in g["rules"]:
            if "alert" not in r:
                continue
            n += 1
            alerts.add(r["alert"])
            want = base + "docs/runbooks.md#runbook-" + r["alert"].lower()
            got = r.get("annotations", {}).get("runbook_url")
            if got != want:
                bad.append(f"{where}: {r['alert']}: runbook_url {got!r}, want {want!r}")
            if r["alert"] not in headings:
                bad.append(f"{where}: {r['alert']}: docs/runbooks.md has no '### Runbook {r['alert']}'")
check("fragd-rules.yml", yaml.safe_load(open(rules))["groups"])
docs = [d for d in yaml.safe_load_all(open(monitoring)) if d and d.get("kind") == "PrometheusRule"]
if len(docs) != 1:
    bad.append(f"fragd-monitoring.yaml holds {len(docs)} PrometheusRule documents, want 1")
else:
    check("fragd-monitoring.yaml", docs[0]["spec"]["groups"])
for h in sorted(headings - alerts):
    bad.append(f"docs/runbooks.md: '### Runbook {h}' is the runbook of no alert")
for b in bad:
    print(b, file=sys.stderr)
print(f"[runbook_test] {n} alerts link to {base}docs/runbooks.md#runbook-<alert>")
sys.exit(1 if bad or n == 0 else 0)
PY
  fail "runbook URLs are not what the base makes of them (above)"
promtool check rules "$WORK/fragd-rules.yml" >"$WORK/promtool.out" 2>&1 ||
  { cat "$WORK/promtool.out" >&2; fail "promtool rejects the rules with absolute runbook URLs"; }
if cmake -DBASE=docs/fragd -DSOURCE_DIR="$SRC" -DOUT_DIR="$WORK" -P "$SRC/cmake/RunbookUrls.cmake" >"$WORK/bad.out" 2>&1; then
  fail "a base that is not an http(s) URL was accepted"
fi
grep -q "FRAGD_RUNBOOK_BASE_URL 'docs/fragd' is not an http(s) URL" "$WORK/bad.out" ||
  fail "the error for a bad base does not name the setting: $(cat "$WORK/bad.out")"
echo "[runbook_test] PASS"
