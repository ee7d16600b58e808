"""The batches level by whole columns (kbatch.spark.batch_columns) gives the full reader's rows, row for row.

Read without Spark (the data source's read, called directly): every fixture, and segments of random v2 headers,
each compiled and pure Python."""

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


def _schema():
    """The batches level's Arrow schema, its DDL (primitive columns only) read without a JVM as Spark reads it."""
    from pyspark.sql import types
    from pyspark.sql.pandas.types import to_arrow_schema

    from kbatch.spark.source import BATCH_SCHEMA

    kinds = {"STRING": types.StringType(), "INT": types.IntegerType(), "LONG": types.LongType(),
             "BOOLEAN": types.BooleanType()}
    return to_arrow_schema(types.StructType([types.StructField(name, kinds[kind]) for name, kind in
                                             (column.split() for column in BATCH_SCHEMA.split(", "))]),
                           timezone="UTC")


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
