"""One decoder for every message in :data:`kbatch.messages.schemas.SCHEMAS`: Kafka's generated ``read()``.

The rules are those of Kafka's message generator (generator/src/main/java/org/apache/kafka/message/
MessageDataGenerator.java, generateClassReader and generateVariableLengthReader):

* a field absent from the version being read takes its default;
* in flexible versions strings, bytes and arrays carry an unsigned varint of length + 1 (0: null), in
  the others an int16 (strings) or int32 (bytes, arrays) length, -1 for null;
* a null where the field is not nullable, a string longer than 0x7fff and an array longer than the bytes
  left are errors ("non-nullable field X was serialized as null", ...);
* a nullable struct starts with an int8 (negative: null), or in a tagged field an unsigned varint;
* every struct in a flexible version ends with its tagged fields: a count, then tag, size and data each;
  a tag the schema does not know is kept as raw bytes (Kafka keeps it as an unknown tagged field), the tag
  of a field tagged only in other versions is refused ("Tag N is not valid for version V"), and a known
  tag's field is read from the stream, its size unchecked (a size that disagrees is a warning here);
* a version outside the valid range reads as the nearest valid one (the generated code has no check).

The result is a dict keyed by the names Kafka's JSON converters use (camelCase), in schema order.  Bytes
stay ``bytes`` (:func:`to_json` writes them as Kafka's JSON does, in base64), UUIDs are text as
``Uuid.toString`` prints them, unknown tags are listed under ``_unknownTaggedFields`` as hex.
"""

from __future__ import annotations

import base64
import struct

from kbatch.messages.spec import F, M, in_range, version_range

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"   # Uuid.ZERO_UUID.toString()

_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H", "uint32": ">I",
          "float64": ">d"}
_STRUCTS = {code: struct.Struct(code) for code in _FIXED.values()}
_PLANS: dict[tuple[int, int], tuple] = {}   # (id of a field tuple, version) -> (the tuple, MessageDecoder._plan)


class MessageError(Exception):
    """Bytes that do not read as the schema says: where (inside the message's bytes), which field, why.

    ``java`` is the message of the exception Kafka's generated reader throws there (MessageDataGenerator,
    ByteBufferAccessor, ByteUtils), as Kafka's tools print it; "null" for a BufferUnderflowException, which
    has none; None where Kafka does not fail (kbatch is stricter: a tagged field's size).
    """

    def __init__(self, pos: int, field: str, expected: str, actual: str, java: str | None = None):
        super().__init__(f"{field}: expected {expected}, found {actual}")
        self.pos, self.field, self.expected, self.actual = pos, field, expected, actual
        self.java = java


def uuid_text(raw: bytes) -> str:
    """Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def default_value(field: F):
    """FieldSpec.fieldDefault: the declared default, else the type's zero."""
    if field.default is not ...:
        return field.default
    if field.type.startswith("[]"):
        return []
    if field.type in _FIXED:
        return 0.0 if field.type == "float64" else 0
    return {"bool": False, "string": "", "bytes": b"", "uuid": ZERO_UUID, "records": None}.get(
        field.type, None if not field.fields else {sub.json_name: default_value(sub) for sub in field.fields})


def _tagged_somewhere(field: F) -> bool:
    """Whether the field is tagged in some version it exists in (FieldSpec: versions ∩ taggedVersions)."""
    versions, tagged = version_range(field.versions), version_range(field.tagged)
    return versions is not None and tagged is not None and max(versions[0], tagged[0]) <= min(versions[1], tagged[1])


