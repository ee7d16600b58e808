"""The fast CRC pass: is a segment clean, or does it need the full reader?

:func:`fast_scan` walks a segment's log entries by their size fields, without
building an object per entry, and hands each CRC span -- a slice of a reused
buffer, never a copy of its own -- straight to CRC-32C (v2 batches) or CRC-32
(v0/v1 messages).  It answers one question: is every entry framed exactly up
to the end of the file (or up to a tail of zero bytes, as a broker-preallocated
segment has), with every CRC verifying and nothing that only the full reader
can judge?  ::

    scan = fast_scan(path)
    if not scan.clean:
        ...  # read the file with SegmentReader for the exact findings

It checks what :class:`kbatch.reading.reader.SegmentReader` checks of a file it
reports nothing on, and nothing more: the magic byte, the size field against
the bounds of kbatch.format.framing (magic, least and most size), the entries tiling the file,
every CRC, and for an uncompressed v0/v1 message that its key and value fill
it exactly with lengths of at least -1.  A compressed v0/v1 wrapper is never
clean here: the CRCs of the messages inside it need decompressing, which is
the full reader's job.  When ``clean`` is False, ``reason`` says what was off
first, ``entries``/``records`` count the entries verified before it, and
``stopped_at`` says where that entry lies: the walk engine
(:mod:`kbatch.walk.engine`, with the CRC run and the full reader) goes on from
there (:func:`kbatch.ops.verify.verify_file`).

How it reads: :data:`CHUNK` bytes at a time into a few reused buffers, each
with :data:`RESERVE` bytes of room in front where the unfinished entry at the
end of the previous chunk is carried over, so every entry up to that size is
checked in one piece; a larger one is checked with a running CRC as its
chunks arrive.  Memory stays a few buffers whatever the file size.  With
``threads=2`` and a file of at least :data:`PARALLEL_MIN_SIZE` bytes, a second
thread reads the next chunks while the calling thread walks and checks this
one (a read releases the GIL).  A file of at most 64 KiB is read whole; the
buffers are kept for the next scan.

Why not mmap: measured on 1 GiB segments, page-table faults cost as much as
reading into a buffer that stays in the cache (more when the page cache holds
the file in small pages), they land on the thread holding the GIL, and a file
truncated underneath a mapping kills the process with SIGBUS; a read just
comes back short, which is reported.

Every offset, size and format comes from :mod:`kbatch.format.layouts`, and every
rule and finding text from :mod:`kbatch.format.framing` (shared with the reader): a
file is clean here only where the reader would report nothing.  This module
is the library: it imports neither click, rich nor any codec.
"""

from __future__ import annotations

import mmap
import os
import queue
import stat
import struct
import sys
import threading
from dataclasses import dataclass

from kbatch.format.framing import (
    CHECKSUMS,
    DEFAULT_MAX_ENTRY_SIZE as MAX_ENTRY_SIZE,
    LENGTH_SIZE,
    crc_mismatch,
    frame_problem,
    legacy_key_value,
    read_length,
    reason,
    records_count_problem,
    short_header,
    size_bounds,
    starts_zero_run,
)
from kbatch.reading.window import page_aligned_buffer
from kbatch.format.structs import (
    BATCH_HEADER,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_CODEC_MASK,
    LOG_OVERHEAD,
    MESSAGE_V0_HEADER,
    MIN_ENTRY_SIZE,
    FixedLayout,
)

CHUNK = 2 * 1024 * 1024          # bytes read at a time
RESERVE = 256 * 1024             # room in front of each chunk for an entry carried over (< CHUNK)
PARALLEL_MIN_SIZE = 16 * 1024 * 1024   # smaller files are read on the calling thread alone
_BUFFERS_AHEAD = 3               # buffers in use with a read-ahead thread
SMALL_FILE_SIZE = 64 * 1024      # files up to this size are read whole into a bytes object


