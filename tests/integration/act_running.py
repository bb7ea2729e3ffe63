#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sends one act request to fragd's control socket and polls its action until fragd
says it is "running"; then, with a PID, sends that process SIGTERM at once. Prints the
action's id. Exits non-zero with the reason when the request is refused or the action
ends, or is not seen running within 20 s.

    act_running.py SOCKET REQUEST_JSON [PID]
"""
import json
import os
import signal
import socket
import sys
import time


def ask(path, obj):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(json.dumps(obj).encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    return json.loads(buf)


def main():
    path, request = sys.argv[1], json.loads(sys.argv[2])
    pid = int(sys.argv[3]) if len(sys.argv) > 3 else None
    a = ask(path, request)
    if not a.get("ok"):
        sys.exit(f"request refused: {a}")
    aid = a["ids"][0]
    end = time.time() + 20
    while time.time() < end:
        st = ask(path, {"cmd": "action", "id": aid})
        if st.get("state") == "running":
            if pid is not None:
                os.kill(pid, signal.SIGTERM)
            print(aid)
            return
        if st.get("state") == "done":
            sys.exit(f"action {aid} ended before it was seen running: {st}")
        time.sleep(0.0005)
    sys.exit(f"action {aid} never ran in 20 s")


if __name__ == "__main__":
    main()
