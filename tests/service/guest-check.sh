#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The service suite: runs inside a Debian system booted with systemd as PID 1 (as
# fragd-check.service, after fragd.service), with the fragd package installed by apt at
# the previous release (tests/service/previous-release) and the package under test in /root/new/.
# It drives fragd only as an operator would: apt, systemctl, journalctl, fragctl, curl.
# One line per fact or check on the serial console; tests/service/run.sh reads them:
#
#   FRAGD-SYSTEM <codename> <uname -r> <systemd version>
#   FRAGD-CHECK <name> ok|FAIL <detail>
#   FRAGD-METRICS <base64 of one /metrics body, gzip'd, in lines>   (promtool runs on the host)
#   FRAGD-LOG <line of the journal, after a failed check>
#   FRAGD-RESULT pass|fail
#   FRAGD-END
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
FAILED=0
URL=http://127.0.0.1:9717
CONF=/etc/fragd/fragd.yaml
PRO=/proc/sys/vm/compaction_proactiveness
STATE=/run/fragd/saved-state
# metric, vmstat, free_blocks9, proactiveness_policy: tests/tools/suite_lib.sh, which customize.sh installs here.
. /usr/local/lib/fragd-check/suite_lib.sh
check() { # NAME OK(0|1) DETAIL
	if [ "$2" = 0 ]; then echo "FRAGD-CHECK $1 ok $3"; else
		echo "FRAGD-CHECK $1 FAIL $3"
		FAILED=1
		journalctl -u fragd -n 25 -o cat --no-pager 2>/dev/null | cut -c1-300 | sed 's/^/FRAGD-LOG /'
	fi
}
finish() {
	echo "FRAGD-RESULT $([ $FAILED = 0 ] && echo pass || echo fail)"
	echo "FRAGD-END"
	sync
	systemctl poweroff -f
	exit 0
}
prop() { systemctl show -P "$1" fragd; }
# wait_for SECONDS COMMAND...: polls every 0.5 s.
wait_for() {
	local n=$(($1 * 2)); shift
	while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.5; n=$((n - 1)); done
	return 1
}
settled() { local s; s=$(prop ActiveState); [ "$s" = active ] || [ "$s" = failed ] || [ "$s" = inactive ]; }
scrape() { curl -sf --max-time 20 "$URL/metrics"; }
pool0() { cat /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages; }
# fragd's journal since a cursor, errors and warnings only (fragd writes sd-daemon priorities).
warnings_since() { journalctl -u fragd -p warning -o cat --no-pager --after-cursor="$1" 2>/dev/null; }
cursor() { journalctl -n 0 --show-cursor -o cat --no-pager 2>/dev/null | sed -n 's/^-- cursor: //p'; }

. /etc/os-release
echo "FRAGD-SYSTEM ${VERSION_CODENAME:-?} $(uname -r) $(systemctl --version | awk 'NR == 1 { print $2 }')"
PRO_BEFORE=$(cat $PRO)

# 1. Enabled by the package, started at boot: active through READY=1, never restarted.
wait_for 300 settled
check boot_active "$([ "$(prop ActiveState)" = active ] && [ "$(prop SubState)" = running ] && [ "$(prop NRestarts)" = 0 ] &&
	[ "$(systemctl is-enabled fragd)" = enabled ]; echo $?)" \
	"$(dpkg-query -W -f='${Version}' fragd): $(prop ActiveState)/$(prop SubState), NRestarts=$(prop NRestarts), Result=$(prop Result), enabled: $(systemctl is-enabled fragd)"

