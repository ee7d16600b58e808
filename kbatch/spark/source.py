"""``spark.read.format("kbatch")``: Kafka segments as Spark tables, through the Python Data Source API.

    spark.read.format("kbatch").option("level", "batches").load("/var/kafka-logs")

Levels: ``batches`` (one row per batch or v0/v1 message: the fields of
``kbatch dump --format jsonl``), ``records`` (one row per record), and
``findings`` (one row per finding: the fields of ``kbatch verify-crc
--format jsonl``; ``.option("deep", "true")`` for ``--deep``).  The rows come
from the same reader the command line uses.

Options: ``deep`` (findings), ``decompress`` (batches: measure
``decompressed_size`` of compressed v2 batches), ``path``/``paths`` (files, globs, directories; ``s3://``... through
pyarrow), ``pattern`` (``*.log``), ``maxPartitionBytes`` (128 MiB) and
``openCostInBytes`` (1 MiB: opening a segment costs a Python task far less
than Spark's 4 MiB guess) and ``minPartitions`` for packing files into
tasks the way Spark's file sources do, and ``splitBytes`` to cut segments
larger than that into byte ranges.  Each range starts where ``verify-crc -j`` would
start a part cut there (kbatch.walk.parts), and its walk must end exactly where the next
range begins: where it does not, the findings level says so
(``split-handover``) and ``kbatch scan`` reads that file again whole.

Rows reach Spark as Arrow record batches of at most ``ARROW_ROWS`` rows (the
Python Data Source API takes an iterator of ``pyarrow.RecordBatch`` from
``DataSourceReader.read``), so a task's memory stays a few MB whatever the
segment.  The records of v2 batches go from the record decoder's columns
into Arrow arrays without an object per record, every record of every batch
(Record objects stop at findings.MAX_HELD a batch; the columns do not).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import cast

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kbatch.format.codecs import codec_name
from kbatch.format.structs import COMPRESSION_CODEC_MASK
from kbatch.output import columns
from kbatch.reading.model import NO_SEQUENCE, TIMESTAMP_TYPES, Batch

LEVELS = ("batches", "records", "findings")

# Each level's columns as Spark DDL, from their declaration (kbatch.output.columns: types and meanings).
BATCH_SCHEMA = columns.spark_ddl(columns.SPARK_BATCHES)
RECORD_SCHEMA = columns.spark_ddl(columns.SPARK_RECORDS)
FINDING_SCHEMA = columns.spark_ddl(columns.SPARK_FINDINGS)
SCHEMAS = {"batches": BATCH_SCHEMA, "records": RECORD_SCHEMA, "findings": FINDING_SCHEMA}

_MIB = 1024 * 1024
# The most bytes a batch's records may inflate to (option maxDecompressedBytes).
DECOMPRESSED_LIMIT = 256 * _MIB


@dataclass(frozen=True)
class FileRange:
    path: str
    start: int
    stop: int          # entries starting before stop belong to this range
    file_size: int


class SegmentPartition(InputPartition):
    """The file ranges one task reads."""

    def __init__(self, ranges: list[FileRange]):
        super().__init__(ranges)
        self.ranges = ranges


class KbatchDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "kbatch"

    def schema(self) -> str:
        return SCHEMAS[_level(self.options)]

    def reader(self, schema) -> "KbatchReader":
        # Only the records level takes filters.  Spark refuses to read a source whose reader takes them unless
        # spark.sql.python.filterPushdown.enabled is on (kbatch's own sessions turn it on): .option("pushFilters",
        # "false") reads without.
        pushes = self.options.get("pushfilters", self.options.get("pushFilters", "true")).lower() != "false"
        if _level(self.options) != "records" or not pushes:
            return KbatchReader(self.options, schema)
        return FilteringKbatchReader(self.options, schema)


def _level(options) -> str:
    level = options.get("level", "batches")
    if level not in LEVELS:
        raise ValueError(f"kbatch: option level must be one of {', '.join(LEVELS)}, not {level!r}")
    return level


def _paths(options) -> list[str]:
    from kbatch.files.inputs import is_remote

    if "paths" in options:
        value = options["paths"]
        paths = json.loads(value) if value.startswith("[") else value.split(",")
    elif "path" in options:
        paths = [options["path"]]
    else:
        raise ValueError('kbatch: say where the segments are: .load("/var/kafka-logs") or .option("paths", ...)')
    # Resolved here, on the driver: an executor's working directory is not the user's.
    return [path if is_remote(path) else os.path.abspath(path.removeprefix("file://")) for path in paths if path]


def _int_option(options, name: str, default: int) -> int:
    try:
        return int(options.get(name.lower(), default))
    except ValueError:
        raise ValueError(f"kbatch: option {name} must be a whole number, not {options[name.lower()]!r}") from None


class KbatchReader(DataSourceReader):
    def __init__(self, options, schema):
        # Spark's option names are case-insensitive: it hands them over lower-cased (splitbytes), in a
        # mapping that stays case-insensitive only until it is copied. Held lower-cased here, looked up so.
        self.options = options = {name.lower(): value for name, value in options.items()}
        self.level = _level(options)
        self.schema = schema   # the level's schema string as Spark parsed it (a StructType)
        self.deep = options.get("deep", "false").lower() == "true"
        # decompress v2 batches to measure decompressed_size (for compression ratios); costs CPU
        self.inflate = options.get("decompress", "false").lower() == "true"
        self.decompressed_limit = _int_option(options, "maxDecompressedBytes", DECOMPRESSED_LIMIT)
        self.pushed = PushedFilters()   # the records level's filters Spark left to the source (pushFilters)
        # A file's bytes handed over with it (Spark's Hadoop file systems read them: kbatch.spark.hadoop), by path
        self.contents: dict = {}
        # Whole files a walk of the task (another level's, sharing this mapping: kbatch.spark.records_table) found
        # nothing to say about: the findings level need not walk them again, nor the records level compute their
        # CRCs again while the file is the same (see _walked). Each with its file_identity through that walk.
        self.walked_clean: dict[FileRange, tuple | None] = {}
        # Rows per Arrow record batch of the records level made by columns (None: ARROW_ROWS); kbatch's own writer
        # of the tables takes more (kbatch.spark.records_table.RECORD_ROWS).
        self.record_rows: int | None = None
        # The Arrow schema of the batches read (None: Spark's, from ``schema``). kbatch's own writer of the tables
        # asks for some string columns as dictionary arrays (records_table.records_arrow_schema).
        self.arrow_schema = None

    def open_segment(self, path: str):
        """The segment at ``path`` as a seekable stream: its bytes if they were handed over, else the file itself
        (kbatch.files.inputs.open_segment: local, or through pyarrow.fs)."""
        held = self.contents.get(path)
        if held is not None:
            import pyarrow as pa

            return pa.BufferReader(held)
        from kbatch.files.inputs import open_segment

        return open_segment(path)

    # -- planning, on the driver -----------------------------------------------

    def partitions(self) -> list[SegmentPartition]:
        from kbatch.files.inputs import list_segments

        segments = [segment for segment in list_segments(_paths(self.options), self.options.get("pattern", "*.log"))
                    if self.pushed.wants_file(segment.path)]
        for segment in segments:
            if segment.size < 0:
                raise ValueError(f"kbatch: {segment.path}: the data source reads through pyarrow.fs, which does not "
                                 f"open this scheme (s3://, gs://, hdfs:// it does); kbatch scan reads it "
                                 f"through Spark's Hadoop file systems")
        split_bytes = _int_option(self.options, "splitBytes", 0)
        ranges = []
        for segment in segments:
            if split_bytes and segment.size > split_bytes:
                ranges += split_segment(segment.path, segment.size, split_bytes)
            else:
                ranges.append(FileRange(segment.path, 0, segment.size, segment.size))
        return pack(ranges, _int_option(self.options, "maxPartitionBytes", 128 * _MIB),
                    _int_option(self.options, "openCostInBytes", _MIB),
                    _int_option(self.options, "minPartitions", os.cpu_count() or 2))

    # -- reading, on the executors ----------------------------------------------

    def read(self, partition: InputPartition):
        from pyspark.sql.pandas.types import to_arrow_schema

        ranges = cast(SegmentPartition, partition).ranges   # Spark hands back what partitions() made

        # The Arrow schema Spark holds each batch to (pyspark/sql/worker/plan_data_source_read.py builds it
        # the same way and rejects a batch whose schema differs): derived, never kept by hand.
        schema = self.arrow_schema or to_arrow_schema(self.schema, timezone="UTC")
        if self.level == "records":
            yield from record_batches(ranges, self, schema)
            return
        if self.level == "batches":
            yield from batch_arrow(ranges, self, schema)
            return
        for file_range in ranges:
            if not self.deep and file_range in self.walked_clean:
                continue   # what verify-crc says of it: nothing
            yield from in_arrow_batches(finding_rows(file_range, self), schema)


class FilteringKbatchReader(KbatchReader):
    """The records level's reader: it takes the filters it can apply (kept in ``self.pushed``)."""

    def pushFilters(self, filters):
        """Keep the filters the records level applies itself as it reads (equality, IN, StartsWith and Contains
        on key, value, topic and partition; ranges on offset and timestamp); hand back the rest, Spark's."""
        for each in filters:
            if not self.pushed.take(each):
                yield each


