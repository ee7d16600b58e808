"""What the same records would cost as v0, v1, v2 or the proposed v3: by encoding them, not by formula.

Each batch read is written again by :mod:`kbatch.ops.encode` in every layout, with
its batch boundaries and its codec kept, and the bytes are counted:

* v0 and v1 (LegacyRecord): one message per record, or for a compressed batch
  one wrapper message holding them.  As Kafka's down-conversion does
  (RecordsUtil.downConvert), control batches are dropped and record headers
  cannot be carried (their bytes are reported); zstd does not exist before
  magic 2, so a zstd batch stays uncompressed there (and is counted).
* v2 as stored: the records written again as a v2 batch; a v0/v1 entry
  becomes one v2 batch.
* v3, the proposal Kafka never adopted (:data:`kbatch.format.layouts.RecordBatchV3Header`).

Sizes are of the records uncompressed; with ``recompress`` each layout is also
compressed with the batch's own codec.  A batch with damage is left out (its
bytes are reported), as are damaged ranges between entries.

For the "headers first" idea (all records' metadata before all keys and
values, so a broker validating a compressed batch inflates only a prefix),
every compressed batch reports what a broker inflates today (all its records)
and what it would inflate then: the records' bytes but for keys and values.

This module is the library: it imports neither click nor rich.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kbatch.ops.encode import encode_entry, legacy_key_value, legacy_message
from kbatch.reading.model import Batch, Record
from kbatch.reading.records import RecordError, decode_record
from kbatch.format.structs import LEGACY_TIMESTAMP_TYPE_MASK, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD

LAYOUTS = ("v0", "v1", "v2", "v3")
_MAGIC = {"v0": 0, "v1": 1, "v2": 2, "v3": 3}


@dataclass
class LayoutTotal:
    layout: str
    entries: int = 0                  # log entries written (a v0/v1 uncompressed batch: one per record)
    records: int = 0
    bytes: int = 0                    # uncompressed
    recompressed_bytes: int = 0       # with recompress: each entry compressed with its batch's codec
    carried_payload: int = 0          # key, value (and, where carried, header) bytes
    headers_dropped: int = 0
    header_bytes_dropped: int = 0     # header keys and values with their varint lengths, as v2 holds them
    control_batches_dropped: int = 0
    left_uncompressed: int = 0        # zstd batches in v0/v1

    @property
    def per_record_overhead(self) -> float | None:
        """Bytes per record beyond its key, value (and carried header) bytes."""
        return round((self.bytes - self.carried_payload) / self.records, 3) if self.records else None

    @property
    def legacy(self) -> bool:
        """v0 and v1, which drop what they cannot carry (headers, control batches, zstd)."""
        return self.layout in ("v0", "v1")


@dataclass
class WhatIf:
    """Re-encodes every batch it is given; ``write(layout, data)``, when set, receives every entry written."""

    recompress: bool = False
    layouts: tuple[str, ...] = LAYOUTS
    write: Callable[[str, bytes], None] | None = None
    totals: dict = field(default_factory=dict)
    stored_entries: int = 0
    stored_records: int = 0
    stored_bytes: int = 0
    damaged_batches_left_out: int = 0
    damaged_bytes_left_out: int = 0
    compressed_batches: int = 0
    inflated_today: int = 0           # what a broker inflates to validate them now: all their records
    headers_first_prefix: int = 0     # what it would inflate if every record's metadata came first
    codecs: Counter = field(default_factory=Counter)

    def __post_init__(self):
        self.totals = {layout: LayoutTotal(layout) for layout in self.layouts}

    def add_region(self, size: int) -> None:
        self.damaged_bytes_left_out += size

    def add_batch(self, batch: Batch, record_bytes=None, snappy_framing: str = "xerial",
                  frame: dict | None = None) -> None:
        """One entry read; ``snappy_framing`` is how its records are framed when it is snappy (xerial or raw),
        ``frame`` the options of its lz4 or zstd frame (codecs.frame_options): both kept when it is compressed
        again, as its producer would."""
        records = batch.record_list
        if batch.is_damaged or records is None:
            self.damaged_batches_left_out += 1
            self.damaged_bytes_left_out += batch.size
            return
        self.stored_entries += 1
        self.stored_records += 0 if batch.is_control else len(records)
        self.stored_bytes += batch.size
        deltas = _stored_timestamp_deltas(batch, records, record_bytes)
        for layout in self.layouts:
            self._encode(layout, batch, records, deltas, snappy_framing, frame)

    # -- one batch in one layout ---------------------------------------------------

    def _encode(self, layout: str, batch: Batch, records: list[Record], deltas, snappy_framing: str,
                frame: dict | None) -> None:
        total = self.totals[layout]
        magic = _MAGIC[layout]
        codec = batch.codec
        if magic < 2:
            if batch.is_control:
                total.control_batches_dropped += 1   # RecordsUtil.downConvert skips control batches
                return
            for record in records:
                total.headers_dropped += len(record.headers)
                total.header_bytes_dropped += _header_bytes(record) if record.headers else 0
            if codec == "zstd":
                total.left_uncompressed += 1          # no zstd before magic 2
                codec = "none"
        specs = _specs(batch, records, magic, deltas, snappy_framing, frame)
        if magic < 2:   # a message per record: written straight from the records, not through a spec each
            plain = _legacy_messages(batch, records, magic)
        else:
            plain = [encode_entry(spec, f"{layout}") for spec in specs(compressed=False)]
        total.entries += len(plain)
        total.records += 0 if batch.is_control else len(records)
        total.bytes += sum(len(data) for data in plain)
        total.carried_payload += sum(_payload(record, headers=magic >= 2) for record in records)
        written = plain
        if self.recompress:
            if codec != "none":
                written = [encode_entry(spec, f"{layout}") for spec in specs(compressed=True, codec=codec)]
            total.recompressed_bytes += sum(len(data) for data in written)
        if layout == "v2" and batch.compressed:
            records_bytes = len(plain[0]) - RECORD_BATCH_OVERHEAD
            self.compressed_batches += 1
            self.inflated_today += records_bytes
            self.headers_first_prefix += records_bytes - sum(_payload(r, headers=False) for r in records)
        if self.write is not None:
            for data in written:
                self.write(layout, data)

    # -- the report (its keys: kbatch.output.columns.WHAT_IF) ---------------------------

    def layout_totals(self) -> list[LayoutTotal]:
        return [self.totals[layout] for layout in self.layouts]


def _legacy_messages(batch: Batch, records: list[Record], magic: int) -> list[bytes]:
    """The records as uncompressed v0/v1 messages, one each, as encode-from-json writes a message spec of one
    record (encode.legacy_message): its own offset, under LogAppendTime (v1) the timestamp-type bit."""
    attributes = LEGACY_TIMESTAMP_TYPE_MASK if magic >= 1 and batch.timestamp_type == "LogAppendTime" else 0
    return [legacy_message(magic, record.offset, attributes,
                           record.timestamp if magic and record.timestamp is not None else NO_TIMESTAMP,
                           legacy_key_value(record.key, record.value)) for record in records]


def _payload(record: Record, *, headers: bool) -> int:
    size = len(record.key or b"") + len(record.value or b"")
    if headers:
        size += sum(len(key) + len(value or b"") for key, value in record.headers)
    return size


def _header_bytes(record: Record) -> int:
    """What a record's headers take in v2: each key and value with their varint lengths."""
    from kbatch.ops.stats import varint_size
    size = 0
    for key, value in record.headers:
        size += varint_size(len(key)) + len(key) + varint_size(-1 if value is None else len(value)) + len(value or b"")
    return size


