"""Tying every byte of an entry to the field it belongs to (``kbatch hexdump-annotate``).

The spans come from the construct declarations in :mod:`kbatch.format.layouts`
(:func:`~kbatch.format.layouts.field_spans`), walked over the entry's bytes: the
same layouts the reader decodes with, not a second table of offsets.  Where
a field does not read, the spans stop there, that field is marked with the
finding, and the rest of the entry is one raw span: no byte is hidden.

Positions are file positions, except for spans of decompressed records,
whose positions are inside the decompressed bytes (``Span.inner``).
"""

from __future__ import annotations

import io
import mmap
from dataclasses import dataclass

from kbatch.format.findings import Finding
from kbatch.format.layouts import (
    ControlRecordKey,
    SpanError,
    EndTransactionMarkerValue,
    MessageV0,
    MessageV1,
    Record,
    RecordBatchHeader,
    RecordBatchV3Header,
    field_spans,
)
from kbatch.format.findings import MAX_HELD
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.format.structs import BATCH_V3_FIXED, CONTROL_TYPES, IGNORE_MESSAGE_ATTRIBUTES_MASK, PROPOSED_V3_MAGIC


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    path: str                    # batch[3].records[7].headers[0].value
    value: str                   # the decoded value, for the legend
    kind: str = "field"          # field | raw (bytes no field explains) | damage (the field that failed)
    finding: Finding | None = None
    inner: bool = False          # positions inside decompressed bytes

    @property
    def size(self) -> int:
        return self.end - self.start


def _shown(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value)
        try:
            decoded = text.decode("utf-8")
            if decoded.isprintable():
                return repr(decoded) if len(decoded) <= 40 else repr(decoded[:40]) + f"… ({len(text)} bytes)"
        except UnicodeDecodeError:
            pass
        return "0x" + text[:20].hex() + (f"… ({len(text)} bytes)" if len(text) > 20 else "")
    if isinstance(value, str):   # an internal topic's string: a group id, a topic, written by anyone
        from kbatch.output.visible import visible

        return visible(value)
    return str(value)


def _described(path: str, value) -> str:
    """A field's value, with what it means where a number alone says little."""
    shown = _shown(value)
    if path.endswith("key.type") and isinstance(value, int):
        return f"{shown} ({CONTROL_TYPES.get(value, 'UNKNOWN')})"
    return shown


def describe_attributes(attributes: int) -> str:
    from kbatch.format.codecs import codec_name
    from kbatch.format.structs import (COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, DELETE_HORIZON_FLAG_MASK, TIMESTAMP_TYPE_MASK,
                          TRANSACTIONAL_FLAG_MASK)

    words = [codec_name(attributes & COMPRESSION_CODEC_MASK)]
    words.append("LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime")
    for mask, word in ((TRANSACTIONAL_FLAG_MASK, "transactional"), (CONTROL_FLAG_MASK, "control"),
                       (DELETE_HORIZON_FLAG_MASK, "deleteHorizon")):
        if attributes & mask:
            words.append(word)
    return ", ".join(words)


def _declared(declaration, data: bytes, base: int, path: str, *, inner: bool = False) -> tuple[list[Span], object]:
    spans, error = field_spans(declaration, data, base=base, path=path)
    return [Span(s.start, s.end, s.path, _described(s.path, s.value), inner=inner) for s in spans], error


def _rest(spans: list[Span], start: int, end: int, path: str, finding: Finding | None, error, *,
          inner: bool = False) -> list[Span]:
    """Close a list of spans: mark the field that failed, and leave the rest of the bytes as one raw span."""
    position = spans[-1].end if spans else start
    out = list(spans)
    if error is not None and position < end:
        failing_end = end
        out.append(Span(position, failing_end, error.path, error.message, "damage", finding, inner))
        return out
    if position < end:
        out.append(Span(position, end, f"{path} (unparsed)", f"{end - position} bytes", "raw", finding, inner))
    return out


