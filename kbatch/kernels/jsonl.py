"""``dump --format jsonl`` at the decoder's speed: the JSON of records and batches, written without a dict.

Compiled by Cython where it can be; plain Python otherwise (tests/test_recordwalk.py holds both to
json.dumps of kbatch.output.jsonout's dicts).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython.bytes import PyBytes_FromStringAndSize
    from cython.cimports.libc.string import memcpy
    from cython.cimports.kbatch.kernels.batchrules import (V2Header, framed_v2_batch, increment_sequence,
                                                           producer_fields_problem, v2_last_sequence, v2_reserved_bits)
    from cython.cimports.kbatch.kernels.recordwalk import RecordColumns
else:
    from kbatch.kernels.batchrules import (V2Header, framed_v2_batch, increment_sequence, producer_fields_problem,
                                           v2_last_sequence, v2_reserved_bits)
    from kbatch.kernels.recordwalk import RecordColumns
from kbatch.kernels.batchrules import V2_HEADER, last_sequence
from kbatch.format.structs import (BATCH_HEADER, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, DELETE_HORIZON_FLAG_MASK,
                                   LOG_OVERHEAD, TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK)
from kbatch.kernels._json_keys import BATCH_JSON_KEYS, RECORD_JSON_KEYS  # noqa: F401

# -- JSON Lines at the decoder's speed ------------------------------------------------------------
#
# What the records of one chunk look like in ``dump --format jsonl``: exactly what json.dumps (default
# separators, ensure_ascii=False) writes for kbatch.output.jsonout.record_dict of each record, without a
# dict per record.  Keys and values are written here only in the two cases whose JSON is plain: hex
# (``--decode hex``) and printable ASCII under the text modes ({"utf8": ...}, escaping only " and \);
# every other value is handed to ``other`` (jsonout's own rule), so how bytes read as JSON stays there.
# tests/test_recordwalk.py holds this to json.dumps(record_dict(...)) on every fixture and random records.

# BATCH_JSON_KEYS and RECORD_JSON_KEYS (imported above): the keys this writer gives a batch's line (batch_json)
# and a record (records_json), in the order it writes them; the columns declared in kbatch.output.columns (BATCH
# and RECORD, the optional ones left out), written out to _json_keys.py by python -m kbatch.output.docs.
# kbatch.output.jsonout uses this writer only while they are the declared keys, and tests/test_columns.py
# holds the pieces below to them (a column added there must be taught to this writer too).
# The pieces of JSON the writer copies (the record's keys spelt out, in RECORD_JSON_KEYS' order; a v2 record
# has no crc, crc_valid or control of its own: those close the object as nulls) ...
_RECORD_FIELDS = (b'{"offset": ', b', "timestamp": ', b', "key": ', b', "value": ', b', "headers": [',
                  b'], "pos": ', b', "inner_pos": ', b', "size": ', b', "attributes": ', b', "sequence": ',
                  b', "crc": null, "crc_valid": null, "control": null}', b'{"key": ', b', "value": ', b'}',
                  b', ', b'null', b'{"hex": "', b'{"utf8": "', b'"}', b', "timestamp_iso": ',
                  b'true', b'false', b'"')
# ... and then a batch's keys: BATCH_JSON_KEYS[i] is part _BATCH_KEY + i.
_BATCH_KEY = cython.declare(cython.int, len(_RECORD_FIELDS))
_JSON_FIELDS = _RECORD_FIELDS + tuple(f'{", " if index else ""}"{key}": '.encode()
                                      for index, key in enumerate(BATCH_JSON_KEYS))
_PARTS = cython.declare(cython.int, len(_JSON_FIELDS))   # how many parts there are
_JSON_PARTS = b"".join(_JSON_FIELDS)
_JSON_AT = tuple(sum(map(len, _JSON_FIELDS[:index])) for index in range(len(_JSON_FIELDS)))
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

# A batch line's numbers, each written from a slot of the writer (_JsonWriter.values): batch_json's from its
# Python ints, clean_batch_lines' from the header it read, by the one writer of their keys (_write_batch).
_POS_VALUE = cython.declare(cython.int, 0)
_SIZE_VALUE = cython.declare(cython.int, 1)
_MAGIC_VALUE = cython.declare(cython.int, 2)
_BASE_OFFSET_VALUE = cython.declare(cython.int, 3)
_LAST_OFFSET_VALUE = cython.declare(cython.int, 4)
_OFFSET_FIELD_VALUE = cython.declare(cython.int, 5)
_COUNT_VALUE = cython.declare(cython.int, 6)
_LENGTH_FIELD_VALUE = cython.declare(cython.int, 7)
_LEADER_EPOCH_VALUE = cython.declare(cython.int, 8)
_CRC_VALUE = cython.declare(cython.int, 9)
_COMPUTED_CRC_VALUE = cython.declare(cython.int, 10)
_ATTRIBUTES_VALUE = cython.declare(cython.int, 11)
_LAST_OFFSET_DELTA_VALUE = cython.declare(cython.int, 12)
_BASE_TIMESTAMP_VALUE = cython.declare(cython.int, 13)
_MAX_TIMESTAMP_VALUE = cython.declare(cython.int, 14)
_DELETE_HORIZON_VALUE = cython.declare(cython.int, 15)
_PRODUCER_ID_VALUE = cython.declare(cython.int, 16)
_PRODUCER_EPOCH_VALUE = cython.declare(cython.int, 17)
_BASE_SEQUENCE_VALUE = cython.declare(cython.int, 18)
_LAST_SEQUENCE_VALUE = cython.declare(cython.int, 19)
_PAYLOAD_POS_VALUE = cython.declare(cython.int, 20)
_PAYLOAD_SIZE_VALUE = cython.declare(cython.int, 21)
_DECOMPRESSED_SIZE_VALUE = cython.declare(cython.int, 22)
_SLOTS = cython.declare(cython.int, 23)   # (the writer has room for 24)
# The writer's tables of parts are C arrays, whose length must be a constant: room for this many.
assert _PARTS <= 64, "kbatch.kernels.jsonl: more than 64 parts of JSON; make _JsonWriter's arrays longer"
JSON_OTHER = 0   # records_json's modes (Python values: callers pass them)
JSON_HEX = 1
JSON_TEXT = 2
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
    word: cython.ulonglong = 0   # (filled by memcpy; set so that no path reads it unset)
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
    data: bytearray               # the bytearray ``out`` views
    capacity: cython.Py_ssize_t
    at: cython.Py_ssize_t
    parts: cython.const[cython.uchar][::1]
    parts_start: cython.p_char      # compiled: _JSON_PARTS' bytes, where they lie (part copies from here)
    pairs_start: cython.p_char      # compiled: _DIGIT_PAIRS' bytes, where they lie (pairs_back copies from here)
    hex_digits: cython.const[cython.uchar][::1]
    digit_pairs: cython.const[cython.uchar][::1]
    at_parts: cython.Py_ssize_t[64]   # where each part of _JSON_FIELDS is in _JSON_PARTS (room for _PARTS)
    len_parts: cython.Py_ssize_t[64]
    day: cython.longlong            # the day whose date iso() wrote last, and where in ``out``
    day_at: cython.Py_ssize_t
    keys: cython.int                # how many of a batch line's keys were written (key)
    values: cython.longlong[24]     # a batch line's numbers by slot (_SLOTS of them: _POS_VALUE, ...) ...
    nulls: cython.ulonglong         # ... and which of them are null (bit 1 << slot)

    def __init__(self, size: cython.Py_ssize_t, buffer: bytearray):
        self.out = buffer
        self.data = buffer
        self.capacity = size
        self.at = 0
        self.parts = _JSON_PARTS
        parts: bytes = _JSON_PARTS   # (module constants: they outlive every writer)
        pairs: bytes = _DIGIT_PAIRS
        if cython.compiled:
            self.parts_start = parts
            self.pairs_start = pairs
        self.hex_digits = _HEX_DIGITS
        self.digit_pairs = _DIGIT_PAIRS
        self.day = -1
        self.day_at = 0
        self.keys = 0
        self.nulls = 0
        i: cython.Py_ssize_t
        if cython.compiled:
            for i in range(len(_JSON_FIELDS)):
                self.at_parts[i] = _JSON_AT[i]
                self.len_parts[i] = len(_JSON_FIELDS[i])
        else:
            self.at_parts = list(_JSON_AT)
            self.len_parts = [len(part) for part in _JSON_FIELDS]
            self.values = [0] * _SLOTS

    @cython.cfunc
    @cython.exceptval(check=False)
    def rewind(self) -> cython.void:
        """Write from the start again: what was written is forgotten, the last date and key too, and every
        value slot is not null."""
        self.at = 0
        self.day = -1
        self.keys = 0
        self.nulls = 0

    @cython.cfunc
    @cython.boundscheck(False)
    def written(self) -> bytes:
        """What was written since the last rewind, as bytes."""
        if cython.compiled:   # (no memoryview made and sliced: that costs more than the copy of a line)
            line = PyBytes_FromStringAndSize(cython.cast(cython.p_char, cython.address(self.out[0])), self.at)
        else:
            line = bytes(memoryview(self.data)[:self.at])
        return line

    @cython.cfunc
    @cython.exceptval(check=False)
    def key(self) -> cython.void:
        """A batch line's next key (BATCH_JSON_KEYS[self.keys]), with what goes before it."""
        self.part(_BATCH_KEY + self.keys)
        self.keys += 1

    # The buffers are used as attributes, never copied into local memoryviews: each such copy takes
    # and gives back a reference (atomically), which costs more than most of these writes.
    @cython.cfunc
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def part(self, which: cython.int) -> cython.void:
        if cython.compiled:   # from where the parts lie: no memoryview of them passed on (each pass costs more)
            memcpy(cython.address(self.out[self.at]), self.parts_start + self.at_parts[which], self.len_parts[which])
            self.at += self.len_parts[which]
        else:
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
        out: cython.p_uchar
        pairs: cython.p_char
        if cython.compiled:   # through pointers: a store through the memoryview reloads it, every digit pair
            out = cython.address(self.out[0])
            pairs = self.pairs_start
        else:
            out = self.out
            pairs = self.digit_pairs
        while value >= 100:
            pair = 2 * (value % 100)
            value //= 100
            end -= 2
            out[end] = pairs[pair]
            out[end + 1] = pairs[pair + 1]
        if value >= 10:
            pair = 2 * value
            out[end - 2] = pairs[pair]
            out[end - 1] = pairs[pair + 1]
        else:
            out[end - 1] = 0x30 + value

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
    def bytes_(self, data: bytes) -> cython.void:
        """raw() of a bytes object, copied from where it lies (compiled: no memoryview made of it, which costs
        more than copying a batch line's short pieces)."""
        length: cython.Py_ssize_t = len(data)
        source: cython.p_char
        if cython.compiled:
            if length > 0:
                source = data
                memcpy(cython.address(self.out[self.at]), source, length)
            self.at += length
        else:
            self.raw(data)

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
    return _batch_line(head, pos=batch.pos, size=batch.size, magic=batch.magic, length_field=batch.length_field,
                       offset_field=batch.offset_field, base_offset=batch.base_offset,
                       last_offset=batch.last_offset, count=batch.count, attributes=batch.attributes,
                       codec=batch.codec, crc=batch.crc, computed_crc=batch.computed_crc,
                       timestamp_type=batch.timestamp_type, base_timestamp=batch.base_timestamp,
                       max_timestamp=batch.max_timestamp, partition_leader_epoch=batch.partition_leader_epoch,
                       last_offset_delta=batch.last_offset_delta, producer_id=batch.producer_id,
                       producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                       is_transactional=batch.is_transactional, is_control=batch.is_control,
                       delete_horizon_ms=batch.delete_horizon_ms, payload_pos=batch.payload_pos,
                       payload_size=batch.payload_size, decompressed_size=batch.decompressed_size)


