"""Telling a file that is no log segment from a damaged one, before reading it as a segment."""

from __future__ import annotations

import io
import mmap
from dataclasses import dataclass

from kbatch.files import kinds

SNIFF_LIMIT = 64 * 1024 * 1024   # a file beside a segment is smaller; a larger one is read as a segment


def looks_like_other_kind(stream) -> str | None:
    """The kind a stream reads cleanly as when no log entry verifies at its start; None otherwise."""
    from kbatch.reading.reader import SegmentReader

    size = stream.seek(0, 2)
    if size == 0 or size > SNIFF_LIMIT or SegmentReader(stream, size=size).entry_verifies_at(0):
        stream.seek(0)
        return None
    from kbatch.partition.sidecars import looks_like   # (loaded only for a file whose first entry fails)

    # A map of the file: the sniff reads only the bytes it looks at (a kind is ruled out at its first
    # damage), not the whole file.
    try:
        data = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        stream.seek(0)
        data = stream.read(size)
    try:
        return looks_like(data)
    finally:
        if isinstance(data, mmap.mmap):
            try:
                data.close()
            except BufferError:   # a view of it still lives somewhere: the map goes when that does
                pass
        stream.seek(0)


@dataclass(frozen=True)
class NotALogSegment:
    """The outcome of dumping a file that is no log segment: the exit status says trouble, not damage."""

    path: str
    kind: str
    damaged: bool = False
    unreadable: bool = True

    @property
    def message(self) -> str:
        from kbatch.output.visible import visible

        return (f"kbatch: {visible(self.path)}: not a log segment: looks like {kinds.DESCRIPTIONS[self.kind]} "
                f"(--kind {self.kind} reads it as one)")
