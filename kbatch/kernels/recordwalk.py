"""The records of a v2 batch, walked into columns (DefaultRecord.readFrom): the one record decoder.

Every rule Kafka's reader applies to a record is written here once:
a record's length must hold its fields exactly, a header key length is never
negative, a header count is never negative, varints stop at 5 bytes (varlongs
at 10), and a negative key or value length reads as null (Utils.readBytes),
with a warning when it is not -1.  The field order is the declaration's
(:data:`kbatch.format.layouts.Record`); ``tests/test_records.py`` holds the two to the
same results on every fixture and on random records.

The walk produces columns, not an object per record: one array per field
(positions, lengths, deltas, absolute offsets and timestamps), filled a chunk
of records at a time, so memory is bounded by the chunk whatever a batch's
recordsCount says.  Offsets and timestamps are added as Java adds longs
(DefaultRecord.readFrom: ``baseOffset + offsetDelta``, ``baseTimestamp +
timestampDelta``): wrapped to 64 bits, with a ``long-overflow`` finding.

The rules of the batch around the records are here too, once, on plain values
(attributes, producer fields, lastOffsetDelta, maxTimestamp, the offset order,
a segment's range): kbatch.reading.invariants words its findings from them, and
:class:`CleanBatches`, ``verify-crc --deep``'s fast pass, runs them with the
walk in one compiled loop.  Below those, the JSON Lines writer of records.

This file is compiled by Cython at install where a C compiler is found (its
pure-Python mode: the annotations are C types) and runs as plain Python
otherwise; ``tests/test_recordwalk.py`` proves both give the same columns and
answers, ``tests/test_fastdeep.py`` the same fast pass.
"""

from __future__ import annotations

import struct
from array import array

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

if cython.compiled:
    from cython.cimports.libc.string import memcpy

