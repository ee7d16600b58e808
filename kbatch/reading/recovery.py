"""Telling log entries from other bytes: resync after damage, and the true end of a lying entry.

After bytes that are no entry, the reader goes on at the next position where
an entry whose CRC verifies begins (:meth:`Recovery.resync`).  A length field
is covered by no CRC, so an entry whose CRC fails at its declared end may be
intact with only its length lying: :meth:`Recovery.recover_length` tries the
ends where another entry plausibly starts, and the end of the input, and
hands back the entry if its CRC verifies at one of them (``bad-length``,
which is what repair-length builds on).

What an entry is comes from :mod:`kbatch.format.framing` (:func:`~kbatch.format.framing.framed`, the
CRC per magic).  Looking for one among other bytes adds one condition of its own, on top:
:func:`resync_candidate`.
"""

from __future__ import annotations

import functools
import re
import struct
from typing import Callable

from kbatch.format.checksums import SpanCrc
from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS, LENGTH_FIELD, framed, size_bounds
from kbatch.reading.model import Batch
from kbatch.format.structs import (
    BATCH_HEADER,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_ENTRY_PREFIX,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MESSAGE_V0_HEADER,
    MIN_ENTRY_SIZE,
    SIZE_OFFSET,
)
from kbatch.reading.window import CHUNK, EntryCut, Window

_INT32 = struct.Struct(">i")

_LEADING_ZEROS = re.compile(b"\x00*")
# The CRC functions of the magics an entry found among other bytes may have (framing's choice).
_CRC_FUNCTIONS = tuple({CHECKSUMS[magic].function: None for magic in MIN_ENTRY_SIZE})
_SPAN_CRCS = {function: SpanCrc(function) for function in _CRC_FUNCTIONS}


def resync_candidate(pos: int, offset: int, magic: int, size: int, max_size: int, input_size: int) -> bool:
    """Might an entry start at ``pos`` (its offset field ``offset``), found among bytes that are none?

    The one frame rule (:func:`kbatch.format.framing.framed`), and one condition on top: the offset field
    is not negative.  A broker assigns offsets counting up from the log's start offset, which is never
    below 0 (LogValidator.validateMessagesAndAssignOffsets takes the offsetCounter from the log end offset;
    UnifiedLog.truncateTo refuses "a negative offset"), so an entry it wrote never holds one: bytes that
    do are no entry, whatever their CRC says.  The reader walking entries one after another does not ask
    this (the offset is no frame field: Kafka's FileLogInputStream reads it without a check); only a
    search for where entries begin does.
    """
    return offset >= 0 and framed(pos, magic, size, max_size, input_size)


@functools.lru_cache(maxsize=None)
def _candidate_pattern(magic: int, size_top: int) -> re.Pattern:
    """Where an entry of ``magic`` may start: found as its magic byte at position 16, behind which lie an
    offset that is not negative (first byte < 0x80) and a size not all zero whose first byte is at most
    ``size_top`` (so that it fits in the input).  A match starts at the magic byte."""
    return re.compile(b"(?s)" + re.escape(bytes([magic]))
                      + b"(?<=[\\x00-\\x7f].{7}(?!\\x00\\x00\\x00\\x00)[\\x00-" + b"\\x%02x" % min(size_top, 0x7F)
                      + b"].{8})")

# Zero runs at least this long are passed over whole by the candidate search (shorter ones cost it less than
# finding them).
_LONG_ZERO_RUN = re.compile(b"\x00{64,}")


def _outside_zero_runs(buf, start: int, stop: int):
    """The stretches of ``[start, stop)`` (where magic bytes are looked for) in which an entry may have its
    magic byte, as far as long zero runs of ``buf`` tell: an entry whose size field lies in zeros has size
    0, which no magic allows, so no magic byte lies from 8 bytes into a run to 4 bytes past its end.  In a
    zero hole every byte looks like magic 0; the search passes over such a hole instead of trying each."""
    for run in _LONG_ZERO_RUN.finditer(buf, max(0, start - MAGIC_OFFSET), stop):
        # The size field [p + 8, p + 12) of an entry at p (its magic byte at p + 16) lies in the run for the
        # magic bytes from first to last.
        first = run.start() - SIZE_OFFSET + MAGIC_OFFSET
        last = run.end() - (SIZE_OFFSET + 4) + MAGIC_OFFSET
        if first > start:
            yield start, min(first, stop)
        start = max(start, last + 1)
        if start >= stop:
            return
    if start < stop:
        yield start, stop


# The most candidate ends tried for one entry's true length.
MAX_LENGTH_CANDIDATES = 256


