"""The fast CRC pass: is a segment clean, or does it need the full reader?

:func:`fast_scan` walks a segment's log entries by their size fields, without
building an object per entry, and hands each CRC span -- a slice of the
memory-mapped file, never a copy -- straight to CRC-32C (v2 batches) or
CRC-32 (v0/v1 messages).  It answers one question: is every entry framed
exactly up to the end of the file (or up to a tail of zero bytes, as a
broker-preallocated segment has), with every CRC verifying and nothing that
only the full reader can judge?  ::

    scan = fast_scan(path)
    if not scan.clean:
        ...  # read the file with SegmentReader for the exact findings

It checks what :class:`kbatch.reader.SegmentReader` checks for a file it
reports nothing on, and nothing more: the magic byte, the size field against
``MIN_ENTRY_SIZE`` and the maximum entry size, the entries tiling the file,
each CRC, and for an uncompressed v0/v1 message that its key and value fill
it exactly.  A compressed v0/v1 wrapper is never clean here: the CRCs of the
messages inside it need decompressing, which is the full reader's job.  When
``clean`` is False, ``reason`` says what was off first, and ``entries`` and
``records`` count what was walked before it.

Memory: the file is mapped once and the pages behind the walk are released
(``madvise(MADV_DONTNEED)``) every :data:`WINDOW` bytes, so the resident set
stays a few windows whatever the file size; a batch larger than a window is
checked window by window with a running CRC.  Small files are read whole.

Threads: with ``threads=2`` and a file of at least :data:`PARALLEL_MIN_SIZE`
bytes, a second thread computes the CRCs of the later half of each walked
window while the calling thread checks the first half.  Both CRC functions
release the GIL, so the two overlap.

Every offset, size and format comes from :mod:`kbatch.layouts`.  This module
is the library: it imports neither click, rich nor any codec.

A file truncated by another process while it is mapped makes the kernel send
SIGBUS on the next access to the lost pages; the full reader, which reads
instead of mapping, is the tool for files that may shrink underneath it.
"""

from __future__ import annotations

import mmap
import os
import queue
import stat
import struct
import sys
import threading
import zlib
from dataclasses import dataclass

from crc32c import crc32c as _crc32c

from .layouts import (
    BATCH_CRC_START,
    BATCH_HEADER,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_CODEC_MASK,
    LOG_OVERHEAD,
    MESSAGE_CRC_START,
    MESSAGE_V0_HEADER,
    MESSAGE_V1_HEADER,
    MIN_ENTRY_SIZE,
    FixedLayout,
    MessageV0,
)

# The largest size field taken as real: kbatch.reader.DEFAULT_MAX_ENTRY_SIZE
# (not imported, to keep this module's imports light; a test pins the two together).
MAX_ENTRY_SIZE = 1 << 30

# Pages behind the walk are released every WINDOW bytes (a multiple of the page size).
WINDOW = 8 * 1024 * 1024
# Files smaller than this are read into memory instead of mapped.
MAP_MIN_SIZE = 1024 * 1024
# Files smaller than this are checked on the calling thread alone.
PARALLEL_MIN_SIZE = 64 * 1024 * 1024

# crc32c's gil_release_mode: 1 = always release the GIL during the call.
_RELEASE_GIL = 1


@dataclass
class FastScan:
    path: str
    size: int
    entries: int                # log entries walked
    records: int                # sum of v2 recordsCount, +1 per uncompressed v0/v1 message
    clean: bool                 # every entry framed exactly to EOF (or to a zero tail), every CRC verified
    zero_tail_pos: int | None   # where an all-zero tail starts (a preallocated segment; not damage)
    reason: str | None          # when not clean: the first thing that was off


# ---------------------------------------------------------------------------
# struct formats derived from the layouts
# ---------------------------------------------------------------------------


def _picker(layout: FixedLayout, *wanted: str) -> struct.Struct:
    """A struct that reads only the ``wanted`` fields of a fixed layout and skips the others.

    It spans the layout from its first byte to the end of the last wanted field,
    so its size is how many bytes must be there to read it.
    """
    chars = layout.codec.format.lstrip("<>!=@")
    assert len(chars) == len(layout.names), "one format character per field"
    last = max(layout.names.index(name) for name in wanted)
    parts = [char if name in wanted else f"{layout.sizes[name]}x"
             for name, char in zip(layout.names[:last + 1], chars[:last + 1])]
    codec = struct.Struct(">" + "".join(parts))
    assert codec.size == layout.offsets[layout.names[last]] + layout.sizes[layout.names[last]]
    return codec


