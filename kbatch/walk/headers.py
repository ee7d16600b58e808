"""What the partition cross-checks take of each batch, handed to them by the walk that verifies the log.

``verify-crc --deep`` on a partition directory walks each log once: the walk
that verifies it (kbatch.ops.verify) hands each batch's header to a
:class:`Headers` as it goes, and the cross-checks
(:class:`kbatch.partition.crosscheck.PartitionCheck`) hold the files beside the
log against those headers instead of reading the log again.  A batch the deep
run takes (kbatch.walk.deep) is never an object: its header is unpacked from
the window the run walked.  A batch the full reader reads is one already; of a
producer's control batch the end marker is kept too (its record, which the
cross-checks read; the walk decoded it).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple

from kbatch.format.structs import BATCH_HEADER, CONTROL_FLAG_MASK, LOG_OVERHEAD, TRANSACTIONAL_FLAG_MASK
from kbatch.reading.markers import EndMarker, end_marker
from kbatch.kernels.batchrules import last_sequence
from kbatch.reading.model import Batch

# The header fields a batch the deep run took gives the cross-checks, in the declaration's order.
_HELD = BATCH_HEADER.picker("base_offset", "batch_length", "partition_leader_epoch", "attributes",
                            "last_offset_delta", "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
                            "records_count")


class BatchHeader(NamedTuple):
    """A batch as the cross-checks hold it: where it lies, its header's fields (Batch's names; None where a
    v0/v1 message has no such field), and for a producer's control batch its end marker."""

    pos: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    records_count: int | None   # (Batch.count: a NamedTuple field may not take tuple.count's name)
    max_timestamp: int | None
    partition_leader_epoch: int | None
    producer_id: int | None
    producer_epoch: int | None
    base_sequence: int | None
    last_offset_delta: int | None
    is_control: bool
    is_transactional: bool
    marker: EndMarker | None = None      # a producer's control batch as an end marker (None: empty, or none)
    marker_timestamp: int | None = None  # its first record's timestamp (ProducerAppendInfo.appendEndTxnMarker)

    @property
    def last_sequence(self) -> int:
        """Batch.last_sequence."""
        assert self.base_sequence is not None and self.last_offset_delta is not None   # (v2)
        return last_sequence(self.base_sequence, self.last_offset_delta)


def header_of(batch: Batch, load_records=None) -> BatchHeader:
    """The cross-checks' header of a batch the full reader read.  Of a producer's control batch its end marker
    is read from its records, loaded first by ``load_records(batch)`` when the reader did not decode them."""
    marker = timestamp = None
    producer = batch.producer
    if batch.is_control and producer is not None and producer.id >= 0:
        if batch.records is None and load_records is not None:
            load_records(batch)
        marker = end_marker(batch)
        records = batch.record_list
        timestamp = records[0].timestamp if records else batch.max_timestamp
    return BatchHeader(batch.pos, batch.size, batch.magic, batch.base_offset, batch.last_offset, batch.count,
                       batch.max_timestamp, batch.partition_leader_epoch, batch.producer_id, batch.producer_epoch,
                       batch.base_sequence, batch.last_offset_delta, batch.is_control, batch.is_transactional,
                       marker, timestamp)


class Headers:
    """The headers of one walk's batches, in file order: each handed to ``take`` as it comes, or else kept in
    ``taken``.  Each a BatchHeader, or with ``plain`` a plain tuple of its values (what a process walking a part
    sends back: a tuple pickles in a tenth of the time a NamedTuple takes)."""

    def __init__(self, take: Callable[[BatchHeader], object] | None = None, *, plain: bool = False):
        self.taken: list = []
        self.take: Callable[[Any], object] = self.taken.append if take is None else take
        self._make: Callable[[Iterable], tuple] = tuple if plain else BatchHeader._make

    def batch(self, batch: Batch) -> None:
        """A batch the full reader read (its records decoded, a control batch's as objects)."""
        self.take(self._make(header_of(batch)))

    def extend(self, plain: list[tuple]) -> None:
        """The headers another process took, in plain tuples, after those taken so far."""
        take, make = self.take, self._make
        for header in plain:
            take(make(header))

    def run(self, data, i: int, stop: int, base: int) -> None:
        """The batches a run took: those lying end to end in ``data[i:stop]``, ``data[0]`` at file position
        ``base`` (each a v2 data batch, framed and checked by the run)."""
        take, unpack, make = self.take, _HELD.unpack_from, self._make
        while i < stop:
            (base_offset, batch_length, epoch, attributes, last_offset_delta, max_timestamp, producer_id,
             producer_epoch, base_sequence, count) = unpack(data, i)
            size = LOG_OVERHEAD + batch_length
            take(make((base + i, size, 2, base_offset, base_offset + last_offset_delta, count, max_timestamp, epoch,
                       producer_id, producer_epoch, base_sequence, last_offset_delta,
                       attributes & CONTROL_FLAG_MASK != 0, attributes & TRANSACTIONAL_FLAG_MASK != 0, None, None)))
            i += size
