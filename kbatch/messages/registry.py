"""Schema-registry framing of user records: magic byte 0, a 4-byte schema id, then the serialized data.

The wire format of Confluent's serializers (Avro, Protobuf, JSON Schema) and of the registries that copy it:
``0x00 | schema id (int32, big-endian) | payload``.  Protobuf payloads start with the message indexes
(a zig-zag varint count and indexes; a single 0 for the first message), JSON Schema payloads are UTF-8
JSON, Avro payloads are Avro binary.  The framing is recognised, never trusted: a value that merely
starts with a zero byte and holds no more than the 5 framing bytes, or names a schema id that is not
positive or is implausibly large (registries number schemas from 1; an id past 2**24 is far likelier
binary data than a sixteen-millionth schema), is left alone.
"""

from __future__ import annotations

import json
import struct

_ID = struct.Struct(">i")
MAGIC = 0
FRAME_SIZE = 5
MAX_PLAUSIBLE_ID = 1 << 24


def registry_frame(data: bytes | None) -> tuple[int, bytes] | None:
    """(schema id, payload) when ``data`` carries the schema-registry framing, else None."""
    if data is None or len(data) <= FRAME_SIZE or data[0] != MAGIC:
        return None
    schema_id = _ID.unpack_from(data, 1)[0]
    if not 0 < schema_id < MAX_PLAUSIBLE_ID:
        return None
    return schema_id, bytes(data[FRAME_SIZE:])


def payload_json(payload: bytes):
    """The payload as JSON (a JSON Schema serializer's), or None."""
    try:
        parsed = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed if isinstance(parsed, (dict, list)) else None


def schema_ids(key: bytes | None, value: bytes | None) -> dict | None:
    """{"key": id | None, "value": id | None} when the key or the value carries the framing, else None."""
    key_frame, value_frame = registry_frame(key), registry_frame(value)
    if key_frame is None and value_frame is None:
        return None
    return {"key": key_frame[0] if key_frame else None, "value": value_frame[0] if value_frame else None}
