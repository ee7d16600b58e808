"""The byte layouts of Kafka's log entries, declared once.

Every other module takes its field names, order, sizes and offsets from the
declarations here: the reader unpacks headers with the ``struct`` codecs
derived from them (:func:`fixed_layout`, written out to :mod:`kbatch.format.structs`
by ``python -m kbatch.format.layouts`` so that a run needs no construct), the hexdump
annotation derives its spans from them, and the fast record decoder is checked
against them by the tests.

Layouts are pure shape.  Judgements (CRC, lengths, counts, offsets) are made
outside, by the reader, and come out as findings -- construct's ``Checksum``
and ``Check`` would end the parse at the first bad byte.

Field names are snake_case of Kafka's own names; the camelCase name from
Kafka's source is in each field's doc so the module can be read side by side
with ``DefaultRecordBatch.java``, ``DefaultRecord.java`` and
``LegacyRecord.java``.
"""

from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from construct import (
    Array,
    Bytes,
    Construct,
    ConstructError,
    Container,
    Int8sb,
    Int16sb,
    Int32sb,
    Int32ub,
    Int64sb,
    If,
    Peek,
    Pointer,
    Renamed,
    SizeofError,
    StreamError,
    Struct,
    Switch,
    stream_read,
    this,
    stream_write,
)

from kbatch.format.structs import FixedLayout

# ---------------------------------------------------------------------------
# Log entry framing, shared by every magic
# (Records.java: OFFSET_OFFSET=0, SIZE_OFFSET=8, LOG_OVERHEAD=12,
#  MAGIC_OFFSET=16, HEADER_SIZE_UP_TO_MAGIC=17)
#
# Every entry in a segment -- a v0/v1 message or a v2 batch -- starts with an
# int64 offset and an int32 size counting the bytes after it.  The magic byte
# sits at byte 16 in all three formats, which is how a reader tells them apart
# and why one segment can hold all three.
# ---------------------------------------------------------------------------

LogEntryPrefix = Struct(
    "offset" / Int64sb * "offset / baseOffset",
    "size" / Int32sb * "size / batchLength: bytes that follow this field",
)

LOG_OVERHEAD = 12
MAGIC_OFFSET = 16
HEADER_SIZE_UP_TO_MAGIC = 17


# ---------------------------------------------------------------------------
# Bounded varints (ByteUtils.readVarint / readVarlong)
#
# Kafka's varints are protobuf's zig-zag varints, but a reader gives up after
# 5 bytes (int) or 10 bytes (long).  construct's VarInt/ZigZag are unbounded,
# so this small Construct carries the bound.
# ---------------------------------------------------------------------------


class VarintOverflow(StreamError):
    """More continuation bytes than a Kafka varint/varlong may have."""


class ZigZagVarint(Construct):
    """A zig-zag varint of at most ``max_bytes`` bytes, as Kafka writes them."""

    def __init__(self, max_bytes: int, bits: int):
        super().__init__()
        self.max_bytes = max_bytes
        self.bits = bits

    def _parse(self, stream, context, path):
        raw = 0
        for index in range(self.max_bytes):
            byte = stream_read(stream, 1, path)[0]
            raw |= (byte & 0x7F) << (7 * index)
            if not byte & 0x80:
                raw &= (1 << self.bits) - 1  # Java's int/long arithmetic drops higher bits
                return (raw >> 1) ^ -(raw & 1)
        raise VarintOverflow(f"varint longer than {self.max_bytes} bytes", path=path)

    def _build(self, obj, stream, context, path):
        out = self.to_bytes(obj)
        stream_write(stream, out, len(out), path)
        return obj

    def to_bytes(self, value: int) -> bytes:
        """What ``build`` writes, without construct's machinery (the encoder's hot path)."""
        raw = ((value << 1) ^ (value >> (self.bits - 1))) & ((1 << self.bits) - 1)
        out = bytearray()
        while raw >= 0x80:
            out.append((raw & 0x7F) | 0x80)
            raw >>= 7
        out.append(raw)
        return bytes(out)

    def _sizeof(self, context, path):
        raise SizeofError("a varint has no fixed size", path=path)


