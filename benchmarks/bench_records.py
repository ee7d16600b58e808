#!/usr/bin/env python3
"""Records at decoder speed: kbatch against aiokafka's Cython reader and kafka-python, side by side.

One command makes the data and prints a table per file: every tool on the same segment in the same run,
the segment read into the page cache before each run, each run ``--repeat`` times as a whole process under
/usr/bin/time (as from a user's shell: see bench_dump.USER_ENVIRONMENT), with the median, min-max,
peak RSS and the ratio to aiokafka's full decode (the median of the ratios round by round: the commands
run in turn, so a drift in the machine's speed cancels out).  The peers decode in-process: their own timing
of the decode (after imports and reading the file) is the figure the targets compare with, shown beside
their whole-process time::

    python benchmarks/bench_records.py                   # 256 MiB each: 100 B records, 1 KiB records, mixed codecs
    python benchmarks/bench_records.py --size 64M --repeat 3 --files 100B
    python benchmarks/bench_records.py --json results.json
    python benchmarks/bench_records.py --baseline OLD/kbatch # another build's rows beside these, round by round

Needs aiokafka (``pip install aiokafka``): a benchmark peer only, never a dependency of kbatch.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_dump import (USER_ENVIRONMENT, find_kbatch, format_table, kbatch_version, parse_common,  # noqa: E402
                        timed, warm)
from make_segment import build_templates, parse_size, write_segment  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "records")

# A peer's full decode: every batch's CRC, then the key, value and headers of every record.
PEER = """
import sys, time
from {module} import MemoryRecords
data = open(sys.argv[1], 'rb').read()
start = time.perf_counter()
records, n = MemoryRecords(data), 0
while records.has_next():
    batch = records.next_batch()
    assert batch.validate_crc()
    for record in batch:
        record.key, record.value, record.headers
        n += 1
open(sys.argv[2], 'w').write(f'{{time.perf_counter() - start}} {{n}}')
"""
PEERS = {"aiokafka (Cython)": "aiokafka.record._crecords", "kafka-python": "kafka.record.memory_records"}

# name -> (codec, value bytes): ~100 B records, ~1 KiB records, and every codec in one segment.
FILES = {"100B": ("none", 60), "1KiB": ("none", 1000), "mixed-codec": ("mixed", None)}


def make_file(name: str, size: int, quiet: bool) -> str:
    codec, value_bytes = FILES[name]
    # Not TOPIC-N: verify-crc --deep cross-checks a directory so named whose every segment it is given, as
    # a partition (a second walk of the log), and this benchmark times the segment's own reading.
    path = os.path.join(DATA, f"{name}-{size}-bytes", "00000000000000000000.log")
    if not os.path.exists(path):
        if not quiet:
            print(f"generating {path}", file=sys.stderr)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_segment(path, size, build_templates(1, codec, 16 * 1024, 16, value_bytes=value_bytes), 1)
    return path


def stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def bench(commands: list[tuple], repeat: int, data: str) -> list[dict]:
    """Time each (name, argv, inner_path) ``repeat`` times, the commands in turn round by round: these
    machines' speed drifts over minutes (a kbatch figure moved 0.15 -> 0.30 s within one sweep), and a
    drift then shows in every command's spread instead of in the ratios between them."""
    runs = {name: ([], [], []) for name, _, _ in commands}
    for _ in range(repeat):
        for name, argv, inner_path in commands:
            walls, rss, inner = runs[name]
            # Read the segment into the page cache again before every run: this kind of machine reclaims
            # idle page cache within seconds (about half a 256 MiB file was gone between two runs), and a
            # whole process that meets a cold file is timed on the disk, where a peer's in-process figure is not.
            warm(data)
            wall, peak = timed(argv)
            walls.append(wall)
            rss.append(peak)
            if inner_path:
                seconds, count = open(inner_path).read().split()
                inner.append((float(seconds), int(count)))
    def figures(name):   # what a command is compared by: a peer's in-process decode, else the whole process
        walls, _, inner = runs[name]
        return [seconds for seconds, _ in inner] if inner else walls

    first = figures(commands[0][0])
    results = []
    for name, argv, _ in commands:
        walls, rss, inner = runs[name]
        out = {"name": name, "argv": argv, "wall": stats(walls), "peak_rss_kib": max(rss),
               # round by round against the first command (aiokafka's decode), so a drift cancels out
               "vs_first": stats([mine / theirs for mine, theirs in zip(figures(name), first)])}
        if inner:
            out["in_process"] = stats([seconds for seconds, _ in inner])
            out["records"] = inner[-1][1]
        results.append(out)
    return results


