"""Kafka's internal topics, record by record: which schema a key and a value are read with.

* ``__consumer_offsets`` (``offsets``): CoordinatorRecordSerde + GroupCoordinatorRecordSerde.  The key is
  an int16 record type then the key message read AT THAT VERSION (0/1 OffsetCommitKey, 2 GroupMetadataKey,
  3..15 the consumer and share group records); the value is an int16 version then the value message of the
  key's type; a null value is a tombstone (the group or offset is deleted).  In a classic group whose
  protocolType is "consumer", every member's subscription and assignment bytes are themselves version-
  prefixed ConsumerProtocolSubscription/Assignment messages (DumpLogSegments.OffsetsMessageParser).
* ``__share_group_state`` (``share``): the same frame with ShareCoordinatorRecordSerde's types.
* ``__transaction_state`` (``transactions``): the same frame (TransactionLog.readTxnRecordKey/Value), record
  type 0 only: TransactionLogKey / TransactionLogValue; a null value is a tombstone.
* ``__cluster_metadata`` and KRaft snapshots (``metadata``): AbstractApiMessageSerde.read, no key; the value
  is an unsigned varint frame version (1), apiKey and version, then the record, and nothing after it.

A value whose message Kafka changed in place after a release wrote it (the share groups' records of 4.0,
:data:`~kbatch.messages.schemas.LAYOUTS`) is read with the layout of the release that wrote it: the one
``kafka_version`` names, else each layout in turn, newest first, and the first that reads the bytes whole
(to their end, with no problem) is used -- so bytes two layouts read are read with the newest -- and named
as the value's ``layout``; when none does, the newest one's problems are reported.

A record that does not read is not guessed at: :class:`Decoded` carries the problem and the bytes stay
shown raw.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from kbatch.messages.decoder import MessageDecoder, MessageError, _Reader
from kbatch.messages.schemas import LAYOUTS, SCHEMAS
from kbatch.messages.spec import Layout, M, release_number


def _record_types(module: str) -> dict[int, str]:
    """A coordinator's record types: CoordinatorRecordType (generated from the "coordinator-key" definitions'
    apiKeys) -> the name its key and value messages share ("OffsetCommit" for OffsetCommitKey/Value)."""
    return {schema.api_key: name[:-len("Key")] for name, schema in SCHEMAS.items()
            if schema.kind == "coordinator-key" and schema.module == module and schema.api_key is not None}


# GroupCoordinatorRecordSerde: 0 LegacyOffsetCommit, 1 OffsetCommit, 2 GroupMetadata, 3.. the consumer, share
# and streams group records (9 and 18, removed from trunk, kept as 4.0 and 4.1's trunk wrote them).
GROUP_RECORD_TYPES = _record_types("group-coordinator")
# ShareCoordinatorRecordSerde: 0 ShareSnapshot, 1 ShareUpdate.
SHARE_RECORD_TYPES = _record_types("share-coordinator")
# TransactionCoordinatorRecordSerde: 0 TransactionLog, the only one.
TRANSACTION_RECORD_TYPES = _record_types("transaction-coordinator")

# TransactionMetadata.scala, TransactionState.fromId.
TRANSACTION_STATES = {0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit",
                      5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence"}

# MetadataRecordType (the "metadata" definitions of Kafka's metadata module): apiKey -> record name.
METADATA_TYPES = {schema.api_key: name for name, schema in SCHEMAS.items()
                  if schema.kind == "metadata" and schema.module == "metadata" and schema.api_key is not None}
# Tiered storage's own MetadataRecordType (storage/src/main/resources/message: the "metadata" definitions).
REMOTE_TYPES = {schema.api_key: name for name, schema in SCHEMAS.items()
                if schema.kind == "metadata" and schema.module == "storage" and schema.api_key is not None}

_INT16 = struct.Struct(">h")


@dataclass
class Problem:
    """Why a key or value did not read: ``code`` is a finding code, ``part`` "key" or "value"."""

    code: str
    part: str
    pos: int          # inside the key or value bytes
    field: str
    expected: str
    actual: str
    kafka: str | None = None   # the message of the exception Kafka's deserializer throws, as its tool prints it


@dataclass
class Decoded:
    """A record of an internal topic read with Kafka's schemas; ``key``/``value`` None where not read.

    Each of ``key`` and ``value`` is ``{"name", "version", ..., "data"}``: the message and the version it
    was read at, what the frame adds (a metadata record's ``frameVersion`` and ``apiKey``; a transaction's
    ``state``; ``layout``, the release whose layout read a value Kafka changed in place), and its fields.
    """

    decoder: str
    key: dict | None = None
    value: dict | None = None
    tombstone: bool = False
    problems: list[Problem] = field(default_factory=list)

    def as_dict(self) -> dict:
        from kbatch.messages.decoder import to_json
        return {"decoder": self.decoder, "key": to_json(self.key), "value": to_json(self.value),
                "tombstone": self.tombstone}


def _message(decoded: Decoded, part: str, name: str, version: int, data: bytes, start: int,
             *, trailing: str = "internal-trailing-bytes", refused: str | None = None, key: bool = False,
             layout: Layout | None = None, **extra) -> dict | None:
    """Read message ``name`` at ``version`` from ``data[start:]``; None (and a problem) if it does not read.

    A coordinator key is read at its record type, which Kafka's generated reader takes for the version of a
    key whose only version is 0 (MessageSpec requires it): the version-0 layout, no finding.  Any other
    version outside the schema's is refused where Kafka's deserializer refuses it (``refused``: its message;
    CoordinatorRecordSerde checks a value's version).  Where it does not (AbstractApiMessageSerde: metadata
    records), a version above the newest is read as the newest, with a warning.  ``layout`` (one of the
    message's :data:`LAYOUTS`) is read instead of trunk's schema, and named in what is returned and in each
    problem.
    """
    schema = SCHEMAS[name] if layout is None else layout.schema
    if layout is not None:
        extra["layout"] = layout.name
    label = f"{name} v{version}" if layout is None else f"{name} v{version}, Kafka {layout.name} layout"
    # CoordinatorRecordSerde.readMessage wraps what the message's reader throws; AbstractApiMessageSerde.read
    # (metadata) throws its own text.
    if "apiKey" in extra:
        def wrap(java: str | None) -> str | None:
            return f"Failed to deserialize record with type {extra['apiKey']}"
    else:
        def wrap(java: str | None) -> str | None:
            return None if java is None else \
                f"Could not read record with version {version} from {part}'s buffer due to: {java}."
    low, high = schema.valid_range
    if not key and (version < low or (version > high and refused is not None)):
        decoded.problems.append(Problem("unknown-record-version", part, 0, f"{part}.version",
                                        f"a version of {name} in {schema.valid}", str(version),
                                        refused or wrap(f"Can't read version {version} of {name}")))
        return None
    if version > high and not key:
        # The generated read() checks no outer version: each field's condition (VersionConditional) holds
        # at a version above the newest as it does at the newest, so the record reads as the newest layout.
        decoded.problems.append(Problem("record-version-above-schema", part, 0, f"{part}.version",
                                        f"a version of {name} in {schema.valid}",
                                        f"{version} (read as version {high}, the newest known)"))
    reader = MessageDecoder(schema, version, name)
    try:
        fields, end = reader.decode(data, start)
    except MessageError as error:
        decoded.problems.append(Problem("bad-internal-record", part, error.pos, f"{part}.{error.field}",
                                        error.expected, f"{error.actual} ({label})", wrap(error.java)))
        return None
    for remark in reader.warnings:
        decoded.problems.append(Problem("tagged-field-size-mismatch", part, remark.pos, f"{part}.{remark.field}",
                                        remark.expected, f"{remark.actual} ({label})"))
    if end != len(data):
        garbage = f"Found {len(data) - end} byte(s) of garbage after {extra['apiKey']}" if "apiKey" in extra else None
        decoded.problems.append(Problem(trailing, part, end, part, f"{end} bytes ({label})",
                                        f"{len(data) - end} more bytes", garbage))
    return {"name": name, "version": version, **extra, "data": fields}


def _version(decoded: Decoded, part: str, data: bytes) -> int | None:
    if len(data) < 2:
        decoded.problems.append(Problem("bad-internal-record", part, 0, f"{part}.version", "an int16 version",
                                        f"{len(data)} bytes", f"Could not read version from {part}'s buffer."))
        return None
    return _INT16.unpack_from(data)[0]


def _coordinator(decoded: Decoded, key: bytes | None, value: bytes | None, types: dict[int, str],
                 kafka_version: str | None = None) -> Decoded:
    """CoordinatorRecordSerde.deserialize: record type + key message; value version + value message."""
    if key is None:
        decoded.problems.append(Problem("bad-internal-record", "key", 0, "key", "a key (record type + message)",
                                        "null"))
        return decoded
    record_type = _version(decoded, "key", key)
    if record_type is None:
        return decoded
    base = types.get(record_type)
    if base is None:
        known = f"a record type in {min(types)}..{max(types)}" if len(types) > 1 else f"record type {min(types)}"
        decoded.problems.append(Problem("unknown-record-version", "key", 0, "key.type", known, str(record_type)))
        return decoded
    decoded.key = _message(decoded, "key", base + "Key", record_type, key, 2, key=True)
    if value is None:
        decoded.tombstone = True
        return decoded
    version = _version(decoded, "value", value)
    if version is not None:
        # CoordinatorRecordSerde.deserialize refuses a value version outside the value message's range
        decoded.value = _value(decoded, base + "Value", version, value, kafka_version, refused=(
            f"Found an unknown record version {version} for {record_type} type"))
    if decoded.value is not None and base == "GroupMetadata":
        _consumer_protocol(decoded.value["data"])
    return decoded


def layouts(name: str, kafka_version: str | None = None) -> tuple[Layout, ...]:
    """The layouts a value of message ``name`` is read with, newest first: the one of the release
    ``kafka_version`` names ("4.0", "4.0.2", "4.1+"), else every one it has had; () for a message Kafka never
    changed in place (trunk's schema is its only layout)."""
    every = LAYOUTS.get(name, ())
    if kafka_version is None:
        return every
    release = release_number(kafka_version)
    return tuple(layout for layout in every if layout.covers(release))


def _value(decoded: Decoded, name: str, version: int, data: bytes, kafka_version: str | None,
           **keywords) -> dict | None:
    """A coordinator value read with the first of its layouts that reads it whole (newest first: bytes that
    more than one layout reads are read with the newest, the layout of the releases writing now; 4.0's share
    groups were early access, off by default); none does: the first one's account of it."""
    candidates = layouts(name, kafka_version)
    if not candidates:
        return _message(decoded, "value", name, version, data, 2, **keywords)
    for layout in candidates:
        trial = Decoded(decoded.decoder)
        message = _message(trial, "value", name, version, data, 2, layout=layout, **keywords)
        if message is not None and not trial.problems:
            return message
    first = len(decoded.problems)
    message = _message(decoded, "value", name, version, data, 2, layout=candidates[0], **keywords)
    if len(candidates) > 1:
        others = " or ".join(f"Kafka {layout.name}'s" for layout in candidates[1:])
        for problem in decoded.problems[first:]:
            problem.actual += f"; nor does {others} layout read it"
    return message


def message_schema(part: dict) -> M:
    """The schema a decoded key or value was read with: its layout's where it names one, else trunk's."""
    layout = part.get("layout")
    if layout is None:
        return SCHEMAS[part["name"]]
    return next(each.schema for each in LAYOUTS[part["name"]] if each.name == layout)


def _consumer_protocol(group: dict) -> None:
    """DumpLogSegments.prepareGroupMetadataValue: a "consumer" group's member subscriptions and assignments
    are ConsumerProtocolSubscription/Assignment messages; bytes that do not read are kept as they are."""
    if group.get("protocolType") != "consumer":
        return
    for member in group.get("members") or []:
        for field_name, message in (("subscription", "ConsumerProtocolSubscription"),
                                    ("assignment", "ConsumerProtocolAssignment")):
            raw = member.get(field_name)
            if not isinstance(raw, bytes) or len(raw) < 2:
                continue
            version = _INT16.unpack_from(raw)[0]
            schema = SCHEMAS[message]
            # DumpLogSegments.replaceField calls the generated reader at the stored version, which checks none:
            # a version above the newest reads as the newest (MessageDecoder); a negative one is left as bytes
            if version < schema.valid_range[0]:
                continue
            try:
                member[field_name], _ = MessageDecoder(schema, version, message).decode(raw, 2)
            except MessageError:
                pass   # Kafka swallows it and keeps the original bytes


def decode_offsets(key: bytes | None, value: bytes | None, kafka_version: str | None = None) -> Decoded:
    return _coordinator(Decoded("offsets"), key, value, GROUP_RECORD_TYPES, kafka_version)


def decode_share(key: bytes | None, value: bytes | None, kafka_version: str | None = None) -> Decoded:
    return _coordinator(Decoded("share"), key, value, SHARE_RECORD_TYPES, kafka_version)


def decode_transactions(key: bytes | None, value: bytes | None) -> Decoded:
    """TransactionCoordinatorRecordSerde (record type 0: TransactionLogKey/Value); the state by its name."""
    decoded = _coordinator(Decoded("transactions"), key, value, TRANSACTION_RECORD_TYPES)
    if decoded.value is not None:
        status = decoded.value["data"]["transactionStatus"]
        decoded.value["state"] = TRANSACTION_STATES.get(status, f"Unknown({status})")
        if status not in TRANSACTION_STATES:
            decoded.problems.append(Problem("bad-internal-record", "value", 0, "value.transactionStatus",
                                            f"a TransactionState id in 0..{max(TRANSACTION_STATES)}", str(status)))
    return decoded


def decode_metadata(key: bytes | None, value: bytes | None) -> Decoded:
    """AbstractApiMessageSerde.read (MetadataRecordSerde): frame version 1, apiKey, version, the record,
    nothing after it."""
    return _api_message(Decoded("metadata"), value, METADATA_TYPES)


def decode_remote(key: bytes | None, value: bytes | None) -> Decoded:
    """__remote_log_metadata: RemoteLogMetadataSerde.deserialize, the same frame (BytesApiMessageSerde) around
    tiered storage's records (storage's MetadataRecordType); the key is not read (Kafka writes none)."""
    return _api_message(Decoded("remote"), value, REMOTE_TYPES)


def _api_message(decoded: Decoded, value: bytes | None, types: dict[int, str]) -> Decoded:
    """AbstractApiMessageSerde.read: frame version 1, apiKey, version, the record, nothing after it."""
    if value is None:
        decoded.problems.append(Problem("bad-internal-record", "value", 0, "value", "a metadata record", "null"))
        return decoded
    reader = _Reader(value, 0, len(value))
    try:
        frame_version = _frame_number(reader, "value.frameVersion", "frame version")
        if frame_version == 0:
            raise MessageError(0, "value.frameVersion", "frame version 1", "0 (KRaft's 2.8 preview format)",
                               "Could not deserialize metadata record with frame version 0. Note that upgrades "
                               "from the preview release of KRaft in 2.8 to newer versions are not supported.")
        if frame_version != 1:
            raise MessageError(0, "value.frameVersion", "frame version 1", str(frame_version),
                               f"Could not deserialize metadata record due to unknown frame version {frame_version}"
                               "(only frame version 1 is supported)")
        api_key = _frame_number(reader, "value.apiKey", "type")
        version = _frame_number(reader, "value.version", "version")
    except MessageError as error:
        decoded.problems.append(Problem("bad-internal-record", "value", error.pos, error.field, error.expected,
                                        error.actual, error.java))
        return decoded
    name = types.get(api_key)
    if name is None:
        known = f"a metadata record type ({min(types)}..{max(types)})"
        decoded.problems.append(Problem("unknown-record-version", "value", 0, "value.apiKey", known, str(api_key),
                                        "org.apache.kafka.common.errors.UnsupportedVersionException: "
                                        f"Unknown metadata id {api_key}"))
        return decoded
    # Kafka throws on bytes after the record ("Found N byte(s) of garbage after ..."): damage here.
    decoded.value = _message(decoded, "value", name, version, value, reader.pos, trailing="bad-internal-record",
                             frameVersion=frame_version, apiKey=api_key)
    return decoded


def _frame_number(reader: _Reader, field: str, entity: str) -> int:
    """AbstractApiMessageSerde.unsignedIntToShort: an unsigned varint that must fit an int16."""
    start = reader.pos
    try:
        value = reader.unsigned_varint(field)
    except MessageError as error:
        error.java = f"Error while reading {entity}"
        raise
    if value > 0x7FFF:
        raise MessageError(start, field, "a value <= 32767", str(value), f"Value for {entity} was too large.")
    return value


_DECODE: dict[str, Callable[[bytes | None, bytes | None], Decoded]] = {
    "offsets": decode_offsets, "transactions": decode_transactions, "metadata": decode_metadata,
    "share": decode_share, "remote": decode_remote}


# The decoders whose records have values Kafka changed in place (LAYOUTS): they take the Kafka version.
_LAYOUT_DECODERS: dict[str, Callable[[bytes | None, bytes | None, str | None], Decoded]] = {
    "offsets": decode_offsets, "share": decode_share}


def decode(decoder: str, key: bytes | None, value: bytes | None, kafka_version: str | None = None) -> Decoded:
    """Read a record with ``decoder``; ``kafka_version`` (a release, "4.0.2") chooses the layout of the values
    that release wrote where Kafka changed one in place (:func:`layouts`)."""
    by_layout = _LAYOUT_DECODERS.get(decoder)
    if by_layout is not None:
        return by_layout(key, value, kafka_version)
    return _DECODE[decoder](key, value)



Spans = list  # of (start, end, field, value) inside a key or a value


class Label(str):
    """A span's value that is the decoder's description of a frame field, not a string the record holds."""


def field_spans(decoder: str, key: bytes | None, value: bytes | None,
                kafka_version: str | None = None) -> dict[str, tuple[Spans, bool]]:
    """An internal record's key and value field by field, read as :func:`decode` reads them: for "key" and
    "value", the spans (start, end, field, value) inside those bytes -- the frame's own fields first (record
    type or version; a metadata record's frame version, apiKey and version), then the message's -- and
    whether they read to the end.  Where reading fails the spans stop (hexdump-annotate shows the rest raw).
    A value is split with the layout :func:`decode` reads it with."""
    if decoder in ("metadata", "remote"):
        api_types = METADATA_TYPES if decoder == "metadata" else REMOTE_TYPES
        return {"key": ([], not key), "value": _metadata_spans(value or b"", api_types)}
    types = {"offsets": GROUP_RECORD_TYPES, "share": SHARE_RECORD_TYPES,
             "transactions": TRANSACTION_RECORD_TYPES}[decoder]
    out: dict[str, tuple[Spans, bool]] = {"key": ([], not key), "value": ([], not value)}
    if key is None or len(key) < 2:
        return out
    record_type = _INT16.unpack_from(key)[0]
    base = types.get(record_type)
    label = Label(f"{record_type} ({base}Key)" if base else f"{record_type} (unknown)")
    out["key"] = _message_spans([(0, 2, "type", label)], base and base + "Key", 0, key)
    if base is not None and value is not None and len(value) >= 2:
        version = _INT16.unpack_from(value)[0]
        name, shown = base + "Value", version
        schema = SCHEMAS[name]
        if name in LAYOUTS:   # the layout the value is read with, named beside its version
            read = decode(decoder, key, value, kafka_version).value
            layout = read["layout"] if read is not None else layouts(name, kafka_version)[0].name
            schema = message_schema({"name": name, "layout": layout})
            shown = Label(f"{version} (Kafka {layout} layout)")
        out["value"] = _message_spans([(0, 2, "version", shown)], name, version, value, schema=schema)
    return out


def _metadata_spans(data: bytes, types: dict[int, str]) -> tuple[Spans, bool]:
    spans: Spans = []
    reader = _Reader(data, 0, len(data))
    numbers = []
    try:
        for name in ("frameVersion", "apiKey", "version"):
            start = reader.pos
            numbers.append(reader.unsigned_varint(name))
            spans.append((start, reader.pos, name, numbers[-1]))
    except MessageError:
        return spans, False
    message = types.get(numbers[1])
    if numbers[0] != 1 or message is None:
        return spans, False
    spans[1] = (*spans[1][:3], Label(f"{numbers[1]} ({message})"))
    return _message_spans(spans, message, numbers[2], data, reader.pos)


def _message_spans(spans: Spans, name: str | None, version: int, data: bytes, start: int = 2,
                   schema: M | None = None) -> tuple[Spans, bool]:
    """``spans`` followed by those of message ``name`` (read with ``schema``, trunk's by default) at
    ``version`` read from ``data[start:]``."""
    if name is None:
        return spans, False
    schema = schema or SCHEMAS[name]
    if version < schema.valid_range[0]:   # above the newest: read as the newest
        return spans, False
    try:
        _, end = MessageDecoder(schema, version, name).decode(data, start, spans=spans)
    except MessageError:
        return spans, False
    return spans, end == len(data)