# 2. Upgrade to the package under test with apt as a fleet upgrades, without a terminal
# (unattended-upgrades, configuration management: --force-confdef --force-confold). The
# operator's edit of the policy is kept; where the package ships a policy changed since the
# previous release, dpkg puts it beside as fragd.yaml.dpkg-dist (without those options dpkg
# would stop at its conffile question and the upgrade fail); the package restarts the service.
echo '# edited by the operator' >>"$CONF"
NEW=$(ls /root/new/fragd_*.deb)
NEW_VERSION=$(dpkg-deb -f "$NEW" Version)
OLD_VERSION=$(dpkg-query -W -f='${Version}' fragd)  # the previous release, booted with
# The shipped policy of each: dpkg's record of the installed package's, and the new package's.
old_md5=$(dpkg-query -W -f='${Conffiles}\n' fragd | awk -v c="$CONF" '$1 == c { print $2 }')
new_md5=$(dpkg-deb --fsys-tarfile "$NEW" | tar -xOf - ".$CONF" | md5sum | cut -d' ' -f1)
want_dist=none
[ "$old_md5" = "$new_md5" ] || want_dist="$CONF.dpkg-dist"
pid0=$(prop MainPID)
DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Options::=--force-confdef \
	-o Dpkg::Options::=--force-confold "$NEW" >/tmp/upgrade.log 2>&1
rc=$?
wait_for 120 settled
dist=$(ls "$CONF".dpkg-* 2>/dev/null | tr '\n' ' ' | sed 's/ $//')
dist_ok=1
if [ "$want_dist" = none ]; then [ -z "$dist" ] && dist_ok=0
elif [ "$dist" = "$want_dist" ] && [ "$(md5sum <"$want_dist" | cut -d' ' -f1)" = "$new_md5" ]; then dist_ok=0; fi
check upgrade "$([ $rc = 0 ] && dpkg --compare-versions "$OLD_VERSION" lt "$NEW_VERSION" && [ "$(dpkg-query -W -f='${Version}' fragd)" = "$NEW_VERSION" ] && tail -1 "$CONF" | grep -qx '# edited by the operator' &&
	[ $dist_ok = 0 ] && [ "$(prop ActiveState)" = active ] && [ "$(prop MainPID)" != "$pid0" ]; echo $?)" \
	"apt-get install exit $rc, fragd $OLD_VERSION -> $(dpkg-query -W -f='${Version}' fragd) (want $NEW_VERSION), edit kept: $(tail -1 "$CONF" | grep -cx '# edited by the operator'), beside it: ${dist:-nothing} (want $want_dist: the shipped policy $([ "$want_dist" = none ] && echo unchanged || echo changed)), $(prop ActiveState), MainPID $pid0 -> $(prop MainPID)"
[ $rc = 0 ] || sed 's/^/FRAGD-LOG /' /tmp/upgrade.log | tail -20
# The operator takes what the new policy says into theirs and removes the copy (remove and purge
# below check what the package leaves).
rm -f "$CONF".dpkg-dist

# 3. systemctl start returns once fragd sent READY=1 (Type=notify); nothing restarted it.
CLEAN=$(cursor)
systemctl stop fragd
systemctl start fragd
rc=$?
check start "$([ $rc = 0 ] && [ "$(prop Type)" = notify ] && [ "$(prop ActiveState)" = active ] && [ "$(prop NRestarts)" = 0 ]; echo $?)" \
	"systemctl start exit $rc, Type=$(prop Type), $(prop ActiveState)/$(prop SubState), NRestarts=$(prop NRestarts), StatusText=$(prop StatusText)"
