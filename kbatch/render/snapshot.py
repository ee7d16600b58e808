"""Kafka bytes as a reviewable golden text, and what changed between two of them, field by field.

A snapshot is the text ``kbatch snapshot write`` puts beside a file and the ``kafka_snapshot`` fixture
(kbatch.testing) keeps for a test: every batch and record with its fields (dump's JSON names, values as
dump writes them), findings in verify-crc's words, then the exact bytes in hex.  The text is for people;
the bytes are what a check compares, and all a snapshot needs to rebuild its input.  It does not depend on
the terminal's width or colours, nor on anything but the bytes.

Where two inputs differ, :func:`explain` says it in the terms of kbatch diff (kbatch.ops.diff): which field
of which batch or record (by offset, with its byte position) changed and how, apart from the fields that
changed only because another did (the CRC, and the sizes).
"""

from __future__ import annotations

import io
import json
import re
import tempfile
from bisect import bisect_right
from typing import BinaryIO, Iterable, Iterator

from kbatch.ops.diff import ALIASES, Difference, DiffSummary, diff_streams
from kbatch.format.findings import Finding
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader, parse_hex
from kbatch.walk.engine import each, entries
from kbatch.output.jsonout import batch_dict, record_dict
from kbatch.output.values import counted, finding_text, offsets_text
from kbatch.output.visible import json_visible
from kbatch.render.verify import finding_marker

FORMAT_LINE = "kbatch snapshot 1"      # the first line: what the file is, and the version of its layout
HEX_HEADING = "bytes (hex), the first column their position; these are compared, the text above is for review:"
HEX_WIDTH = 32                          # bytes a hex line holds
EXTENSION = ".kbatch-snapshot"          # the golden text beside a file (kbatch snapshot write FILE)

# What a batch's and a record's lines leave out of batch_dict and record_dict: what the heading says, and
# what has a line of its own.
_BATCH_SKIP = {"type", "pos", "base_offset", "last_offset", "findings", "payload"}
_RECORD_SKIP = {"offset", "headers", "pos", "inner_pos"}


def as_bytes(data) -> bytes:
    """``data`` (bytes, bytearray, memoryview or anything with the buffer protocol) as bytes."""
    try:
        return bytes(memoryview(data))
    except TypeError:
        raise TypeError(f"Kafka bytes expected (bytes, bytearray, memoryview), got {type(data).__name__}") from None


def describe(data: bytes) -> str:
    """The snapshot text of ``data``: the batches, their records and findings, then the bytes."""
    data = bytes(data)
    return "".join(snapshot_text(io.BytesIO(data)))


# Text a snapshot keeps in memory while it is made; past this its batch and record lines wait on disk.
_TEXT_IN_MEMORY = 8 * 1024 * 1024
_HEX_PIECE = HEX_WIDTH * 2048   # bytes read at a time for the hex section


def snapshot_text(stream: BinaryIO) -> Iterator[str]:
    """The snapshot text of a seekable stream's bytes, a piece at a time, in memory that does not grow with them.

    The second line counts what the walk finds, so the batch and record lines wait in a temporary file
    (on disk once they are large) until the walk is done; the hex is written from the stream itself.
    """
    size = stream.seek(0, io.SEEK_END)
    batches = records = damaged = 0
    with tempfile.SpooledTemporaryFile(_TEXT_IN_MEMORY, mode="w+", encoding="utf-8", newline="\n") as body:
        for item in entries(SegmentReader(stream, ReadOptions(records=True), size=size)):
            body.write("\n")
            if isinstance(item, Finding):   # a damaged range between batches
                damaged += item.is_damage
                body.write(finding_marker(item) + finding_text(item) + "\n")
                continue
            batches += 1
            records += len(item.records or ())
            damaged += item.is_damaged
            body.writelines(line + "\n" for line in _batch_lines(item))
        verdict_text = "damaged" if damaged else "clean"
        yield f"{FORMAT_LINE}\n{counted(size, 'byte')}: {counted(batches, 'batch')}, " \
              f"{counted(records, 'record')}; {verdict_text}\n"
        body.seek(0)
        while piece := body.read(_HEX_PIECE):
            yield piece
    yield f"\n{HEX_HEADING}\n"
    stream.seek(0)
    pos = 0
    while chunk := read_exactly(stream, _HEX_PIECE):
        yield "".join(line + "\n" for line in _hex_lines(chunk, pos))
        pos += len(chunk)