def entry_spans(batch: Batch, data, index: int, window: tuple[int, int] | None = None, *,
                internal: str | None = None, kafka_version: str | None = None) -> list[Span]:
    """Every span of one entry (``data`` is its bytes in the file), tiling it exactly.

    A header field a finding names (a lying batch_length, a crc that does not
    match) is marked as the damage, with its finding.  With ``window`` (file
    positions low, high), only the records that overlap it are walked, so a huge
    batch costs what is shown, not what it holds; the spans then tile the
    window, not the whole entry.
    """
    spans = _entry_spans(batch, data, index, window, internal, kafka_version)
    named = {f"batch[{index}].{finding.field}": finding for finding in batch.findings
             if finding.is_damage and finding.inner_pos is None}
    return [Span(s.start, s.end, s.path, s.value, "damage", named[s.path], s.inner)
            if s.path in named and s.kind == "field" else s for s in spans]


def _entry_spans(batch: Batch, data, index: int, window: tuple[int, int] | None, internal: str | None,
                 kafka_version: str | None) -> list[Span]:
    path = f"batch[{index}]"
    if batch.magic >= 2:
        if batch.magic == PROPOSED_V3_MAGIC:   # its header ends in three varints: at most 25 bytes more
            header, header_bytes = RecordBatchV3Header, data[:BATCH_V3_FIXED.size + 25]
        else:
            header, header_bytes = RecordBatchHeader, data[:RecordBatchHeader.sizeof()]
        spans, error = _declared(header, header_bytes, batch.pos, path)
        described = describe_attributes(batch.attributes)
        if batch.magic == PROPOSED_V3_MAGIC and batch.attributes & IGNORE_MESSAGE_ATTRIBUTES_MASK:
            described += ", ignoreMessageAttributes"
        spans = [Span(s.start, s.end, s.path, f"{s.value} ({described})")
                 if s.path == f"{path}.attributes" else s for s in spans]
        if error is not None:
            return _rest(spans, batch.pos, batch.pos + len(data), path, _first_damage(batch), error)
        records_start = spans[-1].end
        if batch.compressed:
            spans.append(Span(records_start, batch.pos + len(data), f"{path}.records",
                              f"{batch.codec}, {batch.count} records", finding=_records_finding(batch)))
            return spans
        return spans + record_spans(batch, data[records_start - batch.pos:], records_start, path, window=window,
                                    internal=internal, kafka_version=kafka_version)
    declaration = MessageV1 if batch.magic == 1 else MessageV0
    spans, error = _declared(declaration, data, batch.pos, path)
    if batch.codec != "none" and error is None:
        value = spans[-1]
        spans[-1] = Span(value.start, value.end, value.path, f"{batch.codec}, {batch.count} inner messages")
    return _rest(spans, batch.pos, batch.pos + len(data), path, _first_damage(batch), error)


def record_spans(batch: Batch, data, base: int, path: str, *, inner: bool = False,
                 window: tuple[int, int] | None = None, internal: str | None = None,
                 kafka_version: str | None = None) -> list[Span]:
    """The records of a v2 batch, each walked with the Record declaration within the bytes the reader gave it.

    Records the reader could not decode are walked too, up to the field that fails.  With ``window``, records
    wholly outside it are passed over without being walked.  ``internal`` names an internal topic's decoder
    (kbatch.messages.topics): keys and values are then split into their messages' fields (a value Kafka
    changed in place, with the layout of ``kafka_version`` or the one the bytes fit).
    """
    spans: list[Span] = []
    position, end = base, base + len(data)
    declaration = _record_declaration(batch)
    low, high = window if window is not None else (base, end)
    for index, record in enumerate(batch.records or []):
        position = record.pos + record.size
        if position <= low:
            continue
        if record.pos >= high:
            return spans
        chunk = data[record.pos - base:record.pos - base + record.size]
        fields, _ = _declared(declaration, chunk, record.pos, f"{path}.records[{index}]", inner=inner)
        if batch.is_control:
            fields = _control_fields(fields, chunk, record.pos, inner)
        elif internal is not None:
            fields = _internal_fields(fields, chunk, record.pos, inner, internal, kafka_version)
        spans += fields
    if high <= position:
        return spans
    if position < end:
        rest_path = f"{path}.records[{len(batch.records or [])}]"
        finding = _records_finding(batch)
        # A record is at most its length varint (5 bytes) and the length it gives; the declaration reads no further.
        rest = data[position - base:]
        if window is not None:
            rest = rest[:max(high - position, 0) + _RECORD_READ_AHEAD]
        fields, error = _declared(declaration, rest, position, rest_path, inner=inner)
        # The declaration alone does not bound a record by its length; the reader does.  Stop where the
        # reader's finding says the record broke, so both tell the same story.
        failed_at = None if finding is None else next(
            (i for i, span in enumerate(fields) if span.path.endswith("." + finding.field)), None)
        if finding is not None and failed_at is not None:
            fields, error = fields[:failed_at], SpanError(fields[failed_at].path, fields[failed_at].start,
                                                          f"{finding.code}: expected {finding.expected}")
        elif error is None:   # it reads, but the reader found it does not belong (e.g. past recordsCount)
            fields = []
        spans += _rest(fields, position, end, f"{path}.records", finding, error, inner=inner)
    return spans


