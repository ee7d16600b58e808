"""Transaction forensics from the log itself: every transaction a partition holds, and how it ended.

A partition's view (ProducerStateManager, as a broker rebuilds it when it loads a log): a producer's first
transactional data batch opens a transaction; the control batch (COMMIT or ABORT) of the same producer
closes it.  A marker with nothing open before it is an empty transaction (nothing was written, or the data
is gone: compaction, retention).  A transaction never closed holds the partition's last stable offset at
its first offset: consumers reading committed data stop there.  Aborted transactions are the ranges the
.txnindex lists and consumers skip.

The coordinator's view comes from ``__transaction_state`` (the last value written for each transactional
id: its producer id and epoch, state and partitions).  Joining the two names the transactional id of an
open transaction and shows a hanging one: open in the partition while the coordinator has completed it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kbatch.format.codecs import DEFAULT_DECOMPRESSED_LIMIT
from kbatch.format.findings import Finding
from kbatch.reading.markers import describe, end_marker
from kbatch.reading.internal import decode_batch
from kbatch.reading.model import Batch, ProducerFields
from kbatch.files.inputs import topic_partition

if TYPE_CHECKING:
    from kbatch.ops.logs import Replayed


# TransactionState: the coordinator still owes the partitions their markers in these
OPEN_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")


@dataclass
class Transaction:
    topic: str | None
    partition: int | None
    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int              # the last data offset (the marker's own offset is marker_offset)
    records: int = 0
    batches: int = 0
    first_timestamp: int | None = None
    outcome: str = "OPEN"         # COMMIT, ABORT, OPEN, or UNKNOWN (its marker is not believed: kbatch.reading.markers)
    marker_offset: int | None = None
    marker_pos: int | None = None         # UNKNOWN: where the marker not believed is, why, and what it would say
    marker_doubt: str | None = None
    if_believed: str | None = None
    marker_epoch: int | None = None
    coordinator_epoch: int | None = None
    empty: bool = False
    path: str = ""
    # from __transaction_state, when given
    transactional_id: str | None = None
    coordinator_state: str | None = None
    coordinator_partitions: list[str] | None = None

    @property
    def hanging(self) -> bool:
        """Open here, though the coordinator has no open transaction of this producer on this partition
        (it completed it, or moved on): nothing will ever write its marker (KAFKA-12671's symptom)."""
        if self.outcome != "OPEN" or self.coordinator_state is None:
            return False
        if self.coordinator_state not in OPEN_STATES:
            return True
        return f"{self.topic}-{self.partition}" not in (self.coordinator_partitions or [])


@dataclass
class PartitionTransactions:
    """What one data partition's log says about its transactions."""

    topic: str | None
    partition: int | None
    transactions: list[Transaction] = field(default_factory=list)
    open: dict[int, Transaction] = field(default_factory=dict)     # by producer id
    findings: list[tuple[str, Finding]] = field(default_factory=list)
    last_offset: int | None = None
    directory: str | None = None   # the partition directory its segments were found in
    cross_checked: list[str] = field(default_factory=list)   # its .txnindex and .snapshot files held to the log
    cross_check_findings: int = 0                            # ... and where they disagree or do not read
    logs: set[str] = field(default_factory=set)   # the segments read whole, those without a batch too
    stable: StableOffset | None = None            # its last stable offset as the broker has it (stable_offset)

    def add_batch(self, batch: Batch, path: str) -> None:
        producer = batch.producer
        if producer is None or producer.id < 0:
            self._seen(batch)
            return
        if batch.is_control:
            self._marker(batch, producer, path)
        elif batch.is_transactional:
            self._data(batch, producer, path)
        self._seen(batch)

    def _seen(self, batch: Batch) -> None:
        if self.last_offset is None or batch.last_offset > self.last_offset:
            self.last_offset = batch.last_offset

    def _data(self, batch: Batch, producer: ProducerFields, path: str) -> None:
        txn = self.open.get(producer.id)
        if txn is None:
            txn = Transaction(self.topic, self.partition, producer.id, producer.epoch,
                              batch.base_offset, batch.last_offset, first_timestamp=batch.base_timestamp,
                              path=path)
            self.open[producer.id] = txn
            self.transactions.append(txn)
        txn.last_offset = batch.last_offset
        txn.records += max(batch.count or 0, 0)
        txn.batches += 1

    def _marker(self, batch: Batch, producer: ProducerFields, path: str) -> None:
        found = end_marker(batch)
        if found is None:
            return   # an empty control batch: its transaction was cleaned away
        # A marker not believed (kbatch.reading.markers) still ends what it would end: the producer's next data opens
        # a transaction of its own, never merged into this one, whose outcome is unknown.
        txn = self.open.pop(producer.id, None)
        if txn is None:
            txn = Transaction(self.topic, self.partition, producer.id, producer.epoch,
                              batch.base_offset, batch.base_offset, empty=True, path=path)
            self.transactions.append(txn)
        txn.outcome = found.outcome
        txn.marker_offset = batch.base_offset
        txn.marker_epoch = producer.epoch
        if found.believed is not None:
            txn.coordinator_epoch = found.believed.coordinator_epoch
        else:
            txn.marker_pos = batch.pos
            txn.marker_doubt = describe(found, batch)
            txn.if_believed = found.if_believed

    @property
    def last_stable_offset(self) -> int | None:
        """LSO: the first offset of the earliest open transaction (None: nothing holds it back)."""
        return min((txn.first_offset for txn in self.open.values()), default=None)


def unstable(transactions: Iterable[Transaction], high_watermark: int) -> list[Transaction]:
    """The transactions ProducerStateManager.firstUnstableOffset asks of, at ``high_watermark``: those open
    (ongoingTxns) and those completed whose marker the high watermark has not passed (completeTxn puts them in
    unreplicatedTxns, removeUnreplicatedTransactions takes them out once their marker lies below it).  A marker with
    nothing open before it completes nothing (ProducerAppendInfo.appendEndTxnMarker)."""
    return [txn for txn in transactions
            if not txn.empty and (txn.marker_offset is None or txn.marker_offset >= high_watermark)]


def last_stable_offset(transactions: Iterable[Transaction], high_watermark: int, log_start: int,
                       log_end: int) -> tuple[int, Transaction | None]:
    """UnifiedLog.lastStableOffset of a log holding ``transactions`` (a partition's, in any order), whose high
    watermark checkpoint says ``high_watermark``: the offset, and the transaction that holds it there (None: the
    high watermark sets it).

    The broker it describes is taken to have read the transactions since their markers: one that loaded the log
    again from a producer snapshot taken past a marker (LogLoader) no longer counts that transaction unreplicated
    (ProducerStateManager.loadFromSnapshot restores only the open ones)."""
    # Partition.createLog -> UnifiedLog.updateHighWatermark: the checkpoint's, no lower than the log start offset,
    # no higher than the log end offset
    high_watermark = log_start if high_watermark < log_start else min(high_watermark, log_end)
    # ProducerStateManager.firstUnstableOffset: the earliest first offset of the unstable
    first = min(unstable(transactions, high_watermark), key=lambda txn: txn.first_offset, default=None)
    if first is None:
        return high_watermark, None
    # UnifiedLog.maybeIncrementFirstUnstableOffset: raised to the log start offset; lastStableOffset: the first
    # unstable offset only where it lies below the high watermark
    first_unstable = max(first.first_offset, log_start)
    return (first_unstable, first) if first_unstable < high_watermark else (high_watermark, None)


@dataclass(frozen=True)
class StableOffset:
    """A partition's last stable offset as its broker has it (UnifiedLog.lastStableOffset), or why it is unknown."""

    offset: int | None                    # None: unknown (``unknown`` says why)
    held_by: Transaction | None = None    # the transaction whose first offset it is (None: the high watermark)
    high_watermark: int | None = None     # the replication-offset-checkpoint's
    unknown: str | None = None


def stable_offset(view: PartitionTransactions) -> StableOffset:
    """The last stable offset of a partition whose every segment ``view`` read (:func:`last_stable_offset`), from
    its log directory's high watermark and log start offset checkpoints; unknown, and why, where they do not say
    or not every segment was read (the log end and the transactions would be guesses)."""
    import os

    from kbatch.files import kinds
    from kbatch.files.inputs import passed_over, segment_base_offset
    from kbatch.partition.textfiles import checkpointed_offset, loaded_log_start

    directory = view.directory
    if directory is None or topic_partition(os.path.join(directory, "x"))[0] is None:
        return StableOffset(None, unknown="not in a partition directory (TOPIC-N): no high watermark checkpoint")
    read_whole = {os.path.basename(log) for log in view.logs}
    logs = [name for name in os.listdir(directory) if name.endswith(".log")
            and passed_over(os.path.join(directory, name)) is None]
    if not logs or any(name not in read_whole for name in logs):
        return StableOffset(None, unknown="not every segment of its partition directory was read")
    high_watermark = checkpointed_offset(directory, "replication-offset-checkpoint")
    log_start = checkpointed_offset(directory, kinds.LOG_START_OFFSET_CHECKPOINT)
    for checkpoint in (high_watermark, log_start):
        if checkpoint.unreadable:
            return StableOffset(None, unknown=f"{os.path.basename(str(checkpoint.path))} cannot be read")
    if high_watermark.offset is None:
        return StableOffset(None, unknown="no replication-offset-checkpoint beside it records its high watermark")
    bases = [segment_base_offset(name) or 0 for name in logs]
    # LogLoader: the checkpoint's log start, no lower than the first segment's base offset; the log end: past the
    # last batch, or the base offset of an empty last segment
    start = loaded_log_start(log_start.offset, min(bases))
    end = max(max(bases), -1 if view.last_offset is None else view.last_offset + 1)
    offset, holder = last_stable_offset(view.transactions, high_watermark.offset, start, end)
    return StableOffset(offset, holder, high_watermark.offset)


@dataclass
class CoordinatorState:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str
    partitions: list[str]
    timeout_ms: int
    start_timestamp: int
    last_update_timestamp: int
    offset: int


class CoordinatorView:
    """The last state of every transactional id in __transaction_state partitions (tombstones remove it)."""

    def __init__(self) -> None:
        self.ids: dict[str, CoordinatorState] = {}
        self.unreadable = 0   # records whose key or value did not read (each is a finding of its batch)

    def add_batch(self, batch: Batch) -> None:
        """Replay one batch; a record that does not read adds its finding to the batch's (as dump's do)."""
        if batch.is_control or batch.is_damaged or batch.records is None:
            return   # a damaged batch's records are not believed: its damage is the walk's finding
        decode_batch(batch, "transactions")
        for record in batch.records:
            decoded = record.decoded
            assert decoded is not None   # decode_batch decodes every record of a data batch
            key, value = decoded.key, decoded.value
            if key is None or (value is None and not decoded.tombstone):
                self.unreadable += 1   # (its finding says why): what it said is not the coordinator's state
                continue
            tid = key["data"]["transactionalId"]
            if decoded.tombstone or value is None:   # (value is None only for a tombstone here)
                self.ids.pop(tid, None)
                continue
            data = value["data"]
            partitions = [f"{topic['topic']}-{partition}" for topic in data["transactionPartitions"] or []
                          for partition in topic["partitionIds"]]
            self.ids[tid] = CoordinatorState(tid, data["producerId"], data["producerEpoch"],
                                             value["state"], partitions, data["transactionTimeoutMs"],
                                             data["transactionStartTimestampMs"],
                                             data["transactionLastUpdateTimestampMs"], record.offset)

    def by_producer(self) -> dict[int, CoordinatorState]:
        return {state.producer_id: state for state in self.ids.values()}


def cross_check(view: PartitionTransactions, decompressed_limit: int | None = None) -> list[tuple[str, Finding]]:
    """The partition's .txnindex files (aborted transactions, TransactionIndex) and producer .snapshot files
    (ProducerStateManager) held against its log, by the partition cross-checks (kbatch.partition.crosscheck):
    (path, finding) where they disagree or do not read.  Only for a partition whose every segment was read (the
    check walks them all); ``view.cross_checked`` names the files it held."""
    from kbatch.files import kinds
    from kbatch.partition.crosscheck import SNAPSHOT_CHECK_CODES, held_against_log

    if view.directory is None:
        return []
    codes = frozenset({"txnindex-missing", "txnindex-unmatched", "txnindex-mismatch"}) | SNAPSHOT_CHECK_CODES
    view.cross_checked, found = held_against_log(view.directory, view.logs,
                                                 frozenset({kinds.TXN_INDEX, kinds.PRODUCER_SNAPSHOT}), codes,
                                                 decompressed_limit)
    view.cross_check_findings = len(found)
    return [(located.path, located.finding) for located in found]


def is_transaction_state(path: str) -> bool:
    return topic_partition(path)[0] == "__transaction_state"


def join(partitions: list[PartitionTransactions], coordinator: CoordinatorView) -> None:
    """Name each transaction's transactional id and the coordinator's state for its producer."""
    by_producer = coordinator.by_producer()
    for partition in partitions:
        for txn in partition.transactions:
            state = by_producer.get(txn.producer_id)
            if state is not None:
                txn.transactional_id = state.transactional_id
                txn.coordinator_state = state.state
                txn.coordinator_partitions = state.partitions


@dataclass
class TxnReport:
    """What ``kbatch txn`` found: each partition's transactions (in partition order), the coordinator's view when
    ``__transaction_state`` was among the inputs, every finding as (path, finding), and the replay itself (what
    could not be opened, whether damage was met)."""

    partitions: list[PartitionTransactions]
    coordinator: CoordinatorView | None
    findings: list[tuple[str, Finding]]
    replayed: Replayed

    @property
    def damaged(self) -> bool:
        return self.replayed.damaged or any(finding.is_damage for _, finding in self.findings)


def transactions(files: list[str], decompressed_limit: int = DEFAULT_DECOMPRESSED_LIMIT) -> TxnReport:
    """Every transaction of every producer in the partitions ``files`` belong to, joined with the coordinator's
    state where ``__transaction_state`` is among them, and each partition's .txnindex and producer snapshots
    held against its log (:func:`cross_check`)."""
    from kbatch.ops.logs import partition_key, replay
    from kbatch.reading.reader import ReadOptions

    partitions: dict[str, PartitionTransactions] = {}
    coordinator = CoordinatorView()
    saw_coordinator = False

    def add(path: str, batch: Batch) -> None:
        nonlocal saw_coordinator
        if is_transaction_state(path):
            saw_coordinator = True
            coordinator.add_batch(batch)
            return
        key = partition_key(path)
        if key not in partitions:
            topic, partition = topic_partition(path)
            partitions[key] = PartitionTransactions(topic if topic is not None else path, partition, directory=key)
        partitions[key].add_batch(batch, path)

    replayed = replay(files, ReadOptions(records=True, decompressed_limit=decompressed_limit), add)
    unreadable = {path for path, _ in replayed.unreadable}
    for path in files:   # every segment read: an empty one (a new active segment) too
        view = partitions.get(partition_key(path))
        if view is not None and path not in unreadable:
            view.logs.add(path)
    findings = list(replayed.findings)
    join(list(partitions.values()), coordinator)
    views = [partitions[key] for key in sorted(partitions)]
    for view in views:
        findings += cross_check(view, decompressed_limit)
        view.stable = stable_offset(view)
    return TxnReport(views, coordinator if saw_coordinator else None, findings, replayed)
