"""Where two segments (or batches) disagree, field by field.

Two readers walk the inputs side by side and are merged by record offset, in
constant memory and time linear in the inputs: batches holding the same
offsets are compared header field by header field and record by record;
batches on one side only are reported as such; a span of offsets the two
sides batch differently is one ``batching`` difference, its records compared
by offset across the batches; damaged ranges are reported with their
positions on their own side.  With ``records_only`` the records
are merged across batches, so two encoders that batch or compress the same
records differently compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AbstractSet, BinaryIO, Iterator

from kbatch.format.findings import MAX_HELD, Finding
from kbatch.reading.model import Batch, Record
from kbatch.format.codecs import DEFAULT_DECOMPRESSED_LIMIT, Decompressor
from kbatch.reading.reader import ReadOptions, SegmentReader, load_records
from kbatch.reading.records import stream_records
from kbatch.format.structs import COMPRESSION_CODEC_MASK
from kbatch.walk.engine import entries

# Batch fields compared, in the order they are reported (names as in dump's JSON).
BATCH_FIELDS = ("magic", "codec", "count", "last_offset", "size", "batch_length", "partition_leader_epoch", "crc",
                "attributes", "timestamp_type", "is_transactional", "is_control", "base_timestamp", "max_timestamp",
                "delete_horizon_ms", "producer_id", "producer_epoch", "base_sequence")
RECORD_FIELDS = ("timestamp", "key", "value", "headers", "attributes")

# Names --ignore accepts beyond the fields themselves: Kafka's camelCase, and "compression", which also
# ignores what the codec decides (the attributes' codec bits, the sizes, and so the bytes' CRC stays
# named separately as "crc").
ALIASES = {
    "compression": {"codec", "size", "batch_length"},
    "partitionLeaderEpoch": {"partition_leader_epoch"}, "leader_epoch": {"partition_leader_epoch"},
    "batchLength": {"batch_length"}, "baseTimestamp": {"base_timestamp"}, "maxTimestamp": {"max_timestamp"},
    "producerId": {"producer_id"}, "producerEpoch": {"producer_epoch"}, "baseSequence": {"base_sequence"},
    "timestampType": {"timestamp_type"}, "isTransactional": {"is_transactional"},
    "isControl": {"is_control"}, "deleteHorizonMs": {"delete_horizon_ms"}, "lastOffset": {"last_offset"},
}


def ignorable() -> list[str]:
    return sorted(set(BATCH_FIELDS) | set(RECORD_FIELDS) | set(ALIASES))


def resolve_ignore(names: list[str]) -> set[str]:
    """Field names to ignore; raises ValueError naming an unknown one."""
    out = set()
    for name in names:
        if name in ALIASES:
            out |= ALIASES[name]
            if name == "compression":
                out.add("compression")
        elif name in BATCH_FIELDS or name in RECORD_FIELDS:
            out.add(name)
        else:
            raise ValueError(f"cannot ignore {name!r}: not a field (one of {', '.join(ignorable())})")
    return out


@dataclass(frozen=True)
class Difference:
    kind: str               # batch-changed, batch-only-a/b, batching, record-changed, record-only-a/b, damage-a/b
    offset: int | None      # the record offset (or a batch's base offset) it concerns
    field: str              # which field differs ("" for a whole batch or record)
    a: str | None           # A's value (None: A has nothing there)
    b: str | None
    a_pos: int | None = None
    b_pos: int | None = None
    # a record field that differs: both values whole (a and b are cut for a table), and for bytes the
    # first byte position where they differ
    a_value: object | None = None
    b_value: object | None = None
    differs_at: int | None = None


@dataclass
class DiffSummary:
    batches: dict = field(default_factory=lambda: {"same": 0, "changed": 0, "only_a": 0, "only_b": 0})
    records: dict = field(default_factory=lambda: {"same": 0, "changed": 0, "only_a": 0, "only_b": 0})
    damaged: dict = field(default_factory=lambda: {"a": 0, "b": 0})
    # spans of offsets the two sides batch differently, and the batches each side holds them in
    regrouped: dict = field(default_factory=lambda: {"spans": 0, "a": 0, "b": 0})
    first_different_byte: int | None = None
    size_a: int = 0
    size_b: int = 0

    @property
    def identical(self) -> bool:
        """Whether the inputs are the same bytes: then nothing differs, whatever damage both hold alike."""
        return self.first_different_byte is None and self.size_a == self.size_b

    @property
    def same(self) -> bool:
        if self.identical:
            return True
        return not (self.batches["changed"] or self.batches["only_a"] or self.batches["only_b"]
                    or self.records["changed"] or self.records["only_a"] or self.records["only_b"]
                    or self.damaged["a"] or self.damaged["b"] or self.regrouped["spans"])

    def as_dict(self) -> dict:
        return {"batches": dict(self.batches), "records": dict(self.records), "damaged": dict(self.damaged),
                "regrouped": dict(self.regrouped),
                "first_different_byte": self.first_different_byte, "size_a": self.size_a, "size_b": self.size_b,
                "same": self.same}


def first_different_byte(stream_a: BinaryIO, stream_b: BinaryIO, chunk: int = 1 << 20) -> int | None:
    """The position of the first byte that differs (or where the shorter input ends); None if identical."""
    stream_a.seek(0)
    stream_b.seek(0)
    position = 0
    while True:
        a, b = stream_a.read(chunk), stream_b.read(chunk)
        if a != b:
            for index, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    return position + index
            return position + min(len(a), len(b))
        if not a:
            return None
        position += len(a)


SHOWN_TEXT = 60     # characters of a value a table cell shows (bytes shown as hex: half as many)
CONTEXT = 20        # ... of which before the first byte that differs


def _shown(value, differs_at: int | None = None) -> str | None:
    """A value for a table cell.  A long key or value is cut; when ``differs_at`` (the first byte where
    the two sides differ) lies past what the cut would keep, the cell shows the bytes around it instead
    of the prefix both sides share."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="replace")
        printable = text.isprintable() and "\ufffd" not in text
        room = SHOWN_TEXT if printable else SHOWN_TEXT // 2
        if len(value) <= room or (printable and len(text) <= room):
            return repr(text) if printable else "0x" + value.hex()
        start = 0 if differs_at is None or differs_at < room - CONTEXT // 2 else differs_at - CONTEXT
        window = value[start:start + room]
        shown = repr(window.decode("utf-8", errors="ignore")) if printable else "0x" + window.hex()
        where = f", differs from byte {differs_at}" if differs_at is not None else ""
        return ("…" if start else "") + shown + ("…" if start + room < len(value) else "") + \
            f" ({len(value)} bytes{where})"
    if isinstance(value, list):
        return "[" + ", ".join(f"{_shown(k)}={_shown(v)}" for k, v in value) + "]"
    return "null" if value is None else str(value)