def read_exactly(stream: BinaryIO, size: int) -> bytes:
    """``size`` bytes of the stream (fewer only at its end): an unbuffered read may hand back fewer."""
    parts, wanted = [], size
    while wanted > 0 and (part := stream.read(wanted)):
        parts.append(part)
        wanted -= len(part)
    return b"".join(parts)


def _batch_lines(batch: Batch) -> list[str]:
    fields = batch_dict(batch)
    lines = [f"batch at byte {batch.pos}: {offsets_text(batch.base_offset, batch.last_offset)}"]
    lines += [f"  {name}: {_value(name, value, fields)}" for name, value in fields.items()
              if name not in _BATCH_SKIP and not name.endswith("_iso") and value is not None]
    lines += [f"  {finding_marker(finding)}{finding_text(finding, batch)}" for finding in batch.findings]
    for record in batch.records or ():
        fields = record_dict(record, batch, "auto")
        at = f"byte {record.pos}" if not batch.compressed else f"byte {record.pos} of the decompressed records"
        lines.append(f"  record offset {record.offset} at {at}")
        lines += [f"    {name}: {_value(name, value, fields)}" for name, value in fields.items()
                  if name not in _RECORD_SKIP and not name.endswith("_iso") and value is not None]
        lines += [f"    header {_bytes(header['key'])}: {_bytes(header['value'])}" for header in fields["headers"]]
    return lines


def _value(name: str, value, fields: dict) -> str:
    """A field's value as one line of text: bytes as dump's JSON has them (text quoted, else 0x hex), a
    timestamp with its ISO form, anything else as JSON."""
    if name in ("key", "value"):
        return _bytes(value)
    iso = fields.get(f"{name}_iso")
    if iso:
        return f"{value} ({iso})"
    return json_visible(json.dumps(value, ensure_ascii=False))


def _bytes(value: dict | None) -> str:
    if value is None:
        return "null"
    (kind, text), = value.items()
    # JSON's escapes for what a terminal or a code review would act on (a bidi control, a line separator)
    return json_visible(json.dumps(text, ensure_ascii=False)) if kind == "utf8" else f"0x{text}"


def _hex_lines(data: bytes, first_pos: int = 0) -> list[str]:
    """The hex lines of ``data``, whose first byte lies at ``first_pos`` (a multiple of HEX_WIDTH)."""
    return [f"{first_pos + pos:08x}  " + " ".join(data[at:at + 4].hex()
                                                 for at in range(pos, min(pos + HEX_WIDTH, len(data)), 4))
            for pos in range(0, len(data), HEX_WIDTH)]


def snapshot_bytes(text: str) -> bytes:
    """The bytes a snapshot text holds (its hex lines); ValueError when it is no snapshot or its hex does not
    read."""
    return b"".join(snapshot_pieces(io.StringIO(text)))


_POSITION = re.compile(r"[0-9a-fA-F]+")


def snapshot_pieces(lines: Iterable[str]) -> Iterator[bytes]:
    """The bytes a snapshot text holds, a hex line at a time, from its lines (a text file read line by line);
    ValueError when it is no snapshot or its hex does not read (raised when that line is reached)."""
    lines = iter(lines)
    if not next(lines, "").startswith(FORMAT_LINE) or not any(line == HEX_HEADING + "\n" for line in lines):
        raise ValueError(f"not a kbatch snapshot: no {FORMAT_LINE!r} line and hex section")
    expected = 0
    for number, line in enumerate(lines, 1):
        position, _, digits = line.strip().partition("  ")
        if not line.strip():
            continue
        if not _POSITION.fullmatch(position):   # (int() would take "0x1", "1_0" and other scripts' digits)
            raise ValueError(f"hex line {number} starts with {position!r}, not its position in hex digits")
        if int(position, 16) != expected:
            raise ValueError(f"hex line {number} says position {position}, but {expected} bytes come before it")
        try:
            piece = parse_hex(digits.encode("ascii", "replace"))
        except ValueError as error:
            raise ValueError(f"hex line {number}: {error}") from None
        expected += len(piece)
        yield piece


