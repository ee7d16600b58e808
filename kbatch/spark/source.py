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
larger than that into byte ranges.  Each range starts where an entry with a
valid CRC begins (from the ``.index`` beside the segment when there is one,
checked; otherwise by resync), and its walk must end exactly where the next
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

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

LEVELS = ("batches", "records", "findings")

BATCH_SCHEMA = (
    "file STRING, topic STRING, partition INT, pos LONG, size LONG, magic INT, base_offset LONG, last_offset LONG, "
    "stored_offset LONG, count INT, batch_length INT, partition_leader_epoch INT, crc LONG, crc_computed LONG, "
    "crc_valid BOOLEAN, attributes INT, codec STRING, timestamp_type STRING, is_transactional BOOLEAN, "
    "is_control BOOLEAN, last_offset_delta INT, base_timestamp LONG, base_timestamp_iso STRING, max_timestamp LONG, "
    "max_timestamp_iso STRING, delete_horizon_ms LONG, "
    "producer_id LONG, producer_epoch INT, base_sequence INT, last_sequence INT, payload_pos LONG, "
    "payload_size LONG, decompressed_size LONG, finding_count INT, damaged BOOLEAN")
RECORD_SCHEMA = (
    "file STRING, topic STRING, partition INT, batch_pos LONG, batch_base_offset LONG, magic INT, codec STRING, "
    "offset LONG, timestamp LONG, timestamp_type STRING, key BINARY, value BINARY, "
    "headers ARRAY<STRUCT<key: BINARY, value: BINARY>>, sequence INT, producer_id LONG, "
    "is_transactional BOOLEAN, is_control BOOLEAN, control_type STRING, coordinator_epoch INT, "
    # KRaft control records' fields, internal topics' keys and values (JSON as dump's jsonl writes them),
    # and the schema-registry ids of user records
    "control_data STRING, decoder STRING, decoded_key STRING, decoded_value STRING, key_schema_id INT, "
    "value_schema_id INT")
FINDING_SCHEMA = (
    "file STRING, topic STRING, partition INT, code STRING, severity STRING, entry_pos LONG, pos LONG, size LONG, "
    "inner_pos LONG, field STRING, expected STRING, actual STRING, base_offset LONG, last_offset LONG")
SCHEMAS = {"batches": BATCH_SCHEMA, "records": RECORD_SCHEMA, "findings": FINDING_SCHEMA}

_MIB = 1024 * 1024


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
        return KbatchReader(self.options, schema)


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
        self.decompressed_limit = _int_option(options, "maxDecompressedBytes", 256 * _MIB)

    # -- planning, on the driver -----------------------------------------------

    def partitions(self) -> list[SegmentPartition]:
        from kbatch.files.inputs import list_segments

        segments = list_segments(_paths(self.options), self.options.get("pattern", "*.log"))
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

    def read(self, partition: SegmentPartition):
        from pyspark.sql.pandas.types import to_arrow_schema

        # The Arrow schema Spark holds each batch to (pyspark/sql/worker/plan_data_source_read.py builds it
        # the same way and rejects a batch whose schema differs): derived, never kept by hand.
        schema = to_arrow_schema(self.schema, timezone="UTC")
        if self.level == "records":
            for file_range in partition.ranges:
                yield from record_batches(file_range, self, schema)
            return
        rows = {"batches": batch_rows, "findings": finding_rows}[self.level]
        for file_range in partition.ranges:
            yield from in_arrow_batches(rows(file_range, self), schema)


