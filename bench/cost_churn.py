#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The busy host of bench/cost.sh: memory that comes and goes, as on any busy host.

usage: cost_churn.py --dir DIR --anon-mib N --file-mib N --period S --events FILE

Every --period seconds, one cycle:
  anon   mmap N MiB of anonymous memory, write one byte to each 4 KiB page, munmap it;
  cache  write a file of N MiB in DIR (1 MiB writes), fdatasync, read it back, drop its pages
         from the page cache (posix_fadvise DONTNEED) and delete it.
A cycle that takes longer than the period starts the next one at once. Each cycle is one JSON
line in --events: {"unix", "anon_s", "cache_write_s", "cache_read_s", "cycle_s"}. Runs until
SIGTERM or SIGINT; whatever ends it, the mapping is unmapped and the file deleted (exit 0).
"""
import contextlib
import json
import mmap
import os
import signal
import sys
import time

from benchlib import required_args

PAGE = os.sysconf("SC_PAGE_SIZE")
CHUNK = 1 << 20


def anon_cycle(mib):
    with mmap.mmap(-1, mib << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) as m:
        for off in range(0, mib << 20, PAGE):
            m[off] = 1


def cache_cycle(path, mib, block):
    t0 = time.monotonic()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(mib):
            os.write(fd, block)
        os.fdatasync(fd)
    finally:
        os.close(fd)
    t1 = time.monotonic()
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, CHUNK):
            pass
        # Clean pages only: written back above, so every page of the file goes.
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
        os.unlink(path)
    return t1 - t0, time.monotonic() - t1


def main():
    a = required_args(__doc__.split("\n")[0], "--dir", ("--anon-mib", int), ("--file-mib", int), ("--period", float),
                      "--events")
    if a.anon_mib <= 0 or a.file_mib <= 0 or a.period <= 0:
        sys.exit("cost_churn: --anon-mib, --file-mib and --period must be > 0")
    # Both raise KeyboardInterrupt (set explicitly: a shell starts a background job with SIGINT ignored).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    path = os.path.join(a.dir, f"cost-churn-{os.getpid()}.dat")
    block = os.urandom(CHUNK)  # not zeros: nothing along the way may elide the pages
    try:
        with open(a.events, "a", buffering=1) as out:
            while True:
                t0 = time.monotonic()
                anon_cycle(a.anon_mib)
                t1 = time.monotonic()
                w, r = cache_cycle(path, a.file_mib, block)
                t2 = time.monotonic()
                out.write(json.dumps({"unix": time.time(), "anon_s": round(t1 - t0, 3), "cache_write_s": round(w, 3),
                                      "cache_read_s": round(r, 3), "cycle_s": round(t2 - t0, 3)}) + "\n")
                rest = a.period - (time.monotonic() - t0)
                if rest > 0:
                    time.sleep(rest)
    except KeyboardInterrupt:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
