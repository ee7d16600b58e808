"""What makes bytes a log entry: the acceptance rules the reader and the fast runs share.

Kafka frames a log the same way for every magic (FileLogInputStream,
ByteBufferLogInputStream): an int64 offset, an int32 size, and the magic byte
at position 16.  The rules below decide whether the bytes at a position are an
entry Kafka would read, and say what is wrong when they are not.  Each is
written here once and answers with the :class:`~kbatch.format.findings.Finding`
the full reader reports:

* the bounds of an entry (a magic Kafka reads, :func:`size_bounds`, :func:`fits`):
  :func:`framed` and :func:`frame_problem`;
* which CRC an entry of each magic carries, over which bytes: :data:`CHECKSUMS`.

Every fast run (:mod:`kbatch.walk`: the CRC run, ``--deep``'s, the listing's,
the compiled loop through the bounds they hand it) and the reader's recovery
(:mod:`kbatch.reading.recovery`) ask these; none writes a bound or picks a
CRC of its own.  A fast run stops at an entry it does not take and the full
reader reports on it, so they cannot disagree about what a clean entry is.

This module imports only the layouts, the checksums and the findings.
"""

from __future__ import annotations

import struct
from typing import Callable, NamedTuple

from kbatch.format.checksums import CRC32C, crc32
from kbatch.format.findings import Finding
from kbatch.format.structs import (
    BATCH_CRC_START,
    BATCH_HEADER,
    ENTRY_HEADERS,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_LENGTH_FORMAT,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MESSAGE_CRC_START,
    MESSAGE_V0_HEADER,
    MIN_ENTRY_SIZE,
    PROPOSED_V3_MAGIC,
    SIZE_OFFSET,
    V3_MIN_ENTRY_SIZE,
)

# The largest size field taken as real (ReadOptions.max_entry_size): a larger one is damage, not a
# reason to read a gigabyte.
DEFAULT_MAX_ENTRY_SIZE = 1 << 30

# Each magic's own name for its size field: the layouts' (message_size, batch_length), so every finding
# about it names the same field and hexdump-annotate can mark it.
LENGTH_FIELD = {magic: layout.names[1] for magic, layout in ENTRY_HEADERS.items()}


# ---------------------------------------------------------------------------
# The checksum of each magic
# ---------------------------------------------------------------------------


class Checksum(NamedTuple):
    """Which CRC an entry of one magic carries, over which bytes, and where it is stored."""

    name: str
    function: Callable          # (data, running value) -> CRC, over any buffer without copying
    start: int                  # the first covered byte, counted from the entry's first byte
    stored_at: int              # where the stored CRC lies, counted likewise

    def compute(self, entry) -> int:
        """The CRC of a whole entry's bytes (``entry`` starts at its offset field)."""
        return self.function(entry[self.start:])

    def stored(self, buffer, index: int = 0) -> int:
        """The CRC stored in the entry that starts at ``buffer[index]``."""
        return _CRC.unpack_from(buffer, index + self.stored_at)[0]


_CRC = MESSAGE_V0_HEADER.field("crc")
assert _CRC.format == BATCH_HEADER.field("crc").format

# DefaultRecordBatch.computeChecksum: CRC-32C over attributes..end (the C function itself: the fast runs
# call it once a batch).  LegacyRecord.computeChecksum: CRC-32 (IEEE) over magic..end.  The v3 proposal
# keeps v2's CRC where v2 has it (kbatch.format.layouts.RecordBatchV3Header).
_LEGACY_CRC = Checksum("CRC-32", crc32, MESSAGE_CRC_START, MESSAGE_V0_HEADER.offsets["crc"])
_BATCH_CRC = Checksum("CRC-32C", CRC32C, BATCH_CRC_START, BATCH_HEADER.offsets["crc"])
CHECKSUMS = {0: _LEGACY_CRC, 1: _LEGACY_CRC, 2: _BATCH_CRC, PROPOSED_V3_MAGIC: _BATCH_CRC}


