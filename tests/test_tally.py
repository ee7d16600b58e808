"""What the scan report reads of the tables, added up as the tasks write them (kbatch.spark.tally), against Spark's
own SQL adding up the tables read back: the oracle, the query the report ran before the tasks added up."""

from __future__ import annotations

import json
import os
import struct
from collections import namedtuple

import pytest

from .handmade import batch, end_marker
from .helpers import FIXTURES

pa = pytest.importorskip("pyarrow")


def _transactions_partition(directory) -> str:
    """A partition of every way a producer's transactions end: committed, left open, ended by a marker whose CRC
    fails (its outcome unknown), data after such a marker (open again), and an idempotent producer of no
    transaction; one batch of no producer id in a transaction (damage)."""
    directory.mkdir(parents=True)
    entries, offset = [], 0

    def add(records, **fields):
        nonlocal offset
        entries.append(batch(offset, records, **fields))
        offset += len(records)

    def marker(producer_id: int, valid: bool = True):
        add([end_marker("COMMIT", 5)], control=True, transactional=True, producer_id=producer_id, producer_epoch=0)
        if not valid:
            entries[-1] = entries[-1][:17] + struct.pack(">I", 0) + entries[-1][21:]

    data = [(b"k", b"v")] * 3
    add(data, transactional=True, producer_id=7001, producer_epoch=0, base_sequence=0)   # committed
    marker(7001)
    add(data, transactional=True, producer_id=7002, producer_epoch=0, base_sequence=0)   # open
    add(data, transactional=True, producer_id=7003, producer_epoch=0, base_sequence=0)   # unknown
    marker(7003, valid=False)
    add(data, transactional=True, producer_id=7004, producer_epoch=0, base_sequence=0)   # doubted, then open again
    marker(7004, valid=False)
    add(data, transactional=True, producer_id=7004, producer_epoch=0, base_sequence=3)
    add(data, transactional=True, producer_id=7005, producer_epoch=0, base_sequence=0)   # doubted, then committed
    marker(7005, valid=False)
    marker(7005)
    add(data, producer_id=7006, producer_epoch=0, base_sequence=0)                       # idempotent only
    add(data, transactional=True, producer_id=-1, producer_epoch=-1)
    path = directory / "00000000000000000000.log"
    path.write_bytes(b"".join(entries))
    return str(path)


def _damaged_partition(directory) -> str:
    """A partition whose first and last batches fail their CRC (the last counting -1 records), one starting at time
    0, and a segment of batches of no time (-1): what each file's offsets, times and records leave out."""
    directory.mkdir(parents=True)

    def damaged(entry: bytes, count: int | None = None) -> bytes:
        entry = bytearray(entry)
        entry[17] ^= 0xFF   # (the CRC)
        if count is not None:
            entry[57:61] = struct.pack(">i", count)
        return bytes(entry)

    data = [(b"k", b"v")] * 3
    (directory / "00000000000000000000.log").write_bytes(
        damaged(batch(0, data)) + batch(100, data, timestamp=0) + batch(103, data) + damaged(batch(1000, data), -1))
    (directory / "00000000000000000200.log").write_bytes(batch(200, data, timestamp=-1) + batch(203, data, timestamp=-1))
    return str(directory)


def _segments(tmp_path) -> list[str]:
    from kbatch.files.inputs import list_segments

    inputs = [str(FIXTURES / "logdir"), *map(str, sorted(FIXTURES.glob("*.log"))), str(FIXTURES / "internal"),
              _transactions_partition(tmp_path / "input" / "orders-9"), _damaged_partition(tmp_path / "input" / "orders-8")]
    return [os.path.abspath(segment.path) for segment in list_segments(inputs, "*.log")]