def fields_json(fields: tuple, head: bytes):
    """batch_json of a batch with no findings and no payload whose header fields are ``fields``: a tuple, in the
    order kbatch.reading.model.HEADER_FIELDS names them (kbatch.reading.v2.batch_fields makes it; a dict of
    26 keys a batch cost the listing a tenth of its time).  tests/test_recordwalk.py holds the unpacking below
    to that order (its line the same as batch_json's of the Batch made of those fields)."""
    (pos, size, magic, length_field, offset_field, base_offset, last_offset, count, attributes, codec, crc,
     computed_crc, timestamp_type, base_timestamp, max_timestamp, partition_leader_epoch, last_offset_delta,
     producer_id, producer_epoch, base_sequence, is_transactional, is_control, delete_horizon_ms, payload_pos,
     payload_size, decompressed_size) = fields   # HEADER_FIELDS
    return _batch_line(head, pos=pos, size=size, magic=magic, length_field=length_field,
                       offset_field=offset_field, base_offset=base_offset, last_offset=last_offset, count=count,
                       attributes=attributes, codec=codec, crc=crc, computed_crc=computed_crc,
                       timestamp_type=timestamp_type, base_timestamp=base_timestamp, max_timestamp=max_timestamp,
                       partition_leader_epoch=partition_leader_epoch, last_offset_delta=last_offset_delta,
                       producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
                       is_transactional=is_transactional, is_control=is_control,
                       delete_horizon_ms=delete_horizon_ms, payload_pos=payload_pos, payload_size=payload_size,
                       decompressed_size=decompressed_size)


