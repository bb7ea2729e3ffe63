#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Control clients that do not read, and clients that take every slot:
#  a. four clients ask for hist and status as fast as fragd takes requests and
#     read nothing, a fifth reads a trickle (the audit's attack), for up to 25 s:
#     fragd drops all five and counts them by reason (output_full or
#     write_timeout), no collector tick is missed meanwhile, and root's
#     `fragctl status` is answered during the attack.
#  b. 64 `fragctl trace`-like clients of one user (nobody, through socket_group):
#     16 are let in, 48 refused (uid_limit); three more users take the slots left
#     open to users other than root (server_full for the rest); root's `fragctl
#     status` is still answered, and the refusals are counted by reason.
# The tick lateness during (a) is a figure for RELIABILITY.md ("Fault suite"), not
# an assertion here (timing goals live in benchmarks).
source "$(dirname "$0")/lib.sh"
require_root
for tool in python3 groupadd groupdel setpriv timeout curl; do
  command -v $tool >/dev/null || skip_or_fail "needs $tool"
done
heavy_lock
PROBE="python3 $SRC/tests/integration/control_probe.py"
chmod 0755 "$WORK"   # users other than root reach the socket through the group, not past the folder

GROUP="fragdc$$"
groupadd "$GROUP"
on_exit "groupdel $GROUP"
GID=$(getent group "$GROUP" | cut -d: -f3)
cat >"$WORK/fragd.yaml" <<YAML
socket_group: $GROUP
YAML
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd
wait_scored || fail "fragd published no score within 30 s"
sleep 2   # a few ticks: the lateness of start-up is not the attack's

scrape >"$WORK/before.prom"
missed0=$(metric "$WORK/before.prom" fragd_collector_ticks_missed_total)
late0=$(awk '$1 == "fragd_collector_tick_late_max_seconds" {print $2}' "$WORK/before.prom")

# --- a. The attack, with root asking for status in the middle of it.
$PROBE flood "$SOCK" 25 >"$WORK/flood.out" 2>&1 &
FLOOD_PID=$!; PIDS+=("$FLOOD_PID")
sleep 3
t0=$(date +%s.%N)
timeout 10 "$BUILD/fragctl" --socket "$SOCK" status >"$WORK/status-a.txt" 2>&1 ||
  { cat "$WORK/status-a.txt"; fail "root's fragctl status was not answered during the attack"; }
t1=$(date +%s.%N)
status_secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
flood_rc=0; wait "$FLOOD_PID" || flood_rc=$?
cat "$WORK/flood.out"
[ "$flood_rc" -eq 0 ] || fail "fragd kept a client that read nothing (or a trickle) for 25 s"
kill -0 "$FRAGD_PID" || fail "fragd died"
sleep 2   # one tick publishes the counters
scrape >"$WORK/after.prom"
missed1=$(metric "$WORK/after.prom" fragd_collector_ticks_missed_total)
late1=$(awk '$1 == "fragd_collector_tick_late_max_seconds" {print $2}' "$WORK/after.prom")
grep '^fragd_control_clients_dropped_total' "$WORK/after.prom" || true
log "tick lateness max ${late0} s before, ${late1} s after; ticks missed ${missed0} before, ${missed1} after"
[ "$missed1" -eq "$missed0" ] || fail "$((missed1 - missed0)) collector ticks missed during the attack"
drops=$(metric "$WORK/after.prom" fragd_control_clients_dropped_total 'reason="(output_full|write_timeout)"')
[ "$drops" -ge 5 ] || fail "$drops clients dropped as output_full or write_timeout, want 5"
log "attack: 5 clients dropped and counted; no tick missed; root's status answered in ${status_secs} s during it"

# --- b. Slots: 64 trace clients of one user, then three more users.
mkdir -m 0777 "$WORK/hold"
hold() {  # hold UID N: N trace clients of UID (a member of the socket's group), in the background
  # pyenv's python3 is root's alone: the system one runs as another user.
  setpriv --reuid="$1" --regid="$GID" --groups="$GID" /usr/bin/python3 "$(unprivileged "$SRC/tests/integration/control_probe.py")" hold "$SOCK" "$2" "$WORK/hold/$1.json" &
  PIDS+=("$!")
  wait_for 30 test -e "$WORK/hold/$1.json" || fail "the clients of uid $1 did not all get an answer"
}
counts() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["accepted"], len(d["refused"]))' "$1"; }
hold 65534 64
read -r acc ref < <(counts "$WORK/hold/65534.json")
log "uid 65534: $acc of 64 trace clients accepted, $ref refused: $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["refused"][:1])' "$WORK/hold/65534.json")"
timeout 10 "$BUILD/fragctl" --socket "$SOCK" status >"$WORK/status-b.txt" 2>&1 ||
  { cat "$WORK/status-b.txt"; fail "root's fragctl status was refused with 64 trace clients of uid 65534"; }
[ "$acc" -eq 16 ] && [ "$ref" -eq 48 ] || fail "uid 65534: $acc accepted and $ref refused, want 16 and 48"
for u in 65533 65532 65531; do hold $u 16; done
read -r acc4 ref4 < <(counts "$WORK/hold/65531.json")
[ "$acc4" -eq 12 ] && [ "$ref4" -eq 4 ] || fail "the fourth user: $acc4 accepted and $ref4 refused, want 12 and 4 (60 slots open to users other than root)"
grep -q 'kept for root' "$WORK/hold/65531.json" || fail "the fourth user's refusals do not say the slots are kept for root"
timeout 10 "$BUILD/fragctl" --socket "$SOCK" status >"$WORK/status-c.txt" 2>&1 ||
  { cat "$WORK/status-c.txt"; fail "root's fragctl status was refused with 60 trace clients of other users"; }
sleep 2
scrape >"$WORK/slots.prom"
grep '^fragd_control_clients_refused_total' "$WORK/slots.prom" || true
[ "$(metric "$WORK/slots.prom" fragd_control_clients_refused_total 'reason="uid_limit"')" -eq 48 ] ||
  fail "uid_limit refusals are not 48"
[ "$(metric "$WORK/slots.prom" fragd_control_clients_refused_total 'reason="server_full"')" -eq 4 ] ||
  fail "server_full refusals are not 4"
log "slots: 16 per user, 60 for users other than root, root's status answered; refusals counted (48 uid_limit, 4 server_full)"
stop_fragd
log "PASS"