def warm_start(kbatch: list[str]) -> None:
    """Run every command timed here once on a shipped fixture, untimed: Python's bytecode cache of kbatch
    is then written, as it is after a user's first run."""
    fixture = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                           "v2-none.log")
    for args in (["--help"], ["verify-crc", "--deep", fixture], ["dump", "--records", "--format", "jsonl", fixture]):
        subprocess.run([*kbatch, *args], stdout=subprocess.DEVNULL, env=USER_ENVIRONMENT, check=True)


def bench_file(kbatch: list[str], path: str, repeat: int, baseline: list[str] | None = None) -> list[dict]:
    """Every command on ``path``; with a ``baseline`` kbatch, its run of each kbatch command beside ours."""
    warm(path)
    warm_start(kbatch)
    builds = [("", kbatch)]
    if baseline:
        warm_start(baseline)
        builds.append((" [baseline]", baseline))
    with tempfile.TemporaryDirectory() as scratch:
        commands = [(f"{name} full decode", [sys.executable, "-c", PEER.format(module=module), path,
                                              os.path.join(scratch, name.split()[0])],
                     os.path.join(scratch, name.split()[0]))
                    for name, module in PEERS.items()]
        # By default kbatch reads a large file in parts, a process per CPU (kbatch/walk/parts.py); --jobs 1: one walk.
        for name, args in [("kbatch verify-crc", ["verify-crc"]),
                           ("kbatch verify-crc --deep", ["verify-crc", "--deep"]),
                           ("kbatch verify-crc --deep --jobs 1", ["verify-crc", "--deep", "--jobs", "1"]),
                           ("kbatch dump --format jsonl", ["dump", "--format", "jsonl"]),
                           ("kbatch dump --format jsonl --jobs 1", ["dump", "--format", "jsonl", "--jobs", "1"]),
                           ("kbatch dump --records --format jsonl", ["dump", "--records", "--format", "jsonl"]),
                           ("kbatch dump --records --format jsonl --jobs 1",
                            ["dump", "--records", "--format", "jsonl", "--jobs", "1"]),
                           ("kbatch --help", ["--help"])]:
            for label, build in builds:
                commands.append((name + label, [*build, *args] + ([] if args == ["--help"] else [path]), None))
        return bench(commands, repeat, path)


def report(path: str, results: list[dict]) -> str:
    records = next(result["records"] for result in results if "records" in result)
    assert results[0]["name"].startswith("aiokafka"), "the ratios are to the first command's figures"
    body = []
    for result in results:
        figure = result.get("in_process", result["wall"])
        body.append([result["name"] + (" (in-process)" if "in_process" in result else ""),
                     f"{figure['median']:.3f}", f"{figure['min']:.3f}-{figure['max']:.3f}",
                     f"{result['wall']['median']:.3f}", f"{result['peak_rss_kib'] / 1024:.0f}",
                     f"{records / figure['median'] / 1e6:.2f}" if "help" not in result["name"] else "",
                     f"{result['vs_first']['median']:.2f}x"])
    header = ["command", "median s", "min-max s", "whole process s", "peak RSS MiB", "M records/s",
              "vs aiokafka"]
    size = os.path.getsize(path)
    return f"{path}: {size / 2**20:.0f} MiB, {records} records\n" + format_table(header, body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="256M", help="segment size (default 256M)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (default 5; medians shown)")
    parser.add_argument("--files", default=",".join(FILES), help=f"which of {', '.join(FILES)} (comma-separated)")
    parser.add_argument("--baseline", metavar="KBATCH",
                        help="another kbatch executable (an older build) whose rows run beside each kbatch row")
    args = parse_common(parser, argv)
    kbatch = find_kbatch(args.kbatch)
    print(f"kbatch {kbatch_version()}; {args.repeat} runs each, page cache warmed before each", file=sys.stderr)
    everything = {}
    for name in args.files.split(","):
        path = make_file(name, parse_size(args.size), args.quiet)
        results = bench_file(kbatch, path, args.repeat, args.baseline and [args.baseline])
        everything[name] = results
        print(report(path, results) + "\n")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"kbatch": kbatch_version(), "repeat": args.repeat, "files": everything}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
