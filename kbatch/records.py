"""Decoding the records of a v2 batch (DefaultRecord.readFrom), fast.

construct's parser, driven by :data:`kbatch.layouts.Record`, is the reference
decoder; it is also ~20x slower than this one, which is what a 1 GiB segment
needs.  The field order here is the declaration's, and the tests hold the two
to the same results on every fixture and on random records
(``tests/test_records.py``), so this is a checked copy, not a second truth.

Validation follows Kafka's reader: a record's length must hold its fields
exactly, a header key length is never negative, a header count is never
negative, varints stop at 5 bytes (varlongs at 10).  Kafka reads any negative
key or value length as null (Utils.readBytes), so do we, with a warning when it
is not -1.
"""

from __future__ import annotations

from .findings import Finding
from .messages.control import KRAFT_CONTROL_MESSAGES, decode_kraft_control
from .layouts import CONTROL_KEY, CONTROL_TYPES, END_TXN_VALUE, Record as RecordLayout
from .model import NO_SEQUENCE, Batch, ControlMarker, Record, increment_sequence

# The fields this decoder reads, in order; a test compares them with the declaration.
FIELD_ORDER = tuple(field.name for field in RecordLayout.subcons)


class RecordError(Exception):
    """A record that does not decode: where, which field, what was expected."""

    def __init__(self, code: str, pos: int, size: int, field: str, expected: str, actual: str):
        super().__init__(f"{field}: expected {expected}, got {actual}")
        self.code, self.pos, self.size = code, pos, size
        self.field, self.expected, self.actual = field, expected, actual


def read_varint(data, pos: int, end: int, path: str, name: str, max_bytes: int = 5,
                bits: int = 32) -> tuple[int, int]:
    """ByteUtils.readVarint/readVarlong: a zig-zag varint of at most ``max_bytes`` bytes.

    The field's name is ``path`` + "." + ``name``, put together only when it is needed for a finding.
    """
    if pos < end and data[pos] < 0x80:   # most varints in a record are one byte
        byte = data[pos]
        return (byte >> 1) ^ -(byte & 1), pos + 1
    raw = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise RecordError("record-overrun", start, pos - start, f"{path}.{name}",
                              "a complete varint", f"{pos - start} byte(s) then the end of the record")
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            raw &= (1 << bits) - 1
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if pos - start >= max_bytes:
            raise RecordError("varint-overflow", start, pos - start, f"{path}.{name}",
                              f"at most {max_bytes} varint bytes", f"a continuation bit on byte {max_bytes}")


def _read_bytes(data, pos: int, end: int, length: int, path: str, name: str,
                length_pos: int) -> tuple[bytes | None, int]:
    if length < 0:
        return None, pos
    if pos + length > end:
        raise RecordError("record-overrun", length_pos, end - length_pos, f"{path}.{name}",
                          f"{length} bytes", f"{end - pos} bytes left in the record")
    return bytes(data[pos:pos + length]), pos + length


def decode_record(data, pos: int, end: int, path: str) -> tuple[dict, int]:
    """One record starting at ``pos``; ``end`` is where the batch's records end."""
    start = pos
    length, pos = read_varint(data, pos, end, path, "length")
    if length < 0 or pos + length > end:
        raise RecordError("bad-record-length", start, pos - start, f"{path}.length",
                          f"0..{end - pos} (bytes left in the batch)", str(length))
    record_end = pos + length
    if pos >= record_end:
        raise RecordError("record-overrun", pos, 0, f"{path}.attributes", "1 byte", "0 bytes left in the record")
    attributes = data[pos]
    attributes = attributes - 256 if attributes > 127 else attributes
    pos += 1
    timestamp_delta, pos = read_varint(data, pos, record_end, path, "timestamp_delta", 10, 64)
    offset_delta, pos = read_varint(data, pos, record_end, path, "offset_delta")
    key_length_pos = pos
    key_length, pos = read_varint(data, pos, record_end, path, "key_length")
    key, pos = _read_bytes(data, pos, record_end, key_length, path, "key", key_length_pos)
    value_length_pos = pos
    value_length, pos = read_varint(data, pos, record_end, path, "value_length")
    value, pos = _read_bytes(data, pos, record_end, value_length, path, "value", value_length_pos)
    headers_pos = pos
    headers_count, pos = read_varint(data, pos, record_end, path, "headers_count")
    if headers_count < 0:
        raise RecordError("bad-length", headers_pos, pos - headers_pos, f"{path}.headers_count",
                          "a count >= 0", str(headers_count))
    headers = []
    for index in range(headers_count):
        header_path = f"{path}.headers[{index}]"
        header_key_pos = pos
        header_key_length, pos = read_varint(data, pos, record_end, header_path, "key_length")
        if header_key_length < 0:
            raise RecordError("bad-length", header_key_pos, pos - header_key_pos, f"{header_path}.key_length",
                              "a length >= 0 (header keys are never null)", str(header_key_length))
        header_key, pos = _read_bytes(data, pos, record_end, header_key_length, header_path, "key",
                                      header_key_pos)
        header_value_pos = pos
        header_value_length, pos = read_varint(data, pos, record_end, header_path, "value_length")
        header_value, pos = _read_bytes(data, pos, record_end, header_value_length, header_path, "value",
                                        header_value_pos)
        headers.append((header_key, header_value))
    if pos != record_end:
        raise RecordError("bad-record-length", start, record_end - start, f"{path}.length",
                          f"{pos - (record_end - length)} bytes (what the fields use)", str(length))
    fields = {
        "length": length, "attributes": attributes, "timestamp_delta": timestamp_delta,
        "offset_delta": offset_delta, "key_length": key_length, "key": key,
        "value_length": value_length, "value": value, "headers_count": headers_count, "headers": headers,
    }
    return fields, record_end