class _Side:
    """One input's batches (and damaged ranges), with one batch of look-ahead."""

    def __init__(self, stream: BinaryIO, name: str, summary: DiffSummary, options: ReadOptions):
        self.name = name
        self.items = entries(SegmentReader(stream, options))
        self.summary = summary
        self.pending: list[Difference] = []
        self.current: Batch | None = None
        self.advance()

    def advance(self) -> None:
        self.current = None
        for item in self.items:
            if isinstance(item, Finding):
                if item.is_damage:
                    self._damage(item, None)
                continue
            for finding in item.findings:
                if finding.is_damage:
                    self._damage(finding, item)
            self.current = item
            return

    def _damage(self, finding: Finding, batch: Batch | None) -> None:
        self.pending.append(_damage(self.name, finding, batch, self.summary))

    def take_pending(self) -> list[Difference]:
        out, self.pending = self.pending, []
        return out


def _damage(side: str, finding: Finding, batch: Batch | None, summary: DiffSummary) -> Difference:
    """A damaged range or field on one side (``side``: "a" or "b"), counted in the summary."""
    summary.damaged[side] += 1
    text = f"{finding.code}: expected {finding.expected}, found {finding.actual}"
    offset = batch.base_offset if batch is not None else None
    where = finding.field if batch is not None else "range"
    return Difference(f"damage-{side}", offset, where, text if side == "a" else None, text if side == "b" else None,
                      finding.pos if side == "a" else None, finding.pos if side == "b" else None)