@dataclass
class FastScan:
    """What the fast pass found: a verdict, and counts that are exact when ``clean``."""

    path: str
    size: int
    entries: int                # log entries walked (and verified)
    records: int                # sum of v2 recordsCount, +1 per uncompressed v0/v1 message
    clean: bool                 # every entry framed exactly to EOF (or to a zero tail), every CRC verified
    zero_tail_pos: int | None   # where an all-zero tail starts (a preallocated segment; not damage)
    reason: str | None          # when not clean: the first thing that was off
    # When not clean: where the entry lies that the full reader must read (every entry before it verified,
    # and counted in entries/records), so a walk goes on from there; None: from the start (the file changed).
    stopped_at: int | None = None

    def findings(self) -> list:
        """For a clean scan, the findings the full reader would report: at most the zero tail (information)."""
        from kbatch.format.findings import Finding

        if self.zero_tail_pos is None:
            return []
        size = self.size - self.zero_tail_pos
        return [Finding("zero-tail", self.zero_tail_pos, self.zero_tail_pos, size, "tail",
                        "a log entry or the end of the file", f"{size} zero bytes")]


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


# Every entry: its size field and the magic byte that says how to read the rest.
_ENTRY_HEAD = _picker(BATCH_HEADER, "batch_length", "magic")
# A v2 batch, from its first byte to the end of its fixed header.
_BATCH = _picker(BATCH_HEADER, "batch_length", "magic", "crc", "records_count")
# A v0/v1 message up to its attributes (the same bytes in both magics).
_MESSAGE = _picker(MESSAGE_V0_HEADER, "crc", "attributes")

assert _ENTRY_HEAD.size == HEADER_SIZE_UP_TO_MAGIC
assert _BATCH.size == BATCH_HEADER.size == MIN_ENTRY_SIZE[2] + LOG_OVERHEAD
assert _MESSAGE.size <= _BATCH.size and _MESSAGE.size <= MIN_ENTRY_SIZE[0] + LOG_OVERHEAD
assert _BATCH.size > CHECKSUMS[2].stored_at and _MESSAGE.size > CHECKSUMS[0].stored_at
assert _BATCH.size <= RESERVE < CHUNK

_CARRY = -1   # "the entry here goes on in the next chunk"


# ---------------------------------------------------------------------------
# Reading: chunks into reused buffers, on this thread or one ahead of it
# ---------------------------------------------------------------------------


# Buffers kept between scans: making one costs about 0.4 ms per MiB (page faults),
# a good part of scanning a file of a few MiB.
_spare_buffers: list[mmap.mmap] = []
_spare_lock = threading.Lock()


def _take_buffers(count: int) -> list[mmap.mmap]:
    size = RESERVE + CHUNK
    with _spare_lock:
        taken = [buffer for buffer in _spare_buffers if len(buffer) == size][:count]
        for buffer in taken:
            _spare_buffers.remove(buffer)
    return taken + [page_aligned_buffer(size) for _ in range(count - len(taken))]


def _keep_buffers(buffers: list[mmap.mmap]) -> None:
    with _spare_lock:
        _spare_buffers[:] = (_spare_buffers + buffers)[-_BUFFERS_AHEAD:]


