#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Holds a live /metrics scrape to tests/contract/metrics.txt.

Parsed with python3-prometheus-client's text parser. Fails when a family in the scrape
is not listed, has another type, or has samples whose label names differ from the
listed ones; and when a listed family is missing, unless it is named with
--may-be-absent (a family that needs something the scene did not produce).
"""
import argparse
import sys

from prometheus_client.parser import text_string_to_metric_families


def contract(path):
    out = {}
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, typ, labels = line.split(" ")
        out[name] = (typ, set() if labels == "-" else set(labels.split(",")))
    return out


def scrape(path):
    """family name as exported (counters with their _total) -> (type, label names, samples)."""
    out = {}
    for fam in text_string_to_metric_families(open(path).read()):
        name = fam.name
        if fam.type == "counter":  # the parser drops a counter's _total; the samples keep it
            name += "_total"
        labels = set()
        for s in fam.samples:
            labels |= set(s.labels) - {"le"}
        out[name] = (fam.type, labels, len(fam.samples))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("scrape")
    ap.add_argument("contract")
    ap.add_argument("--may-be-absent", nargs="*", default=[])
    a = ap.parse_args()
    want, got = contract(a.contract), scrape(a.scrape)
    errors = []
    for name, (typ, labels, n) in sorted(got.items()):
        if name not in want:
            errors.append(f"{name}: exported but not in {a.contract}")
            continue
        wtyp, wlabels = want[name]
        if typ != wtyp:
            errors.append(f"{name}: exported as {typ}, listed as {wtyp}")
        if n and labels != wlabels:
            errors.append(f"{name}: label names {sorted(labels)}, listed {sorted(wlabels)}")
    missing = sorted(set(want) - set(got) - set(a.may_be_absent))
    for name in missing:
        errors.append(f"{name}: listed but not exported")
    for e in errors:
        print("metrics contract:", e, file=sys.stderr)
    print(f"metrics contract: {len(got)} families exported, {len(want)} listed, "
          f"{len(set(want) - set(got))} absent (allowed: {len(set(want) - set(got)) - len(missing)})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