class _Reader:
    def __init__(self, data: bytes, pos: int, end: int, spans: list | None = None):
        self.data, self.pos, self.end = data, pos, end
        self.spans = spans   # when a list: (start, end, field, value) of every field read, for hexdump-annotate

    def take(self, size: int, field: str, *, array: bool | None = False) -> bytes:
        """``size`` bytes: a fixed-width value (ByteBuffer.get*), with ``array`` Readable.readArray, with
        ``array=None`` Readable.readRecords (whose error text is left out)."""
        if self.pos + size > self.end:
            left = self.end - self.pos
            java = None if array is None else "null" if not array else \
                f"Error reading byte array of {size} byte(s): only {left} byte(s) available"
            raise MessageError(self.pos, field, f"{size} bytes", f"{left} bytes left", java)
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return chunk

    def fixed(self, kind: str, field: str):
        codec = _STRUCTS[_FIXED[kind]]
        return codec.unpack(self.take(codec.size, field))[0]

    def unsigned_varint(self, field: str) -> int:
        """ByteUtils.readUnsignedVarint: at most 5 bytes; the result is a Java int."""
        value, shift, start = 0, 0, self.pos
        while True:
            if self.pos >= self.end:
                raise MessageError(start, field, "a complete unsigned varint", "the end of the bytes", "null")
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                value &= 0xFFFFFFFF
                return value - (1 << 32) if value >= 1 << 31 else value
            shift += 7
            if shift > 28:
                # ByteUtils.illegalVarintException: the int so far, the 5th byte sign-extended into its top bits
                converted = (value & 0x0FFFFFFF) | (((byte - 256) << 28) & 0xFFFFFFFF)
                raise MessageError(start, field, "at most 5 varint bytes", "a continuation bit on byte 5",
                                   "Varint is too long, the most significant bit in the 5th byte is set, "
                                   f"converted value: {converted:x}")


