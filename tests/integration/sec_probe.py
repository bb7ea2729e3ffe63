#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile and greedy clients of fragd's control socket and HTTP endpoint, for security_test.sh.

Each subcommand prints what it saw and exits 1 with the reason when fragd did not behave."""
import json
import re
import socket
import sys
import time


def die(msg):
    print("sec_probe: " + msg, file=sys.stderr)
    sys.exit(1)


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)  # blocking: waits while the listen backlog is full
    s.settimeout(15)
    return s


def read_all(s, limit=1 << 20):
    """Reads until the peer closes; returns (data, closed)."""
    data = b""
    try:
        while len(data) < limit:
            chunk = s.recv(65536)
            if not chunk:
                return data, True
            data += chunk
    except socket.timeout:
        return data, False
    return data, False


def malformed(path):
    """Every malformed request gets one error line, then the connection is closed."""
    cases = [
        (b"not json\n", "not JSON"),
        (b'{"cmd":"shutdown"}\n', "unknown command"),
        (b'{"cmd":"status","path":"/etc/shadow"}\n', "takes no field"),
        (b'{"cmd":"compact","node":"all"}\n', "must be an integer"),
        (b"[]\n", "JSON object"),
        (b"x" * 20000, "limited to"),  # no newline: oversized line
    ]
    for payload, want in cases:
        s = connect(path)
        s.sendall(payload)
        data, closed = read_all(s)
        s.close()
        lines = data.decode(errors="replace").splitlines()
        if len(lines) != 1:
            die(f"{payload[:40]!r}: want one answer line, got {lines!r}")
        ans = json.loads(lines[0])
        if ans.get("ok") is not False or want not in ans.get("error", ""):
            die(f"{payload[:40]!r}: answer {ans!r} does not say {want!r}")
        if not closed:
            die(f"{payload[:40]!r}: fragd kept the connection open after a malformed request")
        print(f"malformed {payload[:24]!r}: {ans['error'][:70]}; closed")
    # A well-formed request on the same connection before a bad one is still answered.
    s = connect(path)
    s.sendall(b'{"cmd":"status"}\n')
    first = s.makefile("rb").readline()
    if not json.loads(first).get("ok"):
        die("status before a bad request was not answered ok")
    s.close()


def slow_line(path, wait):
    """A request line that never ends is cut off after the line deadline."""
    s = connect(path)
    s.sendall(b'{"cmd":"sta')
    t0 = time.monotonic()
    s.settimeout(wait)
    data, closed = read_all(s)
    took = time.monotonic() - t0
    if not closed:
        die(f"an unfinished request line was still open after {took:.1f} s")
    if b"within" not in data:
        die(f"no error naming the deadline: {data!r}")
    print(f"unfinished line: closed after {took:.1f} s: {data.decode().strip()}")


def rate(path, n):
    """n requests pipelined at once are all answered, the ones above the burst more slowly."""
    s = connect(path)
    s.settimeout(60)
    t0 = time.monotonic()
    s.sendall(b'{"cmd":"action","id":999999}\n' * n)
    f = s.makefile("rb")
    for i in range(n):
        line = f.readline()
        if not line:
            die(f"connection closed after {i} of {n} answers")
        ans = json.loads(line)
        if "unknown action id" not in ans.get("error", ""):
            die(f"answer {i}: {ans!r}")
    took = time.monotonic() - t0
    s.close()
    print(f"rate: {n} pipelined requests answered in {took:.2f} s")
    print(f"SECONDS {took:.3f}")


def too_many(path, n):
    """Beyond the client limit a connection is refused with a reason; the held ones still work."""
    held = [connect(path) for _ in range(n)]
    time.sleep(0.5)
    extra = connect(path)
    data, closed = read_all(extra)
    extra.close()
    if b"too many clients" not in data or not closed:
        die(f"connection {n + 1} was not refused with a reason: {data!r} closed={closed}")
    held[0].sendall(b'{"cmd":"status"}\n')
    ans = json.loads(held[0].makefile("rb").readline())
    if not ans.get("ok"):
        die("a held connection was not served")
    for s in held:
        s.close()
    print(f"client limit: connection {n + 1} refused: {data.decode().strip()}")


def http_slow(port, n, wait):
    """n clients that send a request a byte at a time; a normal scrape still gets through."""
    slow = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        slow.append(s)
    t0 = time.monotonic()
    c = socket.create_connection(("127.0.0.1", port), timeout=wait)
    c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    data, _ = read_all(c, 1 << 24)
    took = time.monotonic() - t0
    c.close()
    if not data.startswith(b"HTTP/1.1 200") or b"\nfragd_" not in data:
        die(f"scrape during {n} slow clients failed after {took:.1f} s: {data[:200]!r}")
    # The slow ones are cut off by the request timeout.
    closed = 0
    for s in slow:
        s.settimeout(wait)
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    closed += 1
                    break
        except (socket.timeout, ConnectionResetError):
            if isinstance(sys.exc_info()[1], ConnectionResetError):
                closed += 1
        s.close()
    if closed != n:
        die(f"{n - closed} of {n} slow HTTP clients were still connected after {wait} s")
    print(f"http: scrape served in {took:.2f} s beside {n} slow clients; all {n} cut off")


def http_big(port):
    """A request with 64 KiB of headers is refused; the server goes on serving."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        data, _ = read_all(s)
    except ConnectionResetError:
        data = b""
    s.close()
    if data.startswith(b"HTTP/1.1 200"):
        die("a request with 64 KiB of headers was served")
    print(f"http: oversized request answered {data[:40]!r}")


