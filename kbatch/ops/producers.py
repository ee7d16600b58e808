"""Each producer of a partition, epoch by epoch, held to the rules a leader holds its appends to.

A partition leader checks every batch a producer sends before it appends it (``ProducerAppendInfo``, in
storage/.../internals/log/ProducerAppendInfo.java, for an append from a client):

* ``checkProducerEpoch``: a batch's epoch, a data batch's or a transaction marker's, is never below the
  producer's current one; a marker's becomes the current one as a data batch's does (``appendEndTxnMarker``
  updates the entry: under transactions version 2 the coordinator writes the marker at the epoch it bumped);
* ``checkSequence``: in the same epoch a batch's first sequence follows the last one written
  (``inSequence``: last + 1, or 0 after Integer.MAX_VALUE); a new epoch starts at sequence 0 (unless the
  producer had no epoch yet), and so does the first data batch after a marker began the epoch (the entry's
  batches were cleared, ``ProducerStateEntry.maybeUpdateProducerEpoch``); a producer whose earlier records are
  gone (retention, DeleteRecords) may start anywhere;
* ``appendDataBatch``: no plain batch while the producer's transaction is open.

A log a healthy broker wrote keeps them, but it does not prove them: a broker that loads or replicates a log
checks nothing of the sequence (``AppendOrigin.REPLICATION``) and only warns of an epoch going backwards, so
a replica that took writes after an unclean election, or a broker bug, leaves breaks behind.  Each break here
is a warning, named after the check it fails.  Two things a healthy log does hold are not breaks: a sequence
gap as wide as the offsets removed from the log in between (compaction, which keeps a producer's last batch
but not every batch), and the first batch of a producer this walk sees (what came before may be gone).

Duplicates despite idempotence: a batch whose records (keys, values, headers) are those of one of the
producer's recent batches, written again with a sequence that repeats, or by an idempotent (not transactional)
producer under a new epoch: such a producer bumps its epoch only to recover from an error (KIP-360), and the
broker de-duplicates within an epoch, so what it sent again then is written twice.  Not reported: the same
payload sent again with new sequences, or in a new transaction (a transactional producer's epoch goes up with
every transaction under transactions version 2), which is the application's own doing; records of an aborted
transaction, which no read_committed consumer sees.  Each producer remembers its last
:data:`RECENT_BATCHES` batches for this.

Memory grows with the producers (and their epochs), not with the records.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kbatch.format.findings import Finding
from kbatch.reading.markers import end_marker
from kbatch.reading.model import Batch, ProducerFields

if TYPE_CHECKING:
    from kbatch.ops.logs import Replayed
    from kbatch.ops.txn import CoordinatorView

INT32_MAX = 2**31 - 1
NO_SEQUENCE = -1
RECENT_BATCHES = 16   # a producer's batches in flight are at most 5 (max.in.flight.requests.per.connection)


def in_sequence(last: int, next_: int) -> bool:
    """ProducerAppendInfo.inSequence: the sequence after ``last`` (it wraps to 0 after Integer.MAX_VALUE)."""
    return next_ == last + 1 or (next_ == 0 and last == INT32_MAX)


def records_digest(batch: Batch) -> bytes:
    """A digest of a batch's records' keys, values and headers, in order (not their offsets or times)."""
    digest = hashlib.blake2b(digest_size=16)
    for record in batch.records or ():
        for part in (record.key, record.value):
            digest.update(b"\x00" if part is None else len(part).to_bytes(4, "big") + part)
        for key, value in record.headers:
            digest.update(b"\x01" + len(key).to_bytes(4, "big") + key)
            digest.update(b"\x00" if value is None else len(value).to_bytes(4, "big") + value)
    return digest.digest()


@dataclass
class ProducerEpoch:
    """What one producer id wrote under one epoch in a partition (begun by a data batch or by a transaction
    marker: then its sequences are -1 and its offsets the marker's until a data batch follows)."""

    partition: str
    producer_id: int
    producer_epoch: int
    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int
    transactional: bool
    batches: int = 0
    records: int = 0
    transactional_id: str | None = None
    breaks: int = 0


@dataclass
class _Producer:
    epoch: ProducerEpoch
    open_transaction: int | None = None          # the first offset of its open transaction
    removed_before: int = 0                      # the partition's removed offsets when its last batch was read
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))   # (digest, epoch, seq, offset)