def decode_batch_records(batch: Batch, data, data_pos: int, finding_pos: int, finding_size: int) -> list[Finding]:
    """Decode ``batch.records_count`` records from ``data`` into ``batch.records``.

    ``data_pos`` is the position the records' bytes start at in the file (or
    0 inside decompressed bytes).  Returns the findings; records decoded before
    a failure are kept.
    """
    in_file = not batch.compressed
    findings: list[Finding] = []
    records: list[Record] = []
    batch.records = records
    end = len(data)
    pos = 0
    log_append_time = batch.timestamp_type == "LogAppendTime"

    def finding(code, at, size, field, expected, actual):
        if in_file:
            return Finding(code, batch.pos, data_pos + at, size, field, expected, actual)
        return Finding(code, batch.pos, finding_pos, finding_size, field, expected, actual, inner_pos=at)

    count = batch.count
    if count < 0:
        findings.append(finding("records-count-mismatch", 0, 0, "records_count", "a count >= 0", str(count)))
        count = 0
    for index in range(count):
        if pos >= end:
            findings.append(finding("records-count-mismatch", pos, 0, "records_count",
                                    f"{count} records", f"{index} records, then the end of the batch"))
            break
        try:
            fields, next_pos = decode_record(data, pos, end, f"records[{index}]")
        except RecordError as error:
            findings.append(finding(error.code, error.pos, error.size, error.field, error.expected, error.actual))
            return findings
        sequence = NO_SEQUENCE
        if batch.base_sequence is not None and batch.base_sequence >= 0:
            sequence = increment_sequence(batch.base_sequence, fields["offset_delta"])
        for name in ("key_length", "value_length"):
            if fields[name] < -1:
                findings.append(finding("negative-length", pos, next_pos - pos, f"records[{index}].{name}",
                                        "-1 (null) or a length >= 0", f"{fields[name]} (Kafka reads it as null)"))
        record = Record(
            offset=batch.base_offset + fields["offset_delta"],
            timestamp=batch.max_timestamp if log_append_time else batch.base_timestamp + fields["timestamp_delta"],
            key=fields["key"], value=fields["value"], headers=fields["headers"],
            pos=(data_pos + pos) if in_file else pos, size=next_pos - pos,
            attributes=fields["attributes"], sequence=sequence,
        )
        if batch.is_control:
            record.control, problem = decode_control(record.key, record.value)
            if problem:
                findings.append(finding("bad-control-record", pos, next_pos - pos, f"records[{index}]",
                                        problem[0], problem[1]))
        records.append(record)
        pos = next_pos
    if pos < end and len(records) == count:
        findings.append(finding("trailing-bytes", pos, end - pos, f"records[{count}:]",
                                f"{count} records and nothing after them", f"{end - pos} more bytes"))
    return findings


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
        marker.value_version, marker.coordinator_epoch = END_TXN_VALUE.unpack_from(value)
        if marker.value_version < 0:
            return marker, ("an end transaction marker value version >= 0",
                            f"{marker.value_version} (Kafka: invalid version, data corruption)")
    elif marker.type in KRAFT_CONTROL_MESSAGES:
        marker.data, problem = decode_kraft_control(marker.type, value)
        return marker, problem
    return marker, None
