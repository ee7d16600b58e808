"""A v0/v1 message: one record, or a compressed wrapper holding a message set (LegacyRecord.java).

An uncompressed message is one record.  A compressed one is a "wrapper": its
value is a whole message set (entries with their own offset and size),
compressed, which is read with the reader itself (AbstractLegacyRecordBatch's
deep iterator).  The inner messages' findings are reported on the wrapper,
with their position inside the decompressed bytes.
"""

from __future__ import annotations

from typing import Callable, Iterable

from kbatch.format.codecs import CodecError, Decompressor, codec_name
from kbatch.format.findings import MAX_HELD, Finding
from kbatch.format.framing import CHECKSUMS, crc_mismatch, legacy_key_value, read_length
from kbatch.reading.model import NO_TIMESTAMP_TYPE, TIMESTAMP_TYPES, Batch, Record
from kbatch.format.structs import LEGACY_CODEC_MASK, LEGACY_TIMESTAMP_TYPE_MASK, MESSAGE_V0_HEADER, MESSAGE_V1_HEADER

# Reads an inner message set: (its decompressed bytes, the wrapper's magic) -> its entries and findings.
InnerReader = Callable[[bytes, int], Iterable[Batch | Finding]]


def read_message(pos: int, entry: memoryview, magic: int, decompressor: Decompressor, *, nested: bool,
                 read_inner: InnerReader, held: int | None = None) -> Batch:
    """The message whose bytes (offset field to end) are ``entry``, at position ``pos``.

    ``nested`` says the message is itself inside a wrapper's message set; ``held`` how many of a
    wrapper's records are kept (None: MAX_HELD).
    """
    header = MESSAGE_V1_HEADER if magic == 1 else MESSAGE_V0_HEADER
    fields = header.unpack_from(entry)
    offset, size, crc, _, attributes = fields[:5]
    timestamp = fields[5] if magic == 1 else None
    codec_id = attributes & LEGACY_CODEC_MASK
    log_append_time = magic == 1 and bool(attributes & LEGACY_TIMESTAMP_TYPE_MASK)
    batch = Batch(
        pos=pos, size=len(entry), magic=magic, length_field=size, offset_field=offset,
        base_offset=offset, last_offset=offset, count=1, attributes=attributes,
        codec=codec_name(codec_id), crc=crc, computed_crc=CHECKSUMS[magic].compute(entry),
        timestamp_type=TIMESTAMP_TYPES[log_append_time] if magic == 1 else NO_TIMESTAMP_TYPE,
        base_timestamp=timestamp, max_timestamp=timestamp,
    )
    if not batch.crc_valid:
        batch.findings.append(crc_mismatch(pos, pos + len(entry), magic, batch.computed_crc, crc))
    parts, findings = legacy_key_value(pos, len(entry), magic, lambda at: read_length(entry, at))
    batch.findings += findings
    if parts is None:
        batch.count = None
        return batch
    (key_at, key_length), (value_at, value_length) = parts
    key = None if key_length < 0 else bytes(entry[key_at:key_at + key_length])
    value = None if value_length < 0 else bytes(entry[value_at:value_at + value_length])
    batch.payload_pos, batch.payload_size = pos + value_at, 0 if value is None else len(value)
    if codec_id == 0:
        batch.records = [Record(offset=offset, timestamp=timestamp, key=key, value=value, headers=[],
                                pos=pos, size=len(entry), magic=magic, crc=crc, crc_valid=batch.crc_valid)]
        return batch
    _unwrap(batch, value, codec_id, log_append_time, decompressor, nested, read_inner,
            MAX_HELD if held is None else held)
    return batch


