"""``kbatch scan``'s records table, written with Arrow's Parquet writer, against Spark's own writer.

Spark's ``.partitionBy("topic").parquet(...)`` of the data source's records level is the oracle: the
table kbatch writes must read back in Spark with the same schema, the same rows and the same directory
names (Spark's escaping of a topic's name, Hive's default partition for a file outside any
``<topic>-<partition>`` directory).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from .helpers import FIXTURES

pq = pytest.importorskip("pyarrow.parquet")


def _ours_and_sparks(spark, tmp_path, paths: list[str], split_bytes: int = 0):
    from kbatch.spark.records_table import write_tables
    from kbatch.spark.scan import _partitions
    from kbatch.spark.source import RECORD_SCHEMA

    paths = [os.path.abspath(path) for path in paths]
    schema = spark.createDataFrame([], RECORD_SCHEMA).schema
    ours, sparks = tmp_path / "ours" / "records", tmp_path / "sparks"   # (only a table's own name is cleared)
    written = write_tables(spark, _partitions(paths, split_bytes, [], schema), {"records": (str(ours), schema)}).rows["records"]
    (spark.read.format("kbatch").option("level", "records").option("paths", json.dumps(paths)).load()
     .write.mode("overwrite").partitionBy("topic").parquet(str(sparks)))
    return written, ours, sparks


def _rows(spark, table) -> list[str]:
    return sorted(json.dumps(row.asDict(recursive=True), sort_keys=True, default=repr)
                  for row in spark.read.parquet(str(table)).collect())


def _listing(table) -> set[str]:
    # Hadoop's local file system leaves .crc files beside each file Spark writes; they are not the table.
    return {str(path.relative_to(table)).rsplit("/part-", 1)[0] for path in table.rglob("*")
            if not path.name.startswith(".")}


def test_the_records_table_reads_back_as_sparks_own_writer_writes_it(spark, tmp_path):
    inputs = [str(FIXTURES / "logdir"), *map(str, sorted(FIXTURES.glob("*.log"))), str(FIXTURES / "internal")]
    from kbatch.files.inputs import list_segments

    segments = [segment.path for segment in list_segments(inputs, "*.log")]
    written, ours, sparks = _ours_and_sparks(spark, tmp_path, segments)
    rows = _rows(spark, ours)
    assert written == len(rows) > 300
    assert spark.read.parquet(str(ours)).schema == spark.read.parquet(str(sparks)).schema
    assert rows == _rows(spark, sparks)
    # Read by pyarrow too, the columns written from dictionary arrays (records_table.DICTIONARY_COLUMNS) are strings.
    types = {field.name: field.type for field in pq.read_table(str(ours)).schema}
    assert all(str(types[name]) == "string" for name in ("file", "codec", "timestamp_type"))
    assert _listing(ours) == _listing(sparks)
    assert "topic=__HIVE_DEFAULT_PARTITION__" in _listing(ours) and (ours / "_SUCCESS").exists()
    assert not (ours / "_temporary").exists()


def test_topic_names_are_escaped_as_spark_escapes_them(spark, tmp_path):
    segments = []
    for topic in ["we:ird=top#ic%", "a b{c}[d]^'e'", "ctl\x01x"]:
        directory = tmp_path / "logs" / f"{topic}-0"
        directory.mkdir(parents=True)
        shutil.copy(FIXTURES / "v2-headers.log", directory / "00000000000000000000.log")
        segments.append(str(directory / "00000000000000000000.log"))
    _, ours, sparks = _ours_and_sparks(spark, tmp_path, segments)
    assert _listing(ours) == _listing(sparks) and "topic=we%3Aird%3Dtop%23ic%25" in _listing(ours)
    assert _rows(spark, ours) == _rows(spark, sparks)


def test_a_topic_is_refused_where_its_escaped_directory_is_too_long_for_a_file_system(spark):
    """The longest topic Kafka allows fits (no escape, 255 bytes with ``topic=``); 84 ESC, escaped as Spark's
    own escapePathName escapes them, are 258 bytes."""
    from kbatch.spark.records_table import partition_directory, unwritable_topic

    escape = spark._jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils.escapePathName
    for topic, size in [("a" * 249, 255), ("\x1b" * 83, 255), ("\x1b" * 84, 258), ("é" * 124, 254), ("é" * 125, 256)]:
        assert partition_directory("topic", topic) == "topic=" + escape(topic)
        assert len(partition_directory("topic", topic).encode()) == size
        assert (unwritable_topic(topic) is None) == (size <= 255), topic
    assert "a name of 258 bytes, past the 255" in unwritable_topic("\x1b" * 84)


def test_a_split_file_and_a_table_with_no_rows(spark, tmp_path):
    segment = str(FIXTURES / "logdir" / "orders-0" / "00000000000000000000.log")
    written, ours, sparks = _ours_and_sparks(spark, tmp_path / "split", [segment], split_bytes=300)
    assert written > 0 and len(list(ours.rglob("part-*.parquet"))) > 1   # a file per task
    assert _rows(spark, ours) == _rows(spark, sparks)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    written, ours, sparks = _ours_and_sparks(spark, tmp_path / "empty", [str(empty)])
    assert written == 0 and _listing(ours) == _listing(sparks) == {"_SUCCESS"}


def test_a_task_holds_its_records_in_row_groups_of_bounded_size(spark, tmp_path, monkeypatch):
    from kbatch.spark import records_table, source
    from kbatch.spark.source import RECORD_SCHEMA, FileRange, KbatchReader, SegmentPartition, record_batches

    path = str(FIXTURES / "logdir" / "orders-0" / "00000000000000000000.log")
    size = os.path.getsize(path)
    schema = spark.createDataFrame([], RECORD_SCHEMA).schema
    monkeypatch.setattr(records_table, "ROW_GROUP_BYTES", 1)
    monkeypatch.setattr(source, "ARROW_ROWS", 3)
    monkeypatch.setattr(records_table, "RECORD_ROWS", 3)   # (the writer's record batches: the data source's here)
    partition = SegmentPartition([FileRange(path, 0, size, size)])
    [written] = records_table._write_partition(partition, 3, str(tmp_path), "job", schema)
    assert written["final"] == "topic=orders/part-00003-job.c000.snappy.parquet"
    assert written["staged"].startswith(f"{tmp_path}/_temporary/job/")
    staged = pq.ParquetFile(written["staged"])
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    expected = [batch.drop_columns(["topic"]) for batch in
                record_batches([FileRange(path, 0, size, size)], KbatchReader({"level": "records"}, schema), arrow_schema)]
    assert staged.metadata.num_row_groups == len(expected) > 1
    assert staged.read().to_pylist() == [row for batch in expected for row in batch.to_pylist()]
    assert written["rows"] == staged.metadata.num_rows


def test_only_the_counted_attempts_files_are_moved_into_place(tmp_path):
    from kbatch.spark import records_table

    table = tmp_path / "records"
    table.mkdir()
    (table / "stale.txt").write_text("from the last scan")
    list(records_table._clear_tables([str(table)], []))
    assert list(table.iterdir()) == []                     # overwrite: what was there is gone
    for attempt in ("failed", "counted"):
        staged = table / "_temporary" / "job" / attempt / "topic=t"
        staged.mkdir(parents=True)
        (staged / "part-00000-job.c000.snappy.parquet").write_text(attempt)
    moves = [(f"{table}/_temporary/job/counted/topic=t/part-00000-job.c000.snappy.parquet",
              "topic=t/part-00000-job.c000.snappy.parquet")]
    list(records_table._commit_tables({str(table): moves}, []))
    assert (table / "topic=t" / "part-00000-job.c000.snappy.parquet").read_text() == "counted"
    assert sorted(path.name for path in table.iterdir()) == ["_SUCCESS", "topic=t"]


def test_only_a_directory_named_as_a_table_is_ever_cleared(tmp_path):
    """A string where the list of tables was meant (each of its characters a location: "/" first), the root,
    or a directory not named as a level's table: refused, and nothing is deleted."""
    from kbatch.spark import records_table

    kept = tmp_path / "scan" / "keep.txt"
    kept.parent.mkdir()
    kept.write_text("a file the scan did not write")
    for outs in (str(tmp_path / "scan" / "records"), ["/"], [str(tmp_path / "scan")],
                 [str(tmp_path / "scan" / "records"), str(tmp_path)]):
        with pytest.raises(ValueError, match="not a list of tables"):
            list(records_table._clear_tables(outs, []))
    assert kept.read_text() == "a file the scan did not write"


