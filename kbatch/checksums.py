"""The two checksums of Kafka's log formats.

* v0/v1 messages: CRC-32 (IEEE 802.3, zlib's) over magic..end of the message
  (LegacyRecord.computeChecksum).
* v2 batches: CRC-32C (Castagnoli) over attributes..end of the batch
  (DefaultRecordBatch.computeChecksum, Crc32C).

Both take any buffer (bytes, memoryview) without copying it.
"""

from __future__ import annotations

import zlib

from crc32c import crc32c as _crc32c


def crc32(data, value: int = 0) -> int:
    """CRC-32 of ``data``; pass the CRC of the bytes before it as ``value`` to continue one."""
    return zlib.crc32(data, value) & 0xFFFFFFFF


def crc32c(data, value: int = 0) -> int:
    """CRC-32C of ``data``; pass the CRC of the bytes before it as ``value`` to continue one."""
    return _crc32c(data, value)
