"""Telling log entries from other bytes: resync after damage, and the true end of a lying entry.

After bytes that are no entry, the reader goes on at the next position where
an entry whose CRC verifies begins (:meth:`Recovery.resync`).  A length field
is covered by no CRC, so an entry whose CRC fails at its declared end may be
intact with only its length lying: :meth:`Recovery.recover_length` tries the
ends where another entry plausibly starts, and the end of the input, and
hands back the entry if its CRC verifies at one of them (``bad-length``,
which is what repair-length builds on).
"""

from __future__ import annotations

import re
import struct
from typing import Callable

from ..findings import Finding
from ..framing import CHECKSUMS, LENGTH_FIELD
from ..layouts import (
    BATCH_HEADER,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_ENTRY_PREFIX,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MESSAGE_V0_HEADER,
    MIN_ENTRY_SIZE,
    SIZE_OFFSET,
)
from ..model import Batch
from .window import CHUNK, Window

_INT32 = struct.Struct(">i")

# Where an entry may start: a size field that is positive and not absurdly
# large (first byte < 0x80, not all four bytes zero) and a magic byte of 0, 1
# or 2 at position 16.  Scanned by the regex engine, checked in Python.
_ENTRY_CANDIDATE = re.compile(rb"(?s)(?=.{8}(?!\x00\x00\x00\x00)[\x00-\x7f].{7}[\x00-\x02])")

# The most candidate ends tried for one entry's true length.
MAX_LENGTH_CANDIDATES = 256


