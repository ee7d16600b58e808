"""How a user topic's keys and values read in the table: schema-registry framing named, JSON laid out.

``--decode auto`` (the default) recognises the schema-registry framing (kbatch.messages.registry) and shows
``[schema N]`` before the payload (JSON Schema payloads as JSON, Avro and Protobuf payloads as bytes);
a JSON object or array is shown indented with ``--full``.  Any other ``--decode`` mode shows the bytes
exactly as that mode says.
"""

from __future__ import annotations

import json

from kbatch.messages.registry import payload_json, registry_frame
from kbatch.output.values import bytes_text


def _indented(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cut(text: str, data: bytes, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else f"{text[:limit]}… ({len(data)} bytes)"


def user_bytes_text(data: bytes | None, mode: str, limit: int | None) -> str:
    """A key or value of a user topic for the table (``limit`` None: shown whole, as with --full)."""
    if data is None or mode != "auto":
        return bytes_text(data, mode, limit)
    frame = registry_frame(data)
    if frame is not None:
        schema_id, payload = frame
        parsed = payload_json(payload)
        if parsed is not None:
            body = _indented(parsed) if limit is None else _compact(parsed)
        else:
            body = bytes_text(payload, "auto")
        return _cut(f"[schema {schema_id}] {body}", data, limit)
    if limit is None and data[:1] in (b"{", b"["):
        parsed = payload_json(data)
        if parsed is not None:
            return _indented(parsed)
    return bytes_text(data, mode, limit)