@cython.cfunc
def _batch_line(head: bytes, pos, size, magic, length_field, offset_field, base_offset, last_offset, count,
                attributes, codec, crc, computed_crc, timestamp_type, base_timestamp, max_timestamp,
                partition_leader_epoch, last_offset_delta, producer_id, producer_epoch, base_sequence,
                is_transactional: cython.bint, is_control: cython.bint, delete_horizon_ms, payload_pos,
                payload_size, decompressed_size):
    """The line of batch_json: ``head``, then each key of BATCH_JSON_KEYS in turn, with its value."""
    global _line
    size_bound: cython.Py_ssize_t = len(head) + _LINE_BOUND
    if _line is None or _line.capacity < size_bound:
        _line = _JsonWriter(size_bound, bytearray(size_bound))
    out: _JsonWriter = _line
    out.rewind()
    out.bytes_(head)
    try:
        _value(out, _POS_VALUE, pos)
        _value(out, _SIZE_VALUE, size)
        _value(out, _MAGIC_VALUE, magic)
        _value(out, _BASE_OFFSET_VALUE, base_offset)
        _value(out, _LAST_OFFSET_VALUE, last_offset)
        _value(out, _OFFSET_FIELD_VALUE, offset_field)
        _value(out, _COUNT_VALUE, count)
        _value(out, _LENGTH_FIELD_VALUE, length_field)
        _value(out, _LEADER_EPOCH_VALUE, partition_leader_epoch)
        _value(out, _CRC_VALUE, crc)
        _value(out, _COMPUTED_CRC_VALUE, computed_crc)
        _value(out, _ATTRIBUTES_VALUE, attributes)
        _value(out, _LAST_OFFSET_DELTA_VALUE, last_offset_delta)
        _value(out, _BASE_TIMESTAMP_VALUE, base_timestamp)
        _value(out, _MAX_TIMESTAMP_VALUE, max_timestamp)
        _value(out, _DELETE_HORIZON_VALUE, delete_horizon_ms)
        _value(out, _PRODUCER_ID_VALUE, producer_id)
        _value(out, _PRODUCER_EPOCH_VALUE, producer_epoch)
        _value(out, _BASE_SEQUENCE_VALUE, base_sequence)
        _value(out, _LAST_SEQUENCE_VALUE, last_sequence(base_sequence, last_offset_delta) if magic >= 2 else None)
        _value(out, _PAYLOAD_POS_VALUE, payload_pos)
        _value(out, _PAYLOAD_SIZE_VALUE, payload_size)
        _value(out, _DECOMPRESSED_SIZE_VALUE, decompressed_size)
    except OverflowError:   # compiled only: plain Python writes any integer, as json.dumps does
        return None
    if not _write_batch(out, True, _plain_name(codec), _plain_name(timestamp_type), crc == computed_crc,
                        is_transactional, is_control):
        return None
    return out.written()


