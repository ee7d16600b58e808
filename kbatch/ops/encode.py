"""Encoding Kafka bytes from JSON: the inverse of ``kbatch dump --format json``.

The input schema is the output schema of dump (``kbatch/schema/kbatch-json-v1.schema.json``):
a document ``{"kbatch_json_version": 1, "entries": [...]}`` (or dump's
``{"files": [{"entries": [...]}]}`` holding one file), or with ``--batch``
one entry.  An entry is a v2 batch, a v0/v1 message, or raw bytes.

The rule: a field that is present is written as given; a field that is
absent is derived.  dump writes every stored field (and the stored record
bytes as ``payload``), so dump -> encode reproduces a file byte for byte,
damage included; a hand-written spec names only what matters and gets a
valid batch, or names a wrong CRC, a lying length or count, an over-long
varint (``{"hex": ...}`` for any varint field), a ``truncate_to``, or raw
bytes between entries, and gets exactly that damage.

Byte layouts come from :mod:`kbatch.format.layouts`: the headers are packed with the
fixed layouts derived from the construct declarations the reader parses with,
and the varints written by the declaration's own ``to_bytes``.
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import Literal, overload

from kbatch.format.checksums import crc32, crc32c
from kbatch.format.codecs import CODEC_IDS, FRAME_DEFAULTS, LZ4_BLOCK_SIZES, CodecError, Decompressor, compress
from kbatch.format.layouts import ControlRecordKey, EndTransactionMarkerValue, varint_bytes, varlong_bytes
from kbatch.format.structs import (
    BATCH_CRC_START,
    BATCH_HEADER,
    BATCH_V3_FIXED,
    CONTROL_FLAG_MASK,
    CONTROL_TYPES,
    DELETE_HORIZON_FLAG_MASK,
    IGNORE_MESSAGE_ATTRIBUTES_MASK,
    LEGACY_TIMESTAMP_TYPE_MASK,
    LOG_OVERHEAD,
    MESSAGE_CRC_START,
    MESSAGE_V0_HEADER,
    MESSAGE_V1_HEADER,
    NO_TIMESTAMP,
    PROPOSED_V3_MAGIC,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kbatch.output import columns

JSON_FORMAT_VERSION = 1
NO_PARTITION_LEADER_EPOCH = -1   # RecordBatch.NO_PARTITION_LEADER_EPOCH: what a producer writes

# What the encoder builds an entry from; every other key dump writes (kbatch.output.columns declares them all)
# is there for information only, and the encoder accepts and ignores it.
_BATCH_FIELDS = {"magic", "base_offset", "stored_offset", "batch_length", "partition_leader_epoch", "crc", "attributes", "codec",
                 "timestamp_type", "is_transactional", "is_control", "last_offset_delta", "base_timestamp",
                 "max_timestamp", "delete_horizon_ms", "producer_id", "producer_epoch", "base_sequence", "count",
                 "records", "payload", "truncate_to", "snappy_framing", "lz4_kafka3160", "frame"}
_RECORD_FIELDS = {"offset", "timestamp", "key", "value", "headers", "attributes", "crc", "control", "offset_delta",
                  "timestamp_delta", "length", "key_length", "value_length", "headers_count", "magic"}
# "file" is the jsonl line's, not the entry's; "decoded" (an internal topic's key and value as its schema reads
# them) and "schema_registry" (the Schema Registry framing of a value) are views of the bytes "key" and "value"
# give: encoding takes the bytes (check_decoded_matches_bytes holds the first view to them).
_BATCH_OUTPUT_ONLY = {column.name for column in columns.BATCH} - _BATCH_FIELDS | {"file"}
_RECORD_OUTPUT_ONLY = {column.name for column in columns.RECORD} - _RECORD_FIELDS
# A damaged range ("raw"): the finding dump lists there, with the offsets it may have lost.
_REGION_OUTPUT_ONLY = {column.name for column in columns.FINDING} | {"type", "file"} | \
    {column.name for column in columns.FINDING_OFFSETS if column.optional}


class SpecError(ValueError):
    """The JSON does not describe Kafka bytes: where (a JSON path), what was expected, what was found."""

    def __init__(self, path: str, expected: str, found):
        from kbatch.output.visible import json_visible, visible

        # The path holds the spec's own keys and the value its own text: both shown as every name is.
        shown = found if isinstance(found, str) and found.startswith("<") else _show(found)
        super().__init__(f"{visible(path) or '(document)'}: expected {expected}, got {json_visible(shown)}")
        self.path = path


def _show(value) -> str:
    import json
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


# -- reading the spec ----------------------------------------------------------

BYTES_EXPECTED = '{"utf8"|"hex"|"base64"} or null'


@overload
def spec_bytes(value: object, path: str, *, nullable: Literal[False]) -> bytes: ...
@overload
def spec_bytes(value: object, path: str, *, nullable: bool = True) -> bytes | None: ...
def spec_bytes(value: object, path: str, *, nullable: bool = True) -> bytes | None:
    if value is None and nullable:
        return None
    if isinstance(value, bytes):   # a spec built by a program (stats --what-if), not read from JSON
        return value
    if isinstance(value, dict) and len(value) == 1:
        (kind, text), = value.items()
        if isinstance(text, str):
            try:
                if kind == "utf8":
                    return text.encode("utf-8")
                if kind == "hex":
                    return bytes.fromhex(text)
                if kind == "base64":
                    return base64.b64decode(text, validate=True)
            except (ValueError, binascii.Error):
                raise SpecError(path, f"valid {kind} text", text) from None
    raise SpecError(path, BYTES_EXPECTED if nullable else '{"utf8"|"hex"|"base64"}', value)


def _int(spec: dict, key: str, path: str, default=None, *, low: int = -(2**63), high: int = 2**63 - 1):
    """An integer field; absent or null means the default (what is derived)."""
    value = spec.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SpecError(f"{path}.{key}", f"an integer in {low}..{high}", value)
    return value


def _bool(spec: dict, key: str, path: str, default: bool = False) -> bool:
    value = spec.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise SpecError(f"{path}.{key}", "true or false", value)
    return value


def _check_keys(spec: dict, allowed: set[str], ignored: set[str], path: str) -> None:
    if not isinstance(spec, dict):
        raise SpecError(path, "an object", spec)
    for key in spec:
        if key not in allowed and key not in ignored:
            raise SpecError(f"{path}.{key}", f"one of {', '.join(sorted(allowed))}",
                            f"<the unknown key {_show(key)}>")


class _SmallVarints(dict):
    """The shortest varints of the small values records are full of (lengths, deltas, counts), each written
    once by the declaration's own to_bytes, when first asked for: the encoder looks them up instead of
    writing them record after record (and a command that never encodes does not fill the table)."""

    def __missing__(self, value: int) -> bytes:
        data = varint_bytes(value)
        if -(1 << 13) <= value < 1 << 13:
            self[value] = data
        return data


_SMALL_VARINTS = _SmallVarints()
# varint_bytes(value), the Varint declaration's shortest encoding, from the table where it can.
_varint_bytes = _SMALL_VARINTS.__getitem__


def _varint(spec: dict, key: str, path: str, derived: int, bits: int = 32) -> bytes:
    """A varint field's bytes: its value's shortest encoding, or the exact bytes given (an over-long one)."""
    if key not in spec:
        value = derived
    else:
        value = spec[key]
        if isinstance(value, dict):
            return spec_bytes(value, f"{path}.{key}", nullable=False)
        value = _int(spec, key, path, low=-(2 ** (bits - 1)), high=2 ** (bits - 1) - 1)
    if bits == 64 and not -(1 << 13) <= value < 1 << 13:
        return varlong_bytes(value)
    return _varint_bytes(value)


# -- the document --------------------------------------------------------------


def entries_of(document, *, single_batch: bool = False, require_version: bool = False) -> tuple[list, str]:
    """The entries a document holds, and the JSON path they sit at.

    ``require_version`` is for a spec a user wrote (encode-from-json): there the
    version must be given, as dump always writes it, and the document may hold
    nothing else, so a file of some other shape fails instead of encoding to an
    empty output.  Code building documents in memory may leave the version out.
    """
    if single_batch:
        return [document], "batch"
    if isinstance(document, list) and not require_version:
        return document, ""
    if not isinstance(document, dict):
        raise SpecError("", 'an object {"kbatch_json_version": 1, "entries": [...]}', document)
    if require_version:
        if "kbatch_json_version" not in document:
            raise SpecError("kbatch_json_version", f"{JSON_FORMAT_VERSION} (the document's format version, "
                            "as dump writes it)", "<no version>")
        _check_keys(document, {"kbatch_json_version", "entries", "files"}, set(), "")
    version = document.get("kbatch_json_version", JSON_FORMAT_VERSION)
    if version != JSON_FORMAT_VERSION:
        raise SpecError("kbatch_json_version", str(JSON_FORMAT_VERSION), version)
    if "files" in document:
        files = document["files"]
        if not isinstance(files, list) or len(files) != 1:
            raise SpecError("files", "exactly one file (dump one file at a time to encode it)",
                            f"<{len(files) if isinstance(files, list) else 'no'} files>")
        document, prefix = files[0], "files[0]."
    else:
        prefix = ""
    entries = document.get("entries") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise SpecError(f"{prefix}entries", "a list of entries", entries)
    return entries, f"{prefix}entries"


def encode_spec(document, *, single_batch: bool = False, rederive: bool = False) -> bytes:
    """A document a user wrote (encode-from-json), checked, then encoded: its version given, each record's
    ``decoded`` what its bytes hold and, unless ``rederive``, each entry's ``payload`` what its ``records`` say
    (a SpecError where not)."""
    entries, path = entries_of(document, single_batch=single_batch, require_version=True)
    if not single_batch:
        check_decoded_matches_bytes(document, entries, path)
    if not rederive:
        for index, entry in enumerate(entries):
            check_payload_matches_records(entry, path if single_batch else f"{path}[{index}]")
    return encode_document(document, single_batch=single_batch, rederive=rederive, require_version=True)


def encode_document(document, *, single_batch: bool = False, rederive: bool = False,
                    require_version: bool = False) -> bytes:
    entries, path = entries_of(document, single_batch=single_batch, require_version=require_version)
    out = io.BytesIO()
    for index, entry in enumerate(entries):
        out.write(encode_entry(entry, f"{path}[{index}]" if not single_batch else path, rederive=rederive))
    return out.getvalue()


def encode_entry(entry, path: str, *, rederive: bool = False) -> bytes:
    if not isinstance(entry, dict):
        raise SpecError(path, "an object (a batch, a message or raw bytes)", entry)
    if "raw" in entry or entry.get("type") == "finding":
        return _raw(entry, path)
    if entry.get("type") == "summary":
        return b""
    magic = _int(entry, "magic", path, 2, low=0, high=3)
    if rederive:
        entry = _without_derivable(entry, path)
    if magic == 3:
        data = encode_v3_batch(entry, path)
    else:
        data = _v2_batch(entry, path) if magic == 2 else _legacy_message(entry, path, magic)
    if "truncate_to" in entry:
        limit = _int(entry, "truncate_to", path, low=0, high=len(data))
        data = data[:limit]
    return data


def _raw(entry: dict, path: str) -> bytes:
    _check_keys(entry, {"raw"}, _REGION_OUTPUT_ONLY, path)
    if "raw" not in entry:
        return b""   # a finding inside bytes that another entry carries
    return spec_bytes(entry["raw"], f"{path}.raw", nullable=False)


_DERIVABLE = {"crc", "batch_length", "last_offset_delta", "max_timestamp", "count", "attributes"}


def _without_derivable(entry: dict, path: str) -> dict:
    """--rederive: drop what can be derived, so edited records get a consistent batch (records absent or
    null: there are none to derive from, and only what the payload gives, its CRC and length, is derived)."""
    if _list(entry, "records", path) is None:
        return {key: value for key, value in entry.items() if key not in ("crc", "batch_length")}
    out = {key: value for key, value in entry.items() if key not in _DERIVABLE}
    if "records" in entry:
        out.pop("payload", None)
        out["records"] = [{key: value for key, value in record.items()
                           if key not in ("length", "key_length", "value_length", "headers_count", "crc")}
                          if isinstance(record, dict) else record for record in entry["records"]]
    return out


# -- v2 batches (DefaultRecordBatch, DefaultRecord) ------------------------------


def _codec_id(entry: dict, path: str, magic: int) -> int:
    name = entry.get("codec", "none")
    if not isinstance(name, str) or name not in CODEC_IDS or (name == "zstd" and magic < 2):
        raise SpecError(f"{path}.codec", "none, gzip, snappy, lz4" + (" or zstd" if magic == 2 else ""), name)
    return CODEC_IDS[name]


def _timestamp_type(entry: dict, path: str, magic: int) -> bool:
    """True for LogAppendTime."""
    value = entry.get("timestamp_type", "CreateTime" if magic else "NoTimestampType")
    allowed = ("CreateTime", "LogAppendTime") if magic else ("NoTimestampType",)
    if value not in allowed:
        raise SpecError(f"{path}.timestamp_type", " or ".join(allowed), value)
    return value == "LogAppendTime"


def _v2_batch(entry: dict, path: str) -> bytes:
    header, payload = v2_batch_parts(entry, path)
    size = BATCH_HEADER.size + len(payload)
    if header["batch_length"] is None:
        header["batch_length"] = size - LOG_OVERHEAD
    if header["crc"] is None:
        header["crc"] = crc32c(BATCH_HEADER.build(dict(header, crc=0))[BATCH_CRC_START:] + payload)
    return BATCH_HEADER.build(header) + payload


def v2_batch_parts(entry: dict, path: str, *, with_attributes: bool = True) -> tuple[dict, bytes]:
    """A v2 batch's header fields and its records' bytes (compressed); batch_length and crc are None unless
    the spec gives them.  ``with_attributes=False`` leaves out each record's attributes byte (magic 3)."""
    _check_keys(entry, _BATCH_FIELDS, _BATCH_OUTPUT_ONLY, path)
    codec_id = _codec_id(entry, path, 2)
    log_append_time = _timestamp_type(entry, path, 2)
    is_transactional = _bool(entry, "is_transactional", path)
    is_control = _bool(entry, "is_control", path)
    delete_horizon = _int(entry, "delete_horizon_ms", path)
    records = _list(entry, "records", path)
    timestamps = [_int(record, "timestamp", f"{path}.records[{index}]")
                  for index, record in enumerate(records or []) if isinstance(record, dict)]
    timestamps = [timestamp for timestamp in timestamps if timestamp is not None]
    first_offset = _int(records[0], "offset", f"{path}.records[0]") if records and isinstance(records[0], dict) \
        else None
    base_offset = _int(entry, "base_offset", path, first_offset if first_offset is not None else 0)
    base_timestamp = _int(entry, "base_timestamp", path,
                          delete_horizon if delete_horizon is not None else (timestamps[0] if timestamps
                                                                             else NO_TIMESTAMP))
    max_timestamp = _int(entry, "max_timestamp", path, max(timestamps) if timestamps else NO_TIMESTAMP)

    if "payload" in entry:
        payload = spec_bytes(entry["payload"], f"{path}.payload", nullable=False)
        offsets = None
    else:
        body, offsets = _v2_records(records or [], f"{path}.records", base_offset, base_timestamp,
                                    log_append_time, max_timestamp, with_attributes)
        payload = compress(codec_id, body, snappy_framing=_snappy_framing(entry, path),
                           lz4_kafka3160=_bool(entry, "lz4_kafka3160", path), frame=_frame(entry, codec_id, path))
    count = len(records) if records is not None else 0
    last_offset_delta = offsets[-1] - base_offset if offsets else 0
    attributes = codec_id | (TIMESTAMP_TYPE_MASK if log_append_time else 0) \
        | (TRANSACTIONAL_FLAG_MASK if is_transactional else 0) | (CONTROL_FLAG_MASK if is_control else 0) \
        | (DELETE_HORIZON_FLAG_MASK if delete_horizon is not None else 0)
    header = dict(
        base_offset=base_offset,
        batch_length=0,
        partition_leader_epoch=_int(entry, "partition_leader_epoch", path, NO_PARTITION_LEADER_EPOCH,
                                    low=-(2**31), high=2**31 - 1),
        magic=2,
        crc=0,
        attributes=_int(entry, "attributes", path, attributes, low=-(2**15), high=2**15 - 1),
        last_offset_delta=_int(entry, "last_offset_delta", path, last_offset_delta, low=-(2**31), high=2**31 - 1),
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=_int(entry, "producer_id", path, -1),
        producer_epoch=_int(entry, "producer_epoch", path, -1, low=-(2**15), high=2**15 - 1),
        base_sequence=_int(entry, "base_sequence", path, -1, low=-(2**31), high=2**31 - 1),
        records_count=_int(entry, "count", path, count, low=-(2**31), high=2**31 - 1),
    )
    header["batch_length"] = _int(entry, "batch_length", path, None, low=-(2**31), high=2**31 - 1)
    header["crc"] = _int(entry, "crc", path, None, low=0, high=2**32 - 1)
    return header, payload