class MessageDecoder:
    """Reads one message version: ``decode(data)`` -> (fields, bytes used)."""

    def __init__(self, schema: M, version: int, name: str = ""):
        # The generated read() checks no version of its own: a field's condition (VersionConditional) is
        # left out where it covers every valid version, and bounds the rest within them, so a version outside
        # the valid range reads as the nearest valid one (a coordinator key, always read at its record type,
        # as its only version, 0).  Whether such a version may be read at all is the caller's rule.
        low, high = schema.valid_range
        self.schema, self.version, self.name = schema, min(max(version, low), high), name
        self.requested = version   # the version the reader was called with, as Kafka's messages name it
        self.warnings: list[MessageError] = []   # what Kafka reads without complaint but kbatch remarks on
        self.flexible = in_range(self.version, version_range(schema.flexible))

    def decode(self, data: bytes, pos: int = 0, end: int | None = None, *,
               spans: list | None = None) -> tuple[dict, int]:
        """The fields and where they end; with ``spans`` (a list), each field read is appended to it as
        (start, end, field path, value): length prefixes, counts and tag headers too, so the spans tile
        the bytes read.  What was read before a MessageError stays in it."""
        reader = _Reader(data, pos, len(data) if end is None else end, spans)
        return self._struct(reader, self.schema.fields, ""), reader.pos

    def _flexible(self, field: F) -> bool:
        return in_range(self.version, version_range(field.flexible)) if field.flexible else self.flexible

    def _plan(self, fields: tuple[F, ...]) -> tuple[list[tuple[F, bool]], dict[int, F], dict[int, F]]:
        """The fields of this version in order (tagged or not), the tagged ones by tag, and the tags of fields
        tagged only in other versions (the generated reader refuses those); worked out once."""
        key = (id(fields), self.version)
        plan = _PLANS.get(key)
        if plan is None or plan[0] is not fields:   # the plan holds its fields, so the id is never reused
            order, tagged, refused = [], {}, {}
            for field in fields:
                # a field absent from this version is not part of it (Kafka's JSON leaves it out too)
                if in_range(self.version, version_range(field.versions)):
                    is_tagged = in_range(self.version, version_range(field.tagged))
                    order.append((field, is_tagged))
                    if is_tagged:
                        tagged[field.tag] = field
                        continue
                # MessageDataGenerator.generateClassReader: every field with tagged versions has its case in
                # the tag switch; outside them it throws "Tag N is not valid for version V"
                if field.tag is not None and _tagged_somewhere(field):
                    refused[field.tag] = field
            plan = _PLANS[key] = (fields, order, tagged, refused)
        return plan[1], plan[2], plan[3]

    def _struct(self, reader: _Reader, fields: tuple[F, ...], path: str) -> dict:
        out: dict = {}
        order, tagged, refused = self._plan(fields)
        for field, is_tagged in order:
            if is_tagged:
                out[field.json_name] = default_value(field)
            else:
                start = reader.pos
                out[field.json_name] = value = self._field(reader, field, path + field.json_name, tagged=False)
                if reader.spans is not None and not field.fields and not field.type.startswith("[]"):
                    reader.spans.append((start, reader.pos, path + field.json_name, value))
        if self.flexible:
            self._tagged_fields(reader, tagged, refused, out, path)
        return out

    def _tagged_fields(self, reader: _Reader, tagged: dict[int, F], refused: dict[int, F], out: dict,
                       path: str) -> None:
        spans, start = reader.spans, reader.pos
        # a count past 2^31 - 1 is a negative Java int: the generated loop (_i < _numTaggedFields) never runs
        count = reader.unsigned_varint(f"{path}_numTaggedFields")
        if spans is not None:
            spans.append((start, reader.pos, f"{path}_numTaggedFields", count))
        for _ in range(count):
            head = reader.pos
            tag = reader.unsigned_varint(f"{path}_tag")
            size = reader.unsigned_varint(f"{path}_tag[{tag}].size")
            start = reader.pos
            field = tagged.get(tag)
            if tag in refused:
                raise MessageError(head, f"{path}_tag[{tag}]", f"a tag of version {self.requested}",
                                   f"tag {tag} ({refused[tag].json_name}, tagged in versions "
                                   f"{refused[tag].tagged} only)",
                                   f"Tag {tag} is not valid for version {self.requested}")
            if spans is not None:
                spans.append((head, start, f"{path}_tag[{tag}]", f"tag {tag}, {size} bytes"
                              + ("" if field is None else f": {field.json_name}")))   # (a description)
            if field is None:
                # Readable.readUnknownTaggedField: readArray(size); new byte[size] refuses a negative size
                # (NegativeArraySizeException, whose message is the size)
                if size < 0:
                    raise MessageError(start, f"{path}_tag[{tag}].size", "a size >= 0", str(size), str(size))
                raw = reader.take(size, f"{path}_tag[{tag}]", array=True)
                out.setdefault("_unknownTaggedFields", []).append({"tag": tag, "hex": bytes(raw).hex()})
                if spans is not None:
                    spans.append((start, reader.pos, f"{path}_tag[{tag}] (unknown)", bytes(raw)))
                continue
            # The generated reader reads a known tag's field from the stream and never looks at its size:
            # the next tag follows the field's own bytes.  A size that disagrees is worth a warning only.
            out[field.json_name] = value = self._field(reader, field, f"{path}{field.json_name}", tagged=True)
            if spans is not None and not field.fields and not field.type.startswith("[]"):
                spans.append((start, reader.pos, f"{path}{field.json_name}", value))
            if reader.pos != start + size:
                self.warnings.append(MessageError(start, f"{path}{field.json_name}",
                                                  f"{size} bytes (the tag's size)",
                                                  f"{reader.pos - start} bytes read by the field"))

    def _nullable(self, field: F) -> bool:
        return in_range(self.version, version_range(field.nullable))

    def _field(self, reader: _Reader, field: F, name: str, *, tagged: bool):
        kind = field.type
        if kind in _FIXED:
            return reader.fixed(kind, name)
        if kind == "bool":
            return reader.take(1, name)[0] != 0
        if kind == "uuid":
            return uuid_text(bytes(reader.take(16, name)))
        if kind.startswith("[]"):
            return self._array(reader, field, name)
        if kind in ("string", "bytes", "records"):
            return self._variable(reader, field, kind, name)
        # a struct
        if self._nullable(field):
            start = reader.pos
            marker = reader.unsigned_varint(name) if tagged else reader.fixed("int8", name)
            if reader.spans is not None:
                reader.spans.append((start, reader.pos, f"{name} (present)", marker))
            if (marker <= 0) if tagged else (marker < 0):
                return None
        return self._struct(reader, field.fields, name + ".")

    def _length(self, reader: _Reader, field: F, kind: str, name: str) -> int:
        if self._flexible(field):
            return reader.unsigned_varint(name) - 1
        return reader.fixed("int16" if kind == "string" else "int32", name)

    def _variable(self, reader: _Reader, field: F, kind: str, name: str, nullable: bool | None = None):
        start = reader.pos
        length = self._length(reader, field, kind, name)
        if length < 0:
            if not (self._nullable(field) if nullable is None else nullable):
                raise MessageError(start, name, "a length >= 0 (the field is not nullable)",
                                   f"{length} (non-nullable field {field.json_name} was serialized as null)",
                                   f"non-nullable field {field.json_name} was serialized as null")
            return None
        if kind == "string" and length > 0x7FFF:
            raise MessageError(start, name, "a string length <= 32767", str(length),
                               f"string field {field.json_name} had invalid length {length}")
        raw = bytes(reader.take(length, name, array=None if kind == "records" else True))
        # Readable.readString decodes UTF-8 as Java does, replacing malformed bytes
        return raw.decode("utf-8", errors="replace") if kind == "string" else raw

    def _array(self, reader: _Reader, field: F, name: str):
        start = reader.pos
        length = self._length(reader, field, "array", name)
        if length < 0:
            if not self._nullable(field):
                raise MessageError(start, name, "a count >= 0 (the field is not nullable)",
                                   f"{length} (non-nullable field {field.json_name} was serialized as null)",
                                   f"non-nullable field {field.json_name} was serialized as null")
            if reader.spans is not None:
                reader.spans.append((start, reader.pos, name, None))
            return None
        if length > reader.end - reader.pos:
            raise MessageError(start, name, f"at most {reader.end - reader.pos} elements (the bytes left)",
                               f"{length} (Kafka: tried to allocate a collection of size {length})",
                               f"Tried to allocate a collection of size {length}, but there are only "
                               f"{reader.end - reader.pos} bytes remaining.")
        element = field.type[2:]
        spans = reader.spans
        if spans is not None:
            spans.append((start, reader.pos, f"{name} (count)", length))
        items = []
        for index in range(length):
            item_name = f"{name}[{index}]"
            item_start = reader.pos
            if element in _FIXED:
                items.append(reader.fixed(element, item_name))
            elif element == "bool":
                items.append(reader.take(1, item_name)[0] != 0)
            elif element == "uuid":
                items.append(uuid_text(bytes(reader.take(16, item_name))))
            elif element in ("string", "bytes"):
                items.append(self._variable(reader, field, element, item_name, nullable=False))
            else:
                items.append(self._struct(reader, field.fields, item_name + "."))
                continue
            if spans is not None:
                spans.append((item_start, reader.pos, item_name, items[-1]))
        return items


