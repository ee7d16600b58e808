#!/usr/bin/env python3
"""Time ``kbatch scan`` (Spark, local mode) on a broker-like directory of >= 2 GiB, against ``kbatch verify-crc``.

The directory (``benchmarks/data/scan/logs``, generated once, reused) is laid
out as a broker's ``log.dirs`` is, ``<topic>-<partition>/<20-digit base
offset>.log``, each partition's offsets running on from segment to segment:

* ``events-0/``  two 1 GiB segments (``--big``, ``--big-size``)
* ``events-1/``  24 segments of 1-8 MiB (``--medium``), 108 MiB
* ``clicks-0/``  2,000 tiny one-batch segments of at most 5 records (``--tiny``), about 1.7 MB

One tiny segment, ``clicks-0/00000000000000000000.log`` (the *canary*), has
its last byte flipped, so its batch fails its CRC, and every report is checked
for exactly that one damaged segment.  ``--clean`` leaves the canary out (a
tree with no finding at all; the scan then exits 0).

Timed, each ``--repeat`` times (best wall kept), page cache warm:

* ``kbatch scan DIR --out OUT --master local[N] --format json``: the whole tree;
* the same with ``--split-bytes 268435456`` (the 1 GiB segments read as 256 MiB ranges);
* the same with ``--records`` too, and its ratio to the plain scan;
* ``kbatch scan DIR/clicks-0 ...``: the 2,000 tiny segments only;
* ``kbatch scan DIR/clicks-0/00000000000000000000.log ...``: one tiny segment, i.e. the fixed cost
  (JVM, Spark session, the jobs' planning, the report's queries);
* ``kbatch verify-crc --quiet DIR``, ``... DIR/clicks-0`` and ``... one tiny file``: one process, for comparison;
* a bare PySpark session (the same master) that starts and writes one Parquet file: the floor of the fixed cost;
* ``kbatch scan`` of a directory of ``--many`` tiny segments (100,000 by default), once.

Then the goal table of issue 49, every figure from this one run: the scan's data rate beyond its fixed cost
against verify-crc's, ``--records`` against the plain scan (``--no-records`` skips it), the cost of each
extra tiny segment, one tiny segment against the bare session, and the many-segment scan's wall and driver
peak.  The per-segment and fixed-cost figures are given in CPU time too (the process tree's, median of the
runs): on a machine other work shares, walls say little.

A scan is run with ``subprocess`` and its process tree is sampled from /proc
every 0.2 s: the peak RSS (``VmHWM``) of the kbatch driver (the Python
process ``kbatch scan`` is), of the JVM and of the largest Python worker; the
CPU seconds of the whole tree; and the CPU time everything else on the machine
used meanwhile (``other``, from /proc/stat, in cores).  The driver's progress
lines on stderr are time-stamped, which splits a scan into start-up (up to
``writing ...``), writing the tables (one job since the batches and findings
tables are written by the executors; before, a line per table), and the report.  ``verify-crc`` runs under ``/usr/bin/time -v``.

Every scan's JSON report is checked against the counts the generator wrote:
segments, batches, records and bytes per partition, no offset gaps or
overlaps, and the canary as the one damaged segment.

Examples::

    python benchmarks/bench_scan.py                          # 2 x 1 GiB + 24 medium + 2,000 tiny, best of 2
    python benchmarks/bench_scan.py --repeat 3 --master 'local[2]'
    python benchmarks/bench_scan.py --big-size 256M --tiny 500 --repeat 1   # a quick look
    python benchmarks/bench_scan.py --big 1 --big-size 256M --medium 0 --tiny 10 --many 0 --split-bytes 0
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_diff  # noqa: E402  (timed, cpu_busy_seconds)
import bench_dump  # noqa: E402  (find_kbatch, kbatch_version, warm)
import make_segment  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "scan")
MIB = 1024 * 1024
MEDIUM_SIZES = [1, 2, 3, 4, 5, 6, 7, 8]      # MiB, cycled
BIG_TOPIC, MEDIUM_TOPIC, TINY_TOPIC = "events-0", "events-1", "clicks-0"
SAMPLE_EVERY = 0.2
CLOCK = os.sysconf("SC_CLK_TCK")


# -- the tree --------------------------------------------------------------------------------


def build_tree(root: str, big: int, big_size: int, medium: int, tiny: int, canary: bool, quiet: bool) -> dict:
    """Write the broker-like directory (or reuse it, when its manifest says it was made the same way)."""
    recipe = {"big": big, "big_size": big_size, "medium": medium, "tiny": tiny, "canary": canary}
    manifest_path = os.path.join(os.path.dirname(root), "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as source:
            manifest = json.load(source)
        if manifest["recipe"] == recipe and all(os.path.exists(path) for path in manifest["files"]):
            return manifest
    if os.path.exists(root):
        shutil.rmtree(root)
    started = time.perf_counter()
    partitions, files = {}, []

    def segments(topic: str, sizes: list[int], seed: int) -> None:
        templates = make_segment.build_templates(seed, "none", 16 * 1024, 16)
        offset, stats = 0, {"segments": 0, "batches": 0, "records": 0, "bytes": 0}
        for index, size in enumerate(sizes):
            path = os.path.join(root, topic, f"{offset:020d}.log")
            written = make_segment.write_segment(path, size, templates, seed + index, base_offset=offset)
            offset = written["next_offset"]
            files.append(path)
            for key in ("batches", "records", "bytes"):
                stats[key] += written[key]
            stats["segments"] += 1
        partitions[topic] = {**stats, "last_offset": offset - 1}

    segments(BIG_TOPIC, [big_size] * big, seed=1)
    if medium:
        segments(MEDIUM_TOPIC, [MEDIUM_SIZES[i % len(MEDIUM_SIZES)] * MIB for i in range(medium)], seed=101)
    tiny_files, partitions[TINY_TOPIC] = write_tiny(os.path.join(root, TINY_TOPIC), tiny, canary)
    files += tiny_files
    manifest = {"recipe": recipe, "root": root, "partitions": partitions, "files": files,
                "canary": tiny_files[0] if canary else None, "single": tiny_files[0],
                "bytes": sum(p["bytes"] for p in partitions.values()),
                "seconds": round(time.perf_counter() - started, 1)}
    with open(manifest_path, "w") as out:
        json.dump(manifest, out)
    if not quiet:
        print(f"wrote {root}: {len(files):,} segments, {manifest['bytes']:,} bytes in {manifest['seconds']} s",
              file=sys.stderr)
    return manifest


def write_tiny(directory: str, count: int, canary: bool) -> tuple[list[str], dict]:
    """``count`` one-batch segments of at most 5 records; with ``canary`` the first one's last byte flipped."""
    templates = make_segment.build_templates(7, "none", 16 * 1024, 16, max_records=5)
    written = make_segment.write_tiny_files(directory, count, 1, templates, seed=7)
    stats = {"segments": count, "batches": written["batches"], "records": written["records"],
             "bytes": written["bytes"], "last_offset": written["next_offset"] - 1}
    tiny_files = sorted(os.path.join(directory, name) for name in os.listdir(directory))
    if canary:
        with open(tiny_files[0], "r+b") as stream:   # the last byte of the one batch: inside the CRC's span
            stream.seek(-1, os.SEEK_END)
            last = stream.read(1)[0]
            stream.seek(-1, os.SEEK_END)
            stream.write(bytes([last ^ 0x01]))
    return tiny_files, stats


