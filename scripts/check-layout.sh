#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layout's rules (docs/architecture.md), checked on every `make test`:
#  1. an #include "room/..." in daemon/ only goes to a room the including room may use;
#  2. no source file (C, C++, Python, shell) in the repository is over 600 lines;
#  3. docs/architecture.md matches the tree: it names every room and every concern of daemon/concerns/, and
#     every file it names exists; so does README's "## Layout" section when the README has one
#     (the README points to docs/architecture.md for the tree).
# Prints every violation with the file and line, and exits 1 when there is one.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# room -> the rooms it may include besides itself. Lower rooms never include higher ones:
#   base <- kernel <- concerns, policy, protocol, act <- fragd, fragctl
# A concern's folder (daemon/concerns/<concern>/) holds parts of three rooms: its reading and
# metrics (concerns), its face to the daemon (concern.h, concern.cc: fragd) and its unit tests
# (*_test.cc and their headers: tests, which may include any room); act's engine is room act.
declare -A allowed=(
  [base]=""
  [kernel]="base"
  [concerns]="base kernel"
  [policy]="base kernel concerns"
  [protocol]="base kernel concerns"
  [act]="base kernel concerns policy protocol"
  [fragd]="base kernel concerns policy protocol act"
  [fragctl]="base kernel concerns policy protocol"
)
# room_of PATH (relative to daemon/): the room a file or an included header belongs to.
room_of() {
  case $1 in
    concerns/concern.h | concerns/*/concern.h | concerns/*/concern.cc) echo fragd ;;
    concerns/*_test.cc | concerns/*/fake_*.h | concerns/*/*_builders.h | concerns/*/*_replay.h) echo tests ;;
    concerns/act/*) echo act ;;
    *) echo "${1%%/*}" ;;
  esac
}
max_lines=600
bad=0

while IFS= read -r f; do
  room=$(room_of "${f#daemon/}")
  [ "$room" = tests ] && continue
  if [ -z "${allowed[$room]+x}" ]; then
    echo "$f: in no room of daemon/ (rooms: ${!allowed[*]}); move it into one" >&2
    bad=1
    continue
  fi
  while IFS=: read -r line target; do
    to=$(room_of "$target")
    [ "$to" = "$room" ] && continue
    case " ${allowed[$room]} " in *" $to "*) continue ;; esac
    [ -n "${allowed[$to]+x}" ] || continue   # not a room: a library header or a generated one
    echo "$f:$line: $room/ may not include $target (a $room file may include: ${allowed[$room]:-only base/}); move the shared part down a room" >&2
    bad=1
  done < <(grep -n '^#include "' "$f" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(git ls-files --cached --others --exclude-standard 'daemon/*.cc' 'daemon/*.h')

while IFS= read -r f; do
  n=$(wc -l <"$f")
  if [ "$n" -gt $max_lines ]; then
    echo "$f: $n lines, more than $max_lines; split it by what its parts do" >&2
    bad=1
  fi
done < <(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cc' '*.py' '*.sh')

# 3. The docs name what is there, and only that.
layout=$(sed -n '/^## Layout$/,/^## /p' README.md)
arch=$(cat docs/architecture.md)
layout_docs=(docs/architecture.md)
[ -n "$layout" ] && layout_docs+=(README.md)
for d in daemon/*/ daemon/concerns/*/; do
  d=${d%/}
  name=${d#daemon/}
  name=${name#concerns/}
  for doc in "${layout_docs[@]}"; do
    text=$layout
    [ "$doc" = docs/architecture.md ] && text=$arch
    grep -qw -- "$name" <<<"$text" || { echo "$doc: does not name $d (add it to the layout)" >&2; bad=1; }
  done
done
for doc in "${layout_docs[@]}"; do
  text=$layout
  [ "$doc" = docs/architecture.md ] && text=$arch
  for f in $(grep -oE '[A-Za-z0-9_.*-]+\.(bpf\.c|bpf\.h|cc|c|h|sh|py|tsv|txt|md|json|yaml|in)\b' <<<"$text" | sort -u); do
    case $f in *'*'* | .*) continue ;; esac   # a pattern: *.bpf.h, <concern>.bpf.c
    [ -n "$(git ls-files --cached --others --exclude-standard "*$f" | grep -E "(^|/)${f//./\\.}\$" | head -1)" ] ||
      { echo "$doc: names $f, which is not in the tree (fix the layout)" >&2; bad=1; }
  done
done

[ $bad -eq 0 ] && echo "layout: every include goes down a room; no source file over $max_lines lines; the docs name the tree"
exit $bad
