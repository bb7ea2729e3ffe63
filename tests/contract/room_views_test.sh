#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The build's room views (CMakeLists.txt, fragd_room_view): each room compiles against
# build/rooms/<room>, which holds only the room and the rooms it may include. Checks that
#  - CMakeLists.txt's table of what each room may include (passed as ROOM:USED,USED...) is the
#    one scripts/check-layout.sh enforces;
#  - each view holds exactly the room and those it may include;
#  - for every room it may not include, a file that includes one of that room's headers fails
#    to compile for want of the header, where the whole tree in view finds it;
#  - no room but fragd compiles a concern's face (concerns/<concern>/concern.h).
# Usage: room_views_test.sh CXX VIEWS_DIR SOURCE_DIR ROOM:USES... No root.
set -euo pipefail
cxx=$1 views=$2 src=$3
shift 3
declare -A uses
for spec in "$@"; do uses[${spec%%:*}]=" $(tr ',' ' ' <<<"${spec#*:}") "; done
bad=0 checked=0

# The layout script's table, as it declares it: [room]="used used".
while IFS='=' read -r key value; do
  room=${key//[\[\] ]/}
  value=$(tr -d '"' <<<"$value" | xargs)
  cmake_uses=$(xargs <<<"${uses[$room]-MISSING}")
  if [ "$cmake_uses" != "$value" ]; then
    echo "room $room: CMakeLists.txt lets it use '$cmake_uses', scripts/check-layout.sh '$value'; make them one" >&2
    bad=1
  fi
done < <(sed -n '/^declare -A allowed=(/,/^)/p' "$src/scripts/check-layout.sh" | grep '^ *\[')

for room in "${!uses[@]}"; do
  [ -d "$views/$room" ] || { echo "no view $views/$room: the build did not make it" >&2; exit 1; }
  want=$(xargs -n1 <<<"$room ${uses[$room]}" | grep -vx act | sort | xargs)  # act: in concerns/
  have=$(ls "$views/$room" | sort | xargs)
  [ "$want" = "$have" ] || { echo "build/rooms/$room holds '$have', want '$want'" >&2; bad=1; }
  for other in "${!uses[@]}"; do
    [ "$other" = "$room" ] && continue
    case "${uses[$room]}" in *" $other "*) continue ;; esac
    dir=$other
    [ "$other" = act ] && dir=concerns/act
    [ "$other" = concerns ] && dir=concerns/memory
    header=$(cd "$src/daemon" && find "$dir" -name '*.h' | sort | head -1)
    out=$(printf '#include "%s"\n' "$header" | "$cxx" -std=c++20 -E -x c++ -I "$views/$room" - 2>&1 >/dev/null || true)
    whole=$(printf '#include "%s"\n' "$header" | "$cxx" -std=c++20 -E -x c++ -I "$src/daemon" -I "$src/include" - 2>&1 >/dev/null || true)
    checked=$((checked + 1))
    if ! grep -q "$header: No such file" <<<"$out"; then
      echo "$room/ finds $header through build/rooms/$room, though it may not include $other/" >&2
      bad=1
    elif grep -q "$header: No such file" <<<"$whole"; then
      echo "$header is not found even with the whole tree in view: the check proves nothing" >&2
      bad=1
    fi
  done
done
# A concern's face (concerns/concern.h, concerns/<concern>/concern.h) is the daemon's: only fragd's
# view holds concerns/concern.h, which every face includes.
for room in "${!uses[@]}"; do
  [ "$room" = fragd ] && continue
  out=$(printf '#include "concerns/stalls/concern.h"\n' | "$cxx" -std=c++20 -E -x c++ -I "$views/$room" -I "$src/include" - 2>&1 >/dev/null || true)
  checked=$((checked + 1))
  grep -q "No such file" <<<"$out" || { echo "$room/ compiles a concern's face (concerns/stalls/concern.h) through build/rooms/$room" >&2; bad=1; }
done
[ "$checked" -ge 20 ] || { echo "only $checked room pairs checked" >&2; exit 1; }
[ $bad -eq 0 ] && echo "room views: the tables agree; $checked includes of a room not allowed fail to compile"
exit $bad
