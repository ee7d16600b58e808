"""``verify-crc --deep`` without an object per batch, for the batches it has nothing to say about.

The full reader makes a Batch object of every entry, walks its records into a
RecordChecks and words every check as a finding: about 30 µs a batch in
Python, whatever the batch says.  Most batches say nothing.
:class:`DeepRun` walks the v2 data batches (any codec; a control batch is the
full reader's) lying whole in the reader's window: each header unpacked with
the struct derived from the declaration, its CRC, its records inflated by the
reader's decompressor and walked by the one record decoder
(:mod:`kbatch.recordwalk`) into reused columns, and every rule --deep applies
asked of :mod:`kbatch.invariants` on plain values -- the functions the full
path words its findings from.

It only ever accepts: at a batch that breaks a rule, or an entry it does not
walk (a v0/v1 entry, a control batch, damage, a codec error), it stops, and
:func:`kbatch.verify.verify_stream` reads that one entry with the full
reader, which reports exactly, then hands back.  So the output is the full
reader's whatever the run takes (tests/test_fastdeep.py holds the two to the
same findings and counts on every fixture, every rule and random damage);
only the time differs.  Plain Python: the time of a batch is its CRC, its
inflating and its record walk, all compiled already.
"""

from __future__ import annotations

from . import records
from .checksums import CRC32C
from .codecs import CodecError, Decompressor
from .invariants import (
    OffsetOrder,
    last_offset_delta_short,
    max_timestamp_differs,
    producer_fields_problem,
    segment_range_problem,
    v2_reserved_bits,
)
from .reading.v2 import framed_batches
from .recordwalk import DEFAULT_CHUNK
from .structs import (
    BATCH_CRC_START,
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from .summary import FileSummary

_HEADER_SIZE = BATCH_HEADER.size


class DeepRun:
    """Walks the v2 data batches of one input that --deep has nothing to say about, counting them in
    ``summary`` and moving ``order`` on.

    ``order`` is the walk's OffsetOrder, shared with the full reader's batches; ``segment_base`` the base
    offset the segment's file name says (None: not named so); ``max_entry_size`` the reader's, and
    ``decompressor`` the reader's too (its limit, its buffer).
    """

    def __init__(self, summary: FileSummary, order: OffsetOrder, segment_base: int | None, max_entry_size: int,
                 decompressor: Decompressor):
        self.summary = summary
        self.order = order
        self.segment_base = segment_base
        self.max_entry_size = max_entry_size
        self.decompressor = decompressor
        self.walked = 0   # batches walked here (the rest went to the full reader)
        self.walker = None   # one record walker, reset for each batch (made at the first)
        self.columns = records.reused_columns(DEFAULT_CHUNK)

    def walk(self, window, pos: int, stop: int) -> int:
        """Walk the batches from ``pos`` (an entry start) that lie whole in the reader's window and start
        before ``stop``; where the walk stopped (``pos`` itself when the entry there is the full reader's).

        A batch is walked here when --deep reports nothing on it: everything the full reader reads of a v2
        batch (kbatch.reading.v2, kbatch.records) and checks of it (kbatch.verify.verify_stream), in one loop
        without a call per batch of its own, the cost of a batch of one record.  The offset order moves on
        only for a batch walked.
        """
        order, segment_base, decompressor = self.order, self.segment_base, self.decompressor
        walker, columns = self.walker, self.columns
        walked = records_walked = walked_bytes = 0
        for batch_pos, view, i, end, header in framed_batches(window, pos, stop, self.max_entry_size):
            (base_offset, _, _, _, crc, attributes, last_offset_delta, base_timestamp, max_timestamp, producer_id,
             producer_epoch, base_sequence, count) = header
            # What the header alone says first: a batch refused after its CRC and records would have them read
            # again by the full reader.
            if count < 0 or attributes & CONTROL_FLAG_MASK or v2_reserved_bits(attributes):
                break
            if producer_fields_problem(bool(attributes & TRANSACTIONAL_FLAG_MASK), False, producer_id,
                                       producer_epoch, base_sequence):
                break
            last_offset = base_offset + last_offset_delta
            if segment_base is not None and segment_range_problem(base_offset, last_offset, segment_base):
                break
            # The first batch of a walk is the full reader's: a part of a file read by a child hands its first
            # batch to the parent, which checks it against the part before (kbatch.verify.verify_in_parts).
            if order.last_offset is None or order.problem(base_offset):
                break
            if CRC32C(view[i + BATCH_CRC_START:end]) != crc:
                break
            # The records: in the window's bytes, walked in place (the walker keeps its hold on them from batch
            # to batch); or inflated, as kbatch.reading.v2.load_records inflates them.
            records_in, first, last = view.obj, i + _HEADER_SIZE, end
            codec_id = attributes & COMPRESSION_CODEC_MASK
            if codec_id:
                try:
                    records_in = decompressor.decompress_view(codec_id, view[first:end], 2)
                except CodecError:
                    break
                first, last = 0, len(records_in)
            # The decoder kbatch.records walks with (a test swaps in its pure-Python twin there), its columns too.
            if walker is None:
                walker = self.walker = records.RecordWalker(records_in, count, base_offset, base_timestamp, first,
                                                            last)
            else:
                walker.reset(records_in, count, base_offset, base_timestamp, first, last)
            while walker.fill(columns) and not walker.done:
                pass
            if walker.findings or walker.order_breaks or walker.decoded != count:
                break
            if count and (last_offset_delta_short(base_offset, last_offset_delta, walker.last_offset)
                          or max_timestamp_differs(not attributes & TIMESTAMP_TYPE_MASK, max_timestamp,
                                                   walker.max_timestamp)):
                break
            order.take(last_offset, batch_pos)
            walked += 1
            records_walked += count
            walked_bytes += end - i
            pos = batch_pos + end - i
        summary = self.summary
        summary.batches += walked
        summary.records += records_walked
        summary.batch_bytes += walked_bytes
        self.walked += walked
        return pos
