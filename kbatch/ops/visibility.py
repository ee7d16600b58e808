"""What a consumer is given: the records a ``read_committed`` consumer sees, from the log's transactions.

A ``read_uncommitted`` consumer is given every data record.  A ``read_committed`` one is given less:

* nothing at or past the partition's last stable offset (LSO): the broker reads a fetch of isolation
  TXN_COMMITTED only up to it (UnifiedLog.read: ``case TXN_COMMITTED -> fetchLastStableOffsetMetadata()``),
  and the LSO is the first offset of the earliest transaction still open;
* no batch of an aborted transaction: the broker sends the aborted transactions of the range it read
  (LocalLog.addAbortedTransactions -> LogSegment.collectAbortedTxns, from the .txnindex), and the consumer
  skips a transactional batch of a producer whose aborted transaction began at or before the batch's last
  offset, until that producer's ABORT marker (CompletedFetch.nextFetchedRecord:
  consumeAbortedTransactionsUpTo, isBatchAborted, containsAbortMarker);
* never a control record (CompletedFetch.nextFetchedRecord: "control records are not returned to the user"),
  whatever the isolation;
* never a record the consumer refuses as corrupt (:func:`refused`), whatever the isolation;
* never a record below the partition's log start offset, whatever the isolation: a fetch below it is refused
  (UnifiedLog.read: "Received request for offset ... but we only have log segments starting from ...", an
  OffsetOutOfRangeException), so a consumer starts at it or later, and drops the records before its fetch
  offset of the batch it is sent (CompletedFetch.nextFetchedRecord: ``record.offset() >= nextFetchOffset``).
  DeleteRecords and retention move it inside a segment, whose records below it stay until the segment goes;
  the log directory's log-start-offset-checkpoint records it (kbatch.partition.textfiles.log_start_offset).

How each transaction ended is kbatch.ops.txn's (the one rule, its markers believed as kbatch.reading.markers says): a
transaction whose marker is not believed (damaged, or no ABORT or COMMIT) has an UNKNOWN outcome, and so has
the visibility of its records: kbatch says so rather than guess.  The broker takes the aborted ranges from the
.txnindex where this module takes them from the markers; where the two disagree kbatch.ops.txn.cross_check
reports it.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS, size_bounds
from kbatch.format.structs import SIZE_OFFSET
from kbatch.reading.model import Batch
from kbatch.kernels.cleanruns import untransacted_batches
from kbatch.reading.v2 import batch_in_view
from kbatch.walk.engine import each, entries


if TYPE_CHECKING:   # (kbatch.ops.txn loads the internal topics' schemas: only a view of transactions needs it)
    from kbatch.ops.txn import PartitionTransactions, Transaction
    from kbatch.partition.textfiles import CheckpointedOffset

VISIBLE = "visible"
ABORTED = "aborted"          # its transaction was aborted
NOT_YET = "not-yet"          # at or past the last stable offset: an open transaction holds it back
UNKNOWN = "unknown"          # its transaction's marker is not believed
CONTROL = "control"          # a control batch: never data


class Seen(NamedTuple):
    """What a read_committed consumer makes of a batch, and the transaction that decides it (if any)."""

    state: str
    transaction: Transaction | None = None

    @property
    def visible(self) -> bool | None:
        """True or False; None where the outcome is unknown."""
        return None if self.state == UNKNOWN else self.state == VISIBLE


class CommittedView:
    """The read_committed visibility of the batches of one partition, from its transactions (kbatch.ops.txn)."""

    def __init__(self, transactions: PartitionTransactions):
        self.transactions = transactions
        self.last_stable_offset = transactions.last_stable_offset
        # Each producer's transactions by first offset (a producer has one open at a time: they never overlap).
        self._by_producer: dict[int, tuple[list[int], list[Transaction]]] = {}
        for txn in sorted((txn for txn in transactions.transactions if not txn.empty), key=lambda t: t.first_offset):
            firsts, txns = self._by_producer.setdefault(txn.producer_id, ([], []))
            firsts.append(txn.first_offset)
            txns.append(txn)

    def batch(self, batch: Batch) -> Seen:
        if batch.is_control:
            return Seen(CONTROL)
        if self.last_stable_offset is not None and batch.base_offset is not None \
                and batch.base_offset >= self.last_stable_offset:
            return Seen(NOT_YET, self._transaction_of(batch))
        if not batch.is_transactional:
            return Seen(VISIBLE)
        txn = self._transaction_of(batch)
        if txn is None:   # (the pre-pass read every batch the search reads: only a batch read differently)
            return Seen(UNKNOWN)
        return Seen({"COMMIT": VISIBLE, "ABORT": ABORTED, "OPEN": NOT_YET}.get(txn.outcome, UNKNOWN), txn)

    def _transaction_of(self, batch: Batch) -> Transaction | None:
        if not batch.is_transactional or batch.producer_id is None:
            return None
        firsts, txns = self._by_producer.get(batch.producer_id, ((), ()))
        at = bisect.bisect_right(firsts, batch.base_offset) - 1
        if at >= 0 and txns[at].first_offset <= batch.base_offset <= txns[at].last_offset:
            return txns[at]
        return None


# -- what every consumer refuses ---------------------------------------------------------------------------------

def refused(batch: Batch, record) -> str | None:
    """Why a consumer is never given ``record`` of ``batch`` as data, or None.

    With check.crcs (on by default) CompletedFetch.nextFetchedRecord asks every v2 batch
    DefaultRecordBatch.ensureValid (its CRC) before any of its records, and every record Record.ensureValid
    (v0/v1: LegacyRecord's own CRC, also of a compressed wrapper's inner messages; v2: nothing), and fails the
    fetch where one is invalid (maybeEnsureValid: KafkaException): the consumer stops there, nothing of that
    batch or message is returned.  A length field kbatch found wrong (the CRC verifies only at another length)
    frames other bytes for Kafka, whose CRC then fails.  Whatever check.crcs says, the v2 record iterator reads
    the last record recordsCount counts and then, finding bytes left, throws instead of returning it
    (DefaultRecordBatch.RecordIterator.next: "records still remaining").  (Records past a damaged one, and those
    of a batch whose count is negative, which the iterator also refuses, are never read by kbatch.)
    """
    if batch.magic >= 2:
        if not batch.crc_valid:
            return "batch CRC fails"
    elif record.crc_valid is False:
        return "message CRC fails"
    for finding in batch.findings:
        if finding.code == "bad-length" and finding.pos == batch.pos + SIZE_OFFSET:
            return "length field wrong: the CRC fails over the bytes it frames"
        if finding.code == "trailing-bytes" and batch.magic >= 2 and record.pos + record.size == (
                finding.inner_pos if batch.compressed else finding.pos):
            return "bytes remain after the last record counted"
    return None


class UncommittedView:
    """What a read_uncommitted consumer makes of a batch: every data batch is given, never a control one (and,
    as for read_committed, nothing below the log start offset: :func:`from_log_start`)."""

    def batch(self, batch: Batch) -> Seen:
        return Seen(CONTROL if batch.is_control else VISIBLE)


def from_log_start(window, path: str):
    """The window (kbatch.partition.seek.Window; None: all) a consumer reads of the segment ``path``: from its
    partition's log start offset on, where that lies above the segment's base offset (see the module's
    docstring); the window itself otherwise. The records a window leaves out of a batch it cuts are dropped
    (seek.keep_selected), as the consumer drops them."""
    from kbatch.partition.seek import Window

    start = log_start_within(path)
    if start is None:
        return window
    window = window or Window()
    if window.low is not None and window.low >= start:
        return window
    return Window(start, window.high, window.since, window.until)


def log_start_within(path: str) -> int | None:
    """The log start offset of the partition the segment ``path`` is in, where it lies above the segment's base
    offset (records below it may be in the segment); else None."""
    from kbatch.files.inputs import segment_base_offset

    start = log_start_of(path).offset
    base = segment_base_offset(path)
    return None if start is None or (base is not None and base >= start) else start


def log_start_of(path: str) -> CheckpointedOffset:
    """The log start offset of the partition a segment is in, as its log directory's checkpoint says (its offset
    None for a segment outside a partition directory, or where the checkpoint does not say or cannot be read:
    kbatch.partition.textfiles)."""
    from kbatch.partition.textfiles import CheckpointedOffset, log_start_offset

    key = partition_of(path)
    return CheckpointedOffset() if key == path else log_start_offset(key)


def unread_log_start(path: str) -> list[str]:
    """What to tell where the log-start-offset-checkpoint of the partition ``path`` is in cannot be read: its
    findings, and that the records below the log start offset, which no consumer is given, cannot be told from
    the others (Kafka itself resets the log start to the first segment's base offset when it loads the log,
    LogManager.loadLogs, and takes the log directory offline, CheckpointFileWithFailureHandler.read); empty
    when it can be read, or there is none."""
    from kbatch.output.values import finding_text
    from kbatch.output.visible import visible

    read = log_start_of(path)
    if not read.unreadable:
        return []
    checkpoint = visible(str(read.path))
    return [f"kbatch: {checkpoint}: {finding_text(finding)}" for finding in read.findings] + [
        f"kbatch: {visible(partition_of(path))}: its log start offset cannot be read ({checkpoint} is damaged): "
        "the records below it, which no consumer is given, cannot be told apart and are shown"]


def partition_of(path: str) -> str:
    """The key a segment's partition goes by: its directory when that is a partition directory (TOPIC-N; two
    log dirs may each hold one), else the file itself."""
    from kbatch.files.inputs import topic_partition

    return os.path.dirname(path) if topic_partition(path)[0] is not None else path


def committed_view(path: str, decompressed_limit: int | None = None) -> tuple[CommittedView, list[tuple[str, Finding]]]:
    """The read_committed view of the partition ``path`` is a segment of: every segment of its directory read
    (a transaction's marker may lie in a later segment than its data), and the findings met doing it (damage,
    and where the .txnindex files disagree with the log)."""
    import glob

    from kbatch.reading.reader import ReadOptions, SegmentReader, load_records, open_input
    from kbatch.files.inputs import passed_over, topic_partition
    from kbatch.ops.txn import PartitionTransactions, cross_check

    key = partition_of(path)
    # segments are named by their zero-padded base offset: by name is by offset
    logs = sorted(log for log in glob.glob(os.path.join(glob.escape(key), "*.log"))
                  if passed_over(log) is None) if key != path else [path]   # a FIFO beside would never open
    topic, partition = topic_partition(path)
    view = PartitionTransactions(topic if topic is not None else path, partition, directory=key)
    findings: list[tuple[str, Finding]] = []
    # Transactions are told by batch headers and by the records of control batches: only those are decoded.
    options = ReadOptions() if decompressed_limit is None else ReadOptions(decompressed_limit=decompressed_limit)
    for log in logs:
        try:
            stream = open_input(log)
        except (OSError, ValueError):
            continue   # the search reports it, if it reads it
        view.logs.add(log)
        with stream:
            reader = SegmentReader(stream, options)

            def batch(batch: Batch, log=log, reader=reader) -> None:
                if batch.is_control and batch.magic >= 2 and batch.records is None:
                    load_records(batch, reader.read_bytes(batch.payload_pos, batch.payload_size),
                                 reader.decompressor, objects=False)
                view.add_batch(batch, log)

            # (the search reports the damage)
            each(entries(reader, run=_UntransactedRun(view, options.max_entry_size)), batch, lambda finding: None)
    if key != path:
        findings += cross_check(view, decompressed_limit)
    return CommittedView(view), findings


class _UntransactedRun:
    """A run of the walk engine (kbatch.walk.engine) over the batches that tell a view nothing but how far the
    partition's offsets go: the v2 batches :func:`kbatch.walk.engine.clean_v2_batches` hands out that are neither
    transactional nor control (PartitionTransactions.add_batch only counts their last offset; every other entry is
    the full reader's, and added as a Batch), in one compiled loop (kbatch.kernels.cleanruns.untransacted_batches:
    no Python object per batch)."""

    def __init__(self, view: PartitionTransactions, max_entry_size: int):
        self.view = view
        self.least, self.most = size_bounds(2, max_entry_size)   # a v2 batch's size field, framed
        self.last_pos: int | None = None

    def walk(self, window, pos: int, stop: int) -> int:
        data, i = batch_in_view(window, pos)
        base = pos - i   # the file position of data[0]
        with memoryview(data) as view:
            i, self.view.last_offset, last_taken = untransacted_batches(view, i, stop - base, self.least, self.most,
                                                                        CHECKSUMS[2], self.view.last_offset)
        if last_taken >= 0:
            self.last_pos = base + last_taken
        return base + i


class ConsumerViews:
    """What a consumer of ``isolation`` is given of each partition a command reads: the read_committed view, made
    once a partition, whose making is told (damage, .txnindex files that disagree with the log, and each
    transaction whose outcome is unknown); and where it starts, the log start offset, told once a partition.
    ``tell`` receives each line to tell (the command line: stderr); ``damaged`` says whether damage was met."""

    def __init__(self, decompressed_limit: int | None = None, isolation: str = "read_committed", *,
                 tell: Callable[[str], None]):
        self.decompressed_limit = decompressed_limit
        self.isolation = isolation
        self.tell = tell
        self.views: dict[str, CommittedView] = {}
        self.starts: set[str] = set()
        self.damaged = False

    def window(self, path: str, window):
        """The window of ``path`` such a consumer reads (:func:`from_log_start`)."""
        from kbatch.output.visible import visible

        narrowed = from_log_start(window, path)
        key = partition_of(path)
        if key not in self.starts:
            self.starts.add(key)
            for line in unread_log_start(path):
                self.tell(line)
                self.damaged = True
            if narrowed is not window:
                self.tell(f"kbatch: {visible(key)}: starts at its log start offset {log_start_of(path).offset} "
                          "(log-start-offset-checkpoint): no consumer is given the records below it")
        return narrowed

    def of(self, path: str) -> CommittedView | None:
        """The read_committed view of the partition ``path`` is in; None under read_uncommitted."""
        from kbatch.output.values import finding_text
        from kbatch.output.visible import visible

        if self.isolation != "read_committed":
            return None
        key = partition_of(path)
        if key not in self.views:
            view, findings = committed_view(path, self.decompressed_limit)
            for where, finding in findings:
                self.tell(f"kbatch: {visible(where)}: {finding_text(finding)}")
                self.damaged |= finding.is_damage
            for txn in view.transactions.transactions:
                if txn.outcome == "UNKNOWN" and not txn.empty:
                    self.tell(f"kbatch: {visible(txn.path)}: producer {txn.producer_id}'s transaction from offset "
                              f"{txn.first_offset} has an unknown outcome, and so whether read_committed gives its "
                              f"records: {txn.marker_doubt}")
            self.views[key] = view
        return self.views[key]
