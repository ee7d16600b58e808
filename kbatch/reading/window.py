"""The bytes of a seekable stream around the reader's position, read into reused page-aligned buffers."""

from __future__ import annotations

import mmap
import os
import sys
import threading
from typing import Protocol

# Bytes read at a time (and scanned at a time when resyncing).  2 MiB holds the largest batch a broker
# takes by default (max.message.bytes: 1 MiB + 12) with room to spare; 4 MiB measured 8% slower on a
# --deep run of 256 MiB in 16 KiB batches, and 8 MiB more in each process.
CHUNK = 2 * 1024 * 1024
PAGE = mmap.PAGESIZE
BUFFER_SIZE = CHUNK + PAGE   # a chunk at any place in a page
_NO_BYTES = memoryview(b"")   # a window's bytes before its first read, and while it lets go of a buffer


def page_aligned_buffer(size: int) -> mmap.mmap:
    """A writable buffer that starts on a page boundary, its pages faulted in with one call (Linux).

    Where a read lands matters: on AMD EPYC the kernel's copy out of the page cache runs at a fifth of
    its speed when the destination lies 1 to 31 bytes past the source's place in its page (measured:
    32 MiB in reads of 4 MiB, 21 ms at those distances, 4 ms at 0 and at 32 to 4095).  A bytes object or
    a bytearray starts 16 or 48 bytes past a page boundary, so reads at some file positions hit that.  A
    buffer that starts on a page takes every read at the very place its bytes have in the file's page.
    """
    if not hasattr(mmap, "MAP_ANONYMOUS"):   # Windows: mmap(-1, ...) is anonymous memory, on a page too
        return mmap.mmap(-1, size)
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0))


class Stream(Protocol):
    """What a window reads: a binary stream's seek and read (a file, a BytesIO, a reader.BufferStream)."""

    def seek(self, position: int, whence: int = os.SEEK_SET, /) -> int: ...

    def read(self, size: int = -1, /) -> bytes: ...


class EntryCut(Exception):
    """The bytes of an entry framed whole ended early: the file was cut while it was read."""


class Window:
    """A sliding view of a stream: reads in chunks, keeps the bytes still ahead of the reader.

    The bytes it hands out are read-only memoryviews into page-aligned buffers (:class:`Buffers`), which are
    written again only once no view of them is left.
    """

    def __init__(self, stream: Stream, size: int, ahead=None):
        self.stream = stream
        self.size = size            # bytes in the stream (fewer once a read comes up short: :meth:`_ended`)
        self.opened_size = size     # ... as it was when the reading began
        self.buf = _NO_BYTES        # the window's bytes: a memoryview into a buffer of BUFFERS
        self.base = 0               # stream position of buf[0]
        self._stream_pos: int | None = None
        self.ahead = ahead          # a kbatch.reading.readahead.ReadAhead: the stream read ahead on a thread

    def view(self, pos: int, size: int) -> tuple[memoryview, int, int]:
        """(buffer, index, available): buffer[index:index+available] are the bytes at ``pos``."""
        size = max(0, min(size, self.size - pos))
        start = pos - self.base
        if 0 <= start and start + size <= len(self.buf):
            return self.buf, start, size
        # The bytes still ahead are read again with the rest: one copy out of the page cache, where
        # joining them to the next chunk copied all of it a second time.  The window lets go of its own
        # view first, so that the buffer under it can take the read.
        self.buf = _NO_BYTES
        if self.ahead is not None:
            ahead = self.ahead.bytes_at(pos, size)
            if ahead is not None:
                self.buf, self.base = ahead, pos
                return self.buf, 0, size
        self.buf, self.base = self._read_into_buffer(pos, max(size, CHUNK)), pos
        return self.buf, 0, min(size, len(self.buf))

    def read_bytes(self, pos: int, size: int) -> bytes:
        """A copy of the stream's bytes at ``pos`` (fewer at the end of the stream)."""
        buf, i, available = self.view(pos, size)
        return bytes(buf[i:i + available])

    def pieces(self, start: int, stop: int, size: int = CHUNK):
        """The stream's bytes in ``[start, stop)``, a piece at a time, read past the window (which stays as it is)."""
        while start < stop:
            piece = self._read(start, min(size, stop - start))
            if not piece:
                return
            yield start, piece
            start += len(piece)

    def _read_into_buffer(self, pos: int, size: int) -> memoryview:
        """The stream's ``size`` bytes at ``pos`` (fewer at its end), read to the place in a page they have in
        the file."""
        wanted = max(0, min(size, self.size - pos))
        if wanted == 0:   # at (or past) the end: nothing to read, and no buffer of no size
            return memoryview(b"")
        skew = pos % PAGE
        target = BUFFERS.take(skew + wanted)[skew:skew + wanted]
        readinto = getattr(self.stream, "readinto", None)
        if readinto is None:   # a stream that can only read: its bytes copied in
            data = self._read(pos, wanted)
            target[:len(data)] = data
            return target[:len(data)].toreadonly()
        self._seek(pos)
        count = 0
        while count < wanted:
            got = readinto(target[count:])
            if not got:
                break
            count += got
        self._stream_pos = pos + count
        if count < wanted:
            self._ended(pos + count)
        return target[:count].toreadonly()

    def close(self) -> None:
        """Stop reading ahead (the buffers it read into go to the next file's)."""
        if self.ahead is not None:
            self.ahead.close()
            self.ahead = None

    @property
    def shrunk(self) -> bool:
        """Whether the stream ended before its size when opened: the file was truncated while it was read."""
        return self.size < self.opened_size

    def _ended(self, end: int) -> None:
        """A read came up short at ``end``: the stream ends there now (a file cut while it is read), and every
        walk over it stops there as at the end of the input."""
        self.size = min(self.size, end)

    def _seek(self, pos: int) -> None:
        if self._stream_pos != pos:
            self.stream.seek(pos)
            self._stream_pos = pos

    def _read(self, pos: int, size: int) -> bytes:
        self._seek(pos)
        parts: list[bytes] = []
        wanted = min(size, self.size - pos)
        while wanted > 0:
            part = self.stream.read(wanted)
            if not part:
                self._ended(pos + sum(map(len, parts)))
                break
            parts.append(part)
            wanted -= len(part)
        data = b"".join(parts)
        self._stream_pos = pos + len(data)
        return data


