#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Plays today's tests/replay/*.events through the accounting logic of an older commit
# (its bpf/*_logic.h and its harness), to show a sequence fails without a fix:
#   bash tests/replay/at_commit.sh COMMIT [gtest args...]
# The commit must have tests/replay. Builds that harness by hand in a scratch worktree,
# linking this tree's build (build/, or FRAGD_BUILD_DIR) for the label names only.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${FRAGD_BUILD_DIR:-$src/build}
commit=${1:?usage: at_commit.sh COMMIT [gtest args...]}
shift
[ -f "$build/libfragd_core.a" ] || { echo "at_commit.sh: build $build first (cmake --build build)" >&2; exit 1; }
scratch=$(mktemp -d /tmp/fragd-replay-at.XXXXXX)
trap 'git -C "$src" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git -C "$src" worktree add -q --detach "$scratch/tree" "$commit"
W=$scratch/tree
[ -f "$W/tests/replay/replay_programs.c" ] || { echo "at_commit.sh: $commit has no tests/replay" >&2; exit 1; }
cc -O1 -I"$W/include" -I"$W/bpf" -I"$W/tests/replay" -c "$W/tests/replay/replay_programs.c" -o "$scratch/p.o"
for f in replay_events replay_test; do
  c++ -std=c++20 -O1 -I"$W/include" -I"$W/daemon" -I"$build/generated" -I"$W/tests/replay" \
    -DFRAGD_REPLAY_SOURCE_DIR="\"$W/tests/replay\"" -c "$W/tests/replay/$f.cc" -o "$scratch/$f.o"
done
c++ "$scratch"/*.o "$build/libfragd_core.a" -lbpf -lelf -lz -lgtest_main -lgtest -lpthread -o "$scratch/replay"
FRAGD_REPLAY_DIR=$src/tests/replay "$scratch/replay" "$@"