def _unwrap(batch: Batch, value: bytes | None, codec_id: int, log_append_time: bool, decompressor: Decompressor,
            nested: bool, read_inner: InnerReader, held: int) -> None:
    """Decompress a wrapper's value and read the inner message set (AbstractLegacyRecordBatch)."""
    def finding(code, field, expected, actual, inner_pos=None):
        batch.findings.append(Finding(code, batch.pos, batch.payload_pos, batch.payload_size, field,
                                      expected, actual, inner_pos))

    if nested:
        finding("nested-compression", "attributes", "an uncompressed inner message",
                f"{batch.codec} inside a compressed message set")
        return
    try:
        # In place: the inner set is walked straight from the decompressor's buffer, never copied whole.
        inner = decompressor.decompress_view(codec_id, value or b"", batch.magic)
    except CodecError as error:
        finding(error.code, "value", f"{batch.codec} data", error.detail)
        batch.count = None
        return
    batch.decompressed_size = len(inner)
    # A wrapper of a few hundred KB can inflate to millions of inner messages: each is checked as it
    # passes, but only the first MAX_HELD records (and findings) are kept, so memory stays bounded
    # whatever the wrapper holds; a finding says what was not kept.
    records: list[Record] = []
    count, last = 0, None
    findings_left = MAX_HELD
    for item in read_inner(inner, batch.magic):
        problems = [item] if isinstance(item, Finding) else item.findings
        if isinstance(item, Batch) and item.magic != batch.magic:
            problems = problems + [Finding("inner-magic-mismatch", item.pos, item.pos, 0, "magic",
                                           str(batch.magic), str(item.magic))]
        for problem in problems:
            findings_left -= 1
            if findings_left >= 0:
                field = (f"inner.{problem.field}" if isinstance(item, Finding)
                         else f"inner[{count}].{problem.field}")
                finding(problem.code, field, problem.expected, problem.actual, problem.pos)
        if isinstance(item, Finding):
            continue
        count += 1
        for record in item.records or []:
            last = record
            if len(records) < held:
                records.append(record)
    decompressor.release()   # the records hold copies of their bytes; the inflated set is done with
    if findings_left < 0:
        finding("not-all-kept", "inner", f"at most {MAX_HELD} findings kept per wrapper",
                f"{MAX_HELD - findings_left} findings; the rest are counted, not listed")
    batch.count = count
    if not count:   # AbstractLegacyRecordBatch.DeepRecordsIterator: "no inner records"
        finding("empty-wrapper", "value", f"at least one message in the {batch.codec} message set",
                f"{len(inner)} decompressed bytes holding none")
    if count > len(records) and last is not None:
        finding("not-all-kept", "inner", f"at most {held} records kept per wrapper",
                f"{count} inner messages; records after the first {len(records)} are checked, not kept")
    if log_append_time:   # LegacyRecord.timestamp(): the wrapper's LogAppendTime wins for v1 messages
        for record in records:
            if record.magic == 1:
                record.timestamp = batch.base_timestamp
    if records and last is not None:   # last: the last inner record walked, kept or not (set when any is kept)
        shift = _absolute_inner_offsets(batch, records, last.offset) if batch.magic == 1 else 0
        batch.base_offset = records[0].offset
        batch.last_offset = records[-1].offset if last is records[-1] else last.offset + shift
    batch.records = records




def _absolute_inner_offsets(batch: Batch, records: list[Record], last_inner: int) -> int:
    """A v1 wrapper's inner offsets are relative: its own offset is that of its last record.

    AbstractLegacyRecordBatch.DeepRecordsIterator: absolute = wrapper offset - last inner offset + inner
    offset.  A wrapper offset of 0 (produce data from some librdkafka versions) means the inner offsets
    stand as stored; a wrapper offset below the last inner offset is corrupt.  (A v0 wrapper's inner
    offsets are absolute already.)
    """
    if batch.offset_field == 0:
        if last_inner != 0:
            batch.findings.append(Finding(
                "wrapper-offset-zero", batch.pos, batch.pos, 8, "offset", "the offset of the last inner message",
                f"0, so the inner offsets {records[0].offset}..{last_inner} are taken as they are"))
        return 0
    if batch.offset_field < last_inner:
        batch.findings.append(Finding("bad-wrapper-offset", batch.pos, batch.pos, 8, "offset",
                                      f"at least the last inner offset {last_inner}", str(batch.offset_field)))
        return 0
    shift = batch.offset_field - last_inner
    for record in records:
        record.offset += shift
    return shift