def _field_codec(declaration, name: str) -> struct.Struct:
    """The struct of one fixed-size field of a construct declaration."""
    (field,) = [field for field in declaration.subcons if field.name == name]
    while not hasattr(field, "fmtstr"):
        field = field.subcon
    return struct.Struct(field.fmtstr)


# Every entry: its size field and the magic byte that says how to read the rest.
_ENTRY_HEAD = _picker(BATCH_HEADER, "batch_length", "magic")
# A v2 batch, from its first byte to the end of its fixed header.
_BATCH = _picker(BATCH_HEADER, "batch_length", "magic", "crc", "records_count")
# A v0/v1 message up to its attributes (the same bytes in both magics).
_MESSAGE = _picker(MESSAGE_V0_HEADER, "crc", "attributes")
# Where a v0/v1 message's key_length sits, and the format of key_length/value_length.
_KEY_LENGTH_POS = {0: MESSAGE_V0_HEADER.size, 1: MESSAGE_V1_HEADER.size}
_LENGTH = _field_codec(MessageV0, "key_length")
_LENGTH_SIZE = _LENGTH.size

assert _ENTRY_HEAD.size == HEADER_SIZE_UP_TO_MAGIC
assert _BATCH.size == BATCH_HEADER.size == MIN_ENTRY_SIZE[2] + LOG_OVERHEAD
assert _MESSAGE.size <= MIN_ENTRY_SIZE[0] + LOG_OVERHEAD
assert _field_codec(MessageV0, "value_length").format == _LENGTH.format
assert MESSAGE_V1_HEADER.offsets["crc"] == MESSAGE_V0_HEADER.offsets["crc"]
assert MESSAGE_V1_HEADER.offsets["attributes"] == MESSAGE_V0_HEADER.offsets["attributes"]

_V2_MIN_SIZE = MIN_ENTRY_SIZE[2]
_PAGE = mmap.PAGESIZE
_CAN_RELEASE = hasattr(mmap.mmap, "madvise") and hasattr(mmap, "MADV_DONTNEED")
assert WINDOW % _PAGE == 0 and WINDOW >= _BATCH.size


# ---------------------------------------------------------------------------
# The scan
# ---------------------------------------------------------------------------


class _Problem(Exception):
    """The first thing that is off; ends the walk."""

    def __init__(self, pos: int, reason: str):
        super().__init__(reason)
        self.pos = pos
        self.reason = reason


class _Checker:
    """Verifies the CRC-32Cs of walked windows, on this thread and (optionally) one more.

    A window's jobs are lists of CRC spans (memoryview slices of the file),
    their stored CRCs and the entry positions.  With a worker, the later half
    of each window goes to the worker and the earlier half is checked here.
    Mapped pages are released once every span before them has been checked.
    """

    def __init__(self, data, parallel: bool):
        self.data = data
        self.mapped = isinstance(data, mmap.mmap)
        self.released = 0                 # mapped pages before this position have been released
        self.checked = 0                  # this thread has checked every span before this position
        self.pending: list[int] = []      # where each window handed to the worker starts, oldest first
        self.mismatches: list[int] = []   # positions of entries whose CRC failed
        self.worker = None
        if parallel:
            self.jobs: queue.SimpleQueue = queue.SimpleQueue()
            self.done: queue.SimpleQueue = queue.SimpleQueue()
            self.worker = threading.Thread(target=self._work, name="kbatch-fastscan-crc", daemon=True)
            self.worker.start()

    def _work(self) -> None:
        """The worker thread: CRC-32C of each window it is handed, until it is handed None."""
        while (job := self.jobs.get()) is not None:
            try:
                spans, stored, positions = job
                computed = [_crc32c(span, 0, _RELEASE_GIL) for span in spans]
                self.done.put(None if computed == stored else _first_difference(computed, stored, positions))
            except BaseException as error:   # handed back, so the calling thread never waits forever
                self.done.put(error)
            job = spans = computed = None   # let go of the slices before the next wait

    def check(self, spans: list, stored: list, positions: list, end: int) -> None:
        """Check one window of CRC spans, all of them before ``end``; a mismatch is recorded, not raised."""
        if self.worker is not None and len(spans) > 1:
            half = len(spans) // 2
            self.pending.append(positions[half])
            self.jobs.put((spans[half:], stored[half:], positions[half:]))
            del spans[half:], stored[half:], positions[half:]
            computed = [_crc32c(span, 0, _RELEASE_GIL) for span in spans]
        else:
            computed = list(map(_crc32c, spans))
        if computed != stored:
            self.mismatches.append(_first_difference(computed, stored, positions))
        self.checked = end
        if self.pending:
            self._collect(block=len(self.pending) > 2)   # at most three windows in flight
        self.release()

    def advance(self, pos: int) -> None:
        """This thread has checked everything before ``pos``."""
        self.checked = pos
        self.release()

    def _collect(self, block: bool) -> None:
        """Take the worker's finished windows (in order); with ``block``, wait for the oldest."""
        while self.pending:
            try:
                bad = self.done.get(block=block)
            except queue.Empty:
                return
            block = False
            self.pending.pop(0)
            if isinstance(bad, BaseException):
                raise bad
            if bad is not None:
                self.mismatches.append(bad)

    def release(self) -> None:
        """Let the kernel drop the checked mapped pages from the resident set, a window at a time."""
        if not self.mapped or not _CAN_RELEASE:
            return
        upto = min(self.pending[0], self.checked) if self.pending else self.checked
        upto -= upto % _PAGE
        if upto - self.released >= WINDOW or (upto > self.released and upto + _PAGE >= len(self.data)):
            self.data.madvise(mmap.MADV_DONTNEED, self.released, upto - self.released)
            self.released = upto

    def finish(self) -> None:
        if self.worker is not None:
            while self.pending:
                self._collect(block=True)
            self.jobs.put(None)
            self.worker.join()
            self.worker = None