# READY=1 comes only once the programs are attached: the moment systemctl start returns, fragd's
# BPF links are open (the kernel's record: a "link_type:" line in the fdinfo of each).
links=$(grep -l '^link_type:' /proc/"$(prop MainPID)"/fdinfo/* 2>/dev/null | wc -l)
check ready_after_attach "$([ "$links" -gt 0 ]; echo $?)" "$links BPF links open in fragd when systemctl start returned"
# Every capability dropped after attaching, as the kernel says (/proc/PID/status), not fragd's log.
capst=$(awk '$1 ~ /^Cap(Inh|Prm|Eff|Amb):$/ { printf "%s%s %s", (n++ ? ", " : ""), $1, $2 }' /proc/"$(prop MainPID)"/status)
caps=$(journalctl -u fragd -o cat --no-pager --after-cursor="$CLEAN" | grep -m1 'capabilities after attaching' | cut -c1-120)
check capabilities "$(awk '$1 ~ /^Cap(Inh|Prm|Eff|Amb):$/ && $2 !~ /^0+$/ { bad = 1 } END { exit bad }' /proc/"$(prop MainPID)"/status; echo $?)" \
	"/proc/$(prop MainPID)/status: ${capst:-unread}; fragd's log: ${caps:-no 'capabilities after attaching' line}"
# In observe mode (the shipped policy) fragd writes no kernel file, and its sandbox lets it write
# none of those act mode writes: in its mount namespace each is on a read-only mount.
ACT_PATHS="/proc/sys/vm/compact_memory /proc/sys/vm/compaction_proactiveness /proc/sys/vm/drop_caches /proc/sys/vm/defrag_mode /proc/sys/vm/stat_refresh /sys/devices/system/node /sys/kernel/mm/hugepages"
writable_in_fragd() { nsenter -t "$(prop MainPID)" -m -- sh -c 'for p; do [ -e "$p" ] && [ -w "$p" ] && echo "$p"; done; true' sh $ACT_PATHS; }
w=$(writable_in_fragd 2>&1)
check observe_read_only "$([ -z "$w" ] && [ "$(prop MainPID)" != 0 ]; echo $?)" "writable in fragd's namespace: ${w:-none} (of $ACT_PATHS)"

# 4. The watchdog is fed: its timestamp moves on while fragd runs.
w1=$(prop WatchdogTimestampMonotonic)
sleep 20
w2=$(prop WatchdogTimestampMonotonic)
check watchdog "$([ "$(prop WatchdogUSec)" != 0 ] && [ "${w1:-0}" -gt 0 ] && [ "${w2:-0}" -gt "${w1:-0}" ]; echo $?)" \
	"WatchdogUSec=$(prop WatchdogUSec), last ping at ${w1}us then ${w2}us (monotonic)"

# 5. The HTTP endpoints; the metrics go to the host for promtool.
h=$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz"); r=$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")
check http "$([ "$h" = 200 ] && [ "$r" = 200 ]; echo $?)" "/healthz $h, /readyz $r ($(curl -s "$URL/readyz" | head -c 100))"
scrape >/tmp/m.prom
check metrics "$(grep -q '^fragd_node_fragmentation_score_percent' /tmp/m.prom; echo $?)" \
	"$(grep -c '^fragd_' /tmp/m.prom) fragd series; programs attached: $(metric /tmp/m.prom fragd_bpf_program_attached '')"
gzip -9c /tmp/m.prom | base64 -w 76 | sed 's/^/FRAGD-METRICS /'

# 5b. The VM's balloon with free page reporting (tests/service/run.sh gives the guest
# virtio-balloon-pci,free-page-reporting=on), loaded as a VM's udev would load it: fragd looks
# for it every 10 s and exports the order the kernel reports from.
modprobe virtio_balloon; mrc=$?
bal=""
for d in /sys/bus/virtio/devices/*; do [ "$(cat "$d/device" 2>/dev/null)" = 0x0005 ] && bal=$d; done
bit5=$(cut -c6 "$bal/features" 2>/dev/null)
want=$(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null)
got=""
for _ in $(seq 30); do
	scrape >/tmp/r.prom
	got=$(awk '$1 == "fragd_free_page_reporting_order{driver=\"virtio_balloon\"}" { print $2 }' /tmp/r.prom)
	[ -n "$got" ] && break
	sleep 1
done
check page_reporting "$([ $mrc = 0 ] && [ "$bit5" = 1 ] && [ -n "$want" ] && [ "$got" = "$want" ]; echo $?)" \
	"modprobe virtio_balloon exit $mrc, ${bal##*/} features bit 5 '$bit5', page_reporting_order '$want', fragd_free_page_reporting_order '${got:-absent}'"