_V2 = cython.declare(V2Header, V2_HEADER)   # a v2 header's fields, each read where it lies
_HEADER_SIZE = cython.declare(cython.Py_ssize_t, BATCH_HEADER.size)
_LOG_OVERHEAD = cython.declare(cython.Py_ssize_t, LOG_OVERHEAD)
_CODEC_MASK = cython.declare(cython.longlong, COMPRESSION_CODEC_MASK)
_TIMESTAMP_TYPE_MASK = cython.declare(cython.longlong, TIMESTAMP_TYPE_MASK)
_TRANSACTIONAL_MASK = cython.declare(cython.longlong, TRANSACTIONAL_FLAG_MASK)
_CONTROL_MASK = cython.declare(cython.longlong, CONTROL_FLAG_MASK)
_DELETE_HORIZON_MASK = cython.declare(cython.longlong, DELETE_HORIZON_FLAG_MASK)
# Room for one batch's keys and values after its head: 32 keys, 24 numbers, two names of up to 64 bytes.
_LINE_BOUND = cython.declare(cython.Py_ssize_t, 2048 + 2 * 64)
_LONG_MAX = cython.declare(cython.longlong, 2**63 - 1)
_LONG_MIN = cython.declare(cython.longlong, -_LONG_MAX - 1)


@cython.boundscheck(False)
@cython.wraparound(False)
def clean_batch_lines(data, i: cython.Py_ssize_t, stop: cython.Py_ssize_t, base: cython.longlong,
                      least: cython.longlong, most: cython.longlong, checksum, names: tuple, lines: list,
                      spans: list) -> tuple:
    """``kbatch pcap --format jsonl``'s run over a Records field, the lines of its clean batches written as they
    are taken: the v2 batches in ``data`` from index ``i`` (an entry start) on that start before index ``stop``
    and lie whole in it, framed as kbatch.format.framing says (``least``, ``most``: the bounds of a v2 batch's
    size field), holding a count that is not negative and the CRC ``checksum`` (CHECKSUMS[2]) gives -- the
    batches kbatch.walk.engine.clean_v2_batches hands out -- and whose header the rules a header alone answers
    (reserved bits, producer fields) say nothing of.  For each, its line's keys after "type" (fields_json's of
    the fields kbatch.reading.v2.batch_fields makes of its header), a newline ending them, are appended to
    ``lines``, and the offsets it takes (lastOffsetDelta + 1) to ``spans``.  ``base`` is the position of
    ``data[0]``; ``names`` the codec names by codec id (0-7), then the timestamp types (CreateTime,
    LogAppendTime).  It stops at the first batch that is not one, or whose line fields_json leaves to json.dumps.

    (the index where it stopped, the position where the last batch taken starts or -1, the records taken).
    """
    global _line
    limit: cython.Py_ssize_t = len(data)
    end: cython.Py_ssize_t
    last: cython.longlong = -1
    records: cython.longlong = 0
    pos: cython.longlong
    base_offset: cython.longlong
    batch_length: cython.longlong
    stored_crc: cython.longlong
    computed: cython.longlong
    attributes: cython.longlong
    last_offset_delta: cython.longlong
    base_timestamp: cython.longlong
    max_timestamp: cython.longlong
    partition_leader_epoch: cython.longlong
    producer_id: cython.longlong
    producer_epoch: cython.longlong
    base_sequence: cython.longlong
    count: cython.longlong
    is_transactional: cython.bint
    is_control: cython.bint
    codec: bytes
    timestamp_type: bytes
    crc = checksum.function
    crc_start: cython.Py_ssize_t = checksum.start
    plain_names = _plain_names_of.get(names)
    if plain_names is None:
        if len(_plain_names_of) >= 64:
            _plain_names_of.clear()
        plain_names = _plain_names_of[names] = [_plain_name(name) for name in names]
    if _line is None or _line.capacity < _LINE_BOUND:
        _line = _JsonWriter(_LINE_BOUND, bytearray(_LINE_BOUND))
    out: _JsonWriter = _line
    buf: cython.const[cython.uchar][::1] = data
    with memoryview(data) as view:
        while i < stop and i + _HEADER_SIZE <= limit:
            batch_length = _V2.batch_length.read(buf, i)
            end = i + _LOG_OVERHEAD + batch_length
            count = _V2.records_count.read(buf, i)
            if not framed_v2_batch(_V2.magic.read(buf, i), batch_length, least, most) or end > limit or count < 0:
                break
            computed = crc(view[i + crc_start:end])
            stored_crc = _V2.crc.read(buf, i)
            if computed != stored_crc:
                break
            base_offset = _V2.base_offset.read(buf, i)
            partition_leader_epoch = _V2.partition_leader_epoch.read(buf, i)
            attributes = _V2.attributes.read(buf, i)
            last_offset_delta = _V2.last_offset_delta.read(buf, i)
            base_timestamp = _V2.base_timestamp.read(buf, i)
            max_timestamp = _V2.max_timestamp.read(buf, i)
            producer_id = _V2.producer_id.read(buf, i)
            producer_epoch = _V2.producer_epoch.read(buf, i)
            base_sequence = _V2.base_sequence.read(buf, i)
            is_transactional = attributes & _TRANSACTIONAL_MASK != 0
            is_control = attributes & _CONTROL_MASK != 0
            if v2_reserved_bits(attributes) or producer_fields_problem(
                    is_transactional, is_control, producer_id, producer_epoch, base_sequence) is not None:
                break
            if not _sum_in_64_bits(base_offset, last_offset_delta):   # the last offset: fields_json leaves it too
                break
            codec = plain_names[attributes & _CODEC_MASK]
            timestamp_type = plain_names[8 + (attributes & _TIMESTAMP_TYPE_MASK != 0)]
            pos = base + i
            out.rewind()
            out.keys = 1   # (the line's "type" is written before it)
            # the values of fields_json's line of batch_fields' fields, as C numbers (a v2 batch's fit 64 bits)
            out.values[_POS_VALUE] = pos
            out.values[_SIZE_VALUE] = end - i
            out.values[_MAGIC_VALUE] = 2
            out.values[_BASE_OFFSET_VALUE] = base_offset
            out.values[_LAST_OFFSET_VALUE] = base_offset + last_offset_delta
            out.values[_OFFSET_FIELD_VALUE] = base_offset
            out.values[_COUNT_VALUE] = count
            out.values[_LENGTH_FIELD_VALUE] = batch_length
            out.values[_LEADER_EPOCH_VALUE] = partition_leader_epoch
            out.values[_CRC_VALUE] = stored_crc
            out.values[_COMPUTED_CRC_VALUE] = computed
            out.values[_ATTRIBUTES_VALUE] = attributes
            out.values[_LAST_OFFSET_DELTA_VALUE] = last_offset_delta
            out.values[_BASE_TIMESTAMP_VALUE] = base_timestamp
            out.values[_MAX_TIMESTAMP_VALUE] = max_timestamp
            if attributes & _DELETE_HORIZON_MASK:
                out.values[_DELETE_HORIZON_VALUE] = base_timestamp
            else:
                _null(out, _DELETE_HORIZON_VALUE)
            out.values[_PRODUCER_ID_VALUE] = producer_id
            out.values[_PRODUCER_EPOCH_VALUE] = producer_epoch
            out.values[_BASE_SEQUENCE_VALUE] = base_sequence
            out.values[_LAST_SEQUENCE_VALUE] = v2_last_sequence(base_sequence, last_offset_delta)
            out.values[_PAYLOAD_POS_VALUE] = pos + _HEADER_SIZE
            out.values[_PAYLOAD_SIZE_VALUE] = end - i - _HEADER_SIZE
            _null(out, _DECOMPRESSED_SIZE_VALUE)
            if not _write_batch(out, False, codec, timestamp_type, stored_crc == computed, is_transactional,
                                is_control):
                break
            out.bytes_(b"\n")
            lines.append(out.written())
            spans.append(last_offset_delta + 1)
            records += count
            last = pos
            i = end
    return i, last, records


