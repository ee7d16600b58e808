"""Walking a segment: every log entry in file order, and every damaged range.

:class:`SegmentReader` reads a file (or stdin, or pasted hex) front to back in
constant memory and yields, in file order, a :class:`~kbatch.reading.model.Batch` for
each log entry of any magic and a :class:`~kbatch.format.findings.Finding` for each
range of bytes that is no log entry.  It never raises on bad bytes: where an
entry does not check out it reports why, looks for the next entry whose CRC
verifies (resync) and goes on from there.

The framing is Kafka's (FileLogInputStream / ByteBufferLogInputStream): an
int64 offset, an int32 size, and the magic byte at position 16 of every entry.
A length field is not covered by any CRC, so when an entry's CRC fails and its
declared end does not land on another entry, the reader tries the end the
next valid entry suggests: if the CRC verifies there, the entry is intact and
only its length lies (``bad-length``), which is what repair-length builds on.

The walk is here; what an entry is comes from :mod:`kbatch.format.framing` (the rules
the fast runs share), and the parts live in :mod:`kbatch.reading`: v2
batches, v0/v1 messages and wrappers, resync and length recovery.

This module is the library: it imports neither click nor rich.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from typing import TYPE_CHECKING, BinaryIO, Iterator, NamedTuple, cast

from kbatch.format.codecs import DEFAULT_DECOMPRESSED_LIMIT, Decompressor
from kbatch.format.findings import Finding
from kbatch.format.framing import (
    DEFAULT_MAX_ENTRY_SIZE,
    ENTRY_HEADERS,
    LENGTH_FIELD,
    crc_mismatch,
    frame_problem,
    framed_proposed_v3,
    short_header,
    starts_zero_run,
    truncated_while_reading,
    zero_tail,
)
from kbatch.reading.model import Batch
from kbatch.reading.legacy import read_message
from kbatch.reading.lost import entry_lost_offsets, range_lost_offsets, wrapper_not_opened
from kbatch.reading.recovery import Recovery
from kbatch.reading.v2 import load_records, read_batch
from kbatch.reading.window import CHUNK, EntryCut, Stream, Window
from kbatch.format.structs import (
    BATCH_HEADER,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_ENTRY_PREFIX,
    LEGACY_CODEC_MASK,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MESSAGE_V0_HEADER,
    PROPOSED_V3_MAGIC,
    SIZE_OFFSET,
)

if TYPE_CHECKING:   # imported where a file reads ahead
    from kbatch.reading.readahead import ReadAhead

_OFFSETS = BATCH_HEADER.picker("base_offset", "last_offset_delta")
_LEGACY_OFFSET = MESSAGE_V0_HEADER.picker("offset", "attributes")   # where v1 has them too

__all__ = ["DEFAULT_MAX_ENTRY_SIZE", "ReadOptions", "SegmentReader", "load_records", "open_input", "parse_hex"]


class ReadOptions(NamedTuple):
    records: bool = False                    # decode the records of every batch
    record_objects: bool = True              # ... into Batch.records (False: only findings and record_checks)
    decompressed_limit: int = DEFAULT_DECOMPRESSED_LIMIT
    max_entry_size: int = DEFAULT_MAX_ENTRY_SIZE   # a larger size field is taken as damage
    keep_body: bool = False                  # keep each entry's bytes after its fixed header (Batch.body)
    inflate: bool = False                    # decompress v2 records (for Batch.decompressed_size) without decoding
    held_records: int | None = None          # records kept per v0/v1 wrapper (None: findings.MAX_HELD)


class SegmentReader:
    """Yields every log entry (as a Batch) and every damaged range (as a Finding)."""

    def __init__(self, stream: Stream, options: ReadOptions = ReadOptions(), *, size: int | None = None,
                 decompressor: Decompressor | None = None, nested_magic: int | None = None,
                 read_ahead: bool = False):
        if size is None:
            size = stream.seek(0, os.SEEK_END)
        self.options = options
        ahead: BufferStream | ReadAhead | None = (stream if isinstance(stream, BufferStream) and stream.unchanging
                                                  else None)
        if read_ahead:
            from kbatch.reading.readahead import read_ahead_of   # (here: only a whole local file reads ahead)

            ahead = read_ahead_of(stream, size)
        self.window = Window(stream, size, ahead)
        self._told_shrunk = False
        self.decompressor = decompressor or Decompressor(options.decompressed_limit)
        self._nested_magic = nested_magic   # set when walking the inner set of a wrapper message
        self.recovery = Recovery(self.window, options.max_entry_size, self._entry)
        # The intact entry last walked past, for a damaged entry's offsets (kbatch.reading.lost): its last
        # offset, or the position of a v2 batch a run took (kbatch.walk.engine), read only if asked.
        self._before_last: int | None = None
        self._before_pos: int | None = None

    def close(self) -> None:
        """Stop reading ahead, if it does (``read_ahead``); the reader still reads, on the calling thread."""
        self.window.close()

    @property
    def size(self) -> int:
        """The input's size: as opened, or where it ended once a read came up short (cut while read)."""
        return self.window.size

    # -- the walk ------------------------------------------------------------

    def __iter__(self) -> Iterator[Batch | Finding]:
        return self.walk()

    def walk(self, start: int = 0, stop: int | None = None) -> Iterator[Batch | Finding]:
        """Entries starting in [start, stop) (an entry may end past ``stop``); ``self.landed`` is where it ended.

        ``start`` must be where an entry begins (0, or a position :meth:`next_entry_at_or_after` found).
        """
        stop = self.size if stop is None else stop
        pos = start
        while pos < min(stop, self.size):   # (the size shrinks if the file is cut while it is read)
            pos = yield from self._step(pos)
        yield from self.ending()
        self.landed = pos

    def ending(self) -> Iterator[Finding]:
        """The finding that the input was cut while it was read (once), if it was."""
        if self.window.shrunk and not self._told_shrunk:
            self._told_shrunk = True
            yield truncated_while_reading(self.window.opened_size, self.size)

    def next_entry_at_or_after(self, pos: int) -> int | None:
        """The first position at or after ``pos`` where an entry with a valid CRC begins."""
        return pos if self.recovery.verified_entry_at(pos) else self.recovery.resync(pos + 1)

    def verified_entry_within(self, start: int, stop: int, max_size: int, step: int = 64 * 1024) -> int | None:
        """The first position in [start, stop) where an entry of at most ``max_size`` bytes whose CRC verifies
        begins: a bounded look (``step`` bytes searched at a time), where :meth:`next_entry_at_or_after` goes on
        to the end of the input."""
        for piece in range(start, stop, step):
            for candidate in self.recovery.plausible_starts(piece, min(piece + step, stop), max_size):
                if self.recovery.verified_entry_at(candidate):
                    return candidate
        return None

    def passed_batch_at(self, pos: int | None) -> None:
        """A run (kbatch.walk.engine) took the intact v2 batches up to the one at ``pos``."""
        if pos is not None:
            self._before_pos = pos

    def follows(self, last_offset: int | None) -> None:
        """The walk goes on after an intact entry ending at ``last_offset`` that another walk went past (a part
        of the file read by a process of its own): what a damaged range after it lost is told from it."""
        if last_offset is not None:
            self._before_last, self._before_pos = last_offset, None

    def last_intact_offset(self) -> int | None:
        """The last offset of the last intact entry the walk went past (what the next walk :meth:`follows`)."""
        return self._last_offset_before()

    def _last_offset_before(self) -> int | None:
        if self._before_pos is not None:   # a v2 batch's header: baseOffset + lastOffsetDelta
            buf, i, available = self.window.view(self._before_pos, BATCH_HEADER.size)
            if available >= BATCH_HEADER.size:
                base_offset, last_offset_delta = _OFFSETS.unpack_from(buf, i)
                self._before_last = base_offset + last_offset_delta
            self._before_pos = None
        return self._before_last

    def _intact(self, batch: Batch) -> Batch:
        """``batch``, which the walk goes on past: its offsets are the ones the next damaged entry follows,
        and if it is itself damaged, what it held as far as the entry before tells (kbatch.reading.lost)."""
        if not batch.crc_valid or wrapper_not_opened(batch):
            end = batch.pos + batch.size   # (the entry after tells too, where its own CRC vouches for it)
            after = self._first_offset_at(end) if self.recovery.verified_entry_at(end) else None
            batch.lost_offsets = entry_lost_offsets(batch, self._last_offset_before(), after)
        if batch.crc_valid:
            self._before_last, self._before_pos = batch.last_offset, None
        return batch

    def entry_verifies_at(self, pos: int) -> bool:
        return self.recovery.verified_entry_at(pos)

    def read_bytes(self, pos: int, size: int) -> bytes:
        """The input's bytes at ``pos`` (e.g. a damaged range a finding names)."""
        return self.window.read_bytes(pos, size)

    def _step(self, pos: int):
        """Yield what lies at ``pos`` (an entry, or findings); return where the next step starts."""
        buf, i, available = self.window.view(pos, BATCH_HEADER.size)
        whole_header = available >= HEADER_SIZE_UP_TO_MAGIC
        if whole_header:
            _, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
            magic = buf[i + MAGIC_OFFSET]
        # A run of zeros reads as magic 0 and size 0: any other header is none (and is not scanned for one).
        if not (whole_header and (magic or size)) and \
                starts_zero_run(buf[i:i + min(available, HEADER_SIZE_UP_TO_MAGIC)]):
            if self.recovery.zero_run_end(pos) == self.size:
                yield zero_tail(pos, self.size)
                return self.size
        if not whole_header:
            yield short_header(pos, available)
            return self.size
        if magic == PROPOSED_V3_MAGIC and framed_proposed_v3(pos, size, self.options.max_entry_size, self.size):
            yield self._proposed_v3(pos, pos + LOG_OVERHEAD + size)
            return pos + LOG_OVERHEAD + size
        problem = frame_problem(pos, magic, size, self.options.max_entry_size, self.size)
        if problem is not None:
            return (yield from self._damaged(pos, problem, magic=magic, declared_size=size))
        end = pos + LOG_OVERHEAD + size
        try:
            batch = self._entry(pos, end, magic, buf, i)
        except EntryCut:   # the file was cut inside the entry while it was read: it ends there now
            cut = cast(Finding, frame_problem(pos, magic, size, self.options.max_entry_size, self.size))   # (truncated)
            return (yield from self._damaged(pos, cut, magic=magic, declared_size=size))
        if batch.crc_valid:
            yield self._intact(batch)
            return end
        # The CRC fails.  A length field is covered by no CRC: if the CRC verifies at an end another
        # entry suggests, the bytes are intact and only the length lies.
        recovered = self.recovery.recover_length(pos, self.recovery.resync(pos + 1) or self.size)
        if recovered is not None:
            yield self._intact(recovered)
            return recovered.pos + recovered.size
        if end == self.size or self.recovery.plausible_entry_at(end):
            yield self._intact(batch)
            return end
        problem = crc_mismatch(pos, end, magic, batch.computed_crc, batch.crc)
        return (yield from self._damaged(pos, problem))

    def _damaged(self, pos: int, problem: Finding, magic: int | None = None, declared_size: int | None = None):
        """Bytes at ``pos`` are no intact entry: explain them and find where to go on."""
        resume = self.recovery.resync(pos + 1)
        end = self.size if resume is None else resume
        intact = self.recovery.recover_length(pos, end)
        if intact is not None:
            yield self._intact(intact)
            return intact.pos + intact.size
        if problem.code == "truncated":
            if resume is None:   # the input ends inside this entry: every offset after the entry before is gone
                yield problem._replace(lost_offsets=range_lost_offsets(self._last_offset_before(), None))
                return self.size
            # Valid entries follow, so the input is not cut short: the size field is what lies.
            # (a frame found truncated was read up to its magic: frame_problem's callers pass it)
            problem = Finding("bad-length", pos, pos + SIZE_OFFSET, 4, LENGTH_FIELD[cast(int, magic)],
                              f"at most {self.size - pos - LOG_OVERHEAD} (the bytes left in the input)",
                              str(declared_size))
        lost = range_lost_offsets(self._last_offset_before(), None if resume is None else self._first_offset_at(resume))
        yield damaged_range(pos, end, problem, resumed=resume is not None)._replace(lost_offsets=lost)
        return end

    def _first_offset_at(self, pos: int) -> int | None:
        """The first offset of the intact entry at ``pos`` as its header says; None for a v0/v1 wrapper,
        whose offset field is its last inner record's (kbatch.reading.lost)."""
        buf, i, available = self.window.view(pos, BATCH_HEADER.size)
        if available < MESSAGE_V0_HEADER.size:
            return None
        if buf[i + MAGIC_OFFSET] == 2:
            return _OFFSETS.unpack_from(buf, i)[0] if available >= BATCH_HEADER.size else None
        offset, attributes = _LEGACY_OFFSET.unpack_from(buf, i)
        return offset if attributes & LEGACY_CODEC_MASK == 0 else None

    # -- decoding one entry --------------------------------------------------

    def _entry(self, pos: int, end: int, magic: int, buf: bytes = b"", i: int = 0) -> Batch:
        """The entry of the given magic whose bytes are [pos, end) (``buf[i:]`` when it holds them all)."""
        if i + end - pos > len(buf):
            buf, i, available = self.window.view(pos, end - pos)
            if available < end - pos:
                raise EntryCut(pos)
        entry = memoryview(buf)[i:i + end - pos]
        if magic == 2:
            batch = read_batch(pos, entry, self.decompressor, records=self.options.records,
                               inflate=self.options.inflate, record_objects=self.options.record_objects)
        else:
            batch = read_message(pos, entry, magic, self.decompressor, nested=self._nested_magic is not None,
                                 read_inner=self._inner_message_set, held=self.options.held_records)
        if self.options.keep_body:
            batch.body = bytes(entry[ENTRY_HEADERS[magic].size:])
        return batch

    def _proposed_v3(self, pos: int, end: int) -> Batch:
        """A magic-3 entry: the v3 proposal, read only to be looked at (kbatch.reading.v3)."""
        from kbatch.reading.v3 import read_v3_batch

        buf, i, _ = self.window.view(pos, end - pos)
        return read_v3_batch(pos, memoryview(buf)[i:i + end - pos], self.decompressor,
                             records=self.options.records, keep_body=self.options.keep_body)

    def _inner_message_set(self, inner: bytes, wrapper_magic: int) -> SegmentReader:
        """A reader of a wrapper's decompressed message set (with a decompressor of its own)."""
        return SegmentReader(BufferStream(inner), self.options, size=len(inner),
                             decompressor=Decompressor(self.options.decompressed_limit), nested_magic=wrapper_magic)