def _first_difference(computed: list, stored: list, positions: list) -> int:
    for index, (mine, theirs) in enumerate(zip(computed, stored)):
        if mine != theirs:
            return positions[index]
    raise AssertionError("the lists differ")


class _Walk:
    def __init__(self, data, size: int, max_entry_size: int, parallel: bool):
        self.data = data
        self.view = memoryview(data)
        self.size = size
        self.max_entry_size = max_entry_size
        self.entries = 0
        self.records = 0
        self.zero_tail_pos: int | None = None
        self.checker = _Checker(data, parallel)

    def run(self) -> str | None:
        """Walk every entry; the first thing that is off, or None."""
        problem = None
        try:
            self._walk()
        except _Problem as found:
            problem = (found.pos, found.reason)
        finally:
            self.checker.finish()
        if self.checker.mismatches:
            first = min(self.checker.mismatches)
            if problem is None or first <= problem[0]:
                problem = (first, f"crc mismatch at {first}")
        return None if problem is None else problem[1]

    def _walk(self) -> None:
        data, view, size = self.data, self.view, self.size
        unpack_batch = _BATCH.unpack_from
        header_size, overhead, crc_start, min_size = _BATCH.size, LOG_OVERHEAD, BATCH_CRC_START, _V2_MIN_SIZE
        # A batch larger than a window is left to _other_entry, which checks it a window at a time.
        max_size = min(self.max_entry_size, WINDOW - overhead)
        last_header = size - header_size
        pos = 0
        while pos < size:
            window_end = min(pos + WINDOW, size)
            spans: list = []
            stored: list = []
            positions: list = []
            records = 0
            while pos < window_end:
                # The hot path: a v2 batch, whose fixed header lies inside the file.
                if pos <= last_header:
                    batch_length, magic, crc, count = unpack_batch(data, pos)
                    if magic == 2 and min_size <= batch_length <= max_size:
                        end = pos + overhead + batch_length
                        if end <= size:
                            spans.append(view[pos + crc_start:end])
                            stored.append(crc)
                            positions.append(pos)
                            records += count
                            pos = end
                            continue
                # Anything else: a v0/v1 message, a large batch, a zero tail, damage.
                self._flush(spans, stored, positions, records, pos)
                spans, stored, positions, records = [], [], [], 0
                pos = self._other_entry(pos)
                self.checker.advance(pos)
            self._flush(spans, stored, positions, records, pos)

    def _flush(self, spans: list, stored: list, positions: list, records: int, end: int) -> None:
        if spans:
            self.entries += len(spans)
            self.records += records
            self.checker.check(spans, stored, positions, end)
            if self.checker.mismatches:
                first = min(self.checker.mismatches)
                raise _Problem(first, f"crc mismatch at {first}")

    def _other_entry(self, pos: int) -> int:
        """Check the entry at ``pos`` that the hot path did not take; where the next one starts."""
        data, size = self.data, self.size
        available = min(size - pos, HEADER_SIZE_UP_TO_MAGIC)
        if not any(self.view[pos:pos + available]) and self._zeros_to_end(pos):
            self.zero_tail_pos = pos
            return size
        if available < HEADER_SIZE_UP_TO_MAGIC:
            raise _Problem(pos, f"truncated entry at {pos}: {available} bytes, then the end of the file")
        entry_size, magic = _ENTRY_HEAD.unpack_from(data, pos)
        if magic not in MIN_ENTRY_SIZE:
            raise _Problem(pos, f"unknown magic {magic} at {pos}")
        if not MIN_ENTRY_SIZE[magic] <= entry_size <= self.max_entry_size:
            raise _Problem(pos, f"bad size {entry_size} at {pos} (magic {magic}: "
                                f"{MIN_ENTRY_SIZE[magic]}..{self.max_entry_size})")
        end = pos + LOG_OVERHEAD + entry_size
        if end > size:
            raise _Problem(pos, f"truncated entry at {pos}: size {entry_size} needs {end - pos} bytes, "
                                f"{size - pos} left")
        if magic == 2:
            _, _, stored, count = _BATCH.unpack_from(data, pos)
            if self._running_crc(_crc32c, pos + BATCH_CRC_START, end) != stored:
                raise _Problem(pos, f"crc mismatch at {pos}")
            self.records += count
        else:
            stored, attributes = _MESSAGE.unpack_from(data, pos)
            if self._running_crc(zlib.crc32, pos + MESSAGE_CRC_START, end) != stored:
                raise _Problem(pos, f"crc mismatch at {pos}")
            if attributes & LEGACY_CODEC_MASK:
                raise _Problem(pos, f"compressed v0/v1 wrapper at {pos} (inner CRCs need the full reader)")
            self._key_value_fill(pos, end, magic)
            self.records += 1
        self.entries += 1
        return end

    def _key_value_fill(self, pos: int, end: int, magic: int) -> None:
        """An uncompressed v0/v1 message's key and value fill it exactly, and their lengths are >= -1."""
        at = pos + _KEY_LENGTH_POS[magic]
        for name in ("key", "value"):
            if at + _LENGTH_SIZE > end:
                raise _Problem(pos, f"the {name} length of the message at {pos} runs past its end")
            (length,) = _LENGTH.unpack_from(self.data, at)
            if length < -1:
                raise _Problem(pos, f"{name} length {length} in the message at {pos} (Kafka reads it as null)")
            at += _LENGTH_SIZE + max(length, 0)
        if at != end:
            raise _Problem(pos, f"the key and value of the message at {pos} do not fill it "
                                f"({abs(end - at)} bytes {'left over' if at < end else 'missing'})")

    def _running_crc(self, function, start: int, end: int) -> int:
        """A CRC over the bytes start..end, a window at a time, releasing the pages behind."""
        value = 0
        while start < end:
            stop = min(end, start + WINDOW)
            value = function(self.view[start:stop], value)
            start = stop
            self.checker.advance(start)
        return value & 0xFFFFFFFF

    def _zeros_to_end(self, pos: int) -> bool:
        """Is every byte from ``pos`` to the end of the file zero?"""
        zeros = bytes(min(self.size - pos, _ZERO_PIECE))
        while pos < self.size:
            stop = min(self.size, pos + len(zeros))
            if not zeros.startswith(self.view[pos:stop]):
                return False
            pos = stop
            self.checker.advance(pos)
        return True