def sweep_manifest(count: int, canary: bool) -> dict:
    """A directory of ``count`` tiny segments only (``data/scan/sweep/<count>/clicks-0``), for the sweep."""
    directory = os.path.join(DATA, "sweep", str(count), TINY_TOPIC)
    shutil.rmtree(directory, ignore_errors=True)
    files, stats = write_tiny(directory, count, canary)
    return {"partitions": {TINY_TOPIC: stats}, "files": files, "canary": files[0] if canary else None,
            "single": files[0], "dir": directory}


def warm(files: list[str]) -> None:
    """Read every segment once so the page cache holds them (cat in batches of 500 names)."""
    for start in range(0, len(files), 500):
        with open(os.devnull, "wb") as null:
            subprocess.run(["cat", *files[start:start + 500]], stdout=null, check=True)


# -- one scan, watched ------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        ppid = int(text[text.rfind(")") + 2:].split()[1])
        tree.setdefault(ppid, []).append(int(name))
    return tree


def _process(pid: int) -> tuple[str, int, int, float] | None:
    """(kind, VmHWM KiB, VmRSS KiB, CPU s) of one process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
        with open(f"/proc/{pid}/status") as status:
            lines = status.read().splitlines()
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            argv = cmdline.read().split(b"\0")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLOCK
    memory = {line.split(":")[0]: int(line.split()[1]) for line in lines if line.startswith(("VmHWM", "VmRSS"))}
    program = os.path.basename(argv[0].decode(errors="replace")) if argv and argv[0] else ""
    joined = b" ".join(argv)
    if program == "java":
        kind = "jvm"
    elif b"pyspark.daemon" in joined or b"pyspark.worker" in joined or b"pyspark/daemon" in joined:
        kind = "worker"
    elif program.startswith("python") or b"kbatch" in joined:
        kind = "python"
    else:
        kind = "other"
    return kind, memory.get("VmHWM", 0), memory.get("VmRSS", 0), cpu


@dataclass
class Watch:
    wall_s: float = 0.0
    exit: int = 0
    driver_hwm_kib: int = 0
    jvm_hwm_kib: int = 0
    worker_hwm_kib: int = 0       # the largest Python worker
    tree_rss_kib: int = 0         # the largest sum of the tree's RSS at one sample
    cpu_s: float = 0.0            # the whole tree (processes that ended between samples: up to their last sample)
    other_cores: float = 0.0
    workers: int = 0              # Python worker processes seen
    stages: dict = field(default_factory=dict)   # progress line -> seconds since the start
    stdout: str = ""
    stderr: str = ""


def watched(argv: list[str]) -> Watch:
    """Run ``argv``; sample its process tree every SAMPLE_EVERY s; time-stamp its stderr lines."""
    watch = Watch()
    busy = bench_diff.cpu_busy_seconds()
    own = sum(os.times()[:2])
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        errors: list[str] = []

        def read_stderr() -> None:
            for raw in proc.stderr:
                line = raw.decode(errors="replace").rstrip("\n")
                errors.append(line)
                if line.startswith("kbatch scan: "):
                    watch.stages[line[len("kbatch scan: "):]] = round(time.perf_counter() - started, 2)

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        cpu_by_pid: dict[int, float] = {}
        worker_pids: set[int] = set()
        while proc.poll() is None:
            tree, todo, total_rss = _children(), [proc.pid], 0
            while todo:
                pid = todo.pop()
                todo += tree.get(pid, [])
                info = _process(pid)
                if info is None:
                    continue
                kind, hwm, rss, cpu = info
                cpu_by_pid[pid] = cpu
                total_rss += rss
                if pid == proc.pid:
                    watch.driver_hwm_kib = max(watch.driver_hwm_kib, hwm)
                elif kind == "jvm":
                    watch.jvm_hwm_kib = max(watch.jvm_hwm_kib, hwm)
                elif kind == "worker":
                    watch.worker_hwm_kib = max(watch.worker_hwm_kib, hwm)
                    worker_pids.add(pid)
            watch.tree_rss_kib = max(watch.tree_rss_kib, total_rss)
            time.sleep(SAMPLE_EVERY)
        watch.wall_s = time.perf_counter() - started
        watch.exit = proc.returncode
        reader.join(timeout=10)
        out.seek(0)
        watch.stdout = out.read().decode(errors="replace")
    watch.stderr = "\n".join(errors)
    watch.cpu_s = sum(cpu_by_pid.values())
    mine = sum(os.times()[:2]) - own          # this script's own sampling, not "other"
    watch.other_cores = max(bench_diff.cpu_busy_seconds() - busy - watch.cpu_s - mine, 0.0) / watch.wall_s
    watch.workers = len(worker_pids)
    return watch


# -- checking a report ------------------------------------------------------------------------


def check_report(text: str, manifest: dict, topics: list[str], single: bool) -> None:
    """The scan's JSON report against what the generator wrote."""
    report = json.loads(text)
    problems = []
    expected_topics = {topic: manifest["partitions"][topic] for topic in topics}
    canary = manifest["canary"]
    if single:
        segments, size = 1, os.path.getsize(manifest["single"])
    else:
        segments = sum(p["segments"] for p in expected_topics.values())
        size = sum(p["bytes"] for p in expected_topics.values())
    if report["segments"] != segments or report["bytes"] != size:
        problems.append(f"segments {report['segments']}, bytes {report['bytes']}; expected {segments}, {size}")
    expected_damage = [canary] if canary else []
    if report["damaged_segments"] != expected_damage:
        problems.append(f"damaged segments {report['damaged_segments'][:5]}; expected {expected_damage}")
    if not single:
        seen = {f"{p['topic']}-{p['partition']}": p for p in report["partitions"]}
        if sorted(seen) != sorted(expected_topics):
            problems.append(f"partitions {sorted(seen)}; expected {sorted(expected_topics)}")
        for name, expected in expected_topics.items():
            got = seen.get(name)
            if got is None:
                continue
            for key in ("segments", "batches", "records", "bytes", "last_offset"):
                if got[key] != expected[key]:
                    problems.append(f"{name}: {key} {got[key]}, expected {expected[key]}")
            if got["offset_gaps"] or got["offset_overlaps"]:
                problems.append(f"{name}: gaps {got['offset_gaps'][:3]}, overlaps {got['offset_overlaps'][:3]}")
            if got["corrupt_batches"] != (1 if canary and name == TINY_TOPIC else 0):
                problems.append(f"{name}: corrupt_batches {got['corrupt_batches']}")
    if problems:
        raise SystemExit("kbatch scan's report does not match the generated tree:\n  " + "\n  ".join(problems))


