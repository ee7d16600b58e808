"""The parts of :class:`kbatch.reader.SegmentReader`, one unit each.

* :mod:`.window` -- the bytes around the reader's position, in reused page-aligned buffers;
* :mod:`.v2` -- a v2 record batch: its header, its records (DefaultRecordBatch);
* :mod:`.legacy` -- a v0/v1 message, and the inner message set of a compressed
  wrapper (LegacyRecord, AbstractLegacyRecordBatch);
* :mod:`.recovery` -- telling entries from other bytes: resync after damage,
  and the true end of an entry whose length field lies.

The rules that decide what an entry is are in :mod:`kbatch.framing`, shared
with the fast CRC pass.
"""