def damaged_range(pos: int, end: int, problem: Finding, *, resumed: bool) -> Finding:
    """The one finding for the bytes ``[pos, end)`` that are no entry.  ``problem``, why the bytes at ``pos``
    frame no entry, is told inside it rather than as a finding of its own: one range, one finding, and the
    field it names may lie past ``end``, inside the intact entry the walk resumed at."""
    where = f"resumed at {end}" if resumed else "up to the end of the input"
    header = "as an entry header"
    if resumed and problem.pos + problem.size > end:
        header += f" (read on into the entry at {end})"
    return Finding("resync", pos, pos, end - pos, "entry", "a valid log entry",
                   f"{end - pos} bytes that are none, {where}; {header}: {problem.code}, {problem.field} at pos "
                   f"{problem.pos} is {problem.actual}, expected {problem.expected}")


class BufferStream:
    """A read-only stream over a buffer (a decompressor's view), without copying it whole as BytesIO would.

    ``unchanging``: the buffer's bytes stay as they are while the stream is read (a bytes object), so the
    reader's window takes views of them (:meth:`bytes_at`, a read-ahead's part) instead of copies."""

    def __init__(self, buffer, *, unchanging: bool = False):
        self.buffer = memoryview(buffer)
        self.position = 0
        self.unchanging = unchanging

    def bytes_at(self, pos: int, size: int) -> memoryview:
        return self.buffer[pos:].toreadonly()

    def close(self) -> None:
        pass

    def seek(self, position: int, whence: int = os.SEEK_SET) -> int:
        self.position = position if whence == os.SEEK_SET else len(self.buffer) + position
        return self.position

    def read(self, size: int = -1) -> bytes:
        end = len(self.buffer) if size < 0 else self.position + size
        data = bytes(self.buffer[self.position:end])
        self.position += len(data)
        return data


