"""The ``kbatch scan`` job: read, write the tables, re-read what did not split cleanly, report."""

from __future__ import annotations

import json
import os
import sys

from kbatch.files.inputs import Segment, is_remote, through_hadoop
from kbatch.spark.records_table import commit_tables, write_tables
from kbatch.spark.report import PartitionReport, ScanReport, partition_report
from kbatch.spark.session import spark_session
from kbatch.spark.source import FINDING_SCHEMA, SCHEMAS, KbatchReader
from kbatch.spark.tally import tally_tables

LOCAL_OPEN_COST = 64 * 1024   # bytes: what opening a local segment weighs when files are packed into tasks
VIEWS_NICENESS = 10   # how much nicer than the scan the thread making the read_committed views runs (_views_meanwhile)


def scan_segments(paths: list[str], pattern: str, unread: list[tuple[str, str | None]]) -> list[Segment]:
    """The segments the paths name (kbatch.files.inputs.list_segments), each whose name the tables can hold:
    one that is no UTF-8 (bytes Python keeps as surrogates), or whose topic names no directory a file system
    allows (kbatch.spark.records_table.unwritable_topic), goes to ``unread`` with why, as what is not found."""
    from kbatch.files.inputs import list_segments
    from kbatch.spark.records_table import unwritable_topic

    segments = []
    for segment in list_segments(list(paths), pattern, unread):
        try:
            segment.path.encode("utf-8")
        except UnicodeEncodeError:
            unread.append((segment.path, "its name is not UTF-8, and the tables hold file names as UTF-8 text"))
        else:
            if (why := unwritable_topic(segment.topic)) is not None:
                unread.append((segment.path, why))
            else:
                segments.append(segment)
    return segments


def run_scan(segments: list[Segment], out_dir: str, *, records: bool = False, deep: bool = False,
             master: str | None = None, split_bytes: int = 0, quiet: bool = True, progress=print,
             pattern: str = "*.log", log_dir: str | None = None) -> dict:
    """Scan ``segments`` (kbatch.files.inputs.list_segments: those of size -1 are URIs only Hadoop's file
    systems open, whose files matching ``pattern`` are listed here through Spark's) into tables under ``out_dir``
    (a directory, or a URI); the report.  Spark's log goes to ``log_dir`` (default: ``out_dir``)."""
    from pyspark.sql import functions as F

    from kbatch.spark.hadoop import hadoop_files, level_frame, listed

    unlisted = [segment.path for segment in segments if segment.size < 0]
    segments = [segment for segment in segments if segment.size >= 0]
    where = master or (f"Spark Connect at {os.environ['SPARK_REMOTE']}" if os.environ.get("SPARK_REMOTE")
                       else "local[*]")
    progress(f"{len(segments)} segments, {sum(segment.size for segment in segments)} bytes"
             f"{f' and {len(unlisted)} path(s) for Spark to list' if unlisted else ''}; starting Spark ({where})")
    # The records table's read_committed views, made while Spark starts (its JVM keeps this process waiting).
    views = _views_meanwhile([_absolute(segment.path) for segment in segments]) if records else None
    spark = spark_session(master, quiet=quiet, log_path=os.path.join(log_dir or out_dir, "spark.log"))
    hadoop = None
    if unlisted:
        hadoop = hadoop_files(spark, unlisted, pattern)
        found = listed(hadoop)
        progress(f"{len(found)} segments under {len(unlisted)} path(s) read through Spark's Hadoop file systems")
        segments = sorted(segments + found, key=lambda segment: segment.path)
    total = sum(segment.size for segment in segments)
    # Executors have working directories of their own: they get absolute paths, the report the ones given.
    given = {_absolute(segment.path): segment.path for segment in segments}
    local = [path for path in given if not through_hadoop(path)]   # (the rest: Spark hands over their bytes)
    options = {"deep": str(deep).lower(), "decompress": "true"}
    if not any(is_remote(path) for path in local):
        # A local file is opened in about the time 64 KiB of it is read (the data source's default, 1 MiB,
        # is a remote file's): 2,000 tiny segments go into two or three tasks, not 16, each a Parquet file of
        # each table and a round of Spark's and the Python worker's cost per task.
        options["openCostInBytes"] = str(LOCAL_OPEN_COST)
        # And a task costs Spark and its Python worker about 0.1 s of wall time whatever it reads, more than the
        # batches and findings levels take to read 128 MiB (a task's most, maxPartitionBytes): files are not
        # spread over the cores in tasks smaller than that (2,000 tiny segments: one task, not three).
        options["minPartitions"] = "1"

    levels = ["batches", "findings", *(["records"] if records else [])]
    cross_checked = []
    if deep:
        # The files beside the segments held against them (as verify-crc --deep does): a task per partition.
        from kbatch.partition.verify import directories_of

        # Absolute, as the segments are: an executor's working directory is not the user's.
        cross_checked = directories_of(_absolute(segment.path) for segment in segments)
    progress(f"writing {', '.join(f'{level}/' for level in levels)}")
    schemas = {level: spark.createDataFrame([], SCHEMAS[level]).schema for level in levels}
    locations = _locations(spark, out_dir, levels)
    sums = None   # what the tables add up to (kbatch.spark.tally), where their writing added them up

    def said(failed: list[str]) -> list[str]:
        if failed:
            progress(f"{len(failed)} file(s) did not split cleanly; reading them whole")
        return failed

    if not any(through_hadoop(location) for location in locations.values()):
        # Not through Spark's writer, which turns every row back into a JVM row (records_table.py): the
        # executors write the tables, a task's ranges read for each level in one Spark job.
        def written_reading_whole(failed: list[str]):
            return write_tables(spark, _partitions(local, split_bytes, failed, schemas["batches"], options),
                                {level: (locations[level], schemas[level]) for level in levels}, options,
                                views.result() if views else None, commit=False)

        written = written_reading_whole([])
        # A range whose walk did not end where the next began (a split-handover finding): the tables are written
        # again before any is committed, that file read whole. (No pass of its own to find such files first.)
        failed = said(_split_badly(written.sums)) if split_bytes else []
        if failed:
            written = written_reading_whole(failed)
        commit_tables(spark, written)
        sums = written.sums
    else:   # tables only Hadoop's file systems reach (s3a://, ...; pyarrow opens none of them): Spark's writer
        # A range whose walk did not end where the next began: that file is read whole (found beforehand, as
        # Spark's writer commits what it writes).
        failed = []
        if split_bytes and local:
            findings = _source_frame(spark, "findings", local, split_bytes, options)
            failed = said([row.file for row in findings.where(F.col("code") == "split-handover")
                           .select("file").distinct().collect()])
        for level in levels:
            _read_locally(spark, local, split_bytes, failed, options, level, schemas[level]) \
                .write.mode("overwrite").partitionBy("topic").parquet(locations[level])
    appended = {level: level_frame(hadoop, level, options, schemas[level]) for level in levels} if hadoop else {}
    if cross_checked:
        cross_checks = _cross_checks(spark, cross_checked)
        appended["findings"] = (appended["findings"].unionByName(cross_checks) if "findings" in appended
                                else cross_checks)
    for level, frame in appended.items():   # (their bytes are in Spark's hands: added by Spark's writer)
        frame.write.mode("append").partitionBy("topic").parquet(locations[level])
    progress("reporting")

    def table(level: str):
        # With the schema given, a table with no rows (a clean sweep has no findings) reads back empty.
        return spark.read.schema(SCHEMAS[level]).parquet(os.path.join(out_dir, level))

    if sums is None or appended:   # rows Spark's writer wrote: the tables read back and added up
        sums = tally_tables(spark, {level: table(level) for level in ("batches", "findings")})
    report = partition_report(sums, {_absolute(segment.path): segment.size for segment in segments}, cross_checked,
                              batches=lambda: table("batches"))
    report = _paths_as_given(report, given)
    from kbatch.output.jsonout import scan_dict

    return scan_dict(ScanReport(out_dir, sorted(levels), len(segments), total, report))


