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

The cleaner may also remove a batch whole (:func:`removed_whole`): ``replicas`` asks it of a batch one copy lacks
and another holds.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

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


def removed_whole(batch: Batch, first_dirty: int | None, latest: Mapping[bytes, int],
                  last_data: Mapping[int, int]) -> bool:
    """Whether the log cleaner of a copy that lacks ``batch`` (another copy holds it, records decoded; the copy
    holds no batch over its offsets) could have removed it whole, by Kafka's rule as that copy's log shows it.

    ``first_dirty``: the copy's cleaner-offset-checkpoint (None: none, or not to be believed), written only for a
    compacted log, at the end offset of the cleaning round that ran last (LogCleanerManager.doneCleaning);
    ``latest``: per key, the latest offset of a record of it the copy holds in its data batches below
    ``first_dirty``; ``last_data``: per producer id, the last offset of the copy's last data batch of it.

    Cleaner.cleanInto's filter (checkBatchRetention, then MemoryRecords.filterTo) drops a batch whole when it
    retains none of its records and the batch need not stay empty (BatchRetention.DELETE_EMPTY).  Every round
    refilters the log from its start (doClean: logSegments(0, endOffset)), so a batch kept by one round may go in
    a later one.  It stays (RETAIN_EMPTY) when it has a producer id and holds the last data offset of that
    producer while the producer is active (isBatchLastRecordOfProducer; lastRecordsOfActiveProducers), and when
    it is the last batch of the round (batch.nextOffset() == upperBoundOffsetOfCleaningRound, the checkpoint the
    round writes).  A record is retained (Cleaner.shouldRetainRecord) past the offset map's latest offset (at or
    past the checkpoint), and below it unless the map holds a later offset for its key; one without a key goes.

    Judged only where the copy's own log shows the rule met, never looser: a v2 data batch whose records all
    read, its last offset below the checkpoint less one, each record's key with a later record in the copy below
    the checkpoint, and, with a producer id, a later data batch of that producer in the copy.  Left unjudged
    (False): a control batch (a transaction marker goes only once its transaction's data is gone and its delete
    horizon has passed), a batch of an aborted transaction whose keys no later record holds (the cleaner drops
    it whatever its keys: CleanedTransactionMetadata), a tombstone, the latest of its key, dropped once its
    delete horizon passed, and a batch of a producer that since expired: the copy's log cannot say when its
    cleaner ran, or its producers' state then.
    """
    records = batch.records or ()
    if first_dirty is None or batch.magic != 2 or batch.is_control or len(records) != (batch.count or 0) \
            or batch.last_offset + 1 >= first_dirty:
        return False
    if batch.producer_id is not None and batch.producer_id >= 0 and \
            last_data.get(batch.producer_id, -1) <= batch.last_offset:
        return False
    return all(record.key is None or latest.get(record.key, -1) > record.offset for record in records)
