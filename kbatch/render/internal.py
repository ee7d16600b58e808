"""How a record of an internal topic reads: its key and value as Kafka's schemas name them.

The table shows a key as its fields joined by "/" (``billing/orders/0``) and a value as ``Name vN {json}``
(a space after each field, where a narrow column may wrap it);
``--format dumplog`` prints what Kafka 4.x's kafka-dump-log.sh prints with its decoders (--offsets-decoder,
--transaction-log-decoder, --cluster-metadata-decoder, --share-group-state-decoder,
--remote-log-metadata-decoder), so scripts reading its output keep working.
"""

from __future__ import annotations

import json
import re

from kbatch.messages.decoder import kafka_json, to_json
from kbatch.messages.schemas import SCHEMAS
from kbatch.output.visible import json_visible, visible


def _compact(value) -> str:
    # Jackson's ObjectNode.toString: no spaces, non-ASCII as is (but for what a terminal would act on)
    return json_visible(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _wrappable(value) -> str:
    """The table's JSON: compact, but a space after each field's comma, so that a narrow column wraps a
    value between its fields (a terminal breaks lines at spaces), not inside a name or a number."""
    return json_visible(json.dumps(value, ensure_ascii=False, separators=(", ", ":")))


def _cut(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else f"{text[:limit]}…"


def key_text(decoded, limit: int | None = None) -> str | None:
    """The key cell; None when the key did not read (the raw bytes are shown instead)."""
    if decoded.key is None:
        return None
    key = decoded.key
    return _cut(f"{key['name']} v{key['version']} {_wrappable(to_json(key['data']))}", limit)


def key_compact(decoded, limit: int | None = None) -> str | None:
    """The key cell of the records table: its fields' values joined by "/" (``billing-audit-42/orders/3``
    for an offset commit: group/topic/partition), what tells one key from another in a narrow column (the
    value's name says which kind of key it is); compact JSON where a field is not a plain value."""
    if decoded.key is None:
        return None
    data = to_json(decoded.key["data"])
    if isinstance(data, dict) and data and all(isinstance(value, (str, int)) and not isinstance(value, bool)
                                               for value in data.values()):
        return _cut("/".join(visible(str(value)) for value in data.values()), limit)
    return key_text(decoded, limit)


def value_text(decoded, limit: int | None = None) -> str | None:
    if decoded.tombstone:
        return "DELETE (tombstone)"
    if decoded.value is None:
        return None
    value = decoded.value
    state = f" {value['state']}" if "state" in value else ""
    # a message Kafka changed in place names the release whose layout read it
    layout = f" ({value['layout']} layout)" if "layout" in value else ""
    return _cut(f"{value['name']} v{value['version']}{layout}{state} {_wrappable(to_json(value['data']))}", limit)


def _kafka_message_json(part: dict) -> dict:
    from kbatch.messages.topics import message_schema
    return kafka_json(message_schema(part), part["version"], part["data"])


def metadata_type_name(name: str) -> str:
    """MetadataRecordType's constant: the message name in UPPER_SNAKE_CASE (PartitionRecord -> PARTITION_RECORD)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


# DumpLogSegments.printControlRecord (Kafka 4.x): the token before each KRaft control record's JSON.
_CONTROL_TOKENS = {"LEADER_CHANGE": "LeaderChange:", "SNAPSHOT_HEADER": "SnapshotHeader",
                   "SNAPSHOT_FOOTER": "SnapshotFooter", "KRAFT_VERSION": "KRaftVersion", "KRAFT_VOTERS": "KRaftVoters"}


def control_text(marker) -> str:
    """A control record for the table: its type and what its value holds."""
    if marker.coordinator_epoch is not None:
        return f"{marker.type} coordinatorEpoch={marker.coordinator_epoch}"
    if marker.data is not None:
        return f"{marker.type} {_wrappable(to_json(marker.data))}"
    return marker.type


def control_dumplog_tokens(marker) -> str | None:
    """' LeaderChange: {json}', ' SnapshotHeader {json}', ...: the message written (as Kafka does) at the
    version its own Version field names; None for types Kafka prints otherwise."""
    if marker.data is None or marker.type not in _CONTROL_TOKENS:
        return None
    from kbatch.messages.control import KRAFT_CONTROL_MESSAGES
    schema = SCHEMAS[KRAFT_CONTROL_MESSAGES[marker.type]]
    version = marker.data.get("version", 0)
    return f" {_CONTROL_TOKENS[marker.type]} {_compact(kafka_json(schema, version, marker.data))}"


def _error(decoded) -> str:
    """What follows "skipping." in Kafka's error line: its deserializer's exception message where kbatch
    knows it word for word, else kbatch's own account of the problem."""
    problem = decoded.problems[0] if decoded.problems else None
    if problem is None:
        return ""
    if problem.kafka is not None:
        return f" {problem.kafka}"
    return f" {problem.field}: expected {problem.expected}, found {problem.actual}"


def dumplog_tokens(decoded, offset: int) -> str:
    """The ' key: … payload: …' tail kafka-dump-log.sh prints for a record read by one of its decoders.

    Kafka 4.x (tools/.../DumpLogSegments.java): the offsets, transaction-log and share-group decoders are
    CoordinatorRecordMessageParser ({"type": "<record type>", "data": …}, {"version": "<n>", "data": …},
    "<DELETE>" for a tombstone); the cluster-metadata decoder prints {"type": "<RECORD_TYPE>", "version": n,
    "data": …} and no key.
    """
    if decoded.decoder == "metadata":
        # MetadataRecordSerde throws on bytes after the record: Kafka prints the error, not the record
        if decoded.value is None or any(problem.code == "bad-internal-record" for problem in decoded.problems):
            return f" payload: Error at {offset}, skipping.{_error(decoded)}"
        value = decoded.value
        return " payload: " + _compact({"type": metadata_type_name(value["name"]), "version": value["version"],
                                        "data": _kafka_message_json(value)})
    unknown_type = [problem for problem in decoded.problems if problem.field == "key.type"]
    if unknown_type:
        return f" key: Unknown record type {unknown_type[0].actual} at offset {offset}, skipping."
    if decoded.key is None or (decoded.value is None and not decoded.tombstone):
        return f" key: Error at offset {offset}, skipping.{_error(decoded)}"
    key = _compact({"type": str(decoded.key["version"]), "data": _kafka_message_json(decoded.key)})
    if decoded.tombstone:
        return f" key: {key} payload: <DELETE>"
    data = _kafka_message_json(decoded.value)
    if decoded.decoder == "transactions":
        # TransactionLogMessageParser.valueAsJson: the status by its state name, else its id as text
        from kbatch.messages.topics import TRANSACTION_STATES
        status = data["transactionStatus"]
        data["transactionStatus"] = TRANSACTION_STATES.get(status, str(status))
    value = _compact({"version": str(decoded.value["version"]), "data": data})
    return f" key: {key} payload: {value}"


# storage/api's RemoteLogSegmentState and RemotePartitionDeleteState: id -> the enum's name.
_SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED",
                   3: "DELETE_SEGMENT_FINISHED"}
_PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED", 2: "DELETE_PARTITION_FINISHED"}


class _Refused(Exception):
    """What a constructor of tiered storage's objects throws (the message of its NullPointerException)."""


def remote_dumplog_tokens(decoded, offset: int) -> str:
    """The ' payload: …' kafka-dump-log.sh --remote-log-metadata-decoder prints (RemoteMetadataLogMessageParser):
    RemoteLogMetadataSerde.deserialize(value).toString(), no key; what throws, "Error at offset N, skipping."."""
    if decoded.value is None or any(problem.code == "bad-internal-record" for problem in decoded.problems):
        return f" payload: Error at offset {offset}, skipping.{_error(decoded)}"
    try:
        return " payload: " + _remote_text(decoded.value["name"], decoded.value["data"])
    except _Refused as refusal:
        return f" payload: Error at offset {offset}, skipping. {refusal}"


def _remote_text(name: str, data: dict) -> str:
    """The toString of the object RemoteLogMetadataSerde builds from the record (storage/api's classes, via the
    *Transform.fromApiMessageAndVersion of storage's serialization package)."""
    if name == "RemotePartitionDeleteMetadataRecord":
        state = _PARTITION_DELETE_STATES.get(data["remotePartitionDeleteState"])
        if state is None:
            raise _Refused("null")   # Objects.requireNonNull(state), no message
        return (f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(data['topicIdPartition'])}, "
                f"state={state}, eventTimestampMs={data['eventTimestampMs']}, brokerId={data['brokerId']}}}")
    if name == "RemoteLogSegmentMetadataRecord":
        # RemoteLogSegmentMetadata's constructor (before the update that carries the state) checks these
        start, end = data["startOffset"], data["endOffset"]
        if start < 0:
            raise _Refused(f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative")
        if end < start:
            raise _Refused(f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than "
                           f"startOffset = {start}")
        _epochs_given(data)
    state = _SEGMENT_STATES.get(data["remoteLogSegmentState"])
    if state is None:
        raise _Refused("state can not be null")   # RemoteLogSegmentMetadataUpdate/Snapshot's requireNonNull
    if name == "RemoteLogSegmentMetadataSnapshotRecord":
        _epochs_given(data)
    custom = "Optional.empty" if data["customMetadata"] is None else \
        f"Optional[CustomMetadata{{{len(data['customMetadata'])} bytes}}]"
    if name == "RemoteLogSegmentMetadataUpdateRecord":
        return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(data['remoteLogSegmentId'])}, "
                f"customMetadata={custom}, state={state}, eventTimestampMs={data['eventTimestampMs']}, "
                f"brokerId={data['brokerId']}}}")
    # a HashMap put in record order (a repeated epoch keeps its last offset), printed as a TreeMap
    epochs = {entry["leaderEpoch"]: entry["offset"] for entry in data["segmentLeaderEpochs"]}
    epochs_text = "{" + ", ".join(f"{epoch}={epochs[epoch]}" for epoch in sorted(epochs)) + "}"
    txn = "true" if data["txnIndexEmpty"] else "false"
    if name == "RemoteLogSegmentMetadataSnapshotRecord":
        return (f"RemoteLogSegmentMetadataSnapshot{{segmentId={data['segmentId']}, startOffset={data['startOffset']}, "
                f"endOffset={data['endOffset']}, maxTimestampMs={data['maxTimestampMs']}, "
                f"segmentLeaderEpochs={epochs_text}, segmentSizeInBytes={data['segmentSizeInBytes']}, "
                f"customMetadata={custom}, state={state}, txnIdxEmpty={txn}}}")
    return (f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(data['remoteLogSegmentId'])}, "
            f"startOffset={data['startOffset']}, endOffset={data['endOffset']}, brokerId={data['brokerId']}, "
            f"maxTimestampMs={data['maxTimestampMs']}, eventTimestampMs={data['eventTimestampMs']}, "
            f"segmentLeaderEpochs={epochs_text}, segmentSizeInBytes={data['segmentSizeInBytes']}, "
            f"customMetadata={custom}, state={state}, txnIdxEmpty={txn}}}")


def _epochs_given(data: dict) -> None:
    if not data["segmentLeaderEpochs"]:
        raise _Refused("segmentLeaderEpochs can not be null or empty")


def _topic_id_partition(entry: dict) -> str:
    """TopicIdPartition.toString: topicId:topic-partition."""
    return f"{entry['id']}:{visible(entry['name'])}-{entry['partition']}"


def _segment_id(entry: dict) -> str:
    return f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(entry['topicIdPartition'])}, id={entry['id']}}}"
