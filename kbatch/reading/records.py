"""The records of a v2 batch as kbatch hands them out: records, findings, and what --deep checks.

The decoding itself, and every rule Kafka's reader applies to a record, is
:mod:`kbatch.kernels.recordwalk` (compiled where it can be): it walks the bytes into
columns.  This module turns those columns into findings with file positions,
into :class:`~kbatch.reading.model.Record` objects where a caller wants objects, and
decodes control records.
"""

from __future__ import annotations

from kbatch.format.findings import MAX_HELD, Finding
from kbatch.reading.markers import END_TYPES
from kbatch.reading.model import NO_SEQUENCE, Batch, ControlMarker, Record, RecordChecks, increment_sequence
from kbatch.kernels.recordwalk import DEFAULT_CHUNK, RecordColumns, RecordWalker
from kbatch.format.structs import CONTROL_KEY, CONTROL_TYPES, END_TXN_VALUE, RECORD_FIELD_ORDER

# The fields the decoder reads, in order (the declaration's); a test holds the decoder to them.
FIELD_ORDER = RECORD_FIELD_ORDER


class RecordError(Exception):
    """A record that does not decode: where, which field, what was expected."""

    def __init__(self, code: str, pos: int, size: int, field: str, expected: str, actual: str):
        super().__init__(f"{field}: expected {expected}, got {actual}")
        self.code, self.pos, self.size = code, pos, size
        self.field, self.expected, self.actual = field, expected, actual


def decode_record(data, pos: int, end: int, path: str) -> tuple[dict, int]:
    """One record starting at ``pos`` (fields named as the declaration names them), and where it ends.

    Raises :class:`RecordError` when it does not decode.  ``path`` names the record in the error.
    """
    walker = RecordWalker(memoryview(data)[pos:end], 1, 0, 0)
    columns = RecordColumns(1)
    walker.fill(columns)
    # A record asked for where there are no bytes is a length varint cut short, not a batch's short count.
    damage = [("record-overrun", 0, 0, "records[0].length", "a complete varint", "0 byte(s) then the end of "
               "the record") if finding[0] == "records-count-mismatch" else finding
              for finding in walker.findings if finding[0] not in ("negative-length", "trailing-bytes")]
    if damage:
        code, at, size, field_name, expected, actual = damage[0]
        raise RecordError(code, pos + at, size, field_name.replace("records[0]", path, 1), expected, actual)
    view = memoryview(data)
    record = _field_values(columns, 0, view, pos)
    return record, pos + columns.records["pos"][0] + columns.records["size"][0]


def _bytes_at(data, pos: int, length: int) -> bytes | None:
    return None if length < 0 else bytes(data[pos:pos + length])


def _field_values(columns: RecordColumns, row: int, data, base: int) -> dict:
    """Row ``row`` of the columns as the declaration's fields (lengths as stored, bytes or None)."""
    column = columns.records
    first = column["first_header"][row]
    header = columns.headers
    headers = [(_bytes_at(data, base + header["key_pos"][h], header["key_length"][h]),
                _bytes_at(data, base + header["value_pos"][h], header["value_length"][h]))
               for h in range(first, first + column["headers_count"][row])]
    return {
        "length": column["length"][row], "attributes": column["attributes"][row],
        "timestamp_delta": column["timestamp_delta"][row], "offset_delta": column["offset_delta"][row],
        "key_length": column["key_length"][row],
        "key": _bytes_at(data, base + column["key_pos"][row], column["key_length"][row]),
        "value_length": column["value_length"][row],
        "value": _bytes_at(data, base + column["value_pos"][row], column["value_length"][row]),
        "headers_count": column["headers_count"][row], "headers": headers,
    }


