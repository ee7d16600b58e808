#!/usr/bin/env python3
"""How fast is the CRC pass of verify-crc, next to what the hardware can do?

Measures, on a large v2 segment already in the page cache:

* in-process: ``kbatch.ops.verify.verify_stream`` over FILE, its window read
  ahead on a second thread (verify-crc's pass over a whole local file) and on
  the calling thread alone;
* whole processes under ``/usr/bin/time -v``: ``cat FILE > /dev/null`` (reading
  the file at all), a one-line Python CRC-32C of the whole file read into memory
  (the CRC alone), ``python -m kbatch verify-crc --jobs 1 FILE`` and
  ``kbatch verify-crc FILE`` when the command is installed.

Wall time is the best of ``--repeat`` runs, timed around the process; peak RSS
is the largest "Maximum resident set size" that ``/usr/bin/time -v`` reports
(mapped file pages that are resident count).  CPU is user+system time over
wall time: above 100% means both cores worked; "others" is the CPU time other
processes took meanwhile (on a shared machine, re-run when it is not ~0).

The segment is made by benchmarks/make_segment.py (1 GiB of ~16 KiB
uncompressed batches) when it is missing.

Examples::

    python benchmarks/bench_verify.py
    python benchmarks/bench_verify.py --repeat 9 --file /data/00000000000000000000.log
    python benchmarks/bench_verify.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from kbatch.ops.verify import VerifyOptions, verify_stream
from kbatch.reading.summary import FileSummary

DEFAULT_FILE = os.path.join(HERE, "data", "00000000000000000000.log")
CRC_ONE_CALL = 'import crc32c,sys; crc32c.crc32c(open(sys.argv[1],"rb").read())'
TIME = "/usr/bin/time"


def ensure_segment(path: str, size: str) -> None:
    if os.path.exists(path):
        return
    print(f"generating {path} ({size}) with make_segment.py ...", file=sys.stderr)
    subprocess.run([sys.executable, os.path.join(HERE, "make_segment.py"), "--size", size, "--out", path],
                   check=True)


def warm(path: str) -> None:
    """Read the file once so every measurement starts from the page cache."""
    with open(path, "rb", buffering=0) as stream:
        buf = bytearray(8 << 20)
        while stream.readinto(buf):
            pass


def _time_v_field(text: str, name: str) -> str:
    match = re.search(rf"^\s*{re.escape(name)}: (.*)$", text, re.MULTILINE)
    return match.group(1) if match else ""


def _busy_seconds() -> float:
    """CPU time every process on the machine has used so far (Linux /proc/stat), or 0 elsewhere."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(field) for field in stat.readline().split()[1:9]]
    except OSError:
        return 0.0
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")   # less idle and iowait