class Recovery:
    """Where entries begin, and where a damaged one truly ends, in the bytes of a :class:`Window`.

    ``decode_entry(pos, end, magic)`` decodes the bytes ``[pos, end)`` as one
    entry (the reader's own decoder), to prove a length with.
    """

    def __init__(self, window: Window, max_entry_size: int, decode_entry: Callable[[int, int, int], Batch]):
        self.window = window
        self.size = window.size
        self.max_entry_size = max_entry_size
        self.decode_entry = decode_entry

    # -- where entries begin ---------------------------------------------------

    def plausible_entry_at(self, pos: int, zeros_too: bool = True) -> bool:
        """Does an entry (or, with ``zeros_too``, a zero run) plausibly start at ``pos``?  Header checks only."""
        buf, i, available = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        if available < HEADER_SIZE_UP_TO_MAGIC:
            return False
        if not any(buf[i:i + HEADER_SIZE_UP_TO_MAGIC]):
            return zeros_too
        offset, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
        magic = buf[i + MAGIC_OFFSET]
        return (magic in MIN_ENTRY_SIZE and offset >= 0
                and MIN_ENTRY_SIZE[magic] <= size and pos + LOG_OVERHEAD + size <= self.size)

    def verified_entry_at(self, pos: int) -> bool:
        """Does an entry whose CRC verifies start at ``pos``?"""
        if not self.plausible_entry_at(pos, zeros_too=False):
            return False
        buf, i, _ = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        _, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
        checksum = CHECKSUMS[buf[i + MAGIC_OFFSET]]
        if size > self.max_entry_size:
            return False
        end = pos + LOG_OVERHEAD + size
        buf, i, _ = self.window.view(pos, end - pos)
        return checksum.function(memoryview(buf)[i + checksum.start:i + end - pos]) == checksum.stored(buf, i)

    def resync(self, start: int) -> int | None:
        """The next position at or after ``start`` where an entry with a valid CRC begins."""
        chunk_pos = start
        while chunk_pos + HEADER_SIZE_UP_TO_MAGIC <= self.size:
            buf, i, available = self.window.view(chunk_pos, CHUNK + HEADER_SIZE_UP_TO_MAGIC)
            for match in _ENTRY_CANDIDATE.finditer(buf, i, i + available):
                candidate = chunk_pos + match.start() - i
                if self.verified_entry_at(candidate):
                    return candidate
            chunk_pos += max(available - HEADER_SIZE_UP_TO_MAGIC + 1, 1)
        return None

    def zero_run_end(self, pos: int) -> int:
        """Where the run of zero bytes starting at ``pos`` ends."""
        while pos < self.size:
            buf, i, available = self.window.view(pos, CHUNK)
            chunk = buf[i:i + available]
            nonzero = len(chunk) - len(chunk.lstrip(b"\x00"))
            if nonzero < len(chunk):
                return pos + nonzero
            pos += available
        return self.size

    # -- where a damaged entry truly ends ------------------------------------------

    def recover_length(self, pos: int, limit: int) -> Batch | None:
        """The entry at ``pos``, if its CRC verifies at some end up to ``limit`` other than its length's.

        The candidate ends are where another entry plausibly starts, and
        ``limit`` itself (the next entry whose CRC verifies, or the end of the
        input).  One running CRC is carried from candidate to candidate, so
        trying them all costs one pass over the bytes.
        """
        buf, i, available = self.window.view(pos, BATCH_HEADER.size)
        if available < HEADER_SIZE_UP_TO_MAGIC or buf[i + MAGIC_OFFSET] not in MIN_ENTRY_SIZE:
            return None
        magic = buf[i + MAGIC_OFFSET]
        if available < (BATCH_HEADER.size if magic == 2 else MESSAGE_V0_HEADER.size):
            return None   # not even a whole header: nothing to prove a length with
        checksum = CHECKSUMS[magic]
        stored, covered_from = checksum.stored(buf, i), pos + checksum.start
        first_end = pos + LOG_OVERHEAD + MIN_ENTRY_SIZE[magic]
        limit = min(limit, pos + LOG_OVERHEAD + self.max_entry_size)
        running, covered_to = 0, covered_from
        for end in self._candidate_ends(first_end, limit):
            running = checksum.function(self.window.read_bytes(covered_to, end - covered_to), running)
            covered_to = end
            if running == stored:
                return self._entry_with_true_length(pos, end)
        return None

    def _candidate_ends(self, first: int, limit: int):
        """Positions in [first, limit) where an entry plausibly starts, then ``limit``."""
        found = 0
        chunk_pos = first
        while chunk_pos < limit and found < MAX_LENGTH_CANDIDATES:
            buf, i, available = self.window.view(chunk_pos, min(CHUNK, limit - chunk_pos) + HEADER_SIZE_UP_TO_MAGIC)
            stop = i + min(available, limit - chunk_pos)
            for match in _ENTRY_CANDIDATE.finditer(buf, i, stop):
                candidate = chunk_pos + match.start() - i
                if self.plausible_entry_at(candidate, zeros_too=False):
                    yield candidate
                    found += 1
                    if found >= MAX_LENGTH_CANDIDATES:
                        break
            chunk_pos += max(stop - i, 1)
        if first <= limit:
            yield limit

    def _entry_with_true_length(self, pos: int, end: int) -> Batch | None:
        """The entry at ``pos`` if it verifies when it ends at ``end`` (its length field lying)."""
        buf, i, available = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        if available < HEADER_SIZE_UP_TO_MAGIC:
            return None
        magic = buf[i + MAGIC_OFFSET]
        true_size = end - pos - LOG_OVERHEAD
        if magic not in MIN_ENTRY_SIZE or not MIN_ENTRY_SIZE[magic] <= true_size <= self.max_entry_size:
            return None
        (stored_size,) = _INT32.unpack_from(buf, i + SIZE_OFFSET)
        if stored_size == true_size:
            return None
        batch = self.decode_entry(pos, end, magic)
        if not batch.crc_valid:
            return None
        batch.findings.insert(0, Finding("bad-length", pos, pos + SIZE_OFFSET, 4, LENGTH_FIELD[magic],
                                         f"{true_size} (the CRC verifies with it)", str(stored_size)))
        return batch
