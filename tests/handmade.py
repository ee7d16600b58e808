"""v2 record batches worked by hand from DefaultRecordBatch/DefaultRecord, for tests that patch single fields.

Independent of kbatch's encoder: only struct, zig-zag varints and crc32c.
"""

from __future__ import annotations

import struct

import crc32c


def varint(value: int) -> bytes:
    """ByteUtils.writeVarint/writeVarlong: zig-zag, 7 bits a byte, low bits first."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = raw & 0x7F
        raw >>= 7
        if raw:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _sized(data: bytes | None) -> bytes:
    return varint(-1) if data is None else varint(len(data)) + data


def record(offset_delta: int, key: bytes | None, value: bytes | None, timestamp_delta: int = 0) -> bytes:
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta) + _sized(key) + _sized(value) + varint(0)
    return varint(len(body)) + body


def batch(base_offset: int, records: list[tuple[bytes | None, bytes | None]], *, control: bool = False,
          transactional: bool = False, producer_id: int = -1, producer_epoch: int = -1,
          base_sequence: int = -1, timestamp: int = 1_700_000_000_000, leader_epoch: int = 0) -> bytes:
    """One uncompressed magic-2 batch holding ``records`` (key, value) at consecutive offsets."""
    payload = b"".join(record(index, key, value) for index, (key, value) in enumerate(records))
    attributes = (0x20 if control else 0) | (0x10 if transactional else 0)
    after_crc = struct.pack(">hiqqqhii", attributes, len(records) - 1, timestamp, timestamp, producer_id,
                            producer_epoch, base_sequence, len(records)) + payload
    head = struct.pack(">qiib", base_offset, 4 + 1 + 4 + len(after_crc), leader_epoch, 2)
    return head + struct.pack(">I", crc32c.crc32c(after_crc)) + after_crc


def compacted(base_offset: int, last_offset: int, kept: list[tuple[int, bytes | None, bytes | None]], *,
              delete_horizon: int | None = None, timestamp: int = 1_700_000_000_000, leader_epoch: int = 0,
              control: bool = False, transactional: bool = False, producer_id: int = -1, producer_epoch: int = -1,
              base_sequence: int = -1) -> bytes:
    """What the log cleaner writes of a batch whose records ``kept`` (offset, key, value) it retains
    (MemoryRecords.buildRetainedRecordsInto): the base offset and, by overrideLastOffset, the last offset of the
    original, each record's offset delta and timestamp kept.  ``delete_horizon``: the batch marked with one
    (attributes bit 6, the horizon as baseTimestamp, each record's delta taken from it)."""
    base_timestamp = timestamp if delete_horizon is None else delete_horizon
    payload = b"".join(record(offset - base_offset, key, value, timestamp - base_timestamp)
                       for offset, key, value in kept)
    attributes = (0x20 if control else 0) | (0x10 if transactional else 0) | (0x40 if delete_horizon is not None else 0)
    after_crc = struct.pack(">hiqqqhii", attributes, last_offset - base_offset, base_timestamp, timestamp, producer_id,
                            producer_epoch, base_sequence, len(kept)) + payload
    head = struct.pack(">qiib", base_offset, 4 + 1 + 4 + len(after_crc), leader_epoch, 2)
    return head + struct.pack(">I", crc32c.crc32c(after_crc)) + after_crc


def end_marker(kind: str, coordinator_epoch: int, *, key_version: int = 0, value_version: int = 0):
    """ControlRecordType key + EndTransactionMarker value for ABORT (0) or COMMIT (1)."""
    return (struct.pack(">hh", key_version, {"ABORT": 0, "COMMIT": 1}[kind]),
            struct.pack(">hi", value_version, coordinator_epoch))


def empty_header(base_offset: int, last_offset: int, *, transactional: bool = False, producer_id: int = -1,
                 producer_epoch: int = -1, base_sequence: int = -1, timestamp: int = 1_700_000_000_000,
                 leader_epoch: int = 0) -> bytes:
    """DefaultRecordBatch.writeEmptyHeader: what the log cleaner keeps of a batch whose records it removed when
    the batch must stay (a producer's last, Cleaner.cleanInto's RETAIN_EMPTY): no records, the offsets kept,
    baseTimestamp NO_TIMESTAMP and maxTimestamp the batch's."""
    after_crc = struct.pack(">hiqqqhii", 0x10 if transactional else 0, last_offset - base_offset, -1, timestamp,
                            producer_id, producer_epoch, base_sequence, 0)
    head = struct.pack(">qiib", base_offset, 4 + 1 + 4 + len(after_crc), leader_epoch, 2)
    return head + struct.pack(">I", crc32c.crc32c(after_crc)) + after_crc


def aborted_txn(producer_id: int, first_offset: int, last_offset: int, last_stable_offset: int) -> bytes:
    """TransactionIndex / AbortedTxn: version 0, producerId, firstOffset, lastOffset, lastStableOffset."""
    return struct.pack(">hqqqq", 0, producer_id, first_offset, last_offset, last_stable_offset)