# -- what changed --------------------------------------------------------------------------------------------

# kbatch's field names (dump's JSON, diff's --ignore) with the name Kafka's format gives them, where it differs.
KAFKA_NAMES = {next(iter(names)): alias for alias, names in ALIASES.items()
               if len(names) == 1 and alias != alias.lower()}
# What a batch's CRC covers (v2: attributes to the end; v0/v1: magic to the end): everything but these.
_OUTSIDE_CRC = {"base_offset", "partition_leader_epoch", "batch_length", "size", "crc"}
_SIZES = ("size", "batch_length")
MAX_RUNS = 10                    # runs of differing bytes named, at most
MAX_RUNS_INPUT = 16 * 1024 * 1024   # inputs larger than this name only their first differing byte


def compare_snapshot(kept_text, data: BinaryIO) -> tuple[bool, tuple[bytes, bytes] | None]:
    """A snapshot (``kept_text``, a text stream) held against the input it was written of (``data``): the hex
    and the text compared with the input's a line and a piece at a time; only when they differ are both read
    whole, to say field by field what changed.  (stale: the bytes agree but the text is an older kbatch's,
    None or the snapshot's bytes and the input's where they differ); UnicodeDecodeError or ValueError when the
    snapshot does not read."""
    if _same_bytes(snapshot_pieces(kept_text), data):
        return not _same_text(snapshot_text(_rewound(data)), _rewound(kept_text)), None
    return False, (snapshot_bytes(_rewound(kept_text).read()), _rewound(data).read())

def _rewound(stream):
    stream.seek(0)
    return stream


def _same_bytes(kept_pieces, stream) -> bool:
    """Whether the stream holds exactly the bytes of ``kept_pieces`` (read as far as they agree)."""
    for piece in kept_pieces:
        if read_exactly(stream, len(piece)) != piece:
            return False
    return not stream.read(1)


def _same_text(pieces, text_stream) -> bool:
    """Whether the text ``pieces`` make is the text stream's, to its end."""
    for piece in pieces:
        if text_stream.read(len(piece)) != piece:
            return False
    return not text_stream.read(1)


def _span_text(start: int, end: int) -> str:
    return f"byte {start}" if end == start + 1 else f"bytes {start}–{end - 1}"


def reads_as_kafka(data: bytes, max_records: int | None = None) -> bool:
    """True when ``data`` reads as Kafka record batches (or v0/v1 messages) end to end without damage.

    With ``max_records``, also False when the batches hold more records than that (a batch that holds none
    counted as one): their headers are read first, and the walk stops there, so that the answer costs a
    bounded number of records decoded whatever the size of ``data``.
    """
    data = bytes(data)
    if len(data) < 17 or data[16] > 2:   # no log entry header, or no magic kbatch reads
        return False
    if max_records is not None and not _holds_at_most(data, max_records):
        return False
    batches = 0
    for item in entries(SegmentReader(io.BytesIO(data), ReadOptions(records=True))):
        if item.is_damage if isinstance(item, Finding) else item.is_damaged:
            return False
        batches += not isinstance(item, Finding)
    return batches > 0


def _holds_at_most(data: bytes, max_records: int) -> bool:
    """Whether the headers of ``data``'s entries count at most ``max_records`` records (each at least one) and
    no damage before that: the records themselves are not decoded."""
    counted_records = 0
    for item in entries(SegmentReader(io.BytesIO(data))):
        if item.is_damage if isinstance(item, Finding) else item.is_damaged:
            return False
        counted_records += 0 if isinstance(item, Finding) else max(1, item.count or 0)
        if counted_records > max_records:
            return False
    return True