def encode_v3_batch(entry: dict, path: str) -> bytes:
    """A magic-3 batch (the v3 proposal Kafka never adopted, kbatch.reading.v3 reads it) from a spec: v2's
    spec, laid out as v3."""
    given = entry.get("attributes")
    with_attributes = isinstance(given, int) and not given & IGNORE_MESSAGE_ATTRIBUTES_MASK
    header, payload = v2_batch_parts(entry, path, with_attributes=with_attributes)
    if given is None:
        header["attributes"] |= IGNORE_MESSAGE_ATTRIBUTES_MASK   # choice 4: writers drop the records' attributes
    header["magic"] = PROPOSED_V3_MAGIC
    header["max_timestamp_delta"] = header.pop("max_timestamp") - header["base_timestamp"]
    if not -(2**31) <= header["last_offset_delta"] < 2**31:
        raise SpecError(f"{path}.last_offset_delta", "an int32", header["last_offset_delta"])
    stated_length, stated_crc = header.pop("batch_length"), header.pop("crc")
    tail = (varint_bytes(header["last_offset_delta"]) + varlong_bytes(header["base_timestamp"])
            + varlong_bytes(header["max_timestamp_delta"]))   # RecordBatchV3Tail, in its order
    header["batch_length"] = BATCH_V3_FIXED.size + len(tail) + len(payload) - LOG_OVERHEAD \
        if stated_length is None else stated_length
    covered = BATCH_V3_FIXED.build(dict(header, crc=0))[BATCH_CRC_START:] + tail + payload
    header["crc"] = crc32c(covered) if stated_crc is None else stated_crc
    return BATCH_V3_FIXED.build(header) + tail + payload


