"""The records level's rows by whole columns, straight from the walk: no Batch made of a batch whose records go
as columns.

The full reader makes a Batch of every entry (about 25 µs in Python, whatever the batch holds) before its
records are walked into columns.  For a v2 data batch whose CRC holds, the records table's rows need no
more than its header and its records' columns: :class:`RecordColumnsRun` is a run of the walk engine
(kbatch.walk.engine) over those.  The batches :func:`kbatch.walk.engine.clean_v2_batches` would hand out
are taken in one compiled loop (kbatch.kernels.cleanruns.batches_into_rows: no Python object per batch), each
by kbatch.kernels.cleanruns.batch_into_rows, which reads its header, walks its records
with one reused walker (kbatch.kernels.recordwalk) and adds them with the header's fields to the rows of
:class:`kbatch.spark.source.ColumnarRecords` (kbatch.kernels.recordwalk.RecordRows), which become the Arrow
record batch; only a compressed batch (inflated here) and, where the partition has an open transaction or a
transactional batch is met, the batch's visibility (asked of the view) come back to Python.

It only ever accepts: a control batch (its records are shown by their decoded markers), one whose records
do not fit in one chunk, one whose records the codec cannot inflate, or one holding a key or value in the
schema registry's framing (its ids are read into each row) stops it, and the full reader reads that entry
as before (kbatch.spark.source.record_batches).  tests/test_spark_columns.py holds the two ways to the same
rows on every fixture, damaged ones too, compiled and pure Python.
"""

from __future__ import annotations

from types import SimpleNamespace

from kbatch.format.codecs import CodecError, Decompressor
from kbatch.format.framing import CHECKSUMS, size_bounds
from kbatch.format.structs import BATCH_HEADER, COMPRESSION_CODEC_MASK, LOG_OVERHEAD, TRANSACTIONAL_FLAG_MASK
from kbatch.kernels.cleanruns import (ASK_EACH, ASK_VISIBILITY, COMPRESSED, NO_ROOM, TAKEN,
                                      VISIBLE_UNLESS_TRANSACTIONAL, batch_into_rows, batches_into_rows)
from kbatch.kernels.recordwalk import RecordWalker
from kbatch.reading.records import reused_columns
from kbatch.reading.v2 import batch_in_view

_unpack_header = BATCH_HEADER.unpack_from
_NAMES = BATCH_HEADER.names
_ATTRIBUTES_AT = BATCH_HEADER.offsets["attributes"]
_unpack_frame = BATCH_HEADER.picker("batch_length", "records_count").unpack_from
_CHECKSUM = CHECKSUMS[2]


