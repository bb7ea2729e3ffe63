#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package: cpack builds it from the build dir; lintian finds no error or
# warning in it; dpkg installs it; every
# file is where the unit and a distribution expect it; the installed policy passes
# --check-config (as nobody) and a broken one fails the unit's reload check; the
# unit passes `systemd-analyze verify` and scores an exposure <= 2.3; the installed
# fragd serves metrics and fragctl talks to it; an upgrade keeps the operator's edit
# of the policy; `dpkg -r` keeps only the conffile
# and `dpkg --purge` leaves nothing. There is no systemd as PID 1 here, so fragd is
# started by hand, not through the unit.
source "$(dirname "$0")/lib.sh"
require_root

for tool in cpack dpkg dpkg-deb dpkg-query systemd-analyze setpriv curl; do
  command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed"
done
[ -f "$BUILD/CPackConfig.cmake" ] && [ -f "$BUILD/fragd.service" ] ||
  fail "$BUILD has no CPackConfig.cmake or fragd.service: configure it again (cmake -S $SRC -B $BUILD)"

# Paths as the build wrote them into the unit.
UNIT_SRC="$BUILD/fragd.service"
FRAGD_BIN=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$UNIT_SRC")
CONF=$(sed -n 's/^ExecStart=.* --config \([^ ]*\).*/\1/p' "$UNIT_SRC")
BIN_DIR=$(dirname "$FRAGD_BIN")
PREFIX=$(dirname "$BIN_DIR")
UNIT="$PREFIX/lib/systemd/system/fragd.service"
SHARE="$PREFIX/share/fragd"
[ -n "$FRAGD_BIN" ] && [ -n "$CONF" ] || fail "cannot read ExecStart and --config from $UNIT_SRC"
WANTS=/etc/systemd/system/multi-user.target.wants/fragd.service
DSH_STATE=/var/lib/systemd/deb-systemd-helper-enabled/fragd.service

# The test must leave the machine as it found it: it never touches a fragd that
# was there before.
status=$(dpkg-query -W -f='${Status}' fragd 2>/dev/null || true)
case "$status" in
  *installed* | *config-files* | *unpacked* | *half*)
    skip_or_fail "a fragd package is already on this machine ($status); remove it (dpkg --purge fragd) to run this test" ;;
esac
for f in "$FRAGD_BIN" "$BIN_DIR/fragctl" "$(dirname "$CONF")" "$UNIT" "$SHARE" "$WANTS"; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  skip_or_fail "$f exists outside any package; the package would overwrite it and its removal delete it"
done