def _oracle(spark, batches, findings) -> dict[str, list]:
    """Each part of kbatch.spark.tally.PARTS added up by Spark's SQL over the tables read back, as rows."""
    from pyspark.sql import functions as F

    compressed, whole = F.col("codec") != "none", ~F.col("damaged")
    transactional, control = F.col("is_transactional"), F.col("is_control")
    files = batches.groupBy("topic", "partition", "file").agg(
        F.count("*").alias("batches"),
        F.sum(F.greatest(F.coalesce("count", F.lit(0)), F.lit(0))).alias("records"),
        F.sum(F.when(compressed, F.col("payload_size"))).alias("compressed_bytes"),
        F.sum(F.when(compressed, F.col("decompressed_size"))).alias("inflated_bytes"),
        F.sum(F.col("damaged").cast("long")).alias("corrupt_batches"),
        F.min(F.when(whole, F.col("base_offset"))).alias("first_offset"),
        F.max(F.when(whole, F.col("last_offset"))).alias("last_offset"),
        F.min(F.when(F.col("base_timestamp") >= 0, F.col("base_timestamp"))).alias("first_timestamp"),
        F.max(F.when(F.col("max_timestamp") >= 0, F.col("max_timestamp"))).alias("last_timestamp"))
    found = findings.groupBy("topic", "partition", "file", "code", "severity").agg(F.count("*").alias("findings"))
    producers = (batches.where((F.col("producer_id") >= 0) | transactional)
                 .groupBy("topic", "partition", "producer_id").agg(
                     F.max(transactional).alias("transactional"),
                     F.max(F.when(transactional & ~control, F.col("last_offset"))).alias("last_data"),
                     F.max(F.when(transactional & control & F.col("crc_valid"), F.col("last_offset")))
                     .alias("last_marker"),
                     F.max(F.when(transactional & control & ~F.col("crc_valid"), F.col("last_offset")))
                     .alias("last_doubted")))
    return {name: _sorted(frame.collect()) for name, frame in
            (("files", files), ("findings", found), ("producers", producers))}


def _sorted(rows) -> list:
    return sorted(json.dumps(row.asDict() if hasattr(row, "asDict") else row, sort_keys=True) for row in rows)


def _as_rows(sums: dict) -> dict[str, list]:
    return {name: _sorted(table.to_pylist()) for name, table in sums.items()}


@pytest.mark.parametrize("split_bytes", [0, 300], ids=["whole", "cut"])
def test_the_tasks_sums_are_what_sparks_sql_adds_up_from_the_tables(spark, tmp_path, split_bytes):
    from kbatch.spark.records_table import write_tables
    from kbatch.spark.source import SCHEMAS, KbatchReader
    from kbatch.spark.tally import tally_tables

    schemas = {level: spark.createDataFrame([], SCHEMAS[level]).schema for level in ("batches", "findings")}
    out = tmp_path / "out"
    options = {"deep": "true", "decompress": "true"}
    # Several tasks, so that the driver adds up sums of one partition's files from more than one; cut every 300
    # bytes into tasks of at most 300 bytes, a file's ranges go to more than one task too.
    planned = {"level": "batches", "paths": json.dumps(_segments(tmp_path)), "splitBytes": str(split_bytes),
               "minPartitions": "4", **({"maxPartitionBytes": str(split_bytes)} if split_bytes else {})}
    partitions = KbatchReader(planned, schemas["batches"]).partitions()
    assert len(partitions) >= 3
    tasks_of = {}
    for task, partition in enumerate(partitions):
        for file_range in partition.ranges:
            tasks_of.setdefault(file_range.path, set()).add(task)
    assert (max(map(len, tasks_of.values())) > 1) == bool(split_bytes)
    written = write_tables(spark, partitions, {level: (str(out / level), schemas[level]) for level in schemas}, options)
    tables = {level: spark.read.schema(schemas[level]).parquet(str(out / level)) for level in schemas}
    oracle = _oracle(spark, tables["batches"], tables["findings"])
    assert _as_rows(written.sums) == oracle
    # Every part has rows to compare, and the transactions' partition its six producers and the batch of none.
    assert all(oracle.values()) and sum('"partition": 9' in row for row in oracle["producers"]) == 7
    damaged = [json.loads(row) for row in oracle["files"] if '"partition": 8' in row]
    assert [(row["batches"], row["records"], row["corrupt_batches"], row["first_offset"], row["last_offset"],
             row["first_timestamp"], row["last_timestamp"]) for row in sorted(damaged, key=lambda row: row["file"])] \
        == [(4, 9, 2, 100, 105, 0, 1_700_000_000_000), (2, 6, 0, 200, 205, None, None)]
    assert written.rows == {"batches": tables["batches"].count(),
                            "findings": tables["findings"].count()}
    # The tables Spark's writer writes are added up read back, by the same functions.
    assert _as_rows(tally_tables(spark, tables)) == oracle