def _split_badly(sums: dict) -> list[str]:
    """The files whose ranges' walks did not each end where the next range began, by the tables' sums (their
    split-handover findings: kbatch.spark.tally)."""
    return sorted({row["file"] for row in sums["findings"].to_pylist() if row["code"] == "split-handover"})


def _views_meanwhile(paths: list[str]):
    """The read_committed views of the partitions of the local segments ``paths`` (kbatch.spark.source.committed_views),
    made on a thread of their own: a Future of them.

    A daemon thread, which the process does not wait for at exit: where Spark does not start, kbatch exits as soon
    as it has said so, not after the views of a tree it will never write (a thread of a ThreadPoolExecutor is
    waited for: 30 s for 100 GiB of segments).

    The thread runs at a lower priority (Linux: a thread's own nice value): the JVM's start, which this process
    waits for, keeps about 1.2 of 2 cores busy, and the views are to take what it leaves, not slow it (on 2 cores,
    views of 2.2 GB made beside it cost the scan 0.38 s more than views handed over ready; at nice 10, 0.14 s).
    Not lower: on a machine busy with other work, the thread would still have to finish before the tables job."""
    import threading
    from concurrent.futures import Future

    from kbatch.spark.source import committed_views

    views: Future = Future()

    def make() -> None:
        if sys.platform.startswith("linux"):   # (elsewhere PRIO_PROCESS takes a process id, never a thread's)
            try:
                thread = threading.get_native_id()
                os.setpriority(os.PRIO_PROCESS, thread, min(os.getpriority(os.PRIO_PROCESS, thread) + VIEWS_NICENESS,
                                                            19))
            except OSError:
                pass   # (only ever made nicer; a sandbox that refuses it changes nothing else)
        try:
            views.set_result(committed_views([path for path in paths if not through_hadoop(path)]))
        except BaseException as error:   # (handed to whoever asks for the views)
            views.set_exception(error)

    threading.Thread(target=make, name="kbatch-views", daemon=True).start()
    return views