def crc_mismatch(pos: int, end: int, magic: int, computed: int, stored: int) -> Finding:
    """The entry at ``pos`` (ending at ``end``) whose stored CRC is not the one its bytes give."""
    start = pos + CHECKSUMS[magic].start
    return Finding("crc-mismatch", pos, start, end - start, "crc", f"{computed} (computed)", f"{stored} (stored)")


# ---------------------------------------------------------------------------
# Framing: zero tail, header, magic, size
# ---------------------------------------------------------------------------


def starts_zero_run(header) -> bool:
    """Do the bytes where an entry header should be (up to the magic byte) hold only zeros?

    A broker preallocates segments (log.preallocate) and a crash can leave zeros
    after the last entry; if they run to the end they are a zero tail, not damage.
    """
    return not any(header[:HEADER_SIZE_UP_TO_MAGIC])


def zero_tail(pos: int, input_size: int) -> Finding:
    return Finding("zero-tail", pos, pos, input_size - pos, "tail", "a log entry or the end of the file",
                   f"{input_size - pos} zero bytes")


def truncated_while_reading(opened_size: int, size: int) -> Finding:
    """The file ended at ``size`` while it was read, though it held ``opened_size`` bytes when opened."""
    return Finding("truncated-while-reading", size, size, 0, "file", f"{opened_size} bytes (its size when opened)",
                   f"{size} bytes: the file was cut while it was read (a read at byte {size} found its end)")


def short_header(pos: int, available: int) -> Finding:
    """Fewer bytes than an entry header up to its magic byte, then the end of the input."""
    return Finding("truncated", pos, pos, available, "entry",
                   f"a log entry header of at least {HEADER_SIZE_UP_TO_MAGIC} bytes",
                   f"{available} bytes, then the end of the input")


def size_bounds(magic: int, max_entry_size: int) -> tuple[int, int]:
    """The size fields an entry of ``magic`` (0, 1, 2, or the proposed 3) may have: (least, most).

    Kafka reads magic 0, 1 and 2 (RecordBatch.CURRENT_MAGIC_VALUE = 2); an entry
    is at least its fixed header and two null key/value lengths for v0/v1
    (LegacyRecord.RECORD_OVERHEAD_V0/V1), or a batch with no records for v2
    (DefaultRecordBatch.RECORD_BATCH_OVERHEAD).  The most is the reader's
    ``max_entry_size``: a larger size field is damage, not a reason to read a
    gigabyte.  A run that checks entries in a loop takes these bounds once and
    compares each size field with them.
    """
    least = V3_MIN_ENTRY_SIZE if magic == PROPOSED_V3_MAGIC else MIN_ENTRY_SIZE[magic]
    return least, max_entry_size


def fits(pos: int, size: int, input_size: int) -> bool:
    """Does the entry at ``pos`` whose size field says ``size`` end inside the input?"""
    return pos + LOG_OVERHEAD + size <= input_size


def framed(pos: int, magic: int, size: int, max_entry_size: int, input_size: int) -> bool:
    """Is the entry at ``pos`` one Kafka frames: a magic it reads, a size inside :func:`size_bounds`, and
    all of it in the input?  (:func:`frame_problem` says what is wrong when not.)"""
    if magic not in MIN_ENTRY_SIZE:
        return False
    least, most = size_bounds(magic, max_entry_size)
    return least <= size <= most and fits(pos, size, input_size)


def framed_proposed_v3(pos: int, size: int, max_entry_size: int, input_size: int) -> bool:
    """Is the entry at ``pos`` (magic 3) framed as the v3 proposal's?  The bounds of :func:`size_bounds`."""
    least, most = size_bounds(PROPOSED_V3_MAGIC, max_entry_size)
    return least <= size <= most and fits(pos, size, input_size)


