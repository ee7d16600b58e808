"""A local file read a chunk ahead of the reader's window, on a second thread.

A walk over a clean file spends its time on two things: copying the file's
bytes out of the page cache, and checking them (CRC-32C).  A read releases the
GIL, so a second thread can copy the next chunk while the walk checks this
one.  :class:`ReadAhead` is that thread and its buffers; the window
(:class:`kbatch.reading.window.Window`) takes its bytes from it when they are
the ones it holds, and reads them itself otherwise (behind the read-ahead, or
an entry larger than :data:`RESERVE` cut by a chunk's end).

Each chunk is read to ``buffer[RESERVE:]``: the room in front takes the end of
the chunk before when the window asks for bytes from there on (an entry that
the chunk's end cuts), so the entry lies whole in one buffer for the price of
copying its start.  A buffer goes back to the thread only once no view of it is
left (its reference count says so, as for kbatch.reading.window.Buffers).

Why not mmap: measured on 1 GiB segments, page-table faults cost as much as
reading into a buffer that stays in the cache, they land on the thread holding
the GIL, and a file truncated underneath a mapping kills the process with
SIGBUS; a read just comes back short, which the window reports.
"""

from __future__ import annotations

import mmap
import os
import queue
import stat
import sys
import threading

from kbatch.reading.window import CHUNK, page_aligned_buffer

RESERVE = 256 * 1024                   # room in front of each chunk for the end of the one before (< CHUNK)
MIN_SIZE = 16 * 1024 * 1024            # smaller files are read on the calling thread alone
BUFFERS_AHEAD = 3                      # buffers the thread reads into (more only while the walk holds them)

# Buffers kept from one file to the next: making one costs about 0.4 ms per MiB (page faults).
_kept: list[mmap.mmap] = []
_kept_lock = threading.Lock()


def _new_buffers(count: int) -> list[mmap.mmap]:
    """``count`` buffers of RESERVE + CHUNK bytes, kept ones first."""
    size = RESERVE + CHUNK
    with _kept_lock:
        taken = [buffer for buffer in _kept if len(buffer) == size][:count]
        _kept[:] = [buffer for buffer in _kept if all(buffer is not each for each in taken)]
    return taken + [page_aligned_buffer(size) for _ in range(count - len(taken))]


def _references(buffers: list) -> list[int]:
    """sys.getrefcount of each buffer: of one that nothing but the list refers to, what it is for a new one."""
    return [sys.getrefcount(buffer) for buffer in buffers]


_UNUSED = _references([page_aligned_buffer(mmap.PAGESIZE)])[0]


def read_ahead_of(stream, size: int) -> ReadAhead | None:
    """A ReadAhead of ``stream`` (its first ``size`` bytes) when it is a regular file large enough to gain by one."""
    if size < MIN_SIZE or not hasattr(os, "preadv"):
        return None
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):   # not a file (a BytesIO, a spooled stream in memory)
        return None
    return ReadAhead(fd, size) if stat.S_ISREG(os.fstat(fd).st_mode) else None


