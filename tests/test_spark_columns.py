"""The batches level by whole columns (kbatch.spark.batch_columns) and the records level from the walk's record
columns (kbatch.spark.record_columns) give the full reader's rows, row for row.

Read without Spark (the data source's read, called directly): every fixture, damaged ones too, and segments of
random v2 headers, each compiled and pure Python."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys

import pytest

from .helpers import FIXTURES

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

INPUTS = sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "vectors").glob("*.bin"))


def _schema(ddl: str | None = None):
    """A level's Arrow schema (the batches level's by default), its DDL read without a JVM as Spark reads it."""
    import re

    from pyspark.sql import types
    from pyspark.sql.pandas.types import to_arrow_schema

    from kbatch.spark.source import BATCH_SCHEMA

    header = types.StructType([types.StructField("key", types.BinaryType()),
                               types.StructField("value", types.BinaryType())])
    kinds = {"STRING": types.StringType(), "INT": types.IntegerType(), "LONG": types.LongType(),
             "BOOLEAN": types.BooleanType(), "BINARY": types.BinaryType(),
             "ARRAY<STRUCT<key: BINARY, value: BINARY>>": types.ArrayType(header)}
    columns = re.split(r", (?=\w+ )", ddl or BATCH_SCHEMA)   # (not at the comma inside a struct's fields)
    return to_arrow_schema(types.StructType([types.StructField(name, kinds[kind]) for name, kind in
                                             (column.split(" ", 1) for column in columns)]), timezone="UTC")


def rows_both_ways(paths: list[str], inflate: bool) -> list:
    """Per path: (rows by columns, rows from the full reader), each row a list of values."""
    from kbatch.spark.source import FileRange, KbatchReader, batch_arrow

    schema = _schema()
    source = KbatchReader({"level": "batches", "decompress": str(inflate).lower()}, None)
    from kbatch.spark.batch_columns import BatchColumnsRun

    flush, taken = BatchColumnsRun.flush, []

    def counted(run, *args):   # the rows the columns gave (a run that took nothing would prove nothing)
        taken.append(run.held)
        return flush(run, *args)

    BatchColumnsRun.flush = counted
    out = []
    for path in paths:
        size = os.path.getsize(path)
        whole = FileRange(path, 0, size, size)
        both = []
        for columnar in (True, False):
            batches = list(batch_arrow([whole], source, schema, columnar=columnar))
            assert all(batch.schema == schema for batch in batches)
            both.append([list(row.values()) for batch in batches for row in batch.to_pylist()])
        out.append(both)
    BatchColumnsRun.flush = flush
    out.append(sum(taken))
    return out


def random_segment(seed: int) -> bytes:
    """v2 batches whose CRCs hold and whose headers take every kind of value a row shows: flags, timestamps
    -1, 0 and past year 9999, sequences near the int32 wrap, every codec id (the records are not read)."""
    import crc32c

    rng = random.Random(seed)
    out = bytearray()
    offset = 0
    for _ in range(300):
        payload = rng.randbytes(rng.randrange(0, 40))
        attributes = rng.choice([0, 0x08, 0x10, 0x20, 0x40, 0x48, 0x30]) | rng.choice([0, 0, 1, 2, 3, 4, 7])
        delta = rng.choice([0, 1, 5, 2**31 - 1])
        timestamp = rng.choice([-1, 0, 1_700_000_000_000, 253402300799999, 253402300800000, -5, 2**62])
        sequence = rng.choice([-1, 0, 7, 2**31 - 1, 2**31 - 3, -2])
        after_crc = struct.pack(">hiqqqhii", attributes, delta, timestamp, rng.choice([timestamp, -1, 86_399_999]),
                                rng.choice([-1, 0, 2**63 - 1]), rng.choice([-1, 0, 32767]), sequence,
                                rng.choice([0, 1, 3, 2**31 - 1])) + payload
        out += struct.pack(">qiibI", offset, 9 + len(after_crc), rng.choice([-1, 0, 17]), 2,
                           crc32c.crc32c(after_crc)) + after_crc
        offset += rng.choice([1, 10, 2**40])
    return bytes(out)


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> list[str]:
    directory = tmp_path_factory.mktemp("columns")
    made = []
    for seed in range(3):
        path = directory / f"random-{seed}.log"
        path.write_bytes(random_segment(seed))
        made.append(str(path))
    return [str(path) for path in INPUTS] + made


@pytest.mark.parametrize("inflate", [False, True], ids=["as-stored", "decompress"])
def test_columns_give_the_full_readers_rows(paths, inflate):
    *per_path, by_columns_count = rows_both_ways(paths, inflate)
    for path, (by_columns, by_reader) in zip(paths, per_path):
        assert by_columns == by_reader, path
    (random_rows, _), random_by_columns = rows_both_ways(paths[-1:], inflate)
    assert len(random_rows) == 300   # every batch a row: none lost between the columns and the reader
    assert random_by_columns > (90 if inflate else 250) and by_columns_count > (300 if inflate else 900)


def test_pure_python_gives_the_same_rows(paths):
    """The build without compiled kernels (KBATCH_PURE_PYTHON=1) gives the same rows, both ways."""
    script = ("import json, sys; from tests.test_spark_columns import rows_both_ways; "
              "print(json.dumps(rows_both_ways(json.loads(sys.argv[1]), True)[:-1], default=repr))")
    done = subprocess.run([sys.executable, "-c", script, json.dumps(paths)], capture_output=True, text=True,
                          env={**os.environ, "KBATCH_PURE_PYTHON": "1"}, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == json.loads(json.dumps(rows_both_ways(paths, True)[:-1], default=repr))


def test_a_tasks_files_share_record_batches(paths):
    """A task's ranges (many tiny segments) go into the same record batches, each row naming its own file."""
    from kbatch.spark import source
    from kbatch.spark.source import FileRange, KbatchReader, batch_arrow

    schema = _schema()
    reader = KbatchReader({"level": "batches", "decompress": "true"}, None)
    ranges = [FileRange(path, 0, os.path.getsize(path), os.path.getsize(path)) for path in paths]
    together = list(batch_arrow(ranges, reader, schema))
    alone = [batch for one in ranges for batch in batch_arrow([one], reader, schema, columnar=False)]
    assert [row for batch in together for row in batch.to_pylist()] == \
        [row for batch in alone for row in batch.to_pylist()]
    assert all(batch.num_rows <= source.ARROW_ROWS for batch in together)
    # the random segments' batches, all clean as stored: the three files' 900 rows in one record batch
    as_stored = KbatchReader({"level": "batches"}, None)
    assert [batch.num_rows for batch in batch_arrow(ranges[-3:], as_stored, schema)] == [900]