def to_json(value):
    """A decoded message as Kafka's JSON converters write it: bytes in base64 (Jackson's BinaryNode)."""
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_json(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def kafka_json(schema: M, version: int, value: dict) -> dict:
    """What Kafka's generated JsonConverter.write prints at ``version``: every field of that version, tagged
    ones only when not at their default, unknown tagged fields never (JsonConverterGenerator.generateWrite).

    A field of ``version`` that was not read (the message was read at a lower version, as Kafka reads
    KRaft control values at version 0 and prints them at their own Version field) is printed at its
    default, as Kafka prints the object's unset field.
    """
    return _kafka_json(schema.fields, version, value)


def _kafka_json(fields: tuple[F, ...], version: int, value: dict) -> dict:
    out = {}
    for field in fields:
        if field.json_name not in value:
            if in_range(version, version_range(field.versions)) and field.tagged is None:
                out[field.json_name] = to_json(default_value(field))
            continue
        item = value[field.json_name]
        if in_range(version, version_range(field.tagged)) and item == default_value(field):
            continue
        if field.fields and isinstance(item, dict):
            item = _kafka_json(field.fields, version, item)
        elif field.fields and isinstance(item, list):
            item = [_kafka_json(field.fields, version, element) if isinstance(element, dict) else element
                    for element in item]
        out[field.json_name] = to_json(item)
    return out
