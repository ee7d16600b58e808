"""Where a segment's bytes go: every byte of a file counted under the field it belongs to.

:class:`SegmentStats` takes what the reader yields (batches and damaged
ranges) and adds each byte to one category, so the categories of a file add up
to its size exactly.  Compressed records cannot be split by field where they
lie, so they count as ``compressed_records`` in the file, and their inflated
bytes are counted field by field in a second account, ``inflated``, which adds
up to the bytes the batches inflate to.

A v2 batch's records are read as the record decoder's columns
(:mod:`kbatch.kernels.recordwalk`), never as Record objects: the key, value and header
bytes are the lengths the decoder found, and each varint field's size follows
from its value (ByteUtils.sizeOfVarint).  Those sizes are checked, chunk by
chunk, against the bytes the decoder's positions leave for the varints; a
record whose varints are not the shortest encoding (legal to read, but not
what Kafka writes) fails that check and is measured field by field with the
layout declaration instead (:func:`kbatch.format.layouts.field_spans`).  v0/v1
messages and magic-3 records are read as objects, their sizes from their values.

Everything kept is a counter or a small table, so memory stays flat whatever
the file size.  This module is the library: it imports neither click nor rich.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kbatch.format.codecs import XERIAL_MAGIC, CodecError, Decompressor, frame_options
from kbatch.format.findings import Finding
from kbatch.format.layouts import Record as RecordLayout, field_spans
from kbatch.reading.model import Batch, Record
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.reading.records import record_chunks
from kbatch.format.structs import (
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    IGNORE_MESSAGE_ATTRIBUTES_MASK,
    LOG_OVERHEAD,
    MESSAGE_V0_HEADER,
    MESSAGE_V1_HEADER,
    PROPOSED_V3_MAGIC,
)
from kbatch.walk.engine import each, entries

# (key, label): the order a report lists them in.  Record fields of v0/v1 messages and v2 records share
# the categories they have in common (key length, value length, attributes, timestamp).
CATEGORIES = (
    ("entry_framing", "entry framing (offset, size)"),
    ("batch_header", "batch header"),
    ("record_length", "record length"),
    ("record_crc", "message crc (v0/v1)"),
    ("record_magic", "message magic (v0/v1)"),
    ("record_attributes", "record attributes"),
    ("record_timestamp", "timestamp (v1) or delta"),
    ("record_offset_delta", "offset delta"),
    ("key_length", "key length"),
    ("value_length", "value length"),
    ("headers_count", "header count"),
    ("header_key_length", "header key lengths"),
    ("header_value_length", "header value lengths"),
    ("keys", "keys"),
    ("values", "values"),
    ("header_keys", "header keys"),
    ("header_values", "header values"),
    ("compressed_records", "compressed records"),
    ("control_batches", "control batches"),
    ("damaged", "damaged bytes"),
    ("zero_tail", "zero tail (preallocated)"),
)
CATEGORY_LABELS = dict(CATEGORIES)
# The per-record overhead: what a record costs beyond its key, value and header bytes.
RECORD_OVERHEAD = ("record_length", "record_crc", "record_magic", "record_attributes", "record_timestamp",
                   "record_offset_delta", "key_length", "value_length", "headers_count", "header_key_length",
                   "header_value_length")
PAYLOAD = ("keys", "values", "header_keys", "header_values")

# A v2 record's declared fields -> categories (field_spans paths end in these names).
_V2_FIELD_CATEGORY = {
    "length": "record_length", "attributes": "record_attributes", "timestamp_delta": "record_timestamp",
    "offset_delta": "record_offset_delta", "key_length": "key_length", "key": "keys",
    "value_length": "value_length", "value": "values", "headers_count": "headers_count",
}
_V2_HEADER_FIELD_CATEGORY = {"key_length": "header_key_length", "key": "header_keys",
                             "value_length": "header_value_length", "value": "header_values"}


def varint_size(value: int, bits: int = 32) -> int:
    """Bytes of the shortest zig-zag varint for ``value`` (ByteUtils.sizeOfVarint / sizeOfVarlong)."""
    raw = ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)
    return max(1, (raw.bit_length() + 6) // 7)


def bucket(value: int) -> int:
    """The power-of-two bucket of a count or size: k holds 2**(k-1) .. 2**k - 1 (0 holds 0)."""
    return max(value, 0).bit_length()


def bucket_label(k: int) -> str:
    if k == 0:
        return "0"
    low, high = 1 << (k - 1), (1 << k) - 1
    return str(low) if low == high else f"{low}-{high}"


@dataclass
class Tally:
    """Batches, records and bytes of one group (a magic, a producer, a codec)."""

    batches: int = 0
    records: int = 0
    bytes: int = 0
    stored_records_bytes: int = 0     # codecs: the compressed records as stored
    inflated_records_bytes: int = 0   # codecs: what they inflate to

    @property
    def ratio(self) -> float | None:
        """codecs: inflated over stored records bytes."""
        return round(self.inflated_records_bytes / self.stored_records_bytes, 3) if self.stored_records_bytes else None


@dataclass
class FileTotal:
    path: str
    size: int
    accounted: int = 0    # what the categories add up to for this file (equal to size, always)
    before: int = 0       # the total before this file began


@dataclass
class SegmentStats:
    """The byte accounting of one or more files (see the module doc)."""

    stored: Counter = field(default_factory=Counter)      # category -> bytes in the files
    inflated: Counter = field(default_factory=Counter)    # category -> bytes inside compressed batches
    files: list[FileTotal] = field(default_factory=list)
    batches: int = 0
    records: int = 0                  # data records (control records are counted with control batches)
    control_batches: int = 0
    damaged_ranges: int = 0
    findings: Counter = field(default_factory=Counter)
    errors: int = 0
    records_per_batch: Counter = field(default_factory=Counter)   # bucket -> batches
    batch_sizes: Counter = field(default_factory=Counter)          # bucket -> batches
    by_magic: dict = field(default_factory=lambda: defaultdict(Tally))
    by_codec: dict = field(default_factory=lambda: defaultdict(Tally))
    by_producer: dict = field(default_factory=lambda: defaultdict(Tally))
    # records measured through the layout declaration because their varints were not the shortest
    records_measured_by_layout: int = 0

    # -- what the reader yields ----------------------------------------------

    def begin_file(self, path: str, size: int) -> None:
        self.files.append(FileTotal(path, size, before=self.total_bytes))

    def add_region(self, finding: Finding) -> None:
        """A finding from the reader; one that owns bytes (skipped, truncated, zero) is counted."""
        self._finding(finding)
        if not finding.owns_bytes:
            return
        if finding.code == "zero-tail":
            self._count("zero_tail", finding.size)
        else:
            self.damaged_ranges += 1
            self._count("damaged", finding.size)

    def add_batch(self, batch: Batch, record_bytes=None) -> None:
        """One log entry.  ``record_bytes(batch)`` returns the bytes its records were decoded from (the
        inflated ones when compressed): asked only for a record that must be measured through the layout."""
        for finding in batch.findings:
            self._finding(finding)
        self.batches += 1
        records = [] if batch.is_control else (batch.record_list or [])
        count = 0 if batch.is_control else _record_count(batch)
        self.records += count
        self.records_per_batch[bucket(count)] += 1
        self.batch_sizes[bucket(batch.size)] += 1
        for group in (self.by_magic[batch.magic],
                      self.by_producer["none" if batch.producer_id in (None, -1) else batch.producer_id]):
            group.batches += 1
            group.records += count
            group.bytes += batch.size
        if batch.is_control:
            self.control_batches += 1
            self._count("control_batches", batch.size)
            return
        if batch.magic >= 2:
            self._v2(batch, records, record_bytes)
        else:
            self._legacy(batch, records)

    # -- one entry -------------------------------------------------------------

    def _v2(self, batch: Batch, records: list[Record], record_bytes) -> None:
        """A v2 batch, or one of the magic-3 proposal (whose header ends in varints)."""
        header = BATCH_HEADER.size if batch.magic == 2 else batch.payload_pos - batch.pos
        if batch.magic > 2 and batch.last_offset_delta is None:   # its header's varints did not read
            header = batch.size
        self._count("entry_framing", LOG_OVERHEAD)
        self._count("batch_header", header - LOG_OVERHEAD)
        payload = batch.size - header
        account = self.stored
        if batch.compressed:
            self._count("compressed_records", payload)
            self._codec(batch, payload, batch.decompressed_size)
            if batch.decompressed_size is None:
                return   # did not inflate: nothing to split
            account, payload = self.inflated, batch.decompressed_size
        if batch.records is None and batch.record_data is not None:   # walked into columns, no objects
            account["damaged"] += payload - self._v2_columns(batch, account)
            return
        used = 0
        for record in records:
            sizes = v2_record_sizes(record, batch)
            if sizes is None:
                sizes = self._measured_by_layout(batch, record, record_bytes)
            for category, size in sizes.items():
                account[category] += size
            used += record.size
        account["damaged"] += payload - used

    def _v2_columns(self, batch: Batch, account: Counter) -> int:
        """A v2 batch's records, chunk by chunk from the decoder's columns, into ``account``: the bytes
        they take."""
        used = 0
        for columns in record_chunks(batch):
            sizes, outliers = column_sizes(columns)
            for category, size in sizes.items():
                account[category] += size
            for row in outliers:   # a varint longer than it need be: read off the declaration
                record = Record(offset=columns.records["offset"][row], timestamp=0, key=None, value=None, headers=[],
                                pos=columns.records["pos"][row] + _records_start(batch),
                                size=columns.records["size"][row])
                for category, size in self._measured_by_layout(batch, record, lambda _: batch.record_data).items():
                    account[category] += size
            used += sum(columns.column("size"))
        return used

    def _legacy(self, batch: Batch, records: list[Record]) -> None:
        header = MESSAGE_V1_HEADER if batch.magic == 1 else MESSAGE_V0_HEADER
        if not batch.compressed:
            if records:
                self._account_legacy_record(self.stored, records[0], batch.magic)
            else:   # key and value lengths did not fit: the bytes after the header are damage
                self._count("entry_framing", LOG_OVERHEAD)
                self._count("batch_header", header.size - LOG_OVERHEAD)
                self._count("damaged", batch.size - header.size)
            return
        # A wrapper: its own header, key and value lengths (and a key, normally null), then the value.
        self._count("entry_framing", LOG_OVERHEAD)
        self._count("compressed_records", batch.payload_size)
        self._count("batch_header", batch.size - LOG_OVERHEAD - batch.payload_size)
        self._codec(batch, batch.payload_size, batch.decompressed_size)
        if batch.decompressed_size is None:
            return
        used = 0
        for record in records:
            self._account_legacy_record(self.inflated, record, record.magic)
            used += record.size
        self.inflated["damaged"] += batch.decompressed_size - used

    @staticmethod
    def _account_legacy_record(account: Counter, record: Record, magic: int | None) -> None:
        """A v0/v1 message holding one record: offset+size, crc, magic, attributes, [timestamp], key, value."""
        key = len(record.key) if record.key is not None else 0
        value = len(record.value) if record.value is not None else 0
        sizes = {"entry_framing": LOG_OVERHEAD, "record_crc": 4, "record_magic": 1,
                 "record_attributes": 1, "record_timestamp": 8 if magic == 1 else 0, "key_length": 4, "keys": key,
                 "value_length": 4, "values": value}
        for category, size in sizes.items():
            if size:
                account[category] += size
        # What the fields do not explain (never, for a message the reader accepted) is damage.
        rest = record.size - sum(sizes.values())
        if rest:
            account["damaged"] += rest

    def _measured_by_layout(self, batch: Batch, record: Record, record_bytes) -> dict[str, int]:
        """A record's field sizes read off the layout declaration (its varints are not the shortest)."""
        self.records_measured_by_layout += 1
        data = record_bytes(batch) if record_bytes is not None else None
        if data is None:
            return {"damaged": record.size}
        declaration = RecordLayout
        if batch.magic == PROPOSED_V3_MAGIC:
            from kbatch.reading.v3 import record_declaration
            declaration = record_declaration(batch.attributes)
        spans, error = field_spans(declaration, data[record.pos - _records_start(batch):][:record.size])
        sizes: Counter = Counter()
        for span in spans:
            *parents, name = span.path.split(".")
            table = _V2_HEADER_FIELD_CATEGORY if parents and parents[-1].startswith("headers[") \
                else _V2_FIELD_CATEGORY
            sizes[table[name]] += span.end - span.start
        rest = record.size - sum(sizes.values())
        if rest:
            sizes["damaged"] += rest
        return dict(sizes)

    # -- bookkeeping -------------------------------------------------------------

    def _count(self, category: str, size: int) -> None:
        self.stored[category] += size

    def _codec(self, batch: Batch, stored: int, inflated: int | None) -> None:
        tally = self.by_codec[batch.codec]
        tally.batches += 1
        tally.records += _record_count(batch)
        tally.bytes += batch.size
        tally.stored_records_bytes += stored
        tally.inflated_records_bytes += inflated or 0

    def _finding(self, finding: Finding) -> None:
        self.findings[finding.code] += 1
        self.errors += finding.is_damage

    def end_file(self) -> None:
        current = self.files[-1]
        current.accounted = self.total_bytes - current.before

    # -- what it adds up to ----------------------------------------------------

    @property
    def damaged(self) -> bool:
        return self.errors > 0

    @property
    def total_bytes(self) -> int:
        return sum(self.stored.values())

    @property
    def record_overhead(self) -> int:
        return sum(self.stored[key] + self.inflated[key] for key in RECORD_OVERHEAD)

    @property
    def inflated_bytes(self) -> int:
        return sum(self.inflated.values())

    # -- the rows of the report (its keys: kbatch.output.columns.STATS) ---------

    def shares(self, account: Counter, whole: int) -> list[Share]:
        """The categories of an account that hold bytes, in CATEGORIES' order."""
        records = self.records
        return [Share(key, label, account[key], round(account[key] / records, 3) if records else None,
                      round(account[key] / whole, 6) if whole else 0.0)
                for key, label in CATEGORIES if account[key]]

    @property
    def overhead_per_record(self) -> float | None:
        return round(self.record_overhead / self.records, 3) if self.records else None

    @staticmethod
    def buckets(counter: Counter) -> list[tuple[str, int]]:
        """(bucket label, batches) in bucket order."""
        return [(bucket_label(k), n) for k, n in sorted(counter.items())]

    def producers(self) -> list[tuple[int | str, Tally]]:
        """(producer id, or "none"; its tally), ordered by the id as text."""
        return sorted(self.by_producer.items(), key=lambda item: str(item[0]))


