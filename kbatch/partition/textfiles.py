"""The text files beside a segment and in a log directory: leader-epoch-checkpoint and the offset
checkpoints, partition.metadata, quorum-state and meta.properties.

Each is read a line at a time as BufferedReader.readLine splits them (:func:`_lines`), a line up to
:data:`LINE_LIMIT` bytes, and its numbers as Java parses them (:func:`java_integer`).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Iterator

from kbatch.files import kinds
from kbatch.files.inputs import topic_partition
from kbatch.format.findings import Finding
from kbatch.format.structs import (
    CHECKPOINT_FIELDS,
    CHECKPOINT_VERSION,
    META_PROPERTIES_VERSIONS,
    PARTITION_METADATA_SEPARATOR,
    PARTITION_METADATA_VERSION,
    QUORUM_STATE_FIELDS,
    QUORUM_STATE_VERSIONS,
    TOPIC_ID,
    WHITESPACE,
    ZERO_TOPIC_ID,
)
from kbatch.partition.sidefile import Entry, Header, SideFile
from kbatch.reading.window import CHUNK

# The longest line kbatch reads of a text file: Kafka writes a topic name of at most 249 characters and
# numbers of at most 20 (Topic.MAX_NAME_LENGTH, Long.MIN_VALUE); a longer line is read up to here.
LINE_LIMIT = 4096


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
    cr_ended: Line | None = None   # the line the last piece's final \r ended: a \n opening the next belongs to it
    for pos, piece in data.pieces(0, len(data), piece_size):
        at = 0
        if cr_ended is not None:
            if piece[:1] == b"\n":
                cr_ended.size += 1
                at = 1
            yield cr_ended
            line = cr_ended = None
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
                cr_ended = line   # maybe \r\n across the pieces
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


def checkpoint(kind: str, data: SideFile) -> Iterator[Entry | Header | Finding]:
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
            elif kind == kinds.LEADER_EPOCH_CHECKPOINT and any(isinstance(value, int) and value < 0
                                                               for value in values.values()):
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


def partition_metadata(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
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


def quorum_state(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
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


def _key_shown(key: str, limit: int = 64) -> str:
    """A key of the file as a finding's field: the file's own text (Properties unescapes \\n, \\u001b, ...), shown
    as kbatch shows text it did not write (kbatch.output.visible), cut after ``limit`` characters."""
    from kbatch.output.visible import visible

    return visible(key[:limit]) + (f" ({len(key)} characters)" if len(key) > limit else "")


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


def meta_properties(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
    """MetaProperties.Builder(Properties).build(): the version, then what that version requires."""
    entry = Entry(kinds.META_PROPERTIES, 0, 0, len(data), {"version": None})
    found: dict[str, tuple[Line, str]] = {}
    for line, key, said in _properties(data):
        found[key] = (line, said)   # Properties: the last one wins
        entry.findings += _long_line(line, _key_shown(key), [])

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




def loaded_log_start(checkpointed: int | None, first_base_offset: int) -> int:
    """The log start offset Kafka loads for a partition (LogLoader.load): the log-start-offset-checkpoint's, no lower
    than its first segment's base offset; a checkpoint absent, or one LogManager.loadLogs cannot read, counts as 0."""
    return max(checkpointed or 0, first_base_offset)


def log_start_offset(partition_directory: str) -> CheckpointedOffset:
    """The partition's log start offset as the log-start-offset-checkpoint of its log directory (the directory
    above it) last recorded it, or None: no such file, no entry for the partition (Kafka writes one only where
    the log start lies above the first segment's base offset, LogManager.checkpointLogStartOffsetsInDir), or a
    directory renamed -delete or -stray, which the log directory's checkpoints no longer describe (they hold
    the current and -future logs of each partition, LogManager.logsByDir). It may have moved on since (the
    broker writes it once a minute, log.flush.start.offset.checkpoint.interval.ms), never back."""
    return checkpointed_offset(partition_directory, kinds.LOG_START_OFFSET_CHECKPOINT)


@dataclass(frozen=True)
class CheckpointedOffset:
    """What an offset checkpoint of a partition's log directory says of the partition: its offset, or None (no
    file, no entry for it, or a file that cannot be read); and the file's own findings, as verify-crc --deep
    tells them (read_sidecar)."""

    path: str | None = None
    offset: int | None = None
    findings: tuple[Finding, ...] = ()

    @property
    def unreadable(self) -> bool:
        """The offset is unknown, not absent: CheckpointFile.CheckpointReadBuffer.read throws on a malformed line,
        a version other than 0 or a count the entries do not match, and CheckpointFileWithFailureHandler.read
        then takes the log directory offline; a line kbatch did not read whole (line-too-long) may be the
        partition's own."""
        return bool(self.findings)


def checkpointed_offset(partition_directory: str, file_name: str) -> CheckpointedOffset:
    """What an offset checkpoint of the partition's log directory (replication-offset-checkpoint: the high
    watermark; recovery-point-offset-checkpoint; log-start-offset-checkpoint; cleaner-offset-checkpoint)
    records for it (see :func:`log_start_offset`).  The whole file is read: Kafka reads it whole, and a
    damaged line anywhere in it leaves every partition's offset unread."""
    directory = os.path.abspath(partition_directory.rstrip("/") or "/")
    renamed = kinds.renamed_partition(directory)
    topic, partition = topic_partition(os.path.join(directory, "x"))
    path = os.path.join(os.path.dirname(directory), file_name)
    try:
        if topic is None or (renamed and renamed[1] != "future") or not os.path.isfile(path):
            return CheckpointedOffset()
        status = os.stat(path)
        offsets, findings = _offset_checkpoint(path, status.st_ino, status.st_size, status.st_mtime_ns)
    except OSError:
        return CheckpointedOffset()
    return CheckpointedOffset(path, None if findings else offsets.get((topic, partition)), findings)


@functools.lru_cache(maxsize=32)
def _offset_checkpoint(path: str, inode: int, size: int, mtime_ns: int) \
        -> tuple[dict[tuple, int | None], tuple[Finding, ...]]:
    """An offset checkpoint read whole: each partition's offset (OffsetCheckpointFile.read: a later entry wins),
    and the file's findings.  Kept while the file is the same (its inode, size and time): every partition of a
    log directory asks of the same few files, which hold thousands of entries each."""
    offsets: dict[tuple, int | None] = {}
    findings: list[Finding] = []
    with open(path, "rb") as stream:
        for item in checkpoint(kinds.OFFSET_CHECKPOINT, SideFile(stream)):   # (as read_sidecar reads one)
            if isinstance(item, Finding):
                findings.append(item)
                continue
            findings += item.findings
            if isinstance(item, Entry):
                offsets[(item.fields.get("topic"), item.fields.get("partition"))] = item.fields.get("offset")
    return offsets, tuple(findings)
