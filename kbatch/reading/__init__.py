"""Reading a segment: :mod:`.reader` (:class:`~kbatch.reading.reader.SegmentReader`, every entry in file order
and every damaged range) and what it hands out: :mod:`.model` (batches and records), :mod:`.records` (a v2
batch's records), :mod:`.invariants` (what --deep checks), :mod:`.markers` (which control batches end a
transaction), :mod:`.summary` (what a pass adds up to).  The reader's own parts, one unit each:

* :mod:`.window` -- the bytes around the reader's position, in reused page-aligned buffers;
* :mod:`.readahead` -- a large local file read a chunk ahead of the window, on a second thread;
* :mod:`.v2` -- a v2 record batch: its header, its records (DefaultRecordBatch);
* :mod:`._batch_fields` -- a v2 header's fields as a Batch takes them, written out from
  :data:`kbatch.reading.v2.V2_HEADER_FIELDS` by ``python -m kbatch.reading.v2``;
* :mod:`.legacy` -- a v0/v1 message, and the inner message set of a compressed
  wrapper (LegacyRecord, AbstractLegacyRecordBatch);
* :mod:`.recovery` -- telling entries from other bytes: resync after damage,
  and the true end of an entry whose length field lies;
* :mod:`.v3` -- a magic-3 batch of the v3 proposal Kafka never adopted.

The rules that decide what an entry is are in :mod:`kbatch.format.framing`, shared
with the fast runs of :mod:`kbatch.walk`.
"""
