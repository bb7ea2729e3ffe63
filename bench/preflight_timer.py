#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Timed preflight requests for bench/preflight_latency.sh.

usage: preflight_timer.py --fragctl PATH --socket PATH --seconds S --period S --socket-too 0|1 --out FILE

Starts one iteration every --period seconds for --seconds (at once when the last took longer):
`fragctl preflight 2MB 1` (the whole command: a process, one connection, one request, the
answer printed) timed from fork to exit, and with --socket-too 1 then the socket round trip
alone: connect to the control socket, write {"cmd":"preflight","size_kib":2048,"count":1}, read
the answer line (one connection per request, as fragctl makes it). One line per request in
--out: kind (cmd | socket), start (s since the run began), duration (s), verdict (ok, or
error: why). A command is ok when it exits 0, 3 or 4 (ready, makeable, no); an answer when it
is JSON with "ok": true and a verdict. Exit status 0 when every request was ok."""
import json
import subprocess
import time

from benchlib import control_request, required_args

REQUEST = b'{"cmd":"preflight","size_kib":2048,"count":1}\n'


def command(fragctl, sock):
    r = subprocess.run([fragctl, "--socket", sock, "preflight", "2MB", "1"], capture_output=True)
    if r.returncode in (0, 3, 4):
        return "ok"
    return f"error: exit {r.returncode}: {(r.stderr.decode(errors='replace').strip() or '-')[:120]}"


def round_trip(path):
    try:
        j = json.loads(control_request(path, REQUEST))
    except (OSError, EOFError) as e:
        return f"error: {e}"
    except json.JSONDecodeError:
        return "error: not JSON"
    return "ok" if j.get("ok") is True and "verdict" in j else f"error: {str(j.get('error'))[:120]}"


def main():
    a = required_args(__doc__.split("\n")[0], "--fragctl", "--socket", ("--seconds", float), ("--period", float),
                      ("--socket-too", int), "--out")
    kinds = [("cmd", lambda: command(a.fragctl, a.socket))]
    if a.socket_too:
        kinds.append(("socket", lambda: round_trip(a.socket)))
    t0 = time.monotonic()
    bad = n = 0
    with open(a.out, "a", buffering=1) as out:
        while time.monotonic() - t0 < a.seconds:
            for kind, call in kinds:
                s = time.monotonic()
                verdict = call()
                d = time.monotonic() - s
                bad += verdict != "ok"
                out.write(f"{kind}\t{s - t0:.3f}\t{d:.6f}\t{verdict}\n")
            n += 1
            time.sleep(max(0.0, t0 + n * a.period - time.monotonic()))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