class _Chunks:
    """The first ``size`` bytes of a file, CHUNK bytes at a time, each read to ``buffer[RESERVE:]``.

    :meth:`next` returns (buffer, count); a count short of a chunk before
    ``size`` means the file shrank.  The caller hands each buffer back with
    :meth:`recycle` once it has carried what it needs out of it.
    """

    def __init__(self, fd: int, size: int, ahead: bool):
        self.fd = fd
        self.size = size
        self.offset = 0                                  # where the next read starts (the reading thread's)
        self.buffers = _take_buffers(_BUFFERS_AHEAD if ahead else 1 if size <= CHUNK else 2)
        self.free: queue.SimpleQueue = queue.SimpleQueue()
        for buffer in self.buffers:
            self.free.put(buffer)
        self.thread = None
        if ahead:
            self.filled: queue.SimpleQueue = queue.SimpleQueue()
            self.stopped = False
            self.thread = threading.Thread(target=self._read_ahead, name="kbatch-fastscan-read", daemon=True)
            self.thread.start()

    def _read(self, buffer: mmap.mmap) -> int:
        """Fill ``buffer[RESERVE:]`` from the file; the count read (short only at the end or if the file shrank)."""
        wanted = min(CHUNK, self.size - self.offset)
        view = memoryview(buffer)[RESERVE:RESERVE + wanted]
        count = 0
        while count < wanted:
            got = os.preadv(self.fd, [view[count:]], self.offset + count)
            if got == 0:
                break
            count += got
        view.release()
        self.offset += count
        return count

    def _read_ahead(self) -> None:
        while True:
            buffer = self.free.get()
            if buffer is None or self.stopped:
                return
            try:
                count = self._read(buffer)
            except BaseException as error:  # noqa: BLE001 -- handed over and raised by the walking thread
                self.filled.put(error)
                return
            self.filled.put((buffer, count))
            if count == 0:
                return

    def next(self) -> tuple[mmap.mmap, int]:
        if self.thread is None:
            buffer = self.free.get_nowait()
            return buffer, self._read(buffer)
        item = self.filled.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def recycle(self, buffer: mmap.mmap) -> None:
        self.free.put(buffer)

    def close(self) -> None:
        """Stop the reading thread; keep the buffers for the next scan."""
        if self.thread is not None:
            self.stopped = True
            self.free.put(None)
            self.thread.join()
            self.thread = None
        _keep_buffers(self.buffers)
        self.buffers = []


# ---------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------


