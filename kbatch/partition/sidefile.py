"""What every reader of a file beside a segment shares: the file read a window at a time, and what it yields.

:class:`SideFile` holds the bytes; each reader (:mod:`.indexes`, :mod:`.snapshots`, :mod:`.textfiles`) yields
an :class:`Entry` per entry, a :class:`Header` where the file has one, and a
:class:`~kbatch.format.findings.Finding` for each range that is no entry.  :mod:`.sidecars` picks the reader.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from typing import Iterator

from kbatch.format.findings import Finding
from kbatch.reading.window import CHUNK, Window


@dataclass(slots=True)
class Entry:
    """One entry of a file beside a segment: an index slot, an aborted transaction, a producer, a line."""

    kind: str
    slot: int                      # its number in the file, from 0
    pos: int                       # file position of its first byte
    size: int
    fields: dict                   # Kafka's names, snake_case, in layout order
    findings: list[Finding] = field(default_factory=list)

    @property
    def is_damaged(self) -> bool:
        return any(finding.is_damage for finding in self.findings)


@dataclass(slots=True)
class Header:
    """What a file says about itself before its entries: a snapshot's version and CRC, a checkpoint's count."""

    kind: str
    fields: dict
    findings: list[Finding] = field(default_factory=list)


class SideFile:
    """The bytes of a file beside a segment, read a window at a time as a segment is
    (:class:`kbatch.reading.window.Window`): memory stays a window's, whatever the file's size.

    Made from the bytes themselves (a test, the sniff's map) or from a seekable stream.  A stream that
    ends before the size it had when opened (the file shrank while read) gives fewer bytes: the readers
    take that as the file ending there.
    """

    def __init__(self, data):
        if isinstance(data, SideFile):
            data = data.data if data.window is None else data.window.stream
        if hasattr(data, "seek") and not isinstance(data, mmap.mmap):
            self.window, self.data = Window(data, data.seek(0, 2)), None
            self.size = self.window.size
        else:
            self.window, self.data = None, data
            self.size = len(data)

    def __len__(self) -> int:
        return self.size

    def read(self, pos: int, size: int) -> bytes:
        """A copy of the bytes at ``pos``: ``size`` of them, fewer at the end (or where the file shrank)."""
        if self.window is None:
            return bytes(self.data[pos:pos + size])
        return self.window.read_bytes(pos, size)

    def pieces(self, start: int, stop: int, size: int = CHUNK) -> Iterator[tuple[int, bytes]]:
        """The bytes in ``[start, stop)`` a piece at a time; a piece is a multiple of ``size`` unless it is the last."""
        while start < stop:
            piece = self.read(start, min(size, stop - start))
            if not piece:
                return
            yield start, piece
            if len(piece) < min(size, stop - start):
                return   # the file ends here (it shrank while read)
            start += len(piece)


def shrunk(kind: str, source: SideFile, pos: int) -> Finding:
    """The file ended at ``pos``, before the size it had when opened: it shrank while read."""
    return Finding("truncated", pos, pos, 0, "file", f"{source.size} bytes (the size when opened)",
                   f"the end of the file at {pos}: it shrank while read")