def test_columns_full_in_the_middle_of_a_window_go_out_and_the_walk_goes_on(paths, monkeypatch):
    """Record batches of 7 rows: the compiled loop fills its buffers mid-window and mid-file, hands back, and
    goes on where it stopped; every row still the full reader's, in order, naming its own file."""
    from kbatch.spark import source
    from kbatch.spark.source import FileRange, KbatchReader, batch_arrow

    schema = _schema()
    reader = KbatchReader({"level": "batches"}, None)
    ranges = [FileRange(path, 0, os.path.getsize(path), os.path.getsize(path)) for path in paths[-3:]]
    alone = [row for one in ranges for batch in batch_arrow([one], reader, schema, columnar=False)
             for row in batch.to_pylist()]
    monkeypatch.setattr(source, "ARROW_ROWS", 7)
    together = list(batch_arrow(ranges, reader, schema))
    assert [row for batch in together for row in batch.to_pylist()] == alone and len(alone) == 900
    assert {batch.num_rows for batch in together} == {7, 900 % 7}


# -- the records level ------------------------------------------------------------------------------------

RECORD_INPUTS = INPUTS + sorted(FIXTURES.glob("*/**/*.log"))   # logdir, partitions, internal topics, registry


def record_rows_both_ways(paths: list[str]) -> list:
    """Per path: (rows by the walk's columns, rows with a Batch of every batch), each row a list of values; and
    last, how many batches the walk's run took."""
    from kbatch.spark.record_columns import RecordColumnsRun
    from kbatch.spark.source import RECORD_SCHEMA, FileRange, KbatchReader, record_batches

    schema = _schema(RECORD_SCHEMA)
    source = KbatchReader({"level": "records"}, None)
    walk, runs = RecordColumnsRun.walk, []

    def counted(run, *args):   # (a run that took nothing would prove nothing)
        if run not in runs:
            runs.append(run)
        return walk(run, *args)

    RecordColumnsRun.walk = counted
    out = []
    try:
        for path in paths:
            size = os.path.getsize(path)
            both = []
            for columnar in (True, False):
                batches = list(record_batches([FileRange(path, 0, size, size)], source, schema, columnar=columnar))
                assert all(batch.schema == schema for batch in batches)
                both.append([list(row.values()) for batch in batches for row in batch.to_pylist()])
            out.append(both)
    finally:
        RecordColumnsRun.walk = walk
    out.append(sum(run.taken for run in runs))
    return out