class ReadAhead:
    """The first ``size`` bytes of the regular file open as ``fd``, read CHUNK bytes at a time by a thread."""

    def __init__(self, fd: int, size: int):
        self.fd = fd
        self.size = size
        self.free: queue.SimpleQueue = queue.SimpleQueue()     # buffers the thread may read into
        self.filled: queue.SimpleQueue = queue.SimpleQueue()   # (file position, buffer, count) read
        self.in_flight = 0         # buffers handed to the thread and not back yet
        self.retired: list[mmap.mmap] = []   # buffers read and passed, that a view may still hold
        self.ended = False         # the thread read its last chunk (the file's end, or a short read)
        # The chunk the window takes bytes from: file bytes [start, end) at buffer[first:]
        self.start = self.end = self.first = 0
        self.buffer: mmap.mmap | None = None
        for buffer in _new_buffers(BUFFERS_AHEAD):
            self._hand(buffer)
        self.thread = threading.Thread(target=self._read_ahead, name="kbatch-read-ahead", daemon=True)
        self.thread.start()

    def bytes_at(self, pos: int, size: int) -> memoryview | None:
        """The file's bytes from ``pos`` to the end of the chunk that holds them, at least ``size`` of them
        (fewer only where the file ends); None when the read-ahead does not hold them (the window reads)."""
        while True:
            if self.buffer is not None and self.start <= pos and pos + size <= self.end:
                at = self.first + pos - self.start
                return memoryview(self.buffer)[at:self.first + self.end - self.start].toreadonly()
            if pos < self.start or self.ended:
                return None
            carry = self.end - pos if self.buffer is not None and pos < self.end else 0
            if carry > RESERVE:
                return None   # a large entry cut by the chunk's end: the window reads it whole
            offset, buffer, count = self._next_chunk()
            if self.buffer is not None:
                if carry:
                    at = self.first + pos - self.start
                    buffer[RESERVE - carry:RESERVE] = self.buffer[at:at + carry]
                self.retired.append(self.buffer)
            self.buffer, self.first = buffer, RESERVE - carry
            self.start, self.end = offset - carry, offset + count
            if count < min(CHUNK, self.size - offset) or self.end >= self.size:
                self.ended = True   # the last chunk: past it, the window's own read finds the end

    def close(self) -> None:
        """Stop the thread; keep the buffers no view holds for the next file."""
        self.ended = True
        self.free.put(None)
        self.thread.join()
        buffers = self.retired + ([self.buffer] if self.buffer is not None else [])
        while not self.filled.empty():
            item = self.filled.get()
            if not isinstance(item, BaseException):
                buffers.append(item[1])
        while not self.free.empty():
            buffer = self.free.get()
            if buffer is not None:
                buffers.append(buffer)
        self.retired, self.buffer, item, buffer = [], None, None, None
        unused = [buffer for buffer, references in zip(buffers, _references(buffers)) if references == _UNUSED]
        with _kept_lock:
            _kept[:] = (_kept + unused)[-BUFFERS_AHEAD:]

    # -- the calling thread's side ------------------------------------------------

    def _next_chunk(self) -> tuple[int, mmap.mmap, int]:
        """The next chunk the thread read (waiting for it), after handing it every buffer no view holds."""
        references = _references(self.retired)
        for buffer, count in zip(self.retired, references):
            if count == _UNUSED:
                self._hand(buffer)
        self.retired = [buffer for buffer, count in zip(self.retired, references) if count != _UNUSED]
        if self.in_flight == 0:   # every buffer still held by a view: one more, so the thread goes on
            self._hand(_new_buffers(1)[0])
        item = self.filled.get()
        self.in_flight -= 1
        if isinstance(item, BaseException):
            self.ended = True   # the thread stopped: the window reads on itself
            raise item
        return item

    def _hand(self, buffer: mmap.mmap) -> None:
        self.free.put(buffer)
        self.in_flight += 1

    # -- the reading thread ------------------------------------------------------

    def _read_ahead(self) -> None:
        offset = 0
        while True:
            buffer = self.free.get()
            if buffer is None:
                return
            wanted = min(CHUNK, self.size - offset)
            try:
                count = self._read(buffer, offset, wanted)
            except BaseException as error:  # noqa: BLE001 -- handed over and raised by the walking thread
                self.filled.put(error)
                return
            self.filled.put((offset, buffer, count))
            offset += count
            if count < wanted or offset >= self.size:
                return

    def _read(self, buffer: mmap.mmap, offset: int, wanted: int) -> int:
        """Read ``wanted`` bytes at ``offset`` to ``buffer[RESERVE:]``; the count read (short only if the file
        was cut)."""
        with memoryview(buffer) as whole:
            view = whole[RESERVE:RESERVE + wanted]
            count = 0
            while count < wanted:
                got = os.preadv(self.fd, [view[count:]], offset + count)
                if got == 0:
                    break
                count += got
            view.release()
        return count