def test_a_tally_adds_up_the_same_whatever_the_batches_and_however_often_it_adds_its_sums_up(monkeypatch):
    from kbatch.spark import tally as tally_module
    from kbatch.spark.tally import Tally

    rows = pa.table({"topic": ["t", "t", None, "t", "u"], "partition": pa.array([0, 0, None, 0, 1], pa.int32()),
                     "file": ["a", "a", "x", "b", "c"], "code": ["crc", "crc", "cut", "crc", "crc"],
                     "severity": ["error", "error", "error", "warning", "error"]})
    whole = Tally("findings")
    whole.add(rows)
    monkeypatch.setattr(Tally, "KEEP", 2)
    piecemeal = Tally("findings")
    for one_row in rows.to_batches(max_chunksize=1):
        piecemeal.add(one_row)
    assert len(piecemeal.held["findings"]) < 5   # (added up as it went)
    assert whole.sums()["findings"].to_pylist() == piecemeal.sums()["findings"].to_pylist() == [
        {"topic": "t", "partition": 0, "file": "a", "code": "crc", "severity": "error", "findings": 2},
        {"topic": None, "partition": None, "file": "x", "code": "cut", "severity": "error", "findings": 1},
        {"topic": "t", "partition": 0, "file": "b", "code": "crc", "severity": "warning", "findings": 1},
        {"topic": "u", "partition": 1, "file": "c", "code": "crc", "severity": "error", "findings": 1}]
    # The driver adds the tasks' sums up: one task's, another's, none at all.
    summed = tally_module.merged([*whole.sent(), *piecemeal.sent(), *Tally("records").sent()])
    assert [row["findings"] for row in summed["findings"].to_pylist()] == [4, 2, 2, 2]
    assert summed["files"].num_rows == summed["producers"].num_rows == 0


Producer = namedtuple("Producer", "topic partition producer_id transactional last_data last_marker last_doubted")


def test_which_transactions_are_left_open_or_of_unknown_outcome():
    from kbatch.spark.report import transactions

    producers = [Producer("t", 0, 1, True, 10, 11, None),     # committed
                 Producer("t", 0, 2, True, 10, None, None),   # no marker: open
                 Producer("t", 0, 3, True, 10, 8, None),      # data after its marker: open
                 Producer("t", 0, 4, True, 10, None, 12),     # a marker whose CRC fails ends it: unknown
                 Producer("t", 0, 5, True, 10, 13, 12),       # ... unless a marker believed comes after
                 Producer("t", 0, 6, True, 14, None, 12),     # data after the doubted marker: open
                 Producer("t", 0, 7, True, None, None, 12),   # markers only: nothing open
                 Producer("t", 0, 8, False, None, None, None),   # idempotent, no transaction
                 Producer("t", 0, None, True, 10, None, None),   # a transaction's batch of no producer: damage
                 Producer("u", 1, -1, True, 3, None, None)]   # (no producer id counted; its transaction open)
    counted, left_open, unknown = transactions(producers)
    assert dict(counted) == {("t", 0): 8, ("u", 1): 0}
    assert dict(left_open) == {("t", 0): [2, 3, 6], ("u", 1): [-1]}
    assert dict(unknown) == {("t", 0): [4]}


def test_the_reports_gaps_between_files_named_as_no_offset_come_in_one_order_whatever_the_tasks_order():
    """Files outside a partition's directory, named as no base offset and starting at the same offset: the
    report's gaps between them are the same whichever task's sums came first (the file name settles ties)."""
    from kbatch.spark.report import partition_report
    from kbatch.spark.tally import PARTS, _ipc, merged

    def sums_of(*files):
        names = (*PARTS["files"].keys, *PARTS["files"].sums)
        rows = [dict(zip(names, (None, None, path, 1, 3, None, None, 0, first, last, None, None)))
                for path, first, last in files]
        return {"files": pa.Table.from_pylist(rows)}

    files = [("/x/b.log", 0, 4), ("/x/a.log", 0, 9), ("/x/c.log", 20, 29)]
    sizes = dict.fromkeys((path for path, _, _ in files), 100)
    reports = [partition_report(merged([("files", _ipc(sums_of(*order)["files"]))]), sizes)
               for order in (files, files[::-1], files[1:] + files[:1])]
    gaps = [[(gap.after, gap.before, gap.first, gap.last) for gap in report.offset_gaps] for (report,) in reports]
    overlaps = [[(lap.after, lap.before, lap.first, lap.last) for lap in report.offset_overlaps] for (report,) in reports]
    assert gaps == [[("/x/b.log", "/x/c.log", 5, 19)]] * 3
    assert overlaps == [[("/x/a.log", "/x/b.log", 0, 9)]] * 3