def _frame(entry: dict, codec_id: int, path: str) -> dict | None:
    """``frame``: an lz4 or zstd frame's options other than Kafka's (codecs.FRAME_DEFAULTS names them)."""
    frame = entry.get("frame")
    if frame is None:
        return None
    defaults = FRAME_DEFAULTS.get(codec_id)
    if defaults is None or not isinstance(frame, dict):
        raise SpecError(f"{path}.frame", "frame options of an lz4 or zstd entry", frame)
    for key, value in frame.items():
        where = f"{path}.frame.{key}"
        if key not in defaults:
            raise SpecError(where, " or ".join(sorted(defaults)), key)
        if key == "block_size":
            if value not in LZ4_BLOCK_SIZES:
                raise SpecError(where, " or ".join(map(str, sorted(LZ4_BLOCK_SIZES))), value)
        elif key == "window_descriptor":
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255):
                raise SpecError(where, "a byte (0..255) or null", value)
        elif not isinstance(value, bool):
            raise SpecError(where, "true or false", value)
    return frame


def _snappy_framing(entry: dict, path: str) -> str:
    framing = entry.get("snappy_framing", "xerial")
    if framing not in ("xerial", "raw"):
        raise SpecError(f"{path}.snappy_framing", "xerial or raw", framing)
    return framing


