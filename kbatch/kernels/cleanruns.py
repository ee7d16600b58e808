"""``verify-crc --deep``'s fast pass: the v2 data batches it has nothing to say about, walked in one compiled
loop without an object per batch (used by kbatch.walk.deep; by kbatch.ops.grep with a RecordMatch, taking only the
batches where no record is selected); :func:`batch_into_rows`, a v2 data batch's records into the records
table's rows without a Python object (kbatch.spark.record_columns); and :func:`headers_taken`, the headers of the
batches the full reader has nothing to say about, gathered for the batches table's columns
(kbatch.spark.batch_columns).

Compiled by Cython where it can be; plain Python otherwise (tests/test_fastdeep.py holds both to the full
reader).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

if cython.compiled:
    from cython.cimports.libc.string import memcpy
    from cython.cimports.kbatch.kernels.batchrules import (V2Header, framed_v2_batch, last_offset_delta_short,
                                                           max_timestamp_differs, offset_order_problem,
                                                           producer_fields_problem, segment_range_problem,
                                                           v2_reserved_bits)
    from cython.cimports.kbatch.kernels.match import RecordMatch
    from cython.cimports.kbatch.kernels.recordwalk import RecordColumns, RecordRows, RecordWalker
else:
    from kbatch.kernels.batchrules import (V2Header, framed_v2_batch, last_offset_delta_short, max_timestamp_differs,
                                           offset_order_problem, producer_fields_problem, segment_range_problem,
                                           v2_reserved_bits)
    from kbatch.kernels.match import RecordMatch
    from kbatch.kernels.recordwalk import RecordColumns, RecordRows, RecordWalker

from kbatch.kernels.batchrules import V2_HEADER
from kbatch.kernels.recordwalk import any_key_or_value_starts_with_zero
from kbatch.format.structs import (
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

# The rules of kbatch.reading.invariants.V2_BATCH_RULES that CleanBatches.walk checks (each by the function of
# kbatch.kernels.batchrules the full reader words it from): kbatch.walk.deep runs no fast pass unless every
# rule the full reader holds a v2 batch to is here.  _control_records holds for every batch taken: a control
# batch is always the full reader's.
RULES = frozenset({"_reserved_bits", "_producer_checks", "_last_offset_delta", "_offset_delta_order",
                   "_max_timestamp", "_control_records"})

_CODEC_MASK = cython.declare(cython.longlong, COMPRESSION_CODEC_MASK)
_TIMESTAMP_TYPE_MASK = cython.declare(cython.longlong, TIMESTAMP_TYPE_MASK)
_TRANSACTIONAL_MASK = cython.declare(cython.longlong, TRANSACTIONAL_FLAG_MASK)
_CONTROL_MASK = cython.declare(cython.longlong, CONTROL_FLAG_MASK)


_V2 = cython.declare(V2Header, V2_HEADER)   # a v2 header's fields, each read where it lies
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
    # kbatch grep: a batch in which a record may be selected is not taken (the full reader reads it)
    match = cython.declare(RecordMatch, visibility="public")

    def __init__(self, chunk: cython.Py_ssize_t = 1024, match: RecordMatch = None):
        self.walker = RecordWalker(b"", 0, 0, 0)
        self.columns = RecordColumns(chunk)   # a batch of more records fills them more than once
        self.batches = self.records = self.batch_bytes = 0
        self.last_offset = self.last_pos = None
        self.match = match

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
        match: RecordMatch = self.match
        look: cython.bint
        selected: cython.bint
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
            batch_length = _V2.batch_length.read(buf, i)
            end = i + _LOG_OVERHEAD + batch_length
            if not framed_v2_batch(_V2.magic.read(buf, i), batch_length, least, most) or end > limit:
                break
            # What the header alone says first: a batch refused after its CRC and records would have them
            # read again by the full reader.
            count = _V2.records_count.read(buf, i)
            attributes = _V2.attributes.read(buf, i)
            if count < 0 or attributes & _CONTROL_MASK or v2_reserved_bits(attributes):
                break
            if producer_fields_problem(attributes & _TRANSACTIONAL_MASK != 0, False,
                                       _V2.producer_id.read(buf, i), _V2.producer_epoch.read(buf, i),
                                       _V2.base_sequence.read(buf, i)) is not None:
                break
            base_offset = _V2.base_offset.read(buf, i)
            last_offset_delta: object = _V2.last_offset_delta.read(buf, i)   # the offset rules count exactly
            batch_last_offset = base_offset + last_offset_delta
            if segment_base is not None and segment_range_problem(base_offset, batch_last_offset,
                                                                  segment_base) is not None:
                break
            if offset_order_problem(last_offset, base_offset) is not None:
                break
            if crc(view[i + crc_start:end]) != _V2.crc.read(buf, i):
                break
            codec_id = attributes & _CODEC_MASK
            if codec_id:   # as kbatch.reading.v2.load_records inflates them
                records = inflate(codec_id, view[i + _HEADER_SIZE:end])
                if records is None:
                    break
                first, last = 0, len(records)
            else:   # walked where they lie: the walker keeps its hold on data from batch to batch
                records, first, last = data, i + _HEADER_SIZE, end
            base_timestamp = _V2.base_timestamp.read(buf, i)
            walker.reset(records, count, base_offset, base_timestamp, first, last)
            look = match is not None and match.wants_producer(_V2.producer_id.read(buf, i)) and (
                match.begin(records, first, last) or match.invert)
            selected = False
            while walker.fill(columns):
                if look and not selected:
                    selected = match.any_row(columns, records)
                if walker.done:
                    break
            if walker.findings or walker.order_breaks or walker.decoded != count:
                break
            if count and (last_offset_delta_short(base_offset, last_offset_delta, walker.last_offset)
                          or max_timestamp_differs(not attributes & _TIMESTAMP_TYPE_MASK,
                                                   _V2.max_timestamp.read(buf, i), walker.max_timestamp)):
                break
            if selected:
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


# -- scan --records: a batch's records into the records table's rows -------------------------------------------

# What batch_into_rows answers: the batch's records were taken, or why not (the caller acts and asks again, or
# stops and leaves the batch to the full reader).
TAKEN = 0
FULL = 1             # the rows hold a record batch's worth (the caller flushes them): nothing taken
NOT_TAKEN = 2        # a control batch, a walk with a finding, a key or value in the schema registry's framing
NO_ROOM = 3          # its records do not fit in the rows' record batch (flushed first, the batch is taken next)
COMPRESSED = 4       # hand the inflated records over as ``records``
ASK_VISIBILITY = 5   # hand its visible_to_read_committed over
# ``visible``'s values beyond -1 (null), 0 and 1: each non-transactional batch visible (a view with no last stable
# offset) and the others asked; each batch asked.
VISIBLE_UNLESS_TRANSACTIONAL = 2
ASK_EACH = 3


@cython.ccall
def batch_into_rows(rows: RecordRows, walker: RecordWalker, columns: RecordColumns, window, i: cython.Py_ssize_t,
                    end: cython.Py_ssize_t, count: cython.longlong, batch_pos: cython.longlong, records,
                    visible: cython.int, file: cython.int, max_rows: cython.Py_ssize_t,
                    max_bytes: cython.Py_ssize_t) -> cython.int:
    """The records of the v2 batch at ``window[i:end]`` (one kbatch.walk.engine.clean_v2_batches handed out:
    ``count`` records, at file position ``batch_pos``) added to ``rows`` with its header's fields, walked with
    ``walker`` into ``columns`` (whose capacity bounds a batch taken: a larger one does not walk whole); the answer
    says whether (TAKEN and the others above).

    ``records`` is None, or the batch's records inflated (asked for by COMPRESSED); ``visible`` its
    visible_to_read_committed (-1: null), or one of the two asking values above; ``file`` the index of its file
    (kbatch.spark.source.ColumnarRecords.files).  ``max_rows`` and ``max_bytes`` say when ``rows`` are full.
    """
    buf: cython.const[cython.uchar][::1] = window
    attributes: cython.longlong = _V2.attributes.read(buf, i)
    codec_id: cython.longlong = attributes & _CODEC_MASK
    transactional: cython.bint = attributes & _TRANSACTIONAL_MASK != 0
    base_offset: cython.longlong
    if rows.n > 0 and (rows.n >= max_rows or rows.data_bytes >= max_bytes):
        return FULL
    if attributes & _CONTROL_MASK:
        return NOT_TAKEN   # (its records are shown by their decoded markers)
    if visible == ASK_EACH or (visible == VISIBLE_UNLESS_TRANSACTIONAL and transactional):
        return ASK_VISIBILITY
    if visible == VISIBLE_UNLESS_TRANSACTIONAL:
        visible = 1
    base_offset = _V2.base_offset.read(buf, i)
    if codec_id:
        if records is None:
            return COMPRESSED
        walker.reset(records, count, base_offset, _V2.base_timestamp.read(buf, i))
    else:   # where they lie in the window
        records = window
        walker.reset(window, count, base_offset, _V2.base_timestamp.read(buf, i), i + _HEADER_SIZE, end)
    walker.fill(columns)
    if not walker.done or (columns.n and any_key_or_value_starts_with_zero(columns, records)):
        return NOT_TAKEN
    if rows.n + columns.n > max_rows:
        return NO_ROOM
    if columns.n:
        rows.add(columns, records, batch_pos, base_offset, codec_id, attributes & _TIMESTAMP_TYPE_MASK != 0,
                 _V2.max_timestamp.read(buf, i), _V2.base_sequence.read(buf, i),
                 _V2.producer_id.read(buf, i), transactional, visible, file)
    return TAKEN


@cython.cfunc
@cython.exceptval(-2, check=True)
def _clean_v2_end(buf: cython.const[cython.uchar][::1], window, i: cython.Py_ssize_t, least: cython.longlong,
                  most: cython.longlong, crc, crc_start: cython.Py_ssize_t) -> cython.Py_ssize_t:
    """Where the entry at ``window[i:]`` ends if it is one kbatch.walk.engine.clean_v2_batches hands out (a v2 batch
    framed as kbatch.format.framing says, lying whole in the window, a count that is not negative, its CRC holding:
    clean_v2_batches' checks, in its order), else -1.  ``buf`` is ``window``'s bytes; ``crc`` None: the CRC held at
    an earlier walk of these very bytes (batches_into_rows), not computed again."""
    limit: cython.Py_ssize_t = buf.shape[0]
    if i + _HEADER_SIZE > limit:
        return -1
    batch_length: cython.longlong = _V2.batch_length.read(buf, i)
    end: cython.Py_ssize_t = i + _LOG_OVERHEAD + batch_length
    if not framed_v2_batch(_V2.magic.read(buf, i), batch_length, least, most) or end > limit:
        return -1   # not a v2 batch, a size that is damage, or one going on past the window
    if _V2.records_count.read(buf, i) < 0:
        return -1
    if crc is not None and crc(window[i + crc_start:end]) != _V2.crc.read(buf, i):
        return -1
    return end


# What batches_into_rows answers besides batch_into_rows's answers: the entry at the index it hands back is not
# one kbatch.walk.engine.clean_v2_batches hands out, or it starts at ``last`` or after.
NOT_CLEAN = 6


@cython.ccall
def batches_into_rows(rows: RecordRows, walker: RecordWalker, columns: RecordColumns, window, i: cython.Py_ssize_t,
                      last: cython.Py_ssize_t, least: cython.longlong, most: cython.longlong, checksum,
                      base: cython.longlong, visible: cython.int, file: cython.int, max_rows: cython.Py_ssize_t,
                      max_bytes: cython.Py_ssize_t) -> tuple:
    """:func:`batch_into_rows` for each batch kbatch.walk.engine.clean_v2_batches would hand out from
    ``window[i:]`` (a memoryview; ``i`` an entry start, ``base`` the file position of ``window[0]``) that starts
    before ``last``, in one loop, up to the first that is not TAKEN: (its index, the answer, the batches taken,
    the index of the last one taken or -1).  ``checksum`` is a v2 batch's (kbatch.format.framing.CHECKSUMS[2]), or
    None where an earlier walk of the same bytes found every CRC holding (kbatch.spark.source._walked): the framing
    is checked as ever, the CRCs not computed again.  ``least`` and ``most`` are the bounds of a batch's size field
    (kbatch.format.framing.size_bounds).  (tests/test_spark_columns.py holds the rows to the full reader's.)"""
    buf: cython.const[cython.uchar][::1] = window
    crc = None if checksum is None else checksum.function
    crc_start: cython.Py_ssize_t = 0 if checksum is None else checksum.start
    end: cython.Py_ssize_t
    answer: cython.int
    taken: cython.Py_ssize_t = 0
    last_taken: cython.Py_ssize_t = -1
    while i < last:
        end = _clean_v2_end(buf, window, i, least, most, crc, crc_start)
        if end < 0:
            break
        answer = batch_into_rows(rows, walker, columns, window, i, end, _V2.records_count.read(buf, i), base + i,
                                 None, visible, file, max_rows, max_bytes)
        if answer != TAKEN:
            return i, answer, taken, last_taken
        taken += 1
        last_taken = i
        i = end
    return i, NOT_CLEAN, taken, last_taken


@cython.ccall
def counted_batches(window, i: cython.Py_ssize_t, last: cython.Py_ssize_t, least: cython.longlong,
                    most: cython.longlong, checksum) -> tuple:
    """The batches kbatch.walk.engine.clean_v2_batches would hand out from ``window[i:]`` (a memoryview; ``i`` an
    entry start) that start before ``last``, counted in one loop (verify-crc's CRC run, kbatch.walk.crcrun: no
    Python object per batch): (the index of the first entry that is not one, the batches, the records they count,
    the index of the last one or -1)."""
    buf: cython.const[cython.uchar][::1] = window
    crc = checksum.function
    crc_start: cython.Py_ssize_t = checksum.start
    end: cython.Py_ssize_t
    taken: cython.Py_ssize_t = 0
    records: cython.longlong = 0
    last_taken: cython.Py_ssize_t = -1
    while i < last:
        end = _clean_v2_end(buf, window, i, least, most, crc, crc_start)
        if end < 0:
            break
        records += _V2.records_count.read(buf, i)
        taken += 1
        last_taken = i
        i = end
    return i, taken, records, last_taken


@cython.ccall
@cython.boundscheck(False)
@cython.wraparound(False)
def headers_taken(window, i: cython.Py_ssize_t, last: cython.Py_ssize_t, least: cython.longlong, most: cython.longlong,
                  checksum, uncompressed_only: cython.bint, headers: cython.uchar[::1],
                  positions: cython.longlong[::1], held: cython.Py_ssize_t, base: cython.longlong) -> tuple:
    """The batches kbatch.walk.engine.clean_v2_batches would hand out from ``window[i:]`` (a memoryview; ``i`` an
    entry start, ``base`` the file position of ``window[0]``) that start before ``last`` (with ``uncompressed_only``,
    up to the first compressed one), in one loop: each one's header (BATCH_HEADER.size bytes) copied into row
    ``held`` on of ``headers`` and its file position into ``positions``, until those are full. (the index of the
    first entry not taken, the rows now held, the index of the last one taken or -1). The batches level's columns
    (kbatch.spark.batch_columns); its CRC is the one stored, which the computed one equals."""
    buf: cython.const[cython.uchar][::1] = window
    crc = checksum.function
    crc_start: cython.Py_ssize_t = checksum.start
    capacity: cython.Py_ssize_t = len(positions)
    end: cython.Py_ssize_t
    last_taken: cython.Py_ssize_t = -1
    while i < last and held < capacity:
        if uncompressed_only and i + _HEADER_SIZE <= buf.shape[0] and _V2.attributes.read(buf, i) & _CODEC_MASK:
            break   # (the full reader's, which inflates it: before its CRC, which that reader computes)
        end = _clean_v2_end(buf, window, i, least, most, crc, crc_start)
        if end < 0:
            break
        if cython.compiled:
            memcpy(cython.address(headers[held * _HEADER_SIZE]), cython.address(buf[i]), _HEADER_SIZE)
        else:
            headers[held * _HEADER_SIZE:(held + 1) * _HEADER_SIZE] = buf[i:i + _HEADER_SIZE]
        positions[held] = base + i
        held += 1
        last_taken = i
        i = end
    return i, held, last_taken


_LONG_MAX = cython.declare(cython.longlong, 2**63 - 1)   # Java's Long.MAX_VALUE, MIN_VALUE
_LONG_MIN = cython.declare(cython.longlong, -_LONG_MAX - 1)


@cython.ccall
def untransacted_batches(window, i: cython.Py_ssize_t, last: cython.Py_ssize_t, least: cython.longlong,
                         most: cython.longlong, checksum, last_offset) -> tuple:
    """The batches kbatch.walk.engine.clean_v2_batches would hand out from ``window[i:]`` (a memoryview; ``i`` an
    entry start) that start before ``last`` and are neither transactional nor control, in one loop (a partition's
    read_committed view needs only their last offsets: kbatch.ops.visibility): (the index of the first entry that
    is not one, the greatest of ``last_offset`` (None: none yet) and their last offsets, the index of the last one
    taken or -1).  A last offset beyond a Java long is the full reader's to count."""
    buf: cython.const[cython.uchar][::1] = window
    crc = checksum.function
    crc_start: cython.Py_ssize_t = checksum.start
    end: cython.Py_ssize_t
    base_offset: cython.longlong
    delta: cython.longlong
    batch_last: cython.longlong
    known: cython.bint = last_offset is not None
    greatest: cython.longlong = 0
    last_taken: cython.Py_ssize_t = -1
    if known:
        if not _LONG_MIN <= last_offset <= _LONG_MAX:
            return i, last_offset, -1
        greatest = last_offset
    while i < last:
        end = _clean_v2_end(buf, window, i, least, most, crc, crc_start)
        if end < 0 or _V2.attributes.read(buf, i) & (_TRANSACTIONAL_MASK | _CONTROL_MASK):
            break
        base_offset = _V2.base_offset.read(buf, i)
        delta = _V2.last_offset_delta.read(buf, i)
        if (delta > 0 and base_offset > _LONG_MAX - delta) or (delta < 0 and base_offset < _LONG_MIN - delta):
            break
        batch_last = base_offset + delta
        if not known or batch_last > greatest:   # (Batch.last_offset)
            greatest, known = batch_last, True
        last_taken = i
        i = end
    return i, greatest if known else None, last_taken