def test_a_scan_cut_into_ranges_writes_the_tables_of_a_scan_that_is_not(tmp_path, kbatch, spark):
    """With --split-bytes every table, records included, is the unsplit scan's. A record whose value holds
    a whole batch fools the cut (the range starts inside the outer batch) but not the hand-over: that
    file is read again whole, and its ranges' rows are dropped."""
    from . import handmade

    inner = handmade.batch(900, [(b"inner", b"x")])
    outer = handmade.batch(1, [(b"b", b"." * 400 + inner + b"." * 40)])
    fooled = tmp_path / "logs" / "fooled-0" / "00000000000000000000.log"
    fooled.parent.mkdir(parents=True)
    fooled.write_bytes(handmade.batch(0, [(b"a", b"1" * 40)]) + outer + handmade.batch(2, [(b"c", b"3" * 40)]))
    inputs = [str(fooled), "fixtures/logdir/orders-0", "fixtures/damaged-garbage-between.log", "fixtures/v2-headers.log"]
    whole = kbatch("scan", *inputs, "--out", str(tmp_path / "whole"), "--records", "--format", "json")
    split = kbatch("scan", *inputs, "--out", str(tmp_path / "split"), "--records", "--format", "json",
                   "--split-bytes", "300")
    assert "1 file(s) did not split cleanly; reading them whole" in split.err
    assert whole.code == split.code == 1
    assert json.loads(split.out)["partitions"] == json.loads(whole.out)["partitions"]
    for level in ("batches", "findings", "records"):
        rows = _rows(spark, tmp_path / "split" / level)
        assert rows == _rows(spark, tmp_path / "whole" / level) and rows, level
    assert len(list((tmp_path / "split" / "records").rglob("part-*.parquet"))) > 1