# (annotated: construct ships no types, and mypy takes ``Construct * "doc"`` for str's repetition)
Varint: Construct = ZigZagVarint(max_bytes=5, bits=32) * "varint (zig-zag, at most 5 bytes)"
Varlong: Construct = ZigZagVarint(max_bytes=10, bits=64) * "varlong (zig-zag, at most 10 bytes)"
# The shortest encodings Kafka writes (ByteUtils.writeVarint / writeVarlong), as bytes.
varint_bytes = Varint.subcon.to_bytes
varlong_bytes = Varlong.subcon.to_bytes


def _nullable_bytes(length_field: str):
    """Bytes following a length field; a negative length means null (no bytes)."""
    return If(this[length_field] >= 0, Bytes(this[length_field]))


# ---------------------------------------------------------------------------
# Message format v0 and v1 (LegacyRecord.java)
#
#   offset int64 | size int32 | crc uint32 | magic int8 | attributes int8 |
#   [timestamp int64, v1 only] | key_length int32 | key | value_length int32 | value
#
# The CRC is CRC-32 (IEEE) over magic..end of the message.  A compressed
# message is a "wrapper": its value holds a whole inner message set (log
# entries with their own offset+size prefix), compressed.
# ---------------------------------------------------------------------------

LEGACY_CODEC_MASK = 0x07           # LegacyRecord.COMPRESSION_CODEC_MASK
LEGACY_TIMESTAMP_TYPE_MASK = 0x08  # LegacyRecord.TIMESTAMP_TYPE_MASK (v1 only)

MessageV0Header = Struct(
    "offset" / Int64sb * "offset",
    "message_size" / Int32sb * "size: bytes after this field",
    "crc" / Int32ub * "crc: CRC-32 of magic..end",
    "magic" / Int8sb * "magic (0)",
    "attributes" / Int8sb * "attributes: bits 0-2 compression codec",
)

MessageV1Header = Struct(
    "offset" / Int64sb * "offset",
    "message_size" / Int32sb * "size: bytes after this field",
    "crc" / Int32ub * "crc: CRC-32 of magic..end",
    "magic" / Int8sb * "magic (1)",
    "attributes" / Int8sb * "attributes: bits 0-2 compression codec, bit 3 timestampType",
    "timestamp" / Int64sb * "timestamp",
)

_legacy_key_value = (
    "key_length" / Int32sb * "keyLength (-1: null)",
    "key" / _nullable_bytes("key_length"),
    "value_length" / Int32sb * "valueLength (-1: null)",
    "value" / _nullable_bytes("value_length") * "value; in a wrapper: the compressed inner message set",
)

MessageV0 = Struct(*MessageV0Header.subcons, *_legacy_key_value)
MessageV1 = Struct(*MessageV1Header.subcons, *_legacy_key_value)

# RecordBatch.NO_TIMESTAMP: what a v0 message's timestamp reads as.
NO_TIMESTAMP = -1


# ---------------------------------------------------------------------------
# Record batch, magic 2 (DefaultRecordBatch.java)
#
# The CRC is CRC-32C over attributes..end of the batch.  partitionLeaderEpoch
# sits before it so the broker can stamp the epoch without recomputing the CRC.
# ---------------------------------------------------------------------------

RecordBatchHeader = Struct(
    "base_offset" / Int64sb * "baseOffset",
    "batch_length" / Int32sb * "batchLength: bytes after this field, partitionLeaderEpoch to end",
    "partition_leader_epoch" / Int32sb * "partitionLeaderEpoch (not covered by the CRC)",
    "magic" / Int8sb * "magic (2)",
    "crc" / Int32ub * "crc: CRC-32C of attributes..end",
    "attributes" / Int16sb * "attributes: bits 0-2 codec, 3 timestampType, 4 isTransactional, "
    "5 isControlBatch, 6 hasDeleteHorizonMs",
    "last_offset_delta" / Int32sb * "lastOffsetDelta",
    "base_timestamp" / Int64sb * "baseTimestamp (the delete horizon when bit 6 is set)",
    "max_timestamp" / Int64sb * "maxTimestamp",
    "producer_id" / Int64sb * "producerId",
    "producer_epoch" / Int16sb * "producerEpoch",
    "base_sequence" / Int32sb * "baseSequence",
    "records_count" / Int32sb * "recordsCount",
)