def frame_problem(pos: int, magic: int, size: int, max_entry_size: int, input_size: int) -> Finding | None:
    """What is wrong with an entry's magic byte and size field, or None: :func:`framed` holds."""
    if magic not in MIN_ENTRY_SIZE:
        return Finding("unknown-magic", pos, pos + MAGIC_OFFSET, 1, "magic", "0, 1 or 2", str(magic))
    least, most = size_bounds(magic, max_entry_size)
    if not least <= size <= most:
        return Finding("bad-length", pos, pos + SIZE_OFFSET, 4, LENGTH_FIELD[magic],
                       f"{least}..{most} for magic {magic}", str(size))
    if not fits(pos, size, input_size):
        return Finding("truncated", pos, pos, input_size - pos, "entry",
                       f"{LOG_OVERHEAD + size} bytes (size field {size})",
                       f"{input_size - pos} bytes, then the end of the input")
    return None


# ---------------------------------------------------------------------------
# v0/v1: the key and the value fill the message
# ---------------------------------------------------------------------------

_LENGTH = struct.Struct(LEGACY_LENGTH_FORMAT)
LENGTH_SIZE = _LENGTH.size
KEY_LENGTH_POS = {0: ENTRY_HEADERS[0].size, 1: ENTRY_HEADERS[1].size}


def read_length(buffer, index: int) -> int:
    """A v0/v1 key or value length (int32) at ``buffer[index]``."""
    return _LENGTH.unpack_from(buffer, index)[0]


def legacy_key_value(entry_pos: int, size: int, magic: int, length_at: Callable[[int], int]):
    """Where a v0/v1 message's key and value lie, and what is wrong with them.

    ``size`` is the whole entry's size (offset field included) and
    ``length_at(at)`` reads the int32 length ``at`` bytes into the entry.
    Returns ``(parts, findings)``: parts are ``(data_at, length)`` for the key
    and the value (length -1 or below: null), or None when they do not fit.
    LegacyRecord reads any negative length as null (Utils.sizeDelimited), so a
    length below -1 is a warning, not damage.
    """
    findings: list[Finding] = []
    parts = []
    at = KEY_LENGTH_POS[magic]
    for name in ("key", "value"):
        if at + _LENGTH.size > size:
            findings.append(Finding("record-overrun", entry_pos, entry_pos + at, size - at, f"{name}_length",
                                    "4 bytes", f"{size - at} bytes left"))
            return None, findings
        length = length_at(at)
        if at + _LENGTH.size + max(length, 0) > size:
            findings.append(Finding("bad-length", entry_pos, entry_pos + at, _LENGTH.size, f"{name}_length",
                                    f"-1..{size - at - _LENGTH.size}", str(length)))
            return None, findings
        if length < -1:
            findings.append(Finding("negative-length", entry_pos, entry_pos + at, _LENGTH.size, f"{name}_length",
                                    "-1 (null) or a length >= 0", f"{length} (Kafka reads it as null)"))
        at += _LENGTH.size
        parts.append((at, length))
        at += max(length, 0)
    if at != size:
        # LegacyRecord.isValid checks only the size (>= RECORD_OVERHEAD_V0) and the CRC, and value()
        # reads valueSize bytes (Utils.sizeDelimited): Kafka reads the message and ignores the rest.
        findings.append(Finding("message-trailing-bytes", entry_pos, entry_pos + at, size - at, "value",
                                "the message to end after its value", f"{size - at} more bytes (Kafka ignores them)"))
    return parts, findings


# ---------------------------------------------------------------------------
# v2: the record count
# ---------------------------------------------------------------------------

_RECORDS_COUNT_AT = BATCH_HEADER.offsets["records_count"]


def records_count_problem(pos: int, count: int) -> Finding | None:
    """A negative recordsCount: Kafka's record iterator refuses the batch
    (DefaultRecordBatch.RecordIterator: "Found invalid record count")."""
    if count >= 0:
        return None
    return Finding("records-count-mismatch", pos, pos + _RECORDS_COUNT_AT, BATCH_HEADER.sizes["records_count"],
                   "records_count", "a count >= 0", str(count))