@dataclass(frozen=True)
class Share:
    """A category's bytes in an account: per record, and as a share of the account's whole."""

    category: str
    label: str
    bytes: int
    per_record: float | None
    share: float


def _record_count(batch: Batch) -> int:
    """Records that decoded: objects, or rows of the decoder's columns (``record_checks.decoded``)."""
    if batch.records is None and batch.record_checks is not None:
        return batch.record_checks.decoded
    return len(batch.records or [])


def _varint_bytes(column, bits: int = 32) -> int:
    """The bytes of the shortest varints for every value in a column (each distinct value sized once)."""
    return sum(varint_size(value, bits) * times for value, times in Counter(column).items())


def _payload_bytes(column) -> int:
    """The bytes of the keys (or values) whose lengths are in a column: a negative length is null."""
    return sum(length * times for length, times in Counter(column).items() if length > 0)


# The column whose values a varint category's sizes come from (the record length aside).
_VARINT_COLUMNS = (("record_timestamp", "timestamp_delta", 64), ("record_offset_delta", "offset_delta", 32),
                   ("key_length", "key_length", 32), ("value_length", "value_length", 32),
                   ("headers_count", "headers_count", 32))
_HEADER_VARINT_COLUMNS = (("header_key_length", "key_length"), ("header_value_length", "value_length"))


