#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The scheduler's view, read by the real consumer: fragd (observe mode) writes its Node Feature
# Discovery feature file (nfd.features_file), and nfd-worker v0.19.0 (scripts/install-nfd-worker.sh,
# built from its source module) in its one-shot mode publishes exactly fragd's three labels from it,
# with the values the file holds; the values agree with what `fragctl preflight` says the host can
# supply; when fragd stops, the file is gone and nfd-worker publishes none of them.
source "$(dirname "$0")/lib.sh"
require_root
NFD=$(bash "$SRC/scripts/install-nfd-worker.sh" | tail -n 1) || skip_or_fail "nfd-worker could not be built (scripts/install-nfd-worker.sh)"
[ -x "$NFD" ] || skip_or_fail "no nfd-worker at '$NFD'"

mkdir -p "$WORK/features.d"
cat >"$WORK/nfd.yaml" <<YAML
nfd: {features_file: $WORK/features.d/fragd, hold: 1m}
YAML
FRAGD_CONFIG="$WORK/nfd.yaml" start_fragd
wait_for 90 test -s "$WORK/features.d/fragd" || fail "no NFD feature file 90 s after start: $(cat "$FRAGD_LOG")"
ls -a "$WORK/features.d" | grep -q '^\.fragd' && fail "a temporary file was left in features.d"
NFD_WORKER="$NFD" bash "$SRC/tests/tools/nfd_labels.sh" "$WORK/features.d" >"$WORK/labels.txt" 2>"$WORK/nfd.err" ||
	fail "nfd-worker failed: $(cat "$WORK/nfd.err")"
log "nfd-worker publishes: $(tr '\n' ' ' <"$WORK/labels.txt")"
grep -v '^#' "$WORK/features.d/fragd" | sort >"$WORK/file.txt"
diff -u "$WORK/file.txt" "$WORK/labels.txt" || fail "nfd-worker's labels are not the file's"
[ "$(wc -l <"$WORK/labels.txt")" -eq 3 ] || fail "want 3 labels"

# The 2 MiB label is the host's free + makeable 2 MiB pages in GiB, rounded down to a power of two.
gib=$(sed -n 's/^fragd-hugepages-2Mi-gib=//p' "$WORK/labels.txt")
"$BUILD/fragctl" --socket "$SOCK" preflight 2MB 1 --json >"$WORK/pf.json" || true
pages=$(python3 -c "import json; j=json.load(open('$WORK/pf.json')); print(j['free'] + j['makeable'])")
python3 - "$gib" "$pages" <<'PY' || fail "label fragd-hugepages-2Mi-gib=$gib does not bucket preflight's $pages pages"
import sys
gib, pages = int(sys.argv[1]), int(sys.argv[2])
g = pages // 512
# The label keeps its bucket for nfd.hold: allow the neighbouring bucket.
want = 0 if g == 0 else 1 << (g.bit_length() - 1)
assert gib in (want, want // 2, want * 2), (gib, want)
PY

stop_fragd
[ ! -e "$WORK/features.d/fragd" ] || fail "fragd stopped and left its feature file"
NFD_WORKER="$NFD" bash "$SRC/tests/tools/nfd_labels.sh" "$WORK/features.d" >"$WORK/after.txt" 2>/dev/null || true
grep -q fragd "$WORK/after.txt" && fail "nfd-worker still publishes fragd's labels after fragd stopped"
log "PASS"