from kbatch.format.findings import MAX_HELD
from kbatch.format.structs import (
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

# A record takes at least 7 bytes (7 one-byte fields), a header at least 2: no batch can hold more
# records than its bytes / 7, whatever recordsCount claims.
MIN_RECORD_SIZE = 7
DEFAULT_CHUNK = 16384

RECORD_COLUMNS = ("pos", "size", "length", "attributes", "timestamp_delta", "offset_delta", "key_pos", "key_length",
                  "value_pos", "value_length", "headers_count", "first_header", "offset", "timestamp")
HEADER_COLUMNS = ("key_pos", "key_length", "value_pos", "value_length")

_LONG_MIN = -(2**63)
_LONG_SPAN = 2**64


def is_compiled() -> bool:
    return cython.compiled


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
def _java_add(a: cython.longlong, b: cython.longlong) -> cython.longlong:
    """``a + b`` as Java adds two longs: wrapped to 64 bits."""
    if cython.compiled:
        return cython.cast(cython.longlong, cython.cast(cython.ulonglong, a) + cython.cast(cython.ulonglong, b))
    return (a + b - _LONG_MIN) % _LONG_SPAN + _LONG_MIN


@cython.final
@cython.cclass
class RecordColumns:
    """Up to ``capacity`` records, one array per field (``RECORD_COLUMNS``; headers in ``HEADER_COLUMNS``).

    Row ``i`` of every record column is record ``i`` of the chunk; its headers are rows
    ``first_header[i]`` .. ``first_header[i] + headers_count[i]`` of the header columns.  Positions are
    inside the bytes walked.  A key or value whose length is negative is null.
    """

    capacity = cython.declare(cython.Py_ssize_t, visibility="readonly")
    header_capacity: cython.Py_ssize_t
    n = cython.declare(cython.Py_ssize_t, visibility="readonly")        # records held
    n_headers = cython.declare(cython.Py_ssize_t, visibility="readonly")
    first_index = cython.declare(cython.Py_ssize_t, visibility="readonly")  # the batch index of row 0
    fills = cython.declare(cython.Py_ssize_t, visibility="readonly")   # how often a walk filled them
    records = cython.declare(dict, visibility="readonly")    # name -> array('q')
    headers = cython.declare(dict, visibility="readonly")
    _pos: cython.longlong[::1]
    _size: cython.longlong[::1]
    _length: cython.longlong[::1]
    _attributes: cython.longlong[::1]
    _timestamp_delta: cython.longlong[::1]
    _offset_delta: cython.longlong[::1]
    _key_pos: cython.longlong[::1]
    _key_length: cython.longlong[::1]
    _value_pos: cython.longlong[::1]
    _value_length: cython.longlong[::1]
    _headers_count: cython.longlong[::1]
    _first_header: cython.longlong[::1]
    _offset: cython.longlong[::1]
    _timestamp: cython.longlong[::1]
    _h_key_pos: cython.longlong[::1]
    _h_key_length: cython.longlong[::1]
    _h_value_pos: cython.longlong[::1]
    _h_value_length: cython.longlong[::1]

    def __init__(self, capacity: cython.Py_ssize_t = DEFAULT_CHUNK, header_capacity: cython.Py_ssize_t = -1):
        self.capacity = max(capacity, 1)
        self.n = 0
        self.n_headers = 0
        self.first_index = 0
        self.fills = 0
        self.records = {name: array("q", bytes(8 * self.capacity)) for name in RECORD_COLUMNS}
        self._bind_records()
        self._grow_headers(header_capacity if header_capacity > 0 else self.capacity)

    def _bind_records(self):
        columns = self.records
        self._pos, self._size, self._length = columns["pos"], columns["size"], columns["length"]
        self._attributes, self._timestamp_delta = columns["attributes"], columns["timestamp_delta"]
        self._offset_delta, self._key_pos = columns["offset_delta"], columns["key_pos"]
        self._key_length, self._value_pos = columns["key_length"], columns["value_pos"]
        self._value_length, self._headers_count = columns["value_length"], columns["headers_count"]
        self._first_header, self._offset = columns["first_header"], columns["offset"]
        self._timestamp = columns["timestamp"]

    def _grow_headers(self, capacity: cython.Py_ssize_t):
        self.header_capacity = capacity
        self.headers = {name: array("q", bytes(8 * capacity)) for name in HEADER_COLUMNS}
        columns = self.headers
        self._h_key_pos, self._h_key_length = columns["key_pos"], columns["key_length"]
        self._h_value_pos, self._h_value_length = columns["value_pos"], columns["value_length"]

    def column(self, name: str):
        """A record column cut to the records held (a memoryview of int64)."""
        return memoryview(self.records[name])[:self.n]

    def header_column(self, name: str):
        return memoryview(self.headers[name])[:self.n_headers]


@cython.final
@cython.cclass
class RecordWalker:
    """Walks ``count`` records in ``data`` (a batch's records, decompressed), a chunk at a time.

    ``fill(columns)`` decodes the next records into ``columns`` and returns how many (0 at the end).
    What it finds goes to ``findings`` as tuples (code, pos, size, field, expected, actual), positions
    inside ``data``; a record that does not decode ends the walk.  However many records a batch holds,
    only the first MAX_HELD findings (and order breaks) are kept: ``not_kept`` (``breaks_not_kept``)
    counts the rest.  Along the way it keeps what
    ``verify-crc --deep`` checks: ``decoded``, ``max_timestamp``, ``last_offset_delta``, ``last_offset`` and
    ``order_breaks`` (index, pos, size, previous offset, offset) where offsets do not strictly increase.
    """

    _data: cython.const[cython.uchar][::1]
    _source: object             # the object _data holds the buffer of
    _end: cython.Py_ssize_t
    _pos: cython.Py_ssize_t
    _count: cython.Py_ssize_t
    _base_offset: cython.longlong
    _base_timestamp: cython.longlong
    _value: cython.longlong     # what the last _varint call read ...
    _next: cython.Py_ssize_t    # ... and where the bytes after it start
    done = cython.declare(cython.bint, visibility="readonly")
    decoded = cython.declare(cython.Py_ssize_t, visibility="readonly")
    max_timestamp = cython.declare(cython.longlong, visibility="readonly")
    last_offset_delta = cython.declare(cython.longlong, visibility="readonly")
    last_offset = cython.declare(cython.longlong, visibility="readonly")   # the last record's (Java's long)
    findings = cython.declare(list, visibility="readonly")
    order_breaks = cython.declare(list, visibility="readonly")
    not_kept = cython.declare(cython.Py_ssize_t, visibility="readonly")          # findings past MAX_HELD
    breaks_not_kept = cython.declare(cython.Py_ssize_t, visibility="readonly")   # order breaks past MAX_HELD

    def __init__(self, data, count: cython.longlong, base_offset: cython.longlong,
                 base_timestamp: cython.longlong, start: cython.Py_ssize_t = 0, end: cython.Py_ssize_t = -1):
        self.findings = []
        self.order_breaks = []
        self._source = None
        self.reset(data, count, base_offset, base_timestamp, start, end)

    @cython.ccall
    def reset(self, data, count: cython.longlong, base_offset: cython.longlong, base_timestamp: cython.longlong,
              start: cython.Py_ssize_t = 0, end: cython.Py_ssize_t = -1):
        """Walk another batch's records (arguments as the constructor's) with this walker, as new: a run over
        many small batches spares a walker and its two lists each.

        The records are ``data[start:end]`` (``end`` -1: to the end of ``data``), and positions are
        ``data``'s: a run over the batches of one buffer passes the buffer each time, and the walker takes
        hold of its bytes once (more than a record walk of a small batch takes).
        """
        if data is not self._source:
            self._data = data
            self._source = data
        self._end = len(data) if end < 0 else min(end, len(data))
        self._pos = min(max(start, 0), self._end)
        if self.findings:   # a new list: whoever read the last batch's may still hold it
            self.findings = []
        if self.order_breaks:
            self.order_breaks = []
        self.not_kept = 0
        self.breaks_not_kept = 0
        self.decoded = 0
        self.done = False
        self.max_timestamp = 0
        self.last_offset_delta = 0
        self.last_offset = 0
        self._base_offset = base_offset
        self._base_timestamp = base_timestamp
        self._value = 0
        self._next = 0
        if count < 0:
            self.findings.append(("records-count-mismatch", self._pos, 0, "records_count", "a count >= 0", str(count)))
            count = 0
        self._count = count

    @cython.ccall
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.initializedcheck(False)   # every column is bound from the start (RecordColumns.__init__)
    def fill(self, columns: RecordColumns) -> cython.Py_ssize_t:
        data: cython.const[cython.uchar][::1] = self._data
        end: cython.Py_ssize_t = self._end
        pos: cython.Py_ssize_t = self._pos
        n: cython.Py_ssize_t = 0
        h: cython.Py_ssize_t = 0               # header rows filled ...
        h_done: cython.Py_ssize_t = 0          # ... of which belong to whole records
        index: cython.Py_ssize_t
        start: cython.Py_ssize_t
        record_end: cython.Py_ssize_t
        length: cython.longlong
        attributes: cython.longlong
        timestamp_delta: cython.longlong
        offset_delta: cython.longlong
        key_length: cython.longlong
        value_length: cython.longlong
        headers_count: cython.longlong
        header: cython.longlong
        room: cython.longlong
        offset: cython.longlong
        timestamp: cython.longlong
        field_pos: cython.Py_ssize_t
        columns.first_index = self.decoded
        columns.n = 0
        columns.n_headers = 0
        columns.fills += 1
        while not self.done and n < columns.capacity:
            index = self.decoded
            if index >= self._count:
                if pos < end:
                    self._finding("trailing-bytes", pos, end - pos, f"records[{self._count}:]",
                                  f"{self._count} records and nothing after them", f"{end - pos} more bytes")
                self.done = True
                break
            if pos >= end:
                self._finding("records-count-mismatch", pos, 0, "records_count", f"{self._count} records",
                              f"{index} records, then the end of the batch")
                self.done = True
                break
            start = pos
            if not self._varint(pos, end, 5, index, -1, "length"):
                break
            length = self._value
            pos = self._next
            if length < 0 or length > end - pos:
                self._fail("bad-record-length", start, pos - start, index, -1, "length",
                           f"0..{end - pos} (bytes left in the batch)", str(length))
                break
            record_end = pos + length
            if pos >= record_end:
                self._fail("record-overrun", pos, 0, index, -1, "attributes", "1 byte", "0 bytes left in the record")
                break
            attributes = data[pos]
            if attributes > 127:
                attributes -= 256
            pos += 1
            if not self._varint(pos, record_end, 10, index, -1, "timestamp_delta"):
                break
            timestamp_delta = self._value
            if not self._varint(self._next, record_end, 5, index, -1, "offset_delta"):
                break
            offset_delta = self._value
            field_pos = self._next
            if not self._varint(field_pos, record_end, 5, index, -1, "key_length"):
                break
            key_length = self._value
            columns._key_pos[n] = self._next
            columns._key_length[n] = key_length
            if not self._skip_bytes(field_pos, self._next, record_end, key_length, index, -1, "key"):
                break
            field_pos = self._next
            if not self._varint(field_pos, record_end, 5, index, -1, "value_length"):
                break
            value_length = self._value
            columns._value_pos[n] = self._next
            columns._value_length[n] = value_length
            if not self._skip_bytes(field_pos, self._next, record_end, value_length, index, -1, "value"):
                break
            field_pos = self._next
            if not self._varint(field_pos, record_end, 5, index, -1, "headers_count"):
                break
            headers_count = self._value
            pos = self._next
            if headers_count < 0:
                self._fail("bad-length", field_pos, pos - field_pos, index, -1, "headers_count", "a count >= 0",
                           str(headers_count))
                break
            # Room for every header the record's bytes could hold (a header takes 2 bytes at least).
            room = min(headers_count, (record_end - pos) // 2 + 1)
            if h + room > columns.header_capacity:
                if n == 0:   # one record with more headers than there is room for: make room, read it again
                    columns._grow_headers(max(2 * columns.header_capacity, room))
                    pos = start
                    continue
                pos = start  # the record starts the next chunk
                break
            columns._first_header[n] = h
            header = 0
            while header < headers_count:
                field_pos = pos
                if not self._varint(pos, record_end, 5, index, header, "key_length"):
                    break
                if self._value < 0:
                    self._fail("bad-length", field_pos, self._next - field_pos, index, header, "key_length",
                               "a length >= 0 (header keys are never null)", str(self._value))
                    break
                columns._h_key_pos[h] = self._next
                columns._h_key_length[h] = self._value
                if not self._skip_bytes(field_pos, self._next, record_end, self._value, index, header, "key"):
                    break
                field_pos = self._next
                if not self._varint(field_pos, record_end, 5, index, header, "value_length"):
                    break
                columns._h_value_pos[h] = self._next
                columns._h_value_length[h] = self._value
                if not self._skip_bytes(field_pos, self._next, record_end, self._value, index, header, "value"):
                    break
                pos = self._next
                h += 1
                header += 1
            if self.done:
                break
            if pos != record_end:
                self._fail("bad-record-length", start, record_end - start, index, -1, "length",
                           f"{pos - (record_end - length)} bytes (what the fields use)", str(length))
                break
            if key_length < -1:
                self._negative_length(start, record_end - start, index, "key_length", key_length)
            if value_length < -1:
                self._negative_length(start, record_end - start, index, "value_length", value_length)
            offset = _java_add(self._base_offset, offset_delta)
            timestamp = _java_add(self._base_timestamp, timestamp_delta)
            if (offset < self._base_offset) != (offset_delta < 0):
                self._overflow(start, record_end - start, index, "offset_delta", "baseOffset + offsetDelta",
                               self._base_offset, offset_delta, offset)
            if (timestamp < self._base_timestamp) != (timestamp_delta < 0):
                self._overflow(start, record_end - start, index, "timestamp_delta",
                               "baseTimestamp + timestampDelta", self._base_timestamp, timestamp_delta, timestamp)
            if index == 0 or timestamp > self.max_timestamp:
                self.max_timestamp = timestamp
            if index > 0 and offset <= self.last_offset:
                if len(self.order_breaks) < MAX_HELD:
                    self.order_breaks.append((index, start, record_end - start, self.last_offset, offset))
                else:
                    self.breaks_not_kept += 1
            self.last_offset = offset
            self.last_offset_delta = offset_delta
            columns._pos[n] = start
            columns._size[n] = record_end - start
            columns._length[n] = length
            columns._attributes[n] = attributes
            columns._timestamp_delta[n] = timestamp_delta
            columns._offset_delta[n] = offset_delta
            columns._headers_count[n] = headers_count
            columns._offset[n] = offset
            columns._timestamp[n] = timestamp
            n += 1
            h_done = h
            self.decoded = index + 1
            pos = record_end
        self._pos = pos
        columns.n = n
        columns.n_headers = h_done
        return n

    # The helpers below never raise (a finding is data), so calls skip the exception check.  Compiled, the
    # common case of each (a varint of one byte, bytes that fit) is inlined into fill; the rest, and the
    # words of a finding, are calls of their own, which keeps the inlined part small.
    @cython.cfunc
    @cython.inline
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.initializedcheck(False)
    def _varint(self, pos: cython.Py_ssize_t, end: cython.Py_ssize_t, max_bytes: cython.int,
                index: cython.Py_ssize_t, header: cython.longlong, name: str) -> cython.bint:
        """ByteUtils.readVarint (max_bytes 5) / readVarlong (10): a zig-zag varint into _value, _next."""
        byte: cython.ulonglong
        if pos < end and self._data[pos] < 0x80:   # most varints in a record are one byte
            byte = self._data[pos]
            self._value = cython.cast(cython.longlong, byte >> 1) ^ -cython.cast(cython.longlong, byte & 1)
            self._next = pos + 1
            return True
        return self._long_varint(pos, end, max_bytes, index, header, name)

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.initializedcheck(False)
    def _long_varint(self, pos: cython.Py_ssize_t, end: cython.Py_ssize_t, max_bytes: cython.int,
                     index: cython.Py_ssize_t, header: cython.longlong, name: str) -> cython.bint:
        """_varint of more than one byte, or none: the bytes up to the first without a continuation bit."""
        raw: cython.ulonglong = 0
        shift: cython.int = 0
        width: cython.int = 32 if max_bytes == 5 else 64
        byte: cython.ulonglong
        start: cython.Py_ssize_t = pos
        while pos < end:
            byte = self._data[pos] & 0x7F
            if shift + 7 > width:   # Java's int (long) drops what the last byte shifts past bit 31 (63)
                byte &= (1 << (width - shift)) - 1
            raw |= byte << shift
            if not self._data[pos] & 0x80:
                self._value = cython.cast(cython.longlong, raw >> 1) ^ -cython.cast(cython.longlong, raw & 1)
                self._next = pos + 1
                return True
            pos += 1
            shift += 7
            if pos - start >= max_bytes:
                self._fail("varint-overflow", start, pos - start, index, header, name,
                           f"at most {max_bytes} varint bytes", f"a continuation bit on byte {max_bytes}")
                return False
        self._fail("record-overrun", start, pos - start, index, header, name, "a complete varint",
                   f"{pos - start} byte(s) then the end of the record")
        return False

    @cython.cfunc
    @cython.inline
    @cython.exceptval(check=False)
    def _skip_bytes(self, length_pos: cython.Py_ssize_t, pos: cython.Py_ssize_t, end: cython.Py_ssize_t,
                    length: cython.longlong, index: cython.Py_ssize_t, header: cython.longlong,
                    name: str) -> cython.bint:
        """Utils.readBytes: ``length`` bytes at ``pos`` (none when negative: null); their end into _next."""
        if length < 0:
            self._next = pos
            return True
        if length > end - pos:
            return self._overrun(length_pos, pos, end, length, index, header, name)
        self._next = pos + length
        return True

    @cython.cfunc
    @cython.exceptval(check=False)
    def _overrun(self, length_pos: cython.Py_ssize_t, pos: cython.Py_ssize_t, end: cython.Py_ssize_t,
                 length: cython.longlong, index: cython.Py_ssize_t, header: cython.longlong,
                 name: str) -> cython.bint:
        """_skip_bytes's finding: the bytes a length claims run past the record."""
        self._fail("record-overrun", length_pos, end - length_pos, index, header, name, f"{length} bytes",
                   f"{end - pos} bytes left in the record")
        return False

    def _finding(self, code, pos, size, field, expected, actual):
        if len(self.findings) < MAX_HELD:
            self.findings.append((code, pos, size, field, expected, actual))
        else:
            self.not_kept += 1

    def _fail(self, code, pos, size, index, header, name, expected, actual):
        """A record that does not decode: the finding (always kept), and the end of the walk."""
        self.findings.append((code, pos, size, _field(index, header, name), expected, actual))
        self.done = True

    def _negative_length(self, pos, size, index, name, length):
        self._finding("negative-length", pos, size, _field(index, -1, name), "-1 (null) or a length >= 0",
                      f"{length} (Kafka reads it as null)")

    def _overflow(self, pos, size, index, name, sum_text, base, delta, wrapped):
        self._finding("long-overflow", pos, size, _field(index, -1, name),
                      f"{sum_text} within Java's long range", f"{base} + {delta} = {base + delta}, "
                      f"which Java wraps to {wrapped}")


def _field(index, header, name) -> str:
    if header >= 0:
        return f"records[{index}].headers[{header}].{name}"
    return f"records[{index}].{name}"


# -- JSON Lines at the decoder's speed ------------------------------------------------------------
#
# What the records of one chunk look like in ``dump --format jsonl``: exactly what json.dumps (default
# separators, ensure_ascii=False) writes for kbatch.output.jsonout.record_dict of each record, without a
# dict per record.  Keys and values are written here only in the two cases whose JSON is plain: hex
# (``--decode hex``) and printable ASCII under the text modes ({"utf8": ...}, escaping only " and \);
# every other value is handed to ``other`` (jsonout's own rule), so how bytes read as JSON stays there.
# tests/test_recordwalk.py holds this to json.dumps(record_dict(...)) on every fixture and random records.

_JSON_FIELDS = (b'{"offset": ', b', "timestamp": ', b', "key": ', b', "value": ', b', "headers": [',
                b'], "pos": ', b', "inner_pos": ', b', "size": ', b', "attributes": ', b', "sequence": ',
                b', "crc": null, "crc_valid": null, "control": null}', b'{"key": ', b', "value": ', b'}',
                b', ', b'null', b'{"hex": "', b'{"utf8": "', b'"}', b', "timestamp_iso": ',
                b'true', b'false', b'"')
# The keys of a batch's line (batch_json), in kbatch.output.jsonout.batch_dict's order: jsonout checks them.
BATCH_JSON_KEYS = ("type", "pos", "size", "magic", "base_offset", "last_offset", "stored_offset", "count",
                   "batch_length", "partition_leader_epoch", "crc", "crc_computed", "crc_valid", "attributes",
                   "codec", "timestamp_type", "is_transactional", "is_control", "last_offset_delta",
                   "base_timestamp", "base_timestamp_iso", "max_timestamp", "max_timestamp_iso",
                   "delete_horizon_ms", "producer_id", "producer_epoch", "base_sequence", "last_sequence",
                   "payload_pos", "payload_size", "decompressed_size", "findings")
_JSON_FIELDS += tuple(f'{", " if index else ""}"{key}": '.encode() for index, key in enumerate(BATCH_JSON_KEYS))
_JSON_PARTS = b"".join(_JSON_FIELDS)
_JSON_AT = tuple(sum(len(part) for part in _JSON_FIELDS[:index]) for index in range(len(_JSON_FIELDS)))
# Which of _JSON_FIELDS (C constants when compiled: a Python global would be looked up on every use).
_OFFSET = cython.declare(cython.int, 0)
_TIMESTAMP = cython.declare(cython.int, 1)
_KEY = cython.declare(cython.int, 2)
_VALUE = cython.declare(cython.int, 3)
_HEADERS = cython.declare(cython.int, 4)
_POS = cython.declare(cython.int, 5)
_INNER_POS = cython.declare(cython.int, 6)
_SIZE = cython.declare(cython.int, 7)
_ATTRIBUTES = cython.declare(cython.int, 8)
_SEQUENCE = cython.declare(cython.int, 9)
_END = cython.declare(cython.int, 10)
_HEADER_KEY = cython.declare(cython.int, 11)
_HEADER_VALUE = cython.declare(cython.int, 12)
_HEADER_END = cython.declare(cython.int, 13)
_COMMA = cython.declare(cython.int, 14)
_NULL = cython.declare(cython.int, 15)
_HEX = cython.declare(cython.int, 16)
_UTF8 = cython.declare(cython.int, 17)
_QUOTE_END = cython.declare(cython.int, 18)
_TIMESTAMP_ISO = cython.declare(cython.int, 19)
_TRUE = cython.declare(cython.int, 20)
_FALSE = cython.declare(cython.int, 21)
_QUOTE = cython.declare(cython.int, 22)
_BATCH_KEY = cython.declare(cython.int, 23)   # BATCH_JSON_KEYS[i] is part _BATCH_KEY + i
_PARTS = cython.declare(cython.int, 55)       # how many parts there are (the writer's arrays are that long)
assert len(_JSON_FIELDS) == _PARTS and _JSON_FIELDS[_BATCH_KEY] == b'"type": '
JSON_OTHER = 0   # records_json's modes (Python values: callers pass them)
JSON_HEX = 1
JSON_TEXT = 2
_INT_MAX = cython.declare(cython.longlong, 2**31 - 1)
# The last millisecond with a four-digit year (9999-12-31T23:59:59.999Z): kbatch.output.values.ISO_MAX_MS.
_ISO_MAX_MS = cython.declare(cython.longlong, 253402300799999)
_HEX_DIGITS = b"0123456789abcdef"
_DIGIT_PAIRS = b"".join(b"%02d" % number for number in range(100))   # "00" "01" ... "99"
_NOT_TEXT = cython.declare(cython.int, 0)   # what _plain_text finds
_TEXT = cython.declare(cython.int, 1)
_ESCAPED_TEXT = cython.declare(cython.int, 2)
# Eight bytes at a time (compiled): a word's bytes each hold 0x01 (0x20, ...), and bit 7 of each byte.
_ONES = cython.declare(cython.ulonglong, 0x0101010101010101)
_HIGH_BITS = cython.declare(cython.ulonglong, 0x8080808080808080)


NO_SEQUENCE = -1   # a batch's baseSequence (a record's sequence) when the producer is not idempotent


def last_sequence(base_sequence, last_offset_delta):
    """DefaultRecordBatch.lastSequence: only -1 means 'no sequence'; it counts lastOffsetDelta on."""
    if base_sequence is None or base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    return increment_sequence(base_sequence, last_offset_delta)


@cython.ccall
@cython.exceptval(check=False)
def increment_sequence(sequence: cython.longlong, increment: cython.longlong) -> cython.longlong:
    """DefaultRecordBatch.incrementSequence: producer sequences wrap from Integer.MAX_VALUE to 0."""
    if sequence > _INT_MAX - increment:
        return increment - (_INT_MAX - sequence) - 1
    return sequence + increment


# -- The rules of a v2 batch, on plain values ---------------------------------------------------------
#
# What Kafka holds a v2 batch to beyond its framing and CRC, one function a rule: DefaultRecordBatch
# (attributes, producer fields, lastOffsetDelta, maxTimestamp), the log's own order
# (Log.analyzeAndValidateRecords: offsets only go up) and a segment's range (LogSegment.recover).
# kbatch.reading.invariants words the full reader's findings from them; CleanBatches below asks them of batches
# it makes no object of.  An offset is a Python int where it can pass Java's long (a batch's last offset is
# baseOffset + lastOffsetDelta, counted exactly).

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
# Bits of the v2 attributes Kafka defines (codec 0-2, timestampType 3, transactional 4, control 5,
# deleteHorizon 6); DefaultRecordBatch only ever reads the low byte, the rest is reserved.
V2_DEFINED_ATTRIBUTES = 0x7F
# AbstractIndex.toRelative: an index stores offsets as int32 relative to the segment's base offset.
MAX_RELATIVE_OFFSET = 2**31 - 1
# The same numbers as C constants where compiled (a Python global is looked up, and boxed, at every use).
_V2_DEFINED_ATTRIBUTES = cython.declare(cython.longlong, V2_DEFINED_ATTRIBUTES)
_NO_PRODUCER_ID = cython.declare(cython.longlong, NO_PRODUCER_ID)
_NO_PRODUCER_EPOCH = cython.declare(cython.longlong, NO_PRODUCER_EPOCH)
_NO_SEQUENCE = cython.declare(cython.longlong, NO_SEQUENCE)
_CODEC_MASK = cython.declare(cython.longlong, COMPRESSION_CODEC_MASK)
_TIMESTAMP_TYPE_MASK = cython.declare(cython.longlong, TIMESTAMP_TYPE_MASK)
_TRANSACTIONAL_MASK = cython.declare(cython.longlong, TRANSACTIONAL_FLAG_MASK)
_CONTROL_MASK = cython.declare(cython.longlong, CONTROL_FLAG_MASK)


@cython.ccall
@cython.exceptval(check=False)
def v2_reserved_bits(attributes: cython.longlong) -> cython.longlong:
    """The bits of a v2 batch's attributes that Kafka defines no meaning for and that are set (0: none)."""
    return attributes & ~_V2_DEFINED_ATTRIBUTES & 0xFFFF


@cython.ccall
def producer_fields_problem(is_transactional: cython.bint, is_control: cython.bint, producer_id: cython.longlong,
                            producer_epoch: cython.longlong, base_sequence: cython.longlong):
    """What Kafka would object to in a batch's producerId, producerEpoch and baseSequence: a code, or None.

    Only producerId decides whether a batch is idempotent (RecordBatch.hasProducerId): with producerId -1
    the broker ignores epoch and sequence, and writes such batches itself (the group and share coordinators'
    CoordinatorRuntime builds every batch with producerId -1, epoch -1, baseSequence 0; some clients write
    epoch 0, sequence 0), so they are no finding. With a producerId, LogValidator.validateBatch refuses a
    negative baseSequence ("Invalid sequence number"), and InitProducerId never hands out a negative epoch.
    """
    if is_transactional and producer_id == _NO_PRODUCER_ID:
        return "transactional-without-producer"
    if is_control or producer_id == _NO_PRODUCER_ID:
        return None  # markers are written by the coordinator: producer id and epoch set, no sequence
    if base_sequence < 0 or producer_epoch < 0:
        return "inconsistent-producer-fields"
    return None


@cython.ccall
def last_offset_delta_short(base_offset, last_offset_delta, last_record_offset) -> cython.bint:
    """The header's lastOffsetDelta falls short of the last record's offset.

    The log cleaner keeps a batch's original lastOffsetDelta when it removes its last records
    (MemoryRecords.filterTo / writeEmptyHeader keep the producer's last sequence), so the last record's
    offsetDelta may be below lastOffsetDelta, never above it.
    """
    return last_record_offset - base_offset > last_offset_delta


@cython.ccall
@cython.exceptval(check=False)
def max_timestamp_differs(create_time: cython.bint, header_max_timestamp: cython.longlong,
                          records_max_timestamp: cython.longlong) -> cython.bint:
    """A CreateTime batch's maxTimestamp is its largest record timestamp (LogAppendTime: the broker's clock)."""
    return create_time and records_max_timestamp != header_max_timestamp


@cython.ccall
def segment_range_problem(offset_field, last_offset, segment_base):
    """A batch's offsets against the base offset in its segment's file name: the finding's code, or None.

    The offset checked is the entry's own offset field (a v2 batch's baseOffset; see
    kbatch.reading.invariants.segment_range_checks).
    """
    if offset_field < segment_base:
        return "below-segment-base"
    if last_offset - segment_base > MAX_RELATIVE_OFFSET:
        return "beyond-segment-range"
    return None


@cython.ccall
def offset_order_problem(last_offset, base_offset):
    """What a batch starting at ``base_offset`` is after batches whose last offset is ``last_offset`` (None:
    none before): a gap is legal (compaction, aborted data) but reported, an overlap is not.  The finding's
    code, or None."""
    if last_offset is not None:
        if base_offset <= last_offset:
            return "offset-overlap"
        if base_offset > last_offset + 1:
            return "offset-gap"
    return None


@cython.ccall
@cython.exceptval(check=False)
def framed_v2_batch(magic: cython.longlong, batch_length: cython.longlong, least: cython.longlong,
                    most: cython.longlong) -> cython.bint:
    """A v2 batch framed as the full reader wants it, for a run that takes batches the reader need not read:
    magic 2 and a batch length within kbatch.format.framing.size_bounds(2, ...), which the caller hands in as
    ``least`` and ``most`` (no bound is written here)."""
    return magic == 2 and least <= batch_length <= most


_ALL_ONES = cython.declare(cython.ulonglong, 2**64 - 1)


@cython.final
@cython.cclass
class HeaderField:
    """One integer field of a fixed-size layout (kbatch.format.structs), read where it lies in a buffer: big-endian,
    signed or not as the declaration's struct format says.  Compiled, reading a header's fields this way
    spares the tuple of Python ints unpack_from makes of all of them."""

    at = cython.declare(cython.Py_ssize_t, visibility="readonly")   # its offset in the layout
    size = cython.declare(cython.int, visibility="readonly")
    signed = cython.declare(cython.bint, visibility="readonly")
    _unpack_from = cython.declare(object)   # the field's own struct, for plain Python

    def __init__(self, layout, name: str):
        self.at, self.size = layout.offsets[name], layout.sizes[name]
        field_format = dict(layout.fields)[name]
        self.signed = field_format.islower()   # struct: "q", "l", "h", "b" signed; "L" not
        self._unpack_from = struct.Struct(">" + field_format).unpack_from

    @cython.ccall
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def read(self, data: cython.const[cython.uchar][::1], start: cython.Py_ssize_t) -> cython.longlong:
        """The field of the layout lying at ``data[start:]`` (the caller has checked the layout fits)."""
        if not cython.compiled:   # the same number, as plain Python reads it fastest (no slice of data)
            return self._unpack_from(data, start + self.at)[0]
        value: cython.ulonglong = 0
        k: cython.int
        for k in range(self.size):
            value = (value << 8) | data[start + self.at + k]
        if self.signed and value >> (8 * self.size - 1):   # the sign bit set: -(the complement) - 1
            return -cython.cast(cython.longlong, ~value & (_ALL_ONES >> (64 - 8 * self.size))) - 1
        return cython.cast(cython.longlong, value)


_FIELD_BASE_OFFSET = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "base_offset"))
_FIELD_BATCH_LENGTH = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "batch_length"))
_FIELD_MAGIC = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "magic"))
_FIELD_CRC = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "crc"))
_FIELD_ATTRIBUTES = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "attributes"))
_FIELD_LAST_OFFSET_DELTA = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "last_offset_delta"))
_FIELD_BASE_TIMESTAMP = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "base_timestamp"))
_FIELD_MAX_TIMESTAMP = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "max_timestamp"))
_FIELD_PRODUCER_ID = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "producer_id"))
_FIELD_PRODUCER_EPOCH = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "producer_epoch"))
_FIELD_BASE_SEQUENCE = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "base_sequence"))
_FIELD_RECORDS_COUNT = cython.declare(HeaderField, HeaderField(BATCH_HEADER, "records_count"))
_HEADER_SIZE = cython.declare(cython.Py_ssize_t, BATCH_HEADER.size)
_LOG_OVERHEAD = cython.declare(cython.Py_ssize_t, LOG_OVERHEAD)