def test_the_records_table_goes_where_spark_put_the_others():
    """A path with no scheme is on Hadoop's default file system (HDFS on many clusters): the records
    table goes beside the batches table as Spark wrote it, not onto each executor's local disk."""
    from kbatch.spark.scan import sibling_table

    assert sibling_table("file:/tmp/scan/batches/topic=a/part-00000-x.c000.snappy.parquet", "batches",
                         "records") == "/tmp/scan/records"
    assert sibling_table("file:///tmp/my%20scan/batches/topic=a/part-0.parquet", "batches",
                         "records") == "/tmp/my scan/records"
    assert sibling_table("hdfs://nn:8020/data/batches/scan/batches/topic=batches/part-0.parquet", "batches",
                         "records") == "hdfs://nn:8020/data/batches/scan/records"


def test_a_tasks_findings_walk_only_the_files_its_batches_walk_met_a_finding_in(spark, tmp_path, monkeypatch):
    """A task writes the batches level first; the findings level then walks again only the whole files whose
    walk met a finding (KbatchReader.walked_clean). Its rows are verify-crc's all the same (the data source's
    findings level, which walks every file), on every fixture, damaged or clean."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from kbatch.spark import records_table, source
    from kbatch.spark.source import BATCH_SCHEMA, FINDING_SCHEMA, FileRange, KbatchReader, SegmentPartition

    paths = sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "vectors").glob("*.bin")) + \
        sorted((FIXTURES / "logdir").glob("*/*.log"))
    ranges = [FileRange(str(path), 0, os.path.getsize(path), os.path.getsize(path)) for path in paths]
    schemas = {level: spark.createDataFrame([], ddl).schema for level, ddl in
               (("batches", BATCH_SCHEMA), ("findings", FINDING_SCHEMA))}
    options = {"deep": "false", "decompress": "true"}
    walked = []
    finding_rows = source.finding_rows
    monkeypatch.setattr(source, "finding_rows", lambda file_range, reader: walked.append(file_range.path) or
                        finding_rows(file_range, reader))
    clean: dict = {}
    written = {level: records_table._write_partition(SegmentPartition(ranges), 0, str(tmp_path / level), "job",
                                                     schemas[level], level, options, clean)
               for level in ("batches", "findings")}
    assert 5 < len(walked) < len(ranges) - 20 and {each.path for each in clean} == {str(p) for p in paths} - set(walked)
    damaged = [str(path) for path in paths if "damaged" in path.name]
    assert damaged and set(damaged) <= set(walked)

    expected_schema = to_arrow_schema(schemas["findings"], timezone="UTC")
    every = KbatchReader({**options, "level": "findings"}, schemas["findings"])
    expected = sorted(json.dumps(row, sort_keys=True, default=repr)
                      for file_range in ranges
                      for batch in source.in_arrow_batches(finding_rows(file_range, every), expected_schema)
                      for row in batch.drop_columns(["topic"]).to_pylist())
    got = sorted(json.dumps(row, sort_keys=True, default=repr)
                 for each in written["findings"] for row in pq.ParquetFile(each["staged"]).read().to_pylist())
    assert got == expected and len(got) > 5


def test_the_records_tables_tasks_take_the_read_committed_views_the_driver_made(spark, tmp_path):
    """write_tables hands its tasks the views committed_views made (once, on the driver), and the records table's
    visible_to_read_committed says what they say, not what a view a worker made or made before would: here the
    views were made before the open transaction's COMMIT marker was written in a segment of its own."""
    from kbatch.spark.records_table import write_tables
    from kbatch.spark.scan import _partitions
    from kbatch.spark.source import RECORD_SCHEMA, committed_views

    from .handmade import batch, end_marker
    from .test_grep import _transactional_partition

    seen = _transactional_partition(tmp_path)
    partition = tmp_path / "orders-0"
    first = str(partition / "00000000000000000000.log")
    views = committed_views([first, first, "s3://bucket/orders-0/00000000000000000000.log"])
    assert list(views) == [str(partition)]
    (partition / "00000000000000000014.log").write_bytes(
        batch(14, [end_marker("COMMIT", 7)], control=True, transactional=True, producer_id=400, producer_epoch=0))
    schema = spark.createDataFrame([], RECORD_SCHEMA).schema

    def visible(views) -> dict:
        out = tmp_path / "out" / "records"
        write_tables(spark, _partitions([first], 0, [], schema), {"records": (str(out), schema)}, views=views)
        return {row.offset: row.visible_to_read_committed
                for row in spark.read.parquet(str(out)).collect() if not row.is_control}

    # Made by the task (of the partition as it is now): 400's transaction committed, nothing held back.
    assert visible(None) == {**seen, 11: True, 12: True, 13: True}
    # Handed over (the partition before the marker): the transaction open, the offsets from 11 on held back.
    assert visible(views) == seen == {**seen, 11: False, 12: False, 13: False}