@cython.final
@cython.cclass
class RunLines:
    """Runs of clean batches' lines (clean_batch_lines' ``lines`` and ``spans``) gathered end to end as
    ``kbatch pcap`` writes them, for one write of many runs: before each line, its run's head and the broker's
    offset of its batch's first record -- a Produce request's ``assigned`` for the first, each next one the one
    before plus the offsets that batch takes; null where none was assigned (a fetched batch, an unanswered one).
    """

    writer = cython.declare(_JsonWriter)

    def __init__(self, size: cython.Py_ssize_t = 1 << 20):
        self.writer = _JsonWriter(size, bytearray(size))

    @property
    def size(self) -> int:
        """How many bytes are gathered."""
        return self.writer.at

    def add(self, head: bytes, lines: list, spans: list, assigned) -> bool:
        """A run's lines gathered after those before; False, nothing gathered, where an offset is not a C long
        long (compiled: the caller writes them)."""
        return self._add(head, lines, spans, assigned)

    @cython.cfunc
    def _add(self, head: bytes, lines: list, spans: list, assigned) -> cython.bint:
        if assigned is not None and not _LONG_MIN <= assigned <= _LONG_MAX:
            return False
        out: _JsonWriter = self.writer
        n: cython.Py_ssize_t = len(lines)
        size: cython.Py_ssize_t = out.at + n * (len(head) + 20)   # (an offset takes at most 20 characters)
        k: cython.Py_ssize_t
        for k in range(n):
            size += len(lines[k])
        if size > out.capacity:
            size = max(size, 2 * out.capacity)
            grown = _JsonWriter(size, bytearray(size))
            grown.bytes_(out.written())
            out = self.writer = grown
        start: cython.Py_ssize_t = out.at
        if assigned is None:
            for k in range(n):
                out.bytes_(head)
                out.bytes_(b"null")
                out.bytes_(lines[k])
            return True
        offset: cython.longlong = assigned
        span: cython.longlong
        for k in range(n):
            out.bytes_(head)
            out.integer(offset)
            out.bytes_(lines[k])
            span = spans[k]
            if k + 1 < n:
                if not _sum_in_64_bits(offset, span):
                    out.at = start
                    return False
                offset += span
        return True

    def add_keyed(self, opening: bytes, names: tuple, values: tuple, closing: bytes, lines: list, spans: list,
                  assigned) -> bool:
        """:meth:`add` with the head object_keys(opening, names, values, closing) writes; False, nothing
        gathered, where it writes none."""
        keys: _JsonWriter = _keys_written(opening, names, values, closing)
        return keys is not None and self._add(keys.written(), lines, spans, assigned)

    def taken(self) -> memoryview:
        """The lines gathered, none left gathered: a view of them, to be written before the next add (which
        writes over them)."""
        out: _JsonWriter = self.writer
        gathered = memoryview(out.data)[:out.at]
        out.rewind()
        return gathered