def ask(path, cmd):
    s = connect(path)
    s.sendall(json.dumps(cmd).encode() + b"\n")
    line = s.makefile("rb").readline()
    s.close()
    ans = json.loads(line)
    if not ans.get("ok"):
        die(f"{cmd}: {ans}")
    return ans


def kernel_addresses(v, where=""):
    """Every string that looks like a kernel address ("0xffff...") and every number in the kernel half."""
    out = []
    if isinstance(v, dict):
        for k, x in v.items():
            out += kernel_addresses(x, where + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += kernel_addresses(x, f"{where}[{i}]")
    elif isinstance(v, str) and re.search(r"0x[0-9a-fA-F]{8,}", v):
        out.append(f"{where} = {v!r}")
    elif isinstance(v, int) and not isinstance(v, bool) and v >= 0xffff800000000000:
        out.append(f"{where} = {v:#x}")
    return out


def reader(path, role):
    """What one reader gets: root every field, any other user no block, polluter or address."""
    top = ask(path, {"cmd": "top"})
    leaks = kernel_addresses(top)
    if leaks:
        die(f"top as {role} carries kernel addresses: {leaks[:3]}")
    unnamed = sum(s.get("unnamed_frames", 0) for s in top["stacks"])
    if not top["stacks"] or unnamed == 0:
        die(f"top as {role}: no stack with frames fragd could not name ({len(top['stacks'])} stacks): nothing tested")
    m = ask(path, {"cmd": "map"})
    st = ask(path, {"cmd": "status"})
    zones = m["scan"]["zones"]
    pol = m.get("pollution")
    if role == "root":
        if "withheld" in m or "withheld" in st:
            die(f"root was told something was withheld: {m.get('withheld') or st.get('withheld')}")
        if any("classes" not in z or "used" not in z for z in zones) or (pol and "blocks" not in pol):
            die("root's map lacks per-block classes or polluted blocks")
    else:
        if not m.get("withheld") or not st.get("withheld"):
            die(f"map or status as {role} does not say what was withheld")
        per_block = [k for z in zones for k in ("classes", "used") if k in z]
        if per_block:
            die(f"map as {role} carries per-block data at physical addresses: {per_block[:2]}")
        for name, p in (("map", pol), ("status", st.get("pollution"))):
            if p and (p.get("blocks") or p.get("top")):
                die(f"{name} as {role} names polluters or polluted blocks: {json.dumps(p)[:200]}")
        if any("counts" not in z or "hugepages" not in z for z in zones):
            die(f"map as {role} lacks a zone's counts")
    blocks = sum(sum(z["counts"].values()) for z in zones)
    print(f"{role}: top has {len(top['stacks'])} stacks, {unnamed} unnamed frames, no address; "
          f"map {len(zones)} zones, {blocks} blocks counted, "
          f"{'per-block data' if role == 'root' else 'withheld: ' + m['withheld'][:60] + '...'}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "malformed":
        malformed(args[0])
    elif cmd == "slow-line":
        slow_line(args[0], float(args[1]))
    elif cmd == "rate":
        rate(args[0], int(args[1]))
    elif cmd == "too-many":
        too_many(args[0], int(args[1]))
    elif cmd == "http-slow":
        http_slow(int(args[0]), int(args[1]), float(args[2]))
    elif cmd == "http-big":
        http_big(int(args[0]))
    elif cmd == "reader":
        reader(args[0], args[1])
    else:
        die("unknown subcommand " + cmd)


if __name__ == "__main__":
    main()