# 6. fragctl: root is served, an unprivileged user is refused by the socket's mode.
fragctl status >/tmp/status.txt 2>&1; rs=$?
fragctl hist --order 9 >/tmp/hist.txt 2>&1; rh=$?
check fragctl_root "$([ $rs = 0 ] && grep -q '^node 0: score' /tmp/status.txt && [ $rh = 0 ] && grep -q '^order 9' /tmp/hist.txt; echo $?)" \
	"status exit $rs: $(head -1 /tmp/status.txt | cut -c1-80); hist exit $rh: $(grep -m1 '^order 9' /tmp/hist.txt | cut -c1-60)"
runuser -u nobody -- fragctl status >/tmp/nobody.txt 2>&1; rn=$?
check fragctl_unprivileged "$([ $rn != 0 ] && grep -qi 'permission denied' /tmp/nobody.txt; echo $?)" \
	"as nobody: exit $rn, $(head -1 /tmp/nobody.txt | cut -c1-160)"

# 7. A stall provoked in the guest is attributed to a named kernel call site: /proc/kallsyms
# is readable under the unit. Fragment memory, then grow the pool past the free 2 MiB blocks.
echo 0 >$PRO
mkfifo /tmp/hold
/usr/local/bin/fragmenter --percent 90 </tmp/hold >/tmp/frag.out 2>&1 &
FRAG_PID=$!
exec 9>/tmp/hold
wait_for 300 grep -q '^ready' /tmp/frag.out
check fragment "$(grep -q '^ready' /tmp/frag.out; echo $?)" "$(head -1 /tmp/frag.out)"
s0=$(vmstat compact_stall)
try=0
while [ $try -lt 3 ]; do
	echo $(($(cat /proc/sys/vm/nr_hugepages) + $(free_blocks9) + 4)) >/proc/sys/vm/nr_hugepages
	[ $(($(vmstat compact_stall) - s0)) -gt 0 ] && break
	try=$((try + 1))
done
stalls=$(($(vmstat compact_stall) - s0))
sleep 3
scrape >/tmp/after.prom
echo 0 >/proc/sys/vm/nr_hugepages
sites=$(awk '/^fragd_stall_callsite_seconds_total\{/ && $2 > 0 { match($1, /callsite="[^"]*"/); print substr($1, RSTART + 10, RLENGTH - 11) }' /tmp/after.prom | sort -u)
named=$(grep -v '^unknown$' <<<"$sites" | grep -c .)
check callsite "$([ "$stalls" -gt 0 ] && [ "$named" -gt 0 ]; echo $?)" \
	"compact_stall +$stalls; call sites with stall time: $(tr '\n' ' ' <<<"$sites" | cut -c1-200)"
exec 9>&-
wait "$FRAG_PID"
echo "$PRO_BEFORE" >$PRO

# 8. The journal of this clean run: no warning or error from fragd.
w=$(warnings_since "$CLEAN")
check journal_clean "$([ -z "$w" ]; echo $?)" "$(if [ -z "$w" ]; then echo "no warning or error since the start"; else head -3 <<<"$w" | cut -c1-200 | tr '\n' '|'; fi)"

