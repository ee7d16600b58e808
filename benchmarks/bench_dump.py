#!/usr/bin/env python3
"""Time ``kbatch dump`` as whole processes on a large segment, against ``cat`` as the floor.

Runs, each under ``/usr/bin/time -v`` with stdout to /dev/null:

* ``cat FILE``                                     the floor: reading the bytes
* ``kbatch dump --format jsonl FILE``              the listing (headers + CRC of every batch)
* ``kbatch dump --format jsonl --records FILE``    every record decoded and written out

and prints wall time, peak RSS, batches/s, records/s and MiB/s for each (best
wall time of ``--repeat`` runs; the peak RSS is the largest seen).  The batch
and record counts come from kbatch's own jsonl summary line (one untimed
listing pass), cross-checked against an independent walk of the batch headers.

It then checks that memory does not grow with the input: the same commands on
a 256 MiB segment and on the main one, both peak RSS figures side by side.

Segments that are missing are generated with make_segment.py.  The page cache
is warmed with one untimed ``cat`` first, so every figure is for a file in
memory: kbatch's own cost, not the disk's.

Examples::

    python benchmarks/bench_dump.py                     # 1 GiB + 256 MiB, best of 3
    python benchmarks/bench_dump.py --repeat 1 --no-rss-check
    python benchmarks/bench_dump.py --file /var/lib/kafka/topic-0/00000000000000000000.log
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_segment  # noqa: E402  (the generator next to this file)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
DEFAULT_FILE = os.path.join(DATA, "00000000000000000000.log")
DEFAULT_SMALL = os.path.join(DATA, "256m", "00000000000000000000.log")
MIB = 1024 * 1024

_ELAPSED = re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)")
_MAXRSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_EXIT = re.compile(r"Exit status: (\d+)")


@dataclass
class Run:
    name: str
    argv: list[str]
    file: str
    size: int
    wall_s: float
    peak_rss_kib: int
    batches: int
    records: int
    runs: int

    @property
    def rss_mib(self) -> float:
        return self.peak_rss_kib / 1024

    def row(self) -> list[str]:
        return [self.name, f"{self.wall_s:.2f}", f"{self.rss_mib:.1f}", f"{self.batches / self.wall_s:,.0f}",
                f"{self.records / self.wall_s:,.0f}", f"{self.size / MIB / self.wall_s:,.1f}"]


def find_kbatch(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    beside = os.path.join(os.path.dirname(sys.executable), "kbatch")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("kbatch")
    if found:
        return [found]
    return [sys.executable, "-c", "from kbatch.cli import main; main()"]


# Children run as from a user's shell: a CI or sandbox environment that sets these makes every kbatch
# start compile its modules again (no bytecode cache: ~40 ms a start) and write stdout unbuffered.
USER_ENVIRONMENT = {name: value for name, value in os.environ.items()
                    if name not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}


def timed(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS KiB) of one run of ``argv``, stdout to /dev/null, under /usr/bin/time -v.

    The RSS is time's "Maximum resident set size".  The wall time is time's
    "Elapsed (wall clock)" figure too, but that has a 10 ms resolution (a warm
    ``cat`` of 64 MiB reads as 0:00.00), so the figure kept is the same
    interval measured here with perf_counter (it includes the ~1 ms it takes
    /usr/bin/time to start); the two are checked against each other.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report, open(os.devnull, "wb") as null:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-v", "-o", report.name, *argv], stdout=null,
                              stderr=subprocess.PIPE, env=USER_ENVIRONMENT)
        measured = time.perf_counter() - started
        text = report.read()
    status = _EXIT.search(text)
    if done.returncode not in (0,) or (status and status.group(1) != "0"):
        raise SystemExit(f"{' '.join(argv)} failed (exit {done.returncode}):\n"
                         f"{done.stderr.decode(errors='replace')[-2000:]}")
    hours, minutes, seconds = _ELAPSED.search(text).groups()
    wall = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    if abs(measured - wall) > 0.05 + 0.02 * wall:
        print(f"warning: /usr/bin/time says {wall:.2f} s, perf_counter {measured:.3f} s", file=sys.stderr)
    return measured, int(_MAXRSS.search(text).group(1))


def best_of(name: str, argv: list[str], path: str, counts: tuple[int, int], repeat: int, quiet: bool) -> Run:
    walls, rss = [], []
    for attempt in range(repeat):
        wall, peak = timed(argv)
        walls.append(wall)
        rss.append(peak)
        if not quiet:
            print(f"  {name} [{os.path.basename(os.path.dirname(path)) or '.'}/{os.path.basename(path)}] "
                  f"run {attempt + 1}/{repeat}: {wall:.2f} s, {peak / 1024:.1f} MiB", file=sys.stderr)
    return Run(name, argv, path, os.path.getsize(path), min(walls), max(rss), *counts, repeat)


def header_walk(path: str) -> tuple[int, int]:
    """(batches, records) by reading each v2 batch header: independent of kbatch, no CRC, no records."""
    batches = records = 0
    head = struct.Struct(">qiibIhiqqqhii")   # DefaultRecordBatch's 61-byte header
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        pos = 0
        while pos + head.size <= size:
            stream.seek(pos)
            fields = head.unpack(stream.read(head.size))
            if fields[3] != 2 or fields[1] < head.size - 12:
                raise SystemExit(f"{path}: no v2 batch at {pos}; the benchmark wants a clean v2 segment")
            batches += 1
            records += fields[12]
            pos += 12 + fields[1]
    return batches, records


def summary_counts(kbatch: list[str], path: str) -> tuple[int, int]:
    """(batch_count, record_count) from kbatch's jsonl summary line (one untimed listing pass)."""
    with subprocess.Popen([*kbatch, "dump", "--format", "jsonl", path], stdout=subprocess.PIPE) as proc:
        last = None
        for line in proc.stdout:
            last = line
    summary = json.loads(last)
    if summary.get("type") != "summary" or proc.returncode != 0:
        raise SystemExit(f"{path}: kbatch found damage or wrote no summary (exit {proc.returncode}): {last!r}")
    return summary["batch_count"], summary["record_count"]


