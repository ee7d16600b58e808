#!/usr/bin/env python3
"""Time ``kbatch dump --records --offset-range N:N`` -- the records of one offset -- as whole processes.

On a segment from make_segment.py (1 GiB by default), with the ``.index`` a
broker would have written beside it, built here without kbatch: one entry
(last offset of the batch, its position) each time more than
``index.interval.bytes`` (4096, Kafka's default) were appended since the last
entry (LogSegment.append; one batch per append, as a leader writes them).

Runs, each under ``/usr/bin/time -v``, stdout to /dev/null, for offsets near the
start, the middle and the end of the segment:

* ``with index``     the segment and its ``.index``: the walk starts at the index's position
* ``without index``  a copy of the segment alone: every batch before the offset is stepped over at its header
* ``--old``          optionally, another kbatch (``--old PATH`` to its checkout, run with PYTHONPATH) for a
                     before/after comparison

and prints wall time and CPU time (user + system; each the best of
``--repeat``) and peak RSS.  Every run's JSON
output must hold exactly the one record asked for.

Examples::

    python benchmarks/bench_seek.py                           # 1 GiB, best of 3
    python benchmarks/bench_seek.py --size 256M --repeat 1
    python benchmarks/bench_seek.py --old /tmp/kbatch-before  # also time the kbatch checked out there
"""

from __future__ import annotations

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_dump  # noqa: E402  (find_kbatch, timed, format_table, parse_common, kbatch_version)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "seek")
INDEX_INTERVAL_BYTES = 4096            # index.interval.bytes, Kafka's default
_PREFIX = struct.Struct(">qi")          # baseOffset, batchLength
_LAST_OFFSET_DELTA = struct.Struct(">i")  # bytes 23..27


def write_index(log: str) -> tuple[int, int]:
    """The .index LogSegment.append would have written for ``log``; returns (entries, last offset)."""
    entries = bytearray()
    since_last = 0
    pos, size = 0, os.path.getsize(log)
    last_offset = -1
    with open(log, "rb") as stream:
        while pos + 61 <= size:
            stream.seek(pos)
            head = stream.read(27)
            base, length = _PREFIX.unpack_from(head)
            last_offset = base + _LAST_OFFSET_DELTA.unpack_from(head, 23)[0]
            if since_last > INDEX_INTERVAL_BYTES:
                entries += struct.pack(">ii", last_offset, pos)   # the segment's base offset is 0
                since_last = 0
            since_last += 12 + length
            pos += 12 + length
    with open(os.path.splitext(log)[0] + ".index", "wb") as out:
        out.write(entries)
    return len(entries) // 8, last_offset


_ELAPSED = re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)")
_MAXRSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_USER = re.compile(r"User time \(seconds\): (\d+(?:\.\d+)?)")
_SYS = re.compile(r"System time \(seconds\): (\d+(?:\.\d+)?)")


def timed(argv: list[str], env: dict | None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds user+system, peak RSS KiB) of one run, stdout to /dev/null.

    The CPU figure says what the run costs even when other work shares the machine (the wall figure then
    includes waiting for a core).
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report, open(os.devnull, "wb") as null:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-v", "-o", report.name, *argv], stdout=null,
                              stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - started
        text = report.read()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed (exit {done.returncode}): {done.stderr[-2000:]!r}")
    cpu = float(_USER.search(text).group(1)) + float(_SYS.search(text).group(1))
    return wall, cpu, int(_MAXRSS.search(text).group(1))


def one_record(argv: list[str], offset: int, env: dict | None = None) -> None:
    """Check that the run selects exactly the record at ``offset``."""
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    records = [record["offset"] for line in done.stdout.splitlines() for record in json.loads(line).get("records", [])]
    if records != [offset]:
        raise SystemExit(f"{' '.join(argv)}: expected the record {offset}, got {records[:5]} "
                         f"(exit {done.returncode}; {done.stderr[-500:]})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="1G", help="segment size for make_segment.py (default 1G)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--old", metavar="CHECKOUT", help="also time the kbatch in this source tree")
    parser.add_argument("--old-repeat", type=int, default=1,
                        help="runs of --old per offset (default 1: a full decode of the segment is slow)")
    args = bench_dump.parse_common(parser, argv)
    kbatch = bench_dump.find_kbatch(args.kbatch)

    os.makedirs(os.path.join(DATA, "indexed"), exist_ok=True)
    os.makedirs(os.path.join(DATA, "bare"), exist_ok=True)
    log = os.path.join(DATA, "indexed", "00000000000000000000.log")
    bare = os.path.join(DATA, "bare", "00000000000000000000.log")
    if not os.path.exists(log):
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "make_segment.py"),
                        "--size", args.size, "--out", log], check=True)
    entries, last = write_index(log)
    if not os.path.exists(bare):
        os.link(log, bare)
    if not args.quiet:
        print(f"{log}: {os.path.getsize(log) / 2**20:.0f} MiB, offsets 0..{last}, .index of {entries} entries",
              file=sys.stderr)
    with open(log, "rb") as warm:           # the page cache holds the segment for every run alike
        while warm.read(1 << 24):
            pass

    rows, results = [], []
    for where, offset in (("start", last // 100), ("middle", last // 2), ("end", last - 1)):
        runs = [("with index", kbatch, log, None), ("without index", kbatch, bare, None)]
        if args.old:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(args.old))
            # An editable install's import hook (and the current directory, for -c) would find this checkout's
            # kbatch before PYTHONPATH's: drop both.
            old = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
                   "if not type(f).__module__.startswith('__editable__')]; sys.path.remove(''); "
                   "from kbatch.cli import main; main()")
            runs.append((f"--old ({args.old_repeat} run)", [sys.executable, "-c", old], log, env))
        for name, command, path, env in runs:
            argv_run = [*command, "dump", "--records", "--format", "jsonl", "--offset-range", f"{offset}:{offset}", path]
            one_record(argv_run, offset, env)
            best, cpu, peak = None, None, 0
            for _ in range(args.old_repeat if env is not None else args.repeat):
                wall, used, rss = timed(argv_run, env)
                best = wall if best is None else min(best, wall)
                cpu = used if cpu is None else min(cpu, used)
                peak = max(peak, rss)
            rows.append([f"{name}, offset {offset} ({where})", f"{best:.3f}", f"{cpu:.3f}", f"{peak / 1024:.1f}"])
            results.append({"run": name, "offset": offset, "where": where, "wall_s": best, "cpu_s": cpu,
                            "peak_rss_kib": peak})
            if not args.quiet:
                print(f"  {rows[-1][0]}: {best:.3f} s wall, {cpu:.3f} s CPU, {peak / 1024:.1f} MiB", file=sys.stderr)
    load = os.getloadavg()[0]
    print(f"kbatch {bench_dump.kbatch_version()}; {os.path.getsize(log):,} bytes; best of {args.repeat}; "
          f"load average {load:.1f} on {os.cpu_count()} cores")
    print(bench_dump.format_table(["dump --records --offset-range N:N", "wall s", "CPU s", "peak RSS MiB"], rows))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"size": os.path.getsize(log), "index_entries": entries, "results": results}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
