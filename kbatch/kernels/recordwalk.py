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

:class:`RecordRows` gathers walked chunks as the rows of ``kbatch scan --records``'s table, laid out as Arrow
lays them out.

The C-level declarations other kernels use (:class:`RecordColumns`, :class:`RecordWalker`, :class:`RecordRows`) are in
``recordwalk.pxd``; :mod:`.batchrules` holds the rules of the batch around the records, :mod:`.cleanruns`
the compiled fast pass of ``verify-crc --deep``, :mod:`.jsonl` the JSON Lines writer of records.

This file is compiled by Cython at install where a C compiler is found (its
pure-Python mode: the annotations are C types) and runs as plain Python
otherwise; ``tests/test_recordwalk.py`` proves both give the same columns and
answers.
"""

from __future__ import annotations

from array import array

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

if cython.compiled:
    from cython.cimports.libc.string import memcpy
    from cython.cimports.kbatch.kernels.batchrules import increment_sequence
else:
    from kbatch.kernels.batchrules import increment_sequence
from kbatch.format.findings import MAX_HELD

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
    else:   # (an else, so that Cython drops it when compiled instead of warning that it is unreachable)
        return (a + b - _LONG_MIN) % _LONG_SPAN + _LONG_MIN


@cython.final
@cython.cclass
class RecordColumns:
    """Up to ``capacity`` records, one array per field (``RECORD_COLUMNS``; headers in ``HEADER_COLUMNS``).

    Row ``i`` of every record column is record ``i`` of the chunk; its headers are rows
    ``first_header[i]`` .. ``first_header[i] + headers_count[i]`` of the header columns.  Positions are
    inside the bytes walked.  A key or value whose length is negative is null.  (Its C attributes are
    declared in recordwalk.pxd.)
    """

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
    (Its C attributes and methods are declared in recordwalk.pxd.)
    """

    def __init__(self, data, count: cython.longlong, base_offset: cython.longlong,
                 base_timestamp: cython.longlong, start: cython.Py_ssize_t = 0, end: cython.Py_ssize_t = -1):
        # (declared for Cython in recordwalk.pxd; for mypy, whose annotations Cython would take as its own)
        self.findings = []      # type: list[tuple]
        self.order_breaks = []  # type: list[tuple]
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


# -- the records table's rows, gathered from walked chunks --------------------------------------------------

# RecordRows' columns: one value per row (array typecodes; "offsets" ones hold one more, the end of the last) ...
ROW_COLUMNS = {"offset": "q", "timestamp": "q", "sequence": "i", "batch_pos": "q", "batch_base_offset": "q",
               "producer_id": "q", "codec": "B", "log_append_time": "B", "is_transactional": "B", "visible": "b",
               "file": "i", "key_null": "B", "value_null": "B", "key_offsets": "i", "value_offsets": "i",
               "headers_offsets": "i"}
# ... one per header row ...
HEADER_ROW_COLUMNS = {"key_offsets": "i", "value_offsets": "i", "value_null": "B"}
# ... and the bytes of the keys, values, header keys and header values, each one after the other.
ROW_BYTES = ("key", "value", "header_key", "header_value")


