"""The tables of ``kbatch scan`` (``DIR/batches``, ``DIR/findings``, ``DIR/records``), written by the executors
with Arrow's Parquet writer.

Through Spark's own writer, every Arrow batch the data source yields is turned back into rows on the
JVM, sorted by topic for ``partitionBy`` and encoded value by value: for the records table (a row of 26
columns per record) that was most of a ``scan --records``, and for the batches table most of what a scan
spends per byte beyond the walk (benchmarks/README.md has the profiles). Here each task reads its file
ranges with the data source's own code (:meth:`.source.KbatchReader.read`), one level after another, and
hands the batches straight to pyarrow.parquet; Spark only schedules the tasks, all the tables' in one job.

A table is laid out as Spark lays out ``.partitionBy("topic").parquet(DIR/records)`` and reads back
the same (tests/test_records_table.py holds it to that): ``topic=<name>/part-<task>-<job>.c000.snappy.parquet``,
the topic in the directory's name and not in the files, and ``_SUCCESS`` when done. As Hadoop's
FileOutputCommitter does, tasks write under ``_temporary/``, and only the files of the attempts Spark
counted (one per task) are moved into place: a task retried or run twice leaves no row twice.
"""

from __future__ import annotations

import pickle
import uuid
from dataclasses import dataclass
from functools import partial

from kbatch.files.inputs import file_system
from kbatch.files.outputs import NAME_MAX
from kbatch.spark.tally import Tally, merged