# 9. Reload: a changed policy applies in the same process; a broken one is refused by
# ExecReload's check, named in the journal, and the old policy keeps running.
cp "$CONF" /tmp/fragd.yaml.orig
m0=$(grep -m1 -E '^  method: ' "$CONF" | awk '{ print $2 }')
m1=node; [ "$m0" = node ] && m1=pool
pid=$(prop MainPID)
sed -i "s/^  method: $m0\$/  method: $m1/" "$CONF"
systemctl reload fragd; rc=$?
policy_is() { scrape >/tmp/p.prom && [ "$(metric /tmp/p.prom fragd_policy_info "method=\"$1\"")" = 1 ]; }
wait_for 20 policy_is $m1
check reload "$([ $rc = 0 ] && [ "$(prop MainPID)" = "$pid" ] && [ "$(prop ActiveState)" = active ] && policy_is $m1; echo $?)" \
	"method $m0 -> $m1: systemctl reload exit $rc, MainPID $pid -> $(prop MainPID), $(grep '^fragd_policy_info' /tmp/p.prom | cut -c1-120)"
c=$(cursor)
sed -i 's/^mode: observe$/mode: sometimes/' "$CONF"
systemctl reload fragd; rc=$?
sleep 2
err=$(journalctl -u fragd -o cat --no-pager --after-cursor="$c" | grep -m1 "$CONF" | cut -c1-200)
check reload_broken "$([ $rc != 0 ] && [ "$(prop MainPID)" = "$pid" ] && [ "$(prop ActiveState)" = active ] && policy_is $m1 && [ -n "$err" ]; echo $?)" \
	"mode: sometimes: systemctl reload exit $rc, MainPID $(prop MainPID), still method $m1: $(grep -c "method=\"$m1\"" /tmp/p.prom), journal: ${err:-nothing naming $CONF}"
cp /tmp/fragd.yaml.orig "$CONF"
systemctl reload fragd

# 10. Act mode under the unit, from a drop-in: fragd compacts and changes a pool through the
# unit's writable paths; a stop, a SIGKILL and a failed start each leave the settings as they
# were (the kernel's, or what fragd itself put back), ExecStopPost's `fragd --restore` included.
ACT=/etc/fragd/act.yaml
# An act policy whose compaction holds vm.compaction_proactiveness at 1 while node 0's score is
# above 30 (the rest is the shipped defaults).
proactiveness_policy 30 10 1 'hugepages: {guard: 64MiB}' >$ACT
fragd --check-config $ACT >/tmp/act-check.txt 2>&1
check act_policy "$?" "$(head -1 /tmp/act-check.txt | cut -c1-160)"
mkdir -p /etc/systemd/system/fragd.service.d
cat >/etc/systemd/system/fragd.service.d/policy.conf <<EOF
[Service]
ExecStart=
ExecStart=/usr/bin/fragd --config $ACT --path.kallsyms /run/fragd/kallsyms
ExecReload=
ExecReload=/usr/bin/fragd --check-config $ACT
ExecReload=/bin/sh -c 'kill -HUP "\$\$MAINPID"'
EOF
# First without the act drop-in: fragd runs, and says at start which paths are read-only and
# which drop-in makes them writable.
systemctl daemon-reload
c=$(cursor)
systemctl restart fragd; rc=$?
ro=$(journalctl -u fragd -o cat --no-pager --after-cursor="$c" | grep -m1 'read-only for fragd' | cut -c1-400)
check act_read_only_said "$([ $rc = 0 ] && grep -q /proc/sys/vm/compaction_proactiveness <<<"$ro" && grep -q /usr/share/fragd/systemd/act.conf <<<"$ro"; echo $?)" \
	"systemctl restart exit $rc; journal: ${ro:-no line naming the read-only paths}"
# Then with the drop-in the package ships, installed as its comment says.
install -D -m 644 /usr/share/fragd/systemd/act.conf /etc/systemd/system/fragd.service.d/act.conf
systemctl daemon-reload
c=$(cursor)
systemctl restart fragd; rc=$?
w=$(writable_in_fragd 2>&1)
ro=$(journalctl -u fragd -o cat --no-pager --after-cursor="$c" | grep -m1 'read-only for fragd' | cut -c1-200)
check act_start "$([ $rc = 0 ] && [ "$(prop ActiveState)" = active ] && [ -z "$ro" ] && grep -q /sys/kernel/mm/hugepages <<<"$w"; echo $?)" \
	"systemctl restart exit $rc, $(prop ActiveState), ExecStart $(prop ExecStart | grep -o 'argv\[\]=[^;]*' | cut -c1-80); writable in fragd's namespace: $(echo $w); ${ro:-no read-only line}"
