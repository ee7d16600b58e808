"""The producer state snapshot (``<offset>.snapshot``): a header with a CRC-32C, then one entry per producer.

Read as ProducerStateManager.readSnapshot reads it.
"""

from __future__ import annotations

from typing import Iterator

from kbatch.files import kinds
from kbatch.format.checksums import crc32c
from kbatch.format.findings import Finding
from kbatch.format.structs import (
    PRODUCER_SNAPSHOT_CRC_START,
    PRODUCER_SNAPSHOT_ENTRY,
    PRODUCER_SNAPSHOT_HEADER,
    PRODUCER_SNAPSHOT_VERSION,
)
from kbatch.partition.sidefile import Entry, Header, SideFile, shrunk
from kbatch.reading.window import CHUNK


def producer_snapshot(data: SideFile, base_offset: int | None) -> Iterator[Entry | Header | Finding]:
    head = PRODUCER_SNAPSHOT_HEADER
    first = data.read(0, head.size)
    if len(first) < head.size:
        yield Finding("truncated", 0, 0, len(first), "header", f"a {head.size}-byte snapshot header",
                      f"{len(first)} bytes")
        return
    version, crc, count = head.unpack_from(first)
    computed, read_to = 0, PRODUCER_SNAPSHOT_CRC_START
    for pos, piece in data.pieces(PRODUCER_SNAPSHOT_CRC_START, len(data)):
        computed, read_to = crc32c(piece, computed), pos + len(piece)
    if read_to < len(data):
        yield shrunk(kinds.PRODUCER_SNAPSHOT, data, read_to)
        return
    header = Header(kinds.PRODUCER_SNAPSHOT, {"version": version, "crc": crc, "crc_computed": computed,
                                              "crc_valid": crc == computed, "producer_entries_count": count,
                                              "snapshot_offset": base_offset})
    if version != PRODUCER_SNAPSHOT_VERSION:
        header.findings.append(Finding("unknown-version", 0, 0, 2, "version", str(PRODUCER_SNAPSHOT_VERSION),
                                       str(version)))
    if crc != computed:
        header.findings.append(Finding("crc-mismatch", 0, head.offsets["crc"], 4, "crc",
                                       f"{computed} (computed, CRC-32C of bytes {PRODUCER_SNAPSHOT_CRC_START}..end)",
                                       f"{crc} (stored)"))
    available = (len(data) - head.size) // PRODUCER_SNAPSHOT_ENTRY.size
    if count < 0 or count > available:
        header.findings.append(Finding("bad-length", 0, head.offsets["producer_entries_count"], 4,
                                       "producer_entries_count",
                                       f"0..{available} (the whole entries in the file)", str(count)))
    yield header
    if version != PRODUCER_SNAPSHOT_VERSION:
        return   # ProducerStateManager.readSnapshot stops here: another version has another layout
    layout = PRODUCER_SNAPSHOT_ENTRY
    shown = min(max(count, 0), available)
    end, slot = head.size + shown * layout.size, 0
    for pos, piece in data.pieces(head.size, end, CHUNK - CHUNK % layout.size):
        for values in layout.codec.iter_unpack(memoryview(piece)[:len(piece) - len(piece) % layout.size]):
            yield Entry(kinds.PRODUCER_SNAPSHOT, slot, pos, layout.size, dict(zip(layout.names, values)))
            slot, pos = slot + 1, pos + layout.size
    if slot < shown:
        yield shrunk(kinds.PRODUCER_SNAPSHOT, data, head.size + slot * layout.size)
        return
    if end < len(data):
        code = "truncated" if count > available else "trailing-bytes"
        yield Finding(code, end, end, len(data) - end, "producer_entries",
                      f"{count} entries of {layout.size} bytes", f"{len(data) - end} bytes " +
                      ("of a partial entry" if code == "truncated" else "after the last entry"))
