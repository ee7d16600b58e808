"""Reading each file beside a segment on its own: its entries in file order, and what is wrong with them.

Like :class:`kbatch.reading.reader.SegmentReader` for a ``.log``, :func:`read_sidecar`
yields, in file order, an :class:`Entry` per entry of the file and a
:class:`~kbatch.format.findings.Finding` for each range that is no entry (a
preallocated zero tail, a partial entry at the end).  It never raises on bad
bytes.  Offsets are absolute when the file name carries the segment's base
offset (``relative_offset`` is kept too).  What needs the ``.log`` to judge is
in :mod:`kbatch.partition.crosscheck`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from kbatch.files import kinds
from kbatch.format.findings import Finding, Severity
from kbatch.format.structs import CHECKPOINT_VERSION, PRODUCER_SNAPSHOT_VERSION
from kbatch.partition import indexes, snapshots, textfiles
from kbatch.partition.sidefile import Entry, Header, SideFile

__all__ = ["Entry", "Header", "SideFile", "SidecarSummary", "SIDECAR_KINDS", "MAX_BINARY_SIZE", "looks_like",
           "read_sidecar"]


# Kafka opens a binary side file through an int-sized position or mapping: an index is mmapped whole
# (AbstractIndex.createMappedBuffer: FileChannel.map takes at most Integer.MAX_VALUE bytes; segment.index.bytes
# is an INT, LogConfig), TransactionIndex.iterable walks it with an int position, a snapshot is read into one
# byte[] (ProducerStateManager.readSnapshot: Files.readAllBytes).  A larger file is none Kafka can read.
MAX_BINARY_SIZE = (1 << 31) - 1
_MAX_SIZE_SOURCE = {
    kinds.OFFSET_INDEX: "segment.index.bytes is an INT; AbstractIndex maps the file whole",
    kinds.TIME_INDEX: "segment.index.bytes is an INT; AbstractIndex maps the file whole",
    kinds.TXN_INDEX: "TransactionIndex.iterable reads it at an int position",
    kinds.PRODUCER_SNAPSHOT: "ProducerStateManager.readSnapshot reads it into one byte[]",
}


def _too_large(kind: str, source: SideFile) -> Finding | None:
    if kind in _MAX_SIZE_SOURCE and source.size > MAX_BINARY_SIZE:
        return Finding("too-large", 0, 0, source.size, "file",
                       f"at most {MAX_BINARY_SIZE} bytes ({_MAX_SIZE_SOURCE[kind]})",
                       f"{source.size} bytes: not read")
    return None


def read_sidecar(kind: str, data, base_offset: int | None = None) -> Iterator[Entry | Header | Finding]:
    """Every entry (and the header, and every damaged range) of ``data`` read as ``kind``.

    ``data`` is the file's bytes, a seekable stream of them, or a :class:`SideFile`; it is read a window at a
    time, so a file of any size costs the same memory."""
    data = SideFile(data)
    too_large = _too_large(kind, data)
    if too_large is not None:
        return iter([too_large])
    if kind in (kinds.LEADER_EPOCH_CHECKPOINT, kinds.OFFSET_CHECKPOINT):
        return textfiles.checkpoint(kind, data)
    readers = {
        kinds.OFFSET_INDEX: indexes.offset_index,
        kinds.TIME_INDEX: indexes.time_index,
        kinds.TXN_INDEX: indexes.txn_index,
        kinds.PRODUCER_SNAPSHOT: snapshots.producer_snapshot,
        kinds.PARTITION_METADATA: textfiles.partition_metadata,
        kinds.QUORUM_STATE: textfiles.quorum_state,
        kinds.META_PROPERTIES: textfiles.meta_properties,
    }
    return readers[kind](data, base_offset)


SIDECAR_KINDS = (kinds.OFFSET_INDEX, kinds.TIME_INDEX, kinds.TXN_INDEX, kinds.PRODUCER_SNAPSHOT,
                 kinds.LEADER_EPOCH_CHECKPOINT, kinds.OFFSET_CHECKPOINT, kinds.PARTITION_METADATA, kinds.QUORUM_STATE,
                 kinds.META_PROPERTIES)

# Timestamps a time index plausibly holds (2000..2100, ms): what tells one from an offset index by content.
_PLAUSIBLE_MS = (946_684_800_000, 4_102_444_800_000)


def looks_like(data) -> str | None:
    """The kind of file ``data`` (bytes or a stream) reads cleanly as, with at least one entry; None when none fits.

    For a file that is no log segment: "not a log segment: looks like an offset index" says more than a
    list of damage.  The stricter kinds go first (a CRC or a grammar), the bare index layouts last.
    """
    for kind in (kinds.PRODUCER_SNAPSHOT, kinds.LEADER_EPOCH_CHECKPOINT, kinds.OFFSET_CHECKPOINT,
                 kinds.PARTITION_METADATA, kinds.TXN_INDEX, kinds.TIME_INDEX, kinds.OFFSET_INDEX):
        # What a kind's first bytes must be, checked before a whole-file step (a CRC, splitting lines): so
        # ruling a kind out reads only the first bytes of a large file, the rest only for a kind that fits.
        if not SideFile(data).read(0, len(_FIRST_BYTES.get(kind, b""))) == _FIRST_BYTES.get(kind, b""):
            continue
        if _reads_cleanly_as(kind, data):
            return kind
    return None


_FIRST_BYTES = {
    kinds.PRODUCER_SNAPSHOT: PRODUCER_SNAPSHOT_VERSION.to_bytes(2, "big"),
    kinds.LEADER_EPOCH_CHECKPOINT: f"{CHECKPOINT_VERSION}\n".encode(),
    kinds.OFFSET_CHECKPOINT: f"{CHECKPOINT_VERSION}\n".encode(),
    kinds.PARTITION_METADATA: b"version: ",
    kinds.QUORUM_STATE: b"{",
}


def _reads_cleanly_as(kind: str, data: bytes) -> bool:
    """At least one entry and nothing but information (a warning, such as a .txnindex's partial entry, rules
    a kind out too: a file of that kind as Kafka writes it has none); stops at the first, so garbage costs
    little to rule out."""
    entries = 0
    for item in read_sidecar(kind, data):
        findings = [item] if isinstance(item, Finding) else getattr(item, "findings", [])
        if any(finding.severity is not Severity.INFO for finding in findings):
            return False
        if isinstance(item, Entry):
            if kind == kinds.TIME_INDEX and not _PLAUSIBLE_MS[0] <= item.fields["timestamp"] < _PLAUSIBLE_MS[1]:
                return False
            entries += 1
    return entries > 0


@dataclass
class SidecarSummary:
    """What one file beside a segment adds up to (the counterpart of :class:`kbatch.reading.summary.FileSummary`)."""

    path: str
    size: int
    kind: str
    entries: int = 0
    findings: Counter = field(default_factory=Counter)
    errors: int = 0

    def add(self, item: Entry | Header | Finding) -> None:
        if isinstance(item, Entry):
            self.entries += 1
        for finding in [item] if isinstance(item, Finding) else item.findings:
            self.findings[finding.code] += 1
            self.errors += finding.is_damage

    @property
    def damaged(self) -> bool:
        return self.errors > 0