def _record_declaration(batch: Batch):
    if batch.magic == PROPOSED_V3_MAGIC:
        from kbatch.reading.v3 import record_declaration
        return record_declaration(batch.attributes)
    return Record


# Bytes past a window's end read to finish the record it ends in (a larger record is shown as damaged there).
_RECORD_READ_AHEAD = 1 << 20


def _control_fields(spans: list[Span], chunk: bytes, base: int, inner: bool) -> list[Span]:
    """A control record's key and value, split into the fields of their own declarations (a KRaft control
    record's value: its message schema, as kbatch.messages.control reads it)."""
    from kbatch.messages.control import KRAFT_CONTROL_MESSAGES, kraft_control_spans

    out = []
    control_type: str | None = None
    for span in spans:
        name = span.path.rsplit(".", 1)[-1]
        if name == "value" and control_type in KRAFT_CONTROL_MESSAGES and span.size:
            fields, _ = kraft_control_spans(control_type, bytes(chunk[span.start - base:span.end - base]))
            out += _rest([Span(span.start + start, span.start + end, f"{span.path}.{field}", _message_value(field, value),
                               inner=inner) for start, end, field, value in fields],
                         span.start, span.end, span.path, None, None, inner=inner)
            continue
        if name == "key" and span.size >= ControlRecordKey.sizeof():
            control_type = CONTROL_TYPES.get(ControlRecordKey.parse(bytes(chunk[span.start - base:span.end - base]))
                                             .type)
        declaration = {"key": ControlRecordKey, "value": EndTransactionMarkerValue}.get(name)
        if declaration is None or span.size < declaration.sizeof():
            out.append(span)
            continue
        parts, _ = _declared(declaration, chunk[span.start - base:span.end - base], span.start, span.path,
                             inner=inner)
        out += _rest(parts, span.start, span.end, span.path, None, None, inner=inner)
    return out


def _internal_fields(spans: list[Span], chunk: bytes, base: int, inner: bool, decoder: str,
                     kafka_version: str | None = None) -> list[Span]:
    """An internal topic's key and value, split into the fields of Kafka's message schemas as the decoder
    reads them (kbatch.messages.topics.field_spans); what does not read stays one raw span."""
    from kbatch.messages.topics import field_spans as message_spans

    where = {span.path.rsplit(".", 1)[-1]: span for span in spans}
    parts = {name: bytes(chunk[span.start - base:span.end - base]) if span.size else None
             for name, span in where.items() if name in ("key", "value")}
    if set(parts) != {"key", "value"}:
        return spans
    split = message_spans(decoder, parts["key"], parts["value"], kafka_version)
    out = []
    for span in spans:
        name = span.path.rsplit(".", 1)[-1]
        fields = split[name][0] if name in parts and parts[name] is not None else ()
        if not fields:
            out.append(span)
            continue
        out += _rest([Span(span.start + start, span.start + end, f"{span.path}.{field}",
                           _message_value(field, value), inner=inner)
                      for start, end, field, value in fields], span.start, span.end, span.path, None, None,
                     inner=inner)
    return out