# DefaultRecordBatch attribute masks.
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40


# ---------------------------------------------------------------------------
# Record, magic 2 (DefaultRecord.java)
#
#   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
#   keyLength varint | key | valueLength varint | value | headersCount varint | headers
# ---------------------------------------------------------------------------

RecordHeader = Struct(
    "key_length" / Varint * "headerKeyLength (never negative)",
    "key" / Bytes(lambda ctx: max(ctx.key_length, 0)) * "headerKey: UTF-8",
    "value_length" / Varint * "headerValueLength (-1: null)",
    "value" / _nullable_bytes("value_length") * "headerValue",
)

Record = Struct(
    "length" / Varint * "length: bytes after this field",
    "attributes" / Int8sb * "attributes (unused, 0)",
    "timestamp_delta" / Varlong * "timestampDelta",
    "offset_delta" / Varint * "offsetDelta",
    "key_length" / Varint * "keyLength (-1: null)",
    "key" / _nullable_bytes("key_length"),
    "value_length" / Varint * "valueLength (-1: null)",
    "value" / _nullable_bytes("value_length"),
    "headers_count" / Varint * "headersCount",
    "headers" / Array(lambda ctx: max(ctx.headers_count, 0), RecordHeader),
)


# ---------------------------------------------------------------------------
# Magic 3: a PROPOSAL THAT KAFKA NEVER ADOPTED
#
# A discarded KIP proposed a v3 record format to save bytes: a batch
# attribute bit 7 ``ignoreMessageAttributes`` under which records drop their
# always-zero ``attributes`` byte; ``baseTimestamp`` as a varlong,
# ``maxTimestamp`` as a varint delta from it (``maxTimestampDelta``) and
# ``lastOffsetDelta`` as a varint, those three moved to the end of the batch
# header; magic 3.  Kafka rejects magic 3.  kbatch writes and reads it only so
# its cost can be measured (``stats --what-if``) and looked at byte by byte.
#
# Where the proposal leaves something open, kbatch chooses (here, and only here):
#  1. recordsCount stays an int32, the last of the fixed fields (the proposal's
#     listing leaves it out; it is the length of ``records: [Record]``), so every
#     fixed field keeps a fixed position and the varints follow them.
#  2. The three moved fields come in the proposal's order: lastOffsetDelta,
#     baseTimestamp, maxTimestampDelta.
#  3. maxTimestampDelta is a varlong, not a varint: a zig-zag varlong is the same
#     bytes as a varint for every value a varint holds, and it also holds a delta
#     beyond 24.8 days, so every v2 batch can be written as v3.
#  4. Writers set ignoreMessageAttributes (the proposal's default); a reader
#     honours a clear bit: its records carry the attributes byte as in v2.
#  5. Everything else is v2's: the CRC-32C from attributes to the end, the other
#     attribute bits, the codecs, the record fields and their order.  Records
#     stay interleaved: the "headers first" idea is only measured, by stats --what-if.
# ---------------------------------------------------------------------------

PROPOSED_V3_MAGIC = 3
IGNORE_MESSAGE_ATTRIBUTES_MASK = 0x80   # the proposal's batch attribute bit 7

RecordBatchV3Fixed = Struct(
    "base_offset" / Int64sb * "baseOffset",
    "batch_length" / Int32sb * "batchLength: bytes after this field",
    "partition_leader_epoch" / Int32sb * "partitionLeaderEpoch (not covered by the CRC)",
    "magic" / Int8sb * "magic (3: the proposal)",
    "crc" / Int32ub * "crc: CRC-32C of attributes..end",
    "attributes" / Int16sb * "attributes: as v2, and bit 7 ignoreMessageAttributes",
    "producer_id" / Int64sb * "producerId",
    "producer_epoch" / Int16sb * "producerEpoch",
    "base_sequence" / Int32sb * "baseSequence",
    "records_count" / Int32sb * "recordsCount (choice 1)",
)