class RecordColumnsRun:
    """Takes the v2 data batches whose records go to ``records`` (a ColumnarRecords) as columns.

    ``rows`` and ``data_bytes`` say when a record batch's worth is held (``full``: the walk hands back to have
    it flushed); a batch of more than ``rows`` records is the full reader's.  ``committed`` is the partition's
    read_committed view (kbatch.ops.visibility), or None: the caller sets it for each file it walks.
    """

    def __init__(self, records, max_entry_size: int, decompressed_limit: int, rows: int, data_bytes: int,
                 committed=None):
        self.records, self.max_entry_size = records, max_entry_size
        self.rows, self.data_bytes, self.committed = rows, data_bytes, committed
        self.decompressor = Decompressor(decompressed_limit)
        self.least, self.most = size_bounds(2, max_entry_size)   # a v2 batch's size field, framed
        self.walker = RecordWalker(b"", 0, 0, 0)
        self.last_pos: int | None = None
        self.no_room = False   # the next batch's records would not fit in the record batch being gathered
        self.taken = 0   # batches taken here (the rest went to the full reader)
        # The file walked is one an earlier walk of the task found clean and is unchanged since (set by
        # kbatch.spark.source._walked for each file): every CRC of its bytes held, and none is computed again.
        self.crcs_held = False

    @property
    def full(self) -> bool:
        records = self.records
        return records.rows > 0 and (self.no_room or records.rows >= self.rows
                                     or records.data_bytes >= self.data_bytes)

    def _visible(self) -> int:
        """What batch_into_rows is told of visible_to_read_committed: null without a view; where the view has no
        last stable offset, visible for every non-transactional batch (CommittedView.batch), the others asked;
        else asked of each."""
        committed = self.committed
        if committed is None:
            return -1
        if committed.last_stable_offset is None:
            return VISIBLE_UNLESS_TRANSACTIONAL
        return ASK_EACH

    def walk(self, window, pos: int, stop: int) -> int:
        records, walker, columns = self.records, self.walker, reused_columns(self.rows)
        # Said of the batch the last walk stopped at, which has gone out since (with the rows held before it,
        # or, where this run took none of its walk, read by the full reader, which sent them out first).
        self.no_room = False
        rows, file, visible = records.held, len(records.files) - 1, self._visible()
        max_rows, max_bytes = self.rows, self.data_bytes
        checksum = None if self.crcs_held else _CHECKSUM
        data, i = batch_in_view(window, pos)
        base = pos - i   # the file position of data[0]
        # The walker reads an uncompressed batch's records in place, through a view of the window's bytes of its
        # own, let go of below (the window reads on into its buffer).
        in_place = memoryview(data)
        try:
            while True:
                # The batches that need nothing of Python in one compiled loop; the one it stops at here.
                i, answer, taken, last_taken = batches_into_rows(
                    rows, walker, columns, in_place, i, stop - base, self.least, self.most, checksum, base,
                    visible, file, max_rows, max_bytes)
                if taken:
                    self.taken += taken
                    self.last_pos = base + last_taken
                if answer in (ASK_VISIBILITY, COMPRESSED):
                    answer, end = self._take_one(in_place, i, base, visible, file, answer)
                    if answer == TAKEN:
                        self.taken += 1
                        self.last_pos = base + i
                        i = end
                        continue
                # NOT_CLEAN, COMPRESSED (its records do not inflate), NOT_TAKEN: the full reader's; FULL, NO_ROOM:
                # the record batch goes out first.
                self.no_room = answer == NO_ROOM
                return base + i
        finally:
            walker.reset(b"", 0, 0, 0)
            in_place.release()

    def _take_one(self, data, i: int, base: int, visible: int, file: int, asked: int) -> tuple[int, int]:
        """The batch at ``data[i:]`` that batches_into_rows stopped at to ask (``asked``) for its visibility or its
        records inflated, taken with them: (batch_into_rows' answer, the batch's end)."""
        rows, walker, columns = self.records.held, self.walker, reused_columns(self.rows)
        batch_length, count = _unpack_frame(data, i)
        end = i + LOG_OVERHEAD + batch_length
        batch_pos = base + i
        answer = asked
        if answer == ASK_VISIBILITY:
            visible = self._batch_visible(data, i)
            answer = batch_into_rows(rows, walker, columns, data, i, end, count, batch_pos, None, visible, file,
                                     self.rows, self.data_bytes)
        if answer == COMPRESSED:
            codec = data[i + _ATTRIBUTES_AT + 1] & COMPRESSION_CODEC_MASK   # (the low byte: big-endian)
            try:   # (as kbatch.reading.v2.load_records inflates them; a failure is the full reader's to tell)
                inflated = self.decompressor.decompress_view(codec, data[i + BATCH_HEADER.size:end], 2)
            except CodecError:
                return COMPRESSED, end
            answer = batch_into_rows(rows, walker, columns, data, i, end, count, batch_pos, inflated, visible, file,
                                     self.rows, self.data_bytes)
        return answer, end

    def _batch_visible(self, view, i: int) -> int:
        """The batch's visible_to_read_committed from the view (-1: null)."""
        head = dict(zip(_NAMES, _unpack_header(view, i)))
        visible = self.committed.batch(SimpleNamespace(
            is_control=False, base_offset=head["base_offset"],
            is_transactional=bool(head["attributes"] & TRANSACTIONAL_FLAG_MASK),
            producer_id=head["producer_id"])).visible
        return -1 if visible is None else int(visible)