def pack(ranges: list[FileRange], max_partition_bytes: int, open_cost: int, min_partitions: int) -> list:
    """Bin-pack file ranges into tasks as Spark's FilePartition.getFilePartitions does.

    Each range weighs its bytes plus an open cost; a task holds up to a split
    size that spreads the total over at least ``min_partitions`` tasks, so
    thousands of tiny segments become a handful of tasks, not thousands.
    """
    if not ranges:
        return []
    total = sum(r.stop - r.start + open_cost for r in ranges)
    split = min(max_partition_bytes, max(open_cost, total // max(min_partitions, 1)))
    partitions, current, current_bytes = [], [], 0
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
    """Cut a segment into ranges that each start where an entry with a valid CRC begins."""
    from kbatch.reading.reader import SegmentReader
    from kbatch.files.inputs import open_segment

    starts = [0]
    index = _index_positions(path)
    with open_segment(path) as stream:
        reader = SegmentReader(stream, size=size)
        for nominal in range(split_bytes, size, split_bytes):
            if nominal <= starts[-1]:
                continue
            boundary = next((position for position in index if position >= nominal
                             and reader.entry_verifies_at(position)), None)
            if boundary is None:
                boundary = reader.next_entry_at_or_after(nominal)
            if boundary is None:
                break
            if boundary > starts[-1]:
                starts.append(boundary)
    stops = starts[1:] + [size]
    return [FileRange(path, start, stop, size) for start, stop in zip(starts, stops)]


def _index_positions(path: str) -> list[int]:
    """The positions an offset index (``.index`` beside the segment: relativeOffset int32, position int32) holds."""
    if not path.endswith(".log"):
        return []
    from kbatch.files.inputs import is_remote, open_segment

    index_path = path[:-len(".log")] + ".index"
    if not is_remote(index_path) and not os.path.exists(index_path):
        return []
    try:
        with open_segment(index_path) as stream:
            data = stream.read()
    except OSError:
        return []
    positions = [int.from_bytes(data[i + 4:i + 8], "big") for i in range(0, len(data) - 7, 8)]
    return sorted({position for position in positions if position > 0})


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
    RECORD_SCHEMA by whole columns (numpy, Arrow's take): no Python object per record.

    :meth:`add` copies a chunk's columns (kbatch.kernels.recordwalk.RecordColumns, reused by the decoder) and
    the bytes its records span; :meth:`flush` turns what was gathered into one record batch.
    """

    RECORD_FIELDS = ("offset", "timestamp", "offset_delta", "key_pos", "key_length", "value_pos",
                     "value_length", "headers_count")

    def __init__(self, schema, path: str, topic: str | None, partition: int | None):
        self.schema, self.path, self.topic, self.partition = schema, path, topic, partition
        self._reset()

    def _reset(self) -> None:
        from array import array

        from kbatch.kernels.recordwalk import HEADER_COLUMNS

        self.records = {name: array("q") for name in self.RECORD_FIELDS}
        self.headers = {name: array("q") for name in HEADER_COLUMNS}
        self.data = bytearray()   # the records' bytes, chunk after chunk
        self.chunks = []          # per chunk: its rows, its header rows, where its bytes start, its batch's fields
        self.rows = 0

    def add(self, columns, batch) -> None:
        n = columns.n
        pos, size = columns.records["pos"], columns.records["size"]
        start, stop = pos[0], pos[n - 1] + size[n - 1]
        # Positions in the columns are inside batch.record_data: they move by where its bytes land here.
        shift = len(self.data) - start
        self.data += batch.record_data[start:stop]
        for name in self.RECORD_FIELDS:
            self.records[name] += columns.records[name][:n]
        for name, column in self.headers.items():
            column += columns.headers[name][:columns.n_headers]
        self.chunks.append((n, columns.n_headers, shift, batch.pos, batch.base_offset, batch.codec,
                            batch.timestamp_type, batch.timestamp_type == "LogAppendTime", batch.max_timestamp,
                            -1 if batch.base_sequence is None else batch.base_sequence, batch.producer_id,
                            batch.is_transactional))
        self.rows += n

    def flush(self):
        import numpy as np
        import pyarrow as pa

        (counts, header_counts, shifts, batch_pos, base_offset, codec, timestamp_type, log_append_time,
         max_timestamp, base_sequence, producer_id, transactional) = zip(*self.chunks)
        n = self.rows
        column = {name: np.frombuffer(values, dtype=np.int64) for name, values in self.records.items()}
        header = {name: np.frombuffer(values, dtype=np.int64) for name, values in self.headers.items()}
        shift = np.repeat(np.array(shifts, dtype=np.int64), counts)
        header_shift = np.repeat(np.array(shifts, dtype=np.int64), header_counts)
        data = pa.py_buffer(self.data)
        chunk_of_row = pa.array(np.repeat(np.arange(len(counts), dtype=np.int32), counts))

        def per_chunk(values, arrow_type):
            return pa.array(values, arrow_type).take(chunk_of_row)

        def constant(value, arrow_type):
            return pa.repeat(pa.scalar(value, arrow_type), n)

        # A timestamp as Record.timestamp has it: LogAppendTime batches give every record maxTimestamp.
        timestamp = np.where(np.repeat(np.array(log_append_time, dtype=bool), counts),
                             np.repeat(np.array(max_timestamp, dtype=np.int64), counts), column["timestamp"])
        # Record.sequence: baseSequence + offsetDelta, wrapping past Integer.MAX_VALUE to 0
        # (DefaultRecordBatch.incrementSequence); -1 where the batch has no sequence.
        base = np.repeat(np.array(base_sequence, dtype=np.int64), counts)
        sequence = base + column["offset_delta"]
        sequence = np.where(sequence > 2**31 - 1, sequence - 2**31, sequence)
        sequence = np.where(base >= 0, sequence, -1).astype(np.int32)
        headers_type = self.schema.field("headers").type
        list_offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(column["headers_count"], out=list_offsets[1:])
        header_structs = pa.StructArray.from_arrays(
            [binary_spans(data, header["key_pos"] + header_shift, header["key_length"]),
             binary_spans(data, header["value_pos"] + header_shift, header["value_length"])],
            fields=list(headers_type.value_type))
        arrays = {
            "file": constant(self.path, pa.string()), "topic": constant(self.topic, pa.string()),
            "partition": constant(self.partition, pa.int32()),
            "batch_pos": per_chunk(batch_pos, pa.int64()), "batch_base_offset": per_chunk(base_offset, pa.int64()),
            "magic": constant(2, pa.int32()), "codec": per_chunk(codec, pa.string()),
            "offset": pa.array(column["offset"]), "timestamp": pa.array(timestamp),
            "timestamp_type": per_chunk(timestamp_type, pa.string()),
            "key": binary_spans(data, column["key_pos"] + shift, column["key_length"]),
            "value": binary_spans(data, column["value_pos"] + shift, column["value_length"]),
            "headers": pa.ListArray.from_arrays(pa.array(list_offsets), header_structs, type=headers_type),
            "sequence": pa.array(sequence), "producer_id": per_chunk(producer_id, pa.int64()),
            "is_transactional": per_chunk(transactional, pa.bool_()), "is_control": constant(False, pa.bool_()),
        }
        self._reset()
        # Control records, decoded internal records and schema-registry ids are never columnar: null.
        return pa.RecordBatch.from_arrays([arrays[field.name] if field.name in arrays else pa.nulls(n, field.type)
                                           for field in self.schema], schema=self.schema)


def binary_spans(data, pos, length):
    """The bytes ``data[pos[i]:pos[i] + length[i]]`` of every i (null where length < 0) as an Arrow
    binary array; the spans follow one another in ``data`` (records', or headers', keys or values).

    Arrow gathers them itself: one binary array over ``data`` whose odd elements are the spans and
    whose even ones are the bytes between them, of which ``take`` copies the odd ones.
    """
    import numpy as np
    import pyarrow as pa

    n = len(pos)
    if n == 0:
        return pa.array([], pa.binary())
    if data.size > 2**31 - 1:   # binary offsets are int32
        raise ValueError(f"kbatch: {data.size} bytes of records in one Arrow batch")
    offsets = np.zeros(2 * n + 1, dtype=np.int32)
    offsets[1::2] = pos
    offsets[2::2] = pos + np.maximum(length, 0)
    whole = pa.Array.from_buffers(pa.binary(), 2 * n, [None, pa.py_buffer(offsets), data])
    return whole.take(pa.array(np.arange(1, 2 * n, 2), mask=length < 0))


# -- rows ------------------------------------------------------------------------------


def _walk(file_range: FileRange, reader_options):
    from kbatch.reading.reader import SegmentReader
    from kbatch.files.inputs import open_segment

    stream = open_segment(file_range.path)
    reader = SegmentReader(stream, reader_options, size=file_range.file_size)
    return stream, reader, reader.walk(file_range.start, file_range.stop)


def batch_rows(file_range: FileRange, source: KbatchReader):
    from kbatch.reading.reader import ReadOptions
    from kbatch.output.jsonout import batch_dict
    from kbatch.reading.model import Batch
    from kbatch.files.inputs import topic_partition

    topic, partition = topic_partition(file_range.path)
    names = [column.split()[0] for column in BATCH_SCHEMA.split(", ")]
    options = ReadOptions(decompressed_limit=source.decompressed_limit, inflate=source.inflate)
    stream, _, items = _walk(file_range, options)
    with stream:
        for item in items:
            if not isinstance(item, Batch):
                continue
            row = batch_dict(item)
            row.update(file=file_range.path, topic=topic, partition=partition,
                       finding_count=len(item.findings), damaged=item.is_damaged)
            yield tuple(row[name] for name in names)


def record_batches(file_range: FileRange, source: KbatchReader, schema):
    """The records level's Arrow batches for a file range.

    The records of a v2 batch go from the decoder's columns to Arrow arrays (:class:`ColumnarRecords`);
    those that need an object each go as rows: v0/v1 messages, control records (decoded markers),
    an internal topic's records (decoded with Kafka's schemas) and chunks holding a key or value in the
    schema registry's framing (their ids read from the bytes), as ``dump --format jsonl`` does.
    """
    from kbatch.reading.model import Batch
    from kbatch.reading.reader import ReadOptions
    from kbatch.reading.records import chunk_records, record_chunks
    from kbatch.kernels.jsonl import any_key_or_value_starts_with_zero
    from kbatch.files.inputs import topic_partition
    from kbatch.messages import decoder_for_path

    topic, partition = topic_partition(file_range.path)
    internal = decoder_for_path(file_range.path)
    columnar = ColumnarRecords(schema, file_range.path, topic, partition)
    rows = []

    def as_rows(batch, records):
        # Rows stay in file order: what the columns gathered goes first.
        yield from [columnar.flush()] if columnar.rows else []
        rows.extend(record_rows(file_range.path, topic, partition, batch, records, internal))

    options = ReadOptions(records=True, record_objects=False, decompressed_limit=source.decompressed_limit)
    stream, _, items = _walk(file_range, options)
    with stream:
        for batch in items:
            if not isinstance(batch, Batch):
                continue
            if batch.record_data is None:   # read into objects: v0/v1, control batches (or none decoded)
                yield from as_rows(batch, batch.records or [])
                continue
            for columns in record_chunks(batch, ARROW_ROWS):
                if internal is not None or any_key_or_value_starts_with_zero(columns, batch.record_data):
                    yield from as_rows(batch, chunk_records(columns, batch))
                    continue
                if rows:
                    yield from in_arrow_batches(rows, schema)
                    rows.clear()
                if columnar.rows + columns.n > ARROW_ROWS or len(columnar.data) >= ARROW_RECORD_BYTES:
                    yield columnar.flush()
                columnar.add(columns, batch)
            if len(rows) >= ARROW_ROWS:
                yield from in_arrow_batches(rows, schema)
                rows.clear()
    if columnar.rows:
        yield columnar.flush()
    yield from in_arrow_batches(rows, schema)


def record_rows(path: str, topic, partition, batch, records, internal: str | None) -> list[tuple]:
    """Record objects as rows of RECORD_SCHEMA."""
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
                     ids["key"] if ids else None, ids["value"] if ids else None))
    return rows


def finding_rows(file_range: FileRange, source: KbatchReader):
    """verify-crc's findings for the range (the same library call), and the split's hand-over."""
    from kbatch.format.findings import Finding
    from kbatch.output.jsonout import finding_dict
    from kbatch.output.jsonout import finding_offsets
    from kbatch.files.inputs import open_segment, topic_partition
    from kbatch.reading.summary import FileSummary
    from kbatch.ops.verify import VerifyOptions, verify_file

    topic, partition = topic_partition(file_range.path)
    names = [column.split()[0] for column in FINDING_SCHEMA.split(", ")][3:]
    options = VerifyOptions(deep=source.deep, decompressed_limit=source.decompressed_limit)
    landed = {}
    batch = {}   # the batch being verified: its findings carry its offsets
    with open_segment(file_range.path) as stream:
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
