"""A v2 record batch: its header, and its records (DefaultRecordBatch.java).

The header is unpacked with the struct derived from
:data:`kbatch.layouts.RecordBatchHeader`; the records are decoded by
:mod:`kbatch.records` (inflated first when compressed).
"""

from __future__ import annotations

from ..codecs import CodecError, Decompressor, codec_name
from ..findings import Finding
from ..framing import CHECKSUMS, crc_mismatch
from ..layouts import (
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from ..model import TIMESTAMP_TYPES, Batch
from ..records import decode_batch_records

_CRC = CHECKSUMS[2]


def read_batch(pos: int, entry: memoryview, decompressor: Decompressor, *, records: bool, inflate: bool) -> Batch:
    """The batch whose bytes (offset field to end) are ``entry``, at file position ``pos``.

    ``records`` decodes its records; ``inflate`` only decompresses them (for Batch.decompressed_size).
    """
    (base_offset, batch_length, leader_epoch, magic, crc, attributes, last_offset_delta, base_timestamp,
     max_timestamp, producer_id, producer_epoch, base_sequence, records_count) = BATCH_HEADER.unpack_from(entry)
    codec_id = attributes & COMPRESSION_CODEC_MASK
    batch = Batch(
        pos=pos, size=len(entry), magic=2, length_field=batch_length, offset_field=base_offset,
        base_offset=base_offset, last_offset=base_offset + last_offset_delta, count=records_count,
        attributes=attributes, codec=codec_name(codec_id), crc=crc, computed_crc=_CRC.compute(entry),
        timestamp_type=TIMESTAMP_TYPES[bool(attributes & TIMESTAMP_TYPE_MASK)],
        base_timestamp=base_timestamp, max_timestamp=max_timestamp,
        partition_leader_epoch=leader_epoch, last_offset_delta=last_offset_delta,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        is_transactional=bool(attributes & TRANSACTIONAL_FLAG_MASK),
        is_control=bool(attributes & CONTROL_FLAG_MASK),
        delete_horizon_ms=base_timestamp if attributes & DELETE_HORIZON_FLAG_MASK else None,
        payload_pos=pos + BATCH_HEADER.size, payload_size=len(entry) - BATCH_HEADER.size,
    )
    if not batch.crc_valid:
        batch.findings.append(crc_mismatch(pos, pos + len(entry), 2, batch.computed_crc, crc))
    if records or (inflate and codec_id != 0):
        load_records(batch, entry[BATCH_HEADER.size:], decompressor, decode=records)
    return batch


def load_records(batch: Batch, payload, decompressor: Decompressor, *, decode: bool = True) -> None:
    """Inflate a v2 batch's records (``payload``: its bytes after the header) and decode them into it.

    For a batch read without ``ReadOptions.records`` (its ``body`` kept),
    this decodes its records later, only if they are needed.
    """
    codec_id = batch.attributes & COMPRESSION_CODEC_MASK
    if codec_id != 0:
        try:
            payload = decompressor.decompress_view(codec_id, payload, 2)   # in place: held once, not twice
        except CodecError as error:
            batch.findings.append(Finding(error.code, batch.pos, batch.payload_pos, batch.payload_size,
                                          "records", f"{batch.codec} data", error.detail))
            batch.records = batch.records if batch.records is not None else []
            return
        batch.decompressed_size = len(payload)
    if decode:
        batch.findings += decode_batch_records(batch, payload, batch.payload_pos, batch.payload_pos,
                                               batch.payload_size)
