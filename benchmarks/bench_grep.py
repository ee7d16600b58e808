#!/usr/bin/env python3
"""How fast ``kbatch grep`` finds records, next to ``verify-crc --deep`` and to ``dump | jq`` / ``dump | grep``.

On a segment from make_segment.py (256 MiB of ~100-byte records by default), already in the page cache,
each command runs as a whole process, stdout to /dev/null, best of ``--repeat``:

* ``verify-crc --deep``   every record walked and checked: the yardstick
* ``grep --key order-42``   a key looked for (a literal: the compiled walk's byte search)
* ``grep --value REGEX``    a regular expression on values (``--regex``; rare matches by default)
* ``dump | jq``             ``dump --records --format jsonl FILE | jq -c 'select(...)'`` for the same key
* ``dump | grep``           ``dump --records --format jsonl FILE | grep -F order-42``

and prints wall seconds, MB/s and each one's throughput as a share of verify-crc --deep's.  Every grep run's
lines are counted and held to the dump | jq run's where they ask the same thing.  The machine should be idle
(``others`` is the CPU time other processes took meanwhile, as bench_verify.py reports it).

Examples::

    python benchmarks/bench_grep.py                       # 256 MiB, best of 3
    python benchmarks/bench_grep.py --size 1G --repeat 5
    python benchmarks/bench_grep.py --no-pipes             # kbatch alone (the pipelines take a minute or more)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_verify import _busy_seconds, ensure_segment, warm  # noqa: E402

DEFAULT_FILE = os.path.join(HERE, "data", "grep", "00000000000000000000.log")
DEFAULT_REGEX = '"id":"ffff[0-9a-f]{12}"'


def run(command: str, repeat: int) -> tuple[float, float, str]:
    """(best wall seconds, others' CPU seconds in that run, the output of the last run) of a shell command."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    best, others, out = None, 0.0, ""
    for _ in range(repeat):
        busy = _busy_seconds()
        started = time.perf_counter()
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr[-2000:]}")
        if best is None or wall < best:
            ours = done.stdout  # (the CPU of our own run is in busy too: reported as a whole)
            best, others, out = wall, max(0.0, _busy_seconds() - busy), ours
    return best, others, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default=DEFAULT_FILE)
    parser.add_argument("--size", default="256M", help="of the segment made when --file is missing")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--key", default="order-42")
    parser.add_argument("--regex", default=DEFAULT_REGEX)
    parser.add_argument("--no-pipes", action="store_true", help="skip dump | jq and dump | grep")
    args = parser.parse_args(argv)
    os.makedirs(os.path.dirname(args.file), exist_ok=True)
    ensure_segment(args.file, args.size)
    warm(args.file)
    size = os.path.getsize(args.file)
    kbatch = f"{sys.executable} -m kbatch"
    path = args.file
    regex = args.regex.replace("'", "'\\''")
    commands = [
        ("verify-crc --deep", f"{kbatch} verify-crc --deep {path} > /dev/null", None),
        (f"grep --key {args.key}", f"{kbatch} grep --key {args.key} {path}", "key"),
        (f"grep --value '{args.regex}'", f"{kbatch} grep --value '{regex}' {path}", "regex"),
    ]
    if not args.no_pipes:
        jq_key = f'select(.type == "batch") | .records[]? | select(.key.utf8? // "" | contains("{args.key}"))'
        commands += [
            ("dump | jq (key)", f"{kbatch} dump --records --format jsonl {path} | jq -c '{jq_key}'", "key"),
            ("dump | grep -F (key)", f"{kbatch} dump --records --format jsonl {path} | grep -F -- '{args.key}'", None),
        ]
    rows, counts, yardstick = [], {}, None
    for name, command, asks in commands:
        wall, others, out = run(command, args.repeat)
        lines = len(out.splitlines())
        if asks is not None:
            counts.setdefault(asks, []).append((name, lines))
        rate = size / wall / 1e6
        yardstick = yardstick or rate
        rows.append((name, f"{wall:.3f}", f"{rate:.0f}", f"{rate / yardstick:.2f}", str(lines), f"{others:.2f}"))
    header = ("command", "wall s", "MB/s", "x verify", "lines", "others s")
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
    print(f"{path}: {size} bytes, best of {args.repeat}")
    for row in [header] + rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    for asks, seen in counts.items():
        if len({lines for _, lines in seen}) > 1:
            print(f"MISMATCH ({asks}): {seen}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