def walk_batch_records(batch: Batch, data, data_pos: int, finding_pos: int, finding_size: int, *,
                       objects: bool = True, chunk: int = DEFAULT_CHUNK) -> list[Finding]:
    """Walk ``batch.count`` records in ``data``: the findings, ``batch.record_checks``, and with
    ``objects`` the records as ``batch.records``.

    ``data_pos`` is the position the records' bytes start at in the file (or
    0 inside decompressed bytes).  Records decoded before a failure are kept.
    """
    in_file = not batch.compressed

    def finding(code, at, size, field_name, expected, actual):
        if in_file:
            return Finding(code, batch.pos, data_pos + at, size, field_name, expected, actual)
        return Finding(code, batch.pos, finding_pos, finding_size, field_name, expected, actual, inner_pos=at)

    walker = RecordWalker(data, batch.count, batch.base_offset, batch.base_timestamp)
    columns = reused_columns(chunk)
    objects = objects or batch.is_control   # a control record is shown by its decoded marker
    records: list[Record] | None = [] if objects else None
    controls: list = []
    fills = 0
    while walker.fill(columns):
        fills += 1
        # Objects for the first MAX_HELD records only: a few KB of gzip can hold millions (the rest are
        # still walked and checked; JSON Lines writes them all from the columns).
        if records is not None and len(records) < MAX_HELD:   # (objects)
            records += _records(columns, batch, data, data_pos if in_file else 0)[:MAX_HELD - len(records)]
        if batch.is_control and len(controls) < MAX_HELD:
            controls += _controls(columns, data)[:MAX_HELD - len(controls)]
        if walker.done:   # (another fill would only empty the columns)
            break
    batch.records = records
    if not objects:
        batch.record_data = data
        # Every record in one chunk (nearly every batch): record_chunks reads these columns again, unless a
        # walk filled them since, rather than walking the bytes a second time.
        batch.walked_columns = (columns, columns.fills) if fills == 1 and walker.done else None
    shift = data_pos if in_file else 0
    batch.record_checks = RecordChecks(walker.decoded, walker.last_offset_delta, walker.last_offset,
                                       walker.max_timestamp,
                                       [(index, pos + shift, size, previous, offset)
                                        for index, pos, size, previous, offset in walker.order_breaks],
                                       walker.breaks_not_kept)
    findings = [finding(*found) for found in walker.findings]
    if records is not None and walker.decoded > len(records):
        findings.append(finding("not-all-kept", 0, 0, "records", f"at most {MAX_HELD} records kept per batch",
                                f"{walker.decoded} records; those after the first {len(records)} are checked, not "
                                "kept (--format jsonl lists them all)"))
    if walker.not_kept:
        findings.append(finding("not-all-kept", 0, 0, "records", f"at most {MAX_HELD} findings kept per batch",
                                f"{walker.not_kept} more; checked and counted, not listed"))
    for index, (marker, problem, pos, size) in enumerate(controls):
        if records is not None:
            records[index].control = marker
        if problem:
            findings.append(finding("bad-control-record", pos, size, f"records[{index}]", *problem))
        elif index == 0 and marker is not None and marker.type not in END_TYPES and batch.producer_id is not None \
                and batch.producer_id >= 0:
            # A producer's control batch is an end transaction marker to the broker's producer-state rebuild
            # (ProducerAppendInfo.append -> EndTransactionMarker.deserialize), which throws on any other type.
            findings.append(finding("control-not-end-marker", pos, size, f"records[{index}].type",
                                    "ABORT or COMMIT (a control batch of a producer ends its transaction)",
                                    f"{marker.type} (producer {batch.producer_id}: a broker rebuilding its "
                                    "producer state fails on it)"))
    return findings


def record_chunks(batch: Batch, chunk: int = DEFAULT_CHUNK):
    """The records of a batch walked without objects (``batch.record_data``), as columns, chunk by chunk.

    The columns are reused: read each chunk before asking for the next.
    """
    walked = batch.walked_columns
    if walked is not None and walked[0].fills == walked[1] and walked[0].capacity == chunk:
        yield walked[0]
        return
    walker = RecordWalker(batch.record_data, batch.count, batch.base_offset, batch.base_timestamp)
    columns = reused_columns(chunk)
    while walker.fill(columns):
        yield columns


def chunk_records(columns: RecordColumns, batch: Batch, rows=None) -> list[Record]:
    """The rows of a chunk from :func:`record_chunks` (those in ``rows``, if given) as Record objects."""
    return _records(columns, batch, batch.record_data, 0 if batch.compressed else batch.payload_pos, rows)


class RecordStream:
    """The records of a batch walked without objects, as Record objects made a chunk at a time.

    It stands where ``batch.records`` holds a list for a caller that only iterates (a table, dumplog's
    lines, json): memory stays one chunk, however many records a batch holds (a few KB of gzip can
    inflate to millions of 7-byte records).  Each iteration walks the bytes again.
    """

    __slots__ = ("batch",)

    def __init__(self, batch: Batch):
        self.batch = batch

    def __iter__(self):
        for columns in record_chunks(self.batch):
            yield from chunk_records(columns, self.batch)

    def __len__(self) -> int:
        assert self.batch.record_checks is not None   # a batch walked without objects has its checks
        return self.batch.record_checks.decoded

    def __bool__(self) -> bool:
        return len(self) > 0


def stream_records(batch: Batch) -> None:
    """Give a batch walked without objects its records as a :class:`RecordStream` (else leave it)."""
    if batch.records is None and batch.record_data is not None and batch.record_checks is not None:
        batch.records = RecordStream(batch)


