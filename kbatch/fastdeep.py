"""The fast pass of ``verify-crc --deep``: runs of plain v2 batches it has nothing to say about.

The full reader makes a Batch object of every entry, walks its records and
words every check as a finding, about 30 µs a batch in Python whatever the
batch says.  Most batches say nothing.  :class:`DeepRun` walks the v2 batches
lying whole in a buffer (the fast CRC pass's, :mod:`kbatch.fastscan`) without
an object per batch: the header unpacked with the struct derived from the
declaration, the CRC, the records walked by the one record decoder
(:mod:`kbatch.recordwalk`) into reused columns, and every rule --deep applies
to a batch asked of :mod:`kbatch.invariants` on plain values: the same
functions the full path words its findings from.

It is a quick accept, never a judge: at the first batch it cannot call clean
(a CRC or a rule that fails, a compressed or control batch, a record finding)
it stops and says why, and the file is read again by the full reader, which
reports exactly.  So a file it calls clean is one the full reader reports
nothing on, and nothing it does can change what kbatch reports, only how fast
(tests/test_fastdeep.py holds the two to that on every fixture and on damage).

Plain Python: the time per batch is the CRC and the record walk, both
compiled already (compiling this loop with Cython was measured at 5% less).
"""

from __future__ import annotations

from .checksums import CRC32C
from .invariants import (
    OffsetOrder,
    last_offset_delta_short,
    max_timestamp_differs,
    producer_fields_problem,
    segment_range_problem,
    v2_reserved_bits,
)
from .layouts import (
    BATCH_CRC_START,
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    LOG_OVERHEAD,
    MIN_ENTRY_SIZE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from .recordwalk import DEFAULT_CHUNK, RecordColumns, RecordWalker

_unpack_header = BATCH_HEADER.unpack_from
_HEADER_SIZE = BATCH_HEADER.size


class DeepRun:
    """Walks v2 batches buffer after buffer, carrying what --deep checks across them.

    ``entries``/``records`` count the batches called clean; ``reason`` is set when a batch is one the full
    reader must look at (and the walk stops there).  ``segment_base`` is the base offset the segment's file
    name says (None: not named so).
    """

    def __init__(self, segment_base: int | None, max_entry_size: int):
        self.entries = 0
        self.records = 0
        self.reason = None
        self._segment_base = segment_base
        self._max_entry_size = max_entry_size
        self._order = OffsetOrder()
        self._columns = RecordColumns(DEFAULT_CHUNK)

    def walk(self, data, view, i: int, limit: int, base) -> int:
        """Check the v2 batches lying whole in ``data[i:limit]`` (file position ``base + i`` on).

        Returns where the first entry starts that is not such a batch (the caller's to look at), or, with
        ``reason`` set, where the batch starts that the full reader must read.
        """
        min_size, max_size = MIN_ENTRY_SIZE[2], self._max_entry_size
        while i + _HEADER_SIZE <= limit:
            (base_offset, batch_length, _, magic, crc, attributes, last_offset_delta, base_timestamp,
             max_timestamp, producer_id, producer_epoch, base_sequence, count) = _unpack_header(data, i)
            if magic != 2 or not min_size <= batch_length <= max_size:
                return i                                   # framing: the fast CRC pass's to judge
            end = i + LOG_OVERHEAD + batch_length
            if end > limit:
                return i                                   # goes on past this buffer
            problem = self._batch_problem(view, i, end, base + i, base_offset, crc, attributes, last_offset_delta,
                                          base_timestamp, max_timestamp, producer_id, producer_epoch,
                                          base_sequence, count)
            if problem is not None:
                self.reason = f"{problem} at {base + i}"
                return i
            self.entries += 1
            self.records += count
            i = end
        return i

    def _batch_problem(self, view, i: int, end: int, pos, base_offset, crc,
                       attributes, last_offset_delta, base_timestamp, max_timestamp, producer_id, producer_epoch,
                       base_sequence, count):
        """Why the batch at ``data[i:end]`` is not one --deep has nothing to say about (None: it is)."""
        if CRC32C(view[i + BATCH_CRC_START:end]) != crc:
            return "a CRC mismatch"
        if count < 0:
            return "a negative recordsCount"
        if attributes & COMPRESSION_CODEC_MASK:
            return "a compressed batch (the full reader inflates it)"
        if attributes & CONTROL_FLAG_MASK:
            return "a control batch (the full reader decodes its markers)"
        if v2_reserved_bits(attributes):
            return "reserved attribute bits"
        problem = producer_fields_problem(bool(attributes & TRANSACTIONAL_FLAG_MASK), False, producer_id,
                                          producer_epoch, base_sequence)
        if problem is not None:
            return problem
        walker = RecordWalker(view[i + _HEADER_SIZE:end], count, base_offset, base_timestamp)
        while walker.fill(self._columns):
            pass
        if walker.findings or walker.order_breaks or walker.decoded != count:
            return "a record finding"
        if count and (last_offset_delta_short(base_offset, last_offset_delta, walker.last_offset)
                      or max_timestamp_differs(not attributes & TIMESTAMP_TYPE_MASK, max_timestamp,
                                               walker.max_timestamp)):
            return "a header field its records contradict"
        last_offset = base_offset + last_offset_delta
        if self._segment_base is not None:
            problem = segment_range_problem(base_offset, last_offset, self._segment_base)
            if problem is not None:
                return problem
        return self._order.step(base_offset, last_offset, pos)   # last: it moves the order on