def _list(entry: dict, key: str, path: str):
    value = entry.get(key)
    if value is not None and not isinstance(value, list):
        raise SpecError(f"{path}.{key}", "a list", value)
    return value


def _v2_records(records: list, path: str, base_offset: int, base_timestamp: int, log_append_time: bool,
                max_timestamp: int, with_attributes: bool = True) -> tuple[bytes, list[int]]:
    out, offsets = io.BytesIO(), []
    for index, record in enumerate(records):
        record_path = f"{path}[{index}]"
        _check_keys(record, _RECORD_FIELDS, _RECORD_OUTPUT_ONLY, record_path)
        offset = _int(record, "offset", record_path, base_offset + index)
        offsets.append(offset)
        key, value = _key_value(record, record_path)
        timestamp = _int(record, "timestamp", record_path, base_timestamp)
        # Under LogAppendTime the stored delta is not seen through the effective timestamp; keep 0 unless given.
        timestamp_delta = _varint(record, "timestamp_delta", record_path,
                                  0 if log_append_time else timestamp - base_timestamp, bits=64)
        offset_delta = _varint(record, "offset_delta", record_path, offset - base_offset)
        headers = _headers(record, record_path) if "headers" in record else ()
        body = bytearray()
        if with_attributes:
            body.append(_int(record, "attributes", record_path, 0, low=-128, high=127) & 0xFF)
        body += timestamp_delta
        body += offset_delta
        body += _varint(record, "key_length", record_path, -1 if key is None else len(key))
        body += key or b""
        body += _varint(record, "value_length", record_path, -1 if value is None else len(value))
        body += value or b""
        body += _varint(record, "headers_count", record_path, len(headers))
        for header_key, header_value in headers:
            body += _varint_bytes(len(header_key)) + header_key
            body += _varint_bytes(-1 if header_value is None else len(header_value)) + (header_value or b"")
        out.write(_varint(record, "length", record_path, len(body)))
        out.write(body)
    return out.getvalue(), offsets