# -- the runs ----------------------------------------------------------------------------------


@dataclass
class ScanRun:
    name: str
    paths: list
    bytes: int
    files: int
    walls: list
    best: Watch
    cpus: list = field(default_factory=list)   # CPU seconds of the process tree, each run

    @property
    def wall_s(self) -> float:
        return self.best.wall_s

    @property
    def cpu_s(self) -> float:
        """The median of the runs' CPU seconds: on a loaded machine the figure walls cannot give."""
        return statistics.median(self.cpus or [self.best.cpu_s])


def scan(kbatch: list[str], name: str, paths: list[str], extra: list[str], manifest: dict, topics: list[str],
         master: str, repeat: int, quiet: bool, single: bool = False) -> ScanRun:
    out_root = os.path.join(DATA, "out")
    expected_exit = 1 if manifest["canary"] else 0
    watches = []
    for attempt in range(repeat):
        out_dir = os.path.join(out_root, f"run{attempt}")
        shutil.rmtree(out_dir, ignore_errors=True)
        argv = [*kbatch, "scan", *paths, "--out", out_dir, "--master", master, "--format", "json", *extra]
        watch = watched(argv)
        if watch.exit != expected_exit:
            tail = "\n".join(watch.stderr.splitlines()[-15:])
            raise SystemExit(f"{' '.join(argv)}: exit {watch.exit}, expected {expected_exit}:\n{tail}")
        check_report(watch.stdout, manifest, topics, single)
        shutil.rmtree(out_dir, ignore_errors=True)
        watches.append(watch)
        if not quiet:
            print(f"  {name} run {attempt + 1}/{repeat}: {watch.wall_s:.2f} s, driver {watch.driver_hwm_kib / 1024:.0f}"
                  f" MiB, JVM {watch.jvm_hwm_kib / 1024:.0f} MiB, worker {watch.worker_hwm_kib / 1024:.0f} MiB, "
                  f"cpu {watch.cpu_s:.1f} s, other {watch.other_cores:.2f} cores, stages {watch.stages}",
                  file=sys.stderr)
    best = min(watches, key=lambda w: w.wall_s)
    best.driver_hwm_kib = max(w.driver_hwm_kib for w in watches)
    size = os.path.getsize(paths[0]) if single else sum(manifest["partitions"][t]["bytes"] for t in topics)
    files = 1 if single else sum(manifest["partitions"][t]["segments"] for t in topics)
    return ScanRun(name, paths, size, files, [round(w.wall_s, 2) for w in watches], best,
                   [round(w.cpu_s, 2) for w in watches])


