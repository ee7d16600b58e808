"""Reading each file beside a segment on its own: its entries in file order, and what is wrong with them.

Like :class:`kbatch.reader.SegmentReader` for a ``.log``, :func:`read_sidecar`
yields, in file order, an :class:`Entry` per entry of the file and a
:class:`~kbatch.findings.Finding` for each range that is no entry (a
preallocated zero tail, a partial entry at the end).  It never raises on bad
bytes.  Offsets are absolute when the file name carries the segment's base
offset (``relative_offset`` is kept too).  What needs the ``.log`` to judge is
in :mod:`kbatch.partition.crosscheck`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from ..checksums import crc32c
from ..findings import Finding
from ..structs import (
    ABORTED_TXN_ENTRY,
    ABORTED_TXN_VERSION,
    CHECKPOINT_FIELDS,
    CHECKPOINT_VERSION,
    OFFSET_INDEX_ENTRY,
    PARTITION_METADATA_LINE,
    PARTITION_METADATA_VERSION,
    PRODUCER_SNAPSHOT_CRC_START,
    PRODUCER_SNAPSHOT_ENTRY,
    PRODUCER_SNAPSHOT_HEADER,
    PRODUCER_SNAPSHOT_VERSION,
    TIME_INDEX_ENTRY,
    TOPIC_ID,
    WHITESPACE,
)
from . import kinds

MAX_SIDECAR_SIZE = 1 << 30   # an index is at most segment.index.bytes (10 MiB by default); read whole


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


def read_sidecar(kind: str, data: bytes, base_offset: int | None = None) -> Iterator[Entry | Header | Finding]:
    """Every entry (and the header, and every damaged range) of ``data`` read as ``kind``."""
    if kind in (kinds.LEADER_EPOCH_CHECKPOINT, kinds.OFFSET_CHECKPOINT):
        return _checkpoint(kind, data)
    readers = {
        kinds.OFFSET_INDEX: _offset_index,
        kinds.TIME_INDEX: _time_index,
        kinds.TXN_INDEX: _txn_index,
        kinds.PRODUCER_SNAPSHOT: _producer_snapshot,
        kinds.PARTITION_METADATA: _partition_metadata,
    }
    return readers[kind](data, base_offset)


SIDECAR_KINDS = (kinds.OFFSET_INDEX, kinds.TIME_INDEX, kinds.TXN_INDEX, kinds.PRODUCER_SNAPSHOT,
                 kinds.LEADER_EPOCH_CHECKPOINT, kinds.OFFSET_CHECKPOINT, kinds.PARTITION_METADATA)

# Timestamps a time index plausibly holds (2000..2100, ms): what tells one from an offset index by content.
_PLAUSIBLE_MS = (946_684_800_000, 4_102_444_800_000)


def looks_like(data: bytes) -> str | None:
    """The kind of file ``data`` reads cleanly as, with at least one entry; None when none fits.

    For a file that is no log segment: "not a log segment: looks like an offset index" says more than a
    list of damage.  The stricter kinds go first (a CRC or a grammar), the bare index layouts last.
    """
    for kind in (kinds.PRODUCER_SNAPSHOT, kinds.LEADER_EPOCH_CHECKPOINT, kinds.OFFSET_CHECKPOINT,
                 kinds.PARTITION_METADATA, kinds.TXN_INDEX, kinds.TIME_INDEX, kinds.OFFSET_INDEX):
        # What a kind's first bytes must be, checked before a whole-file step (a CRC, splitting lines): so
        # ruling a kind out reads only the first bytes of a large file, the rest only for a kind that fits.
        if not bytes(data[:len(_FIRST_BYTES.get(kind, b""))]) == _FIRST_BYTES.get(kind, b""):
            continue
        if _reads_cleanly_as(kind, data):
            return kind
    return None


_FIRST_BYTES = {
    kinds.PRODUCER_SNAPSHOT: PRODUCER_SNAPSHOT_VERSION.to_bytes(2, "big"),
    kinds.LEADER_EPOCH_CHECKPOINT: f"{CHECKPOINT_VERSION}\n".encode(),
    kinds.OFFSET_CHECKPOINT: f"{CHECKPOINT_VERSION}\n".encode(),
    kinds.PARTITION_METADATA: b"version: ",
}


def _reads_cleanly_as(kind: str, data: bytes) -> bool:
    """At least one entry and no damage; stops at the first damage, so garbage costs little to rule out."""
    entries = 0
    for item in read_sidecar(kind, data):
        findings = [item] if isinstance(item, Finding) else getattr(item, "findings", [])
        if any(finding.is_damage for finding in findings):
            return False
        if isinstance(item, Entry):
            if kind == kinds.TIME_INDEX and not _PLAUSIBLE_MS[0] <= item.fields["timestamp"] < _PLAUSIBLE_MS[1]:
                return False
            entries += 1
    return entries > 0


# -- fixed-size entries -----------------------------------------------------------------------------------


def _slots(kind: str, data: bytes, entry_size: int) -> Iterator[int | Finding]:
    """Each slot position up to the zero tail; then the zero tail and a partial entry as findings.

    A run of all-zero slots at the end is what a broker leaves preallocated in an active segment's index
    (AbstractIndex: the file is set to its maximum size and filled from the front).  No real entry is all
    zero: an offset index entry at position 0 would need more than index.interval.bytes before it.
    """
    whole = len(data) - len(data) % entry_size
    used = -(-_end_of_nonzero(data, whole) // entry_size) * entry_size
    yield from range(0, used, entry_size)
    if used < whole:
        yield Finding("zero-tail", used, used, whole - used, "tail",
                      f"{kinds.DESCRIPTIONS[kind]} entry or the end of the file",
                      f"{(whole - used) // entry_size} preallocated zero slots ({whole - used} bytes)")
    if whole < len(data):
        yield Finding("partial-entry", whole, whole, len(data) - whole, "entry",
                      f"whole {entry_size}-byte entries (the file size a multiple of {entry_size})",
                      f"{len(data) - whole} bytes left over")


def _end_of_nonzero(data, end: int, chunk: int = 1 << 16) -> int:
    """Where the run of zero bytes that ends at ``end`` starts: read from the end back, a chunk at a time."""
    while end > 0:
        start = max(0, end - chunk)
        kept = len(bytes(data[start:end]).rstrip(b"\x00"))
        if kept:
            return start + kept
        end = start
    return 0


def _absolute(base_offset: int | None, relative: int) -> int | None:
    return None if base_offset is None else base_offset + relative


def _offset_index(data: bytes, base_offset: int | None) -> Iterator[Entry | Finding]:
    layout = OFFSET_INDEX_ENTRY
    previous = None
    for slot, pos in enumerate(_slots(kinds.OFFSET_INDEX, data, layout.size)):
        if isinstance(pos, Finding):
            yield pos
            continue
        relative, position = layout.unpack_from(data, pos)
        entry = Entry(kinds.OFFSET_INDEX, slot, pos, layout.size,
                      {"offset": _absolute(base_offset, relative), "relative_offset": relative, "position": position})
        where = pos + layout.offsets["relative_offset"]
        if relative < 0:
            # OffsetIndex.sanityCheck: "the last offset ... is less than the base offset"
            entry.findings.append(Finding("offset-below-base", pos, where, 4, "relative_offset",
                                          "0 or more (an offset at or above the segment's base offset)",
                                          str(relative)))
        if previous is not None and relative <= previous[0]:
            entry.findings.append(Finding("index-order", pos, where, 4, "relative_offset",
                                          f"more than {previous[0]} (the previous entry's; OffsetIndex.append)",
                                          str(relative)))
        if position < 0 or (previous is not None and position <= previous[1]):
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["position"], 4, "position",
                                          f"more than {previous[1] if previous else -1} (positions increase)",
                                          str(position)))
        previous = (relative, position)
        yield entry


def _time_index(data: bytes, base_offset: int | None) -> Iterator[Entry | Finding]:
    layout = TIME_INDEX_ENTRY
    previous = None
    for slot, pos in enumerate(_slots(kinds.TIME_INDEX, data, layout.size)):
        if isinstance(pos, Finding):
            yield pos
            continue
        timestamp, relative = layout.unpack_from(data, pos)
        entry = Entry(kinds.TIME_INDEX, slot, pos, layout.size,
                      {"timestamp": timestamp, "offset": _absolute(base_offset, relative),
                       "relative_offset": relative})
        where = pos + layout.offsets["relative_offset"]
        if relative < 0:
            entry.findings.append(Finding("offset-below-base", pos, where, 4, "relative_offset",
                                          "0 or more (an offset at or above the segment's base offset)",
                                          str(relative)))
        if previous is not None and timestamp <= previous[0]:
            # TimeIndex.maybeAppend writes only a timestamp larger than the last entry's.
            entry.findings.append(Finding("index-order", pos, pos, 8, "timestamp",
                                          f"more than {previous[0]} (the previous entry's; TimeIndex.maybeAppend)",
                                          str(timestamp)))
        if previous is not None and relative < previous[1]:
            entry.findings.append(Finding("index-order", pos, where, 4, "relative_offset",
                                          f"{previous[1]} or more (the previous entry's)", str(relative)))
        previous = (timestamp, relative)
        yield entry


def _txn_index(data: bytes, base_offset: int | None) -> Iterator[Entry | Finding]:
    layout = ABORTED_TXN_ENTRY
    previous_last = None
    for slot, pos in enumerate(_slots(kinds.TXN_INDEX, data, layout.size)):
        if isinstance(pos, Finding):
            yield pos
            continue
        version, producer_id, first_offset, last_offset, last_stable_offset = layout.unpack_from(data, pos)
        entry = Entry(kinds.TXN_INDEX, slot, pos, layout.size,
                      {"version": version, "producer_id": producer_id, "first_offset": first_offset,
                       "last_offset": last_offset, "last_stable_offset": last_stable_offset})
        if data[pos] != ABORTED_TXN_VERSION:   # AbortedTxn.version() reads the first byte only
            entry.findings.append(Finding("unknown-version", pos, pos, 2, "version", str(ABORTED_TXN_VERSION),
                                          str(version)))
        if first_offset > last_offset:
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["first_offset"], 8,
                                          "first_offset", f"at most {last_offset} (the lastOffset)",
                                          str(first_offset)))
        if previous_last is not None and last_offset <= previous_last:
            # TransactionIndex.append: "the last offset of appended transactions must increase"
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["last_offset"], 8,
                                          "last_offset", f"more than {previous_last} (the previous entry's)",
                                          str(last_offset)))
        if last_stable_offset > last_offset + 1:
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["last_stable_offset"], 8,
                                          "last_stable_offset", f"at most {last_offset + 1} (lastOffset + 1)",
                                          str(last_stable_offset)))
        previous_last = last_offset
        yield entry


# -- the producer state snapshot --------------------------------------------------------------------------


def _producer_snapshot(data: bytes, base_offset: int | None) -> Iterator[Entry | Header | Finding]:
    head = PRODUCER_SNAPSHOT_HEADER
    if len(data) < head.size:
        yield Finding("truncated", 0, 0, len(data), "header", f"a {head.size}-byte snapshot header",
                      f"{len(data)} bytes")
        return
    version, crc, count = head.unpack_from(data)
    computed = crc32c(memoryview(data)[PRODUCER_SNAPSHOT_CRC_START:])
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
    for slot in range(shown):
        pos = head.size + slot * layout.size
        values = layout.unpack_from(data, pos)
        yield Entry(kinds.PRODUCER_SNAPSHOT, slot, pos, layout.size, dict(zip(layout.names, values)))
    end = head.size + shown * layout.size
    if end < len(data):
        code = "truncated" if count > available else "trailing-bytes"
        yield Finding(code, end, end, len(data) - end, "producer_entries",
                      f"{count} entries of {layout.size} bytes", f"{len(data) - end} bytes " +
                      ("of a partial entry" if code == "truncated" else "after the last entry"))


# -- text files -------------------------------------------------------------------------------------------


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    pos = 0
    for line in bytes(data).splitlines(keepends=True):   # bytes of a map too (a text file is small)
        yield pos, line
        pos += len(line)


def _bad(pos: int, line: bytes, field_name: str, expected: str) -> Finding:
    """The line as kbatch shows bytes (kbatch.render.values.bytes_text): quoted text where it is printable
    UTF-8, else hex, each escaped once (the UTF-8 decoder's backslashes under repr's were "\\xe3…\x7f")."""
    from ..render.values import bytes_text

    line_text = line.rstrip(b"\r\n")
    shown = bytes_text(line_text, limit=64)
    return Finding("bad-checkpoint", pos, pos, len(line), field_name, expected,
                   repr(shown) if not shown.startswith("0x") else shown)


def _checkpoint(kind: str, data: bytes) -> Iterator[Entry | Header | Finding]:
    """CheckpointFile.CheckpointReadBuffer.read: a version line, a count line, then the entries."""
    fields = CHECKPOINT_FIELDS[kind]
    lines = list(_lines(data))
    header = Header(kind, {"version": None, "entry_count": None})
    if len(lines) < 2:
        header.findings.append(Finding("truncated", 0, 0, len(data), "header",
                                       "a version line and an entry count line", f"{len(lines)} lines"))
        yield header
        return
    (version_pos, version_line), (count_pos, count_line) = lines[:2]
    try:
        header.fields["version"] = int(version_line)
    except ValueError:
        header.findings.append(_bad(version_pos, version_line, "version", str(CHECKPOINT_VERSION)))
    if header.fields["version"] not in (None, CHECKPOINT_VERSION):
        header.findings.append(Finding("unknown-version", version_pos, version_pos, len(version_line), "version",
                                       str(CHECKPOINT_VERSION), str(header.fields["version"])))
    try:
        header.fields["entry_count"] = int(count_line)
    except ValueError:
        header.findings.append(_bad(count_pos, count_line, "entry_count", "an integer"))
    yield header
    entries = lines[2:]
    for slot, (pos, line) in enumerate(entries):
        parts = WHITESPACE.split(line.decode("utf-8", "replace").strip())
        entry = Entry(kind, slot, pos, len(line), {name: None for name, _ in fields})
        if len(parts) != len(fields):
            entry.findings.append(_bad(pos, line, "entry", " ".join(name for name, _ in fields)))
        else:
            try:
                entry.fields = {name: convert(part) for (name, convert), part in zip(fields, parts)}
            except ValueError:
                entry.findings.append(_bad(pos, line, "entry", " ".join(name for name, _ in fields)))
        yield entry
    expected = header.fields["entry_count"]
    if expected is not None and expected != len(entries):
        # CheckpointFile: "Expected N entries in checkpoint file ..., but found only M"
        yield Finding("bad-checkpoint", count_pos, count_pos, len(count_line), "entry_count",
                      f"{len(entries)} (the entry lines that follow)", str(expected))


def _partition_metadata(data: bytes, base_offset: int | None) -> Iterator[Entry | Finding]:
    """PartitionMetadataReadBuffer.read: ``version: 0`` then ``topic_id: <Uuid>``, as one entry."""
    lines = list(_lines(data))
    entry = Entry(kinds.PARTITION_METADATA, 0, 0, len(data), {"version": None, "topic_id": None})
    for slot, (key, wanted) in enumerate((("version", str(PARTITION_METADATA_VERSION)),
                                          ("topic_id", "a 22-character topic id"))):
        if slot >= len(lines):
            entry.findings.append(Finding("truncated", 0, len(data), 0, key, f"a line '{key}: ...'",
                                          "the end of the file"))
            break
        pos, line = lines[slot]
        match = PARTITION_METADATA_LINE.match(line.decode("utf-8", "replace").rstrip("\r\n"))
        value = match["value"] if match and match["key"] == key else None
        if value is None or (key == "version" and value != wanted) or (key == "topic_id" and not TOPIC_ID.match(value)):
            entry.findings.append(_bad(pos, line, key, f"{key}: {wanted}"))
        entry.fields[key] = int(value) if key == "version" and value is not None and value.isdigit() else value
    rest = sum(len(line) for _, line in lines[2:])
    if rest:
        entry.findings.append(Finding("trailing-bytes", 0, lines[2][0], rest, "file",
                                      "nothing after the topic_id line", f"{rest} bytes"))
    yield entry


@dataclass
class SidecarSummary:
    """What one file beside a segment adds up to (the counterpart of :class:`kbatch.summary.FileSummary`)."""

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

    def as_dict(self) -> dict:
        return {"file": self.path, "size": self.size, "kind": self.kind, "entry_count": self.entries,
                "findings": dict(sorted(self.findings.items())), "errors": self.errors, "damaged": self.damaged}


def read_whole(stream, limit: int = MAX_SIDECAR_SIZE) -> bytes:
    """A sidecar's bytes (they are small: an index is at most segment.index.bytes)."""
    stream.seek(0)
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes: too large for a file beside a segment")
    return data