def explain(old: bytes, new: bytes, old_name: str = "the snapshot", new_name: str = "now") -> list[str]:
    """What changed from ``old`` to ``new``, field by field (empty when they are the same bytes)."""
    old, new = bytes(old), bytes(new)
    summary = DiffSummary()
    differences = list(diff_streams(io.BytesIO(old), io.BytesIO(new), summary))
    if summary.first_different_byte is None:
        return []
    from kbatch.render.diff import verdict   # (Rich: loaded only where bytes differ)

    sides = f"A = {old_name}, B = {new_name}"
    lines = [f"Kafka bytes differ ({sides}): {verdict(summary).plain.removeprefix('different: ')}"
             if not summary.same else f"the same batches and records in other bytes ({sides})",
             f"first differing byte: {summary.first_different_byte} (sizes {len(old)} → {len(new)})"]
    layout = _Layout(old)
    lines += layout.differing_fields(old, new, summary.first_different_byte)
    by_batch: dict[int | None, list[Difference]] = {}   # None: no batch of A holds it
    others: list[Difference] = []
    for difference in differences:
        if difference.kind in ("batch-changed", "record-changed"):
            by_batch.setdefault(layout.batch_of(difference.offset), []).append(difference)
        else:
            others.append(difference)
    for base, found in sorted(by_batch.items(), key=lambda item: item[0] if item[0] is not None else -1):
        lines += _batch_explained(layout.batch(base), found)
    lines += [_other_explained(difference, old_name, new_name) for difference in others]
    return lines


class _Layout:
    """The batches of the old bytes (A), by base offset: which batch holds a record, and which field a byte."""

    def __init__(self, data: bytes):
        # (records read: kbatch.ops.annotate names their fields)
        self.batches: list[Batch] = []
        each(entries(SegmentReader(io.BytesIO(data), ReadOptions(records=True))), self.batches.append,
             lambda finding: None)
        self.bases = [batch.base_offset for batch in self.batches]
        self.starts = [batch.pos for batch in self.batches]

    def differing_fields(self, old: bytes, new: bytes, first: int) -> list[str]:
        """Where the bytes differ, each run of differing bytes named by the field of the old bytes it lies in
        (hexdump-annotate's names); when the sizes differ, positions shift after the first change, so only
        the first and the last differing byte are named."""
        if len(old) == len(new) and len(old) <= MAX_RUNS_INPUT:
            runs, start = [], None
            for pos, (a, b) in enumerate(zip(old, new)):
                if a != b and start is None:
                    start = pos
                elif a == b and start is not None:
                    runs.append((start, pos))
                    start = None
            if start is not None:
                runs.append((start, len(old)))
        else:   # the first differing byte, and the last (counted from the end: what follows it is the same)
            same_tail = next((k for k, (a, b) in enumerate(zip(reversed(old), reversed(new))) if a != b),
                             min(len(old), len(new)))
            last = len(old) - same_tail - 1
            runs = [(first, first + 1)] + ([(last, last + 1)] if first < last < len(old) else [])
        shown = [f"{_span_text(start, end)} {', '.join(self.fields_in(old, start, end)) or 'outside any batch'}"
                 for start, end in runs[:MAX_RUNS]]
        more = f"; … ({len(runs) - MAX_RUNS} more runs)" if len(runs) > MAX_RUNS else ""
        which = "differing bytes" if len(old) == len(new) else \
            "the first and the last differing byte (positions and fields in A)"
        return [f"{which}: " + "; ".join(shown) + more]

    def fields_in(self, data: bytes, start: int, end: int) -> list[str]:
        """The fields of the batch holding ``start`` that overlap [start, end) (kbatch.ops.annotate's spans)."""
        from kbatch.ops.annotate import entry_spans

        index = bisect_right(self.starts, start) - 1
        if index < 0 or start >= self.starts[index] + self.batches[index].size:
            return []
        batch = self.batches[index]
        spans = entry_spans(batch, data[batch.pos:batch.pos + batch.size], index)
        return [span.path for span in spans if not span.inner and span.start < end and start < span.end
                and span.end > span.start]

    def batch_of(self, offset: int | None) -> int | None:
        index = bisect_right(self.bases, offset) - 1 if offset is not None else -1
        return self.bases[index] if index >= 0 else None

    def batch(self, base: int | None) -> Batch | None:
        return self.batches[self.bases.index(base)] if base in self.bases else None