def object_keys(opening: bytes, names: tuple, values: tuple, closing: bytes) -> bytes | None:
    """Keys of a JSON object as json.dumps (ensure_ascii=False) writes them, UTF-8: ``opening``, then each of
    ``names`` (a key spelt out with what goes before it: ``b', "topic": '``) followed by its value in
    ``values``, then ``closing``.  A value is None, an int of 64 bits, a finite float or a str; None where one
    is anything else (the caller's encoder writes those).  For kbatch pcap's capture keys, a Records field at a
    time: a str's JSON is kept (_json_texts: a capture has a few names, client ids and connections)."""
    written: _JsonWriter = _keys_written(opening, names, values, closing)
    return None if written is None else written.written()


@cython.cfunc
def _keys_written(opening: bytes, names: tuple, values: tuple, closing: bytes) -> _JsonWriter | None:
    """object_keys' keys written into the writer it reuses, which is given back; None where it writes them not."""
    global _keys, _float_written
    n: cython.Py_ssize_t = len(names)
    if len(values) != n:
        return None
    texts: list = [None] * n   # each value's JSON, where it is not an int
    size: cython.Py_ssize_t = len(opening) + len(closing)
    k: cython.Py_ssize_t
    for k in range(n):
        value = values[k]
        kind = type(value)
        if kind is int:
            if not _LONG_MIN <= value <= _LONG_MAX:
                return None
            size += 20
        elif value is None:
            texts[k] = b"null"
        elif kind is str:
            text = _json_texts.get(value)
            if text is None:
                if len(_json_texts) >= 4096:   # (a hostile capture's names are not all kept)
                    _json_texts.clear()
                # (json imported here, as a string comes: the commands that write no capture never load it)
                from json.encoder import encode_basestring   # what json.dumps writes a str with, ensure_ascii=False
                text = _json_texts[value] = encode_basestring(value).encode("utf-8", "surrogateescape")
            texts[k] = text
        elif kind is float and -_INFINITY < value < _INFINITY:
            if value is not _float_written[0]:   # (a message's time, again for each of its partitions)
                _float_written = (value, float.__repr__(value).encode())
            texts[k] = _float_written[1]
        else:
            return None
        size += len(names[k]) + (0 if texts[k] is None else len(texts[k]))
    if _keys is None or _keys.capacity < size:
        _keys = _JsonWriter(max(size, 4096), bytearray(max(size, 4096)))
    out: _JsonWriter = _keys
    out.rewind()
    out.bytes_(opening)
    for k in range(n):
        out.bytes_(names[k])
        if texts[k] is None:
            out.integer(values[k])
        else:
            out.bytes_(texts[k])
    out.bytes_(closing)
    return out