# Record fields only a v2 record has: a v0/v1 message stores none of them, so giving one is an error
# (LegacyRecord: offset, crc, magic, attributes, [timestamp], key, value; nothing else).
_V2_ONLY_RECORD_FIELDS = ("offset_delta", "timestamp_delta", "length", "key_length", "value_length",
                          "headers_count")


def _legacy_record_fields(record: dict, path: str, magic: int) -> None:
    """Refuse what a v0/v1 message cannot hold, rather than dropping it silently."""
    if record.get("headers"):
        raise SpecError(f"{path}.headers", f"no headers (a magic {magic} message has none; headers need magic 2)",
                        record["headers"])
    for key in _V2_ONLY_RECORD_FIELDS:
        if record.get(key) is not None:
            raise SpecError(f"{path}.{key}", f"no {key} (a magic {magic} message has none)", record[key])
    if record.get("attributes") not in (None, 0):
        raise SpecError(f"{path}.attributes", f"0 or absent (record attributes are v2; a magic {magic} message's "
                        "attributes are the entry's)", record["attributes"])


def _key_value(record: dict, path: str) -> tuple[bytes | None, bytes | None]:
    """A record's key and value; a control record may be given as {"control": {"type", "coordinator_epoch"}}."""
    if "control" in record and record["control"] is not None and "key" not in record:
        return _control_key_value(record["control"], f"{path}.control")
    return spec_bytes(record.get("key"), f"{path}.key"), spec_bytes(record.get("value"), f"{path}.value")