def test_the_records_files_columns_have_dictionaries_and_statistics_where_they_can_serve(spark, tmp_path):
    """Offsets (no two records share one) without a dictionary, delta-encoded (they run on by one), and timestamps
    plain (few records share one); keys, values and headers (no row group skipped by their least and greatest), and
    the few-valued strings (their dictionary skips as much), without statistics; every other column with both, the
    headers' leaves too. The columns declared never null are required, the others optional."""
    from kbatch.output.columns import SPARK_RECORDS
    from kbatch.spark import records_table
    from kbatch.spark.source import RECORD_SCHEMA, FileRange, SegmentPartition

    path = str(FIXTURES / "logdir" / "orders-0" / "00000000000000000000.log")
    size = os.path.getsize(path)
    schema = spark.createDataFrame([], RECORD_SCHEMA).schema
    [written] = records_table._write_partition(SegmentPartition([FileRange(path, 0, size, size)]), 0, str(tmp_path),
                                               "job", schema)
    group = pq.ParquetFile(written["staged"]).metadata.row_group(0)
    chunks = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
    assert len(chunks) == 26 and "headers.list.element.value" in chunks and group.num_rows > 10
    # (Parquet has no dictionary for booleans)
    assert sorted(path for path, chunk in chunks.items() if not chunk.has_dictionary_page
                  and chunk.physical_type != "BOOLEAN") == ["offset", "timestamp"]
    assert "DELTA_BINARY_PACKED" in chunks["offset"].encodings and "PLAIN" not in chunks["offset"].encodings
    assert "PLAIN" in chunks["timestamp"].encodings and "DELTA_BINARY_PACKED" not in chunks["timestamp"].encodings
    parquet_schema = pq.ParquetFile(written["staged"]).schema
    required = {parquet_schema.column(i).path for i in range(len(parquet_schema))
                if parquet_schema.column(i).max_definition_level == 0}
    assert required == {column.name for column in SPARK_RECORDS if not column.nullable} - {"headers"} == {
        "file", "batch_pos", "batch_base_offset", "magic", "codec", "offset", "timestamp_type", "is_transactional",
        "is_control"}
    assert parquet_schema.column(parquet_schema.names.index("key")).max_definition_level == 1
    assert sorted(path for path, chunk in chunks.items() if not chunk.is_stats_set) == [
        "codec", "file", "headers.list.element.key", "headers.list.element.value", "key", "timestamp_type", "value"]
    assert chunks["offset"].statistics.min == 0 and chunks["partition"].statistics.max == 0