def whole_process(command: list[str], repeat: int, quiet_limit: float) -> dict:
    """Best wall time, peak RSS and CPU share of ``command`` as a whole process.

    ``others_s`` is the CPU time other processes used while the best run ran.
    On a shared machine a run that had to share the cores is no measurement: a
    run during which others used more than ``quiet_limit`` CPU seconds is run
    again (up to four times ``repeat`` runs in all); ``disturbed`` counts them.
    """
    walls, rss, cpu, others, disturbed = [], 0, [], [], 0
    while len(walls) < repeat and len(walls) + disturbed < 4 * repeat:
        busy = _busy_seconds()
        started = time.perf_counter()
        done = subprocess.run([TIME, "-v", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
                              text=True, cwd=ROOT)
        wall = time.perf_counter() - started
        busy = _busy_seconds() - busy
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
        seconds = float(_time_v_field(done.stderr, "User time (seconds)") or 0) + \
            float(_time_v_field(done.stderr, "System time (seconds)") or 0)
        if busy - seconds > quiet_limit and len(walls) + disturbed < 4 * repeat - 1:
            disturbed += 1
            continue
        walls.append(wall)
        rss = max(rss, int(_time_v_field(done.stderr, "Maximum resident set size (kbytes)") or 0))
        cpu.append(seconds / wall)
        others.append(max(0.0, busy - seconds))
    best = min(range(len(walls)), key=walls.__getitem__)
    return {"best_s": round(walls[best], 4), "median_s": round(sorted(walls)[len(walls) // 2], 4),
            "peak_rss_mib": round(rss / 1024, 1), "cpu_pct": round(100 * cpu[best]),
            "others_s": round(others[best], 2), "disturbed": disturbed}


def _own_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _verify(path: str, read_ahead: bool) -> FileSummary:
    summary = FileSummary(path, os.path.getsize(path))
    with open(path, "rb", buffering=0) as stream:
        for _ in verify_stream(stream, summary, VerifyOptions(), read_ahead=read_ahead):
            pass
    return summary


def in_process(path: str, read_ahead: bool, repeat: int, quiet_limit: float) -> dict:
    """Best and median time of verify-crc's walk in this process; disturbed runs are redone as in whole_process."""
    times, summary, disturbed = [], None, 0
    while len(times) < repeat and len(times) + disturbed < 4 * repeat:
        busy, own = _busy_seconds(), _own_seconds()
        started = time.perf_counter()
        summary = _verify(path, read_ahead)
        elapsed = time.perf_counter() - started
        if (_busy_seconds() - busy) - (_own_seconds() - own) > quiet_limit and \
                len(times) + disturbed < 4 * repeat - 1:
            disturbed += 1
            continue
        times.append(elapsed)
    assert summary is not None and not summary.findings, summary
    return {"best_s": round(min(times), 4), "median_s": round(sorted(times)[len(times) // 2], 4),
            "entries": summary.batches, "records": summary.records, "disturbed": disturbed}


def has_verify_crc() -> bool:
    kbatch = shutil.which("kbatch") or os.path.join(os.path.dirname(sys.executable), "kbatch")
    if not os.path.exists(kbatch):
        return False
    return subprocess.run([kbatch, "verify-crc", "--help"], capture_output=True, check=False).returncode == 0


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", default=DEFAULT_FILE, help=f"segment to scan (default {DEFAULT_FILE})")
    parser.add_argument("--size", default="1G", help="size to generate when the file is missing (default 1G)")
    parser.add_argument("--repeat", type=int, default=7, help="runs of each measurement; the best counts")
    parser.add_argument("--quiet-limit", type=float, default=0.05, metavar="SECONDS",
                        help="re-run a whole-process run during which other processes used more CPU (default 0.05)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)

    ensure_segment(args.file, args.size)
    warm(args.file)
    size = os.path.getsize(args.file)
    python = sys.executable
    results: dict = {"file": args.file, "bytes": size, "repeat": args.repeat, "cpus": os.cpu_count(),
                     "in_process": {}, "whole_process": {}}
    for read_ahead in (False, True):
        results["in_process"][f"verify_stream read_ahead={read_ahead}"] = in_process(args.file, read_ahead,
                                                                                     args.repeat, args.quiet_limit)
    commands = {
        "cat FILE > /dev/null": ["cat", args.file],
        "python: crc32c(read whole file)": [python, "-c", CRC_ONE_CALL, args.file],
        "python -m kbatch verify-crc --jobs 1 FILE": [python, "-m", "kbatch", "verify-crc", "--jobs", "1", args.file],
        "python -c 'import kbatch.ops.verify' (start-up)": [python, "-c", "import kbatch.ops.verify"],
    }
    if has_verify_crc():
        commands["kbatch verify-crc FILE"] = [os.path.join(os.path.dirname(python), "kbatch"), "verify-crc",
                                              args.file]
    for label, command in commands.items():
        results["whole_process"][label] = whole_process(command, args.repeat, args.quiet_limit)

    if args.json:
        print(json.dumps(results, indent=2))
        return results
    print(f"{args.file}: {size / 2**30:.2f} GiB, {results['in_process']['verify_stream read_ahead=False']['entries']} "
          f"entries; best of {args.repeat}, page cache warm, {os.cpu_count()} CPUs")
    print("in-process")
    for label, row in results["in_process"].items():
        print(f"  {label:<48} {row['best_s']:>7.3f} s   (median {row['median_s']:.3f} s)   "
              f"({row['disturbed']} disturbed runs redone)")
    print("whole process (/usr/bin/time -v)")
    for label, row in results["whole_process"].items():
        print(f"  {label:<48} {row['best_s']:>7.3f} s   (median {row['median_s']:.3f} s)   "
              f"peak RSS {row['peak_rss_mib']:>7.1f} MiB   CPU {row['cpu_pct']:>3}%   "
              f"others {row['others_s']:.2f} s ({row['disturbed']} disturbed runs redone)")
    return results


if __name__ == "__main__":
    main()
