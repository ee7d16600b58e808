#!/usr/bin/env python3
"""Time ``kbatch diff`` as whole processes on two large segments that differ in exactly one record.

The pair: a segment from make_segment.py (A) and a copy of it (B) in which one
byte of one record's value, in the middle batch, is changed and that batch's
CRC-32C (bytes 21..end of the batch) recomputed, so both sides verify and the
only differences are that record's value and that batch's ``crc`` field.

Runs, each under ``/usr/bin/time -v``:

* ``cat A B``                              the floor: reading both inputs once
* ``kbatch diff A B``                      the table (stdout to /dev/null)
* ``kbatch diff --format jsonl A B``       jsonl (stdout, a few hundred bytes, kept and checked)

and prints wall time (best of ``--repeat``), peak RSS (the largest; ``low..high``
when the runs disagree by more than 0.5 MiB, which they do), MiB/s of
input read (A and B together), records compared per second, CPU seconds, and
how busy the rest of the machine was meanwhile (``other``: CPU time of all
other processes, from /proc/stat, in cores).  Every jsonl run's summary line
must say exactly one record changed (``records.changed == 1``), one batch
changed, nothing on one side only, nothing damaged, every other record the
same, and name the record and the first differing byte that were planted.

It then checks that memory does not grow with the input: the same on a
256 MiB pair, both peak RSS figures side by side.

Examples::

    python benchmarks/bench_diff.py                      # 1 GiB + 256 MiB pairs, best of 3 (~15 minutes)
    python benchmarks/bench_diff.py --repeat 1 --no-rss-check
    python benchmarks/bench_diff.py --size 64M --small-size 16M --repeat 1   # a quick look
    python benchmarks/bench_diff.py --fixed-mmap-threshold   # the same with glibc's mmap threshold pinned
"""

from __future__ import annotations

import argparse
import hashlib
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

import crc32c

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_dump  # noqa: E402  (find_kbatch, kbatch_version, header_walk, warm)
import make_segment  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "diff")
MIB = 1024 * 1024

_ELAPSED = re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)")
_MAXRSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_USER = re.compile(r"User time \(seconds\): (\d+(?:\.\d+)?)")
_SYS = re.compile(r"System time \(seconds\): (\d+(?:\.\d+)?)")
_EXIT = re.compile(r"Exit status: (\d+)")

_CRC_POS = 17          # bytes 17..21: the batch CRC-32C (uint32)
_CRC_FROM = 21         # ... computed over bytes 21..end of the batch
_HEADER = 61           # a v2 batch header; the records follow


# -- the machine's own load ------------------------------------------------------------


def cpu_busy_seconds() -> float:
    """CPU seconds all processes have used since boot (every core), from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)      # idle + iowait
    busy = sum(fields[:8]) - idle                                # user nice system idle iowait irq softirq steal
    return busy / os.sysconf("SC_CLK_TCK")


def kbatch_fingerprint() -> str:
    """A digest of kbatch/'s *.py as they are on disk (others may be editing them while this runs)."""
    digest = hashlib.sha256()
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kbatch")
    for folder, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(path[len(root):].encode())
                with open(path, "rb") as source:
                    digest.update(source.read())
    return digest.hexdigest()[:12]


# -- the pair --------------------------------------------------------------------------


@dataclass
class Pair:
    a: str
    b: str
    size: int              # of each side
    batches: int
    records: int
    batch_pos: int         # the batch that was changed
    record_offset: int     # the record whose value was changed
    value_pos: int         # the byte that was changed
    old_byte: int
    new_byte: int
    first_byte: int        # the first byte that differs (a CRC byte, or the value byte)


def _varint(data: bytes | bytearray, pos: int) -> tuple[int, int]:
    """A zigzag varint (Kafka's record fields): (value, position after it)."""
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos


def batch_positions(path: str) -> list[int]:
    """Where each v2 batch starts, by the batch length at bytes 8..12 (batch size = 12 + length)."""
    positions, pos, size = [], 0, os.path.getsize(path)
    with open(path, "rb") as stream:
        while pos + 12 <= size:
            stream.seek(pos + 8)
            (length,) = struct.unpack(">i", stream.read(4))
            positions.append(pos)
            pos += 12 + length
    return positions


