"""KRaft's own rules for the records of ``__cluster_metadata`` and its ``.checkpoint`` snapshots.

Besides the metadata record itself (AbstractApiMessageSerde, :func:`.topics.decode_metadata`), KRaft's reader
refuses a record framed otherwise than it writes them: raft/.../internals/RecordsDecodingStrategy.java,
``readRecord`` (timestampDelta 0; the record's last byte, the header count, 0), ``decodeDataRecord`` (no
key; a value, not empty) and ``decodeControlRecord`` (a key and a value, neither empty), then
raft/.../ControlRecord.java ``of`` (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION and
KRAFT_VOTERS only: "Unknown control record type").  Each rule below gives the exception text Kafka throws.
"""

from __future__ import annotations

from kbatch.messages.control import KRAFT_CONTROL_MESSAGES


def _last_byte(headers) -> int:
    """The record's last byte, which readRecord takes for the header count: the count itself (0) without
    headers, else the end of the last header's value (its varint length -1 for a null one)."""
    if not headers:
        return 0
    _, value = headers[-1]
    byte = 1 if value is None else value[-1] if value else 0   # zig-zag -1 is 1, 0 is 0
    return byte - 256 if byte > 127 else byte


def record_refusal(batch, record) -> tuple[str, str, str, str] | None:
    """(field, expected, found, Kafka's exception text) of the first KRaft rule the record breaks, or None."""
    # LogAppendTime replaces the record's own timestamp: its delta is not known here
    if batch.timestamp_type == "CreateTime" and record.timestamp is not None and batch.base_timestamp is not None:
        delta = record.timestamp - batch.base_timestamp
        if delta != 0:
            return ("timestampDelta", "0", str(delta), f"Got timestamp delta of {delta}, but this is invalid "
                    "because it is not 0 as expected.")
    if batch.is_control:
        if not record.key:
            return ("key", "a control record key", "null" if record.key is None else "0 bytes",
                    "Missing key in the record when a key was expected" if record.key is None
                    else "Got an unexpected empty key in the record")
        if not record.value:
            return ("value", "a control record value", "null" if record.value is None else "0 bytes",
                    "Missing value in the record when a value was expected" if record.value is None
                    else "Got an unexpected empty value in the record")
        kind = record.control.type if record.control is not None else "UNKNOWN"
        if kind not in KRAFT_CONTROL_MESSAGES:
            return ("key.type", f"a KRaft control type ({', '.join(KRAFT_CONTROL_MESSAGES)})", kind,
                    f"Unknown control record type {kind}")
    else:
        if record.key is not None:
            return ("key", "no key", f"{len(record.key)} bytes", "Got key in the record when no key was expected")
        if not record.value:
            return ("value", "a metadata record", "null" if record.value is None else "0 bytes",
                    "Missing value in the record when a value was expected" if record.value is None
                    else "Got an unexpected empty value in the record")
    count = _last_byte(record.headers)
    if count != 0:
        return ("headers", "no headers (the record's last byte 0)", f"{len(record.headers)} headers, last byte "
                f"{count}", f"Got numHeaders of {count}, but this is invalid because it is not 0 as expected.")
    return None


class SnapshotRules:
    """A KRaft snapshot (``.checkpoint``) from its first batch to its last, fed one batch at a time.

    RecordsSnapshotReader.nextBatch refuses a snapshot whose first batch is no control batch, or whose first
    control record is no SNAPSHOT_HEADER.  The SNAPSHOT_FOOTER that RecordsSnapshotWriter.freeze appends
    last is not checked by any reader: a snapshot without one is kbatch's remark (cut short?), a warning.
    """

    def __init__(self):
        self.first, self.last = True, None

    def batch(self, batch) -> list:
        from kbatch.reading.invariants import _record_finding
        found = []
        if self.first:
            self.first = False
            records = batch.records or []
            kind = records[0].control.type if records and records[0].control is not None else None
            if not batch.is_control or not records:
                found.append(_record_finding(batch, batch.pos, batch.size, "bad-snapshot", "batch",
                                             "a control batch with a SNAPSHOT_HEADER first",
                                             "a data batch (First batch is not a control batch with at least "
                                             "one record)"))
            elif kind != "SNAPSHOT_HEADER":
                found.append(_record_finding(batch, records[0].pos, records[0].size, "bad-snapshot",
                                             "records[0].key.type", "SNAPSHOT_HEADER",
                                             f"{kind} (First control record is not a snapshot header ({kind}))"))
        self.last = batch
        return found

    def end(self) -> list:
        """At the end of the file: a warning when the last batch is no SNAPSHOT_FOOTER."""
        from kbatch.reading.invariants import _record_finding
        batch = self.last
        records = (batch.records or []) if batch is not None else []
        if batch is not None and batch.is_control and records and records[-1].control is not None \
                and records[-1].control.type == "SNAPSHOT_FOOTER":
            return []
        if batch is None:
            return []
        return [_record_finding(batch, batch.pos, batch.size, "snapshot-without-footer", "batch",
                                "a SNAPSHOT_FOOTER control record last (RecordsSnapshotWriter.freeze)",
                                "none: the snapshot may be cut short")]