_COLUMNS: dict[int, RecordColumns] = {}


def reused_columns(capacity: int) -> RecordColumns:
    """One set of columns per chunk size, reused batch after batch (filled, read, then filled again)."""
    columns = _COLUMNS.get(capacity)
    if columns is None:
        columns = _COLUMNS[capacity] = RecordColumns(capacity)
    return columns


def _controls(columns: RecordColumns, data) -> list:
    """(marker, problem, pos, size) of each control record in the columns."""
    column = columns.records
    out = []
    for row in range(columns.n):
        key = _bytes_at(data, column["key_pos"][row], column["key_length"][row])
        value = _bytes_at(data, column["value_pos"][row], column["value_length"][row])
        out.append((*decode_control(key, value), column["pos"][row], column["size"][row]))
    return out


def _records(columns: RecordColumns, batch: Batch, data, shift: int, rows=None) -> list[Record]:
    """The rows of ``columns`` (those in ``rows``, if given) as Record objects (positions shifted by ``shift``:
    file positions)."""
    header = columns.headers
    h_key_pos, h_key_length = header["key_pos"], header["key_length"]
    h_value_pos, h_value_length = header["value_pos"], header["value_length"]
    log_append_time = batch.timestamp_type == "LogAppendTime"
    base_sequence = batch.base_sequence if batch.base_sequence is not None else NO_SEQUENCE
    out = []
    for row, (pos, size, attributes, offset_delta, key_pos, key_length, value_pos, value_length, headers_count,
              first, offset, timestamp) in enumerate(zip(
            columns.column("pos"), columns.column("size"), columns.column("attributes"),
            columns.column("offset_delta"), columns.column("key_pos"), columns.column("key_length"),
            columns.column("value_pos"), columns.column("value_length"), columns.column("headers_count"),
            columns.column("first_header"), columns.column("offset"), columns.column("timestamp"))):
        if rows is not None and row not in rows:
            continue
        headers = [(bytes(data[h_key_pos[h]:h_key_pos[h] + h_key_length[h]]),
                    None if h_value_length[h] < 0 else bytes(data[h_value_pos[h]:h_value_pos[h] + h_value_length[h]]))
                   for h in range(first, first + headers_count)] if headers_count else []
        out.append(Record(
            offset=offset, timestamp=batch.max_timestamp if log_append_time else timestamp,
            key=None if key_length < 0 else bytes(data[key_pos:key_pos + key_length]),
            value=None if value_length < 0 else bytes(data[value_pos:value_pos + value_length]),
            headers=headers, pos=pos + shift, size=size, attributes=attributes,
            sequence=increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else NO_SEQUENCE,
        ))
    return out


def decode_control(key: bytes | None, value: bytes | None) -> tuple[ControlMarker | None, tuple[str, str] | None]:
    """ControlRecordType.parse + EndTransactionMarker.deserializeValue, or ControlRecordUtils for KRaft's types.

    A negative key or value version is corruption to Kafka (both throw InvalidRecordException "Invalid
    version found ..."); a higher one is read as version 0 (ControlRecordType.parseTypeId logs it at debug).
    """
    if key is None or len(key) < CONTROL_KEY.size:
        return None, ("a key of version int16 + type int16", f"{'null' if key is None else len(key)} key bytes")
    key_version, type_id = CONTROL_KEY.unpack_from(key)
    marker = ControlMarker(key_version, type_id, CONTROL_TYPES.get(type_id, f"UNKNOWN({type_id})"))
    if key_version < 0:
        return marker, ("a key version >= 0", f"{key_version} (Kafka: invalid version, data corruption)")
    if marker.type in ("ABORT", "COMMIT"):
        if value is None or len(value) < END_TXN_VALUE.size:
            return marker, ("a value of version int16 + coordinatorEpoch int32",
                            f"{'null' if value is None else len(value)} value bytes")
        value_version, marker.coordinator_epoch = END_TXN_VALUE.unpack_from(value)
        marker.value_version = value_version
        if value_version < 0:
            return marker, ("an end transaction marker value version >= 0",
                            f"{value_version} (Kafka: invalid version, data corruption)")
    else:   # KRaft's values are Kafka messages, read with the schemas (loaded only for such a record)
        from kbatch.messages.control import KRAFT_CONTROL_MESSAGES, decode_kraft_control

        if marker.type in KRAFT_CONTROL_MESSAGES:
            marker.data, problem = decode_kraft_control(marker.type, value)
            return marker, problem
    return marker, None