@cython.final
@cython.cclass
class CleanBatches:
    """``verify-crc --deep``'s fast pass (kbatch.walk.deep): the v2 data batches it has nothing to say about,
    walked in one loop without an object per batch.

    :meth:`walk` goes over the batches lying whole in a buffer and stops at the first it does not take --
    not a v2 data batch framed as the reader wants it, or one that breaks a rule -- which the full reader
    then reads, and reports on exactly.  A batch is taken when: its header (each field read where it lies, by
    the declaration's offsets and formats: HeaderField) says nothing the rules above object to, against the
    offset order so far; its CRC holds; its records, inflated by ``inflate`` where compressed, walk whole with
    no finding (one RecordWalker, reset for each); and its header's lastOffsetDelta and maxTimestamp agree
    with them.  ``batches``, ``records`` and
    ``batch_bytes`` count what was taken; ``last_offset`` and ``last_pos`` are the offset order
    (kbatch.reading.invariants.OffsetOrder) after it, set by the caller before a walk.
    """

    walker: RecordWalker
    columns: RecordColumns
    batches = cython.declare(cython.longlong, visibility="readonly")
    records = cython.declare(cython.longlong, visibility="readonly")
    batch_bytes = cython.declare(cython.longlong, visibility="readonly")
    last_offset = cython.declare(object, visibility="public")
    last_pos = cython.declare(object, visibility="public")

    def __init__(self, chunk: cython.Py_ssize_t = 1024):
        self.walker = RecordWalker(b"", 0, 0, 0)
        self.columns = RecordColumns(chunk)   # a batch of more records fills them more than once
        self.batches = self.records = self.batch_bytes = 0
        self.last_offset = self.last_pos = None

    def walk(self, data, i: cython.Py_ssize_t, stop: cython.Py_ssize_t, base: cython.longlong,
             least: cython.longlong, most: cython.longlong, segment_base, inflate, checksum) -> cython.Py_ssize_t:
        """Take the batches in ``data`` from index ``i`` (an entry start) on that start before index ``stop``
        and lie whole in it; the index where the walk stopped (``i`` itself when the entry there is the full
        reader's, and always with no offset before it: the first batch of a walk is the full reader's).

        ``base`` is the file position of ``data[0]``; ``least`` and ``most`` the bounds of a v2 batch's size
        field (kbatch.format.framing.size_bounds); ``segment_base`` the base offset the segment's file name
        says (None: not named so); ``inflate(codec_id, records)`` a compressed batch's records inflated (None:
        they do not inflate); ``checksum`` a v2 batch's (kbatch.format.framing.CHECKSUMS[2]).
        """
        limit: cython.Py_ssize_t = len(data)
        buf: cython.const[cython.uchar][::1] = data
        view = memoryview(data)
        walker: RecordWalker = self.walker
        columns: RecordColumns = self.columns
        last_offset = self.last_offset
        end: cython.Py_ssize_t
        first: cython.Py_ssize_t
        last: cython.Py_ssize_t
        batch_length: cython.longlong
        attributes: cython.longlong
        count: cython.longlong
        codec_id: cython.longlong
        base_offset: cython.longlong
        base_timestamp: cython.longlong
        crc = checksum.function
        crc_start: cython.Py_ssize_t = checksum.start
        if last_offset is None:
            return i
        while i < stop and i + _HEADER_SIZE <= limit:
            batch_length = _FIELD_BATCH_LENGTH.read(buf, i)
            end = i + _LOG_OVERHEAD + batch_length
            if not framed_v2_batch(_FIELD_MAGIC.read(buf, i), batch_length, least, most) or end > limit:
                break
            # What the header alone says first: a batch refused after its CRC and records would have them
            # read again by the full reader.
            count = _FIELD_RECORDS_COUNT.read(buf, i)
            attributes = _FIELD_ATTRIBUTES.read(buf, i)
            if count < 0 or attributes & _CONTROL_MASK or v2_reserved_bits(attributes):
                break
            if producer_fields_problem(attributes & _TRANSACTIONAL_MASK != 0, False,
                                       _FIELD_PRODUCER_ID.read(buf, i), _FIELD_PRODUCER_EPOCH.read(buf, i),
                                       _FIELD_BASE_SEQUENCE.read(buf, i)) is not None:
                break
            base_offset = _FIELD_BASE_OFFSET.read(buf, i)
            last_offset_delta: object = _FIELD_LAST_OFFSET_DELTA.read(buf, i)   # the offset rules count exactly
            batch_last_offset = base_offset + last_offset_delta
            if segment_base is not None and segment_range_problem(base_offset, batch_last_offset,
                                                                  segment_base) is not None:
                break
            if offset_order_problem(last_offset, base_offset) is not None:
                break
            if crc(view[i + crc_start:end]) != _FIELD_CRC.read(buf, i):
                break
            codec_id = attributes & _CODEC_MASK
            if codec_id:   # as kbatch.reading.v2.load_records inflates them
                records = inflate(codec_id, view[i + _HEADER_SIZE:end])
                if records is None:
                    break
                first, last = 0, len(records)
            else:   # walked where they lie: the walker keeps its hold on data from batch to batch
                records, first, last = data, i + _HEADER_SIZE, end
            base_timestamp = _FIELD_BASE_TIMESTAMP.read(buf, i)
            walker.reset(records, count, base_offset, base_timestamp, first, last)
            while walker.fill(columns) and not walker.done:
                pass
            if walker.findings or walker.order_breaks or walker.decoded != count:
                break
            if count and (last_offset_delta_short(base_offset, last_offset_delta, walker.last_offset)
                          or max_timestamp_differs(not attributes & _TIMESTAMP_TYPE_MASK,
                                                   _FIELD_MAX_TIMESTAMP.read(buf, i), walker.max_timestamp)):
                break
            if batch_last_offset > last_offset:   # (a negative lastOffsetDelta leaves the order where it was)
                last_offset, self.last_pos = batch_last_offset, base + i
            self.batches += 1
            self.records += count
            self.batch_bytes += end - i
            i = end
        self.last_offset = last_offset
        walker.reset(b"", 0, 0, 0)   # lets go of data: the reader's window reuses its buffer once nothing holds it
        return i


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
@cython.boundscheck(False)
@cython.wraparound(False)
def _plain_text(data: cython.const[cython.uchar][::1], pos: cython.Py_ssize_t,
                length: cython.Py_ssize_t) -> cython.int:
    """Whether the bytes are printable ASCII, whose JSON under the text modes is {"utf8": "..."}:
    _NOT_TEXT, _TEXT (copied as they are) or _ESCAPED_TEXT (holding a " or a \\).

    Compiled, eight bytes are looked at in one go (most of a record's JSON time went to this loop) with
    the bit tricks that tell whether a word holds a byte below n, above n, or equal to n (Sean Anderson's
    "Bit Twiddling Hacks": hasless, hasmore, haszero; exact about whether, not about which byte).
    """
    i: cython.Py_ssize_t = pos
    end: cython.Py_ssize_t = pos + length
    kind: cython.int = _TEXT
    byte: cython.uchar
    word: cython.ulonglong
    quote: cython.ulonglong
    backslash: cython.ulonglong
    if cython.compiled:
        while i + 8 <= end:
            memcpy(cython.address(word), cython.address(data[i]), 8)
            # a byte < 0x20, a byte > 0x7E
            if (((word - 0x20 * _ONES) & ~word) | (word + _ONES) | word) & _HIGH_BITS:
                return _NOT_TEXT
            quote = word ^ (0x22 * _ONES)
            backslash = word ^ (0x5C * _ONES)
            if (((quote - _ONES) & ~quote) | ((backslash - _ONES) & ~backslash)) & _HIGH_BITS:
                kind = _ESCAPED_TEXT
            i += 8
    for i in range(i, end):
        byte = data[i]
        if byte < 0x20 or byte > 0x7E:
            return _NOT_TEXT
        if byte == 0x22 or byte == 0x5C:
            kind = _ESCAPED_TEXT
    return kind


