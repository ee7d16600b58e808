"""The bytes of a seekable stream around the reader's position, in one reused buffer."""

from __future__ import annotations

from typing import BinaryIO

CHUNK = 4 * 1024 * 1024   # bytes read at a time (and scanned at a time when resyncing)


class Window:
    """A sliding view of a stream: reads in chunks, keeps the bytes still ahead of the reader."""

    def __init__(self, stream: BinaryIO, size: int):
        self.stream = stream
        self.size = size            # bytes in the stream
        self.buf = b""
        self.base = 0               # stream position of buf[0]
        self._stream_pos = None

    def view(self, pos: int, size: int) -> tuple[bytes, int, int]:
        """(buffer, index, available): buffer[index:index+available] are the bytes at ``pos``."""
        size = max(0, min(size, self.size - pos))
        start = pos - self.base
        if 0 <= start and start + size <= len(self.buf):
            return self.buf, start, size
        # The bytes still ahead are read again with the rest: one copy out of the page cache, where
        # joining them to the next chunk copied all of it a second time.
        self.buf, self.base = self._read(pos, max(size, CHUNK)), pos
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

    def _read(self, pos: int, size: int) -> bytes:
        if self._stream_pos != pos:
            self.stream.seek(pos)
        parts, wanted = [], min(size, self.size - pos)
        while wanted > 0:
            part = self.stream.read(wanted)
            if not part:
                break
            parts.append(part)
            wanted -= len(part)
        data = b"".join(parts)
        self._stream_pos = pos + len(data)
        return data