@cython.cfunc
@cython.exceptval(check=False)
def _sum_in_64_bits(a: cython.longlong, b: cython.longlong) -> cython.bint:
    """Whether a + b is a C long long, as the writer's numbers are compiled (plain Python writes any integer)."""
    if not cython.compiled:
        return True
    return a <= _LONG_MAX - b if b >= 0 else a >= _LONG_MIN - b


@cython.cfunc
def _write_batch(out: _JsonWriter, typed: cython.bint, codec, timestamp_type, crc_valid: cython.bint,
                 is_transactional: cython.bint, is_control: cython.bint) -> cython.bint:
    """Each key of BATCH_JSON_KEYS in turn with its value, and the object's end (``typed``: from "type" on; else
    from the key after it, the caller having written it): the numbers from ``out``'s value slots, the codec's and
    timestamp type's names as _plain_name gives them.  False where the line is json.dumps' to write."""
    if codec is None or timestamp_type is None or len(codec) > 64 or len(timestamp_type) > 64:
        return False
    if typed:
        _name(out, b"batch")                   # type
    # in BATCH_JSON_KEYS' order, each writing the next key
    _number(out, _POS_VALUE)
    _number(out, _SIZE_VALUE)
    _number(out, _MAGIC_VALUE)
    _number(out, _BASE_OFFSET_VALUE)
    _number(out, _LAST_OFFSET_VALUE)
    _number(out, _OFFSET_FIELD_VALUE)          # stored_offset
    _number(out, _COUNT_VALUE)
    _number(out, _LENGTH_FIELD_VALUE)          # batch_length
    _number(out, _LEADER_EPOCH_VALUE)          # partition_leader_epoch
    _number(out, _CRC_VALUE)
    _number(out, _COMPUTED_CRC_VALUE)          # crc_computed
    _flag(out, crc_valid)
    _number(out, _ATTRIBUTES_VALUE)
    _name(out, codec)
    _name(out, timestamp_type)
    _flag(out, is_transactional)
    _flag(out, is_control)
    _number(out, _LAST_OFFSET_DELTA_VALUE)
    _number(out, _BASE_TIMESTAMP_VALUE)
    _number(out, _BASE_TIMESTAMP_VALUE, True)  # base_timestamp_iso
    _number(out, _MAX_TIMESTAMP_VALUE)
    _number(out, _MAX_TIMESTAMP_VALUE, True)   # max_timestamp_iso
    _number(out, _DELETE_HORIZON_VALUE)        # delete_horizon_ms
    _number(out, _PRODUCER_ID_VALUE)
    _number(out, _PRODUCER_EPOCH_VALUE)
    _number(out, _BASE_SEQUENCE_VALUE)
    _number(out, _LAST_SEQUENCE_VALUE)
    _number(out, _PAYLOAD_POS_VALUE)
    _number(out, _PAYLOAD_SIZE_VALUE)
    _number(out, _DECOMPRESSED_SIZE_VALUE)
    out.key()                                  # findings (none: batch_json writes no batch with any)
    out.bytes_(b"[]}")
    assert out.keys == len(BATCH_JSON_KEYS), "kbatch.kernels.jsonl: a batch line's keys and values disagree"
    return True


