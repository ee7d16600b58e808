#!/usr/bin/env python3
"""Time ``kbatch scan``'s steps in one process: wall and CPU seconds of the whole process tree at each.

    PYTHONPATH=. python benchmarks/scan_steps.py PATH[,PATH...] OUT          # this tree's run_scan
    BARE=1 python benchmarks/scan_steps.py - OUT                            # a bare session + one Parquet write
    EXTRA_CONF='spark.sql.shuffle.partitions=2;k=v' ... scan_steps.py PATH OUT   # settings added to the session

Each line: seconds since the start (and since the line before), CPU seconds of this process and every
process under it (the JVM, Spark's Python daemons and workers; read from /proc), and the step: the
session, each ``load()``, each progress line of the scan (writing batches/, findings/, reporting), the
report's collects. Run with ``PYTHONPATH`` naming the tree to time (a script's own directory, not the
working directory, is first on its path). Spark's run is on ``MASTER`` (default local[2]).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

STARTED = time.perf_counter()
TICKS = os.sysconf("SC_CLK_TCK")
_last = [0.0, 0.0]


def tree_cpu() -> float:
    """CPU seconds (user and system, with reaped children's) of this process and all its descendants."""
    listing = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    children: dict[int, list[int]] = {}
    for line in listing.splitlines():
        if line.strip():
            pid, ppid = map(int, line.split())
            children.setdefault(ppid, []).append(pid)
    total, stack = 0.0, [os.getpid()]
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15]) / TICKS   # utime stime cutime cstime
        except OSError:
            pass
    return total


def mark(step: str) -> None:
    now, cpu = time.perf_counter() - STARTED, tree_cpu()
    print(f"{now:7.2f} (+{now - _last[0]:5.2f}) cpu {cpu:6.2f} (+{cpu - _last[1]:5.2f}) {step}", file=sys.stderr,
          flush=True)
    _last[:] = [now, cpu]


def main() -> None:
    from pyspark.sql import DataFrameReader, SparkSession
    from pyspark.sql.classic.dataframe import DataFrame

    extra = [setting.split("=", 1) for setting in os.environ.get("EXTRA_CONF", "").split(";") if setting]
    get_or_create = SparkSession.Builder.getOrCreate

    def with_extra(builder):
        for key, value in extra:
            builder = builder.config(key, value)
        return get_or_create(builder)

    SparkSession.Builder.getOrCreate = with_extra   # type: ignore[method-assign]
    master, out = os.environ.get("MASTER", "local[2]"), sys.argv[2]
    if os.environ.get("BARE"):
        spark = (SparkSession.builder.master(master).config("spark.ui.enabled", "false")
                 .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                 .getOrCreate())
        mark("session")
        spark.range(1).write.mode("overwrite").parquet(out)
        mark("written")
        return

    import kbatch.spark.scan as scan
    from kbatch.files.inputs import list_segments

    def timed(function, before: str | None, after):
        def run(*args, **kwargs):
            if before:
                mark(before)
            result = function(*args, **kwargs)
            mark(after(result))
            return result
        return run

    segments = list_segments(sys.argv[1].split(","), "*.log")
    os.makedirs(out, exist_ok=True)
    mark("imported")
    scan.partition_report = timed(scan.partition_report, "report's reads", lambda _: "report")
    scan.spark_session = timed(scan.spark_session, None, lambda _: "session")
    DataFrameReader.load = timed(DataFrameReader.load, None, lambda _: "load")   # type: ignore[method-assign]
    DataFrame.collect = timed(DataFrame.collect, None,   # type: ignore[method-assign]
                              lambda rows: f"  collect {len(rows)} rows")
    DataFrame.toArrow = timed(DataFrame.toArrow, None,   # type: ignore[method-assign]
                              lambda table: f"  toArrow {table.num_rows} rows")
    result = scan.run_scan(segments, out, master=master, progress=mark, records=bool(os.environ.get("RECORDS")))
    if os.environ.get("SHOW"):
        print(json.dumps(result, indent=1))
    mark("done")


if __name__ == "__main__":
    main()