def _message_value(path: str, value) -> str:
    """A message field's value for the legend: strings quoted (and cut), the decoder's own labels as they are."""
    from kbatch.messages.decoder import to_json
    from kbatch.messages.topics import Label
    if isinstance(value, Label) or (isinstance(value, str) and "_tag[" in path):
        return value
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:40]) + f"… ({len(value)} characters)"
    if isinstance(value, (bytes, bytearray)) and "(unknown)" not in path:
        # a bytes field as Kafka's JSON converters print it (MessageUtil / Jackson BinaryNode: base64);
        # a tag the schema does not know is kbatch's own find, kept in hex as _unknownTaggedFields has it
        text = to_json(bytes(value))
        return text if len(text) <= 44 else text[:44] + f"… ({len(value)} bytes)"
    return _shown(value)


def _first_damage(batch: Batch) -> Finding | None:
    return next((finding for finding in batch.findings if finding.is_damage), None)


def _records_finding(batch: Batch) -> Finding | None:
    return next((finding for finding in batch.findings if finding.is_damage and finding.code != "crc-mismatch"),
                None)


def decompressed_spans(batch: Batch, inflated, index: int, window: tuple[int, int] | None = None, *,
                       internal: str | None = None, kafka_version: str | None = None) -> list[Span]:
    """The inflated records of a compressed batch; positions are inside the decompressed bytes.

    With ``window`` (positions low, high inside them), only what overlaps it.
    """
    path = f"batch[{index}]"
    low, high = window if window is not None else (0, len(inflated))
    if batch.magic >= 2:
        return record_spans(batch, inflated, 0, path, inner=True, window=window, internal=internal,
                            kafka_version=kafka_version)
    from kbatch.reading.reader import BufferStream, ReadOptions, SegmentReader   # the one reader frames the inner message set
    from kbatch.walk.engine import entries

    spans: list[Span] = []
    inner_index = 0
    # Over the inflated bytes where they lie (a BytesIO would copy a wrapper bomb's megabytes once more).
    inner = SegmentReader(BufferStream(inflated), ReadOptions(), size=len(inflated), nested_magic=batch.magic)
    for item in entries(inner):
        if item.pos >= high:
            break
        if isinstance(item, Finding):
            if item.owns_bytes:
                spans.append(Span(item.pos, item.pos + item.size, f"{path}.inner (unparsed)",
                                  f"{item.size} bytes", "raw", item, True))
            continue
        if item.pos + item.size <= low:
            inner_index += 1
            continue
        declaration = MessageV1 if item.magic == 1 else MessageV0
        message_path = f"{path}.inner[{inner_index}]"
        fields, error = _declared(declaration, inflated[item.pos:item.pos + item.size], item.pos, message_path,
                                  inner=True)
        spans += _rest(fields, item.pos, item.pos + item.size, message_path, _first_damage(item), error, inner=True)
        inner_index += 1
    return spans


# -- which entry to show ------------------------------------------------------------------------------------


def start_for_offset(path: str, reader, stream, record_offset: int) -> tuple[tuple[int, int], str | None]:
    """((position, batch index) where the batch holding ``record_offset`` can start, found without decoding;
    the note the index lookup left, if any).

    The ``.index`` beside a segment says where to go (verified, as ``dump --offset-range`` uses it); the
    batch index there is counted by stepping over the headers before it.  From there, and without an
    index, batches whose CRC verifies and whose last offset is below the target are stepped over at their
    header.  Anything else (damage, a header that does not chain) is left to the walk.
    """
    from kbatch.partition.seek import Window, peek, start_position

    limit = reader.options.max_entry_size
    found = start_position(path, reader, stream, Window(low=record_offset, high=record_offset))
    pos = index = 0
    while pos < found.pos:   # headers chain to the verified index position: count the batches on the way
        header = peek(stream, pos, reader.size, limit)
        if header is None or header.end > found.pos:
            pos = index = 0
            break
        pos, index = header.end, index + 1
    while pos < reader.size:
        header = peek(stream, pos, reader.size, limit)
        if header is None or header.last_offset >= record_offset or not reader.entry_verifies_at(pos):
            break
        pos, index = header.end, index + 1
    return (pos, index), found.note


