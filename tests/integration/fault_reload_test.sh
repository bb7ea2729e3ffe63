#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A policy reload storm: 100 SIGHUPs in a tight loop while the policy file
# alternates between valid variants and invalid ones (bad values, broken YAML,
# unknown keys, half a file), ending on a known valid one. Afterwards fragd
# runs that last policy (fragd_policy_info, fragctl status), it never died,
# its open fds (+2) and VmRSS (+1 MiB) did not grow beyond a small bound over
# the 100 (measured after a first storm of 20, so that what the first reloads
# allocate for good is in the baseline), and its reload counters agree with
# each other and with its log (signals coalesce: at most 100 reloads, at
# least one of each kind).
# Every valid variant is observe or dry_run: nothing is written to the kernel.
source "$(dirname "$0")/lib.sh"
require_root
heavy_lock

POLICY="$WORK/policy.yaml"
valid() {  # valid MODE DRY_RUN METHOD
  cat <<YAML
mode: $1
dry_run: $2
compaction:
  method: $3
  score: {high: 60, low: 30}
  min_interval: 5s
YAML
}
invalid() {
  case $1 in
    0) printf 'mode: act\ncompaction:\n  score: {high: 10, low: 30}\n' ;;       # low >= high
    1) printf 'mode: act\ncompaction: [unclosed\n' ;;                           # not YAML
    2) printf 'mode: act\ncompaction:\n  methd: node\n' ;;                      # unknown key
    3) valid act true node | head -c 40 ;;                                      # half a file
  esac
}
valid observe false node >"$POLICY"
FRAGD_CONFIG="$POLICY" start_fragd

fds() { ls "/proc/$FRAGD_PID/fd" | wc -l; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$FRAGD_PID/status"; }
reloads() {
  scrape >"$WORK/r.prom" || fail "/metrics did not answer during the reload storm"
  echo "$(metric "$WORK/r.prom" fragd_policy_reloads_total 'result="ok"') $(metric "$WORK/r.prom" fragd_policy_reloads_total 'result="error"')"
}
settle() {  # until the reload counters stop moving; prints them
  local prev="" now
  for _ in $(seq 1 20); do
    sleep 1
    kill -0 "$FRAGD_PID" 2>/dev/null || { cat "$FRAGD_LOG" >&2; fail "fragd died during the reload storm"; }
    now=$(reloads)
    [ "$now" = "$prev" ] && break
    prev=$now
  done
  echo "$now"
}
# storm N LAST: N SIGHUPs in a tight loop, the file alternating (valid, invalid, the other
# valid, invalid, ...); the last one LAST (a "valid ..." or "invalid K" command). Each file
# is written beside the policy and renamed over it; the SIGHUP follows at once.
storm() {
  local n=$1 last=$2 i
  for i in $(seq 1 "$n"); do
    if [ "$i" -eq "$n" ]; then $last
    elif [ $((i % 2)) -eq 0 ]; then invalid $(((i / 2) % 4))
    elif [ $((i % 4)) -eq 1 ]; then valid act true node
    else valid observe false node
    fi >"$POLICY.new"
    mv -f "$POLICY.new" "$POLICY"
    kill -HUP "$FRAGD_PID"
  done
}

# A first, smaller storm so that what any first reload allocates for good (and the first
# pageblock scan) is in the baseline; then the 100.
storm 20 "valid observe false node"
read -r ok0 err0 <<<"$(settle)"
fd0=$(fds)
rss0=$(rss_kib)
storm 100 "valid act true proactiveness"
read -r ok err <<<"$(settle)"
fd1=$(fds)
rss1=$(rss_kib)
dok=$((ok - ok0)) derr=$((err - err0))
log "100 SIGHUPs: $dok reloads ok, $derr refused ($((100 - dok - derr)) coalesced)"
[ "$dok" -ge 1 ] && [ "$derr" -ge 1 ] || fail "want at least one good and one refused reload, got ok=$dok error=$derr"
[ $((dok + derr)) -le 100 ] || fail "$((dok + derr)) reloads counted for 100 signals"
log_ok=$(grep -c 'policy reloaded from .* (SIGHUP)' "$FRAGD_LOG" || true)
log_err=$(grep -c 'reload (SIGHUP) failed, keeping the running policy' "$FRAGD_LOG" || true)
[ "$log_ok" -eq "$ok" ] && [ "$log_err" -eq "$err" ] ||
  fail "the log has $log_ok good and $log_err refused reloads, the metrics $ok and $err"
FRAGCTL status --json >"$WORK/status.json"
python3 - "$WORK/status.json" "$ok" "$err" <<'PY' || fail "fragctl status does not show the last valid policy (above)"
import json, sys
p = json.load(open(sys.argv[1]))["policy"]
want = {"mode": "act", "dry_run": True, "method": "proactiveness", "reloads": int(sys.argv[2]),
        "reload_errors": int(sys.argv[3])}
got = {k: p.get(k) for k in want}
if got != want: sys.exit(f"status policy {got}, want {want}")
PY
[ "$(metric <(scrape) fragd_policy_info 'mode="act",dry_run="true",method="proactiveness"')" -eq 1 ] ||
  fail "fragd_policy_info does not show the last valid policy: $(scrape | grep '^fragd_policy_info')"

# Keys read at start keep their running values and are named, each by its path; the rest apply.
{ valid act true node; printf 'tick_interval: 2s\npageblocks: {interval: 30s}\nforecast_window: 20m\n'; } >"$POLICY"
FRAGCTL reload >"$WORK/reload.out" 2>&1 || { cat "$WORK/reload.out" >&2; fail "fragctl reload refused a valid file"; }
grep -q 'changed but needing a restart: tick_interval pageblocks.interval$' "$WORK/reload.out" ||
  fail "the reload does not name exactly the keys read at start it changed: $(cat "$WORK/reload.out")"
method_node() { [ "$(metric <(scrape) fragd_policy_info 'mode="act",dry_run="true",method="node"')" = 1 ]; }
wait_for 5 method_node || fail "the reload did not apply compaction.method: $(scrape | grep '^fragd_policy_info')"

log "open fds $fd0 -> $fd1, VmRSS $rss0 -> $rss1 kB"
[ "$fd1" -le $((fd0 + 2)) ] || fail "open fds grew from $fd0 to $fd1 over 100 reloads"
# Under ASan (make sanitize) freed memory sits in its quarantine: RSS measures the sanitizer; LeakSanitizer checks leaks.
sanitized || [ "$rss1" -le $((rss0 + 1024)) ] || fail "VmRSS grew from $rss0 to $rss1 kB over 100 reloads (bound +1 MiB)"
stop_fragd
log "PASS in $((SECONDS - STARTED)) s"
