"""The partitions of a Produce request, a Produce response or a Fetch response read in one compiled call: for
kbatch.capture.batches, which uses it only compiled (as plain Python the straight-line readers of
kbatch.messages.readers are the faster).

A :class:`Program` is a message version's layout as kbatch.messages.programs writes it from the generic
decoder's plan; :meth:`Program.rows` follows it over a message's bytes, keeping the few fields the program asks
for in slots, and makes a row of the slots after each element of one array (a partition).  It gives up -- None,
and the readers read the message -- wherever they give up: a length or count past the bytes, a negative length
of a field that is not nullable, a string over 32767 bytes, a varint of more than five bytes, a tag.
"""

from __future__ import annotations

from typing import Callable

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython.unicode import PyUnicode_DecodeUTF8

# The operations of a program, each an opcode and its arguments (slot: where a value read is kept, -1 none);
# kbatch.messages.programs writes programs of them.
FIXED = 0        # width: bytes skipped
INT = 1          # width (2, 4 or 8), slot: a signed big-endian integer
STRING = 2       # nullable, compact, slot: a string (decoded as Java does, malformed bytes replaced)
BYTES = 3        # nullable, compact, slot: where the bytes start in slot, their length in slot + 1 (null: None, -1)
UUID = 4         # slot: a uuid (as the program's ``uuid_text`` writes it)
ARRAY = 5        # nullable, compact, body size, row: an array of structs, its element's program the next body size
#                  ints; with ``row``, a row of the slots is kept after each element
TAGS = 6         # the tagged fields' count of a flexible struct: any tag gives up

_FIXED = cython.declare(cython.int, FIXED)
_INT = cython.declare(cython.int, INT)
_STRING = cython.declare(cython.int, STRING)
_BYTES = cython.declare(cython.int, BYTES)
_UUID = cython.declare(cython.int, UUID)
_ARRAY = cython.declare(cython.int, ARRAY)
_TAGS = cython.declare(cython.int, TAGS)
_GIVE_UP = cython.declare(cython.Py_ssize_t, -1)
_LONGEST_PROGRAM = cython.declare(cython.Py_ssize_t, 256)
_LONGEST_STRING = cython.declare(cython.longlong, 0x7FFF)   # Readable.readString's limit (the decoder's too)
COMPILED = bool(cython.compiled)   # (kbatch.capture.batches takes the reader only compiled)


