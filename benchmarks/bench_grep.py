#!/usr/bin/env python3
"""How fast ``kbatch grep`` finds records, next to ``verify-crc --deep`` and to ``dump | jq`` / ``dump | grep``.

On a segment from make_segment.py (256 MiB of ~100-byte records by default), already in the page cache,
each command runs as a whole process, stdout to /dev/null, best of ``--repeat``:

* ``verify-crc --deep``   every record walked and checked: the yardstick
* ``grep --key order-42``   a key looked for (a literal: the compiled walk's byte search)
* ``grep --value REGEX``    a regular expression on values (``--regex``; rare matches by default)
* ``dump | jq``             ``dump --records --format jsonl FILE | jq -c 'select(...)'`` for the same key
* ``dump | grep``           ``dump --records --format jsonl FILE | grep -F order-42``

and prints wall seconds, CPU seconds (user + system of the whole pipeline, the processes it started
included), MB/s and each one's throughput as a share of verify-crc --deep's, by wall time and by CPU time
(on a shared machine the wall figure includes waiting for a core; the CPU one is the cost).  Every grep
run's lines are counted and held to the dump | jq run's where they ask the same thing.

Examples::

    python benchmarks/bench_grep.py                       # 256 MiB, best of 3
    python benchmarks/bench_grep.py --size 1G --repeat 5
    python benchmarks/bench_grep.py --no-pipes             # kbatch alone (the pipelines take a minute or more)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_verify import ensure_segment, warm  # noqa: E402

DEFAULT_FILE = os.path.join(HERE, "data", "grep", "00000000000000000000.log")
DEFAULT_REGEX = '"id":"ffff[0-9a-f]{12}"'


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(command: str, repeat: int) -> tuple[float, float, str]:
    """(best wall seconds, best CPU seconds, the output) of a shell command, over ``repeat`` runs."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    wall_best = cpu_best = None
    out = ""
    for _ in range(repeat):
        cpu = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - started
        cpu = _children_cpu() - cpu
        if done.returncode not in (0, 1):
            raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr[-2000:]}")
        wall_best = wall if wall_best is None else min(wall_best, wall)
        cpu_best = cpu if cpu_best is None else min(cpu_best, cpu)
        out = done.stdout
    return wall_best, cpu_best, out


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
        wall, cpu, out = run(command, args.repeat)
        lines = len(out.splitlines())
        if asks is not None:
            counts.setdefault(asks, []).append((name, lines))
        yardstick = yardstick or (wall, cpu)
        rows.append((name, f"{wall:.3f}", f"{cpu:.3f}", f"{size / wall / 1e6:.0f}", f"{yardstick[0] / wall:.2f}",
                     f"{yardstick[1] / cpu:.2f}", str(lines)))
    header = ("command", "wall s", "CPU s", "MB/s", "x verify (wall)", "x verify (CPU)", "lines")
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