class Recovery:
    """Where entries begin, and where a damaged one truly ends, in the bytes of a :class:`Window`.

    ``decode_entry(pos, end, magic)`` decodes the bytes ``[pos, end)`` as one
    entry (the reader's own decoder), to prove a length with.
    """

    def __init__(self, window: Window, max_entry_size: int, decode_entry: Callable[[int, int, int], Batch]):
        self.window = window
        self.max_entry_size = max_entry_size
        self.decode_entry = decode_entry

    @property
    def size(self) -> int:
        return self.window.size   # (less than at the start once the file was cut while it is read)

    # -- where entries begin ---------------------------------------------------

    def plausible_entry_at(self, pos: int, zeros_too: bool = True) -> bool:
        """Does an entry (or, with ``zeros_too``, a zero run) plausibly start at ``pos``?  Header checks only."""
        buf, i, available = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        if available < HEADER_SIZE_UP_TO_MAGIC:
            return False
        if not any(buf[i:i + HEADER_SIZE_UP_TO_MAGIC]):
            return zeros_too
        offset, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
        # No maximum here: a size field that fits the input marks where bytes may stop being the entry
        # before (recover_length's candidate ends); verified_entry_at asks the reader's maximum.
        return resync_candidate(pos, offset, buf[i + MAGIC_OFFSET], size, self.size, self.size)

    def verified_entry_at(self, pos: int) -> bool:
        """Does an entry whose CRC verifies start at ``pos``?"""
        if not self.plausible_entry_at(pos, zeros_too=False):
            return False
        buf, i, _ = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        offset, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
        checksum = CHECKSUMS[buf[i + MAGIC_OFFSET]]
        if not resync_candidate(pos, offset, buf[i + MAGIC_OFFSET], size, self.max_entry_size, self.size):
            return False
        stored = checksum.stored(buf, i)
        return self._crc(checksum.function, pos + checksum.start, pos + LOG_OVERHEAD + size) == stored

    def _crc(self, function, start: int, end: int, crc: int = 0) -> int:
        """``function``'s CRC of the bytes ``[start, end)`` carried on from ``crc``, read a chunk at a time: a
        size field that claims a gigabyte costs a chunk of memory, not a gigabyte."""
        if end - start <= CHUNK:
            buf, i, available = self.window.view(start, end - start)
            return function(buf[i:i + available], crc)
        for _, piece in self.window.pieces(start, end):
            crc = function(piece, crc)
        return crc

    def resync(self, start: int) -> int | None:
        """The next position at or after ``start`` where an entry with a valid CRC begins.

        Candidates are found in bulk (:meth:`plausible_starts`) and tried in
        order; their CRCs come from one running pass over the bytes
        (:class:`_PrefixCrcs`), however many megabytes each candidate claims.
        """
        prefixes = _PrefixCrcs(self.window, start)
        for candidate in self.plausible_starts(start, self.size, self.max_entry_size):
            buf, i, _ = self.window.view(candidate, HEADER_SIZE_UP_TO_MAGIC + 4)
            checksum = CHECKSUMS[buf[i + MAGIC_OFFSET]]
            (size,) = _INT32.unpack_from(buf, i + SIZE_OFFSET)
            stored = checksum.stored(buf, i)
            covered_from, covered_to = candidate + checksum.start, candidate + LOG_OVERHEAD + size
            if prefixes.span(checksum.function, covered_from, covered_to) == stored:
                return candidate
        return None

    def plausible_starts(self, start: int, stop: int, max_size: int):
        """Positions in ``[start, stop)``, in order, where an entry plausibly starts (:meth:`plausible_entry_at`,
        and a size of at most ``max_size``).

        The bytes are searched by the regex engine for the magic byte, a literal it finds fast, with the
        offset and size fields checked behind it; Python sees only the few positions that pass.
        """
        largest = min(max_size, self.size - start - LOG_OVERHEAD)
        if largest < min(size_bounds(magic, max_size)[0] for magic in MIN_ENTRY_SIZE):
            return
        patterns = [_candidate_pattern(magic, largest >> 24) for magic in MIN_ENTRY_SIZE]
        chunk_pos = start
        while chunk_pos < stop:
            chunk_stop = min(chunk_pos + CHUNK, stop)
            buf, i, available = self.window.view(chunk_pos, chunk_stop - chunk_pos + HEADER_SIZE_UP_TO_MAGIC)
            if available < HEADER_SIZE_UP_TO_MAGIC:
                return
            found = []
            for searched_from, searched_to in _outside_zero_runs(buf, i + MAGIC_OFFSET, i + available):
                for pattern in patterns:
                    for match in pattern.finditer(buf, searched_from, searched_to):
                        index = match.start() - MAGIC_OFFSET
                        candidate = chunk_pos + index - i
                        if candidate < chunk_pos or candidate >= chunk_stop:
                            continue
                        offset, size = LOG_ENTRY_PREFIX.unpack_from(buf, index)
                        if resync_candidate(candidate, offset, buf[index + MAGIC_OFFSET], size, max_size,
                                            self.size):
                            found.append(candidate)
            yield from sorted(found)
            chunk_pos = chunk_stop

    def zero_run_end(self, pos: int) -> int:
        """Where the run of zero bytes starting at ``pos`` ends."""
        while pos < self.size:
            buf, i, available = self.window.view(pos, CHUNK)
            if not available:
                break   # the file ended early (cut while it is read): the window's size says where
            leading = _LEADING_ZEROS.match(buf, i, i + available)
            assert leading is not None   # \x00* matches the empty string too
            zeros = leading.end() - i
            if zeros < available:
                return pos + zeros
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
        least, most = size_bounds(magic, self.max_entry_size)
        first_end = pos + LOG_OVERHEAD + least
        limit = min(limit, pos + LOG_OVERHEAD + most)
        running, covered_to = 0, covered_from
        for end in self._candidate_ends(first_end, limit):
            running = self._crc(checksum.function, covered_to, end, running)
            covered_to = end
            if running == stored:
                return self._entry_with_true_length(pos, end)
        return None

    def _candidate_ends(self, first: int, limit: int):
        """Positions in [first, limit) where an entry plausibly starts, then ``limit``."""
        found = 0
        for candidate in self.plausible_starts(first, limit, self.size):
            yield candidate
            found += 1
            if found >= MAX_LENGTH_CANDIDATES:
                break
        if first <= limit:
            yield limit

    def _entry_with_true_length(self, pos: int, end: int) -> Batch | None:
        """The entry at ``pos`` if it verifies when it ends at ``end`` (its length field lying)."""
        buf, i, available = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        if available < HEADER_SIZE_UP_TO_MAGIC:
            return None
        magic = buf[i + MAGIC_OFFSET]
        true_size = end - pos - LOG_OVERHEAD
        if not framed(pos, magic, true_size, self.max_entry_size, self.size):
            return None
        (stored_size,) = _INT32.unpack_from(buf, i + SIZE_OFFSET)
        if stored_size == true_size:
            return None
        try:
            batch = self.decode_entry(pos, end, magic)
        except EntryCut:   # the file was cut while it was read: no end there to prove
            return None
        if not batch.crc_valid:
            return None
        batch.findings.insert(0, Finding("bad-length", pos, pos + SIZE_OFFSET, 4, LENGTH_FIELD[magic],
                                         f"{true_size} (the CRC verifies with it)", str(stored_size)))
        return batch