log "building the .deb from $BUILD"
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log" >&2; fail "cpack -G DEB failed"; }
DEB=$(ls "$WORK"/pkg/fragd_*.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || { cat "$WORK/cpack.log" >&2; fail "cpack wrote no fragd_*.deb into $WORK/pkg"; }
log "built $(basename "$DEB") ($(stat -c %s "$DEB") bytes)"

# Control data: name, dependencies found by dpkg-shlibdeps, the conffile, the scripts.
[ "$(dpkg-deb -f "$DEB" Package)" = fragd ] || fail "package name is '$(dpkg-deb -f "$DEB" Package)', want fragd"
deps=$(dpkg-deb -f "$DEB" Depends)
log "Depends: $deps"
# yaml-cpp's soname is its minor version: libyaml-cpp0.7 on Debian 12, libyaml-cpp0.8 on Debian 13.
for lib in libbpf1 'libyaml-cpp0\.[0-9]' libprometheus-cpp libprotobuf 'libstdc++6'; do
  grep -q "$lib" <<<"$deps" || fail "Depends lacks $lib: $deps"
done
# fragctl opens libcairo for --png alone: recommended, not a dependency (the image leaves it out).
! grep -q libcairo <<<"$deps" || fail "Depends names libcairo (fragctl opens it at run time): $deps"
[ "$(dpkg-deb -f "$DEB" Recommends)" = libcairo2 ] || fail "Recommends is '$(dpkg-deb -f "$DEB" Recommends)', want libcairo2"
if grep -q 'libsystemd' "$BUILD/CMakeCache.txt" && grep -q '^Type=notify' "$UNIT_SRC"; then
  grep -q libsystemd0 <<<"$deps" || fail "the unit is Type=notify but Depends lacks libsystemd0: $deps"
fi
dpkg-deb -e "$DEB" "$WORK/control"
grep -qx "$CONF" "$WORK/control/conffiles" || fail "$CONF is not a conffile: $(cat "$WORK/control/conffiles")"
for s in postinst prerm postrm; do
  [ -x "$WORK/control/$s" ] || fail "the package has no executable $s"
  sh -n "$WORK/control/$s" || fail "$s is not valid sh"
done
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' >"$WORK/files"
[ -s "$WORK/files" ] || fail "the package holds no files"

# Debian's own checker: no error, no warning. lintian reads the .deb as an unprivileged user.
if command -v lintian >/dev/null; then
  install -d -m 0755 "$WORK/lintian" && install -m 0644 "$DEB" "$WORK/lintian/"
  chmod 0755 "$WORK"
  # Started in a folder user nobody may enter: lintian changes back to where it started, and a
  # checkout in a home or in /root is 0700 on a fresh Debian.
  setpriv --reuid=nobody --regid=nogroup --clear-groups env -C "$WORK/lintian" HOME=/tmp \
    lintian --fail-on error,warning --tag-display-limit 0 "$WORK/lintian/$(basename "$DEB")" >"$WORK/lintian.out" 2>&1 ||
    { cat "$WORK/lintian.out" >&2; fail "lintian found errors or warnings in $(basename "$DEB") (above)"; }
  log "lintian: no error, no warning$(grep -q . "$WORK/lintian.out" && echo ": $(tr '\n' ' ' <"$WORK/lintian.out")")"
else
  skip_or_fail "lintian is not installed (Debian package lintian; scripts/install-deps.sh installs it)"
fi

log "installing it"
on_exit "dpkg --purge fragd >/dev/null 2>&1"  # on any failure below
dpkg -i "$DEB" >"$WORK/dpkg-i.log" 2>&1 || { cat "$WORK/dpkg-i.log" >&2; fail "dpkg -i $(basename "$DEB") failed"; }
dpkg-query -W -f='${Status}' fragd | grep -q 'install ok installed' ||
  fail "fragd is not 'install ok installed' after dpkg -i: $(dpkg-query -W -f='${Status}' fragd)"

# Every file of the package is in place and owned by it.
while read -r f; do
  [ -e "$f" ] || fail "$f is in the package but not on disk"
  dpkg -S "$f" 2>/dev/null | grep -q '^fragd:' || fail "$f is not owned by the fragd package"
done <"$WORK/files"
for f in "$FRAGD_BIN" "$BIN_DIR/fragctl"; do [ -x "$f" ] || fail "$f is not executable"; done
[ -f "$CONF" ] || fail "the default policy is not at $CONF"
cmp -s "$CONF" "$SRC/configs/fragd.yaml" || fail "$CONF differs from configs/fragd.yaml"
[ -f "$UNIT" ] || fail "the unit is not at $UNIT"
grep -q "^ExecStart=$FRAGD_BIN --config $CONF --path.kallsyms /run/fragd/kallsyms\$" "$UNIT" || fail "$UNIT does not start $FRAGD_BIN --config $CONF --path.kallsyms /run/fragd/kallsyms"
dpkg-query -W -f='${Conffiles}\n' fragd | grep -q " $CONF " || fail "dpkg does not list $CONF as a conffile"
# Observe mode's sandbox writes no kernel file; act mode's paths come from the drop-in the package
# ships (and its unit comment names), not from the unit.
! grep -q '^ReadWritePaths=' "$UNIT" || fail "$UNIT opens $(grep '^ReadWritePaths=' "$UNIT" | head -1) by default: act mode's paths belong in the drop-in"
grep -q "^ReadWritePaths=/sys/devices/system/node /sys/kernel/mm/hugepages\$" "$SHARE/systemd/act.conf" ||
  fail "$SHARE/systemd/act.conf (act mode's drop-in) is missing or does not open the node and hugepage trees"
grep -q '^ReadOnlyPaths=$' "$SHARE/systemd/act.conf" ||
  fail "$SHARE/systemd/act.conf does not empty the unit's ReadOnlyPaths= (which would win over its ReadWritePaths=)"
grep -q "install -D -m 644 $SHARE/systemd/act.conf /etc/systemd/system/fragd.service.d/act.conf" "$UNIT" ||
  fail "$UNIT does not say how to install $SHARE/systemd/act.conf"
for pair in "dashboards:*.json:dashboards" "configs/prometheus:fragd-rules.yml:prometheus" "configs/kubernetes:*.yaml:kubernetes" \
  "configs/kubernetes/base:*.yaml:kubernetes/base" "configs/kubernetes/act:*.yaml:kubernetes/act"; do
  IFS=: read -r dir pat dest <<<"$pair"
  for f in "$SRC"/$dir/$pat; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$SHARE/$dest/$(basename "$f")" || fail "$dir/$(basename "$f") is not installed as $SHARE/$dest/$(basename "$f")"
  done
done
[ -f "$PREFIX/share/doc/fragd/README.md" ] || fail "README.md is not in $PREFIX/share/doc/fragd"
# docs/ beside the README, as in the source tree: the README's links and the alerts' runbook_url
# (docs/runbooks.md#runbook-<alert>) lead there.
for f in "$SRC"/docs/*.md; do
  [ -f "$PREFIX/share/doc/fragd/docs/$(basename "$f")" ] || fail "docs/$(basename "$f") is not in $PREFIX/share/doc/fragd/docs"
done
# No test file: a rule_files glob over the rules directory would load the promtool test as rules.
! grep -q 'test' <(ls "$SHARE/prometheus") || fail "a test file is installed with the rules: $(ls "$SHARE/prometheus")"
[ -f "$PREFIX/share/doc/fragd/copyright" ] || fail "no copyright file in $PREFIX/share/doc/fragd"
log "$(wc -l <"$WORK/files") files in place; policy at $CONF, unit at $UNIT"

# Enabled for the next boot (deb-systemd-helper works without a running systemd).
if [ -x /usr/bin/deb-systemd-helper ]; then
  [ -L "$WANTS" ] || fail "postinst did not enable fragd.service ($WANTS is missing)"
fi

# The policy check: unprivileged, on the installed file; and the unit's reload
# check refuses a broken policy, so `systemctl reload` reports it and fragd keeps its policy.
setpriv --reuid=nobody --regid=nogroup --clear-groups "$FRAGD_BIN" --check-config "$CONF" >"$WORK/check.out" 2>&1 ||
  { cat "$WORK/check.out" >&2; fail "fragd --check-config $CONF failed (as nobody)"; }
log "$(cat "$WORK/check.out")"
reload_check=$(sed -n 's/^ExecReload=\(.* --check-config\) .*/\1/p' "$UNIT" | head -1)
[ -n "$reload_check" ] || fail "$UNIT has no ExecReload=... --check-config line before the SIGHUP"
sed 's/^mode: observe/mode: sometimes/' "$CONF" >"$WORK/broken.yaml"
if $reload_check "$WORK/broken.yaml" >"$WORK/broken.out" 2>&1; then
  fail "the unit's reload check accepted a broken policy (mode: sometimes)"
fi
grep -q 'mode' "$WORK/broken.out" || fail "the reload check's message does not name the bad key: $(cat "$WORK/broken.out")"
log "broken policy refused: $(head -1 "$WORK/broken.out")"

# The unit as systemd reads it, and its exposure score (offline: no systemd here).
systemd-analyze verify "$UNIT" >"$WORK/verify.out" 2>&1 ||
  { cat "$WORK/verify.out" >&2; fail "systemd-analyze verify $UNIT failed"; }
[ ! -s "$WORK/verify.out" ] || { cat "$WORK/verify.out" >&2; fail "systemd-analyze verify $UNIT printed warnings"; }
systemd-analyze security --offline=true "$UNIT" >"$WORK/security.out" 2>&1 || true
exposure=$(sed -n 's/.*Overall exposure level for fragd.service: \([0-9.]*\).*/\1/p' "$WORK/security.out")
[ -n "$exposure" ] || { cat "$WORK/security.out" >&2; fail "systemd-analyze security printed no exposure level"; }
python3 -c "import sys; sys.exit(0 if float('$exposure') <= 2.3 else 1)" ||
  { grep '✗' "$WORK/security.out" >&2; fail "exposure $exposure > 2.3 (the unit scored 2.3 before the service guests: keep it at or below)"; }
log "systemd-analyze verify: clean; security --offline=true: exposure $exposure"

# The installed daemon, started by hand on a free port and a private socket.
PORT=$(free_port)
SOCK="$WORK/fragd.sock"
"$FRAGD_BIN" --config "$CONF" --listen "127.0.0.1:$PORT" --socket "$SOCK" >"$WORK/fragd.log" 2>&1 &
FRAGD_PID=$!
PIDS+=("$FRAGD_PID")
FRAGD_LOG="$WORK/fragd.log"
has_programs() { scrape >"$WORK/m.prom" 2>/dev/null && grep -q '^fragd_bpf_program_attached' "$WORK/m.prom"; }
wait_for 30 has_programs || { cat "$FRAGD_LOG" >&2; fail "the installed fragd did not serve metrics within 30 s"; }
total=$(grep -c '^fragd_bpf_program_attached' "$WORK/m.prom")
attached=$(metric "$WORK/m.prom" fragd_bpf_program_attached)
# The shipped config attaches the allocation counter only from a stall on (bpf.allocations: adaptive).
if [ "$(metric "$WORK/m.prom" fragd_alloc_counting 'mode="adaptive"')" = 0 ]; then
  [ "$(metric "$WORK/m.prom" fragd_bpf_program_attached 'program="page_alloc_btf"')" = 0 ] ||
    fail "allocation counting is off but page_alloc_btf is attached"
  total=$((total - 1))
fi
[ "$attached" -eq "$total" ] || fail "the installed fragd attached $attached of $total programs"
"$BIN_DIR/fragctl" --socket "$SOCK" status --json >"$WORK/status.json" ||
  fail "the installed fragctl could not query the installed fragd"
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("nodes") else 1)' "$WORK/status.json" ||
  fail "fragctl status --json has no nodes: $(head -c 300 "$WORK/status.json")"
