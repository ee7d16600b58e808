"""What ``kbatch grep`` looks for, asked of a record's key, value and header bytes where they lie: the one test.

:class:`RecordMatch` runs in :class:`kbatch.kernels.cleanruns.CleanBatches` on the columns of the batches that
walk takes (no object per record) and in :mod:`kbatch.ops.grep` on the records of the batches the full reader
reads, and the Spark records level asks it for the filters Spark hands over.  kbatch.ops.grep.Query builds it.
Its C-level face (for cleanruns) is ``match.pxd``.

Compiled by Cython where it can be; plain Python otherwise (tests/test_grep.py holds both to the same records).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

if cython.compiled:
    from cython.cimports.libc.string import memcmp
    from cython.cimports.kbatch.kernels.recordwalk import RecordColumns
else:
    from kbatch.kernels.recordwalk import RecordColumns


@cython.final
@cython.cclass
class RecordMatch:
    """A pattern -- a literal (ASCII case folded or not) or a compiled bytes regular expression; neither:
    any record -- looked for in a record's key and/or value (never in a null one); the literals its value
    must hold (``--field``'s prefilter: kbatch.ops.grep decides those records, ``undecided``); the headers it must
    carry (name bytes, and a RecordMatch of the value or None); the producer id of its batch (-2: any); and
    whether the match is inverted (``-v``, kbatch.ops.grep applies it).

    :meth:`record` is the test on one record's bytes; :meth:`any_row` asks it of every row of a walk's
    columns and says whether a row may be selected: a batch worth reading in full.  (Its C attributes are
    declared in match.pxd.)
    """

    def __init__(self, literal=None, regex=None, *, required=(), fold=False, in_key=True, in_value=True,
                 headers=(), value_literals=(), undecided=False, invert=False, producer_id=-2):
        self._literal_on = literal is not None
        self._literal = bytes(literal.lower() if fold else literal) if literal is not None else b""
        self._fold = fold
        self._search = regex.search if regex is not None else None
        self._required = [bytes(each.lower() if fold else each) for each in required]
        self._buffer_hit = True
        self._in_key, self._in_value = in_key, in_value
        self._headers = [(bytes(name), test) for name, test in headers]
        self._value_literals = [bytes(each) for each in value_literals]
        self.undecided, self.invert, self.producer_id = undecided, invert, producer_id

    @cython.ccall
    def wants_producer(self, producer_id: cython.longlong) -> cython.bint:
        return self.producer_id == -2 or producer_id == self.producer_id

    @cython.ccall
    def begin(self, source, first: cython.Py_ssize_t, last: cython.Py_ssize_t) -> cython.bint:
        """Before the rows of a batch whose records are ``source[first:last]``: the literal, or the bytes every
        match of the regular expression holds, are looked for in them all at once (a key or value is a piece
        of them), and where they are not found no row is asked.  Whether a row may match."""
        data: cython.const[cython.uchar][::1] = source
        needle: bytes
        self._buffer_hit = True
        for needle in [self._literal] if self._literal_on else self._required:
            if not _holds(data, first, last - first, needle, self._fold):
                self._buffer_hit = False
                break
        return self._buffer_hit

    @cython.ccall
    def record(self, key, value, headers) -> cython.bint:
        """Whether one record (key and value bytes or None; headers [(key, value or None)]) matches, before
        inversion and before kbatch.ops.grep's field test."""
        self._buffer_hit = True
        key_data: cython.const[cython.uchar][::1] = key if key is not None else b""
        value_data: cython.const[cython.uchar][::1] = value if value is not None else b""
        if not self._key_value(key_data, key, 0, -1 if key is None else len(key),
                               value_data, value, 0, -1 if value is None else len(value)):
            return False
        for name, test in self._headers:
            for header_key, header_value in headers:
                name_data: cython.const[cython.uchar][::1] = header_key
                header_data: cython.const[cython.uchar][::1] = header_value if header_value is not None else b""
                if self._header_is(name, test, name_data, 0, len(header_key), header_data, header_value, 0,
                                   -1 if header_value is None else len(header_value)):
                    break
            else:
                return False
        return True

    @cython.ccall
    def any_row(self, columns: RecordColumns, source) -> cython.bint:
        """Whether a record held in ``columns`` (walked in ``source``) may be selected: it matches, or (-v)
        it does not; undecided ones (--field) may be either."""
        data: cython.const[cython.uchar][::1] = source
        row: cython.Py_ssize_t
        for row in range(columns.n):
            if self._candidate(columns, data, source, row):
                return True
        return False

    @cython.ccall
    def rows(self, columns: RecordColumns, source) -> list:
        """The rows of ``columns`` that may be selected (as any_row asks), for a batch read in full."""
        data: cython.const[cython.uchar][::1] = source
        self._buffer_hit = True
        return [row for row in range(columns.n) if self._candidate(columns, data, source, row)]

    @cython.cfunc
    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.initializedcheck(False)
    def _candidate(self, columns: RecordColumns, data: cython.const[cython.uchar][::1], source,
                   row: cython.Py_ssize_t) -> cython.bint:
        h: cython.Py_ssize_t
        found: cython.bint = self._key_value(data, source, columns._key_pos[row], columns._key_length[row],
                                             data, source, columns._value_pos[row], columns._value_length[row])
        if found and self._headers:
            for name, test in self._headers:
                found = False
                for h in range(columns._first_header[row], columns._first_header[row] + columns._headers_count[row]):
                    if self._header_is(name, test, data, columns._h_key_pos[h], columns._h_key_length[h], data,
                                       source, columns._h_value_pos[h], columns._h_value_length[h]):
                        found = True
                        break
                if not found:
                    break
        return (found and not self.invert) or (self.invert and (not found or self.undecided))

    @cython.cfunc
    def _key_value(self, key_data: cython.const[cython.uchar][::1], key_source, key_pos: cython.Py_ssize_t,
                   key_length: cython.Py_ssize_t, value_data: cython.const[cython.uchar][::1], value_source,
                   value_pos: cython.Py_ssize_t, value_length: cython.Py_ssize_t) -> cython.bint:
        """The pattern in the key or the value (as asked), and every literal in the value."""
        literal: bytes
        if self._literal_on or self._search is not None:
            if not ((self._in_key and self._text(key_data, key_source, key_pos, key_length))
                    or (self._in_value and self._text(value_data, value_source, value_pos, value_length))):
                return False
        if self._value_literals:
            for literal in self._value_literals:
                if value_length < 0 or not _holds(value_data, value_pos, value_length, literal, False):
                    return False
        return True

    @cython.cfunc
    def _text(self, data: cython.const[cython.uchar][::1], source, pos: cython.Py_ssize_t,
              length: cython.Py_ssize_t) -> cython.bint:
        """The pattern in one key or value (``source``: the object ``data`` views, which a regex reads)."""
        needle: bytes
        if length < 0 or not self._buffer_hit:
            return False
        if self._literal_on:
            return _holds(data, pos, length, self._literal, self._fold)
        if self._required:
            for needle in self._required:
                if not _holds(data, pos, length, needle, self._fold):
                    return False
        return self._search(memoryview(source)[pos:pos + length]) is not None

    @cython.cfunc
    def _header_is(self, name: bytes, test, key_data: cython.const[cython.uchar][::1], key_pos: cython.Py_ssize_t,
                   key_length: cython.Py_ssize_t, value_data: cython.const[cython.uchar][::1], value_source,
                   value_pos: cython.Py_ssize_t, value_length: cython.Py_ssize_t) -> cython.bint:
        """Whether a header (its key and value where they lie) is named ``name`` and its value passes ``test``."""
        value_test: RecordMatch
        if key_length != len(name) or not _holds(key_data, key_pos, key_length, name, False):
            return False
        if test is None:
            return True
        value_test = test
        return value_test._key_value(key_data, None, 0, -1, value_data, value_source, value_pos, value_length)


# How common a byte is in keys and values (text, JSON): the least common byte of a literal is the one looked
# for first.  Lower-case letters by their frequency in English, JSON's punctuation and the space above them.
_COMMON_TEXT = b' "e:,taoinsrhldcumfpgwybvkxjqz0123456789'
_BYTE_COMMONNESS = cython.declare(cython.uchar[256], [0] * 256)
for _rank, _byte in enumerate(_COMMON_TEXT):
    _BYTE_COMMONNESS[_byte] = len(_COMMON_TEXT) + 1 - _rank


# Places a match may start, screened as one block: the screen's loop has no branch, so the C compiler runs it
# on vector registers (many places a step), and a block is looked at place by place only where it passed.
_BLOCK = cython.declare(cython.Py_ssize_t, 64)


@cython.cfunc
@cython.boundscheck(False)
@cython.wraparound(False)
def _holds(data: cython.const[cython.uchar][::1], pos: cython.Py_ssize_t, length: cython.Py_ssize_t,
           literal: bytes, fold: cython.bint) -> cython.bint:
    """Whether ``data[pos:pos+length]`` holds ``literal`` (``fold``: ASCII letters of either case, the
    literal given in lower case)."""
    m: cython.Py_ssize_t = len(literal)
    if m == 0:
        return True
    if not cython.compiled:
        piece = bytes(data[pos:pos + length])
        return literal in (piece.lower() if fold else piece)
    needle: cython.const[cython.uchar][::1] = literal
    i: cython.Py_ssize_t
    k: cython.Py_ssize_t
    c: cython.uchar
    last: cython.Py_ssize_t = pos + length - m   # the last place a match may start
    if length < m:
        return False
    if not fold:
        return _holds_exactly(cython.address(data[0]), pos, last, cython.address(needle[0]), m)
    for i in range(pos, last + 1):
        for k in range(m):
            c = data[i + k]
            if fold and 65 <= c <= 90:
                c += 32
            if c != needle[k]:
                break
        else:
            return True
    return False


@cython.cfunc
@cython.exceptval(check=False)
@cython.boundscheck(False)
@cython.wraparound(False)
def _holds_exactly(data: cython.p_const_uchar, pos: cython.Py_ssize_t, last: cython.Py_ssize_t,
                   needle: cython.p_const_uchar, m: cython.Py_ssize_t) -> cython.bint:
    """Whether a match of ``needle`` (``m`` bytes) starts in ``data`` at a place in [pos, last]: a place passes
    the screen when two bytes of the needle are where they would be -- its least common (by _BYTE_COMMONNESS)
    and the end of it farther from that one (bytes apart are less often found together than neighbours, as in
    "-4" of "user-4..." for "order-42") -- and memcmp then compares the whole needle there."""
    a: cython.Py_ssize_t = 0
    k: cython.Py_ssize_t
    i: cython.Py_ssize_t
    for k in range(1, m):
        if _BYTE_COMMONNESS[needle[k]] < _BYTE_COMMONNESS[needle[a]]:
            a = k
    b: cython.Py_ssize_t = 0 if a >= m - 1 - a else m - 1   # (a itself in a needle of one byte)
    at_a: cython.p_const_uchar = data + a
    at_b: cython.p_const_uchar = data + b
    byte_a: cython.uchar = needle[a]
    byte_b: cython.uchar = needle[b]
    passed: cython.uchar
    i = pos
    while i + _BLOCK <= last + 1:
        passed = 0
        for k in range(i, i + _BLOCK):
            passed |= (at_a[k] == byte_a) & (at_b[k] == byte_b)
        if passed:
            for k in range(i, i + _BLOCK):
                if at_a[k] == byte_a and at_b[k] == byte_b and memcmp(data + k, needle, m) == 0:
                    return True
        i += _BLOCK
    for k in range(i, last + 1):
        if at_a[k] == byte_a and at_b[k] == byte_b and memcmp(data + k, needle, m) == 0:
            return True
    return False