# -- opening inputs ------------------------------------------------------------

# (patterns compiled at their first use, by re's cache: few runs read pasted hex)
_HEX_NOISE = rb"0x|[\s:,|-]"
_NOT_HEX = rb"[^0-9a-fA-F]"


def parse_hex(text: bytes) -> bytes:
    """Bytes from pasted hex: whitespace, colons, commas and 0x prefixes are ignored."""
    digits = re.sub(_HEX_NOISE, b"", text)
    bad = re.search(_NOT_HEX, digits)
    if bad is not None:   # said in the input's own terms, not fromhex()'s (which counts the stripped text)
        line = text.count(b"\n", 0, _position_in(text, bad.start())) + 1
        raise ValueError(f"not hex: {bad.group().decode('latin-1')!r} on line {line}")
    if len(digits) % 2:
        raise ValueError(f"not hex: an odd number of hex digits ({len(digits)}): half a byte at the end")
    return bytes.fromhex(digits.decode("ascii"))


def _position_in(text: bytes, digit_index: int) -> int:
    """Where the ``digit_index``-th byte left after removing the noise is in ``text``."""
    position = 0
    for match in re.finditer(_HEX_NOISE, text):
        gap = match.start() - position
        if digit_index < gap:
            return position + digit_index
        digit_index -= gap
        position = match.end()
    return position + digit_index


def open_input(path: str, *, hex_text: bool = False) -> BinaryIO:
    """A seekable binary stream for a path, ``-`` (stdin) or a file of hex text.

    stdin and named pipes are spooled to a temporary file so the reader can
    revisit bytes while resyncing, in constant memory.  A device is refused
    (ValueError): /dev/zero would never end, and no device is a segment.
    """
    if path != "-":
        kind = input_kind(path)
        if kind == "device":
            raise ValueError(f"a device, not a segment file (to read it anyway: kbatch ... - < {path})")
    if hex_text:
        raw = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
        return io.BytesIO(parse_hex(raw))
    if path == "-":
        return _spooled(sys.stdin.buffer)
    if kind == "pipe":
        with open(path, "rb", buffering=0) as pipe:
            return _spooled(pipe)
    return open(path, "rb", buffering=0)


def input_kind(path: str) -> str:
    """file, pipe (a FIFO or socket: read once, front to back), device, or other (a directory...)."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


def _spooled(source) -> BinaryIO:
    import tempfile   # only standard input is spooled: a file's run never loads it

    spool = tempfile.TemporaryFile()
    try:
        while chunk := source.read(CHUNK):
            spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool
