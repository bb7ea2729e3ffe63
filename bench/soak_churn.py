#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The workload of bench/soak.sh: fragmentation churn and hugepage bursts, for SECONDS.

usage: soak_churn.py --fragmenter PATH --percent P --hold S --burst-period S
                     --burst-pages N --burst-hold S --seconds S --events FILE

Two loops at once, until SECONDS have passed or SIGTERM / SIGINT:
  churn   `fragmenter --percent P` splinters memory (1 page in 4 kept) and says
          "ready"; it holds that for --hold seconds, then is stopped (its memory
          freed) and, 2 s later, the next cycle starts.
  bursts  every --burst-period seconds (the first one period after the start):
          vm.nr_hugepages is read (B), B + N written and read back, held
          --burst-hold seconds, then B written back.
Every event is one JSON line in --events: {"unix", "event", ...}; event is one of
fragment_start, ready (kept_kib), freed, burst_up (before, asked, got, seconds),
burst_down (before, after). On exit the fragmenter is stopped and a burst under way
is written back down, whatever ends the run. Exit status 0, or 1 when the
fragmenter failed (its stderr is in the events file).
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

from benchlib import read_int, required_args

HP = "/proc/sys/vm/nr_hugepages"


class Churn:
    def __init__(self, a):
        self.a = a
        self.stop = threading.Event()
        self.lock = threading.Lock()       # the events file, burst_before
        self.frag_lock = threading.Lock()  # frag
        self.out = open(a.events, "a", buffering=1)
        self.frag = None
        self.burst_before = None  # pool size to write back while a burst is up
        self.failed = False

    def event(self, name, **kw):
        with self.lock:
            self.out.write(json.dumps({"unix": time.time(), "event": name, **kw}) + "\n")

    def stop_fragmenter(self):
        with self.frag_lock:
            p, self.frag = self.frag, None
        if p is None:
            return
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def churn(self):
        while not self.stop.is_set():
            self.event("fragment_start", percent=self.a.percent)
            with self.frag_lock:
                if self.stop.is_set():
                    return
                # stdin a pipe: should this process die, the fragmenter sees EOF and exits too.
                p = self.frag = subprocess.Popen([self.a.fragmenter, "--percent", str(self.a.percent)],
                                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                 stderr=subprocess.PIPE, text=True)
            line = p.stdout.readline()  # "ready KIB", or EOF if it was stopped or failed
            if not line.startswith("ready"):
                if not self.stop.is_set():
                    p.wait()
                    self.event("fragmenter_failed", status=p.returncode, stderr=p.stderr.read()[-500:])
                    self.failed = True
                    self.stop.set()
                self.stop_fragmenter()
                return
            self.event("ready", kept_kib=int(line.split()[1]))
            self.stop.wait(self.a.hold)
            self.stop_fragmenter()
            self.event("freed")
            self.stop.wait(2)

    def write_pool(self, n):
        with open(HP, "w") as f:
            f.write(f"{n}\n")

    def bursts(self):
        while not self.stop.wait(self.a.burst_period):
            before = self.burst_before = read_int(HP)
            t = time.monotonic()
            self.write_pool(before + self.a.burst_pages)
            got = read_int(HP)
            self.event("burst_up", before=before, asked=before + self.a.burst_pages, got=got,
                       seconds=round(time.monotonic() - t, 3))
            self.stop.wait(self.a.burst_hold)
            self.burst_down()

    def burst_down(self):
        with self.lock:
            before, self.burst_before = self.burst_before, None
        if before is None:
            return
        self.write_pool(before)
        self.event("burst_down", before=before, after=read_int(HP))

    def run(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop.set())
        threads = [threading.Thread(target=f) for f in (self.churn, self.bursts)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + self.a.seconds
        while not self.stop.is_set() and time.monotonic() < deadline:
            self.stop.wait(min(1.0, max(0.0, deadline - time.monotonic())))
        self.stop.set()
        # The churn thread may sit in readline() on a fragmenter still touching memory.
        self.stop_fragmenter()
        for t in threads:
            t.join()
        self.burst_down()
        self.event("end")
        return 1 if self.failed else 0


def main():
    a = required_args(__doc__.split("\n")[0], "--fragmenter", ("--percent", int), ("--hold", float),
                      ("--burst-period", float), ("--burst-pages", int), ("--burst-hold", float), ("--seconds", float),
                      "--events")
    if not os.access(HP, os.W_OK):
        sys.exit(f"soak_churn: cannot write {HP}: run as root")
    return Churn(a).run()


if __name__ == "__main__":
    sys.exit(main())
