#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/lib.sh's arm_order, the one order of every benchmark that interleaves arms over rounds:
each round runs every arm once, each arm follows each other arm equally often over a cycle of
rounds, two arms alternate; and no driver of bench/ writes an order of its own. Needs no root:
python3 tests/bench/arm_order_test.py."""
import glob
import itertools
import os
import re
import subprocess
import unittest
from collections import Counter

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LIB = os.path.join(ROOT, "bench", "lib.sh")


def orders(arms, rounds):
    """-> arm_order's answer for rounds 1..rounds, one list of arms a round."""
    script = f'source "{LIB}"; for r in $(seq {rounds}); do arm_order "$r" {" ".join(arms)}; done'
    out = subprocess.run(["bash", "-c", script], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines()]


def cycle(n):
    return n if n % 2 == 0 else 2 * n


class ArmOrder(unittest.TestCase):
    def test_every_round_runs_every_arm_once(self):
        for n in range(1, 8):
            arms = [f"a{i}" for i in range(n)]
            for r, got in enumerate(orders(arms, 2 * cycle(n)), 1):
                self.assertEqual(sorted(got), sorted(arms), f"{n} arms, round {r}: {got}")

    def test_each_arm_follows_each_other_equally_often(self):
        for n in range(2, 8):
            arms = [f"a{i}" for i in range(n)]
            rounds = orders(arms, cycle(n))
            pairs = Counter(p for o in rounds for p in zip(o, o[1:]))
            want = list(itertools.permutations(arms, 2))
            self.assertEqual(sorted(pairs), sorted(want), f"{n} arms: {rounds}")
            self.assertEqual(len(set(pairs.values())), 1, f"{n} arms, pairs {dict(pairs)}")
            # ... and each arm is first equally often: no arm always starts on a fresh machine.
            firsts = Counter(o[0] for o in rounds)
            self.assertEqual(set(firsts), set(arms))
            self.assertEqual(len(set(firsts.values())), 1, f"{n} arms, firsts {dict(firsts)}")

    def test_the_cycle_repeats(self):
        for n in range(1, 6):
            arms = [f"a{i}" for i in range(n)]
            got = orders(arms, 2 * cycle(n))
            self.assertEqual(got[:cycle(n)], got[cycle(n):])

    def test_no_arms_no_order(self):
        self.assertEqual(orders([], 2), [[], []])

    def test_two_arms_alternate_the_first_first(self):
        self.assertEqual(orders(["base", "head"], 4), [["base", "head"], ["head", "base"]] * 2)

    def test_no_driver_orders_its_arms_itself(self):
        # A hand-written order: an array reversed or rotated in a loop over rounds. Each driver
        # that interleaves arms calls arm_order instead.
        # Apart: run.sh, whose order is its pairing (each traced arm beside an untraced run, the
        # sequence reversed every other round); defrag_atomic_rounds.sh, which runs under a guest's
        # busybox sh where lib.sh (bash) cannot, its two modes alternating as two arms do here; and
        # cost.sh's quiet run before the busy one (no pattern here to find).
        own = re.compile(r"rev\+=|order=\(\"\$\{order\[@\]:|round_order\(\)|(order|arms)=\((\w+ )+\w+\)|% 2\)\)")
        found = []
        for p in sorted(glob.glob(os.path.join(ROOT, "bench", "*.sh"))):
            if os.path.basename(p) in ("run.sh", "defrag_atomic_rounds.sh", "lib.sh"):
                continue
            with open(p) as f:
                lines = list(f)
            for i, line in enumerate(lines, 1):
                if own.search(line):
                    found.append(f"{os.path.relpath(p, ROOT)}:{i}: {line.strip()}")
        self.assertEqual(found, [], "order arms with arm_order (bench/lib.sh)")


if __name__ == "__main__":
    unittest.main()