@cython.final
@cython.cclass
class Program:
    """One message version's program, held as C ints."""

    ops: cython.int[256]
    size: cython.Py_ssize_t
    data: cython.const[cython.uchar][::1]
    end: cython.Py_ssize_t
    slots: list
    rows_made: list
    _last_length: cython.longlong   # what _length read
    slot_count: cython.Py_ssize_t
    uuid_text: Callable[[bytes], str]

    def __init__(self, program: tuple, slot_count: int, uuid_text):
        """``program``'s operations, with ``slot_count`` slots; ``uuid_text`` writes a uuid's 16 bytes."""
        if len(program) > _LONGEST_PROGRAM:
            raise ValueError(f"a program of {len(program)} operations")
        self.slot_count = slot_count
        self.uuid_text = uuid_text
        i: cython.Py_ssize_t
        if not cython.compiled:
            self.ops = [0] * _LONGEST_PROGRAM
        for i in range(len(program)):
            self.ops[i] = program[i]
        self.size = len(program)

    def rows(self, data, pos: cython.Py_ssize_t):
        """(where the message ends, the slots at its end, a tuple of the slots after each row's element) of the
        message from ``pos`` of ``data`` to its end at most; None where the readers must read it.  A slot holds
        an int, a str (a uuid as ``uuid_text`` writes it) or None; a Records field's start and length take two
        (null: None and -1)."""
        self.data = data
        self.end = len(data)
        self.slots = [None] * self.slot_count
        self.rows_made = []
        end: cython.Py_ssize_t = self._run(0, self.size, pos)
        self.data = None   # (the message's bytes not held past the call)
        if end == _GIVE_UP:
            return None
        return end, tuple(self.slots), self.rows_made

    @cython.cfunc
    @cython.exceptval(-2)
    def _run(self, at: cython.Py_ssize_t, stop: cython.Py_ssize_t, pos: cython.Py_ssize_t) -> cython.Py_ssize_t:
        """The operations from ``at`` to ``stop`` over the bytes from ``pos``; where they end (_GIVE_UP)."""
        op: cython.int
        slot: cython.int
        length: cython.longlong
        count: cython.longlong
        body: cython.Py_ssize_t
        while at < stop:
            op = self.ops[at]
            if op == _FIXED:
                pos += self.ops[at + 1]
                if pos > self.end:
                    return _GIVE_UP
                at += 2
            elif op == _INT:
                if pos + self.ops[at + 1] > self.end:
                    return _GIVE_UP
                slot = self.ops[at + 2]
                if slot >= 0:
                    self.slots[slot] = self._signed(pos, self.ops[at + 1])
                pos += self.ops[at + 1]
                at += 3
            elif op == _STRING or op == _BYTES:
                pos = self._length(pos, self.ops[at + 2], 2 if op == _STRING else 4)
                if pos == _GIVE_UP:
                    return _GIVE_UP
                length = self._last_length
                slot = self.ops[at + 3]
                if length < 0:
                    if not self.ops[at + 1]:
                        return _GIVE_UP
                    if slot >= 0 and op == _STRING:
                        self.slots[slot] = None
                    elif slot >= 0:
                        self.slots[slot] = None
                        self.slots[slot + 1] = -1
                else:
                    if (op == _STRING and length > _LONGEST_STRING) or length > self.end - pos:
                        return _GIVE_UP
                    if slot >= 0:
                        if op == _STRING:   # (as Readable.readString decodes: malformed bytes replaced)
                            self.slots[slot] = self._text(pos, length)
                        else:
                            self.slots[slot] = pos
                            self.slots[slot + 1] = length
                    pos += length
                at += 4
            elif op == _UUID:
                if pos + 16 > self.end:
                    return _GIVE_UP
                self.slots[self.ops[at + 1]] = self.uuid_text(bytes(self.data[pos:pos + 16]))
                pos += 16
                at += 2
            elif op == _ARRAY:
                pos = self._length(pos, self.ops[at + 2], 4)
                if pos == _GIVE_UP:
                    return _GIVE_UP
                count = self._last_length
                body = self.ops[at + 3]
                if count < 0:
                    if not self.ops[at + 1]:
                        return _GIVE_UP
                elif count > self.end - pos:
                    return _GIVE_UP
                else:
                    for _ in range(count):
                        pos = self._run(at + 5, at + 5 + body, pos)
                        if pos == _GIVE_UP:
                            return _GIVE_UP
                        if self.ops[at + 4]:
                            self.rows_made.append(tuple(self.slots))
                at += 5 + body
            elif op == _TAGS:
                pos = self._length(pos, 1, 0)
                if pos == _GIVE_UP or self._last_length + 1 > 0:   # (a count past 2^31 - 1 is no tag: negative)
                    return _GIVE_UP
                at += 1
            else:
                return _GIVE_UP
        return pos

    @cython.cfunc
    @cython.exceptval(-2)
    def _length(self, pos: cython.Py_ssize_t, compact: cython.int, width: cython.int) -> cython.Py_ssize_t:
        """A length or count (kept in _last_length): a compact one an unsigned varint less one (as a Java int,
        ByteUtils.readUnsignedVarint), else a signed int of ``width`` bytes; where it ends (_GIVE_UP)."""
        value: cython.ulonglong = 0
        shift: cython.int = 0
        byte: cython.uint
        if not compact:
            if pos + width > self.end:
                return _GIVE_UP
            self._last_length = self._signed(pos, width)
            return pos + width
        while True:
            if pos >= self.end:
                return _GIVE_UP
            byte = self.data[pos]
            pos += 1
            value |= cython.cast(cython.ulonglong, byte & 0x7F) << shift
            if not byte & 0x80:
                value &= 0xFFFFFFFF
                self._last_length = (cython.cast(cython.longlong, value) - (1 << 32) if value >= (1 << 31)
                                     else cython.cast(cython.longlong, value)) - 1
                return pos
            shift += 7
            if shift > 28:
                return _GIVE_UP

    @cython.cfunc
    def _text(self, pos: cython.Py_ssize_t, length: cython.Py_ssize_t) -> str:
        """The UTF-8 bytes at ``pos`` decoded, malformed ones replaced (the readers' ``errors="replace"``)."""
        if length == 0:
            return ""
        if cython.compiled:   # (from where they lie: no slice or bytes made of them)
            text = PyUnicode_DecodeUTF8(cython.cast(cython.p_const_char, cython.address(self.data[pos])), length,
                                        b"replace")
        else:
            text = bytes(self.data[pos:pos + length]).decode("utf-8", errors="replace")
        return text

    @cython.cfunc
    @cython.exceptval(check=False)
    def _signed(self, pos: cython.Py_ssize_t, width: cython.int) -> cython.longlong:
        """The signed big-endian integer of ``width`` bytes (2, 4 or 8) at ``pos``."""
        value: cython.ulonglong = 0
        sign: cython.ulonglong = cython.cast(cython.ulonglong, 1) << (8 * width - 1)
        i: cython.int
        for i in range(width):
            value = (value << 8) | self.data[pos + i]
        if value < sign:
            return cython.cast(cython.longlong, value)
        # negative: -(2^(8 width) - value), written so that no C operation overflows (2^64 wraps to 0 unsigned)
        return -cython.cast(cython.longlong, (sign << 1) - value - 1) - 1