RecordBatchV3Tail = Struct(
    "last_offset_delta" / Varint * "lastOffsetDelta (varint)",
    "base_timestamp" / Varlong * "baseTimestamp (varlong)",
    "max_timestamp_delta" / Varlong * "maxTimestampDelta: maxTimestamp - baseTimestamp (choice 3)",
)

RecordBatchV3Header = Struct(*RecordBatchV3Fixed.subcons, *RecordBatchV3Tail.subcons)

# A record of a batch with ignoreMessageAttributes set: v2's record without its attributes byte.
RecordV3 = Struct(*(field for field in Record.subcons if field.name != "attributes"))


# ---------------------------------------------------------------------------
# Control records (ControlRecordType.java, EndTransactionMarker.java)
# The one record of a control batch: its key says what kind of marker it is,
# and for COMMIT/ABORT its value carries the coordinator epoch.
# ---------------------------------------------------------------------------

ControlRecordKey = Struct(
    "version" / Int16sb * "version (0)",
    "type" / Int16sb * "type: ABORT=0, COMMIT=1",
)

EndTransactionMarkerValue = Struct(
    "version" / Int16sb * "version (0)",
    "coordinator_epoch" / Int32sb * "coordinatorEpoch",
)

CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}


# ---------------------------------------------------------------------------
# Fixed-size layouts as struct formats
# ---------------------------------------------------------------------------


def fixed_layout(declaration: Struct) -> FixedLayout:
    """A declaration whose every field is a fixed-size number, as one ``struct`` codec (kbatch.format.structs)."""
    layout = FixedLayout(*[(field.name, field.subcon.fmtstr[1:]) for field in declaration.subcons])  # ">q" -> "q"
    assert layout.size == declaration.sizeof()
    return layout


def field_struct(declaration: Struct, name: str) -> struct.Struct:
    """The ``struct.Struct`` of one fixed-size field of a declaration (e.g. a v0/v1 key_length)."""
    (field,) = [field for field in declaration.subcons if field.name == name]
    while not hasattr(field, "fmtstr"):
        field = field.subcon
    return struct.Struct(field.fmtstr)


LOG_ENTRY_PREFIX = fixed_layout(LogEntryPrefix)
SIZE_OFFSET = LOG_ENTRY_PREFIX.offsets["size"]   # Records.SIZE_OFFSET: where every entry's size field lies
BATCH_HEADER = fixed_layout(RecordBatchHeader)
MESSAGE_V0_HEADER = fixed_layout(MessageV0Header)
MESSAGE_V1_HEADER = fixed_layout(MessageV1Header)
CONTROL_KEY = fixed_layout(ControlRecordKey)
END_TXN_VALUE = fixed_layout(EndTransactionMarkerValue)

# The key and value lengths of a v0/v1 message: one int32 format for both (LegacyRecord.KEY_SIZE_LENGTH).
LEGACY_LENGTH_FORMAT = field_struct(MessageV0, "key_length").format
assert field_struct(MessageV0, "value_length").format == LEGACY_LENGTH_FORMAT
# A v2 record's fields in the order DefaultRecord.readFrom reads them (the record decoder's order).
RECORD_FIELD_ORDER = tuple(field.name for field in Record.subcons)

# DefaultRecordBatch.RECORD_BATCH_OVERHEAD = 61: a batch with no records.
RECORD_BATCH_OVERHEAD = BATCH_HEADER.size
# The CRC of a v2 batch covers attributes..end (DefaultRecordBatch.ATTRIBUTES_OFFSET).
BATCH_CRC_START = BATCH_HEADER.offsets["attributes"]
# The CRC of a v0/v1 message covers magic..end (LegacyRecord.MAGIC_OFFSET, relative to the crc).
MESSAGE_CRC_START = MESSAGE_V0_HEADER.offsets["magic"]