# Arrow data a task holds per topic before it writes it as one row group (Spark's: 128 MiB of encoded data).
ROW_GROUP_BYTES = 64 * 1024 * 1024
# Rows per Arrow record batch of the records level a task writes: no Spark between the reader and the writer
# here, so more than the data source's (source.ARROW_ROWS: a batch has a cost of its own, in the making and in
# the writing); at most source.ARROW_RECORD_BYTES of keys and values still.
RECORD_ROWS = 32768
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# The characters Spark writes as %XX in a partition directory's name (ExternalCatalogUtils.escapePathName).
_ESCAPED = frozenset([chr(code) for code in range(0x01, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
# A topic Kafka allows (at most 249 characters of [a-zA-Z0-9._-]: Topic.validate, in
# org.apache.kafka.common.internals) needs no escape, so its ``topic=`` directory fits in NAME_MAX; a partition
# directory renamed by hand may name one that does not.
# What each task reports: a file it wrote, of which table, where the file goes, and its rows; and, with no file, the
# sums of the rows it wrote, a row per part of them (kbatch.spark.tally.Tally.sent).
_WRITTEN_COLUMNS = (("table", "STRING"), ("staged", "STRING"), ("final", "STRING"), ("rows", "LONG"),
                    ("part", "STRING"), ("sums", "BINARY"))
_WRITTEN = ", ".join(f"{name} {kind}" for name, kind in _WRITTEN_COLUMNS)


def _written_arrow():
    """_WRITTEN as the Arrow schema of the batches a task hands back."""
    import pyarrow as pa

    kinds = {"STRING": pa.string(), "LONG": pa.int64(), "BINARY": pa.binary()}
    return pa.schema([(name, kinds[kind]) for name, kind in _WRITTEN_COLUMNS])


def partition_directory(column: str, value: str | None) -> str:
    """``column=value`` as Spark names a partition's directory (a null or empty value as Hive's default)."""
    return f"{_escape(column)}={_escape(value) if value else HIVE_DEFAULT_PARTITION}"


def unwritable_topic(topic: str | None) -> str | None:
    """Why no table can hold the rows of ``topic`` (its partition directory's name, escaped, too long for a
    file system: Spark's writer would fail the whole scan), or None."""
    size = len(partition_directory("topic", topic).encode("utf-8", "surrogateescape"))
    if size <= NAME_MAX:
        return None
    return (f"its topic, as a table's partition directory (escaped as Spark escapes it), is a name of {size} bytes, "
            f"past the {NAME_MAX} a file system allows")


def _escape(text: str) -> str:
    return "".join(f"%{ord(char):02X}" if char in _ESCAPED else char for char in text)


@dataclass
class Written:
    """What write_tables wrote: the rows of each level, what they add up to (kbatch.spark.tally.merged), and the
    files each table's location takes when they are committed (staged, final)."""

    rows: dict[str, int]
    sums: dict
    moves: dict[str, list[tuple[str, str]]]


def write_tables(spark, partitions: list, tables: dict[str, tuple], options: dict | None = None,
                 views: dict[str, bytes] | None = None, commit: bool = True) -> Written:
    """Write the levels ``tables`` names (level: its table's location, absolute or a URI pyarrow.fs knows, and
    its StructType) of ``partitions`` (as :meth:`.source.KbatchReader.partitions` plans them), replacing what
    is there; the rows written, per level, and their sums. With ``commit`` false the files stay staged, for
    :func:`commit_tables` (or a later write_tables, which clears them).

    ``options`` are the data source's (``deep``, ``decompress``); ``views`` the read_committed views of the
    partitions read (:func:`.source.committed_views`), made once for the records level's tasks (a partition
    without one, a task makes itself). The file work runs in Spark tasks, where the executors see the
    locations: the driver need not (Spark Connect's client). One job clears the tables, one writes them (a task
    reads its ranges once per level), one moves the files into place.
    """
    job = uuid.uuid4().hex
    one = spark.range(0, 1, 1, 1)
    locations = {level: out for level, (out, _) in tables.items()}
    one.mapInArrow(partial(_clear_tables, list(locations.values())), "done BOOLEAN").collect()
    if partitions:
        schemas = {level: schema for level, (_, schema) in tables.items()}
        # Spark hands every task the whole function, these plans with it: each pickled on its own, a task
        # unpickles its own ranges only (100,000 tiny segments: 11 MB of plans, 0.15 s to unpickle them all).
        plans = [pickle.dumps(partition) for partition in partitions]
        written = (spark.range(0, len(partitions), 1, len(partitions))
                   .mapInArrow(partial(_write_tasks, plans, locations, job, schemas, options or {}, views or {}),
                               _WRITTEN)
                   .collect())
    else:
        written = []
    moves: dict[str, list] = {out: [] for out in locations.values()}
    files = [row for row in written if row.sums is None]
    for row in files:
        moves[locations[row.table]].append((row.staged, row.final))
    rows = dict.fromkeys(tables, 0)
    for row in files:
        rows[row.table] += row.rows
    done = Written(rows, merged((row.part, row.sums) for row in written if row.sums is not None), moves)
    if commit:
        commit_tables(spark, done)
    return done


def commit_tables(spark, written: Written) -> None:
    """Move the files write_tables staged into place (then ``_SUCCESS``), in a Spark job: the executors see the
    tables' locations."""
    spark.range(0, 1, 1, 1).mapInArrow(partial(_commit_tables, written.moves), "done BOOLEAN").collect()


# -- on the executors -------------------------------------------------------------------------


def _clear_tables(outs: list[str], batches):
    """Clear each table's directory, as mode("overwrite") does.

    Only a directory named as a level's table is ever deleted: a location that is not one (a string where
    the list was meant, whose characters are each "/"; a driver of another kbatch calling a function of
    this name with other arguments) is refused before anything is touched.
    """
    from pyarrow import fs

    from kbatch.spark.source import LEVELS

    if not isinstance(outs, list) or not all(isinstance(out, str) and out.rstrip("/").rsplit("/", 1)[-1] in LEVELS
                                             for out in outs):
        raise ValueError(f"kbatch: not a list of tables' directories (.../batches, .../records): {outs!r}")
    for out in outs:
        filesystem, root = file_system(out)
        if filesystem.get_file_info(root).type != fs.FileType.NotFound:
            filesystem.delete_dir(root)
        filesystem.create_dir(root, recursive=True)
    yield from _done(batches)


def _write_tasks(plans: list[bytes], locations: dict[str, str], job: str, schemas: dict, options: dict,
                 views: dict[str, bytes], batches):
    import pyarrow as pa

    from kbatch.spark.source import take_committed_views

    schema = _written_arrow()
    for batch in batches:
        for index in batch.column("id").to_pylist():
            partition = pickle.loads(plans[index])
            if "records" in locations:
                take_committed_views(views, [file_range.path for file_range in partition.ranges])
            walked_clean: dict = {}   # the whole files the batches level's walk found nothing to say about
            for level, out in locations.items():
                tally = Tally(level)
                written = _write_partition(partition, index, out, job, schemas[level], level, options,
                                           walked_clean, tally)
                yield pa.RecordBatch.from_pylist([{"table": level, **each} for each in written]
                                                 + [{"table": level, "part": part, "sums": sums}
                                                    for part, sums in tally.sent()], schema=schema)


def _write_partition(partition, index: int, out: str, job: str, schema, level: str = "records",
                     options: dict | None = None, walked_clean: dict | None = None, tally=None) -> list[dict]:
    """Write one task's rows of ``level``, a file per topic, under this attempt's own staging directory (and add
    them up in ``tally``, a kbatch.spark.tally.Tally, if given).

    ``walked_clean`` is shared by a task's levels (:attr:`.source.KbatchReader.walked_clean`): the findings
    level, read after the batches level, walks again only the files whose walk met a finding; the records level
    computes no CRC of the others again, as long as each is the same file.
    """
    import pyarrow.parquet as pq
    from pyspark.sql.pandas.types import to_arrow_schema

    from kbatch.files.inputs import topic_partition
    from kbatch.spark.source import KbatchReader, SegmentPartition

    filesystem, root = file_system(out)
    arrow_schema = with_declared_nulls(to_arrow_schema(schema, timezone="UTC"), level)
    data_schema = arrow_schema.remove(arrow_schema.get_field_index("topic"))
    reader = KbatchReader({**(options or {}), "level": level}, schema)
    reader.record_rows = RECORD_ROWS
    reader.arrow_schema = arrow_schema
    writing = {"schema": data_schema}
    if level == "records":
        # (not the Arrow schema stored in the file, which would read the dictionaries back as such: without it,
        # as in the files Spark's writer makes, the table reads back with the Parquet schema's types, its own)
        # The topic as a dictionary too, which is not written (a directory names it): no string made per row.
        reader.arrow_schema = with_dictionaries(arrow_schema, (*DICTIONARY_COLUMNS, "topic"))
        writing = {"schema": with_dictionaries(data_schema), "store_schema": False,
                   "write_statistics": [name for name in data_schema.names if name not in UNSKIPPED_COLUMNS],
                   "use_dictionary": [path for path in leaf_paths(data_schema) if path not in UNDICTIONARIED_COLUMNS],
                   "column_encoding": UNDICTIONARIED_COLUMNS,
                   "write_batch_size": WRITE_BATCH_ROWS}
    if walked_clean is not None:
        reader.walked_clean = walked_clean
    staging = f"{root}/_temporary/{job}/{uuid.uuid4().hex}"
    name = f"part-{index:05d}-{job}.c000.snappy.parquet"
    topics: dict[str | None, _TopicFile] = {}
    # A topic's files read together (their rows share Arrow batches), in the task's order.
    by_topic: dict[str | None, list] = {}
    for file_range in partition.ranges:
        by_topic.setdefault(topic_partition(file_range.path)[0], []).append(file_range)
    for topic, ranges in by_topic.items():
        for batch in reader.read(SegmentPartition(ranges)):
            if batch.num_rows:
                if tally is not None:
                    tally.add(batch)
                if topic not in topics:
                    directory = partition_directory("topic", topic)
                    filesystem.create_dir(f"{staging}/{directory}", recursive=True)
                    writer = pq.ParquetWriter(f"{staging}/{directory}/{name}", filesystem=filesystem,
                                              compression="snappy", **writing)
                    topics[topic] = _TopicFile(writer, f"{staging}/{directory}/{name}", f"{directory}/{name}")
                topics[topic].add(batch.drop_columns(["topic"]))
    written = []
    for topic_file in topics.values():
        topic_file.close()
        written.append({"staged": topic_file.staged, "final": topic_file.final, "rows": topic_file.rows})
    return written


# The records level's string columns of a few values each, repeated on every row: made as dictionary arrays for
# the Parquet writer, which writes them as it writes strings (dictionary-encoded) without copying and hashing a
# string per row (a file's path: 121 MiB per 256 MiB of records).
DICTIONARY_COLUMNS = ("file", "codec", "timestamp_type")
# The records table's columns written without statistics, whose least and greatest value in a row group would
# skip nothing more:
# * the records' keys, payloads and headers: thousands of records' values span nearly all there are. The writer
#   compares every value for them (the key's alone: 4 % of its time on bench_scan.py's records);
# * DICTIONARY_COLUMNS: a reader skips a row group by their dictionary page, which holds every value they take
#   there (parquet-java's ParquetFileReader.filterRowGroups: FilterLevel.DICTIONARY beside STATISTICS, both on by
#   default, for the filters Spark pushes down). The writer works a dictionary array's statistics out from the
#   values its indices use, a hash of the indices for every record batch (4 % of its time on the same records).
UNSKIPPED_COLUMNS = ("key", "value", "headers", *DICTIONARY_COLUMNS)
# The records table's columns written without a dictionary, each in the encoding named. The writer would hash each
# value into a dictionary until it held the most a dictionary page may (1 MiB: 131,072 longs), then write the rest
# plain all the same:
# * a record's offset is its own, no two rows of a partition share one. Offsets run on by one from row to row, which
#   Parquet's DELTA_BINARY_PACKED writes in next to no bits (plain, they were 45 % of the table's bytes on
#   bench_scan.py's records; the writer's CPU 2-3 % less than with a dictionary);
# * a record's timestamp, in milliseconds, is shared by the records of one millisecond only: a busy partition's row
#   group outgrows the dictionary. Plain, snappy still writes the bytes they share (on bench_scan.py's records, whose
#   rows share far more of them than most, the column was 7 % smaller than with a dictionary, the writer's CPU 3 % less).
# Every other column repeats its values from record to record (a batch's fields, the file, the codec) or may (keys,
# values, headers).
UNDICTIONARIED_COLUMNS = {"offset": "DELTA_BINARY_PACKED", "timestamp": "PLAIN"}
# Rows the Parquet writer encodes at a time, column by column (its default: 1,024): each such step has a cost of its
# own in every column (levels, dictionary lookups, page size checks), and the records table's 26 columns of a
# row group of ~260,000 rows took 250 steps each. The rows and the pages' sizes are the same (data_page_size still
# closes a page); the writer's CPU 5-7 % less on bench_scan.py's records.
WRITE_BATCH_ROWS = 16384


def leaf_paths(arrow_schema) -> list[str]:
    """The Parquet columns ``arrow_schema`` is written as, by their paths (``headers.list.element.key``), as the
    writer's per-column settings name them."""
    import pyarrow as pa

    def paths(name: str, kind) -> list[str]:
        if pa.types.is_struct(kind):
            return [path for field in kind for path in paths(f"{name}.{field.name}", field.type)]
        if pa.types.is_list(kind):   # (Parquet's three levels; pyarrow names the element "element")
            return paths(f"{name}.list.element", kind.value_type)
        return [name]

    return [path for field in arrow_schema for path in paths(field.name, field.type)]


def with_declared_nulls(arrow_schema, level: str):
    """``arrow_schema`` (a table's, as Spark's schema makes it: every column nullable) with the columns the table's
    declaration says are never null (kbatch.output.columns.SPARK_TABLES, ``nullable`` False) marked so.

    The Parquet writer writes such a column as required: no definition level to work out and encode for each row
    (the records table's ten such columns: 7 % of the writer's CPU on bench_scan.py's records). A reader is none the
    wiser: Spark reads a file table's columns as nullable whatever the files say (DataSource.resolveRelation:
    ``dataSchema.asNullable``). A row that broke its declaration would fail its task (pyarrow refuses to write a
    null there): tests/test_records_table.py writes every fixture's rows, damaged ones too, this way.
    """
    import pyarrow as pa

    from kbatch.output.columns import SPARK_TABLES

    never_null = {column.name for column in SPARK_TABLES[level] if not column.nullable}
    return pa.schema([field.with_nullable(False) if field.name in never_null else field for field in arrow_schema],
                     metadata=arrow_schema.metadata)


def with_dictionaries(arrow_schema, names=DICTIONARY_COLUMNS):
    """``arrow_schema`` with the string columns ``names`` as dictionaries of their strings."""
    import pyarrow as pa

    for name in names:
        index = arrow_schema.get_field_index(name)
        field = arrow_schema.field(index)
        arrow_schema = arrow_schema.set(index, field.with_type(pa.dictionary(pa.int32(), field.type)))
    return arrow_schema


class _TopicFile:
    """A task's Parquet file for one topic: batches gathered into row groups of about ROW_GROUP_BYTES."""

    def __init__(self, writer, staged: str, final: str):
        self.writer, self.staged, self.final, self.rows = writer, staged, final, 0
        self.pending: list = []   # pyarrow RecordBatches, until a row group's worth
        self.pending_bytes = 0

    def add(self, batch) -> None:
        self.pending.append(batch)
        self.pending_bytes += batch.nbytes
        self.rows += batch.num_rows
        if self.pending_bytes >= ROW_GROUP_BYTES:
            self._write()

    def _write(self) -> None:
        import pyarrow as pa

        table = pa.Table.from_batches(self.pending)
        self.writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self.pending, self.pending_bytes = [], 0

    def close(self) -> None:
        if self.pending:
            self._write()
        self.writer.close()


def _commit_tables(moves: dict[str, list[tuple[str, str]]], batches):
    """For each table (its location: the counted attempts' files, staged and final), move those files into
    place, then ``_SUCCESS``; drop ``_temporary``.

    A table with no rows is ``_SUCCESS`` alone, as Spark's writer leaves it for ``partitionBy``.
    """
    from pyarrow import fs

    for out, table_moves in moves.items():
        filesystem, root = file_system(out)
        for staged, final in table_moves:
            filesystem.create_dir(f"{root}/{final.rsplit('/', 1)[0]}", recursive=True)
            filesystem.move(staged, f"{root}/{final}")
        if filesystem.get_file_info(f"{root}/_temporary").type != fs.FileType.NotFound:
            filesystem.delete_dir(f"{root}/_temporary")
        with filesystem.open_output_stream(f"{root}/_SUCCESS"):
            pass
    yield from _done(batches)


def _done(batches):
    import pyarrow as pa

    for _ in batches:
        pass
    yield pa.RecordBatch.from_pylist([{"done": True}])
