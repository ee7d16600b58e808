"""The kbatch data source takes Spark's filters on the records level (pushFilters), reads less, and gives the same
rows; the records table's visible_to_read_committed; ``kbatch grep --spark`` prints what grep prints."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from .helpers import FIXTURES

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("kbatch on Spark needs Java", allow_module_level=True)

from pyspark.sql import datasource as ds  # noqa: E402

LOGDIR = FIXTURES / "logdir"




def _reader(spark, paths, pushdown: bool = True):
    from kbatch.spark import source

    schema = spark.createDataFrame([], source.RECORD_SCHEMA).schema
    options = {"level": "records", "paths": json.dumps([str(path) for path in paths])}
    return (source.FilteringKbatchReader if pushdown else source.KbatchReader)(options, schema)


def _rows(reader) -> list[dict]:
    names = list(reader.schema.names)
    rows = []
    for partition in reader.partitions():
        for batch in reader.read(partition):
            rows += batch.to_pylist()
    return sorted(({name: row[name] for name in names} for row in rows),
                  key=lambda row: (row["file"], row["batch_pos"], row["offset"]))


def test_the_filters_the_records_level_can_apply_are_kept_and_the_rest_handed_back(spark):
    reader = _reader(spark, [LOGDIR])
    filters = [ds.EqualTo(("key",), b"order-1"), ds.GreaterThanOrEqual(("offset",), 1), ds.In(("topic",), ("orders",)),
               ds.StringEndsWith(("key",), "1"), ds.EqualTo(("codec",), "gzip"), ds.IsNotNull(("key",))]
    left = list(reader.pushFilters(filters))
    assert left == filters[3:]
    assert reader.pushed.kept == filters[:3]


@pytest.mark.parametrize("filters", [
    [ds.EqualTo(("key",), b"key-3")],
    [ds.StringContains(("value",), "value-1")],
    [ds.StringStartsWith(("key",), "key-1"), ds.LessThan(("offset",), 1000)],
    [ds.In(("key",), (b"key-0", b"key-9")), ds.EqualTo(("partition",), 1)],
    [ds.EqualTo(("topic",), "payments"), ds.GreaterThan(("timestamp",), 1700000000003)],
])
def test_pushed_filters_read_fewer_rows_and_give_the_rows_spark_would_keep(spark, filters):
    every = _rows(_reader(spark, [LOGDIR], pushdown=False))
    reader = _reader(spark, [LOGDIR])
    assert list(reader.pushFilters(filters)) == []
    from kbatch.spark.source import _holds

    def passes(row):
        return all(_holds(each, row[each.attribute[0]]) for each in filters)

    pushed = _rows(reader)
    assert pushed == [row for row in every if passes(row)]
    assert len(pushed) < len(every)


def _plan(frame) -> str:
    return frame._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("where", ["key = 'key-3'", "key in ('key-1', 'key-7') and offset >= 1",
                                   "topic = 'orders' and partition = 1", "value like '%value-1%'",
                                   "offset between 2 and 5 or key = 'key-9'", "timestamp > 1700000000005"])
def test_a_query_gives_the_same_rows_with_and_without_pushdown(spark, where):
    def rows(pushdown: bool):
        frame = (spark.read.format("kbatch").option("level", "records").option("pushFilters", str(pushdown).lower())
                 .load(str(LOGDIR)).where(where))
        return sorted((row.file, row.offset, row.key, row.value, row.visible_to_read_committed)
                      for row in frame.collect()), _plan(frame)

    (pushed, plan), (plain, plain_plan) = rows(True), rows(False)
    assert pushed == plain and pushed
    if where == "key = 'key-3'":   # Spark filters no more: the source did
        key_3 = "= 0x" + b"key-3".hex().upper()   # the predicate as the plan writes it
        assert key_3 in plain_plan and key_3 not in plan


def test_visible_to_read_committed_is_what_grep_says(spark, kbatch, tmp_path):
    from .test_grep import _transactional_partition

    seen = _transactional_partition(tmp_path)
    rows = (spark.read.format("kbatch").option("level", "records").load(str(tmp_path / "orders-0"))
            .select("offset", "is_control", "visible_to_read_committed").collect())
    data = {row.offset: row.visible_to_read_committed for row in rows if not row.is_control}
    assert data == seen
    assert all(row.visible_to_read_committed is False for row in rows if row.is_control)


@pytest.mark.parametrize("args", [["key-1"], ["-c", "--key", "key"], ["--format", "jsonl", "-v", "e"],
                                  ["--isolation", "read_committed", "value"], ["key"],
                                  ["--isolation", "read_uncommitted", "key"]])
def test_grep_on_spark_prints_what_grep_prints(spark, kbatch, args):
    here = kbatch("grep", *args, "fixtures/logdir")
    there = kbatch("grep", "--spark", "--master", "local[2]", *args, "fixtures/logdir")
    assert (there.out, there.code) == (here.out, here.code)
    assert here.out

    def refused(err):   # what is said of the records a consumer refuses (payments-0 holds a batch whose CRC fails)
        return [line for line in err.splitlines() if "a consumer refuses" in line]
    assert refused(there.err) == refused(here.err)
    assert bool(refused(here.err)) == (args[-1] == "key")


def test_only_the_records_level_takes_filters():
    """Spark refuses a reader that takes filters when pushdown is off: the other levels take none, and
    pushFilters false reads records without."""
    from kbatch.spark.source import FilteringKbatchReader, KbatchDataSource, KbatchReader

    def reader(**options):
        return type(KbatchDataSource(options).reader(None))

    assert reader(level="batches") is reader(level="findings") is reader(level="records", pushFilters="false") \
        is KbatchReader
    assert reader(level="records") is FilteringKbatchReader
