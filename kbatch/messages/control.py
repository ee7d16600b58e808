"""The values of KRaft's control records, read with Kafka's schemas.

ControlRecordUtils.deserialize* read each value at the type's current version, 0, whatever the record's
own ``Version`` field says (LEADER_CHANGE_CURRENT_VERSION, SNAPSHOT_HEADER_CURRENT_VERSION, ...); bytes
after the message are not looked at.  COMMIT and ABORT values are EndTransactionMarker's, read in
:func:`kbatch.reading.records.decode_control`.
"""

from __future__ import annotations

from kbatch.messages.decoder import MessageDecoder, MessageError
from kbatch.messages.schemas import SCHEMAS

KRAFT_CONTROL_MESSAGES = {"LEADER_CHANGE": "LeaderChangeMessage", "SNAPSHOT_HEADER": "SnapshotHeaderRecord",
                          "SNAPSHOT_FOOTER": "SnapshotFooterRecord", "KRAFT_VERSION": "KRaftVersionRecord",
                          "KRAFT_VOTERS": "VotersRecord"}
CONTROL_VALUE_VERSION = 0


def decode_kraft_control(control_type: str, value: bytes | None) -> tuple[dict | None, tuple[str, str] | None]:
    """(fields, None) or (None, (expected, found)) for a KRaft control record's value."""
    name = KRAFT_CONTROL_MESSAGES[control_type]
    if value is None:
        return None, (f"a {name} value", "null")
    try:
        fields, _ = MessageDecoder(SCHEMAS[name], CONTROL_VALUE_VERSION, name).decode(value)
    except MessageError as error:
        return None, (f"{name}: {error.field} {error.expected}", f"{error.actual} (byte {error.pos} of the value)")
    return fields, None


def kraft_control_spans(control_type: str, value: bytes) -> tuple[list, bool]:
    """A KRaft control record's value field by field as :func:`decode_kraft_control` reads it (version 0):
    (start, end, field, value) spans, and whether they read to the end of the value."""
    name = KRAFT_CONTROL_MESSAGES[control_type]
    spans: list = []
    try:
        _, end = MessageDecoder(SCHEMAS[name], CONTROL_VALUE_VERSION, name).decode(value, spans=spans)
    except MessageError:
        return spans, False
    return spans, end == len(value)