def _break(code: str, batch: Batch, field_name: str, expected: str, actual: str) -> Finding:
    return Finding(code, batch.pos, batch.pos, batch.size, field_name, expected, actual)


def _epoch_went_back(current: ProducerEpoch, batch: Batch, header: ProducerFields) -> Finding:
    """checkProducerEpoch's break: the batch's epoch is below the producer's current one."""
    return _break("producer-epoch-backwards", batch, "producerEpoch",
                  f"producer {header.id}'s epoch {current.producer_epoch} or later (its batch at offset "
                  f"{current.last_offset})", str(header.epoch))


class PartitionProducers:
    """One partition's batches, in log order, replayed producer by producer.

    ``epochs`` holds every (producer id, epoch) seen, in the order first seen; ``breaks`` each break as
    (path, finding, producer id); ``snapshots`` the producer .snapshot files held against the log
    (:func:`hold_snapshots`) and ``snapshot_findings`` where they disagree with it or do not read, as (path,
    finding, producer id or None).
    """

    def __init__(self, partition: str):
        self.partition = partition
        self.producers: dict[int, _Producer] = {}
        self.epochs: list[ProducerEpoch] = []
        self.breaks: list[tuple[str, Finding, int]] = []
        self.snapshots: list[str] = []
        self.snapshot_findings: list[tuple[str, Finding, int | None]] = []
        self.removed = 0                 # offsets missing between the batches read so far (compaction, aborts cleaned)
        self.next_offset: int | None = None

    def add_batch(self, batch: Batch, path: str) -> None:
        if batch.is_damaged:
            return   # the walk's finding; the producer's state goes on from its last good batch
        if self.next_offset is not None and batch.base_offset > self.next_offset:
            self.removed += batch.base_offset - self.next_offset
        self.next_offset = max(self.next_offset or 0, batch.last_offset + 1)
        header = batch.producer
        if header is None or header.id < 0:
            return
        if batch.is_control:
            self._marker(batch, header, path)
        else:
            self._data(batch, header, path)

    def _marker(self, batch: Batch, header: ProducerFields, path: str) -> None:
        producer = self.producers.get(header.id)
        marker = end_marker(batch)
        if producer is None or marker is None:
            return
        # ProducerAppendInfo.appendEndTxnMarker: checkProducerEpoch, then the marker's epoch is the producer's
        breaks = [_epoch_went_back(producer.epoch, batch, header)] \
            if header.epoch < producer.epoch.producer_epoch else []
        self._take_epoch(producer, batch, header, breaks, path)
        if marker.outcome == "ABORT" and producer.open_transaction is not None:   # its records were never seen
            first = producer.open_transaction
            producer.recent = deque((entry for entry in producer.recent if entry[3] < first), maxlen=RECENT_BATCHES)
        producer.open_transaction = None

    def _data(self, batch: Batch, header: ProducerFields, path: str) -> None:
        producer = self.producers.get(header.id)
        first_seq, last_seq = header.base_sequence, batch.last_sequence
        if producer is None:
            producer = self.producers[header.id] = _Producer(self._new_epoch(batch, header))
        else:
            self._take_epoch(producer, batch, header, list(self._check(producer, batch, header)), path)
        epoch = producer.epoch
        if epoch.batches == 0:   # its first data batch (a marker may have begun the epoch)
            epoch.first_sequence = first_seq
        epoch.last_sequence = last_seq if first_seq != NO_SEQUENCE else epoch.last_sequence
        epoch.last_offset = batch.last_offset
        epoch.batches += 1
        epoch.records += max(batch.count or 0, 0)
        if batch.is_transactional and producer.open_transaction is None:
            producer.open_transaction = batch.base_offset
        producer.removed_before = self.removed
        if batch.records is not None:
            producer.recent.append((records_digest(batch), header.epoch, first_seq, batch.base_offset))

    def _take_epoch(self, producer: _Producer, batch: Batch, header: ProducerFields, breaks: list[Finding],
                    path: str) -> None:
        """The batch's epoch is the producer's from now on (ProducerStateEntry.maybeUpdateProducerEpoch); its
        breaks are counted where it belongs."""
        if header.epoch != producer.epoch.producer_epoch:
            producer.epoch = self._new_epoch(batch, header)
        producer.epoch.breaks += len(breaks)
        self.breaks.extend((path, finding, header.id) for finding in breaks)

    def _new_epoch(self, batch: Batch, header: ProducerFields) -> ProducerEpoch:
        epoch = ProducerEpoch(self.partition, header.id, header.epoch, header.base_sequence,
                              batch.last_sequence, batch.base_offset, batch.last_offset, batch.is_transactional)
        self.epochs.append(epoch)
        return epoch

    def _check(self, producer: _Producer, batch: Batch, header: ProducerFields) -> Iterator[Finding]:
        current = producer.epoch
        epoch, first_seq = header.epoch, header.base_sequence
        pid = f"producer {header.id}"
        if epoch < current.producer_epoch:   # checkProducerEpoch
            yield _epoch_went_back(current, batch, header)
        elif epoch != current.producer_epoch or current.batches == 0:   # checkSequence: a new epoch starts at 0
            if first_seq not in (0, NO_SEQUENCE):
                yield _break("producer-sequence-not-reset", batch, "baseSequence",
                             f"0, the first sequence of {pid}'s new epoch {epoch}", str(first_seq))
        elif first_seq != NO_SEQUENCE and current.last_sequence != NO_SEQUENCE \
                and not in_sequence(current.last_sequence, first_seq):
            removed = self.removed - producer.removed_before
            wanted = (current.last_sequence + 1) & INT32_MAX
            if first_seq <= current.last_sequence:
                yield _break("producer-sequence-repeat", batch, "baseSequence",
                             f"{wanted}, after {pid}'s sequence {current.last_sequence} at offset "
                             f"{current.last_offset}", f"{first_seq} (already written)")
            elif first_seq - wanted > removed:   # a gap no removed offsets account for
                yield _break("producer-sequence-gap", batch, "baseSequence",
                             f"{wanted}, after {pid}'s sequence {current.last_sequence} at offset "
                             f"{current.last_offset}", f"{first_seq} ({first_seq - wanted} sequences missing, "
                             f"{removed} offsets removed from the log between)")
        if producer.open_transaction is not None and not batch.is_transactional:   # appendDataBatch
            yield _break("producer-txn-state", batch, "attributes.isTransactional",
                         f"a transactional batch: {pid}'s transaction from offset {producer.open_transaction} "
                         "has no marker yet", "a plain batch")
        if batch.records is not None and producer.recent:
            digest = records_digest(batch)
            for earlier, earlier_epoch, earlier_seq, earlier_offset in producer.recent:
                if earlier == digest and ((earlier_epoch != epoch and not batch.is_transactional) or
                                          (earlier_epoch == epoch and first_seq != NO_SEQUENCE
                                           and first_seq <= earlier_seq)):
                    how = (f"under epoch {earlier_epoch}, again under epoch {epoch}" if earlier_epoch != epoch
                           else f"with sequence {earlier_seq}, again with {first_seq}")
                    yield _break("duplicate-records", batch, "records",
                                 f"records {pid} had not written", f"the records of its batch at offset "
                                 f"{earlier_offset} ({how})")
                    break