def test_a_worker_unpickles_a_handed_view_once_a_job(tmp_path, monkeypatch):
    """The tasks of a job one worker runs share a partition's view handed as the same bytes; other bytes (another
    job's) replace it, and so does a view the worker had made itself."""
    import pickle

    from kbatch.spark import source

    from .test_grep import _transactional_partition

    _transactional_partition(tmp_path)
    path = str(tmp_path / "orders-0" / "00000000000000000000.log")
    monkeypatch.setattr(source, "_VIEWS", {})
    monkeypatch.setattr(source, "_TAKEN", {})
    made = source.committed_view_of(path, source.DECOMPRESSED_LIMIT)
    views = source.committed_views([path])
    source.take_committed_views(views, [path])
    taken = source.committed_view_of(path, source.DECOMPRESSED_LIMIT)
    assert taken is not made and taken.last_stable_offset == made.last_stable_offset == 11
    source.take_committed_views({key: bytes(view) for key, view in views.items()}, [path])   # equal bytes
    assert source.committed_view_of(path, source.DECOMPRESSED_LIMIT) is taken
    other = pickle.loads(views[str(tmp_path / "orders-0")])
    other.last_stable_offset = 5
    source.take_committed_views({str(tmp_path / "orders-0"): pickle.dumps(other)}, [path])
    assert source.committed_view_of(path, source.DECOMPRESSED_LIMIT).last_stable_offset == 5
    source.take_committed_views({"/elsewhere-0": views[str(tmp_path / "orders-0")]}, [path])   # not its partition
    assert source.committed_view_of(path, source.DECOMPRESSED_LIMIT).last_stable_offset == 5