def pack(ranges: list[FileRange], max_partition_bytes: int, open_cost: int, min_partitions: int) -> list[SegmentPartition]:
    """Bin-pack file ranges into tasks as Spark's FilePartition.getFilePartitions does.

    Each range weighs its bytes plus an open cost; a task holds up to a split
    size that spreads the total over at least ``min_partitions`` tasks, so
    thousands of tiny segments become a handful of tasks, not thousands.
    """
    if not ranges:
        return []
    total = sum(r.stop - r.start + open_cost for r in ranges)
    split = min(max_partition_bytes, max(open_cost, total // max(min_partitions, 1)))
    partitions: list[SegmentPartition] = []
    current: list[FileRange] = []
    current_bytes = 0
    for file_range in sorted(ranges, key=lambda r: r.stop - r.start, reverse=True):
        weight = file_range.stop - file_range.start + open_cost
        if current and current_bytes + weight > split:
            partitions.append(SegmentPartition(current))
            current, current_bytes = [], 0
        current.append(file_range)
        current_bytes += weight
    if current:
        partitions.append(SegmentPartition(current))
    return partitions


def split_segment(path: str, size: int, split_bytes: int) -> list[FileRange]:
    """Cut a segment every ``split_bytes`` into ranges that start where ``verify-crc -j`` would start a part cut
    there (kbatch.walk.parts.part_starts): each at an entry whose CRC verifies."""
    from kbatch.files.inputs import open_segment
    from kbatch.reading.reader import SegmentReader
    from kbatch.walk.parts import part_starts

    with open_segment(path) as stream:
        starts = part_starts(SegmentReader(stream, size=size), list(range(0, size, split_bytes)), size)
    return [FileRange(path, start, stop, size) for start, stop in zip(starts, starts[1:] + [size])]


# -- rows, as Arrow record batches -------------------------------------------------------

# Rows per Arrow record batch: large enough that Arrow's and Spark's cost per batch vanishes, small
# enough that a task holds a few MB (a 1 GiB segment is never held whole) ...
ARROW_ROWS = 4096
# ... and, for records, bytes of keys, values and headers gathered before a batch is made.
ARROW_RECORD_BYTES = 32 * _MIB


def in_arrow_batches(rows, schema):
    """Rows (tuples in the schema's column order) as Arrow record batches of at most ARROW_ROWS rows."""
    import pyarrow as pa

    def batch(chunk):
        return pa.RecordBatch.from_arrays([pa.array(column, type=field.type)
                                           for column, field in zip(zip(*chunk), schema)], schema=schema)

    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == ARROW_ROWS:
            yield batch(chunk)
            chunk = []
    if chunk:
        yield batch(chunk)


class ColumnarRecords:
    """The records of v2 batches gathered from the decoder's columns, and made an Arrow batch of
    RECORD_SCHEMA by whole columns: no Python object per record.

    :meth:`add_fields` hands a chunk's columns (kbatch.kernels.recordwalk.RecordColumns, reused by the decoder)
    with its batch's fields to the compiled gatherer (kbatch.kernels.recordwalk.RecordRows), which copies the
    keys, values and headers and repeats the batch's fields on each row; :meth:`flush` hands what was gathered
    to Arrow as one record batch, the gatherer's buffers as they are.  The chunks of many files go into one
    record batch (a task's tiny segments), each after :meth:`begin` named its file.

    A gatherer whose record batch is gone (written: every Arrow array over its buffers let go of) gathers the
    rows of a later one: its buffers are not made anew, zero-filled, at each flush (:class:`_Lease`).
    """

    def __init__(self, schema, rows: int = ARROW_ROWS):
        self.schema, self.capacity = schema, rows
        self.located: tuple = (None, None, None)   # the file the chunks added from now on are of: path, topic, partition
        self.codecs = [codec_name(codec) for codec in range(COMPRESSION_CODEC_MASK + 1)]
        self.spare: list = []   # gatherers no Arrow array reads any longer (_Lease)
        # The columns that hold one value on every columnar row, by name, made once for as many rows as a record
        # batch holds at most: each record batch takes slices of them (Arrow's arrays do not change).
        self.constant: dict = {}
        self._reset()

    def begin(self, path: str, topic: str | None, partition: int | None) -> None:
        self.located = (path, topic, partition)
        self.files.append(self.located)

    def _reset(self) -> None:
        from kbatch.kernels.recordwalk import RecordRows

        if self.spare:
            self.held = self.spare.pop()
            self.held.clear()
        else:
            # Room for a little more than the last rows took (growing the buffers copies them).
            held = getattr(self, "held", None)
            self.held = RecordRows(self.capacity,
                                   tuple(size + size // 4 for size in held.room) if held else (0, 0, 0, 0))
        self.files: list[tuple] = [self.located]   # (path, topic, partition) of each file added since the last flush

    @property
    def rows(self) -> int:
        return self.held.n

    @property
    def data_bytes(self) -> int:
        """The bytes of keys, values and headers held."""
        return self.held.data_bytes

    def add(self, columns, batch, visible: bool | None = None) -> None:
        """A chunk of ``batch``'s records (read by the full reader: a Batch)."""
        self.add_fields(columns, batch.record_data, batch.pos, batch.base_offset,
                        batch.attributes & COMPRESSION_CODEC_MASK, batch.timestamp_type == "LogAppendTime",
                        batch.max_timestamp, NO_SEQUENCE if batch.base_sequence is None else batch.base_sequence,
                        batch.producer_id, batch.is_transactional, visible)

    def add_fields(self, columns, data, batch_pos: int, base_offset: int, codec: int, log_append_time: bool,
                   max_timestamp: int, base_sequence: int, producer_id: int, transactional: bool,
                   visible: bool | None) -> None:
        """A chunk of records whose positions are inside ``data``, of the batch whose fields these are (its codec's
        id; base_sequence -1 for none): the full reader's Batch, or a header the walk read
        (kbatch.spark.record_columns)."""
        self.held.add(columns, data, batch_pos, base_offset, codec, log_append_time, max_timestamp, base_sequence,
                      producer_id, transactional, -1 if visible is None else int(visible), len(self.files) - 1)

    def flush(self):
        import numpy as np
        import pyarrow as pa

        held, n = self.held, self.held.n
        column, header = held.columns, held.header_columns
        lease = _Lease(held, self.spare)

        def leased(buffer, size: int):
            """Arrow's buffer over the first ``size`` bytes of one of the gatherer's, which holds the lease."""
            return pa.foreign_buffer(pa.py_buffer(buffer).address, size, base=lease)

        def values(name, dtype):   # (a copy made of them, or read before the flush returns)
            return np.frombuffer(column[name], dtype=dtype)[:n]

        def numbers(name, kind):
            """Arrow's array over the gatherer's column ``name``."""
            return pa.Array.from_buffers(kind, n, [None, leased(column[name], n * kind.bit_width // 8)])

        def binary(data, offsets, null, count):
            """Arrow's binary array over the gatherer's bytes and offsets (null where ``null`` says)."""
            nulls = np.frombuffer(null, dtype=np.uint8)[:count].astype(bool)
            validity = pa.py_buffer(np.packbits(~nulls, bitorder="little")) if nulls.any() else None
            ends = np.frombuffer(offsets, dtype=np.int32)
            return pa.Array.from_buffers(pa.binary(), count, [validity, leased(offsets, 4 * (count + 1)),
                                                              leased(data, int(ends[count]))],
                                         null_count=int(nulls.sum()))

        files = self.files
        file = numbers("file", pa.int32())

        def strings(name, each, indices):
            """Column ``name``: the strings ``each`` at ``indices``, a dictionary array where the schema asks for
            one (no string copied per row)."""
            kind = self.schema.field(name).type
            if not pa.types.is_dictionary(kind):
                return pa.array(each, pa.string()).take(indices)
            dictionary = pa.array(each, kind.value_type)
            if dictionary.null_count:   # (the first rows' files begin with None, no file's: a writer takes no null)
                return dictionary.take(indices).dictionary_encode().cast(kind)
            return pa.DictionaryArray.from_arrays(indices.cast(kind.index_type), dictionary)

        headers_type = self.schema.field("headers").type
        header_structs = pa.StructArray.from_arrays(
            [binary(held.bytes["header_key"], header["key_offsets"], bytes(held.n_headers), held.n_headers),
             binary(held.bytes["header_value"], header["value_offsets"], header["value_null"], held.n_headers)],
            fields=list(headers_type.value_type))
        visible = values("visible", np.int8)
        arrays = {
            "file": strings("file", [path for path, _, _ in files], file),
            "topic": strings("topic", [topic for _, topic, _ in files], file),
            "partition": pa.array([partition for _, _, partition in files], pa.int32()).take(file),
            "batch_pos": numbers("batch_pos", pa.int64()),
            "batch_base_offset": numbers("batch_base_offset", pa.int64()),
            "codec": strings("codec", self.codecs, pa.array(values("codec", np.uint8))),
            "offset": numbers("offset", pa.int64()), "timestamp": numbers("timestamp", pa.int64()),
            "timestamp_type": strings("timestamp_type", TIMESTAMP_TYPES, pa.array(values("log_append_time", np.uint8))),
            "key": binary(held.bytes["key"], column["key_offsets"], column["key_null"], n),
            "value": binary(held.bytes["value"], column["value_offsets"], column["value_null"], n),
            "headers": pa.Array.from_buffers(headers_type, n, [None, leased(column["headers_offsets"], 4 * (n + 1))],
                                             children=[header_structs]),
            "sequence": numbers("sequence", pa.int32()),
            "producer_id": numbers("producer_id", pa.int64()),
            "is_transactional": pa.array(values("is_transactional", np.uint8).astype(bool)),
            "visible_to_read_committed": pa.array(visible == 1, mask=visible < 0),
        }
        self._reset()
        constant = self._constant_columns(n)
        return pa.RecordBatch.from_arrays([arrays[field.name] if field.name in arrays else constant[field.name]
                                           for field in self.schema], schema=self.schema)

    def _constant_columns(self, n: int) -> dict:
        """The columns of ``n`` columnar rows that hold one value on every row: magic 2, not a control batch's, and
        null where a value is never columnar (control records, decoded internal records, schema-registry ids)."""
        import pyarrow as pa

        if not self.constant or len(self.constant["magic"]) < n:
            rows = max(n, self.capacity)
            self.constant = {field.name: pa.nulls(rows, field.type) for field in self.schema}
            self.constant["magic"] = pa.repeat(pa.scalar(2, pa.int32()), rows)
            self.constant["is_control"] = pa.repeat(pa.scalar(False, pa.bool_()), rows)
        return {name: column.slice(0, n) for name, column in self.constant.items()}


class _Lease:
    """What every Arrow buffer over a gatherer's (RecordRows') buffers holds: once the last is let go of (the
    record batch written, or sent to Spark), the gatherer goes back to ``spare``, to gather other rows into the
    same buffers. (Arrow's buffers over the gatherer's are foreign ones, whose base is this: it is let go of
    with the last of them, in whatever order, whatever array they went into.)"""

    __slots__ = ("held", "spare")

    def __init__(self, held, spare: list):
        self.held, self.spare = held, spare

    def __del__(self):
        self.spare.append(self.held)


# -- rows ------------------------------------------------------------------------------


_RUN_FULL = object()   # what _walked hands out when the run holds an Arrow batch's worth


def _walked(source: KbatchReader, file_range: FileRange, options, run):
    """The entries the full reader reads in ``file_range`` that are batches, in file order, and _RUN_FULL each
    time the walk hands back with ``run`` (which takes the others as columns) holding an Arrow batch's worth:
    its columns go out then, after the rows read before them.

    A whole file whose walk met no finding at all (no damaged range, no batch with a finding, read to its
    end) is added to ``source.walked_clean``: verify-crc without --deep would say nothing of it either. Its
    walk is the same engine with the same run's batches (kbatch.walk.engine.clean_v2_batches, which the
    CRC run takes), and every other entry was read by the full reader with at least verify-crc's checks
    (``options`` only add some: decompressing, decoding records).

    A run that can leave the CRCs to an earlier walk (``crcs_held``: the records level's) is told so for a file
    found clean that way, by a walk that began and ended on the file as it is now (:func:`file_identity`): its
    bytes are the ones whose every CRC held, and the run checks their framing but computes no CRC again.
    """
    from kbatch.reading.reader import SegmentReader
    from kbatch.walk.engine import Walk

    clean = file_range.start == 0 and file_range.stop >= file_range.file_size
    with source.open_segment(file_range.path) as stream:
        opened = file_identity(stream)
        if hasattr(run, "crcs_held"):
            run.crcs_held = opened is not None and source.walked_clean.get(file_range) == opened
        walk = Walk(SegmentReader(stream, options, size=file_range.file_size), run)
        pos = file_range.start
        while pos < min(file_range.stop, walk.reader.size):
            for item in walk.items(pos, file_range.stop, None if run is None else lambda _: run.full):
                if isinstance(item, Batch):
                    clean = clean and not item.findings
                    yield item
                else:
                    clean = False
            if walk.landed is None or walk.landed <= pos:
                break
            pos = walk.landed
            if run is not None and run.full:
                yield _RUN_FULL
        if clean and pos >= file_range.file_size == walk.reader.size:
            # (a file changed while it was walked: clean as verify-crc would say, but no identity to trust)
            source.walked_clean[file_range] = opened if file_identity(stream) == opened else None


def file_identity(stream) -> tuple | None:
    """What says an open local file holds the same bytes as when this was taken (None for a stream that is not a
    local file: a remote object, bytes handed over): its device and inode (the file itself, not one renamed into its
    path since: os.fstat of the open file), its size, and the times of its last write and last change (every write
    sets both, POSIX's write(2); a truncation or an append changes the size too).

    As make and rsync do, it trusts the file system's clock: a write of the same size within one tick of its
    timestamps (nanoseconds in ext4, XFS, btrfs; a clock tick of some milliseconds on Linux) after the first
    identity was taken goes unseen. Kafka writes a segment only at its end (its size) until it is rolled, and
    never again after; the cleaner and retention write new files (other inodes)."""
    try:
        status = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):   # (io.UnsupportedOperation is both of the last two)
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


def batch_arrow(ranges: list[FileRange], source: KbatchReader, schema, columnar: bool = True):
    """The batches level's Arrow batches for file ranges, in file order: the clean v2 batches by whole columns
    (kbatch.spark.batch_columns), gathered across the ranges; every other entry the full reader reads as a row
    (``columnar`` False: all of them, the way the columns are held to)."""
    from kbatch.files.inputs import topic_partition
    from kbatch.reading.reader import ReadOptions
    from kbatch.spark.batch_columns import BatchColumnsRun

    options = ReadOptions(decompressed_limit=source.decompressed_limit, inflate=source.inflate)
    run = BatchColumnsRun(options.max_entry_size, options.inflate, ARROW_ROWS) if columnar else None
    rows: list[tuple] = []

    def in_order():
        """The rows, then the columns taken after them: what was read, in the order it was."""
        yield from in_arrow_batches(rows, schema)
        rows.clear()
        if run is not None and run.held:
            yield run.flush(schema)

    for file_range in ranges:
        topic, partition = topic_partition(file_range.path)
        if run is not None:
            run.begin(file_range.path, topic, partition)
        for item in _walked(source, file_range, options, run):
            if item is _RUN_FULL:
                yield from in_order()
                continue
            if run is not None and run.held:
                yield from in_order()
            rows.append(batch_row(item, file_range.path, topic, partition))
            if len(rows) == ARROW_ROWS:
                yield from in_order()
        if rows:
            yield from in_order()
    yield from in_order()


def batch_row(batch, path: str, topic, partition) -> tuple:
    """A batch the full reader read, as a row of the batches level (the keys of dump --format jsonl)."""
    from kbatch.output.jsonout import batch_dict

    row = batch_dict(batch)
    row.update(file=path, topic=topic, partition=partition, finding_count=len(batch.findings),
               damaged=batch.is_damaged)
    return tuple(row[name] for name in columns.names(columns.SPARK_BATCHES))


def record_batches(ranges: list[FileRange], source: KbatchReader, schema, columnar: bool = True):
    """The records level's Arrow batches for file ranges, in file order.

    The records of a v2 data batch go from the record walk's columns to Arrow arrays (:class:`ColumnarRecords`),
    most of them without a Batch made of their batch (kbatch.spark.record_columns: a run of the walk engine),
    gathered across the ranges (a task's tiny segments share record batches, as the batches level's do);
    those that need an object each go as rows: v0/v1 messages, control records (decoded markers),
    an internal topic's records (decoded with Kafka's schemas) and chunks holding a key or value in the
    schema registry's framing (their ids read from the bytes), as ``dump --format jsonl`` does.
    (``columnar`` False: every batch through the full reader, the way the run is held to.)
    """
    from kbatch.reading.reader import ReadOptions
    from kbatch.reading.records import chunk_records, record_chunks
    from kbatch.kernels.recordwalk import any_key_or_value_starts_with_zero
    from kbatch.files.inputs import topic_partition
    from kbatch.messages import decoder_for_path
    from kbatch.spark.record_columns import RecordColumnsRun

    if source.pushed.selects:
        yield from in_arrow_batches((row for file_range in ranges for row in pushed_record_rows(
            file_range, source, *topic_partition(file_range.path), decoder_for_path(file_range.path),
            committed_view_of(file_range.path, source.decompressed_limit))), schema)
        return
    arrow_rows = source.record_rows or ARROW_ROWS
    records = ColumnarRecords(schema, arrow_rows)
    options = ReadOptions(records=True, record_objects=False, decompressed_limit=source.decompressed_limit)
    run = None
    if columnar:
        run = RecordColumnsRun(records, options.max_entry_size, source.decompressed_limit, arrow_rows,
                               ARROW_RECORD_BYTES)
    rows: list[tuple] = []

    def in_order():
        """The rows, then the columns gathered after them: what was read, in the order it was."""
        yield from in_arrow_batches(rows, schema)
        rows.clear()
        if records.rows:
            yield records.flush()

    def as_rows(file_range, batch, objects, internal, committed):
        if records.rows:   # what the columns gathered went before these
            yield from in_order()
        rows.extend(record_rows(file_range.path, *records.located[1:], batch, objects, internal,
                                visible_to_read_committed(committed, batch)))

    def batch_records(file_range, batch, internal, committed):
        if batch.record_data is None:   # read into objects: v0/v1, control batches (or none decoded)
            yield from as_rows(file_range, batch, batch.records or [], internal, committed)
            return
        for chunk in record_chunks(batch, arrow_rows):
            if internal is not None or any_key_or_value_starts_with_zero(chunk, batch.record_data):
                yield from as_rows(file_range, batch, chunk_records(chunk, batch), internal, committed)
                continue
            if rows:
                yield from in_order()
            if records.rows + chunk.n > arrow_rows or records.data_bytes >= ARROW_RECORD_BYTES:
                yield records.flush()
            records.add(chunk, batch, visible_to_read_committed(committed, batch))

    for file_range in ranges:
        records.begin(file_range.path, *topic_partition(file_range.path))
        internal = decoder_for_path(file_range.path)
        committed = committed_view_of(file_range.path, source.decompressed_limit)
        if run is not None:
            run.committed = committed
        # (an internal topic's records are decoded each into an object: no run)
        for item in _walked(source, file_range, options, run if internal is None else None):
            if item is _RUN_FULL:
                yield from in_order()
                continue
            yield from batch_records(file_range, item, internal, committed)
            if len(rows) >= ARROW_ROWS:
                yield from in_order()
    yield from in_order()


def record_rows(path: str, topic, partition, batch, records, internal: str | None,
                visible: bool | None = None) -> list[tuple]:
    """Record objects as rows of RECORD_SCHEMA (``visible``: the batch's visible_to_read_committed)."""
    from kbatch.messages.decoder import to_json
    from kbatch.messages.topics import decode
    from kbatch.messages.registry import schema_ids

    def as_json(value):
        return None if value is None else json.dumps(to_json(value), ensure_ascii=False)

    rows = []
    for record in records:
        control = record.control
        decoded = ids = None
        if internal is not None and not batch.is_control:
            decoded = decode(internal, record.key, record.value)
        elif not batch.is_control:
            ids = schema_ids(record.key, record.value)
        rows.append((path, topic, partition, batch.pos, batch.base_offset, batch.magic, batch.codec,
                     record.offset, record.timestamp, batch.timestamp_type, record.key, record.value,
                     [(key, value) for key, value in record.headers],
                     record.sequence if batch.magic >= 2 else None, batch.producer_id, batch.is_transactional,
                     batch.is_control, control.type if control else None,
                     control.coordinator_epoch if control else None,
                     as_json(control.data) if control else None, internal if decoded else None,
                     as_json(decoded.key) if decoded else None, as_json(decoded.value) if decoded else None,
                     ids["key"] if ids else None, ids["value"] if ids else None, visible))
    return rows


# -- what a read_committed consumer is given (the visible_to_read_committed column) -----------------

_VIEWS: dict = {}   # per executor process: a partition's view, made once (every segment of it is read)


def committed_view_of(path: str, decompressed_limit: int):
    """The read_committed view of the partition a local segment is in (kbatch.ops.visibility); None for a remote
    one (its partition directory is not listed: the column is null)."""
    from kbatch.files.inputs import is_remote
    from kbatch.ops.visibility import committed_view, partition_of

    if is_remote(path):
        return None
    key = partition_of(path)
    if key not in _VIEWS:
        _VIEWS[key] = committed_view(path, decompressed_limit)[0]
    return _VIEWS[key]


def committed_views(paths, decompressed_limit: int = DECOMPRESSED_LIMIT) -> dict[str, bytes]:
    """On the driver: the read_committed view of each partition the local segments ``paths`` are in, pickled one
    by one (a task unpickles those of its own files: :func:`take_committed_views`).

    Made once for the tasks of a job: each Python worker that reads a file of a partition would otherwise make
    the partition's view on its own, every segment of the partition read (a 2 GiB partition: 0.3 s of CPU in each).
    """
    import pickle

    from kbatch.files.inputs import is_remote
    from kbatch.ops.visibility import committed_view, partition_of

    first: dict[str, str] = {}   # a segment of each partition
    for path in paths:
        if not is_remote(path):
            first.setdefault(partition_of(path), path)
    return {key: pickle.dumps(committed_view(path, decompressed_limit)[0]) for key, path in first.items()}


_TAKEN: dict[str, bytes] = {}   # per executor process: the pickled view each of _VIEWS' was taken from, if handed


def take_committed_views(views: dict[str, bytes], paths) -> None:
    """On an executor: the views :func:`committed_views` made of the partitions of ``paths`` are the ones
    committed_view_of hands out in this process (in place of any it made or was handed before; one handed
    before as the same bytes, by an earlier task of the job, is not unpickled again)."""
    import pickle

    from kbatch.ops.visibility import partition_of

    for key in {partition_of(path) for path in paths} & views.keys():
        if _TAKEN.get(key) != views[key] or key not in _VIEWS:
            _VIEWS[key] = pickle.loads(views[key])
            _TAKEN[key] = views[key]


def visible_to_read_committed(view, batch) -> bool | None:
    if view is None:
        return None
    return view.batch(batch).visible


# -- filters Spark pushes to the records level --------------------------------------------------------


class PushedFilters:
    """The filters of a records read that the source applies as it reads (pyspark.sql.datasource's Filter
    classes, handed to DataSourceReader.pushFilters): on topic and partition, a file is not read at all; on
    key and value, the test runs in the compiled record walk (kbatch.ops.grep), so a batch with no record that may
    pass is never made into rows; on offset and timestamp, ranges.  Each filter kept is applied exactly on
    the rows read, so the result is the one Spark would compute."""

    COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp")

    def __init__(self):
        self.kept = []   # the filters taken, as Spark gave them (what a test or a user can look at)

    @property
    def selects(self) -> bool:
        return any(self._column(each) in ("key", "value", "offset", "timestamp") for each in self.kept)

    def take(self, each) -> bool:
        """Keep ``each`` if the source can apply it."""
        from pyspark.sql import datasource as ds

        column = self._column(each)
        if column not in self.COLUMNS:
            return False
        kinds = {"key": (ds.EqualTo, ds.In, ds.StringStartsWith, ds.StringContains),
                 "value": (ds.EqualTo, ds.In, ds.StringStartsWith, ds.StringContains),
                 "topic": (ds.EqualTo, ds.In, ds.StringStartsWith, ds.StringContains),
                 "partition": (ds.EqualTo, ds.In),
                 "offset": (ds.EqualTo, ds.In, ds.GreaterThan, ds.GreaterThanOrEqual, ds.LessThan,
                            ds.LessThanOrEqual),
                 "timestamp": (ds.EqualTo, ds.In, ds.GreaterThan, ds.GreaterThanOrEqual, ds.LessThan,
                               ds.LessThanOrEqual)}[column]
        if not isinstance(each, kinds):
            return False
        self.kept.append(each)
        return True

    @staticmethod
    def _column(each) -> str | None:
        attribute = getattr(each, "attribute", None)
        return attribute[0] if attribute and len(attribute) == 1 else None

    def wants_file(self, path: str) -> bool:
        """Whether a segment's topic and partition may pass (else its file is not read)."""
        from kbatch.files.inputs import topic_partition

        topic, partition = topic_partition(path)
        return all(_holds(each, {"topic": topic, "partition": partition}[column])
                   for each in self.kept if (column := self._column(each)) in ("topic", "partition"))

    def keeps(self, batch, record) -> bool:
        """Whether a record passes every filter kept on key, value, offset and timestamp."""
        fields = {"key": record.key, "value": record.value, "offset": record.offset, "timestamp": record.timestamp}
        return all(_holds(each, fields[column]) for each in self.kept
                   if (column := self._column(each)) in fields)

    def query(self):
        """The grep query the compiled walk asks (kbatch.ops.grep.Query): the literal one key or value filter
        holds -- bytes every row that passes it holds -- or None (every record is asked)."""
        from pyspark.sql import datasource as ds

        from kbatch.ops.grep import Query

        for each in self.kept:
            column = self._column(each)
            if column in ("key", "value") and isinstance(each, (ds.EqualTo, ds.StringStartsWith,
                                                                 ds.StringContains)):
                literal = _as_bytes(each.value)
                if literal is not None:
                    return Query(literal=literal, where=column)
        return Query()


def _as_bytes(value) -> bytes | None:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return None


def _holds(each, value) -> bool:
    """Spark's answer for one filter on one value (null never passes)."""
    from pyspark.sql import datasource as ds

    if value is None:
        return False
    if isinstance(value, (bytes, bytearray)) or isinstance(each, (ds.StringStartsWith, ds.StringContains)):
        value = bytes(value) if isinstance(value, (bytes, bytearray)) else str(value).encode()
        wanted = [_as_bytes(v) for v in (each.value if isinstance(each, ds.In) else [each.value])]
        if isinstance(each, ds.StringStartsWith):
            return value.startswith(wanted[0])
        if isinstance(each, ds.StringContains):
            return wanted[0] in value
        return value in wanted
    if isinstance(each, ds.In):
        return value in each.value
    return {ds.EqualTo: value == each.value, ds.GreaterThan: value > each.value,
            ds.GreaterThanOrEqual: value >= each.value, ds.LessThan: value < each.value,
            ds.LessThanOrEqual: value <= each.value}[type(each)]


def pushed_record_rows(file_range: FileRange, source: KbatchReader, topic, partition, internal, committed):
    """The rows of the records that pass the pushed filters: batches with no record that may are walked by the
    compiled loop without objects (kbatch.ops.grep.Search), and only passing records become rows."""
    from kbatch.ops.grep import Found, Search

    pushed = source.pushed
    search = Search(pushed.query(), decoder=internal, decompressed_limit=source.decompressed_limit,
                    controls=True)
    with source.open_segment(file_range.path) as stream:
        for item in search.run(file_range.path, stream, file_range.start, file_range.stop):
            if isinstance(item, Found) and pushed.keeps(item.batch, item.record):
                yield from record_rows(file_range.path, topic, partition, item.batch, [item.record], internal,
                                       visible_to_read_committed(committed, item.batch))


def finding_rows(file_range: FileRange, source: KbatchReader):
    """verify-crc's findings for the range (the same library call), and the split's hand-over."""
    from kbatch.format.findings import Finding
    from kbatch.output.jsonout import finding_dict
    from kbatch.output.jsonout import finding_offsets
    from kbatch.files.inputs import topic_partition
    from kbatch.reading.summary import FileSummary
    from kbatch.ops.verify import VerifyOptions, verify_file

    topic, partition = topic_partition(file_range.path)
    names = columns.names(columns.SPARK_FINDINGS[len(columns.LOCATION):])   # after file, topic, partition
    options = VerifyOptions(deep=source.deep, decompressed_limit=source.decompressed_limit)
    landed: dict = {}
    batch: dict = {}   # the batch being verified: its findings carry its offsets
    with source.open_segment(file_range.path) as stream:
        summary = FileSummary(file_range.path, file_range.file_size)
        for finding in verify_file(file_range.path, stream, summary, options, start=file_range.start,
                                   stop=file_range.stop, landed=landed,
                                   on_batch=lambda item: batch.update(last=item)):
            row = finding_dict(finding) | finding_offsets(finding, batch.get("last"))
            yield (file_range.path, topic, partition, *(row[name] for name in names))
    if file_range.stop < file_range.file_size and landed.get("pos") != file_range.stop:
        handover = Finding("split-handover", file_range.stop, file_range.stop, 0, "range",
                           f"the walk from {file_range.start} to end at {file_range.stop}",
                           f"it ended at {landed.get('pos')}")
        row = finding_dict(handover) | finding_offsets(handover, None)
        yield (file_range.path, topic, partition, *(row[name] for name in names))