def diff_streams(stream_a: BinaryIO, stream_b: BinaryIO, summary: DiffSummary, *, ignore: AbstractSet[str] = frozenset(),
                 records_only: bool = False,
                 decompressed_limit: int = DEFAULT_DECOMPRESSED_LIMIT) -> Iterator[Difference]:
    """Every difference between two inputs, in offset order."""
    summary.first_different_byte = first_different_byte(stream_a, stream_b)
    summary.size_a, summary.size_b = stream_a.seek(0, 2), stream_b.seek(0, 2)
    stream_a.seek(0)
    stream_b.seek(0)
    # Records are decoded only where batches differ (or for --records-only): two copies of a 1 GiB
    # segment that differ in one record decode one batch, not 6 million records.
    # Each side keeps half the records of a v0/v1 wrapper another command keeps: the two sides together
    # hold no more than one command does (a wrapper of a million tiny messages stays in bounded memory).
    options = ReadOptions(records=records_only, keep_body=not records_only, decompressed_limit=decompressed_limit,
                          held_records=MAX_HELD // 2)
    if summary.identical:
        # The same bytes hold the same batches, records and damage: each side's damage is counted (the verdict
        # says both hold it alike), none of it is a difference.
        for _ in _differences(_Side(stream_a, "a", summary, options), _Side(stream_b, "b", summary, options),
                               summary, ignore, records_only, decompressed_limit):
            pass
        return
    yield from _differences(_Side(stream_a, "a", summary, options), _Side(stream_b, "b", summary, options),
                             summary, ignore, records_only, decompressed_limit)


def _differences(a: _Side, b: _Side, summary: DiffSummary, ignore: AbstractSet[str], records_only: bool,
                  decompressed_limit: int) -> Iterator[Difference]:
    decompressor = Decompressor(decompressed_limit)   # for the records of batches that differ
    if records_only:
        yield from _diff_records_only(a, b, summary, ignore)
        return
    while a.current is not None or b.current is not None:
        yield from a.take_pending()
        yield from b.take_pending()
        batch_a, batch_b = a.current, b.current
        if batch_a is not None and (batch_b is None or batch_a.last_offset < batch_b.base_offset):
            summary.batches["only_a"] += 1
            summary.records["only_a"] += _record_count(batch_a)
            yield Difference("batch-only-a", batch_a.base_offset, "", _batch_label(batch_a), None, batch_a.pos)
            a.advance()
        elif batch_b is not None and (batch_a is None or batch_b.last_offset < batch_a.base_offset):
            summary.batches["only_b"] += 1
            summary.records["only_b"] += _record_count(batch_b)
            yield Difference("batch-only-b", batch_b.base_offset, "", None, _batch_label(batch_b), None, batch_b.pos)
            b.advance()
        elif batch_a is not None and batch_b is not None:   # (always, here: the loop runs while either has one)
            group_a, group_b = _overlapping(a, b, batch_a, batch_b)
            if len(group_a) == len(group_b) == 1:   # one batch each side: the same batch, maybe altered
                differences = list(_diff_batches(batch_a, batch_b, summary, ignore, decompressor))
                summary.batches["changed" if differences else "same"] += 1
                yield from differences
            else:
                yield from _diff_regrouped(group_a, group_b, summary, ignore, decompressor)
    yield from a.take_pending()
    yield from b.take_pending()


def _overlapping(a: _Side, b: _Side, current_a: Batch, current_b: Batch) -> tuple[list[Batch], list[Batch]]:
    """The batches of each side, from the current ones on (``current_a``, ``current_b``), whose offsets overlap
    those of the other side's (transitively): one span of offsets the two sides batch differently."""
    group_a, group_b = [current_a], [current_b]
    end = max(current_a.last_offset, current_b.last_offset)
    a.advance()
    b.advance()
    grew = True
    while grew:
        grew = False
        for side, group in ((a, group_a), (b, group_b)):
            while side.current is not None and side.current.base_offset <= end:
                group.append(side.current)
                end = max(end, side.current.last_offset)
                side.advance()
                grew = True
    return group_a, group_b


def _diff_regrouped(group_a: list[Batch], group_b: list[Batch], summary: DiffSummary, ignore: AbstractSet[str],
                    decompressor: Decompressor) -> Iterator[Difference]:
    """A span of offsets batched differently on the two sides: the batching is the one batch-level
    difference (no header pairs up with another); the records are compared by offset across the batches."""
    summary.regrouped["spans"] += 1
    summary.regrouped["a"] += len(group_a)
    summary.regrouped["b"] += len(group_b)
    first = min(group_a[0].base_offset, group_b[0].base_offset)
    yield Difference("batching", first, "", _span_label(group_a), _span_label(group_b), group_a[0].pos,
                     group_b[0].pos)
    for side, group in (("a", group_a), ("b", group_b)):
        for batch in group:
            yield from _load_records(side, batch, summary, decompressor)
    yield from _merge_records(((record, batch) for batch in group_a for record in batch.records or []),
                              ((record, batch) for batch in group_b for record in batch.records or []),
                              summary, ignore)


def _span_label(group: list[Batch]) -> str:
    spans = ", ".join(f"{batch.base_offset}–{batch.last_offset}" for batch in group[:10])
    more = f", … ({len(group) - 10} more)" if len(group) > 10 else ""
    return f"{len(group)} batch{'es' if len(group) != 1 else ''}: offsets {spans}{more}"


def _record_count(batch: Batch) -> int:
    """Records a batch holds: decoded ones if decoded, else what its header says (v2 recordsCount)."""
    if batch.records is not None:
        return len(batch.records)
    return max(batch.count or 0, 0)


def _batch_label(batch: Batch) -> str:
    return f"offsets {batch.base_offset}–{batch.last_offset}, {batch.count} records, magic {batch.magic}, " \
           f"{batch.codec}, {batch.size} bytes at {batch.pos}"


def _field(batch: Batch, name: str, ignore: AbstractSet[str]):
    value = getattr(batch, "length_field" if name == "batch_length" else name)
    if name == "attributes" and "compression" in ignore:
        value &= ~COMPRESSION_CODEC_MASK
    return value


def _diff_batches(a: Batch, b: Batch, summary: DiffSummary, ignore: AbstractSet[str],
                  decompressor: Decompressor) -> Iterator[Difference]:
    if a.body is not None and a.body == b.body and a.magic == b.magic:
        # The same record bytes: the records are the same, whatever the header says.
        summary.records["same"] += _record_count(a)
        yield from _diff_headers(a, b, ignore)
        return
    for side, batch in (("a", a), ("b", b)):
        yield from _load_records(side, batch, summary, decompressor)
    yield from _diff_headers(a, b, ignore)
    yield from _merge_records(((record, a) for record in a.records or []),
                              ((record, b) for record in b.records or []), summary, ignore)


def _load_records(side: str, batch: Batch, summary: DiffSummary, decompressor: Decompressor) -> Iterator[Difference]:
    """Decode a batch's records (kept as its body), yielding the damage only they show."""
    if batch.records is None and batch.body is not None and batch.magic == 2:
        known = len(batch.findings)
        # Walked into columns and read back as a stream of records: a batch of millions holds no list.
        load_records(batch, batch.body, decompressor, objects=False)
        if batch.compressed and batch.record_data is not None:
            batch.record_data = bytes(batch.record_data)   # the decompressor's buffer serves the next batch
        stream_records(batch)
        # What only the records show (a batch past --max-decompressed-bytes, a broken record) is damage.
        yield from (_damage(side, finding, batch, summary) for finding in batch.findings[known:]
                    if finding.is_damage)


def _diff_headers(a: Batch, b: Batch, ignore: AbstractSet[str]) -> Iterator[Difference]:
    if a.base_offset != b.base_offset:
        yield Difference("batch-changed", a.base_offset, "base_offset", str(a.base_offset), str(b.base_offset),
                         a.pos, b.pos)
    for name in BATCH_FIELDS:
        if name in ignore:
            continue
        value_a, value_b = _field(a, name, ignore), _field(b, name, ignore)
        if value_a != value_b:
            yield Difference("batch-changed", a.base_offset, name, _shown(value_a), _shown(value_b), a.pos, b.pos)


def _merge_records(side_a, side_b, summary: DiffSummary, ignore: AbstractSet[str]) -> Iterator[Difference]:
    """Merge two offset-ordered streams of (record, batch) and compare records holding the same offset."""
    a, b = next(side_a, None), next(side_b, None)
    while a is not None or b is not None:
        if a is not None and (b is None or a[0].offset < b[0].offset):
            summary.records["only_a"] += 1
            yield Difference("record-only-a", a[0].offset, "", _record_label(a[0]), None, _record_pos(*a))
            a = next(side_a, None)
        elif b is not None and (a is None or b[0].offset < a[0].offset):
            summary.records["only_b"] += 1
            yield Difference("record-only-b", b[0].offset, "", None, _record_label(b[0]), None, _record_pos(*b))
            b = next(side_b, None)
        elif a is not None and b is not None:   # (always, here: the same offset on both sides)
            differences = list(_diff_record(a, b, ignore))
            summary.records["changed" if differences else "same"] += 1
            yield from differences
            a, b = next(side_a, None), next(side_b, None)


def _record_pos(record: Record, batch: Batch | None) -> int | None:
    if batch is None:
        return None
    return batch.payload_pos if batch.compressed else record.pos


def _record_label(record: Record) -> str:
    return f"key {_shown(record.key)}, value {_shown(record.value)}"


def _diff_record(a, b, ignore: AbstractSet[str]) -> Iterator[Difference]:
    (record_a, batch_a), (record_b, batch_b) = a, b
    pos_a, pos_b = _record_pos(record_a, batch_a), _record_pos(record_b, batch_b)
    for name in RECORD_FIELDS:
        if name in ignore or name == "headers":
            continue
        value_a, value_b = getattr(record_a, name), getattr(record_b, name)
        if value_a != value_b:
            at = _first_difference(value_a, value_b)
            yield Difference("record-changed", record_a.offset, name, _shown(value_a, at), _shown(value_b, at),
                             pos_a, pos_b, _whole(value_a), _whole(value_b), at)
    if "headers" not in ignore and record_a.headers != record_b.headers:
        for index in range(max(len(record_a.headers), len(record_b.headers))):
            header_a = record_a.headers[index] if index < len(record_a.headers) else None
            header_b = record_b.headers[index] if index < len(record_b.headers) else None
            if header_a != header_b:
                yield Difference("record-changed", record_a.offset, f"headers[{index}]",
                                 None if header_a is None else _shown([header_a]),
                                 None if header_b is None else _shown([header_b]), pos_a, pos_b,
                                 _whole_header(header_a), _whole_header(header_b))


def _first_difference(a, b) -> int | None:
    """The first byte position where two byte strings differ (the shorter's length when one is a prefix)."""
    if not isinstance(a, bytes) or not isinstance(b, bytes):
        return None
    return next((index for index, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _whole(value):
    """A record field whole, for JSON: bytes as {"utf8"|"hex": ...} (as dump writes them)."""
    from kbatch.output.values import bytes_json

    return bytes_json(value) if isinstance(value, bytes) else value


def _whole_header(header) -> dict | None:
    return None if header is None else {"key": _whole(header[0]), "value": _whole(header[1])}


def _diff_records_only(a: _Side, b: _Side, summary: DiffSummary, ignore: AbstractSet[str]) -> Iterator[Difference]:
    """Records merged across batches: batching, compression and batch headers do not matter."""
    def records(side: _Side):
        while side.current is not None:
            batch = side.current
            for record in batch.records or []:
                yield record, batch
            side.advance()

    pending = []
    for difference in _merge_records(records(a), records(b), summary, ignore):
        pending += a.take_pending() + b.take_pending()
        yield from pending
        pending = []
        yield difference
    yield from a.take_pending()
    yield from b.take_pending()