class _Problem(Exception):
    """The first thing that is off; ends the walk.  ``at``: the entry the full reader goes on from (None:
    the file changed while it was read, the full reader starts over)."""

    def __init__(self, reason: str, at: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.at = at

    @classmethod
    def of(cls, finding) -> _Problem:
        """The first finding the full reader would report (kbatch.format.framing says what it is)."""
        return cls(reason(finding), finding.entry_pos)


class _Walk:
    def __init__(self, fd: int, size: int, max_entry_size: int):
        self.fd = fd
        self.size = size
        self.max_entry_size = max_entry_size
        self.entries = 0
        self.records = 0
        self.zero_tail_pos: int | None = None
        self.zeros_from: int | None = None   # zero bytes run from here; they must run to the end
        self.running: list | None = None     # an entry longer than RESERVE going on past a chunk:
        #                                      [pos, size, bytes left, running crc, crc function, stored crc, magic, attributes]
        self._zeros = b""

    # -- the whole file ------------------------------------------------------

    def whole(self, data) -> None:
        """Walk a file read whole into ``data``."""
        view = memoryview(data)
        try:
            end = self.buffer(data, view, 0, len(data), 0, True)
            assert end == len(data)
        finally:
            view.release()

    def chunked(self, chunks: _Chunks) -> None:
        """Walk a file chunk by chunk, carrying each unfinished entry into the next buffer."""
        previous = previous_view = None
        carry_from = carry_to = 0
        offset = 0                       # file position of the next chunk's first byte
        try:
            while offset < self.size:
                buffer, count = chunks.next()
                view = memoryview(buffer)
                start = RESERVE
                if previous is not None:
                    carry = carry_to - carry_from
                    start = RESERVE - carry
                    view[start:RESERVE] = previous_view[carry_from:carry_to]
                    previous_view.release()
                    chunks.recycle(previous)
                previous, previous_view = buffer, view
                if count < min(CHUNK, self.size - offset):
                    raise _Problem(f"the file shrank to {offset + count} bytes while being read")
                limit = RESERVE + count
                base = offset - RESERVE              # the file position of buffer[0]
                offset += count
                at_end = offset >= self.size
                carry_from = self.buffer(buffer, view, start, limit, base, at_end)
                carry_to = limit
                if at_end and carry_from != limit:
                    raise AssertionError("an entry carried past the end of the file")
        finally:
            if previous_view is not None:
                previous_view.release()

    # -- one buffer ----------------------------------------------------------

    def buffer(self, data, view, i: int, limit: int, base: int, at_end: bool) -> int:
        """Walk the entries in ``data[i:limit]`` (file position ``base + i`` onwards).

        Returns ``limit``, or where an entry starts that goes on past ``limit``
        and is small enough to be carried into the next buffer.
        """
        if self.zeros_from is not None:
            return self._zero_run(view, i, limit, base, at_end)
        if self.running is not None:
            i = self._run_on(view, i, limit)
            if i == limit:
                return limit
        unpack = _BATCH.unpack_from
        crc32c, crc_start = CHECKSUMS[2].function, CHECKSUMS[2].start   # framing's CRC and bounds for v2
        header_size, overhead = _BATCH.size, LOG_OVERHEAD
        min_size, max_size = size_bounds(2, self.max_entry_size)
        last_header = limit - header_size
        entries = records = 0
        try:
            while i < limit:
                # The hot path: a v2 batch that lies whole in the buffer.
                if i <= last_header:
                    batch_length, magic, stored, count = unpack(data, i)
                    if magic == 2 and min_size <= batch_length <= max_size:
                        end = i + overhead + batch_length
                        if end <= limit:
                            computed = crc32c(view[i + crc_start:end])
                            if computed != stored:
                                raise _Problem.of(crc_mismatch(base + i, base + end, 2, computed, stored))
                            if count < 0:
                                raise _Problem.of(records_count_problem(base + i, count))
                            entries += 1
                            records += count
                            i = end
                            continue
                # Anything else: a v0/v1 message, an entry going on past this buffer, a zero tail, damage.
                self.entries += entries
                self.records += records
                entries = records = 0
                after = self._other(data, view, i, limit, base, at_end)
                if after == _CARRY:
                    return i
                if self.zeros_from is not None or self.running is not None:
                    return limit
                i = after
        finally:
            self.entries += entries
            self.records += records
        return i

    def _other(self, data, view, i: int, limit: int, base: int, at_end: bool) -> int:
        """Check the entry at ``data[i]`` that the hot path did not take; where the next one starts."""
        pos = base + i
        available = limit - i
        if available < _BATCH.size and not at_end:
            return _CARRY                       # not even a header yet: wait for the next chunk
        if starts_zero_run(view[i:i + min(available, HEADER_SIZE_UP_TO_MAGIC)]):
            self.zeros_from = pos               # a zero tail, if the zeros run to the end
            return self._zero_run(view, i, limit, base, at_end)
        if available < HEADER_SIZE_UP_TO_MAGIC:
            raise _Problem.of(short_header(pos, available))
        entry_size, magic = _ENTRY_HEAD.unpack_from(data, i)
        problem = frame_problem(pos, magic, entry_size, self.max_entry_size, self.size)
        if problem is not None:
            raise _Problem.of(problem)
        total = LOG_OVERHEAD + entry_size
        checksum = CHECKSUMS[magic]
        function, crc_start = checksum.function, checksum.start
        if magic == 2:
            _, _, stored, count = _BATCH.unpack_from(data, i)
        else:
            stored, attributes = _MESSAGE.unpack_from(data, i)
        if total > available:                   # the entry goes on in the next chunks
            if total <= RESERVE:
                return _CARRY
            self.running = [pos, total, total - available, function(view[i + crc_start:limit]), function, stored,
                            magic, count if magic == 2 else attributes]
            return limit
        computed = function(view[i + crc_start:i + total])
        if computed != stored:
            raise _Problem.of(crc_mismatch(pos, pos + total, magic, computed, stored))
        if magic < 2:
            self._legacy_checks(pos, total, magic, attributes, lambda at, size: data[at - base:at - base + size])
        else:
            self._count(pos, count)
        self.entries += 1
        return i + total

    def _legacy_checks(self, pos: int, total: int, magic: int, attributes: int, read) -> None:
        """An uncompressed v0/v1 message whose key and value fill it exactly, with lengths >= -1.

        ``read(file_pos, size)`` gives the bytes at a file position.  Counts the message's record.
        """
        if attributes & LEGACY_CODEC_MASK:
            raise _Problem(f"compressed v0/v1 wrapper at {pos} (inner CRCs need the full reader)", pos)
        _, findings = legacy_key_value(pos, total, magic, lambda at: read_length(read(pos + at, LENGTH_SIZE), 0))
        if findings:
            raise _Problem.of(findings[0])
        self.records += 1

    def _count(self, pos: int, count: int) -> None:
        """Count a v2 batch's records; a negative recordsCount is the reader's finding."""
        if count < 0:
            raise _Problem.of(records_count_problem(pos, count))
        self.records += count

    def _pread(self, pos: int, size: int) -> bytes:
        data = os.pread(self.fd, size, pos)
        if len(data) != size:
            raise _Problem(f"the file shrank while being read (at {pos})")
        return data

    def _run_on(self, view, i: int, limit: int) -> int:
        """Feed the next bytes of a large entry to its running CRC; where the walk goes on."""
        pos, total, left, value, function, stored, magic, last_field = self.running
        take = min(left, limit - i)
        value = function(view[i:i + take], value)
        if take < left:
            self.running[2:4] = left - take, value
            return limit
        self.running = None
        if value & 0xFFFFFFFF != stored:
            raise _Problem.of(crc_mismatch(pos, pos + total, magic, value & 0xFFFFFFFF, stored))
        if magic < 2:
            self._legacy_checks(pos, total, magic, last_field, self._pread)
        else:
            self._count(pos, last_field)
        self.entries += 1
        return i + take

    def _zero_run(self, view, i: int, limit: int, base: int, at_end: bool) -> int:
        """Zero bytes began at ``zeros_from``: all of ``view[i:limit]`` must be zero too."""
        step = min(CHUNK, limit - i)
        if len(self._zeros) < step:
            self._zeros = bytes(step)
        step = len(self._zeros)
        while i < limit:
            piece = min(step, limit - i)
            if not self._zeros.startswith(view[i:i + piece]):
                nonzero = base + i + next(n for n, byte in enumerate(view[i:i + piece]) if byte)
                raise _Problem(f"zero bytes from {self.zeros_from} up to {nonzero} are no entry and no zero tail",
                               self.zeros_from)
            i += piece
        if at_end:
            self.zero_tail_pos = self.zeros_from
        return limit


def fast_scan(path: str, *, threads: int = 2, max_entry_size: int = MAX_ENTRY_SIZE) -> FastScan:
    """Walk and CRC-check every log entry of the file at ``path`` (see the module doc).

    ``threads=1`` does everything on the calling thread; 2 (or more) adds one
    thread that reads ahead, for files of at least PARALLEL_MIN_SIZE bytes.
    ``max_entry_size`` is the reader's ``ReadOptions.max_entry_size``: a larger
    size field is damage.  Never raises on bad bytes: they make ``clean`` False.
    Raises OSError when the file cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return FastScan(path, 0, 0, 0, False, None, "not a regular file (the full reader reads streams)")
        size = info.st_size
        walk = _Walk(fd, size, max_entry_size)
        reason = stopped_at = None
        try:
            if size <= SMALL_FILE_SIZE:
                data = os.pread(fd, size, 0)
                if len(data) < size:
                    raise _Problem(f"the file shrank to {len(data)} bytes while being read")
                walk.whole(data)
            else:
                chunks = _Chunks(fd, size, ahead=threads > 1 and size >= PARALLEL_MIN_SIZE)
                try:
                    walk.chunked(chunks)
                finally:
                    chunks.close()
        except _Problem as problem:
            reason, stopped_at = problem.reason, problem.at
    finally:
        os.close(fd)
    return FastScan(path=path, size=size, entries=walk.entries, records=walk.records, clean=reason is None,
                    zero_tail_pos=walk.zero_tail_pos if reason is None else None, reason=reason, stopped_at=stopped_at)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    thread_count = 2
    if "--threads" in arguments:
        index = arguments.index("--threads")
        thread_count = int(arguments[index + 1])
        del arguments[index:index + 2]
    if not arguments:
        sys.exit("usage: python -m kbatch.walk.crc FILE... [--threads N]")
    status = 0
    for argument in arguments:
        scan = fast_scan(argument, threads=thread_count)
        print(scan)
        status = status or (0 if scan.clean else 1)
    sys.exit(status)