def _stored_timestamp_deltas(batch: Batch, records: list[Record], record_bytes) -> list[int] | None:
    """Under LogAppendTime a v2 record's timestamp is the batch's: its stored delta is read from its bytes."""
    if batch.magic < 2 or batch.timestamp_type != "LogAppendTime" or record_bytes is None:
        return None
    data = record_bytes(batch)
    if data is None:
        return None
    start = 0 if batch.compressed else batch.payload_pos
    deltas = []
    try:
        for record in records:
            fields, _ = decode_record(data, record.pos - start, len(data), "record")
            deltas.append(fields["timestamp_delta"])
    except RecordError:
        return None
    return deltas


def _specs(batch: Batch, records: list[Record], magic: int, deltas, snappy_framing: str, frame: dict | None):
    """A function giving encode.py's entries for the batch in ``magic`` (uncompressed, or with a codec)."""
    log_append_time = batch.timestamp_type == "LogAppendTime"

    def record_spec(index: int, record: Record) -> dict:
        spec: dict[str, Any] = {"offset": record.offset, "key": record.key, "value": record.value}
        if magic >= 1:
            spec["timestamp"] = record.timestamp if record.timestamp is not None else -1
        if magic >= 2:
            spec["headers"] = [{"key": key, "value": value} for key, value in record.headers]
            if deltas is not None:
                spec["timestamp_delta"] = deltas[index]
        return spec

    def specs(*, compressed: bool, codec: str = "none") -> list[dict]:
        codec = codec if compressed else "none"
        common = {"magic": magic, "codec": codec}
        if codec == "snappy":
            common["snappy_framing"] = snappy_framing
        if codec == batch.codec and frame is not None:
            common["frame"] = frame
        if magic >= 1 and log_append_time:
            common["timestamp_type"] = "LogAppendTime"
        if magic < 2:
            if codec == "none":   # an uncompressed message holds one record
                return [{**common, "records": [record_spec(i, r)]} for i, r in enumerate(records)]
            wrapper = {**common, "records": [record_spec(i, r) for i, r in enumerate(records)],
                       "lz4_kafka3160": magic == 0 and codec == "lz4"}   # as Kafka writes v0 lz4
            if log_append_time:
                wrapper["max_timestamp"] = batch.max_timestamp
            return [wrapper]
        spec = {**common, "records": [record_spec(i, r) for i, r in enumerate(records)],
                "base_offset": batch.base_offset if batch.magic >= 2 else (records[0].offset if records else 0)}
        if batch.magic >= 2:
            spec.update(partition_leader_epoch=batch.partition_leader_epoch, producer_id=batch.producer_id,
                        producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                        is_transactional=batch.is_transactional, is_control=batch.is_control,
                        base_timestamp=batch.base_timestamp, max_timestamp=batch.max_timestamp,
                        last_offset_delta=batch.last_offset_delta)
            if batch.delete_horizon_ms is not None:
                spec["delete_horizon_ms"] = batch.delete_horizon_ms
        elif log_append_time:
            spec["max_timestamp"] = batch.max_timestamp
        return [spec]

    return specs