# The smallest legal message: its fixed header plus two int32 lengths of -1
# (LegacyRecord.RECORD_OVERHEAD_V0 = 14, RECORD_OVERHEAD_V1 = 22, counted after the size field).
MESSAGE_OVERHEAD = {
    0: MESSAGE_V0_HEADER.size + 8,
    1: MESSAGE_V1_HEADER.size + 8,
}
# The smallest value of the size field for each magic.
MIN_ENTRY_SIZE = {
    0: MESSAGE_OVERHEAD[0] - LOG_OVERHEAD,
    1: MESSAGE_OVERHEAD[1] - LOG_OVERHEAD,
    2: RECORD_BATCH_OVERHEAD - LOG_OVERHEAD,
}

BATCH_V3_FIXED = fixed_layout(RecordBatchV3Fixed)
# The smallest magic-3 size field: the fixed fields and three one-byte varints (not in MIN_ENTRY_SIZE:
# that one holds what Kafka reads).
V3_MIN_ENTRY_SIZE = BATCH_V3_FIXED.size + 3 - LOG_OVERHEAD
assert BATCH_V3_FIXED.offsets["magic"] == MAGIC_OFFSET
assert BATCH_V3_FIXED.offsets["attributes"] == BATCH_CRC_START

assert MAGIC_OFFSET == BATCH_HEADER.offsets["magic"] == MESSAGE_V0_HEADER.offsets["magic"]
assert LOG_OVERHEAD == LOG_ENTRY_PREFIX.size

# The fixed header of an entry of each magic: the magic byte at MAGIC_OFFSET says which layout follows
# (FileLogInputStream.nextBatch reads it there before choosing DefaultRecordBatch or a legacy record).
LogEntryHeader = Struct(
    "magic" / Peek(Pointer(MAGIC_OFFSET, Int8sb)) * "magic, read ahead at byte 16",
    "header" / Switch(this.magic, {0: MessageV0Header, 1: MessageV1Header, 2: RecordBatchHeader}),
)
ENTRY_HEADERS = {magic: fixed_layout(declaration)
                 for magic, declaration in LogEntryHeader.header.subcon.cases.items()}
assert [ENTRY_HEADERS[magic].codec.format for magic in (0, 1, 2)] == \
    [MESSAGE_V0_HEADER.codec.format, MESSAGE_V1_HEADER.codec.format, BATCH_HEADER.codec.format]


# ---------------------------------------------------------------------------
# Field spans: where each field of a declaration lies in some bytes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldSpan:
    path: str          # e.g. "records[2].headers[0].value"
    start: int         # absolute position (base + offset into the bytes parsed)
    end: int
    value: object


@dataclass(frozen=True)
class SpanError:
    path: str          # the field that could not be read
    start: int
    message: str


def field_spans(declaration: Struct, data, *, base: int = 0, path: str = "") -> tuple[list[FieldSpan], SpanError | None]:
    """Parse ``data`` with a declaration, field by field, and say where every leaf field lies.

    Nested Structs and Arrays are walked, so a record's headers come out as
    ``headers[0].key_length``, ``headers[0].key``...  A null key or value is a
    span of zero bytes.  Parsing stops at the first field that does not read;
    the spans before it are returned with a :class:`SpanError` naming it, so
    an annotated hexdump can show everything up to the damage.
    """
    stream = io.BytesIO(bytes(data))
    spans: list[FieldSpan] = []
    try:
        _walk(declaration, stream, Container(_params=Container(), _parsing=True, _building=False, _sizing=False),
              path, spans, base)
    except _FieldFailed as failed:
        return spans, failed.error
    return spans, None


class _FieldFailed(Exception):
    def __init__(self, error: SpanError):
        self.error = error


def _unwrap(field: Construct) -> Construct:
    while isinstance(field, Renamed):
        field = field.subcon
    return field