def change_one_record(path: str) -> dict:
    """Change one byte of the value of the middle record of the middle batch of ``path``, fix that batch's CRC.

    The records are walked here by their own varints (not by kbatch): length,
    attributes (int8), timestampDelta, offsetDelta, keyLength, key,
    valueLength, value.  The value's first byte is replaced by another
    printable one, so the record still decodes as the same kind of text.
    """
    positions = batch_positions(path)
    batch_pos = positions[len(positions) // 2]
    with open(path, "r+b") as stream:
        stream.seek(batch_pos)
        (base_offset, length) = struct.unpack(">qi", stream.read(12))
        stream.seek(batch_pos)
        batch = bytearray(stream.read(12 + length))
        if batch[16] != 2 or batch[21 + 1] & 0x07:       # magic 2, attributes' codec bits: none
            raise SystemExit(f"{path}: the middle batch is not an uncompressed v2 batch")
        (stored,) = struct.unpack_from(">I", batch, _CRC_POS)
        if stored != crc32c.crc32c(bytes(batch[_CRC_FROM:])):
            raise SystemExit(f"{path}: the middle batch's CRC does not verify before the change")
        (count,) = struct.unpack_from(">i", batch, 57)
        pos = _HEADER
        for index in range(count // 2 + 1):
            record_length, pos = _varint(batch, pos)
            end = pos + record_length
            body = pos + 1                                # attributes
            _, body = _varint(batch, body)               # timestampDelta
            offset_delta, body = _varint(batch, body)
            key_length, body = _varint(batch, body)
            body += max(key_length, 0)
            value_length, body = _varint(batch, body)
            if index == count // 2:
                break
            pos = end
        if value_length < 1:
            raise SystemExit(f"{path}: the chosen record has no value to change")
        old = batch[body]
        new = ord("[") if old != ord("[") else ord("(")
        batch[body] = new
        struct.pack_into(">I", batch, _CRC_POS, crc32c.crc32c(bytes(batch[_CRC_FROM:])))
        stream.seek(batch_pos)
        stream.write(batch)
    return {"batch_pos": batch_pos, "record_offset": base_offset + offset_delta, "value_pos": batch_pos + body,
            "old_byte": old, "new_byte": new}


def differing_bytes(path_a: str, path_b: str, chunk: int = 16 * MIB) -> list[int]:
    """Every position where the two files differ (they are expected to differ in at most five bytes)."""
    out = []
    with open(path_a, "rb") as a, open(path_b, "rb") as b:
        pos = 0
        while True:
            x, y = a.read(chunk), b.read(chunk)
            if x != y:
                out += [pos + i for i, (p, q) in enumerate(zip(x, y)) if p != q]
                if len(x) != len(y) or len(out) > 16:
                    raise SystemExit(f"{path_a} and {path_b} differ in more than the planted change")
            if not x:
                return out
            pos += len(x)


def make_pair(directory: str, size: str, quiet: bool) -> Pair:
    """A (generated) and B (A with one record changed), under ``directory``; reused when both are there."""
    path_a = os.path.join(directory, "a", "00000000000000000000.log")
    path_b = os.path.join(directory, "b", "00000000000000000000.log")
    meta = os.path.join(directory, "pair.json")
    if not (os.path.exists(path_a) and os.path.exists(path_b) and os.path.exists(meta)):
        print(f"generating {directory}/{{a,b}} ({size})", file=sys.stderr)
        make_segment.main(["--size", size, "--out", path_a] + (["--quiet"] if quiet else []))
        os.makedirs(os.path.dirname(path_b), exist_ok=True)
        shutil.copyfile(path_a, path_b)
        change = change_one_record(path_b)
        with open(meta, "w") as out:
            json.dump(change, out)
    with open(meta) as source:
        change = json.load(source)
    differ = differing_bytes(path_a, path_b)
    crc_bytes = range(change["batch_pos"] + _CRC_POS, change["batch_pos"] + _CRC_FROM)
    if change["value_pos"] not in differ or any(p != change["value_pos"] and p not in crc_bytes for p in differ):
        raise SystemExit(f"{path_a} vs {path_b}: bytes {differ} differ; expected the value byte "
                         f"{change['value_pos']} and CRC bytes {list(crc_bytes)}")
    batches, records = bench_dump.header_walk(path_a)
    return Pair(path_a, path_b, os.path.getsize(path_a), batches, records, **change, first_byte=min(differ))


# -- timing ----------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    size: int              # bytes read: A + B
    records: int           # records per side
    wall_s: float
    peak_rss_kib: int
    cpu_s: float           # user + system of the process
    other_cores: float     # CPU of everything else on the machine meanwhile, in cores (0..cores-1)
    runs: int
    walls: list
    rss_kib: list          # every run's peak RSS (it varies from run to run: see the README)

    @property
    def rss_mib(self) -> float:
        return self.peak_rss_kib / 1024

    def row(self) -> list[str]:
        low = min(self.rss_kib) / 1024
        rss = f"{self.rss_mib:.1f}" if self.rss_mib - low < 0.5 else f"{low:.1f}..{self.rss_mib:.1f}"
        return [self.name, f"{self.wall_s:.2f}", rss, f"{self.size / MIB / self.wall_s:,.1f}",
                f"{self.records / self.wall_s:,.0f}", f"{self.cpu_s:.1f}", f"{self.other_cores:.2f}"]


def timed(argv: list[str], ok: tuple[int, ...], stdout_path: str | None = None,
          env: dict | None = None) -> tuple[float, int, float, float]:
    """(wall s, peak RSS KiB, CPU s, other processes' cores) of one run under /usr/bin/time -v."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report, \
            open(stdout_path or os.devnull, "wb") as out:
        busy = cpu_busy_seconds()
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-v", "-o", report.name, *argv], stdout=out, stderr=subprocess.PIPE,
                              env=env, check=False)
        measured = time.perf_counter() - started
        busy = cpu_busy_seconds() - busy
        text = report.read()
    status = _EXIT.search(text)
    code = int(status.group(1)) if status else done.returncode
    if code not in ok:
        raise SystemExit(f"{' '.join(argv)} failed (exit {code}):\n{done.stderr.decode(errors='replace')[-2000:]}")
    hours, minutes, seconds = _ELAPSED.search(text).groups()
    wall = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    if abs(measured - wall) > 0.05 + 0.02 * wall:
        print(f"warning: /usr/bin/time says {wall:.2f} s, perf_counter {measured:.3f} s", file=sys.stderr)
    cpu = float(_USER.search(text).group(1)) + float(_SYS.search(text).group(1))
    return measured, int(_MAXRSS.search(text).group(1)), cpu, max(busy - cpu, 0.0) / measured


def check_jsonl(path: str, pair: Pair) -> dict:
    """The jsonl output must show the one planted change and nothing else."""
    with open(path) as source:
        lines = [json.loads(line) for line in source if line.strip()]
    summary = lines[-1]
    problems = []
    if summary.get("type") != "summary":
        problems.append(f"the last line is not the summary: {summary}")
    else:
        if summary["records"]["changed"] != 1:
            problems.append(f"records.changed is {summary['records']['changed']}, not 1")
        expected_records = {"same": pair.records - 1, "changed": 1, "only_a": 0, "only_b": 0}
        if summary["records"] != expected_records:
            problems.append(f"records {summary['records']}, expected {expected_records}")
        expected_batches = {"same": pair.batches - 1, "changed": 1, "only_a": 0, "only_b": 0}
        if summary["batches"] != expected_batches:
            problems.append(f"batches {summary['batches']}, expected {expected_batches}")
        if summary["damaged"] != {"a": 0, "b": 0}:
            problems.append(f"damaged {summary['damaged']}")
        if summary["first_different_byte"] != pair.first_byte:
            problems.append(f"first_different_byte {summary['first_different_byte']}, expected {pair.first_byte}")
    differences = [line for line in lines if line.get("type") == "difference"]
    records = [d for d in differences if d["kind"] == "record-changed"]
    if len(records) != 1 or records[0]["offset"] != pair.record_offset or records[0]["field"] != "value":
        problems.append(f"record differences {records}; expected the value of offset {pair.record_offset}")
    others = [d for d in differences if d["kind"] != "record-changed"]
    if [(d["kind"], d["field"]) for d in others] != [("batch-changed", "crc")]:
        problems.append(f"other differences {others}; expected only the batch's crc")
    if problems:
        raise SystemExit("kbatch diff --format jsonl did not report the one planted change:\n  "
                         + "\n  ".join(problems))
    return summary


def best_of(name: str, argv: list[str], pair: Pair, repeat: int, quiet: bool, check: bool,
            env: dict | None = None) -> Run:
    walls, rss, cpus, others = [], [], [], []
    for attempt in range(repeat):
        with tempfile.NamedTemporaryFile(suffix=".out") as out:
            wall, peak, cpu, other = timed(argv, (0,) if name == "cat" else (1,), out.name if check else None, env)
            if check:
                check_jsonl(out.name, pair)
        walls.append(wall)
        rss.append(peak)
        cpus.append(cpu)
        others.append(other)
        if not quiet:
            print(f"  {name} [{pair.size / MIB:,.0f} MiB pair] run {attempt + 1}/{repeat}: {wall:.2f} s, "
                  f"{peak / 1024:.1f} MiB, cpu {cpu:.1f} s, other {other:.2f} cores"
                  + (", summary checked" if check else ""), file=sys.stderr)
    best = walls.index(min(walls))
    return Run(name, 2 * pair.size, pair.records, walls[best], max(rss), cpus[best], others[best], repeat,
               [round(wall, 3) for wall in walls], rss)


def bench_pair(kbatch: list[str], pair: Pair, repeat: int, quiet: bool, env: dict | None = None) -> list[Run]:
    for path in (pair.a, pair.b):
        bench_dump.warm(path)
    commands = [("cat", ["cat", pair.a, pair.b], False),
                ("kbatch diff", [*kbatch, "diff", pair.a, pair.b], False),
                ("kbatch diff --format jsonl", [*kbatch, "diff", "--format", "jsonl", pair.a, pair.b], True)]
    return [best_of(name, argv, pair, repeat, quiet, check, env) for name, argv, check in commands]


def table(runs: list[Run]) -> str:
    header = ["command", "wall s", "peak RSS MiB", "MiB/s", "records/s", "cpu s", "other cores"]
    return bench_dump.format_table(header, [run.row() for run in runs])


def describe(pair: Pair, repeat: int) -> str:
    return (f"A {pair.a}, B {pair.b}: {pair.size:,} bytes each, {pair.batches:,} batches, {pair.records:,} "
            f"records; B's byte {pair.value_pos} (value of offset {pair.record_offset}, batch at "
            f"{pair.batch_pos}) changed and that batch's CRC fixed; best of {repeat}, page cache warm")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="1G", help="size of each segment of the main pair (default 1G)")
    parser.add_argument("--small-size", default="256M", help="size of the memory-check pair (default 256M)")
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="runs per command; best wall kept")
    parser.add_argument("--no-rss-check", action="store_true", help="skip the small-vs-large memory check")
    parser.add_argument("--fixed-mmap-threshold", action="store_true",
                        help="run kbatch with MALLOC_MMAP_THRESHOLD_=131072: glibc then maps every large buffer "
                             "and unmaps it when freed (a diagnostic for the peak RSS; see the README)")
    args = bench_dump.parse_common(parser, argv)
    kbatch = bench_dump.find_kbatch(args.kbatch)
    version, fingerprint = bench_dump.kbatch_version(), kbatch_fingerprint()
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"} if args.fixed_mmap_threshold else None
    pair = make_pair(os.path.join(DATA, args.size), args.size, args.quiet)
    runs = bench_pair(kbatch, pair, args.repeat, args.quiet, env)
    main_runs = runs
    print(f"\nkbatch {version} (kbatch/*.py {fingerprint}), {' '.join(kbatch)}, {os.cpu_count()} cores"
          + (", MALLOC_MMAP_THRESHOLD_=131072" if env else ""))
    print(describe(pair, args.repeat))
    print(table(runs), flush=True)
    results = {"kbatch": version, "fingerprint": fingerprint, "pairs": [asdict(pair)],
               "runs": [asdict(run) for run in runs]}

    if not args.no_rss_check:
        small = make_pair(os.path.join(DATA, args.small_size), args.small_size, args.quiet)
        small_runs = bench_pair(kbatch, small, args.repeat, args.quiet, env)
        print(f"\n{describe(small, args.repeat)}")
        print(table(small_runs))
        print(f"\npeak RSS against input size ({small.size / MIB:,.0f} MiB pair vs {pair.size / MIB:,.0f} MiB pair):")
        for little, big in zip(small_runs, main_runs):
            if little.name == "cat":
                continue
            growth = big.rss_mib - little.rss_mib
            verdict = "flat" if growth <= 8 else "GROWS with the input"
            spread = (f" (runs: {'/'.join(f'{kib / 1024:.0f}' for kib in little.rss_kib)} -> "
                      f"{'/'.join(f'{kib / 1024:.0f}' for kib in big.rss_kib)} MiB)")
            print(f"  {big.name:<28} {little.rss_mib:7.1f} MiB -> {big.rss_mib:7.1f} MiB ({growth:+.1f} MiB): "
                  f"{verdict}{spread}")
        results["pairs"].append(asdict(small))
        results["runs"] += [asdict(run) for run in small_runs]

    if (bench_dump.kbatch_version(), kbatch_fingerprint()) != (version, fingerprint):
        print(f"\nwarning: kbatch changed while it was timed (was {version} / {fingerprint}, now "
              f"{bench_dump.kbatch_version()} / {kbatch_fingerprint()})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