@dataclass
class VerifyRun:
    name: str
    bytes: int
    files: int
    walls: list
    wall_s: float
    peak_rss_kib: int
    cpu_s: float
    other_cores: float


def verify(kbatch: list[str], name: str, paths: list[str], size: int, files: int, canary_inside: bool,
           repeat: int, quiet: bool) -> VerifyRun:
    runs = []
    for attempt in range(repeat):
        runs.append(bench_diff.timed([*kbatch, "verify-crc", "--quiet", *paths], (1,) if canary_inside else (0,)))
        if not quiet:
            wall, rss, cpu, other = runs[-1]
            print(f"  {name} run {attempt + 1}/{repeat}: {wall:.2f} s, {rss / 1024:.1f} MiB, cpu {cpu:.1f} s, "
                  f"other {other:.2f} cores", file=sys.stderr)
    best = min(runs)
    return VerifyRun(name, size, files, [round(run[0], 2) for run in runs], best[0], max(run[1] for run in runs),
                     best[2], best[3])


# A bare PySpark session that starts and writes one Parquet file: the floor a scan's fixed cost is held to.
BARE_SPARK = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(sys.argv[1]).config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
spark.range(1).write.mode("overwrite").parquet(sys.argv[2])
spark.stop()
"""


def bare_spark(master: str, repeat: int, quiet: bool) -> ScanRun:
    """The bare session (BARE_SPARK) run as a process, watched as a scan is; best of ``repeat``."""
    out_dir = os.path.join(DATA, "out", "bare")
    watches = []
    for attempt in range(repeat):
        shutil.rmtree(out_dir, ignore_errors=True)
        watch = watched([sys.executable, "-c", BARE_SPARK, master, out_dir])
        if watch.exit != 0:
            raise SystemExit(f"bare Spark session: exit {watch.exit}:\n{watch.stderr[-2000:]}")
        watches.append(watch)
        if not quiet:
            print(f"  bare Spark run {attempt + 1}/{repeat}: {watch.wall_s:.2f} s", file=sys.stderr)
    shutil.rmtree(out_dir, ignore_errors=True)
    best = min(watches, key=lambda w: w.wall_s)
    return ScanRun("bare Spark + one Parquet write", [], 0, 0, [round(w.wall_s, 2) for w in watches], best,
                   [round(w.cpu_s, 2) for w in watches])


def goal_table(scan_dir: ScanRun, verify_dir, records: ScanRun | None, tiny: ScanRun, one: ScanRun,
               bare: ScanRun, many: ScanRun | None, per_file_verify: float) -> list[list[str]]:
    """The figures of the goal table (issue 49), each measured in this run."""
    after = scan_dir.wall_s - one.wall_s
    scan_rate = scan_dir.bytes / MIB / after if after > 0 else float("inf")
    verify_rate = verify_dir.bytes / MIB / verify_dir.wall_s
    per_file = (tiny.wall_s - one.wall_s) / (tiny.files - 1) * 1000
    per_file_cpu = (tiny.cpu_s - one.cpu_s) / (tiny.files - 1) * 1000
    rows = [["scan data rate beyond the fixed cost, vs verify-crc on the same tree",
             f"{scan_rate:,.0f} vs {verify_rate:,.0f} MiB/s ({scan_rate / verify_rate:.0%})", ">= 50%"],
            ["scan --records vs scan",
             f"{records.wall_s / scan_dir.wall_s:.2f}x" if records else "not run (--no-records)", "<= 1.3x"],
            ["cost per extra tiny segment",
             f"{per_file:.2f} ms, CPU {per_file_cpu:.2f} ms (verify-crc {per_file_verify * 1000:.3f} ms)",
             "<= 0.2 ms"],
            ["one tiny segment vs bare Spark + one Parquet write",
             f"{one.wall_s / bare.wall_s:.2f}x ({one.wall_s:.2f} vs {bare.wall_s:.2f} s), CPU "
             f"{one.cpu_s / bare.cpu_s:.2f}x ({one.cpu_s:.1f} vs {bare.cpu_s:.1f} s)", "<= 1.3x"]]
    if many is not None:
        rows.append([f"{many.files:,} tiny segments",
                     f"{many.wall_s:.1f} s, driver peak {many.best.driver_hwm_kib / 1024:.0f} MiB, "
                     f"{(many.wall_s - one.wall_s) / (many.files - 1) * 1000:.2f} ms a segment",
                     "planned and scanned, driver <= 1 GiB"])
    else:
        rows.append(["many tiny segments", "not run (--many 0)", "planned and scanned, driver <= 1 GiB"])
    return rows


def stage_split(watch: Watch) -> str:
    """start-up / batches / findings / report, from the progress lines' time stamps."""
    marks = watch.stages
    order = [key for key in marks if key.startswith("writing") or key == "reporting"]
    points = [("start-up", 0.0)] + [(key.replace("writing ", "").rstrip("/"), marks[key]) for key in order]
    parts = []
    for (label, begin), (_, end) in zip(points, points[1:] + [("end", watch.wall_s)]):
        parts.append(f"{label} {end - begin:.1f}")
    return ", ".join(parts)