scrape >/tmp/c0.prom
fragctl compact --node 0 --timeout 300 >/tmp/compact.txt 2>&1; rc=$?
sleep 2
scrape >/tmp/c1.prom
runs=$(($(metric /tmp/c1.prom fragd_compaction_runs_total 'trigger="fragd"') - $(metric /tmp/c0.prom fragd_compaction_runs_total 'trigger="fragd"')))
check act_compact "$([ $rc = 0 ] && [ "$runs" -gt 0 ]; echo $?)" "fragctl compact exit $rc, $runs zone compaction runs by fragd: $(tr '\n' '|' </tmp/compact.txt | cut -c1-160)"
fragctl pool set 2MB 8 --node 0 --timeout 300 >/tmp/pool.txt 2>&1; rc=$?
got=$(pool0)
fragctl pool set 2MB 0 --node 0 --timeout 300 >/dev/null 2>&1
check act_pool "$([ $rc = 0 ] && [ "$got" = 8 ] && [ "$(pool0)" = 0 ]; echo $?)" "fragctl pool set exit $rc: node 0 pool $got (want 8), then $(pool0): $(tr '\n' '|' </tmp/pool.txt | cut -c1-120)"

# Fragment again so that node 0's score passes high and fragd raises proactiveness to 1.
mkfifo /tmp/hold2
/usr/local/bin/fragmenter --percent 90 </tmp/hold2 >/tmp/frag2.out 2>&1 &
FRAG_PID=$!
exec 9>/tmp/hold2
wait_for 300 grep -q '^ready' /tmp/frag2.out
changed() { [ "$(cat $PRO)" = 1 ] && grep -Eq "^/proc/sys/vm/compaction_proactiveness $PRO_BEFORE root=/proc wrote=[0-9]+\$" $STATE 2>/dev/null; }
restored() { [ "$(cat $PRO)" = "$PRO_BEFORE" ] && [ ! -s $STATE ]; }
# a. systemctl stop: fragd puts it back itself.
wait_for 120 changed; held=$?
systemctl stop fragd
check act_stop "$([ $held = 0 ] && restored; echo $?)" \
	"held at 1 with $PRO_BEFORE saved: $([ $held = 0 ] && echo yes || echo no); after systemctl stop: proactiveness $(cat $PRO) (want $PRO_BEFORE), saved-state $([ -s $STATE ] && echo present || echo gone)"
# b. SIGKILL of the main process: ExecStopPost's fragd --restore puts it back; Restart= starts fragd again.
systemctl start fragd
wait_for 120 changed; held=$?
c=$(cursor)
kill -KILL "$(prop MainPID)"
wait_for 60 restored
ok=$?
# Put back by ExecStopPost, not by the fragd Restart= starts 5 s later (which would put it back
# at its start too): no restart yet when it was back.
restarts_then=$(prop NRestarts)
post=$(journalctl -u fragd -o cat --no-pager --after-cursor="$c" | grep -m1 -i 'restor' | cut -c1-160)
check act_sigkill "$([ $held = 0 ] && [ $ok = 0 ] && [ "$restarts_then" = 0 ] && [ -n "$post" ]; echo $?)" \
	"held: $([ $held = 0 ] && echo yes || echo no); after SIGKILL: proactiveness $(cat $PRO) (want $PRO_BEFORE), saved-state $([ -s $STATE ] && echo present || echo gone), NRestarts $restarts_then when it was back; ExecStopPost: ${post:-no restore line}"