class _PrefixCrcs:
    """The CRC (both kinds) of the bytes from ``base`` to any later position, from one pass that runs ahead
    only as far as it is asked.

    The pass keeps the CRCs at every ``STEP`` bytes; the CRC to a position between two of them is the one
    at the step before it, carried over the few bytes after (:meth:`SpanCrc.span` in reverse).  The CRC
    of a span then costs two of those and a few table look-ups, not a pass over the span.
    """

    STEP = 64 * 1024

    def __init__(self, window: Window, base: int):
        self.window = window
        self.base = base
        self.passed = base                     # the pass has covered [base, passed)
        self.running = {function: 0 for function in _CRC_FUNCTIONS}
        self.steps = {function: [0] for function in _CRC_FUNCTIONS}   # the CRC to base + n * STEP

    def span(self, function, start: int, end: int) -> int:
        """The CRC of the bytes ``[start, end)`` (``start`` >= base)."""
        span_crc = _SPAN_CRCS[function]
        return span_crc.span(self._to(function, start), self._to(function, end), end - start)

    def _to(self, function, position: int) -> int:
        self._advance(position)
        step = (position - self.base) // self.STEP
        step_pos = self.base + step * self.STEP
        crc = self.steps[function][step]
        if position > step_pos:
            for _, piece in self.window.pieces(step_pos, position):
                crc = function(piece, crc)
        return crc

    def _advance(self, position: int) -> None:
        """Run the pass up to the step at or before ``position``."""
        target = self.base + (position - self.base) // self.STEP * self.STEP
        if target <= self.passed:
            return
        for _piece_pos, piece in self.window.pieces(self.passed, target):
            view = memoryview(piece)
            for offset in range(0, len(piece), self.STEP):   # pieces start on a step: the pass stays aligned
                part = view[offset:offset + self.STEP]
                for function in _CRC_FUNCTIONS:
                    self.running[function] = function(part, self.running[function])
                    if len(part) == self.STEP:
                        self.steps[function].append(self.running[function])
        self.passed = target