def ensure_segment(path: str, size: str, codec: str, quiet: bool) -> None:
    if os.path.exists(path):
        return
    print(f"generating {path} ({size}, codec {codec})", file=sys.stderr)
    make_segment.main(["--size", size, "--out", path, "--codec", codec] + (["--quiet"] if quiet else []))


def warm(path: str) -> None:
    with open(os.devnull, "wb") as null:
        subprocess.run(["cat", path], stdout=null, check=True)


def bench_file(kbatch: list[str], path: str, repeat: int, with_records: bool, quiet: bool,
               check_summary: bool) -> list[Run]:
    warm(path)
    counts = header_walk(path)
    if check_summary:
        from_kbatch = summary_counts(kbatch, path)
        if from_kbatch != counts:
            raise SystemExit(f"{path}: kbatch's summary says {from_kbatch} (batches, records), "
                             f"the header walk {counts}")
    commands = [("cat", ["cat", path]),
                ("kbatch dump --format jsonl", [*kbatch, "dump", "--format", "jsonl", path])]
    if with_records:
        commands.append(("kbatch dump --format jsonl --records",
                         [*kbatch, "dump", "--format", "jsonl", "--records", path]))
    return [best_of(name, argv, path, counts, repeat, quiet) for name, argv in commands]


def kbatch_version() -> str:
    """The commit of the kbatch being timed (and whether kbatch/ has changes not committed)."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        commit = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--", "kbatch"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return commit + (" with uncommitted changes in kbatch/" if dirty else "")


def table(runs: list[Run]) -> str:
    header = ["command", "wall s", "peak RSS MiB", "batches/s", "records/s", "MiB/s"]
    return format_table(header, [run.row() for run in runs])


def parse_common(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The options every benchmark has (--kbatch, --json, --quiet), parsed; GNU time must be there."""
    parser.add_argument("--kbatch", help="the kbatch executable (default: the one beside this Python)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--quiet", "-q", action="store_true", help="only the tables")
    args = parser.parse_args(argv)
    if not os.access("/usr/bin/time", os.X_OK):
        parser.error("needs GNU time at /usr/bin/time (apt-get install time)")
    return args


def format_table(header: list[str], body: list[list[str]]) -> str:
    """A plain-text table: the first column left-aligned, the figures right-aligned (the benchmarks share it)."""
    rows = [header] + body
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                               for i, (cell, width) in enumerate(zip(row, widths))))
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", default=DEFAULT_FILE, help=f"segment to time (default {DEFAULT_FILE})")
    parser.add_argument("--size", default="1G", help="size to generate --file at when missing (default 1G)")
    parser.add_argument("--codec", default="none", choices=sorted(make_segment.CODECS),
                        help="codec to generate missing segments with (default none)")
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="runs per command; best wall kept")
    parser.add_argument("--no-records", action="store_true", help="skip the --records runs (the slow ones)")
    parser.add_argument("--small-file", default=DEFAULT_SMALL,
                        help=f"segment for the memory check (default {DEFAULT_SMALL})")
    parser.add_argument("--small-size", default="256M", help="size to generate --small-file at (default 256M)")
    parser.add_argument("--no-rss-check", action="store_true", help="skip the small-vs-large memory check")
    parser.add_argument("--no-summary-check", action="store_true",
                        help="count batches by the header walk only (skip the untimed kbatch pass)")
    args = parse_common(parser, argv)
    kbatch = find_kbatch(args.kbatch)
    version = kbatch_version()
    ensure_segment(args.file, args.size, args.codec, args.quiet)
    runs = bench_file(kbatch, args.file, args.repeat, not args.no_records, args.quiet, not args.no_summary_check)
    main_runs = runs
    print(f"\nkbatch {version}, {' '.join(kbatch)}")
    print(f"{args.file}: {os.path.getsize(args.file):,} bytes, {runs[0].batches:,} batches, "
          f"{runs[0].records:,} records; best of {args.repeat}, page cache warm")
    print(table(runs), flush=True)

    if not args.no_rss_check:
        ensure_segment(args.small_file, args.small_size, args.codec, args.quiet)
        small = bench_file(kbatch, args.small_file, args.repeat, not args.no_records, args.quiet,
                           not args.no_summary_check)
        runs = runs + small
        print(f"\n{args.small_file}: {os.path.getsize(args.small_file):,} bytes, {small[0].batches:,} batches, "
              f"{small[0].records:,} records; best of {args.repeat}, page cache warm")
        print(table(small))
        print(f"\npeak RSS against input size ({os.path.getsize(args.small_file) / MIB:,.0f} MiB vs "
              f"{os.path.getsize(args.file) / MIB:,.0f} MiB):")
        for little, big in zip(small, main_runs):
            if little.name == "cat":
                continue
            growth = big.rss_mib - little.rss_mib
            verdict = "flat" if growth <= 8 else "GROWS with the input"
            print(f"  {big.name:<38} {little.rss_mib:7.1f} MiB -> {big.rss_mib:7.1f} MiB "
                  f"({growth:+.1f} MiB): {verdict}")

    if kbatch_version() != version:
        print(f"\nwarning: kbatch changed while it was timed (was {version}, now {kbatch_version()})")

    if args.json:
        with open(args.json, "w") as out:
            json.dump({"kbatch": version, "runs": [{**asdict(run), "rss_mib": run.rss_mib} for run in runs]},
                      out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
