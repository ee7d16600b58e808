"""The records level's rows by whole columns, straight from the walk: no Batch made of a batch whose records go
as columns.

The full reader makes a Batch of every entry (about 25 µs in Python, whatever the batch holds) before its
records are walked into columns.  For a v2 data batch whose CRC holds, the records table's rows need no
more than its header and its records' columns: :class:`RecordColumnsRun` is a run of the walk engine
(kbatch.walk.engine) over those.  For each batch that
:func:`kbatch.walk.engine.clean_v2_batches` hands out it unpacks the header, inflates the records if they
are compressed, walks them with one reused walker (kbatch.kernels.recordwalk) and gives the columns to
:class:`kbatch.spark.source.ColumnarRecords` with the header's fields, which makes the Arrow record batch
a window of records at a time.

It only ever accepts: a control batch (its records are shown by their decoded markers), one whose records
do not fit in one chunk, one whose records the codec cannot inflate, or one holding a key or value in the
schema registry's framing (its ids are read into each row) stops it, and the full reader reads that entry
as before (kbatch.spark.source.record_batches).  tests/test_spark_columns.py holds the two ways to the same
rows on every fixture, damaged ones too, compiled and pure Python.
"""

from __future__ import annotations

from types import SimpleNamespace

from kbatch.format.codecs import CodecError, Decompressor, codec_name
from kbatch.format.structs import (BATCH_HEADER, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, TIMESTAMP_TYPE_MASK,
                                   TRANSACTIONAL_FLAG_MASK)
from kbatch.kernels.jsonl import any_key_or_value_starts_with_zero
from kbatch.kernels.recordwalk import RecordWalker
from kbatch.reading.model import TIMESTAMP_TYPES
from kbatch.reading.records import reused_columns
from kbatch.walk.engine import clean_v2_batches

_unpack_header = BATCH_HEADER.unpack_from
_NAMES = BATCH_HEADER.names


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
        self.walker = RecordWalker(b"", 0, 0, 0)
        self.last_pos: int | None = None
        self.no_room = False   # the next batch's records would not fit in the record batch being gathered
        self.taken = 0   # batches taken here (the rest went to the full reader)

    @property
    def full(self) -> bool:
        records = self.records
        return records.rows > 0 and (self.no_room or records.rows >= self.rows
                                     or len(records.data) >= self.data_bytes)

    def walk(self, window, pos: int, stop: int) -> int:
        records, walker, committed = self.records, self.walker, self.committed
        # Said of the batch the last walk stopped at, which has gone out since (with the rows held before it,
        # or, where this run took none of its walk, read by the full reader, which sent them out first).
        self.no_room = False
        columns = reused_columns(self.rows)
        header_size = BATCH_HEADER.size
        batches = clean_v2_batches(window, pos, stop, self.max_entry_size)
        # The walker reads an uncompressed batch's records in place, through a view of the window's bytes of its
        # own (not the one the batches come in, which is released when they run out), indexed as that one is.
        in_place = None
        try:
            for batch_pos, view, i, end, count, _ in batches:
                if self.full:
                    break
                head = dict(zip(_NAMES, _unpack_header(view, i)))
                attributes = head["attributes"]
                if attributes & CONTROL_FLAG_MASK:
                    break
                codec = attributes & COMPRESSION_CODEC_MASK
                if codec:
                    try:   # (as kbatch.reading.v2.load_records inflates them; a failure is the full reader's to tell)
                        data = self.decompressor.decompress_view(codec, view[i + header_size:end], 2)
                    except CodecError:
                        break
                    walker.reset(data, count, head["base_offset"], head["base_timestamp"])
                else:   # positions inside the window's bytes
                    data = in_place = in_place or memoryview(view)
                    walker.reset(data, count, head["base_offset"], head["base_timestamp"], i + header_size, end)
                walker.fill(columns)
                if not walker.done or (columns.n and any_key_or_value_starts_with_zero(columns, data)):
                    break
                if records.rows + columns.n > self.rows:
                    self.no_room = True   # the record batch goes out first
                    break
                if columns.n:
                    timestamp_type = TIMESTAMP_TYPES[bool(attributes & TIMESTAMP_TYPE_MASK)]
                    transactional = bool(attributes & TRANSACTIONAL_FLAG_MASK)
                    visible = None if committed is None else committed.batch(SimpleNamespace(
                        is_control=False, base_offset=head["base_offset"], is_transactional=transactional,
                        producer_id=head["producer_id"])).visible
                    records.add_fields(columns, data, (
                        batch_pos, head["base_offset"], codec_name(codec), timestamp_type,
                        timestamp_type == "LogAppendTime", head["max_timestamp"], head["base_sequence"],
                        head["producer_id"], transactional), visible)
                self.taken += 1
                self.last_pos = batch_pos
                pos = batch_pos + end - i
        finally:
            # The walker lets go of the window's bytes (the window reads on into them).
            walker.reset(b"", 0, 0, 0)
            if in_place is not None:
                in_place.release()
            batches.close()
        return pos
