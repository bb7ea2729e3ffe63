# SPDX-License-Identifier: Apache-2.0
"""The command lines of the bench scripts whose options are all required (the shell scripts
pass every one): the report scripts, which also re-derive their goal verdicts from a
document, and the workloads bench/cost.sh and bench/soak.sh run.
"""
import argparse
import sys


def required_args(description, *options):
    """-> the parsed command line. Each option is a name ("--work"), read as a string, or
    (name, type), e.g. ("--period", float); every one must be given."""
    ap = argparse.ArgumentParser(description=description)
    for opt in options:
        name, kind = (opt, None) if isinstance(opt, str) else opt
        ap.add_argument(name, type=kind, required=True)
    return ap.parse_args()


def report_args(goals_from_doc, *options):
    """A report script's command line: `SCRIPT --goals-from DOC` exits with what
    goals_from_doc(DOC) returns (the verdicts re-derived from a published section);
    otherwise -> required_args(None, *options)."""
    if len(sys.argv) == 3 and sys.argv[1] == "--goals-from":
        sys.exit(goals_from_doc(sys.argv[2]))
    return required_args(None, *options)