_ZERO_PIECE = 1024 * 1024


def fast_scan(path: str, *, threads: int = 2, max_entry_size: int = MAX_ENTRY_SIZE) -> FastScan:
    """Walk and CRC-check every log entry of the file at ``path`` (see the module doc).

    Never raises on bad bytes; raises OSError when the file cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return FastScan(path, 0, 0, 0, False, None, "not a regular file (the full reader reads streams)")
        size = info.st_size
        if size < max(MAP_MIN_SIZE, 1):   # an empty file cannot be mapped
            data = _read_whole(fd, size)
            size = len(data)
            mapping = None
        else:
            data = mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    walk = _Walk(data, size, max_entry_size, parallel=threads > 1 and size >= PARALLEL_MIN_SIZE)
    try:
        reason = walk.run()
    finally:
        walk.view.release()
        if mapping is not None:
            try:
                mapping.close()
            except BufferError:   # a slice still alive (an exception on its way out): unmapped when collected
                pass
    return FastScan(path=path, size=size, entries=walk.entries, records=walk.records, clean=reason is None,
                    zero_tail_pos=walk.zero_tail_pos, reason=reason)


def _read_whole(fd: int, size: int) -> bytes:
    parts, pos = [], 0
    while True:
        part = os.pread(fd, max(size - pos, 1 << 16), pos)
        if not part:
            return b"".join(parts)
        parts.append(part)
        pos += len(part)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m kbatch.fastscan FILE... [--threads N]")
    arguments = sys.argv[1:]
    thread_count = 2
    if "--threads" in arguments:
        index = arguments.index("--threads")
        thread_count = int(arguments[index + 1])
        del arguments[index:index + 2]
    status = 0
    for argument in arguments:
        scan = fast_scan(argument, threads=thread_count)
        print(scan)
        status = status or (0 if scan.clean else 1)
    sys.exit(status)