def join_transactional_ids(producers, coordinator) -> None:
    """Name each producer (anything with a ``producer_id`` and a ``transactional_id``: a ProducerEpoch, a
    kbatch.ops.txn.Transaction) by its transactional id, where __transaction_state (read into ``coordinator``, a
    kbatch.ops.txn.CoordinatorView) holds its producer id."""
    by_producer = coordinator.by_producer()
    for producer in producers:
        producer.transactional_id = getattr(by_producer.get(producer.producer_id), "transactional_id", None)


def hold_snapshots(views, files: list[str], unreadable: list[str], decompressed_limit: int | None = None) -> None:
    """Hold each partition's producer .snapshot files against its log, where ``files`` hold every segment of
    its directory and none is ``unreadable``: verify-crc --deep's cross-check (kbatch.partition.crosscheck),
    which rebuilds each producer's ProducerStateEntry from the log below a snapshot's offset as
    ProducerAppendInfo would and compares it with the snapshot's entry.  A producer only in a snapshot (its
    batches removed by retention or the cleaner) is no disagreement: Kafka keeps it."""
    from kbatch.files import kinds
    from kbatch.ops.logs import partition_key
    from kbatch.partition.crosscheck import SNAPSHOT_CHECK_CODES, held_against_log

    given: dict[str, set[str]] = {}
    for path in files:
        given.setdefault(partition_key(path), set()).add(path)
    for view in views:
        logs = given.get(view.partition, set())
        if not logs or logs & set(unreadable):
            continue
        view.snapshots, found = held_against_log(view.partition, logs, frozenset({kinds.PRODUCER_SNAPSHOT}),
                                                 SNAPSHOT_CHECK_CODES, decompressed_limit)
        view.snapshot_findings = [(located.path, located.finding, located.producer_id) for located in found]


