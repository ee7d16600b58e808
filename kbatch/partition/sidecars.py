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

import mmap
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from kbatch.format.checksums import crc32c
from kbatch.format.findings import Finding, Severity
from kbatch.format.structs import (
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
    META_PROPERTIES_VERSIONS,
    PRODUCER_SNAPSHOT_VERSION,
    QUORUM_STATE_FIELDS,
    QUORUM_STATE_VERSIONS,
    TIME_INDEX_ENTRY,
    TOPIC_ID,
    WHITESPACE,
    ZERO_TOPIC_ID,
)
from kbatch.reading.window import CHUNK, Window
from kbatch.files import kinds

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
# The longest line kbatch reads of a text file: Kafka writes a topic name of at most 249 characters and
# numbers of at most 20 (Topic.MAX_NAME_LENGTH, Long.MIN_VALUE); a longer line is read up to here.
LINE_LIMIT = 4096


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


def _shrunk(kind: str, source: SideFile, pos: int) -> Finding:
    return Finding("truncated", pos, pos, 0, "file", f"{source.size} bytes (the size when opened)",
                   f"the end of the file at {pos}: it shrank while read")


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
        return _checkpoint(kind, data)
    readers = {
        kinds.OFFSET_INDEX: _offset_index,
        kinds.TIME_INDEX: _time_index,
        kinds.TXN_INDEX: _txn_index,
        kinds.PRODUCER_SNAPSHOT: _producer_snapshot,
        kinds.PARTITION_METADATA: _partition_metadata,
        kinds.QUORUM_STATE: _quorum_state,
        kinds.META_PROPERTIES: _meta_properties,
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


# -- fixed-size entries -----------------------------------------------------------------------------------


def _entries(kind: str, data: SideFile, layout, preallocated: bool = True) -> Iterator[tuple | Finding]:
    """(slot, pos, values) for each entry up to the zero tail, read a window at a time; then the zero tail and
    a partial entry as findings.

    A run of all-zero slots at the end is what a broker leaves preallocated in an active segment's index
    (AbstractIndex: the file is set to its maximum size and filled from the front).  No real entry is all
    zero: an offset index entry at position 0 would need more than index.interval.bytes before it.  A file
    Kafka only appends to (``preallocated`` False: the .txnindex) has no zero tail: its zeros are entries.
    """
    entry_size = layout.size
    whole = len(data) - len(data) % entry_size
    used = -(-_end_of_nonzero(data, whole) // entry_size) * entry_size if preallocated else whole
    slot, end = 0, 0
    for pos, piece in data.pieces(0, used, CHUNK - CHUNK % entry_size):
        for values in layout.codec.iter_unpack(memoryview(piece)[:len(piece) - len(piece) % entry_size]):
            yield slot, pos, values
            slot, pos = slot + 1, pos + entry_size
        end = pos
    if end < used:
        yield _shrunk(kind, data, end)
        return
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
    data = SideFile(data)
    whole = end
    while end > 0:
        start = max(0, end - chunk)
        piece = data.read(start, end - start)
        if len(piece) < end - start:
            return whole   # the file shrank while read: no tail known, the forward read finds where it ends
        kept = len(piece.rstrip(b"\x00"))
        if kept:
            return start + kept
        end = start
    return 0


def _absolute(base_offset: int | None, relative: int) -> int | None:
    return None if base_offset is None else base_offset + relative


def _offset_index(data: bytes, base_offset: int | None) -> Iterator[Entry | Finding]:
    layout = OFFSET_INDEX_ENTRY
    previous = None
    for item in _entries(kinds.OFFSET_INDEX, data, layout):
        if isinstance(item, Finding):
            yield item
            continue
        slot, pos, (relative, position) = item
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
    for item in _entries(kinds.TIME_INDEX, data, layout):
        if isinstance(item, Finding):
            yield item
            continue
        slot, pos, (timestamp, relative) = item
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
    for item in _entries(kinds.TXN_INDEX, data, layout, preallocated=False):
        if isinstance(item, Finding):
            yield item
            continue
        slot, pos, (version, producer_id, first_offset, last_offset, last_stable_offset) = item
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


def _producer_snapshot(data: SideFile, base_offset: int | None) -> Iterator[Entry | Header | Finding]:
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
        yield _shrunk(kinds.PRODUCER_SNAPSHOT, data, read_to)
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
        yield _shrunk(kinds.PRODUCER_SNAPSHOT, data, head.size + slot * layout.size)
        return
    if end < len(data):
        code = "truncated" if count > available else "trailing-bytes"
        yield Finding(code, end, end, len(data) - end, "producer_entries",
                      f"{count} entries of {layout.size} bytes", f"{len(data) - end} bytes " +
                      ("of a partial entry" if code == "truncated" else "after the last entry"))


# -- text files -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Line:
    """A line of a text file: where it starts, its size with its terminator, its text (at most LINE_LIMIT bytes)."""

    pos: int
    size: int
    text: bytes
    clipped: bool = False          # the line is longer than its text: not read past LINE_LIMIT


def _lines(data: SideFile, limit: int = LINE_LIMIT, piece_size: int = CHUNK) -> Iterator[Line]:
    """Each line, as BufferedReader.readLine splits them (at \\n, \\r or \\r\\n), read a window at a time: a
    line of any length costs LINE_LIMIT bytes."""
    line: Line | None = None
    after_cr = False   # the last piece ended in \r: a \n opening the next belongs to that line
    for pos, piece in data.pieces(0, len(data), piece_size):
        at = 0
        if after_cr and piece[:1] == b"\n":
            line.size += 1
            at = 1
        if after_cr:
            yield line
            line, after_cr = None, False
        if b"\r" not in piece:   # the lines a JVM writes: split at once, the carried line first
            *whole, rest = piece[at:].split(b"\n")
            for text in whole:
                if line is None:
                    if len(text) <= limit:
                        yield Line(pos + at, len(text) + 1, text)
                        at += len(text) + 1
                        continue
                    line = Line(pos + at, 0, b"")
                _extend(line, text, limit)
                line.size += 1
                at += len(text) + 1
                yield line
                line = None
            if rest:
                if line is None:
                    line = Line(pos + at, 0, b"")
                _extend(line, rest, limit)
            continue
        for match in _TERMINATOR.finditer(piece, at):
            text = piece[at:match.start()]
            if line is None:
                line = Line(pos + at, 0, b"")
            _extend(line, text, limit)
            line.size += len(match[0])
            if match.end() == len(piece) and match[0] == b"\r":
                after_cr = True   # maybe \r\n across the pieces
            else:
                yield line
                line = None
            at = match.end()
        if at < len(piece):
            if line is None:
                line = Line(pos + at, 0, b"")
            _extend(line, piece[at:], limit)
    if line is not None:
        yield line


_TERMINATOR = re.compile(rb"\r\n|\r|\n")


def _extend(line: Line, text: bytes, limit: int) -> None:
    line.size += len(text)
    room = limit - len(line.text)
    line.text += text[:max(room, 0)]
    line.clipped = line.clipped or len(text) > room


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


def _bad(line: Line, field_name: str, expected: str) -> Finding:
    return Finding("bad-checkpoint", line.pos, line.pos, line.size, field_name, expected, _shown(line))


def _shown(line: Line, limit: int = 64) -> str:
    """The line as kbatch shows bytes (kbatch.output.values.bytes_text): quoted text where it is printable
    UTF-8, else hex, each escaped once (the UTF-8 decoder's backslashes under repr's were "\\xe3…\x7f")."""
    from kbatch.output.values import bytes_text

    text = bytes_text(line.text.rstrip(b"\r\n"), limit=limit)
    shown = text if text.startswith("0x") else repr(text)
    return shown + f" ({line.size} bytes)" if len(line.text) > limit or line.clipped else shown


def _long_line(line: Line, field_name: str, findings: list[Finding]) -> list[Finding]:
    """The findings of a line read up to LINE_LIMIT: kept when its first bytes already make it one Kafka
    refuses; else one warning that the rest was not read (only zeros or blanks no Kafka writes could make
    such a line readable)."""
    if not line.clipped or any(finding.is_damage for finding in findings):
        return findings
    return [Finding("line-too-long", line.pos, line.pos, line.size, field_name,
                    f"a line of at most {LINE_LIMIT} bytes (Kafka writes a topic name of at most 249 characters "
                    "and numbers of at most 20)", f"{line.size} bytes: read up to {LINE_LIMIT}")]


# An entry line as Kafka's formatters write it (epoch + " " + startOffset; topic + " " + partition + " " +
# offset), its numbers at most 9 and 18 digits: what any parse gives for it, taken without the general one.
_PLAIN_ENTRY = {
    kinds.LEADER_EPOCH_CHECKPOINT: re.compile(rb"([0-9]{1,9}) ([0-9]{1,18})"),
    kinds.OFFSET_CHECKPOINT: re.compile(rb"([^ \t\n\x0b\f\r]+) ([0-9]{1,9}) ([0-9]{1,18})"),
}


def _checkpoint(kind: str, data: SideFile) -> Iterator[Entry | Header | Finding]:
    """CheckpointFile.CheckpointReadBuffer.read: a version line, a count line, then the entries.

    A file that ends before its count line holds no entries: Kafka creates leader-epoch-checkpoint and
    cleaner-offset-checkpoint empty (UnifiedLog, LogCleanerManager) and reads them as such."""
    fields = CHECKPOINT_FIELDS[kind]
    lines = _lines(data)
    header = Header(kind, {"version": None, "entry_count": None})
    version_line = next(lines, None)
    if version_line is None:
        yield header
        return
    version = java_integer(version_line.text, 32)
    findings = []
    if version is None:
        findings.append(_bad(version_line, "version", str(CHECKPOINT_VERSION)))
    elif version != CHECKPOINT_VERSION:
        findings.append(Finding("unknown-version", version_line.pos, version_line.pos, version_line.size,
                                "version", str(CHECKPOINT_VERSION), str(version)))
    header.findings += _long_line(version_line, "version", findings)
    header.fields["version"] = None if version_line.clipped else version
    count_line = next(lines, None)
    if count_line is None:
        yield header
        return
    count = java_integer(count_line.text, 32)
    header.findings += _long_line(count_line, "entry_count",
                                  [_bad(count_line, "entry_count", "an integer")] if count is None else [])
    header.fields["entry_count"] = expected = None if count_line.clipped else count
    yield header
    found = 0
    grammar = " ".join(name for name, _ in fields)
    plain = _PLAIN_ENTRY[kind]
    for slot, line in enumerate(lines):
        found += 1
        match = plain.fullmatch(line.text)
        if match:   # as Kafka writes it: numbers too short to overflow, no sign, one blank between
            values = {name: value.decode("utf-8", "replace") if bits is None else int(value)
                      for (name, bits), value in zip(fields, match.groups())}
            yield Entry(kind, slot, line.pos, line.size, values)
            continue
        # LeaderEpochCheckpointFile / OffsetCheckpointFile.Formatter.fromString: split on \s+ (ASCII).
        parts = _java_split(line.text, WHITESPACE)
        entry = Entry(kind, slot, line.pos, line.size, {name: None for name, _ in fields})
        findings = []
        if len(parts) != len(fields):
            findings.append(_bad(line, "entry", f"{len(fields)} fields '{grammar}'"))
        else:
            values = {name: part.decode("utf-8", "replace") if bits is None else java_integer(part, bits)
                      for (name, bits), part in zip(fields, parts)}
            if None in values.values():
                findings.append(_bad(line, "entry", grammar))
            elif kind == kinds.LEADER_EPOCH_CHECKPOINT and min(values.values()) < 0:
                # LeaderEpochFileCache.assign, on every entry it loads: "invalid partition leader epoch entry"
                findings.append(_bad(line, "entry", "an epoch and a start offset of 0 or more "
                                                    "(LeaderEpochFileCache.assign)"))
            if not findings and not line.clipped:
                entry.fields = values
        entry.findings = _long_line(line, "entry", findings)
        yield entry
    if expected is not None and expected != found:
        # CheckpointFile: "Expected N entries in checkpoint file ..., but found only M"
        yield Finding("bad-checkpoint", count_line.pos, count_line.pos, count_line.size, "entry_count",
                      f"{found} (the entry lines that follow)", str(expected))


def _partition_metadata(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
    """PartitionMetadataReadBuffer.read: ``version: <v>`` then ``topic_id: <Uuid>``, as one entry.

    Kafka splits each line at ``:\\s+`` and takes the second part, whatever the first says; it reads any
    version of 0 or more (for downgrades), refuses the all-zero topic id, and reads no further line."""
    lines = _lines(data)
    entry = Entry(kinds.PARTITION_METADATA, 0, 0, len(data), {"version": None, "topic_id": None})
    for key in ("version", "topic_id"):
        line = next(lines, None)
        if line is None:
            entry.findings.append(Finding("truncated", 0, len(data), 0, key, f"a line '{key}: ...'",
                                          "the end of the file"))
            break
        parts = _java_split(line.text, PARTITION_METADATA_SEPARATOR)
        value = parts[1] if len(parts) == 2 else None
        findings = []
        if key == "version":
            version = None if value is None else java_integer(value, 32)
            if version is None or version < PARTITION_METADATA_VERSION:
                findings.append(_bad(line, key, f"{key}: {PARTITION_METADATA_VERSION} or more"))
            elif not line.clipped:
                entry.fields["version"] = version
        else:
            topic_id = None if value is None else value.decode("ascii", "replace")
            if topic_id is None or not TOPIC_ID.match(topic_id):
                findings.append(_bad(line, key, f"{key}: a 22-character topic id"))
            elif topic_id.rstrip("=") == ZERO_TOPIC_ID:
                findings.append(_bad(line, key, f"{key}: a topic id other than {ZERO_TOPIC_ID} "
                                                "(Uuid.ZERO_UUID: Kafka takes the log dir offline)"))
            else:
                entry.fields["topic_id"] = topic_id
        if parts and parts[0].decode("utf-8", "replace") != key and value is not None:
            # Kafka does not read the key; a writer other than PartitionMetadata.encode put this one.
            findings.append(Finding("unexpected-key", line.pos, line.pos, line.size, key, f"'{key}: ...'",
                                    _shown(line)))
        entry.findings += _long_line(line, key, findings)
        if any(finding.is_damage for finding in findings):
            break   # Kafka reads no further
    yield entry


# A quorum-state line holds the voters of version 0: a few bytes each; this is room for a hundred thousand.
QUORUM_STATE_LINE_LIMIT = 1 << 20


def _quorum_state(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
    """FileQuorumStateStore.readStateFromFile: the first line, a JSON object with ``data_version`` 0 or 1 and
    the fields of QuorumStateData at that version, read by QuorumStateDataJsonConverter.read."""
    lines = _lines(data, QUORUM_STATE_LINE_LIMIT)
    line = next(lines, None)
    entry = Entry(kinds.QUORUM_STATE, 0, 0, 0, {"data_version": None})
    if line is None:
        entry.findings.append(Finding("truncated", 0, 0, 0, "line", "a line of JSON",
                                      "the end of the file (\"File ended prematurely\")"))
        yield entry
        return
    entry.size = line.size

    def bad(field_name: str, expected: str, found: str) -> None:
        entry.findings.append(Finding("bad-quorum-state", line.pos, line.pos, line.size, field_name, expected,
                                      found))

    if line.clipped:
        bad("line", f"a line of at most {QUORUM_STATE_LINE_LIMIT} bytes", f"{line.size} bytes")
        yield entry
        return
    import json   # here, not at start-up: verify-crc --deep of a segment loads this module

    try:   # Jackson's ObjectMapper.readTree: strict JSON (no NaN), one value
        state = json.loads(line.text.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        bad("line", "a JSON object", f"no JSON: {str(error)[:80]}")
        yield entry
        return
    if not isinstance(state, dict):
        bad("line", "a JSON object", type(state).__name__)
        yield entry
        return
    version = state.get("data_version")
    entry.fields["data_version"] = version
    if version is None:
        bad("data_version", "a data_version field", "none")
    elif not _json_int(version, 16) or version not in QUORUM_STATE_VERSIONS:
        entry.findings.append(Finding("unknown-version", line.pos, line.pos, line.size, "data_version",
                                      " or ".join(map(str, QUORUM_STATE_VERSIONS)), repr(version)[:40]))
    else:
        for name, kind, versions in QUORUM_STATE_FIELDS:
            if version not in versions:
                continue
            snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
            value = state.get(name, _MISSING)
            entry.fields[snake] = None if value is _MISSING else value
            if value is _MISSING:
                bad(snake, f"a field {name!r} (mandatory in version {version})", "none")
            elif not _quorum_value_fits(kind, value):
                bad(snake, f"{kind} ({name}, QuorumStateData.json)", repr(value)[:80])
    yield entry


_MISSING = object()


def _no_constant(name: str):
    raise ValueError(f"{name} is no JSON number")


def _json_int(value, bits: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(1 << bits - 1) <= value < 1 << bits - 1


def _quorum_value_fits(kind: str, value) -> bool:
    """Whether QuorumStateDataJsonConverter.read takes ``value`` as ``kind`` (MessageUtil.jsonNodeToInt/Long)."""
    if kind == "int32":
        return _json_int(value, 32)
    if kind == "int64":
        return _json_int(value, 64)
    if kind == "string":
        return isinstance(value, str)
    if kind == "uuid":   # Uuid.fromString: base64 of 16 bytes
        return isinstance(value, str) and bool(TOPIC_ID.match(value))
    # []Voter, nullable: each an object with an int32 voterId
    return value is None or (isinstance(value, list) and all(
        isinstance(voter, dict) and _json_int(voter.get("voterId"), 32) for voter in value))


_PROPERTY_SEPARATOR = re.compile(rb"\\.|[=:]|[ \t\f]")   # an escaped character, or where the key ends
_PROPERTY_ESCAPES = {b"t": b"\t", b"n": b"\n", b"r": b"\r", b"f": b"\f"}


def _properties(data: SideFile) -> Iterator[tuple[Line, str, str]]:
    """(first line, key, value) of each property, as java.util.Properties.load reads them: '#' and '!' open
    comments, a key ends at an unescaped '=', ':' or blank, a line ending in an odd number of '\\' goes on."""
    logical: list[Line] = []
    for line in _lines(data):
        text = line.text.lstrip(b" \t\f")   # a continuation line's leading blanks go too
        if not logical and (not text or text[:1] in b"#!"):
            continue
        logical.append(Line(line.pos, line.size, text, line.clipped))
        if (len(text) - len(text.rstrip(b"\\"))) % 2:   # continued on the next line
            logical[-1].text = text[:-1]
            continue
        whole = b"".join(part.text for part in logical)
        first = logical[0]
        logical = []
        key, value = _split_property(whole)
        yield first, key, value
    if logical:
        key, value = _split_property(b"".join(part.text for part in logical))
        yield logical[0], key, value


def _split_property(text: bytes) -> tuple[str, str]:
    end = 0
    while True:
        match = _PROPERTY_SEPARATOR.search(text, end)
        if match is None or match[0][:1] != b"\\":
            break
        end = match.end()
    if match is None:
        return _unescape(text), ""
    key, rest = text[:match.start()], text[match.start():].lstrip(b" \t\f")
    if rest[:1] in (b"=", b":"):
        rest = rest[1:].lstrip(b" \t\f")
    return _unescape(key), _unescape(rest)


def _unescape(text: bytes) -> str:
    """Properties.loadConvert: \\uXXXX, \\t, \\n, \\r, \\f, and \\x for any other x (ISO 8859-1 text)."""
    def one(match: re.Match) -> bytes:
        char = match[0][1:]
        if char[:1] == b"u":
            try:
                return chr(int(char[1:], 16)).encode("latin-1", "backslashreplace")
            except ValueError:
                return char
        return _PROPERTY_ESCAPES.get(char, char)

    return re.sub(rb"\\(u[0-9A-Fa-f]{4}|.)", one, text).decode("latin-1")


def _meta_properties(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
    """MetaProperties.Builder(Properties).build(): the version, then what that version requires."""
    entry = Entry(kinds.META_PROPERTIES, 0, 0, len(data), {"version": None})
    found: dict[str, tuple[Line, str]] = {}
    for line, key, value in _properties(data):
        found[key] = (line, value)   # Properties: the last one wins
        entry.findings += _long_line(line, key, [])

    def bad(key: str, expected: str, actual: str) -> None:
        line = found[key][0] if key in found else None
        entry.findings.append(Finding("bad-meta-properties", line.pos if line else 0, line.pos if line else 0,
                                      line.size if line else 0, key, expected, actual))

    text = found.get("version", (None, "0"))[1].strip()   # MetaPropertiesVersion.fromNumberString trims
    version = java_integer(text.encode("latin-1", "replace"), 32)
    if version not in META_PROPERTIES_VERSIONS:
        bad("version", " or ".join(map(str, META_PROPERTIES_VERSIONS)), repr(text[:80]))
        yield entry
        return
    entry.fields["version"] = version
    id_key = "broker.id" if version == 0 else "node.id"
    for key in (id_key, "cluster.id", "directory.id"):
        value = found.get(key, (None, None))[1]
        entry.fields[key.replace(".", "_")] = value
        if value is None:
            if version == 1 and key != "directory.id":   # build(): "cluster.id was not found", "Failed to find node.id"
                bad(key, f"a {key} (required in version 1)", "none")
            continue
        if key == id_key:   # PropertiesUtils.loadRequiredIntProp: Integer.parseInt, no trimming
            number = java_integer(value.encode("latin-1", "replace"), 32)
            entry.fields[key.replace(".", "_")] = number
            if number is None:
                bad(key, "a base-10 int", repr(value[:80]))
        elif key == "directory.id" and not TOPIC_ID.match(value):   # Uuid.fromString
            bad(key, "a Uuid (22 characters of URL-safe base64)", repr(value[:80]))
    yield entry


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

    def as_dict(self) -> dict:
        return {"file": self.path, "size": self.size, "kind": self.kind, "entry_count": self.entries,
                "findings": dict(sorted(self.findings.items())), "errors": self.errors, "damaged": self.damaged}


def read_whole(stream, limit: int = MAX_SIDECAR_SIZE) -> bytes:
    """A sidecar's bytes whole, for a reader that needs them at once (the seek's binary search); the readers
    above take the stream and read it a window at a time."""
    stream.seek(0)
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes: too large for a file beside a segment")
    return data