def select_entry(reader, batch_index: int | None, record_offset: int | None, position: int | None,
                 start: tuple[int, int] = (0, 0)):
    """(batch index, the batch or damaged range, its findings) the options ask for; the first batch by default.

    ``start``: (position, batch index) of an entry to walk from (the batches before it are not wanted).
    """
    from kbatch.walk.engine import entries

    index = start[1] - 1
    pending: list[Finding] = []   # the damaged range asked for, and the findings about its bytes after it
    for item in entries(reader, start[0]):
        if isinstance(item, Finding):
            if position is not None and item.owns_bytes and item.pos <= position < item.pos + item.size:
                pending = [item]
                continue
            if pending and not item.owns_bytes:
                pending.append(item)
                continue
            if pending:
                break
            continue
        if pending:
            break
        index += 1
        if batch_index is not None and index != batch_index:
            continue
        if record_offset is not None and not item.base_offset <= record_offset <= item.last_offset:
            continue
        if position is not None and not item.pos <= position < item.pos + item.size:
            continue
        return index, item, item.findings
    if pending:
        return index, pending[0], pending
    return None


def range_spans(reader, view, low: int, high: int, internal: dict) -> tuple[list[Span], bool]:
    """The spans of every entry and damaged range that lies in file positions [low, high), and whether any
    of them is damaged."""
    from kbatch.output.values import counted
    from kbatch.walk.engine import each, entries

    spans: list[Span] = []
    damaged = False
    index = -1

    def region(finding: Finding) -> bool:
        nonlocal damaged
        if finding.owns_bytes and finding.pos < high and finding.pos + finding.size > low:
            spans.append(Span(finding.pos, finding.pos + finding.size, "damaged range", counted(finding.size, "byte"),
                              "raw", finding))
        damaged |= finding.is_damage and low <= finding.pos < high
        return finding.pos >= high

    def batch(batch: Batch) -> bool:
        nonlocal damaged, index, spans
        index += 1
        if batch.pos >= high:
            return True
        if batch.pos + batch.size > low:
            spans += entry_spans(batch, view[batch.pos:batch.pos + batch.size], index, (low, high), **internal)
            damaged |= batch.is_damaged
        return False

    each(entries(reader), batch, region)
    high = min(high, reader.size)
    return [span for span in spans if span.end > low and span.start < high], damaged


class Annotation:
    """One input's bytes and the reader that ties them to fields: what ``hexdump-annotate`` shows from.

    The bytes are a map of the file (stdin is spooled to a buffer), so that only what is shown is read.
    """

    def __init__(self, stream, decompressed_limit: int):
        # A v0/v1 wrapper's records are not shown (its inner messages are, from the bytes): keep half as many
        # as other commands, so that a wrapper bomb's records and its inflated bytes fit the same bound.
        self.reader = SegmentReader(stream, ReadOptions(records=True, decompressed_limit=decompressed_limit,
                                                        held_records=MAX_HELD // 2))
        self.stream = stream
        self.view = _lazy_bytes(stream, self.reader.size)

    @property
    def size(self) -> int:
        return self.reader.size

    def entry(self, path: str, batch_index: int | None, record_offset: int | None, position: int | None):
        """((batch index, the batch or damaged range, its findings) or None, the note an index lookup left)."""
        start, note = (0, 0), None
        if record_offset is not None:
            start, note = start_for_offset(path, self.reader, self.stream, record_offset)
        return select_entry(self.reader, batch_index, record_offset, position, start), note

    def range(self, low: int, high: int, internal: dict) -> tuple[list[Span], bool]:
        return range_spans(self.reader, self.view, low, high, internal)

    def inflated(self, batch: Batch):
        """The batch's records, decompressed by the reader's own decompressor (its buffer is reused, so the
        records are never inflated twice over); raises CodecError."""
        payload = self.view[batch.payload_pos:batch.payload_pos + batch.payload_size]
        return self.reader.decompressor.decompress_view(batch.attributes & 7, payload, batch.magic)


def _lazy_bytes(stream, size: int):
    if isinstance(stream, io.BytesIO):
        return stream.getbuffer()
    if size == 0:
        return b""
    return memoryview(mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ))