def column_sizes(columns) -> tuple[dict[str, int], list[int]]:
    """The records of a chunk of the decoder's columns by category, and the rows left out of that.

    Every varint is taken to be the shortest for its value; the decoder's
    positions say how many bytes the varints of a record really take (its size
    less its attributes byte, keys, values and header bytes).  A varint is never
    shorter than the shortest, so where the two agree for the chunk they agree
    for each varint.  Where they do not, the rows at fault are returned (to be
    measured through the declaration) and left out of the sizes.
    """
    n = columns.n
    size, length = columns.column("size"), columns.column("length")
    header = {name: columns.header_column(name) for name in ("key_length", "value_length")}
    sizes = {"record_length": _varint_bytes(length), "record_attributes": n}
    for category, name, bits in _VARINT_COLUMNS:
        sizes[category] = _varint_bytes(columns.column(name), bits)
    for category, name in _HEADER_VARINT_COLUMNS:
        sizes[category] = _varint_bytes(header[name])
    sizes.update(keys=_payload_bytes(columns.column("key_length")),
                 values=_payload_bytes(columns.column("value_length")),
                 header_keys=_payload_bytes(header["key_length"]),
                 header_values=_payload_bytes(header["value_length"]))
    if sum(sizes.values()) == sum(size):
        return {category: total for category, total in sizes.items() if total}, []
    return _sizes_by_row(columns)