def _walk(declaration: Struct, stream, parent: Container, path: str, spans: list[FieldSpan], base: int) -> Container:
    context = Container(_=parent, _params=parent._params, _root=None, _parsing=True, _building=False,
                        _sizing=False, _io=stream, _index=None)
    for field in declaration.subcons:
        inner = _unwrap(field)
        field_path = f"{path}.{field.name}" if path else field.name
        if isinstance(inner, Struct):
            context[field.name] = _walk(inner, stream, context, field_path, spans, base)
        elif isinstance(inner, Array):
            count = inner.count(context) if callable(inner.count) else inner.count
            context[field.name] = [_walk(_unwrap(inner.subcon), stream, context, f"{field_path}[{index}]", spans, base)
                                   for index in range(count)]
        else:
            start = stream.tell()
            try:
                value = inner._parsereport(stream, context, field_path)
            except ConstructError as error:
                raise _FieldFailed(SpanError(field_path, base + start, str(error).splitlines()[-1])) from None
            context[field.name] = value
            spans.append(FieldSpan(field_path, base + start, base + stream.tell(), value))
    return context


# ---------------------------------------------------------------------------
# Written out for the runs that only read entries (kbatch/format/structs.py)
# ---------------------------------------------------------------------------


def derived_values() -> dict[str, object]:
    """What kbatch.format.structs holds: every public upper-case name of this module and of kbatch.partition.layouts
    whose value is data (a FixedLayout, a number, a text, a pattern, a tuple or dict of them): all but the
    declarations."""
    import importlib

    values: dict[str, object] = {}
    for module_name in ("kbatch.format.layouts", "kbatch.partition.layouts"):
        for name, value in vars(importlib.import_module(module_name)).items():
            if name.isupper() and not name.startswith("_") and _is_data(value):
                assert name not in values, f"{name} is declared twice"
                values[name] = value
    return values


def structs_block() -> str:
    """kbatch/format/structs.py's generated block: one assignment per derived value, in declaration order."""
    lines: list[str] = []
    written: dict[FixedLayout, str] = {}   # a FixedLayout met again (ENTRY_HEADERS) is written by its name
    for name, value in derived_values().items():
        lines.append(f"{name} = {_literal(value, written, top=True)}")
        if isinstance(value, FixedLayout):
            written.setdefault(value, name)
    return "\n".join(lines) + "\n"


def _is_data(value) -> bool:
    if isinstance(value, (FixedLayout, bool, int, str, re.Pattern)) or value is None:
        return True
    if isinstance(value, type):
        return value in (int, str, bytes)
    if isinstance(value, (tuple, dict)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        return all(_is_data(key) and _is_data(item) for key, item in items)
    return False


def _literal(value, written: dict, top: bool = False) -> str:
    """Python source that evaluates, in kbatch/format/structs.py, to ``value`` (a long one at ``top``: an item a line)."""
    if isinstance(value, FixedLayout):
        if value in written:
            return written[value]
        return "FixedLayout(\n" + "".join(f"    {field!r},\n" for field in value.fields) + ")"
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, re.Pattern):
        flags = "" if value.flags == re.compile(value.pattern).flags else f", {int(value.flags)}"
        return f"re.compile({value.pattern!r}{flags})"
    if isinstance(value, (tuple, dict)):
        if isinstance(value, tuple):
            items, ends = [_literal(item, written) for item in value], "()"
        else:
            items, ends = [f"{_literal(key, written)}: {_literal(item, written)}" for key, item in value.items()], "{}"
        one_line = ends[0] + ", ".join(items) + ("," if len(items) == 1 and ends == "()" else "") + ends[1]
        if not top or len(one_line) <= 100:
            return one_line
        return ends[0] + "\n" + "".join(f"    {item},\n" for item in items) + ends[1]
    return repr(value)


def write_structs() -> bool:
    """Rewrite kbatch/format/structs.py's block from the declarations; whether it changed."""
    path = Path(__file__).with_name("structs.py")
    text = path.read_text()
    head = text[:text.index(_STRUCTS_MARK) + len(_STRUCTS_MARK)]
    new = head + "\n" + structs_block()
    if new == text:
        return False
    path.write_text(new)
    return True


_STRUCTS_MARK = "# ---- generated by `python -m kbatch.format.layouts` from the declarations: do not edit below this line ----"


if __name__ == "__main__":
    print("kbatch/format/structs.py", "rewritten" if write_structs() else "is current")