def _partitions(paths: list[str], split_bytes: int, failed: list[str], schema, options: dict | None = None) -> list:
    """The tables' tasks, as the data source plans them (with the reads' ``options``' packing, if any): files
    that did not split cleanly read whole."""
    packing = {name: value for name, value in (options or {}).items()
               if name in ("openCostInBytes", "minPartitions")}

    def planned(files: list[str], split: int) -> list:
        level = {"level": "batches", "paths": json.dumps(files), "splitBytes": str(split), **packing}
        return KbatchReader(level, schema).partitions() if files else []

    return planned([path for path in paths if path not in failed], split_bytes) + planned(failed, 0)


def _read_locally(spark, paths: list[str], split_bytes: int, failed: list[str], options: dict, level: str, schema):
    """The ``level`` table of the files the executors open themselves, through the data source: the files that
    did not split cleanly read whole (an empty frame of ``schema`` for no file)."""
    frame = spark.createDataFrame([], schema)
    for files, split in (([path for path in paths if path not in failed], split_bytes), (failed, 0)):
        if files:
            frame = frame.unionByName(_source_frame(spark, level, files, split, options))
    return frame


def _source_frame(spark, level: str, files: list[str], split_bytes: int, options: dict):
    """The data source's ``level`` table of ``files`` (absolute paths), larger ones cut at ``split_bytes``."""
    return (spark.read.format("kbatch").option("level", level).option("paths", json.dumps(files))
            .option("splitBytes", str(split_bytes)).options(**options).load())


def _locations(spark, out_dir: str, levels: list[str]) -> dict[str, str]:
    """Where each level's table goes: where Spark's writer puts ``out_dir/level``.

    Spark puts a path with no scheme on Hadoop's default file system, which on many clusters is HDFS, not
    on each executor's local disk: the driver's JVM qualifies it; through Spark Connect (no JVM here), a
    row Spark writes in the batches table's place says where it went (the tables' writer clears it).
    """
    jvm = getattr(spark, "_jvm", None)
    if jvm is not None:
        path = jvm.org.apache.hadoop.fs.Path(out_dir)
        qualified = path.getFileSystem(spark._jsc.hadoopConfiguration()).makeQualified(path).toString()
        return {level: sibling_table(f"{qualified.rstrip('/')}/batches/x", "batches", level) for level in levels}
    batches = os.path.join(out_dir, "batches")
    spark.range(0, 1, 1, 1).write.mode("overwrite").parquet(batches)
    files = spark.read.parquet(batches).inputFiles()
    return {level: sibling_table(files[0], "batches", level) for level in levels}


def sibling_table(file_uri: str, table: str, name: str) -> str:
    """From the URI of a file of table ``table`` (``.../TABLE/topic=x/part-...``), table ``name``'s location
    beside it: a local path for ``file:`` URIs, the URI as it is otherwise."""
    from urllib.parse import unquote, urlparse

    location = file_uri[:file_uri.rindex(f"/{table}/")] + f"/{name}"
    return unquote(urlparse(location).path) if location.startswith("file:") else location


def _cross_checks(spark, directories: list[str]):
    """The findings table's rows of the partition directories' cross-checks, a task per directory.

    Through mapInArrow rather than the SparkContext, which a Spark Connect session does not have.
    """
    from functools import partial

    schema = spark.createDataFrame([], FINDING_SCHEMA).schema
    return (spark.range(0, len(directories), 1, len(directories))
            .mapInArrow(partial(_cross_check_batches, directories, schema), schema))


def _cross_check_batches(directories: list[str], schema, batches):
    """On an executor: for each directory index in ``batches``, its cross-check rows as Arrow batches."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from kbatch.spark.report import cross_check_rows
    from kbatch.spark.source import in_arrow_batches

    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    for batch in batches:
        for index in batch.column("id").to_pylist():
            yield from in_arrow_batches(cross_check_rows(directories[index]), arrow_schema)


def _absolute(path: str) -> str:
    return path if is_remote(path) else os.path.abspath(path.removeprefix("file://"))


def _paths_as_given(report: list[PartitionReport], given: dict[str, str]) -> list[PartitionReport]:
    for partition in report:
        partition.damaged_segments = sorted(given.get(path, path) for path in partition.damaged_segments)
        for between in partition.offset_gaps + partition.offset_overlaps:
            between.after = given.get(between.after, between.after)
            between.before = given.get(between.before, between.before)
    return report


def spark_error_line(error: BaseException) -> str | None:
    """One line for a failure on Spark's side (an executor's Python error, a JVM error), or None.

    What Spark raises carries the worker's whole traceback; its last ``SomethingError: ...`` line says
    what went wrong.
    """
    if not type(error).__module__.startswith(("pyspark", "py4j")):
        return None
    lines = [line.strip() for line in str(error).splitlines()]
    for line in reversed(lines):
        name, colon, message = line.partition(": ")
        if colon and name.rsplit(".", 1)[-1].endswith(("Error", "Exception")) and " " not in name:
            return f"{name.rsplit('.', 1)[-1]}: {message}"
    return next((line for line in lines if line), type(error).__name__)