def _control_key_value(control, path: str) -> tuple[bytes, bytes | None]:
    if not isinstance(control, dict):
        raise SpecError(path, '{"type": "COMMIT"|"ABORT", "coordinator_epoch": N}', control)
    type_ids = {name: type_id for type_id, name in CONTROL_TYPES.items()}
    if not isinstance(control.get("type"), str) or control["type"] not in type_ids:
        raise SpecError(f"{path}.type", " or ".join(type_ids), control.get("type"))
    key = ControlRecordKey.build(dict(version=_int(control, "key_version", path, 0, low=-(2**15), high=2**15 - 1),
                                      type=type_ids[control["type"]]))
    if control["type"] not in ("ABORT", "COMMIT"):
        return key, None
    value = EndTransactionMarkerValue.build(dict(
        version=_int(control, "value_version", path, 0, low=-(2**15), high=2**15 - 1),
        coordinator_epoch=_int(control, "coordinator_epoch", path, 0, low=-(2**31), high=2**31 - 1)))
    return key, value


def _headers(record: dict, path: str) -> list[tuple[bytes, bytes | None]]:
    headers = _list(record, "headers", path) or []
    out = []
    for index, header in enumerate(headers):
        header_path = f"{path}.headers[{index}]"
        if not isinstance(header, dict) or set(header) - {"key", "value"} or "key" not in header:
            raise SpecError(header_path, '{"key": {...}, "value": {...} or null}', header)
        out.append((spec_bytes(header["key"], f"{header_path}.key", nullable=False),
                    spec_bytes(header.get("value"), f"{header_path}.value")))
    return out


# -- v0/v1 messages (LegacyRecord) ------------------------------------------------