def _sizes_by_row(columns) -> tuple[dict[str, int], list[int]]:
    """:func:`column_sizes` record by record: for a chunk holding a record with an over-long varint."""
    column, header = columns.records, columns.headers
    sizes: Counter = Counter()
    outliers = []
    for row in range(columns.n):
        first, count = column["first_header"][row], column["headers_count"][row]
        record = Counter(record_attributes=1)
        for category, name, bits in _VARINT_COLUMNS:
            record[category] += varint_size(column[name][row], bits)
        for name, category in (("key_length", "keys"), ("value_length", "values")):
            record[category] += max(column[name][row], 0)
        for h in range(first, first + count):
            for name, category in (("key_length", "header_keys"), ("value_length", "header_values")):
                record[f"header_{name}"] += varint_size(header[name][h])
                record[category] += max(header[name][h], 0)
        body = sum(record.values())
        if column["length"][row] != body or column["size"][row] != varint_size(body) + body:
            outliers.append(row)
            continue
        record["record_length"] = varint_size(body)
        sizes.update(record)
    return {category: total for category, total in sizes.items() if total}, outliers


def _records_start(batch: Batch) -> int:
    """Where record positions count from in the bytes ``record_bytes`` returns."""
    return 0 if batch.compressed else batch.payload_pos