def random_records_segment(seed: int) -> bytes:
    """v2 batches of records kafka-python's builder writes (every codec it has, LogAppendTime, transactional,
    sequences, headers, null keys and values, a value in the schema registry's framing), and a few with
    a record's bytes flipped under a CRC made to hold."""
    import crc32c
    from kafka.record.default_records import DefaultRecordBatchBuilder

    rng = random.Random(seed)
    out = bytearray()
    offset = 0
    for index in range(120):
        transactional = rng.random() < 0.2
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=rng.choice([0, 0, 0, 1, 2, 3, 4]),
                                            is_transactional=transactional,
                                            producer_id=rng.choice([-1, 7]) if not transactional else 7,
                                            producer_epoch=0, base_sequence=rng.choice([-1, 0, 2**31 - 2]),
                                            batch_size=1 << 20)
        for delta in range(rng.choice([0, 1, 3, 20])):
            key = rng.choice([None, b"", rng.randbytes(rng.randrange(1, 12))])
            value = b"\x00\x00\x00\x00\x05ok" if rng.random() < 0.01 else rng.choice([None, rng.randbytes(40)])
            headers = [(f"h{n}", rng.choice([None, rng.randbytes(3)])) for n in range(rng.choice([0, 0, 2]))]
            builder.append(delta, timestamp=1_700_000_000_000 + rng.randrange(-5, 5000), key=key, value=value,
                           headers=headers)
        data = bytearray(builder.build())
        struct.pack_into(">q", data, 0, offset)
        if rng.random() < 0.2:   # LogAppendTime: every record's timestamp is the batch's maxTimestamp
            struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x08)
        if rng.random() < 0.1 and len(data) > 70:   # a record's byte flipped (the CRC made to hold)
            data[rng.randrange(61, len(data))] ^= 0xFF
        struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
        out += data
        offset += 100 + index
    return bytes(out)