class Buffers:
    """The page-aligned buffers that windows read into, reused once no view of their bytes is left.

    A new buffer costs a page fault a page, about a quarter of what reading a chunk into it costs; so the
    process keeps a few (a window's current chunk, a spare for a batch still holding a view of the chunk
    before, and those of a second window, as ``diff`` has) and takes a kept one whenever it is free.
    """

    KEPT = 4

    def __init__(self):
        self.unused_refs = None   # sys.getrefcount of a kept buffer that nothing else refers to
        self.forget()

    def forget(self) -> None:
        """Keep no buffer.  A forked child starts so: the parent's buffers are its pages too until written,
        and each side's first write to a page shared so copies it."""
        self.kept: list[mmap.mmap] = []
        self.lock = threading.Lock()

    def take(self, size: int) -> memoryview:
        """A writable view of a buffer of at least ``size`` bytes that no other view refers to."""
        if size > BUFFER_SIZE:   # an entry larger than a chunk: a buffer of its own, not kept
            return memoryview(page_aligned_buffer(size))
        with self.lock:   # a buffer found free is taken (viewed) before another thread looks
            for index in range(len(self.kept)):
                if self._unused(index):
                    return memoryview(self.kept[index])
            if size < CHUNK:   # a small file, or a file's tail: a buffer its size (pages cost), not kept
                return memoryview(page_aligned_buffer(size))
            if len(self.kept) == self.KEPT:   # all in use: the oldest lives on as long as its views
                del self.kept[0]
            self.kept.append(page_aligned_buffer(BUFFER_SIZE))
            if self.unused_refs is None and hasattr(sys, "getrefcount"):
                self.unused_refs = sys.getrefcount(self.kept[-1])   # nothing but the list refers to it yet
            return memoryview(self.kept[-1])

    def _unused(self, index: int) -> bool:
        """Whether nothing but this list refers to ``kept[index]``: no view of its bytes is left anywhere.

        Every view handed out holds the buffer through the memoryview it was cut from, so the buffer's
        reference count says so.  It is read exactly as when the first buffer was new (:meth:`take`), so
        that the interpreter counts a call's argument the same way in both.
        """
        return self.unused_refs is not None and sys.getrefcount(self.kept[index]) == self.unused_refs


BUFFERS = Buffers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=BUFFERS.forget)