def _legacy_message(entry: dict, path: str, magic: int) -> bytes:
    _check_keys(entry, _BATCH_FIELDS, _BATCH_OUTPUT_ONLY, path)
    codec_id = _codec_id(entry, path, magic)
    log_append_time = _timestamp_type(entry, path, magic)
    records = _list(entry, "records", path)
    if "payload" in entry:
        payload = spec_bytes(entry["payload"], f"{path}.payload", nullable=False)
        offsets, timestamps = [], []
    elif codec_id == 0:
        if not records or len(records) != 1:
            raise SpecError(f"{path}.records", "one record (an uncompressed v0/v1 message holds one)",
                            f"<{len(records or [])} records>")
        record = records[0]
        _check_keys(record, _RECORD_FIELDS, _RECORD_OUTPUT_ONLY, f"{path}.records[0]")
        _legacy_record_fields(record, f"{path}.records[0]", magic)
        key, value = _key_value(record, f"{path}.records[0]")
        payload = legacy_key_value(key, value)
        offsets = [_int(record, "offset", f"{path}.records[0]", 0)]
        timestamps = [_int(record, "timestamp", f"{path}.records[0]", NO_TIMESTAMP)] if magic else []
    else:
        inner, offsets, timestamps = _inner_message_set(records or [], f"{path}.records", magic)
        value = compress(codec_id, inner, snappy_framing=_snappy_framing(entry, path),
                         lz4_kafka3160=_bool(entry, "lz4_kafka3160", path), frame=_frame(entry, codec_id, path))
        payload = legacy_key_value(None, value)
    # The offset field as stored: a message's own offset; a wrapper's is that of its last record.
    offset = _int(entry, "stored_offset", path, offsets[-1] if offsets else _int(entry, "base_offset", path, 0))
    timestamp = _int(entry, "max_timestamp", path, max(timestamps) if timestamps else NO_TIMESTAMP)
    attributes = codec_id | (LEGACY_TIMESTAMP_TYPE_MASK if log_append_time else 0)
    return legacy_message(magic, offset, _int(entry, "attributes", path, attributes, low=-128, high=127),
                          timestamp if timestamp is not None else NO_TIMESTAMP, payload,
                          message_size=_int(entry, "batch_length", path, None, low=-(2**31), high=2**31 - 1),
                          crc=_int(entry, "crc", path, None, low=0, high=2**32 - 1))


def legacy_message(magic: int, offset: int, attributes: int, timestamp: int, payload: bytes, *,
                   message_size: int | None = None, crc: int | None = None) -> bytes:
    """One v0/v1 message (LegacyRecord.write) from values already checked: the declaration's fixed header,
    then ``payload`` (key and value: :func:`legacy_key_value`); its size and CRC derived unless given.
    The spec path above and ``stats --what-if`` (a message per record, from Record objects) both write with it.
    """
    header_layout = MESSAGE_V1_HEADER if magic == 1 else MESSAGE_V0_HEADER   # fixed layouts of the declarations
    header = dict(offset=offset, message_size=0, crc=0, magic=magic, attributes=attributes)
    if magic == 1:
        header["timestamp"] = timestamp
    header["message_size"] = header_layout.size + len(payload) - LOG_OVERHEAD if message_size is None \
        else message_size
    header["crc"] = crc32(header_layout.build(header)[MESSAGE_CRC_START:] + payload) if crc is None else crc
    return header_layout.build(header) + payload


def legacy_key_value(key: bytes | None, value: bytes | None) -> bytes:
    def sized(data):
        return (-1 if data is None else len(data)).to_bytes(4, "big", signed=True) + (data or b"")
    return sized(key) + sized(value)


def _inner_message_set(records: list, path: str, magic: int):
    """A wrapper's inner messages, as a broker writes them.

    magic 0: inner offsets absolute; magic 1: relative 0..n-1, the wrapper
    carrying the absolute offset of the last (AbstractLegacyRecordBatch).
    """
    if not records:
        raise SpecError(path, "at least one record in a compressed message", "<no records>")
    offsets, timestamps, out = [], [], io.BytesIO()
    for index, record in enumerate(records):
        record_path = f"{path}[{index}]"
        _check_keys(record, _RECORD_FIELDS, _RECORD_OUTPUT_ONLY, record_path)
        _legacy_record_fields(record, record_path, _int(record, "magic", record_path, magic, low=0, high=1))
        offsets.append(_int(record, "offset", record_path, index))
        timestamps.append(_int(record, "timestamp", record_path, NO_TIMESTAMP) if magic else None)
    for index, record in enumerate(records):
        record_path = f"{path}[{index}]"
        stored_offset = offsets[index] - offsets[0] if magic == 1 else offsets[index]
        inner = dict(magic=_int(record, "magic", record_path, magic, low=0, high=1), codec="none",
                     stored_offset=stored_offset, records=[{k: v for k, v in record.items()
                                                           if k in ("key", "value", "control")}])
        if "crc" in record:
            inner["crc"] = record["crc"]
        if inner["magic"] == 1:
            inner["max_timestamp"] = timestamps[index] if timestamps[index] is not None else NO_TIMESTAMP
        out.write(_legacy_message(inner, record_path, inner["magic"]))
    return out.getvalue(), offsets, [t for t in timestamps if t is not None]