@pytest.fixture(scope="module")
def record_paths(tmp_path_factory) -> list[str]:
    pytest.importorskip("kafka")
    directory = tmp_path_factory.mktemp("records")
    made = []
    for seed in range(3):
        path = directory / f"records-{seed}.log"
        path.write_bytes(random_records_segment(seed))
        made.append(str(path))
    # Past the reader's window (kbatch.reading.window.CHUNK): the walk reads on in a window slid along the file.
    from kbatch.reading.window import CHUNK

    larger = directory / "records-larger.log"
    segment = random_records_segment(3)
    larger.write_bytes(segment * (CHUNK // len(segment) + 2))
    return [str(path) for path in RECORD_INPUTS] + made + [str(larger)]


@pytest.mark.parametrize("arrow_rows", [4096, 5], ids=["record-batches", "tiny-record-batches"])
def test_the_walks_record_columns_give_the_full_readers_rows(record_paths, arrow_rows, monkeypatch):
    """With record batches of a few rows too: each held batch goes out before a batch that does not fit."""
    from kbatch.spark import source

    monkeypatch.setattr(source, "ARROW_ROWS", arrow_rows)
    paths = record_paths if arrow_rows > 5 else record_paths[:-1]   # (the larger file's window: not per row count)
    *per_path, taken = record_rows_both_ways(paths)
    for path, (by_columns, by_reader) in zip(paths, per_path):
        assert by_columns == by_reader, path
    assert sum(len(by_reader) for _, by_reader in per_path) > (5000 if arrow_rows > 5 else 1000)
    assert taken > (300 if arrow_rows > 5 else 200)   # most batches went without a Batch made of them


@pytest.mark.parametrize("arrow_rows", [4096, 5], ids=["record-batches", "tiny-record-batches"])
def test_a_tasks_files_share_record_batches_of_records(record_paths, arrow_rows, monkeypatch):
    """A task's ranges go into the same record batches of records, each row naming its own file, its topic and
    partition and its partition's read_committed view; an internal topic's file between them keeps its order."""
    from kbatch.spark import source
    from kbatch.spark.source import RECORD_SCHEMA, FileRange, KbatchReader, record_batches

    monkeypatch.setattr(source, "ARROW_ROWS", arrow_rows)
    schema = _schema(RECORD_SCHEMA)
    reader = KbatchReader({"level": "records"}, None)
    paths = record_paths if arrow_rows > 5 else record_paths[:-1]   # (the larger file's window: not per row count)
    ranges = [FileRange(path, 0, os.path.getsize(path), os.path.getsize(path)) for path in paths]
    together = list(record_batches(ranges, reader, schema))
    alone = [list(record_batches([one], reader, schema)) for one in ranges]
    assert [row for batch in together for row in batch.to_pylist()] == \
        [row for batches in alone for batch in batches for row in batch.to_pylist()]
    assert all(batch.num_rows <= arrow_rows for batch in together)
    if arrow_rows > 5:   # fewer record batches than one per file and more: files shared them
        assert len(together) < sum(len(batches) for batches in alone)


def test_pure_python_gives_the_same_records(record_paths):
    """The build without compiled kernels (KBATCH_PURE_PYTHON=1) gives the same rows, both ways."""
    script = ("import json, sys; from tests.test_spark_columns import record_rows_both_ways; "
              "print(json.dumps(record_rows_both_ways(json.loads(sys.argv[1]))[:-1], default=repr))")
    done = subprocess.run([sys.executable, "-c", script, json.dumps(record_paths)], capture_output=True, text=True,
                          env={**os.environ, "KBATCH_PURE_PYTHON": "1"}, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == json.loads(json.dumps(record_rows_both_ways(record_paths)[:-1], default=repr))


def test_the_run_takes_batches_again_after_one_that_had_no_room_where_a_walk_began(tmp_path, monkeypatch):
    """A walk ends at the window's end holding rows; when the next batch's records do not fit beside them, that
    batch is the full reader's (which sends the held rows out first), and the run takes the batches after it
    again: not the rest of the file through the full reader."""
    pytest.importorskip("kafka")
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kbatch.reading.window import CHUNK
    from kbatch.spark import source

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for delta in range(5):
        builder.append(delta, timestamp=1_700_000_000_000, key=b"k", value=b"v" * 100, headers=[])
    batch = bytes(builder.build())
    count = 3 * CHUNK // len(batch)   # windows end between batches that hold 5 or 10 rows
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(batch * count)
    monkeypatch.setattr(source, "ARROW_ROWS", 12)   # two batches' records fit, a third does not
    (by_columns, by_reader), taken = record_rows_both_ways([str(path)])
    assert by_columns == by_reader and len(by_columns) == 5 * count
    assert taken > 0.99 * count



def test_the_records_level_leaves_the_crcs_to_an_earlier_walk_of_the_same_file_only(tmp_path, monkeypatch):
    """Of a whole file an earlier walk of the task found clean (KbatchReader.walked_clean: the batches level's in
    kbatch scan), the records level's run computes no CRC again while the file is the same (source.file_identity);
    once a record's byte was flipped in it since, or another file was renamed into its place, every CRC is computed
    again, and the rows are those of a reader that walked nothing before."""
    pytest.importorskip("kafka")
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kbatch.spark import record_columns
    from kbatch.spark.source import BATCH_SCHEMA, RECORD_SCHEMA, FileRange, KbatchReader, batch_arrow, record_batches

    segment = bytearray()
    for index in range(20):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for delta in range(5):
            builder.append(delta, timestamp=1_700_000_000_000, key=b"k%d" % index, value=b"v" * 100, headers=[])
        batch = bytearray(builder.build())
        struct.pack_into(">q", batch, 0, 5 * index)
        segment += batch
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(segment)
    os.utime(path, ns=(10**18, 10**18))   # (a write after it sets another time, whatever the clock's tick)
    file_range = FileRange(str(path), 0, len(segment), len(segment))
    crcs: list[bool] = []   # per call of the compiled loop: whether it was handed the CRC to compute
    loop = record_columns.batches_into_rows
    monkeypatch.setattr(record_columns, "batches_into_rows",
                        lambda *args: crcs.append(args[8] is not None) or loop(*args))

    def records(walked_clean=None) -> list:
        crcs.clear()
        reader = KbatchReader({"level": "records"}, None)
        if walked_clean is not None:
            reader.walked_clean = walked_clean
        return [row for batch in record_batches([file_range], reader, _schema(RECORD_SCHEMA))
                for row in batch.to_pylist()]

    batches = KbatchReader({"level": "batches"}, None)
    assert sum(batch.num_rows for batch in batch_arrow([file_range], batches, _schema(BATCH_SCHEMA))) == 20
    assert file_range in batches.walked_clean
    fresh = records()
    assert len(fresh) == 100 and crcs and all(crcs)
    assert records(batches.walked_clean) == fresh and crcs and not any(crcs)

    with open(path, "r+b") as stream:   # a record's value byte, same size: the third batch's CRC fails
        stream.seek(2 * len(segment) // 20 + 100)
        stream.write(b"w")
    flipped = records()
    assert records(batches.walked_clean) == flipped and crcs and all(crcs)

    other = tmp_path / "other.log"   # the clean bytes again, another file renamed into the path
    other.write_bytes(segment)
    os.utime(other, ns=(10**18, 10**18))
    os.replace(other, path)
    assert records(batches.walked_clean) == fresh and crcs and all(crcs)


def rows_reread_one_batch_at_a_time(paths: list[str]) -> dict:
    """The records level of ``paths`` (one task's ranges, record batches of 64 rows) read twice: every record batch
    held, then each let go of before the next is read; the rows of each read, the gatherers (RecordRows) each
    made, and its record batches made from gatherers."""
    from kbatch.kernels import recordwalk
    from kbatch.spark.record_columns import RecordColumnsRun   # noqa: F401  (its kernels import RecordRows first)
    from kbatch.spark.source import RECORD_SCHEMA, ColumnarRecords, FileRange, KbatchReader, record_batches

    schema = _schema(RECORD_SCHEMA)
    reader = KbatchReader({"level": "records"}, None)
    reader.record_rows = 64
    ranges = [FileRange(path, 0, os.path.getsize(path), os.path.getsize(path)) for path in paths]
    made, flushed, gatherer, flush = [], [], recordwalk.RecordRows, ColumnarRecords.flush
    recordwalk.RecordRows = lambda *args: made.append(gatherer(*args)) or made[-1]
    ColumnarRecords.flush = lambda records: flushed.append(records.rows) or flush(records)
    out = {}
    try:
        for way in ("held", "one_at_a_time"):
            made.clear()
            flushed.clear()
            if way == "held":
                held = list(record_batches(ranges, reader, schema))
                out[way] = [batch.to_pylist() for batch in held]
                del held
            else:   # (each record batch let go of as the next is read)
                out[way] = [batch.to_pylist() for batch in record_batches(ranges, reader, schema)]
            out[f"{way}_made"], out[f"{way}_flushed"] = len(made), len(flushed)
    finally:
        recordwalk.RecordRows, ColumnarRecords.flush = gatherer, flush
    return out


def test_a_gatherers_buffers_take_other_rows_only_once_its_record_batch_is_let_go_of(record_paths):
    """ColumnarRecords gathers a record batch's rows into the buffers of one whose record batch is gone, never of
    one still held: read one record batch at a time, three gatherers serve them all (the one a batch is read from,
    the one gathering the next, the one let go of), and the rows are those read with every record batch held, for
    which each flush made a gatherer anew; compiled and pure Python."""
    read = rows_reread_one_batch_at_a_time(record_paths)
    assert read["held_flushed"] == read["one_at_a_time_flushed"] > 40
    assert (read["held_made"], read["one_at_a_time_made"]) == (read["held_flushed"] + 1, 3)
    assert read["one_at_a_time"] == read["held"] and sum(map(len, read["held"])) > 5000
    # The pure build on all but the largest file (the same gatherers' rule; the largest takes it seconds more)
    first = rows_reread_one_batch_at_a_time(record_paths[:-1])
    assert first["held_flushed"] > 10 and first["one_at_a_time_made"] == 3
    script = ("import json, sys; from tests.test_spark_columns import rows_reread_one_batch_at_a_time; "
              "print(json.dumps(rows_reread_one_batch_at_a_time(json.loads(sys.argv[1])), default=repr))")
    done = subprocess.run([sys.executable, "-c", script, json.dumps(record_paths[:-1])], capture_output=True,
                          text=True, env={**os.environ, "KBATCH_PURE_PYTHON": "1"},
                          cwd=os.path.dirname(os.path.dirname(__file__)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == json.loads(json.dumps(first, default=repr))