@cython.final
@cython.cclass
class _JsonWriter:
    """Bytes written into a buffer sized beforehand."""

    out: cython.uchar[::1]
    data: object                  # the bytearray ``out`` views
    capacity: cython.Py_ssize_t
    at: cython.Py_ssize_t
    parts: cython.const[cython.uchar][::1]
    hex_digits: cython.const[cython.uchar][::1]
    digit_pairs: cython.const[cython.uchar][::1]
    at_parts: cython.Py_ssize_t[55]
    len_parts: cython.Py_ssize_t[55]
    day: cython.longlong            # the day whose date iso() wrote last, and where in ``out``
    day_at: cython.Py_ssize_t

    def __init__(self, size: cython.Py_ssize_t, buffer: bytearray):
        self.out = buffer
        self.data = buffer
        self.capacity = size
        self.at = 0
        self.parts = _JSON_PARTS
        self.hex_digits = _HEX_DIGITS
        self.digit_pairs = _DIGIT_PAIRS
        self.day = -1
        self.day_at = 0
        i: cython.Py_ssize_t
        if cython.compiled:
            for i in range(len(_JSON_FIELDS)):
                self.at_parts[i] = _JSON_AT[i]
                self.len_parts[i] = len(_JSON_FIELDS[i])
        else:
            self.at_parts = list(_JSON_AT)
            self.len_parts = [len(part) for part in _JSON_FIELDS]

    @cython.cfunc
    @cython.exceptval(check=False)
    def rewind(self) -> cython.void:
        """Write from the start again: what was written is forgotten, the last date too."""
        self.at = 0
        self.day = -1

    # The buffers are used as attributes, never copied into local memoryviews: each such copy takes
    # and gives back a reference (atomically), which costs more than most of these writes.
    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def part(self, which: cython.int) -> cython.void:
        self.copy(self.parts, self.at_parts[which], self.len_parts[which])

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.cdivision(True)
    def integer(self, value: cython.longlong) -> cython.void:
        at: cython.Py_ssize_t = self.at
        count: cython.Py_ssize_t = 1
        magnitude: cython.ulonglong
        limit: cython.ulonglong = 10
        if value < 0:
            self.out[at] = 0x2D   # -
            at += 1
            magnitude = cython.cast(cython.ulonglong, -(value + 1)) + 1
        else:
            magnitude = value
        while count < 20 and magnitude >= limit:   # how many digits (an unsigned long long has at most 20)
            count += 1
            limit *= 10
        self.at = at + count
        self.pairs_back(magnitude, at + count)

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.cdivision(True)
    def pairs_back(self, value: cython.ulonglong, end: cython.Py_ssize_t) -> cython.void:
        """The decimal digits of ``value`` ending just before ``end``, written from the last, two at a time."""
        pair: cython.Py_ssize_t
        while value >= 100:
            pair = 2 * (value % 100)
            value //= 100
            end -= 2
            self.out[end] = self.digit_pairs[pair]
            self.out[end + 1] = self.digit_pairs[pair + 1]
        if value >= 10:
            pair = 2 * value
            self.out[end - 2] = self.digit_pairs[pair]
            self.out[end - 1] = self.digit_pairs[pair + 1]
        else:
            self.out[end - 1] = 0x30 + value

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.cdivision(True)
    def digits(self, value: cython.longlong, width: cython.int) -> cython.void:
        """``value`` (not negative, fewer than ``width`` + 1 digits) in exactly ``width`` digits, zero-padded."""
        i: cython.Py_ssize_t
        for i in range(self.at, self.at + width):
            self.out[i] = 0x30
        self.pairs_back(value, self.at + width)
        self.at += width

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.cdivision(True)
    def iso(self, ms: cython.longlong) -> cython.void:
        """values.iso_timestamp(ms) as a JSON string ("2023-11-14T22:13:20.000Z"), or null outside its range.

        The date from the day number: Howard Hinnant's civil_from_days (days since 1970-01-01, not negative).
        The records of a batch are mostly of one day: its date is copied from where it was last written.
        """
        if ms < 0 or ms > _ISO_MAX_MS:
            self.part(_NULL)
            return
        days: cython.longlong = ms // 86400000
        of_day: cython.longlong = ms % 86400000
        i: cython.Py_ssize_t
        self.out[self.at] = 0x22     # "
        self.at += 1
        if days == self.day:
            for i in range(10):
                self.out[self.at + i] = self.out[self.day_at + i]
            self.at += 10
        else:
            self.day, self.day_at = days, self.at
            self.date(days)
        self.out[self.at] = 0x54     # T
        self.at += 1
        self.digits(of_day // 3600000, 2)
        self.out[self.at] = 0x3A     # :
        self.at += 1
        self.digits(of_day // 60000 % 60, 2)
        self.out[self.at] = 0x3A
        self.at += 1
        self.digits(of_day // 1000 % 60, 2)
        self.out[self.at] = 0x2E     # .
        self.at += 1
        self.digits(of_day % 1000, 3)
        self.out[self.at] = 0x5A     # Z
        self.out[self.at + 1] = 0x22
        self.at += 2

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.cdivision(True)
    def date(self, days: cython.longlong) -> cython.void:
        """YYYY-MM-DD of a day number (days since 1970-01-01, not negative)."""
        z: cython.longlong = days + 719468
        era: cython.longlong = z // 146097
        doe: cython.longlong = z - era * 146097
        yoe: cython.longlong = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
        doy: cython.longlong = doe - (365 * yoe + yoe // 4 - yoe // 100)
        mp: cython.longlong = (5 * doy + 2) // 153
        day: cython.longlong = doy - (153 * mp + 2) // 5 + 1
        month: cython.longlong = mp + 3 if mp < 10 else mp - 9
        year: cython.longlong = yoe + era * 400 + (1 if month <= 2 else 0)
        self.digits(year, 4)
        self.out[self.at] = 0x2D     # -
        self.at += 1
        self.digits(month, 2)
        self.out[self.at] = 0x2D
        self.at += 1
        self.digits(day, 2)

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def text(self, data: cython.const[cython.uchar][::1], pos: cython.Py_ssize_t,
             length: cython.Py_ssize_t) -> cython.void:
        """Printable ASCII as a JSON string's body: only " and \\ are escaped."""
        at: cython.Py_ssize_t = self.at
        i: cython.Py_ssize_t
        byte: cython.uchar
        for i in range(pos, pos + length):
            byte = data[i]
            if byte == 0x22 or byte == 0x5C:
                self.out[at] = 0x5C
                at += 1
            self.out[at] = byte
            at += 1
        self.at = at

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def hex(self, data: cython.const[cython.uchar][::1], pos: cython.Py_ssize_t,
            length: cython.Py_ssize_t) -> cython.void:
        at: cython.Py_ssize_t = self.at
        i: cython.Py_ssize_t
        for i in range(pos, pos + length):
            self.out[at] = self.hex_digits[data[i] >> 4]
            self.out[at + 1] = self.hex_digits[data[i] & 15]
            at += 2
        self.at = at

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def raw(self, data: cython.const[cython.uchar][::1]) -> cython.void:
        self.copy(data, 0, len(data))

    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def copy(self, data: cython.const[cython.uchar][::1], pos: cython.Py_ssize_t,
             length: cython.Py_ssize_t) -> cython.void:
        """Bytes as they are (a JSON string's body that needs no escape, or JSON made elsewhere)."""
        at: cython.Py_ssize_t = self.at
        if length > 0:
            if cython.compiled:
                memcpy(cython.address(self.out[at]), cython.address(data[pos]), length)
            else:
                self.out[at:at + length] = data[pos:pos + length]
        self.at = at + length


@cython.boundscheck(False)
@cython.wraparound(False)
def records_json(columns: RecordColumns, data, shift: cython.longlong, compressed: cython.bint,
                 base_sequence: cython.longlong, log_append_time: cython.bint, max_timestamp: cython.longlong,
                 mode: cython.int, other):
    """The records held in ``columns`` as JSON objects joined by ", " (UTF-8, a memoryview of its own buffer).

    ``data`` is what was walked; ``shift`` turns positions into file positions (uncompressed batches);
    ``mode`` is JSON_HEX, JSON_TEXT (printable ASCII written here) or JSON_OTHER; ``other(bytes)``
    gives the UTF-8 JSON of a key or value not written here.
    """
    hex_mode: cython.bint = mode == JSON_HEX
    text_mode: cython.bint = mode == JSON_TEXT
    view: cython.const[cython.uchar][::1] = data
    row: cython.Py_ssize_t
    h: cython.Py_ssize_t
    field: cython.int
    pos: cython.Py_ssize_t
    length: cython.Py_ssize_t
    size: cython.Py_ssize_t = 0
    timestamp: cython.longlong
    # First pass: the JSON of every value not written here, what _plain_text finds in each key and value
    # (in field order: the second pass reads it back rather than looking at the bytes again), and a bound
    # on the size of the rest.
    others = []
    text_kinds = bytearray(2 * (columns.n + columns.n_headers))
    kinds: cython.uchar[::1] = text_kinds
    k: cython.Py_ssize_t = 0
    for row in range(columns.n):
        size += 448   # the fixed keys, seven integers and a timestamp_iso
        for field in range(2 + 2 * columns._headers_count[row]):
            pos = _span_pos(columns, row, field)
            length = _span_length(columns, row, field)
            k += 1
            if length < 0:
                continue
            if text_mode:
                kinds[k - 1] = _plain_text(view, pos, length)
            if hex_mode or kinds[k - 1] != _NOT_TEXT:
                size += 2 * length + 16
            else:
                encoded = other(bytes(view[pos:pos + length]))
                others.append(encoded)
                size += len(encoded) + 16
    buffer = bytearray(size)
    out: _JsonWriter = _JsonWriter(size, buffer)
    next_other: cython.Py_ssize_t = 0
    k = 0
    for row in range(columns.n):
        if row:
            out.part(_COMMA)
        out.part(_OFFSET)
        out.integer(columns._offset[row])
        out.part(_TIMESTAMP)
        timestamp = max_timestamp if log_append_time else columns._timestamp[row]
        out.integer(timestamp)
        out.part(_TIMESTAMP_ISO)
        out.iso(timestamp)
        for field in range(2 + 2 * columns._headers_count[row]):
            if field < 2:
                out.part(_KEY if field == 0 else _VALUE)
            elif field % 2 == 0:
                if field == 2:
                    out.part(_HEADERS)
                else:
                    out.part(_COMMA)
                out.part(_HEADER_KEY)
            else:
                out.part(_HEADER_VALUE)
            pos = _span_pos(columns, row, field)
            length = _span_length(columns, row, field)
            k += 1
            if length < 0:
                out.part(_NULL)
            elif hex_mode:
                out.part(_HEX)
                out.hex(view, pos, length)
                out.part(_QUOTE_END)
            elif kinds[k - 1] != _NOT_TEXT:
                out.part(_UTF8)
                if kinds[k - 1] == _TEXT:
                    out.copy(view, pos, length)
                else:
                    out.text(view, pos, length)
                out.part(_QUOTE_END)
            else:
                out.raw(others[next_other])
                next_other += 1
            if field >= 2 and field % 2 == 1:
                out.part(_HEADER_END)
        if columns._headers_count[row] == 0:
            out.part(_HEADERS)
        out.part(_POS)
        if compressed:
            out.part(_NULL)
        else:
            out.integer(columns._pos[row] + shift)
        out.part(_INNER_POS)
        if compressed:
            out.integer(columns._pos[row])
        else:
            out.part(_NULL)
        out.part(_SIZE)
        out.integer(columns._size[row])
        out.part(_ATTRIBUTES)
        out.integer(columns._attributes[row])
        out.part(_SEQUENCE)
        out.integer(increment_sequence(base_sequence, columns._offset_delta[row]) if base_sequence >= 0 else -1)
        out.part(_END)
    return memoryview(buffer)[:out.at]


# -- A batch's line -----------------------------------------------------------------------------------
#
# ``dump --format jsonl`` lists a batch a line: json.dumps of kbatch.output.jsonout.batch_dict's items.  A
# batch with no findings and no payload (nearly every one) holds only integers, booleans, nulls and two
# short names there, whose JSON is plain: written here without the dict.  tests/test_recordwalk.py holds
# this to json.dumps(batch_dict(...)) on every fixture and on random headers.

def batch_json(batch, head: bytes):
    """``head`` (the object's opening, ``b'{'`` or ``b'{"file": "...", '``), then batch_dict(batch)'s items
    as json.dumps writes them (default separators), and ``}``: UTF-8 bytes.

    None where jsonout must write the line itself: a batch with findings or a payload, a name that is not
    plain ASCII, or an integer past 64 bits (only an offset field plus a delta can be).
    """
    if batch.findings or batch.body is not None:
        return None
    return fields_json((batch.pos, batch.size, batch.magic, batch.length_field, batch.offset_field,
                        batch.base_offset, batch.last_offset, batch.count, batch.attributes, batch.codec, batch.crc,
                        batch.computed_crc, batch.timestamp_type, batch.base_timestamp, batch.max_timestamp,
                        batch.partition_leader_epoch, batch.last_offset_delta, batch.producer_id,
                        batch.producer_epoch, batch.base_sequence, batch.is_transactional, batch.is_control,
                        batch.delete_horizon_ms, batch.payload_pos, batch.payload_size, batch.decompressed_size),
                       head)


def fields_json(fields: tuple, head: bytes):
    """batch_json of a batch with no findings and no payload whose fields are ``fields``: kbatch.reading.model.Batch's,
    in its order, up to decompressed_size (as kbatch.reading.v2.batch_fields gives them for a v2 header)."""
    (pos, size, magic, length_field, offset_field, base_offset, last_offset, count, attributes, codec_name, crc,
     computed_crc, timestamp_type_name, base_timestamp, max_timestamp, partition_leader_epoch, last_offset_delta,
     producer_id, producer_epoch, base_sequence, is_transactional, is_control, delete_horizon_ms, payload_pos,
     payload_size, decompressed_size) = fields
    codec = _plain_name(codec_name)
    timestamp_type = _plain_name(timestamp_type_name)
    if codec is None or timestamp_type is None:
        return None
    global _line
    size_bound: cython.Py_ssize_t = len(head) + len(codec) + len(timestamp_type) + 2048   # 32 keys, 24 numbers
    if _line is None or _line.capacity < size_bound:
        _line = _JsonWriter(size_bound, bytearray(size_bound))
    out: _JsonWriter = _line
    out.rewind()
    out.raw(head)
    try:
        out.part(_BATCH_KEY)
        out.raw(b'"batch"')
        _number(out, 1, pos)
        _number(out, 2, size)
        _number(out, 3, magic)
        _number(out, 4, base_offset)
        _number(out, 5, last_offset)
        _number(out, 6, offset_field)
        _number(out, 7, count)
        _number(out, 8, length_field)
        _number(out, 9, partition_leader_epoch)
        _number(out, 10, crc)
        _number(out, 11, computed_crc)
        _flag(out, 12, crc == computed_crc)
        _number(out, 13, attributes)
        _name(out, 14, codec)
        _name(out, 15, timestamp_type)
        _flag(out, 16, is_transactional)
        _flag(out, 17, is_control)
        _number(out, 18, last_offset_delta)
        _number(out, 19, base_timestamp)
        _number(out, 20, base_timestamp, True)
        _number(out, 21, max_timestamp)
        _number(out, 22, max_timestamp, True)
        _number(out, 23, delete_horizon_ms)
        _number(out, 24, producer_id)
        _number(out, 25, producer_epoch)
        _number(out, 26, base_sequence)
        _number(out, 27, last_sequence(base_sequence, last_offset_delta) if magic >= 2 else None)
        _number(out, 28, payload_pos)
        _number(out, 29, payload_size)
        _number(out, 30, decompressed_size)
    except OverflowError:   # compiled only: plain Python writes any integer, as json.dumps does
        return None
    out.part(_BATCH_KEY + 31)
    out.raw(b"[]}")
    return bytes(memoryview(out.data)[:out.at])


_line = cython.declare(_JsonWriter, None)   # the writer batch_json reuses line after line (making one costs more)
_plain_names = {}     # name -> _plain_name(name), for the few names batches have


def _plain_name(name):
    """A name's UTF-8 when its JSON string is the name between quotes (printable ASCII, no " or \\), else None."""
    plain = _plain_names.get(name, False)
    if plain is False:
        plain = name.encode() if name.isascii() and name.isprintable() and '"' not in name and "\\" not in name \
            else None
        if len(_plain_names) < 64:
            _plain_names[name] = plain
    return plain


@cython.cfunc
@cython.exceptval(-1)
def _number(out: _JsonWriter, key: cython.int, value, as_date: cython.bint = False) -> cython.int:
    """Key ``key`` of BATCH_JSON_KEYS with an integer (``as_date``: milliseconds as values.iso_timestamp
    shows them, as batch_dict has it) or null.  OverflowError past 64 bits, compiled."""
    out.part(_BATCH_KEY + key)
    if value is None:
        out.part(_NULL)
    elif as_date:
        out.iso(value)
    else:
        out.integer(value)
    return 0


@cython.cfunc
@cython.exceptval(check=False)
def _flag(out: _JsonWriter, key: cython.int, value: cython.bint) -> cython.void:
    out.part(_BATCH_KEY + key)
    out.part(_TRUE if value else _FALSE)


@cython.cfunc
@cython.exceptval(check=False)
def _name(out: _JsonWriter, key: cython.int, name: bytes) -> cython.void:
    out.part(_BATCH_KEY + key)
    out.part(_QUOTE)
    out.raw(name)
    out.part(_QUOTE)


@cython.cfunc
@cython.inline
@cython.cdivision(True)
@cython.exceptval(check=False)
def _span_pos(columns: RecordColumns, row: cython.Py_ssize_t, field: cython.int) -> cython.Py_ssize_t:
    """Where a record's key (field 0), value (1), or header key/value (2, 3, 4, 5, ...) starts."""
    if field == 0:
        return columns._key_pos[row]
    if field == 1:
        return columns._value_pos[row]
    if field % 2 == 0:
        return columns._h_key_pos[columns._first_header[row] + (field - 2) // 2]
    return columns._h_value_pos[columns._first_header[row] + (field - 2) // 2]


@cython.cfunc
@cython.inline
@cython.cdivision(True)
@cython.exceptval(check=False)
def _span_length(columns: RecordColumns, row: cython.Py_ssize_t, field: cython.int) -> cython.Py_ssize_t:
    """The stored length of the same field (negative: null)."""
    if field == 0:
        return columns._key_length[row]
    if field == 1:
        return columns._value_length[row]
    if field % 2 == 0:
        return columns._h_key_length[columns._first_header[row] + (field - 2) // 2]
    return columns._h_value_length[columns._first_header[row] + (field - 2) // 2]


@cython.boundscheck(False)
@cython.wraparound(False)
def any_key_or_value_starts_with_zero(columns: RecordColumns, data) -> cython.bint:
    """Whether the key or value of a record held in ``columns`` starts with a zero byte: the schema
    registry's magic byte (kbatch.render.user_topic.registry_frame says whether the rest of its framing holds)."""
    view: cython.const[cython.uchar][::1] = data
    row: cython.Py_ssize_t
    for row in range(columns.n):
        if columns._key_length[row] > 0 and view[columns._key_pos[row]] == 0:
            return True
        if columns._value_length[row] > 0 and view[columns._value_pos[row]] == 0:
            return True
    return False
