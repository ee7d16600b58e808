#!/usr/bin/env python3
"""How fast ``kbatch stats`` accounts for a segment's bytes, and whether its memory stays flat.

Times, as whole processes under ``/usr/bin/time -v`` (best wall of ``--repeat``
runs, largest peak RSS), on v2 segments made by make_segment.py:

* ``kbatch stats --format json`` on a small and a large segment: the peak RSS of
  the two must be about the same (constant memory), and the categories must add
  up to each file's size;
* ``kbatch dump --format jsonl --records`` on the large one, for scale (stats
  decodes every record too);
* ``kbatch stats --what-if`` on a small segment of its own: it encodes every
  record four more times, so it is timed on less.

Examples::

    python benchmarks/bench_stats.py                              # 64 MiB and 256 MiB, what-if on 8 MiB
    python benchmarks/bench_stats.py --size 1G --repeat 1
    python benchmarks/bench_stats.py --codec gzip --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_dump  # noqa: E402  (find_kbatch, kbatch_version, header_walk, warm, best_of, table)


def _segment(size: str, codec: str, quiet: bool) -> str:
    path = os.path.join(HERE, "data", "stats", f"{codec}-{size}", "00000000000000000000.log")
    bench_dump.ensure_segment(path, size, codec, quiet)
    return path


def _check_accounting(kbatch: list[str], path: str) -> None:
    """The categories kbatch stats reports add up to the file size (one untimed run)."""
    report = json.loads(subprocess.run([*kbatch, "stats", "--format", "json", path], capture_output=True,
                                       check=True).stdout)
    if report["total_bytes"] != os.path.getsize(path) or report["damaged"]:
        raise SystemExit(f"{path}: stats accounts for {report['total_bytes']} bytes of {os.path.getsize(path)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="256M", help="the large segment (default 256M)")
    parser.add_argument("--small-size", default="64M", help="the small segment (default 64M)")
    parser.add_argument("--what-if-size", default="8M", help="the segment --what-if is timed on (default 8M)")
    parser.add_argument("--codec", default="none", help="codec of the generated segments (default none)")
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="runs per command; best wall kept")
    args = bench_dump.parse_common(parser, argv)
    kbatch = bench_dump.find_kbatch(args.kbatch)
    runs = []
    for size, what_if in ((args.small_size, False), (args.size, False), (args.what_if_size, True)):
        path = _segment(size, args.codec, args.quiet)
        bench_dump.warm(path)
        _check_accounting(kbatch, path)
        counts = bench_dump.header_walk(path)
        commands = [(f"kbatch stats ({size})", [*kbatch, "stats", "--format", "json", path])]
        if size == args.size:
            commands.append((f"kbatch dump --records ({size})", [*kbatch, "dump", "--format", "jsonl", "--records",
                                                                  path]))
        if what_if:
            commands = [(f"kbatch stats --what-if ({size})", [*kbatch, "stats", "--what-if", "--format", "json",
                                                               path])]
        runs += [bench_dump.best_of(name, command, path, counts, args.repeat, args.quiet)
                 for name, command in commands]
    print(f"kbatch {bench_dump.kbatch_version()}, codec {args.codec}")
    print(bench_dump.table(runs))
    small, large = runs[0], runs[1]
    print(f"peak RSS: {small.rss_mib:.1f} MiB for {args.small_size}, {large.rss_mib:.1f} MiB for {args.size}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump([vars(run) for run in runs], out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