@cython.final
@cython.cclass
class RecordRows:
    """The records level's rows of many chunks, a column per field, as Arrow lays them out: keys, values and
    the headers' keys and values copied one after the other, each with its offsets (Arrow's int32), so that the
    columns are handed to Arrow as they are (kbatch.spark.source.ColumnarRecords).

    :meth:`add` takes a chunk of walked records (RecordColumns) with its batch's fields, which it repeats on each
    row.  Room grows as needed; ``n`` rows are held, their bytes count in ``data_bytes``.  (Its C attributes are
    declared in recordwalk.pxd.)
    """

    def __init__(self, capacity: cython.Py_ssize_t = DEFAULT_CHUNK, room: tuple = (0, 0, 0, 0)):
        """Room for ``capacity`` rows (and as many header rows), and ``room`` bytes of each of ROW_BYTES (a caller
        that flushes the rows once it holds so many, and passes what the last rows took, never grows them)."""
        self.n = 0
        self.n_headers = 0
        self.capacity = 0
        self.header_capacity = 0
        # (declared for Cython in recordwalk.pxd; for mypy, whose annotations Cython would take as its own)
        self.columns = {}         # type: dict[str, array]
        self.header_columns = {}  # type: dict[str, array]
        self.bytes = {name: bytearray() for name in ROW_BYTES}
        self._grow_rows(max(capacity, 1))
        self._grow_headers(max(capacity, 1))
        self._grow_bytes(*room)

    def clear(self):
        """Hold no row, the room kept: to gather rows anew into the same buffers (once nothing else reads them)."""
        self.n = 0
        self.n_headers = 0

    @property
    def room(self) -> tuple:
        """The bytes held of each of ROW_BYTES."""
        return (self._key_offsets[self.n], self._value_offsets[self.n], self._h_key_offsets[self.n_headers],
                self._h_value_offsets[self.n_headers])

    @property
    def data_bytes(self) -> int:
        return (self._key_offsets[self.n] + self._value_offsets[self.n] + self._h_key_offsets[self.n_headers]
                + self._h_value_offsets[self.n_headers])

    def _grow_rows(self, capacity: cython.Py_ssize_t):
        self.capacity = capacity
        self.columns = {name: _grown(self.columns.get(name), typecode, capacity + 1)
                        for name, typecode in ROW_COLUMNS.items()}
        columns = self.columns
        self._offset, self._timestamp, self._sequence = columns["offset"], columns["timestamp"], columns["sequence"]
        self._batch_pos, self._batch_base_offset = columns["batch_pos"], columns["batch_base_offset"]
        self._producer_id, self._codec = columns["producer_id"], columns["codec"]
        self._log_append_time, self._is_transactional = columns["log_append_time"], columns["is_transactional"]
        self._visible, self._file = columns["visible"], columns["file"]
        self._key_null, self._value_null = columns["key_null"], columns["value_null"]
        self._key_offsets, self._value_offsets = columns["key_offsets"], columns["value_offsets"]
        self._headers_offsets = columns["headers_offsets"]

    def _grow_headers(self, capacity: cython.Py_ssize_t):
        self.header_capacity = capacity
        self.header_columns = {name: _grown(self.header_columns.get(name), typecode, capacity + 1)
                               for name, typecode in HEADER_ROW_COLUMNS.items()}
        columns = self.header_columns
        self._h_key_offsets, self._h_value_offsets = columns["key_offsets"], columns["value_offsets"]
        self._h_value_null = columns["value_null"]

    def _grow_bytes(self, key: cython.Py_ssize_t, value: cython.Py_ssize_t, header_key: cython.Py_ssize_t,
                    header_value: cython.Py_ssize_t):
        """Room for at least so many more bytes of each of ROW_BYTES (twice what is needed, once grown: growing
        copies)."""
        for name, held, more in zip(ROW_BYTES, self.room, (key, value, header_key, header_value)):
            if held + more > len(self.bytes[name]) or not self.bytes[name]:
                grown = bytearray(max(held + more if not held else 2 * (held + more), 64))
                grown[:held] = self.bytes[name][:held]
                self.bytes[name] = grown
        self._keys, self._values = self.bytes["key"], self.bytes["value"]
        self._h_keys, self._h_values = self.bytes["header_key"], self.bytes["header_value"]

    @cython.ccall
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.initializedcheck(False)
    def add(self, columns: RecordColumns, data, batch_pos: cython.longlong, base_offset: cython.longlong,
            codec: cython.int, log_append_time: cython.bint, max_timestamp: cython.longlong,
            base_sequence: cython.longlong, producer_id: cython.longlong, transactional: cython.bint,
            visible: cython.int, file: cython.int):
        """The records of ``columns`` (positions inside ``data``) as rows, with their batch's fields: its file
        position, base offset, codec id, whether its timestamps are LogAppendTime (each record then has
        maxTimestamp, as Record.timestamp), maxTimestamp, baseSequence (-1: none), producer id, whether it is
        transactional, its visible_to_read_committed (-1: null, 0, 1), and its file (an index the caller keeps)."""
        view: cython.const[cython.uchar][::1] = data
        m: cython.Py_ssize_t = columns.n
        h: cython.Py_ssize_t = columns.n_headers
        r: cython.Py_ssize_t
        row: cython.Py_ssize_t
        k: cython.Py_ssize_t
        at: cython.Py_ssize_t
        length: cython.longlong
        key_more: cython.Py_ssize_t = 0
        value_more: cython.Py_ssize_t = 0
        h_key_more: cython.Py_ssize_t = 0
        h_value_more: cython.Py_ssize_t = 0
        for r in range(m):
            key_more += max(columns._key_length[r], 0)
            value_more += max(columns._value_length[r], 0)
        for r in range(h):
            h_key_more += max(columns._h_key_length[r], 0)
            h_value_more += max(columns._h_value_length[r], 0)
        if self.n + m > self.capacity:
            self._grow_rows(max(2 * self.capacity, self.n + m))
        if self.n_headers + h > self.header_capacity:
            self._grow_headers(max(2 * self.header_capacity, self.n_headers + h))
        if (self._key_offsets[self.n] + key_more > len(self._keys)
                or self._value_offsets[self.n] + value_more > len(self._values)
                or self._h_key_offsets[self.n_headers] + h_key_more > len(self._h_keys)
                or self._h_value_offsets[self.n_headers] + h_value_more > len(self._h_values)):
            self._grow_bytes(key_more, value_more, h_key_more, h_value_more)
        if self._key_offsets[self.n] + key_more + self._value_offsets[self.n] + value_more > _INT32_MAX \
                or self._h_key_offsets[self.n_headers] + h_key_more > _INT32_MAX \
                or self._h_value_offsets[self.n_headers] + h_value_more > _INT32_MAX:
            raise ValueError("kbatch: more than 2 GiB of keys, values or headers in one Arrow batch")
        for r in range(h):
            k = self.n_headers + r
            at = self._h_key_offsets[k]
            length = columns._h_key_length[r]
            if length > 0:
                _copy(self._h_keys, at, view, columns._h_key_pos[r], length)
                at += length
            self._h_key_offsets[k + 1] = at
            at = self._h_value_offsets[k]
            length = columns._h_value_length[r]
            self._h_value_null[k] = length < 0
            if length > 0:
                _copy(self._h_values, at, view, columns._h_value_pos[r], length)
                at += length
            self._h_value_offsets[k + 1] = at
        for r in range(m):
            row = self.n + r
            self._offset[row] = columns._offset[r]
            self._timestamp[row] = max_timestamp if log_append_time else columns._timestamp[r]
            self._sequence[row] = (increment_sequence(base_sequence, columns._offset_delta[r]) if base_sequence >= 0
                                   else base_sequence)
            self._batch_pos[row] = batch_pos
            self._batch_base_offset[row] = base_offset
            self._producer_id[row] = producer_id
            self._codec[row] = codec
            self._log_append_time[row] = log_append_time
            self._is_transactional[row] = transactional
            self._visible[row] = visible
            self._file[row] = file
            at = self._key_offsets[row]
            length = columns._key_length[r]
            self._key_null[row] = length < 0
            if length > 0:
                _copy(self._keys, at, view, columns._key_pos[r], length)
                at += length
            self._key_offsets[row + 1] = at
            at = self._value_offsets[row]
            length = columns._value_length[r]
            self._value_null[row] = length < 0
            if length > 0:
                _copy(self._values, at, view, columns._value_pos[r], length)
                at += length
            self._value_offsets[row + 1] = at
            self._headers_offsets[row + 1] = self._headers_offsets[row] + columns._headers_count[r]
        self.n += m
        self.n_headers += h


_INT32_MAX = 2**31 - 1


def _grown(held, typecode: str, size: int):
    """An array of ``size`` items of ``typecode``, starting with those of ``held`` (if any)."""
    grown = array(typecode, bytes(size * array(typecode).itemsize))
    if held is not None:
        grown[:len(held)] = held
    return grown


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
@cython.boundscheck(False)
@cython.wraparound(False)
def _copy(out: cython.uchar[::1], at: cython.Py_ssize_t, source: cython.const[cython.uchar][::1],
          start: cython.Py_ssize_t, length: cython.Py_ssize_t) -> cython.void:
    if cython.compiled:
        memcpy(cython.address(out[at]), cython.address(source[start]), length)
    else:
        out[at:at + length] = source[start:start + length]