stop_fragd
log "installed fragd: $attached/$total programs attached, $(grep -c '^fragd_' "$WORK/m.prom") samples scraped, stopped cleanly"

# An upgrade keeps the operator's edit of the policy: the same package at a later version,
# over the installed one whose conffile was changed.
echo "# edited by the operator" >>"$CONF"
UPGRADE="$(dpkg-query -W -f='${Version}' fragd)+upgrade"
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg2" -D CPACK_PACKAGE_VERSION="$UPGRADE" \
  >"$WORK/cpack2.log" 2>&1 || { cat "$WORK/cpack2.log" >&2; fail "cpack of the upgrade package failed"; }
DEB2=$(ls "$WORK"/pkg2/fragd_*.deb | head -1)
dpkg -i "$DEB2" >"$WORK/dpkg-up.log" 2>&1 </dev/null || { cat "$WORK/dpkg-up.log" >&2; fail "the upgrade to $(basename "$DEB2") failed"; }
[ "$(dpkg-query -W -f='${Version}' fragd)" = "$UPGRADE" ] || fail "after the upgrade fragd is $(dpkg-query -W -f='${Version}' fragd)"
tail -1 "$CONF" | grep -qx '# edited by the operator' || fail "the upgrade lost the operator's edit of $CONF"
! ls "$CONF".dpkg-* >/dev/null 2>&1 || fail "the upgrade left $(ls "$CONF".dpkg-*)"
"$FRAGD_BIN" --check-config "$CONF" >/dev/null 2>&1 || fail "the edited policy does not pass --check-config after the upgrade"
log "upgrade to $UPGRADE kept the edited $CONF"