def _name(field: str, magic: int | None) -> str:
    """A field's name as kbatch gives it, and Kafka's where it differs (v2 stores a record's timestamp as
    timestampDelta from the batch's baseTimestamp)."""
    if field == "timestamp" and magic == 2:
        return "timestamp (timestampDelta)"
    kafka = KAFKA_NAMES.get(field)
    return f"{field} ({kafka})" if kafka else field


def _change(difference: Difference) -> str:
    a, b = (value if value is not None else "none" for value in (difference.a, difference.b))
    return f"{a} → {b}"


def _record_place(difference: Difference, batch: Batch | None) -> str:
    """Which record: its offset (and offsetDelta in a v2 batch), and where it starts in A (inside a
    compressed batch: where the compressed records start)."""
    place = f"record offset {difference.offset}"
    if batch is not None and batch.magic == 2 and difference.offset is not None:
        place += f" (offsetDelta {difference.offset - batch.base_offset})"
    if difference.a_pos is None:
        return place
    if batch is not None and batch.compressed:
        return place + f" (in the {batch.codec} records from byte {difference.a_pos})"
    return place + f" at byte {difference.a_pos}"


def _batch_explained(batch: Batch | None, differences: list[Difference]) -> list[str]:
    magic = batch.magic if batch is not None else None
    where = f"batch at {offsets_text(batch.base_offset, batch.last_offset)} (byte {batch.pos})" if batch else "batch"
    lines = [where + ":"]
    own = [d for d in differences if not (d.kind == "batch-changed" and d.field in ("crc", *_SIZES))]
    sized = [d for d in differences if d.kind == "batch-changed" and d.field in _SIZES]
    crc = [d for d in differences if d.kind == "batch-changed" and d.field == "crc"]
    for difference in own:
        if difference.kind == "record-changed":
            lines.append(f"  {_record_place(difference, batch)}: {_name(difference.field, magic)} "
                         f"{_change(difference)}")
        else:
            lines.append(f"  {_name(difference.field, magic)}: {_change(difference)}")
    covered = [d for d in own if d.field not in _OUTSIDE_CRC]
    consequences = []
    if crc and covered:
        consequences.append(f"{_name('crc', magic)} {_change(crc[0])} (it covers the fields that changed)")
    elif crc:
        lines.append(f"  {_name('crc', magic)}: {_change(crc[0])} (the stored CRC alone: no field it covers changed)")
    if sized:
        because = " (a field's length changed)" if own else ""
        consequences.append(", ".join(f"{_name(d.field, magic)} {_change(d)}" for d in sized) + because)
    if consequences:
        lines.append("  as a consequence: " + "; ".join(consequences))
    return lines


def _other_explained(difference: Difference, old_name: str, new_name: str) -> str:
    kind, offset = difference.kind, difference.offset
    if kind == "batch-only-a":
        return f"batch only in {old_name}: {difference.a}"
    if kind == "batch-only-b":
        return f"batch only in {new_name}: {difference.b}"
    if kind == "record-only-a":
        return f"record offset {offset} only in {old_name}: {difference.a}"
    if kind == "record-only-b":
        return f"record offset {offset} only in {new_name}: {difference.b}"
    if kind == "batching":
        return f"offsets batched differently from {offset}: {difference.a} → {difference.b}"
    side, text, pos = (old_name, difference.a, difference.a_pos) if kind == "damage-a" else \
        (new_name, difference.b, difference.b_pos)
    where = f" at byte {pos}" if pos is not None else ""
    field = f", {difference.field}" if difference.field and difference.field != "range" else ""
    return f"damaged in {side}{where}{field}: {text}"