def verify_only(kbatch: list[str], args, manifest: dict, root: str, tiny_dir: str, version: str,
                fingerprint: str) -> int:
    single, has_canary = manifest["single"], bool(manifest["canary"])
    runs = [verify(kbatch, "verify-crc --quiet DIR", [root], manifest["bytes"], len(manifest["files"]), has_canary,
                   args.verify_repeat, args.quiet),
            verify(kbatch, f"verify-crc --quiet {TINY_TOPIC}/", [tiny_dir], manifest["partitions"][TINY_TOPIC]["bytes"],
                   args.tiny, has_canary, args.verify_repeat, args.quiet),
            verify(kbatch, "verify-crc --quiet one tiny file", [single], os.path.getsize(single), 1, has_canary,
                   args.verify_repeat, args.quiet)]
    if args.verify_kbatch:
        runs.append(verify([args.verify_kbatch], f"verify-crc --quiet DIR ({os.path.basename(args.verify_kbatch)})",
                           [root], manifest["bytes"], len(manifest["files"]), has_canary, args.verify_repeat,
                           args.quiet))
    print(f"\nkbatch {version} (kbatch/*.py {fingerprint}), {' '.join(kbatch)}; verify-crc best of "
          f"{args.verify_repeat}, page cache warm")
    for run in runs:
        print(f"  {run.name:<40} {run.wall_s:6.2f} s  {run.bytes / MIB / run.wall_s:9,.1f} MiB/s  "
              f"{run.peak_rss_kib / 1024:5.1f} MiB  cpu {run.cpu_s:.1f} s  other {run.other_cores:.2f} cores  "
              f"(runs {run.walls})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=int, default=2, help="1 GiB segments in events-0 (default 2)")
    parser.add_argument("--big-size", type=make_segment.parse_size, default=make_segment.parse_size("1G"),
                        help="size of those (default 1G)")
    parser.add_argument("--medium", type=int, default=24, help="1-8 MiB segments in events-1 (default 24)")
    parser.add_argument("--tiny", type=int, default=2000, help="tiny segments in clicks-0 (default 2000)")
    parser.add_argument("--clean", action="store_true",
                        help="no damaged canary segment: a tree with no finding at all")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--split-bytes", type=make_segment.parse_size, default=256 * MIB,
                        help="--split-bytes for the split run (default 256M; 0 skips that run)")
    parser.add_argument("--repeat", type=int, default=2, metavar="N", help="runs per scan; best wall kept")
    parser.add_argument("--verify-repeat", type=int, default=3, metavar="N", help="runs per verify-crc")
    parser.add_argument("--tiny-sweep", metavar="N,N,...", default="",
                        help="also scan directories of only N tiny segments each (e.g. 500,1000,4000): "
                             "how the per-file cost grows with the count")
    parser.add_argument("--verify-kbatch", metavar="EXE",
                        help="also time verify-crc --quiet DIR with this kbatch executable (e.g. another commit's)")
    parser.add_argument("--verify-only", action="store_true", help="only the verify-crc runs (seconds, no Spark)")
    parser.add_argument("--no-records", dest="records", action="store_false",
                        help="skip the scan of the whole tree with --records (goal: at most 1.3x the same scan)")
    parser.add_argument("--many", type=int, default=100_000, metavar="N",
                        help="also scan a directory of N tiny segments (default 100000; 0 skips it): planned and "
                             "scanned with the driver under 1 GiB")
    parser.add_argument("--bare-repeat", type=int, default=None, metavar="N",
                        help="runs of the bare Spark session (default: --repeat)")
    args = bench_dump.parse_common(parser, argv)
    kbatch = bench_dump.find_kbatch(args.kbatch)
    version, fingerprint = bench_dump.kbatch_version(), bench_diff.kbatch_fingerprint()
    root = os.path.join(DATA, "logs")
    manifest = build_tree(root, args.big, args.big_size, args.medium, args.tiny, not args.clean, args.quiet)
    warm(manifest["files"])
    topics = list(manifest["partitions"])
    tiny_dir = os.path.join(root, TINY_TOPIC)
    single = manifest["single"]
    total, files = manifest["bytes"], len(manifest["files"])
    has_canary = bool(manifest["canary"])

    if args.verify_only:
        return verify_only(kbatch, args, manifest, root, tiny_dir, version, fingerprint)
    scans = [scan(kbatch, "scan DIR", [root], [], manifest, topics, args.master, args.repeat, args.quiet)]
    if args.split_bytes:
        scans.append(scan(kbatch, f"scan DIR --split-bytes {args.split_bytes}", [root],
                          ["--split-bytes", str(args.split_bytes)], manifest, topics, args.master, args.repeat,
                          args.quiet))
    records = None
    if args.records:
        records = scan(kbatch, "scan DIR --records", [root], ["--records"], manifest, topics, args.master,
                       args.repeat, args.quiet)
        scans.append(records)
    tiny = scan(kbatch, f"scan {TINY_TOPIC}/ ({args.tiny} tiny)", [tiny_dir], [], manifest, [TINY_TOPIC],
                args.master, args.repeat, args.quiet)
    one = scan(kbatch, "scan one tiny file", [single], [], manifest, [TINY_TOPIC], args.master, args.repeat,
               args.quiet, single=True)
    verifies = [verify(kbatch, "verify-crc --quiet DIR", [root], total, files, has_canary, args.verify_repeat,
                       args.quiet),
                verify(kbatch, f"verify-crc --quiet {TINY_TOPIC}/", [tiny_dir],
                       manifest["partitions"][TINY_TOPIC]["bytes"], args.tiny, has_canary, args.verify_repeat,
                       args.quiet),
                verify(kbatch, "verify-crc --quiet one tiny file", [single], os.path.getsize(single), 1,
                       has_canary, args.verify_repeat, args.quiet)]

    extra_verify = None
    if args.verify_kbatch:
        extra_verify = verify([args.verify_kbatch], f"verify-crc --quiet DIR ({os.path.basename(args.verify_kbatch)})",
                              [root], total, files, has_canary, args.verify_repeat, args.quiet)
        verifies.append(extra_verify)
    bare = bare_spark(args.master, args.bare_repeat or args.repeat, args.quiet)
    many = None
    if args.many:
        many_manifest = sweep_manifest(args.many, has_canary)
        warm(many_manifest["files"])
        many = scan(kbatch, f"scan {args.many:,} tiny", [many_manifest["dir"]], [], many_manifest, [TINY_TOPIC],
                    args.master, 1, args.quiet)
        shutil.rmtree(os.path.dirname(many_manifest["dir"]), ignore_errors=True)
    sweep = []
    for count in [int(n) for n in args.tiny_sweep.split(",") if n.strip()]:
        tiny_manifest = sweep_manifest(count, has_canary)
        warm(tiny_manifest["files"])
        sweep.append(scan(kbatch, f"scan {count} tiny", [tiny_manifest["dir"]], [], tiny_manifest, [TINY_TOPIC],
                          args.master, args.repeat, args.quiet))
        shutil.rmtree(os.path.dirname(tiny_manifest["dir"]), ignore_errors=True)

    fixed = one.wall_s
    print(f"\nkbatch {version} (kbatch/*.py {fingerprint}), {' '.join(kbatch)}, {os.cpu_count()} cores, "
          f"master {args.master}")
    print(f"{root}: {files:,} segments, {total:,} bytes ({total / MIB:,.0f} MiB): "
          + ", ".join(f"{topic} {p['segments']:,} segments {p['bytes'] / MIB:,.1f} MiB"
                      for topic, p in manifest["partitions"].items())
          + (f"; canary {os.path.relpath(manifest['canary'], root)}" if has_canary else ""))
    print(f"page cache warm; scans best of {args.repeat}, verify-crc best of {args.verify_repeat}\n")
    header = ["command", "files", "MiB", "wall s", "MiB/s", "MiB/s after fixed", "driver MiB", "JVM MiB",
              "worker MiB", "cpu s", "other cores"]
    rows = [header]
    for run in scans + [tiny, one] + sweep + ([many] if many else []) + [bare]:
        w = run.best
        after = run.wall_s - fixed
        rows.append([run.name, f"{run.files:,}", f"{run.bytes / MIB:,.1f}", f"{run.wall_s:.2f}",
                     f"{run.bytes / MIB / run.wall_s:,.1f}" if run.bytes else "-",
                     f"{run.bytes / MIB / after:,.1f}" if after > 1 and run.bytes else "-",
                     f"{w.driver_hwm_kib / 1024:.0f}", f"{w.jvm_hwm_kib / 1024:.0f}",
                     f"{w.worker_hwm_kib / 1024:.0f}", f"{w.cpu_s:.1f}", f"{w.other_cores:.2f}"])
    for run in verifies:
        rows.append([run.name, f"{run.files:,}", f"{run.bytes / MIB:,.1f}", f"{run.wall_s:.2f}",
                     f"{run.bytes / MIB / run.wall_s:,.1f}", "-", f"{run.peak_rss_kib / 1024:.0f}", "-", "-",
                     f"{run.cpu_s:.1f}", f"{run.other_cores:.2f}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                        for i, (cell, width) in enumerate(zip(row, widths))))
        if index == 0:
            print("  ".join("-" * width for width in widths))

    print("\nwhere a scan's time goes (s; from the driver's progress lines):")
    for run in scans + [tiny, one] + sweep:
        print(f"  {run.name:<42} {stage_split(run.best)}  (runs: {run.walls})")
    per_file_scan = (tiny.wall_s - one.wall_s) / args.tiny
    per_file_verify = (verifies[1].wall_s - verifies[2].wall_s) / args.tiny
    print(f"\nper-file overhead, {args.tiny:,} tiny segments: scan ({tiny.wall_s:.2f} - {one.wall_s:.2f} s) / "
          f"{args.tiny:,} = {per_file_scan * 1000:.2f} ms; verify-crc ({verifies[1].wall_s:.2f} - "
          f"{verifies[2].wall_s:.2f} s) / {args.tiny:,} = {per_file_verify * 1000:.3f} ms")
    for run in sweep + [tiny]:
        print(f"  {run.files:>6,} tiny: ({run.wall_s:.2f} - {one.wall_s:.2f} s) / {run.files:,} = "
              f"{(run.wall_s - one.wall_s) / run.files * 1000:.2f} ms a file; the report step "
              f"{stage_split(run.best).rsplit('reporting ', 1)[-1]} s")
    print(f"scan of the whole tree vs verify-crc: {scans[0].wall_s / verifies[0].wall_s:.2f}x the wall time "
          f"({(scans[0].wall_s - fixed) / verifies[0].wall_s:.2f}x without the fixed {fixed:.1f} s)")
    if records is not None:
        print(f"scan --records vs scan: {records.wall_s / scans[0].wall_s:.2f}x ({records.wall_s:.2f} s against "
              f"{scans[0].wall_s:.2f} s, best of {args.repeat} each)")
    if extra_verify is not None:
        print(f"  against {extra_verify.name}: {scans[0].wall_s / extra_verify.wall_s:.2f}x "
              f"({(scans[0].wall_s - fixed) / extra_verify.wall_s:.2f}x without the fixed part)")

    print("\nthe goal table (issue 49), measured in this run:")
    print(bench_dump.format_table(["figure", "measured", "goal"],
                                  goal_table(scans[0], verifies[0], records, tiny, one, bare, many,
                                             per_file_verify)))

    if (bench_dump.kbatch_version(), bench_diff.kbatch_fingerprint()) != (version, fingerprint):
        print(f"\nwarning: kbatch changed while it was timed (was {version} / {fingerprint}, now "
              f"{bench_dump.kbatch_version()} / {bench_diff.kbatch_fingerprint()})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"kbatch": version, "fingerprint": fingerprint, "manifest": {
                k: v for k, v in manifest.items() if k != "files"},
                "scans": [{**asdict(run), "best": {**asdict(run.best), "stdout": None}}
                          for run in scans + [tiny, one] + sweep + ([many] if many else []) + [bare]],
                "verify": [asdict(run) for run in verifies],
                "per_file_ms": {"scan": per_file_scan * 1000, "verify": per_file_verify * 1000}}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