def v2_record_sizes(record: Record, batch: Batch) -> dict[str, int] | None:
    """A v2 record's bytes by category, from its values; None when they do not add up to its size.

    Under LogAppendTime the record's timestamp is the batch's, so the stored
    timestamp delta is not known from the values: its size is what the record
    leaves for it (one size fits, since a varint's size grows with what it counts).
    """
    key = len(record.key) if record.key is not None else 0
    value = len(record.value) if record.value is not None else 0
    without_attributes = batch.magic == PROPOSED_V3_MAGIC and batch.attributes & IGNORE_MESSAGE_ATTRIBUTES_MASK
    sizes = {
        "record_attributes": 0 if without_attributes else 1,
        "record_offset_delta": varint_size(record.offset - batch.base_offset),
        "key_length": varint_size(-1 if record.key is None else key),
        "keys": key,
        "value_length": varint_size(-1 if record.value is None else value),
        "values": value,
        "headers_count": varint_size(len(record.headers)),
        "header_key_length": 0, "header_keys": 0, "header_value_length": 0, "header_values": 0,
    }
    for header_key, header_value in record.headers:
        sizes["header_key_length"] += varint_size(len(header_key))
        sizes["header_keys"] += len(header_key)
        sizes["header_value_length"] += varint_size(-1 if header_value is None else len(header_value))
        sizes["header_values"] += len(header_value) if header_value is not None else 0
    known = sum(sizes.values())
    candidates: Iterable[int]
    if batch.timestamp_type == "LogAppendTime":
        candidates = range(1, 11)
    elif record.timestamp is not None and batch.base_timestamp is not None:   # (a v2 record's always are)
        candidates = (varint_size(record.timestamp - batch.base_timestamp, 64),)
    else:
        return None
    for timestamp_size in candidates:
        body = known + timestamp_size
        if varint_size(body) + body == record.size:
            sizes["record_timestamp"] = timestamp_size
            sizes["record_length"] = varint_size(body)
            return {category: size for category, size in sizes.items() if size}
    return None


