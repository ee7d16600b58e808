"""How keys, values, timestamps and findings read as text and as JSON.

Shared by every output format so a value looks the same in a table, in
JSON Lines and in the dump-log format.
"""

from __future__ import annotations

import time
from typing import overload

from kbatch.output.visible import json_visible, visible

DECODE_MODES = ("auto", "utf8", "hex", "base64", "json")


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _printable(text: str) -> bool:
    # str.isprintable runs in C; the per-character look is only for text holding tabs or newlines
    return text.isprintable() or all(char.isprintable() or char in "\t\n\r" for char in text)


@overload
def bytes_json(data: bytes, mode: str = "auto") -> dict: ...
@overload
def bytes_json(data: None, mode: str = "auto") -> None: ...
@overload
def bytes_json(data: bytes | None, mode: str = "auto") -> dict | None: ...


def bytes_json(data: bytes | None, mode: str = "auto") -> dict | None:
    """Bytes for JSON output: always an explicit {"utf8"|"hex"|"base64": ...} object (null for null).

    ``auto`` and ``utf8`` give text when the bytes are valid UTF-8 (``auto``:
    printable too), hex otherwise, so the bytes can always be rebuilt exactly.
    """
    if data is None:
        return None
    if mode == "base64":
        import base64   # here, as json below: only the modes that ask load them (~3 ms of a run's start)

        return {"base64": base64.b64encode(data).decode("ascii")}
    if mode == "hex":
        return {"hex": data.hex()}
    text = _utf8(data)
    if text is not None and (mode == "utf8" or _printable(text)):
        return {"utf8": text}
    return {"hex": data.hex()}


def bytes_text(data: bytes | None, mode: str = "auto", limit: int | None = None) -> str:
    """Bytes for people: text when it reads as text (what a terminal would act on escaped: :mod:`.visible`),
    hex otherwise; cut to ``limit`` characters."""
    if data is None:
        return "null"
    text = None
    if mode == "json":
        import json

        parsed = _json(data)
        text = json_visible(json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))) \
            if parsed is not _NOT_JSON else None
    if text is None:
        rendered = bytes_json(data, "auto" if mode == "json" else mode)
        (kind, text), = rendered.items()
        if kind == "hex":
            text = "0x" + text
        elif kind == "base64":
            text = "base64:" + text
        else:
            text = visible(text)
    if limit is not None and len(text) > limit:
        return f"{text[:limit]}… ({counted(len(data), 'byte')})"
    return text


_NOT_JSON = object()


def _json(data: bytes):
    import json

    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return _NOT_JSON


# The last millisecond of 9999-12-31: later times have no four-digit year (the JSON writer's bound too).
def control_dict(marker) -> dict:
    """A control record's key and value (the ``control`` key of a record)."""
    from kbatch.messages.decoder import to_json

    return {"key_version": marker.key_version, "type": marker.type, "type_id": marker.type_id,
            "value_version": marker.value_version, "coordinator_epoch": marker.coordinator_epoch,
            "data": to_json(marker.data)}


ISO_MAX_MS = 253402300799999


def iso_timestamp(ms: int | None) -> str:
    """ISO-8601 UTC with milliseconds; empty for Kafka's 'no timestamp' (-1) and out-of-range values."""
    if ms is None or ms < 0 or ms > ISO_MAX_MS:
        return ""
    seconds, millis = divmod(ms, 1000)
    t = time.gmtime(seconds)   # a tenth of what datetime and strftime take: two a batch in every listing
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{millis:03d}Z"


def moment_text(ms: int) -> str:
    """A time a user gave (--since, --now, --at: any Java long) in words: ISO 8601 where it has one, else its epoch
    milliseconds, said so (never the empty string iso_timestamp gives a record's -1)."""
    return iso_timestamp(ms) or f"{ms} (epoch ms)"


def counted(number: int, noun: str) -> str:
    """``1 byte``, ``2 bytes``, ``1 batch``, ``0 batches``."""
    if number == 1:
        return f"{number} {noun}"
    return f"{number} {noun}{'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"


def offsets_text(base_offset: int, last_offset: int) -> str:
    return f"offset {base_offset}" if base_offset == last_offset else f"offsets {base_offset}–{last_offset}"


def entry_offsets_text(batch) -> str:
    """The offsets an entry held: a damaged one's as far as can be inferred, and how (kbatch.reading.lost)."""
    lost = batch.lost_offsets
    if lost is None:
        return offsets_text(batch.base_offset, batch.last_offset)
    return f"offsets {lost.text()}"


def entry_offsets_cell(batch) -> str:
    """The offsets an entry held, in a table's cell (how a damaged one's are known is said in its findings)."""
    lost = batch.lost_offsets
    if lost is not None:
        return lost.span()
    if batch.base_offset == batch.last_offset:
        return str(batch.base_offset)
    return f"{batch.base_offset}–{batch.last_offset}"


def lost_offsets_of(finding, batch):
    """The offsets a finding's damaged entry (``batch``, when the finding lies in it) or damaged range held,
    as far as the entries around it tell (kbatch.reading.lost.LostOffsets); None when it is intact."""
    if batch is not None and batch.pos == finding.entry_pos:
        return batch.lost_offsets
    return finding.lost_offsets


def finding_text(finding, batch=None) -> str:
    """One line for a finding; given the batch it belongs to, with the batch's record offsets too; a damaged
    range's with the offsets it may have held."""
    where = f"pos {finding.pos}" if finding.inner_pos is None else \
        f"pos {finding.pos} (byte {finding.inner_pos} of the decompressed data)"
    if batch is not None:
        where += f" ({entry_offsets_text(batch)})"
    elif finding.lost_offsets is not None:
        lost = finding.lost_offsets
        where += f" (no offsets lost: {lost.how})" if lost.none else f" (offsets {lost.text()})"
    return (f"{finding.code} at {where}, {counted(finding.size, 'byte')}, {finding.field}: "
            f"expected {finding.expected}, found {finding.actual}")