def check_payload_matches_records(entry: dict, path: str) -> None:
    """When a spec gives both ``payload`` and ``records``, they must say the same (else edits would be lost)."""
    if not isinstance(entry, dict) or "payload" not in entry or not entry.get("records"):
        return
    from kbatch.reading.reader import ReadOptions, SegmentReader   # the one reader, to decode what the payload holds

    data = encode_entry({key: value for key, value in entry.items() if key != "truncate_to"}, path)
    from kbatch.walk.engine import each, entries

    batches: list = []
    each(entries(SegmentReader(io.BytesIO(data), ReadOptions(records=True), decompressor=Decompressor())),
         batches.append, lambda finding: None)   # (a payload that does not decode is the encoder's to report)
    decoded = [(r.offset, r.key, r.value, r.headers) for batch in batches for r in batch.records or []]
    given = []
    for index, record in enumerate(entry["records"]):
        record_path = f"{path}.records[{index}]"
        _check_keys(record, _RECORD_FIELDS, _RECORD_OUTPUT_ONLY, record_path)
        key, value = _key_value(record, record_path)
        offset = record.get("offset")
        if offset is None and index < len(decoded):
            offset = decoded[index][0]   # not given: nothing to disagree about
        given.append((offset, key, value, _headers(record, record_path)))
    if decoded != given:
        raise SpecError(f"{path}.records", "the records the payload holds (remove payload to encode edited "
                        "records, or use --rederive)", "<records that differ from the payload>")


def check_decoded_matches_bytes(document, entries: list, path: str) -> None:
    """Each record's ``decoded`` (an internal topic's key and value as dump shows them) must be what its
    key and value bytes hold, read by the decoder the dumped file's name calls for: else an edit of the
    view would be lost without a word.  Without a file name there is no decoder to ask, and it is ignored."""
    import json

    from kbatch.messages import decoder_for_path

    files = document.get("files") if isinstance(document, dict) else None
    name = files[0].get("file") if isinstance(files, list) and files and isinstance(files[0], dict) else None
    decoder = decoder_for_path(name) if isinstance(name, str) else None
    if decoder is None:
        return
    from kbatch.messages.topics import decode

    for index, entry in enumerate(entries):
        records = entry.get("records") if isinstance(entry, dict) else None
        for number, record in enumerate(records if isinstance(records, list) else []):
            if not isinstance(record, dict) or "decoded" not in record:
                continue
            record_path = f"{path}[{index}].records[{number}]"
            key, value = _key_value(record, record_path)
            held = json.loads(json.dumps(decode(decoder, key, value, _layout(record["decoded"])).as_dict(),
                                         ensure_ascii=False))
            _same_view(held, record["decoded"], f"{record_path}.decoded")


def _layout(decoded) -> str | None:
    """The layout a dumped value names (dump --kafka-version may have chosen it), when it is one kbatch
    knows: the bytes are read with it again."""
    from kbatch.messages.schemas import LAYOUTS

    value = decoded.get("value") if isinstance(decoded, dict) else None
    layout = value.get("layout") if isinstance(value, dict) else None
    known = {each.name for every in LAYOUTS.values() for each in every}
    return layout if isinstance(layout, str) and layout in known else None


def _same_view(held, given, path: str) -> None:
    """SpecError at the first field where ``given`` differs from what the bytes hold (``held``)."""
    if isinstance(held, dict) and isinstance(given, dict):
        for key in list(held) + [key for key in given if key not in held]:
            _same_view(held.get(key), given.get(key), f"{path}.{key}")
    elif isinstance(held, list) and isinstance(given, list) and len(held) == len(given):
        for index, (one, other) in enumerate(zip(held, given)):
            _same_view(one, other, f"{path}[{index}]")
    elif held != given:
        raise SpecError(path, f"{_show(held)}, what the key and value bytes hold (decoded is a view of them: "
                              "edit key and value)", given)


__all__ = ["SpecError", "encode_document", "encode_entry", "entries_of", "spec_bytes", "CodecError"]
