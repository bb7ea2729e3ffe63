#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Greedy clients of fragd's control socket, for fault_control_test.sh.

flood SOCK SECONDS: four clients that ask for hist and status as fast as fragd
  takes requests and read nothing, and one that reads a trickle, until fragd has
  dropped all five or SECONDS pass. Prints one line per client (dropped or kept,
  when, requests sent) and exits 1 when any was kept.
hold SOCK N OUT: opens N connections, asks `trace` on each, writes to OUT how
  many were accepted and the refusals' errors (JSON), then holds the accepted
  ones until killed."""
import json
import os
import socket
import sys
import threading
import time

REQUESTS = [b'{"cmd":"hist"}\n', b'{"cmd":"status"}\n']


def client(path, reads, seconds, out, i):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    out[i] = ["kept", seconds, 0, 0]
    stop = time.monotonic() + seconds
    t0 = time.monotonic()

    def trickle():
        # 512 bytes every 100 ms: 5 KB/s, far less than what it asks for.
        while time.monotonic() < stop:
            try:
                if not s.recv(512):
                    return
                out[i][3] += 512
            except OSError:
                return
            time.sleep(0.1)

    if reads:
        threading.Thread(target=trickle, daemon=True).start()
    n = 0
    while time.monotonic() < stop:
        try:
            s.sendall(REQUESTS[n % 2])  # blocks while fragd reads it no faster than its rate
        except OSError:  # EPIPE or ECONNRESET: fragd closed it
            out[i][0:3] = ["dropped", time.monotonic() - t0, n]
            return
        n += 1
        out[i][2] = n
        time.sleep(0.002)
    s.close()


def flood(path, seconds):
    seconds = float(seconds)
    out = [None] * 5
    threads = [threading.Thread(target=client, args=(path, i == 4, seconds, out, i), daemon=True) for i in range(5)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + seconds + 2
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    kept = 0
    for i, o in enumerate(out):
        what = "slow reader" if i == 4 else f"reads nothing {i}"
        state, when, sent, got = o
        print(f"{what}: {state} after {when:.1f} s, {sent} requests sent, {got} bytes read")
        kept += state != "dropped"
    sys.exit(1 if kept else 0)


def hold(path, n, out_path):
    held, refusals = [], []
    for _ in range(int(n)):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.settimeout(10)
        try:
            s.sendall(b'{"cmd":"trace"}\n')
        except OSError:
            pass  # refused and closed already: the reason is still there to read
        try:
            line = s.makefile("rb").readline()
        except OSError:
            line = b""
        ans = json.loads(line) if line else {"ok": False, "error": "closed without an answer"}
        if ans.get("ok"):
            held.append(s)
        else:
            refusals.append(ans.get("error", ""))
            s.close()
    with open(out_path + ".tmp", "w") as f:
        json.dump({"accepted": len(held), "refused": refusals}, f)
    os.rename(out_path + ".tmp", out_path)
    while True:
        time.sleep(60)


if __name__ == "__main__":
    {"flood": flood, "hold": hold}[sys.argv[1]](*sys.argv[2:])