def collect(stats: SegmentStats, path: str, stream,
            options: ReadOptions = ReadOptions(records=True, record_objects=False), what_if=None) -> None:
    """Read one file into ``stats`` (and, when given, into a :class:`kbatch.ops.reencode.WhatIf`: it re-encodes
    Record objects, so with it records are read into objects)."""
    if what_if is not None and not options.record_objects:
        options = options._replace(record_objects=True)
    reader = SegmentReader(stream, options)
    decompressor = Decompressor(options.decompressed_limit)

    def record_bytes(batch: Batch) -> bytes | None:
        payload = reader.read_bytes(batch.payload_pos, batch.payload_size)
        if not batch.compressed:
            return payload
        try:
            return decompressor.decompress(batch.attributes & COMPRESSION_CODEC_MASK, payload, batch.magic)
        except CodecError:
            return None

    def region(finding: Finding) -> None:
        stats.add_region(finding)
        if what_if is not None and finding.owns_bytes:
            what_if.add_region(finding.size)

    def batch(batch: Batch) -> None:
        stats.add_batch(batch, record_bytes)
        if what_if is not None:
            head = reader.read_bytes(batch.payload_pos, min(batch.payload_size, 16)) if batch.compressed else b""
            raw = batch.codec == "snappy" and head[:len(XERIAL_MAGIC)] != XERIAL_MAGIC
            frame = frame_options(batch.attributes & COMPRESSION_CODEC_MASK, head, batch.decompressed_size or 0)
            what_if.add_batch(batch, record_bytes, snappy_framing="raw" if raw else "xerial", frame=frame)

    stats.begin_file(path, reader.size)
    each(entries(reader), batch, region)
    stats.end_file()


def collect_files(stats: SegmentStats, files: list[str], options: ReadOptions, *, hex_input: bool = False,
                  what_if=None, outputs: dict[str, dict[str, str]] | None = None,
                  unreadable: Callable[[str, Exception], None], unwritable: Callable[[str, OSError], None]) -> bool:
    """Read every file of ``files`` into ``stats`` (:func:`collect`), each that cannot be opened passed to
    ``unreadable(path, error)``; with ``what_if`` (a kbatch.ops.reencode.WhatIf) and ``outputs`` (input ->
    layout -> file), each input's layouts written to those files (:class:`LayoutFiles`), one that cannot be
    passed to ``unwritable(path, error)``.  Whether anything could not be read or written."""
    from kbatch.reading.reader import open_input

    trouble = False
    outputs = outputs or {}
    for path in files:
        try:
            stream = open_input(path, hex_text=hex_input)
        except (OSError, ValueError) as error:
            unreadable(path, error)
            trouble = True
            continue
        with stream:
            if path in outputs:
                with LayoutFiles(outputs[path], like=path, unwritable=unwritable) as layout_files:
                    what_if.write = layout_files.write
                    collect(stats, path, stream, options, what_if=what_if)
                trouble = trouble or layout_files.failed
            else:
                collect(stats, path, stream, options, what_if=what_if)
    return trouble


class LayoutFiles:
    """One input's layouts, spooled (to disk past 8 MiB) as they are encoded, then each written as its own
    output (:func:`kbatch.files.outputs.write_output`: atomically, with the mode of the input ``like``).
    A file that cannot be written is passed to ``unwritable(path, error)``, and ``failed`` says so."""

    _SPOOL = 8 << 20

    def __init__(self, paths: dict[str, str], like: str | None, unwritable: Callable[[str, OSError], None]):
        import tempfile

        self.paths = paths
        self.like = None if like == "-" else like
        self.unwritable = unwritable
        self.failed = False
        self.spools = {layout: tempfile.SpooledTemporaryFile(self._SPOOL) for layout in paths}

    def write(self, layout: str, data: bytes) -> None:
        self.spools[layout].write(data)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace) -> None:
        try:
            if kind is None:
                for layout, spool in self.spools.items():
                    self._write(self.paths[layout], spool)
                    if self.failed:
                        break   # the next would fail the same way: one line says it
        finally:
            for spool in self.spools.values():
                spool.close()

    def _write(self, path: str, spool) -> None:
        import os

        from kbatch.files.outputs import write_output

        spool.seek(0)
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            write_output(path, iter(lambda: spool.read(1 << 20), b""), like=self.like)
        except OSError as error:   # a read-only or full directory: the user's to fix, not a bug
            self.unwritable(path, error)
            self.failed = True