_line = cython.declare(_JsonWriter, None)   # the writer batch_json reuses line after line (making one costs more)
_keys = cython.declare(_JsonWriter, None)   # and the one object_keys reuses
_json_texts: dict[str, bytes] = {}            # object_keys' strings -> their JSON, UTF-8
_float_written: tuple = (None, b"")           # object_keys' last float and its JSON (repr's shortest digits are slow)
_INFINITY = float("inf")
_plain_names: dict[str, bytes | None] = {}     # name -> _plain_name(name), for the few names batches have
_plain_names_of: dict[tuple, list] = {}        # clean_batch_lines' names -> _plain_name of each (one call a run)


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
def _value(out: _JsonWriter, slot: cython.int, value) -> cython.int:
    """A value slot of ``out`` set to an integer, or made null (None).  OverflowError past 64 bits, compiled."""
    if value is None:
        _null(out, slot)
    else:
        out.values[slot] = value
    return 0


@cython.cfunc
@cython.exceptval(check=False)
def _null(out: _JsonWriter, slot: cython.int) -> cython.void:
    out.nulls |= cython.cast(cython.ulonglong, 1) << slot


@cython.cfunc
@cython.exceptval(check=False)
def _number(out: _JsonWriter, slot: cython.int, as_date: cython.bint = False) -> cython.void:
    """The next key of BATCH_JSON_KEYS with the integer in a value slot of ``out`` (``as_date``: milliseconds as
    values.iso_timestamp shows them, as batch_dict has it) or null."""
    out.key()
    if out.nulls >> slot & 1:
        out.part(_NULL)
    elif as_date:
        out.iso(out.values[slot])
    else:
        out.integer(out.values[slot])


@cython.cfunc
@cython.exceptval(check=False)
def _flag(out: _JsonWriter, value: cython.bint) -> cython.void:
    """The next key with true or false."""
    out.key()
    out.part(_TRUE if value else _FALSE)


@cython.cfunc
@cython.exceptval(check=False)
def _name(out: _JsonWriter, name: bytes) -> cython.void:
    """The next key with a string whose JSON is ``name`` between quotes (_plain_name's)."""
    out.key()
    out.part(_QUOTE)
    out.bytes_(name)
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
