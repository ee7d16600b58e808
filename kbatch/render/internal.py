"""How a record of an internal topic reads: its key and value as Kafka's schemas name them.

The table shows ``Name vN {json}``; ``--format dumplog`` prints what kafka-dump-log.sh prints with its
decoders (DumpLogSegments.OffsetsMessageParser, TransactionLog.formatRecordKeyAndValue,
ClusterMetadataLogMessageParser), so scripts reading its output keep working.
"""

from __future__ import annotations

import json
import re

from ..messages.decoder import kafka_json, to_json
from ..messages.schemas import SCHEMAS


def _compact(value) -> str:
    # Jackson's ObjectNode.toString: no spaces, non-ASCII as is
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cut(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else f"{text[:limit]}…"


def key_text(decoded, limit: int | None = None) -> str | None:
    """The key cell; None when the key did not read (the raw bytes are shown instead)."""
    if decoded.key is None:
        return None
    key = decoded.key
    return _cut(f"{key['name']} v{key['version']} {_compact(to_json(key['data']))}", limit)


def value_text(decoded, limit: int | None = None) -> str | None:
    if decoded.tombstone:
        return "DELETE (tombstone)"
    if decoded.value is None:
        return None
    value = decoded.value
    state = f" {value['state']}" if "state" in value else ""
    return _cut(f"{value['name']} v{value['version']}{state} {_compact(to_json(value['data']))}", limit)


def _kafka_message_json(part: dict) -> dict:
    return kafka_json(SCHEMAS[part["name"]], part["version"], part["data"])


def metadata_type_name(name: str) -> str:
    """MetadataRecordType's constant: the message name in UPPER_SNAKE_CASE (PartitionRecord -> PARTITION_RECORD)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def dumplog_tokens(decoded, offset: int) -> str:
    """The ' key: … payload: …' tail kafka-dump-log.sh prints for a record read by one of its decoders."""
    if decoded.decoder in ("offsets", "share"):
        unknown_type = [problem for problem in decoded.problems if problem.field == "key.type"]
        if unknown_type:
            return f" key: Unknown record type {unknown_type[0].actual} at offset {offset}, skipping."
        if decoded.key is None:
            return f" key: Error at offset {offset}, skipping."
        key = _compact({"type": str(decoded.key["version"]), "data": _kafka_message_json(decoded.key)})
        if decoded.tombstone:
            return f" key: {key} payload: <DELETE>"
        if decoded.value is None:
            return f" key: Error at offset {offset}, skipping."
        value = _compact({"version": str(decoded.value["version"]), "data": _kafka_message_json(decoded.value)})
        return f" key: {key} payload: {value}"
    if decoded.decoder == "transactions":
        if decoded.key is None:
            return f" key: Error at offset {offset}, skipping."
        key = f" key: transaction_metadata::transactionalId={decoded.key['data']['transactionalId']}"
        if decoded.tombstone:
            return f"{key} payload: <DELETE>"
        if decoded.value is None:
            return key
        data = decoded.value["data"]
        partitions = ",".join(f"{topic['topic']}-{partition}" for topic in data["transactionPartitions"] or []
                              for partition in topic["partitionIds"])
        return (f"{key} payload: producerId:{data['producerId']},producerEpoch:{data['producerEpoch']},"
                f"state={decoded.value['state']},partitions=[{partitions}],"
                f"txnLastUpdateTimestamp={data['transactionLastUpdateTimestampMs']},"
                f"txnTimeoutMs={data['transactionTimeoutMs']}")
    # metadata: no key
    if decoded.value is None:
        return f" payload: Error at {offset}, skipping."
    value = decoded.value
    return " payload: " + _compact({"type": metadata_type_name(value["name"]), "version": value["version"],
                                    "data": _kafka_message_json(value)})