is_active() { [ "$(prop ActiveState)" = active ]; }
wait_for 60 is_active
check act_restarted "$([ "$(prop ActiveState)" = active ] && [ "$(prop NRestarts)" = 1 ]; echo $?)" "after the SIGKILL: $(prop ActiveState), NRestarts=$(prop NRestarts)"
# b2. A hung fragd (SIGSTOP: it stops pinging the watchdog, and a stopped process does not die of
# SIGABRT): systemd's watchdog aborts it, kills it TimeoutAbortSec later, ExecStopPost puts the
# value back, and Restart= starts fragd again.
wait_for 120 changed; held=$?
c=$(cursor)
hung=$(prop MainPID)
kill -STOP "$hung"
wait_for 150 restored
ok=$?
restarts_then=$(prop NRestarts) pro_then=$(cat $PRO)
wait_for 60 is_active
wd=$(journalctl -u fragd -o cat --no-pager --after-cursor="$c" | grep -m1 -i 'watchdog timeout' | cut -c1-120)
check act_watchdog "$([ $held = 0 ] && [ $ok = 0 ] && [ "$restarts_then" = 1 ] && [ -n "$wd" ] && is_active &&
	[ "$(prop NRestarts)" = 2 ] && [ "$(prop MainPID)" != "$hung" ]; echo $?)" \
	"held: $([ $held = 0 ] && echo yes || echo no); fragd $hung stopped: ${wd:-no watchdog timeout logged}; proactiveness $pro_then (want $PRO_BEFORE) with NRestarts $restarts_then; then $(prop ActiveState), NRestarts=$(prop NRestarts), MainPID $(prop MainPID)"
# c. Failed starts (the act policy broken while the saved value is held, then fragd killed):
# Restart= and systemctl restart both fail at the policy check, ExecStopPost runs after each,
# and the value stays as it was before fragd changed it.
wait_for 120 changed; held=$?
sed -i 's/^mode: act$/mode: sometimes/' $ACT
kill -KILL "$(prop MainPID)"
wait_for 30 restored
systemctl restart fragd; rc=$?
sleep 1
check act_failed_start "$([ $held = 0 ] && [ $rc != 0 ] && restored; echo $?)" \
	"held: $([ $held = 0 ] && echo yes || echo no); systemctl restart with a broken policy exit $rc, $(prop ActiveState)/$(prop Result); proactiveness $(cat $PRO) (want $PRO_BEFORE), saved-state $([ -s $STATE ] && echo present || echo gone)"
systemctl stop fragd
systemctl reset-failed fragd 2>/dev/null
exec 9>&-
wait "$FRAG_PID"
rm -rf /etc/systemd/system/fragd.service.d $ACT
systemctl daemon-reload

# 11. Remove, then purge: nothing of fragd is left.
dpkg-query -L fragd | while read -r f; do [ -d "$f" ] || echo "$f"; done >/tmp/files
apt-get remove -y -q fragd >/tmp/remove.log 2>&1; rc=$?
left=$(while read -r f; do [ -e "$f" ] && [ "$f" != "$CONF" ] && echo "$f"; done </tmp/files)
check remove "$([ $rc = 0 ] && [ -z "$left" ] && [ -f "$CONF" ] && ! systemctl is-active -q fragd; echo $?)" \
	"apt-get remove exit $rc; left besides the conffile: ${left:-nothing}; $CONF $([ -f $CONF ] && echo kept || echo gone); unit $(systemctl is-active fragd)"
apt-get purge -y -q fragd >/tmp/purge.log 2>&1; rc=$?
systemctl daemon-reload
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done </tmp/files)
for p in /etc/fragd /run/fragd /etc/systemd/system/multi-user.target.wants/fragd.service /var/lib/systemd/deb-systemd-helper-enabled/fragd.service; do
	[ -e "$p" ] && left="$left $p"
done
getent passwd fragd >/dev/null && left="$left user:fragd"
getent group fragd >/dev/null && left="$left group:fragd"
unit=$(systemctl list-unit-files fragd.service --no-legend 2>/dev/null | wc -l)
check purge "$([ $rc = 0 ] && [ -z "$left" ] && [ "$unit" = 0 ] && ! dpkg-query -W fragd >/dev/null 2>&1; echo $?)" \
	"apt-get purge exit $rc; left: ${left:-nothing}; unit files named fragd.service: $unit"

finish
