"""What Kafka's log cleaner leaves of a v2 batch: one rule, for every comparison of two states of one batch.

The cleaner rewrites a batch with the records it retains (MemoryRecords.filterTo, buildRetainedRecordsInto): the
same base offset and, by overrideLastOffset, last offset; the same producer id, epoch and base sequence, partition
leader epoch, compression, timestamp type, transactional and control flags; each kept record's offset,
timestamp, key, value and headers unchanged.  It may keep none (an empty batch for a producer's last sequence:
RETAIN_EMPTY, DefaultRecordBatch.writeEmptyHeader), and it may mark the batch with a delete horizon (attributes
bit 6, the horizon as baseTimestamp: the records' timestamps stay), so size, CRC, baseTimestamp and maxTimestamp
may differ, and the attribute bits Kafka reserves (MemoryRecordsBuilder computes the attributes afresh).

Who compares: ``replicas`` (copies whose cleaners ran to other first dirty offsets) and ``pcap --against`` (a
captured batch against the disk's, cleaned since; a Fetch response's, taken before or after the disk's state).
"""

from __future__ import annotations

from typing import NamedTuple

from kbatch.reading.model import Batch


class Kept(NamedTuple):
    """What the cleaner keeps of a v2 batch: its header fields but the delete horizon, and each record by its
    offset delta -- (timestamp, key, value, headers), the timestamp as a consumer is given it."""

    header: tuple   # last offset delta, partition leader epoch, producer id, epoch, base sequence, codec,
    #                 timestamp type, transactional, control
    records: dict[int, tuple]


def kept(batch: Batch) -> Kept | None:
    """What the cleaner keeps of ``batch``; None for no v2 batch, or one whose records did not all read."""
    records = {record.offset - batch.base_offset: (record.timestamp, record.key, record.value, record.headers)
               for record in batch.records or ()}
    if batch.magic != 2 or len(records) != (batch.count or 0):
        return None
    return Kept((batch.last_offset_delta, batch.partition_leader_epoch, batch.producer_id, batch.producer_epoch,
                 batch.base_sequence, batch.codec, batch.timestamp_type, batch.is_transactional, batch.is_control),
                records)


def cleaned_from(whole: Kept, cleaned: Kept) -> bool:
    """Whether ``cleaned`` is ``whole`` as the cleaner may leave it: the same header, and some of its records
    (all, or none) each unchanged at its offset delta."""
    return whole.header == cleaned.header and all(whole.records.get(delta) == record
                                                  for delta, record in cleaned.records.items())


def compacted_alike(one: Batch, other: Batch | None) -> bool:
    """Whether two batches at one base offset differ only as the cleaner leaves a batch: either is the other
    compacted (by cleaners that ran to other first dirty offsets, or at other times)."""
    if other is None or one.base_offset != other.base_offset:
        return False
    ones, others = kept(one), kept(other)
    return ones is not None and others is not None and (cleaned_from(ones, others) or cleaned_from(others, ones))
