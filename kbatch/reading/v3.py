"""Magic 3, the v3 record format proposed for Kafka and never adopted: reading it (the writer is
:func:`kbatch.ops.encode.encode_v3_batch`).

The layout and every choice made where the proposal is open are in
:mod:`kbatch.format.layouts` (``RecordBatchV3Header``, ``RecordV3``).  Kafka rejects
magic 3, so every magic-3 entry carries a ``proposed-format`` finding: kbatch
reads and writes it only to measure it and to show it byte by byte.

Records are decoded with construct's parser driven by the declarations (the
reference decoder): a proposal to look at needs no fast path.

This module is the library: it imports neither click nor rich.
"""

from __future__ import annotations

import io
from typing import cast

from construct import ConstructError

from kbatch.format.codecs import CodecError, Decompressor, codec_name
from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS, crc_mismatch
from kbatch.format.layouts import Record as RecordLayout, RecordBatchV3Tail, RecordV3, field_spans
from kbatch.reading.records import decode_control
from kbatch.reading.model import NO_SEQUENCE, TIMESTAMP_TYPES, Batch, Record, increment_sequence
from kbatch.format.structs import (
    BATCH_V3_FIXED,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    IGNORE_MESSAGE_ATTRIBUTES_MASK,
    PROPOSED_V3_MAGIC,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

# The most bytes the header's varints can take: a varint, two varlongs.
_TAIL_MAX = 5 + 10 + 10


def record_declaration(attributes: int):
    """The record layout of a magic-3 batch: without the attributes byte when ignoreMessageAttributes is set."""
    return RecordV3 if attributes & IGNORE_MESSAGE_ATTRIBUTES_MASK else RecordLayout


def read_v3_batch(pos: int, entry, decompressor: Decompressor, *, records: bool, keep_body: bool) -> Batch:
    """The magic-3 entry whose bytes are ``entry`` (at file position ``pos``)."""
    (base_offset, batch_length, leader_epoch, _, crc, attributes, producer_id, producer_epoch, base_sequence,
     records_count) = BATCH_V3_FIXED.unpack_from(entry)
    codec_id = attributes & COMPRESSION_CODEC_MASK
    batch = Batch(
        pos=pos, size=len(entry), magic=PROPOSED_V3_MAGIC, length_field=batch_length, offset_field=base_offset,
        base_offset=base_offset, last_offset=base_offset, count=records_count, attributes=attributes,
        codec=codec_name(codec_id), crc=crc, computed_crc=CHECKSUMS[PROPOSED_V3_MAGIC].compute(entry),
        timestamp_type=TIMESTAMP_TYPES[bool(attributes & TIMESTAMP_TYPE_MASK)],
        base_timestamp=None, max_timestamp=None, partition_leader_epoch=leader_epoch,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        is_transactional=bool(attributes & TRANSACTIONAL_FLAG_MASK), is_control=bool(attributes & CONTROL_FLAG_MASK),
    )
    batch.findings.append(Finding("proposed-format", pos, pos + BATCH_V3_FIXED.offsets["magic"], 1, "magic",
                                  "0, 1 or 2 (a format Kafka reads)",
                                  "3: the v3 proposal Kafka never adopted"))
    if not batch.crc_valid:
        batch.findings.append(crc_mismatch(pos, pos + len(entry), PROPOSED_V3_MAGIC, batch.computed_crc, crc))
    fixed = BATCH_V3_FIXED.size
    spans, error = field_spans(RecordBatchV3Tail, bytes(entry[fixed:fixed + _TAIL_MAX]), base=pos + fixed)
    if error is not None:
        batch.findings.append(Finding("record-overrun", pos, error.start, len(entry) - (error.start - pos),
                                      error.path, "a complete varint", error.message))
        return batch
    last_offset_delta, base_timestamp, max_timestamp_delta = (cast(int, span.value) for span in spans)   # varints
    header_end = spans[-1].end - pos
    batch.last_offset_delta = last_offset_delta
    batch.last_offset = base_offset + last_offset_delta
    batch.base_timestamp = base_timestamp
    batch.max_timestamp = base_timestamp + max_timestamp_delta
    batch.delete_horizon_ms = base_timestamp if attributes & DELETE_HORIZON_FLAG_MASK else None
    batch.payload_pos, batch.payload_size = pos + header_end, len(entry) - header_end
    if keep_body:
        batch.body = bytes(entry[header_end:])
    if records:
        payload = entry[header_end:]
        if codec_id:
            try:
                payload = decompressor.decompress(codec_id, payload, 2)
            except CodecError as failure:
                batch.findings.append(Finding(failure.code, pos, batch.payload_pos, batch.payload_size, "records",
                                              f"{batch.codec} data", failure.detail))
                batch.records = []
                return batch
            batch.decompressed_size = len(payload)
        batch.findings += _decode_records(batch, bytes(payload), records_count)
    return batch


def _decode_records(batch: Batch, data: bytes, count: int) -> list[Finding]:
    """The ``count`` records (recordsCount), each parsed with its declaration and held to its length, as
    DefaultRecord.readFrom does."""
    in_file = not batch.compressed
    declaration = record_declaration(batch.attributes)
    findings: list[Finding] = []
    batch.records = []
    stream = io.BytesIO(data)

    def finding(code, at, size, field, expected, actual):
        if in_file:
            return Finding(code, batch.pos, batch.payload_pos + at, size, field, expected, actual)
        return Finding(code, batch.pos, batch.payload_pos, batch.payload_size, field, expected, actual, inner_pos=at)

    for index in range(max(count, 0)):
        start = stream.tell()
        if start >= len(data):
            findings.append(finding("records-count-mismatch", start, 0, "records_count", f"{count} records",
                                    f"{index} records, then the end of the batch"))
            return findings
        try:
            fields = declaration.parse_stream(stream)
        except ConstructError as error:
            findings.append(finding("record-overrun", start, len(data) - start, f"records[{index}]",
                                    "a record that reads", str(error).splitlines()[-1]))
            return findings
        end = stream.tell()
        length_size = len(RecordLayout.subcons[0].build(fields.length))
        if end - start - length_size != fields.length:
            findings.append(finding("bad-record-length", start, end - start, f"records[{index}].length",
                                    f"{end - start - length_size} bytes (what the fields use)", str(fields.length)))
            return findings
        sequence = NO_SEQUENCE
        if batch.base_sequence is not None and batch.base_sequence >= 0:
            sequence = increment_sequence(batch.base_sequence, fields.offset_delta)
        batch.records.append(Record(
            offset=batch.base_offset + fields.offset_delta,
            timestamp=batch.max_timestamp if batch.timestamp_type == "LogAppendTime"
            else batch.base_timestamp + fields.timestamp_delta,
            key=fields.key, value=fields.value,
            headers=[(header.key, header.value) for header in fields.headers],
            pos=(batch.payload_pos + start) if in_file else start, size=end - start,
            attributes=fields.get("attributes", 0), sequence=sequence))
        if batch.is_control:
            record = batch.records[-1]
            record.control, problem = decode_control(record.key, record.value)
            if problem:
                findings.append(finding("bad-control-record", start, end - start, f"records[{index}]", *problem))
    if stream.tell() < len(data):
        at = stream.tell()
        findings.append(finding("trailing-bytes", at, len(data) - at, f"records[{count}:]",
                                f"{count} records and nothing after them", f"{len(data) - at} more bytes"))
    return findings
