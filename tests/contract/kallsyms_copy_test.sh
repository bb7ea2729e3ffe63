#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The copy of the kernel's addresses the unit hands fragd (--path.kallsyms) is deleted on every
# exit path, not only after the programs load: here starts that end early (a config that does
# not load, a --path.procfs that is no directory, a bad --listen). Needs no root.
#   bash tests/contract/kallsyms_copy_test.sh FRAGD_BINARY
set -euo pipefail
FRAGD=${1:?usage: kallsyms_copy_test.sh FRAGD_BINARY}
WORK=$(mktemp -d /tmp/fragd-kallsyms.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
printf 'mode: observe\nno_such_key: 1\n' >"$WORK/bad.yaml"
fails=0
check() {
	local what=$1
	shift
	printf 'ffffffff81000000 T _stext\n' >"$WORK/kallsyms"
	if "$FRAGD" "$@" --path.kallsyms "$WORK/kallsyms" >"$WORK/out" 2>&1; then
		echo "FAIL: $what: fragd $* exited 0"
		fails=$((fails + 1))
	elif [ -e "$WORK/kallsyms" ]; then
		echo "FAIL: $what: the copy $WORK/kallsyms was left behind ($(tail -1 "$WORK/out"))"
		fails=$((fails + 1))
	else
		echo "ok: $what: exit non-zero, the copy deleted"
	fi
}
check "a config that does not load" --config "$WORK/bad.yaml"
check "a --path.procfs that is no directory" --path.procfs "$WORK/none"
check "a bad --listen" --listen "nowhere"
[ "$fails" -eq 0 ] || exit 1
echo "PASS: kallsyms_copy"
