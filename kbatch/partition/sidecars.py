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

import re
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
    PARTITION_METADATA_SEPARATOR,
    PARTITION_METADATA_VERSION,
    PRODUCER_SNAPSHOT_CRC_START,
    PRODUCER_SNAPSHOT_ENTRY,
    PRODUCER_SNAPSHOT_HEADER,
    PRODUCER_SNAPSHOT_VERSION,
    TIME_INDEX_ENTRY,
    TOPIC_ID,
    WHITESPACE,
    ZERO_TOPIC_ID,
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


def _slots(kind: str, data: bytes, entry_size: int, preallocated: bool = True) -> Iterator[int | Finding]:
    """Each slot position up to the zero tail; then the zero tail and a partial entry as findings.

    A run of all-zero slots at the end is what a broker leaves preallocated in an active segment's index
    (AbstractIndex: the file is set to its maximum size and filled from the front).  No real entry is all
    zero: an offset index entry at position 0 would need more than index.interval.bytes before it.  A file
    Kafka only appends to (``preallocated`` False: the .txnindex) has no zero tail: its zeros are entries.
    """
    whole = len(data) - len(data) % entry_size
    used = -(-_end_of_nonzero(data, whole) // entry_size) * entry_size if preallocated else whole
    yield from range(0, used, entry_size)
    if used < whole:
        yield Finding("zero-tail", used, used, whole - used, "tail",
                      f"{kinds.DESCRIPTIONS[kind]} entry or the end of the file",
                      f"{(whole - used) // entry_size} preallocated zero slots ({whole - used} bytes)")
    if whole < len(data):
        # TransactionIndex reads an entry only while a whole one is left; the index files must be whole.
        code = "partial-entry" if preallocated else "ignored-partial-entry"
        yield Finding(code, whole, whole, len(data) - whole, "entry",
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
    # TransactionIndex only appends (openChannel positions at the end; nothing preallocates it).
    for slot, pos in enumerate(_slots(kinds.TXN_INDEX, data, layout.size, preallocated=False)):
        if isinstance(pos, Finding):
            yield pos
            continue
        version, producer_id, first_offset, last_offset, last_stable_offset = layout.unpack_from(data, pos)
        entry = Entry(kinds.TXN_INDEX, slot, pos, layout.size,
                      {"version": version, "producer_id": producer_id, "first_offset": first_offset,
                       "last_offset": last_offset, "last_stable_offset": last_stable_offset})
        if version != ABORTED_TXN_VERSION:
            # TransactionIndex.iterable: an int16 version outside AbortedTxn's supported range (0..0) throws.
            entry.findings.append(Finding("unknown-version", pos, pos, 2, "version", str(ABORTED_TXN_VERSION),
                                          str(version)))
        if base_offset is not None and last_offset < base_offset:
            # TransactionIndex.sanityCheck: "Last offset of aborted transaction ... is less than start offset"
            entry.findings.append(Finding("offset-below-base", pos, pos + layout.offsets["last_offset"], 8,
                                          "last_offset", f"{base_offset} or more (the segment's base offset; "
                                          "TransactionIndex.sanityCheck)", str(last_offset)))
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
    """Each line with its terminator, as BufferedReader.readLine splits them (at \\n, \\r or \\r\\n)."""
    pos = 0
    for line in bytes(data).splitlines(keepends=True):   # bytes of a map too (a text file is small)
        yield pos, line
        pos += len(line)


def _text(line: bytes) -> bytes:
    return line.rstrip(b"\r\n")


# Integer.parseInt / Long.parseLong: an optional sign and ASCII digits, nothing else (no blank, no "_").
_JAVA_INTEGER = re.compile(rb"^[+-]?[0-9]+$")
_JAVA_BOUNDS = {32: (-(1 << 31), (1 << 31) - 1), 64: (-(1 << 63), (1 << 63) - 1)}


def java_integer(text: bytes, bits: int) -> int | None:
    """``text`` as Java's Integer.parseInt (bits 32) or Long.parseLong (64) reads it; None where Java throws.

    Its digits are counted before they are converted, so a line of a million digits costs one scan, not a
    conversion (and never Python's limit on the digits of an int)."""
    if not _JAVA_INTEGER.match(text):
        return None
    sign, digits = (text[:1], text[1:]) if text[:1] in b"+-" else (b"", text)
    digits = digits.lstrip(b"0") or b"0"
    if len(digits) > 19:   # more than any long has
        return None
    value = -int(digits) if sign == b"-" else int(digits)
    low, high = _JAVA_BOUNDS[bits]
    return value if low <= value <= high else None


def _java_split(text: bytes, separator: re.Pattern) -> list[bytes]:
    """String.split: a leading separator leaves an empty first part, trailing empty parts are dropped."""
    parts = separator.split(text)
    while parts and parts[-1] == b"":
        parts.pop()
    return parts or [b""]


def _bad(pos: int, line: bytes, field_name: str, expected: str) -> Finding:
    shown = _shown(line)
    return Finding("bad-checkpoint", pos, pos, len(line), field_name, expected, repr(shown))


def _shown(line: bytes, limit: int = 80) -> str:
    text = _text(line)
    shown = text[:limit].decode("utf-8", "backslashreplace")
    return shown + f"... ({len(text)} bytes)" if len(text) > limit else shown


def _checkpoint(kind: str, data: bytes) -> Iterator[Entry | Header | Finding]:
    """CheckpointFile.CheckpointReadBuffer.read: a version line, a count line, then the entries.

    A file that ends before its count line holds no entries: Kafka creates leader-epoch-checkpoint and
    cleaner-offset-checkpoint empty (UnifiedLog, LogCleanerManager) and reads them as such."""
    fields = CHECKPOINT_FIELDS[kind]
    lines = _lines(data)
    header = Header(kind, {"version": None, "entry_count": None})
    first = next(lines, None)
    if first is None:
        yield header
        return
    version_pos, version_line = first
    header.fields["version"] = java_integer(_text(version_line), 32)
    if header.fields["version"] is None:
        header.findings.append(_bad(version_pos, version_line, "version", str(CHECKPOINT_VERSION)))
    elif header.fields["version"] != CHECKPOINT_VERSION:
        header.findings.append(Finding("unknown-version", version_pos, version_pos, len(version_line), "version",
                                       str(CHECKPOINT_VERSION), str(header.fields["version"])))
    second = next(lines, None)
    if second is None:
        yield header
        return
    count_pos, count_line = second
    header.fields["entry_count"] = java_integer(_text(count_line), 32)
    if header.fields["entry_count"] is None:
        header.findings.append(_bad(count_pos, count_line, "entry_count", "an integer"))
    yield header
    found = 0
    for slot, (pos, line) in enumerate(lines):
        found += 1
        # LeaderEpochCheckpointFile / OffsetCheckpointFile.Formatter.fromString: split on \s+ (ASCII).
        parts = _java_split(_text(line), WHITESPACE)
        entry = Entry(kind, slot, pos, len(line), {name: None for name, _ in fields})
        grammar = " ".join(name for name, _ in fields)
        if len(parts) != len(fields):
            entry.findings.append(_bad(pos, line, "entry", f"{len(fields)} fields '{grammar}'"))
        else:
            values = {name: part.decode("utf-8", "replace") if bits is None else java_integer(part, bits)
                      for (name, bits), part in zip(fields, parts)}
            if None in values.values():
                entry.findings.append(_bad(pos, line, "entry", grammar))
            else:
                entry.fields = values
                if kind == kinds.LEADER_EPOCH_CHECKPOINT and min(values.values()) < 0:
                    # LeaderEpochFileCache.assign, on every entry it loads: "invalid partition leader epoch entry"
                    entry.findings.append(_bad(pos, line, "entry", "an epoch and a start offset of 0 or more "
                                                                   "(LeaderEpochFileCache.assign)"))
        yield entry
    expected = header.fields["entry_count"]
    if expected is not None and expected != found:
        # CheckpointFile: "Expected N entries in checkpoint file ..., but found only M"
        yield Finding("bad-checkpoint", count_pos, count_pos, len(count_line), "entry_count",
                      f"{found} (the entry lines that follow)", str(expected))


def _partition_metadata(data: bytes, base_offset: int | None) -> Iterator[Entry | Finding]:
    """PartitionMetadataReadBuffer.read: ``version: <v>`` then ``topic_id: <Uuid>``, as one entry.

    Kafka splits each line at ``:\\s+`` and takes the second part, whatever the first says; it reads any
    version of 0 or more (for downgrades), refuses the all-zero topic id, and reads no further line."""
    lines = _lines(data)
    entry = Entry(kinds.PARTITION_METADATA, 0, 0, len(data), {"version": None, "topic_id": None})
    for key in ("version", "topic_id"):
        found = next(lines, None)
        if found is None:
            entry.findings.append(Finding("truncated", 0, len(data), 0, key, f"a line '{key}: ...'",
                                          "the end of the file"))
            break
        pos, line = found
        parts = _java_split(_text(line), PARTITION_METADATA_SEPARATOR)
        value = parts[1] if len(parts) == 2 else None
        if key == "version":
            version = None if value is None else java_integer(value, 32)
            entry.fields["version"] = version
            if version is None or version < PARTITION_METADATA_VERSION:
                entry.findings.append(_bad(pos, line, key, f"{key}: {PARTITION_METADATA_VERSION} or more"))
                break   # Kafka reads no further
        else:
            topic_id = None if value is None else value.decode("ascii", "replace")
            entry.fields["topic_id"] = topic_id
            if topic_id is None or not TOPIC_ID.match(topic_id):
                entry.findings.append(_bad(pos, line, key, f"{key}: a 22-character topic id"))
            elif topic_id.rstrip("=") == ZERO_TOPIC_ID:
                entry.findings.append(_bad(pos, line, key, f"{key}: a topic id other than {ZERO_TOPIC_ID} "
                                                           "(Uuid.ZERO_UUID: Kafka takes the log dir offline)"))
        if parts and parts[0].decode("utf-8", "replace") != key and value is not None:
            # Kafka does not read the key; a writer other than PartitionMetadata.encode put this one.
            entry.findings.append(Finding("unexpected-key", pos, pos, len(line), key, f"'{key}: ...'",
                                          repr(_shown(line))))
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