# Removal keeps only the conffile; purge leaves nothing.
dpkg -r fragd >"$WORK/dpkg-r.log" 2>&1 || { cat "$WORK/dpkg-r.log" >&2; fail "dpkg -r fragd failed"; }
while read -r f; do
  [ "$f" = "$CONF" ] && continue
  [ ! -e "$f" ] || fail "$f is still there after dpkg -r"
done <"$WORK/files"
[ -f "$CONF" ] || fail "dpkg -r removed the conffile $CONF (only a purge should)"
dpkg-query -W -f='${Status}' fragd | grep -q 'config-files' ||
  fail "fragd is '$(dpkg-query -W -f='${Status}' fragd)' after dpkg -r, want config-files"
dpkg --purge fragd >"$WORK/dpkg-purge.log" 2>&1 || { cat "$WORK/dpkg-purge.log" >&2; fail "dpkg --purge fragd failed"; }
for f in "$CONF" "$(dirname "$CONF")" "$SHARE" "$PREFIX/share/doc/fragd" "$WANTS" "$DSH_STATE" /run/fragd; do
  [ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f is still there after dpkg --purge"
done
if dpkg-query -W -f='${Status}' fragd 2>/dev/null | grep -q 'installed\|config-files'; then
  fail "dpkg still knows fragd after the purge: $(dpkg-query -W -f='${Status}' fragd)"
fi
log "dpkg -r kept only $CONF; dpkg --purge left nothing"
log "PASS"