@dataclass
class ProducersReport:
    """What ``kbatch producers`` found: each partition's producers (in partition order) with the epochs, breaks
    and snapshot findings of the producers selected, every finding to show as (path, finding), and the replay
    itself (what could not be opened, whether damage was met)."""

    partitions: list[PartitionProducers]
    coordinator: CoordinatorView
    findings: list[tuple[str, Finding]]
    replayed: Replayed
    broken: bool              # a producer selected broke a leader's rule (a warning, and what the command looks for)
    snapshots_damaged: bool   # a .snapshot file disagrees with the log (for a producer selected) or does not read
    unnamed: bool             # transactional ids were asked for and no __transaction_state record names one


def producers_report(files: list[str], decompressed_limit: int, producer_ids: Iterable[int] = (),
                     transactional_ids: Iterable[str] = ()) -> ProducersReport:
    """Each producer of the partitions ``files`` belong to, held to a leader's rules, named by its
    transactional id where ``__transaction_state`` is among them, and each partition's producer snapshots held
    against its log (:func:`hold_snapshots`); with ``producer_ids`` or ``transactional_ids``, only those
    producers' epochs, breaks and snapshot findings are kept (a finding about a snapshot file itself, which
    names no producer, always)."""
    from kbatch.ops.logs import partition_key, replay
    from kbatch.ops.txn import CoordinatorView, is_transaction_state
    from kbatch.reading.reader import ReadOptions

    producer_ids, transactional_ids = tuple(producer_ids), tuple(transactional_ids)
    views: dict[str, PartitionProducers] = {}
    coordinator = CoordinatorView()

    def add(path: str, batch: Batch) -> None:
        if is_transaction_state(path):
            coordinator.add_batch(batch)
            return
        key = partition_key(path)
        if key not in views:
            views[key] = PartitionProducers(key)
        views[key].add_batch(batch, path)

    # records only where a producer wrote them (its duplicates, its markers) and __transaction_state's
    replayed = replay(files, ReadOptions(decompressed_limit=decompressed_limit), add,
                      wants_records=lambda path, batch: is_transaction_state(path) or
                      (batch.producer_id is not None and batch.producer_id >= 0))
    ordered = [views[key] for key in sorted(views)]
    join_transactional_ids((epoch for view in ordered for epoch in view.epochs), coordinator)
    hold_snapshots(ordered, files, [path for path, _ in replayed.unreadable], decompressed_limit)
    wanted = set(producer_ids) | {state.producer_id for tid, state in coordinator.ids.items()
                                  if tid in set(transactional_ids)}
    unnamed = bool(transactional_ids) and not any(tid in coordinator.ids for tid in transactional_ids)
    selected = (lambda producer_id: producer_id in wanted) if producer_ids or transactional_ids else \
        (lambda producer_id: True)
    breaks = [(path, finding) for view in ordered for path, finding, producer_id in view.breaks
              if selected(producer_id)]
    findings = replayed.findings + breaks
    snapshots_damaged = False
    for view in ordered:   # (a finding about a snapshot file itself names no producer)
        view.snapshot_findings = [(path, finding, producer_id) for path, finding, producer_id
                                  in view.snapshot_findings if producer_id is None or selected(producer_id)]
        findings += [(path, finding) for path, finding, _ in view.snapshot_findings]
        snapshots_damaged = snapshots_damaged or any(finding.is_damage for _, finding, _ in view.snapshot_findings)
    for view in ordered:
        view.epochs = [epoch for epoch in view.epochs if selected(epoch.producer_id)]
    return ProducersReport(ordered, coordinator, findings, replayed, bool(breaks), snapshots_damaged, unnamed)
