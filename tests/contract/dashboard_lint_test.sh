#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dashboard against dashboard-linter's rules (tests/contract/dashboard_lint.py): the shipped
# one passes, and the checker fails on a copy that breaks a rule. No root.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LINT="/usr/bin/python3 $SRC/tests/contract/dashboard_lint.py"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
$LINT "$SRC/dashboards/fragd.json" "$SRC/dashboards/.lint"
# A copy whose first query lacks the job matcher, and one that is editable, must fail.
python3 - "$SRC/dashboards/fragd.json" "$WORK" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = next(t for p in d["panels"] for t in p.get("targets", []))
t["expr"] = t["expr"].replace('job=~"$job",', "", 1)
json.dump(d, open(sys.argv[2] + "/nojob.json", "w"))
d = json.load(open(sys.argv[1]))
d["editable"] = True
json.dump(d, open(sys.argv[2] + "/editable.json", "w"))
PY
for bad in nojob:target-job editable:dashboard-editable; do
  file=${bad%%:*} rule=${bad#*:}
  if $LINT "$WORK/$file.json" "$SRC/dashboards/.lint" >"$WORK/$file.out"; then
    echo "FAIL: the checker passed $file.json" >&2; exit 1
  fi
  grep -q "$rule" "$WORK/$file.out" || { echo "FAIL: $file.json did not fail with $rule: $(cat "$WORK/$file.out")" >&2; exit 1; }
done
echo "PASS: dashboards/fragd.json follows dashboard-linter's rules; a copy without a job matcher or editable fails"
