"""Holding a partition directory's files against its log: what ``verify-crc --deep`` / ``--index-only`` add.

One pass over the segments in offset order (headers only; the one record of a
control batch is decoded for its marker) carries what Kafka itself derives
from the log -- index entries, the producer state, aborted transactions, leader
epochs -- and compares it with what the files beside the log say.  The
headers come from the walk that verifies each log where there is one
(``verify-crc --deep``: kbatch.walk.headers, fed through
kbatch.partition.verify.WalkedLogs to :meth:`PartitionCheck.take`), so that
a log is read once; else (``--index-only``, ``map``, ``scan``, ``txn``) the
check reads them itself (:meth:`PartitionCheck.run`).  Each
disagreement is a finding about the file that disagrees, at its position
there; the text names the other file and the position in it.

The rules are Kafka's (storage module): LogSegment.append and recover for the
indexes, ProducerAppendInfo / ProducerStateManager for the snapshot and the
transaction index, LeaderEpochFileCache.assign for the epoch checkpoint,
LocalLog for segment names.  Memory holds the indexes of one segment and one
state entry per producer, never the batches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterator

from kbatch.format.codecs import Decompressor
from kbatch.format.findings import Finding
from kbatch.reading.markers import describe
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader, load_records
from kbatch.files import kinds
from kbatch.partition.sidecars import Entry, Header, read_sidecar
from kbatch.partition.textfiles import log_start_offset
from kbatch.walk.engine import entries
from kbatch.walk.headers import BatchHeader, header_of

NO_OFFSET = -1

# The findings only a partition's files held together can make (each names the file that disagrees).
CROSS_CHECK_CODES = frozenset({
    "index-not-batch-start", "index-offset-mismatch", "index-zero-tail-rolled", "timeindex-mismatch",
    "timeindex-missing-max", "txnindex-missing", "txnindex-unmatched", "txnindex-mismatch", "snapshot-mismatch",
    "snapshot-missing-producer", "marker-not-believed", "epoch-mismatch", "epoch-missing", "segment-base-mismatch", "segment-overlap",
    "segment-gap"})

# Where a producer .snapshot (ProducerStateManager's) disagrees with the log below its offset.
SNAPSHOT_CHECK_CODES = frozenset({"snapshot-mismatch", "snapshot-missing-producer"})


@dataclass(frozen=True)
class Located:
    """A finding and the file it is about (and the producer, for a snapshot's entry held to the log)."""

    path: str
    finding: Finding
    producer_id: int | None = None


@dataclass
class ProducerState:
    """ProducerStateEntry as the log builds it (ProducerAppendInfo.appendDataBatch / appendEndTxnMarker)."""

    epoch: int = -1
    last_sequence: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int | None = None           # None: no marker seen, the log cannot tell
    current_txn_first_offset: int = NO_OFFSET
    txn_first_known: bool = True                   # False when the transaction may have begun before the walk
    txn_absent_before: int = -1                    # the last offset in no batch read, when its first batch was
    txn_after: int = -1                            # the producer's last offset before that batch
    last_seen_offset: int = -1                     # the last offset of any batch of the producer, marker or data


@dataclass(frozen=True)
class Abort:
    """An aborted transaction as the log tells it: what its .txnindex entry must say (TransactionIndex)."""

    producer_id: int
    first_offset: int | None        # its first batch read; None: the walk read none (the cleaner removed them)
    last_offset: int                # its ABORT marker's
    last_stable_offset: int
    first_known: bool               # the first batch read is the transaction's first (the whole history read)
    after: int                      # the producer's last offset before the transaction (-1: none read)
    absent_before: int              # the last offset in no batch read, below its first batch read (or marker)


@dataclass
class _OpenSegment:
    """What the check holds of the segment whose batches it is taking."""

    segment: SegmentFiles
    rolled: bool
    offsets: _IndexCursor
    times: _IndexCursor
    txn_entries: list[Entry]
    aborts: list[tuple[Abort, BatchHeader]] = field(default_factory=list)
    first: BatchHeader | None = None
    last_offset: int | None = None
    max_timestamp: tuple[int, int] = (-1, -1)     # (timestamp, offset): maxTimestampAndOffsetSoFar


@dataclass
class SegmentFiles:
    base: int
    log: str
    others: dict[str, str] = field(default_factory=dict)   # kind -> path


def partition_files(directory: str) -> tuple[list[SegmentFiles], dict[int, str], dict[str, str]]:
    """A partition directory's segments (by base offset), snapshots (by offset) and single files (by kind)."""
    segments: dict[int, SegmentFiles] = {}
    beside: list[tuple[int, str, str]] = []
    snapshots: dict[int, str] = {}
    singles: dict[str, str] = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        kind = kinds.kind_of(name)
        base = kinds.base_offset_of(name)
        if not os.path.isfile(path) or kind is None or name.endswith((".deleted", ".cleaned", ".swap")):
            continue
        if kind == kinds.LOG and base is not None:
            segments[base] = SegmentFiles(base, path)
        elif kind == kinds.PRODUCER_SNAPSHOT and base is not None:
            snapshots[base] = path
        elif kind in (kinds.OFFSET_INDEX, kinds.TIME_INDEX, kinds.TXN_INDEX) and base is not None:
            beside.append((base, kind, path))
        elif kind in (kinds.LEADER_EPOCH_CHECKPOINT, kinds.PARTITION_METADATA, kinds.QUORUM_STATE):
            singles[kind] = path
    for base, kind, path in beside:
        if base in segments:
            segments[base].others[kind] = path
    return [segments[base] for base in sorted(segments)], snapshots, singles


def held_against_log(directory: str, logs_read, held_kinds: frozenset[str], codes: frozenset[str],
                     decompressed_limit: int | None = None) -> tuple[list[str], list[Located]]:
    """A partition directory's files of ``held_kinds`` held against its log by :class:`PartitionCheck`: the files
    held, and where they disagree with it (``codes``) or do not read.  Only for a partition whose every segment
    is among ``logs_read`` (the check walks them all): else nothing."""
    if not os.path.isdir(directory):
        return [], []
    segments, snapshots, _ = partition_files(directory)
    if not segments or {os.path.normpath(segment.log) for segment in segments} \
            != {os.path.normpath(path) for path in logs_read}:
        return [], []
    held = [path for segment in segments for kind, path in segment.others.items() if kind in held_kinds]
    if kinds.PRODUCER_SNAPSHOT in held_kinds:
        held += snapshots.values()
    if not held:
        return [], []
    found = [located for located in PartitionCheck(directory, decompressed_limit=decompressed_limit).run()
             if located.finding.code in codes or kinds.kind_of(located.path) in held_kinds]
    return sorted(held), found


def _read(path: str, kind: str, keep=None) -> tuple[list[Entry], list, list[Finding]]:
    """A file beside a segment: its entries (those ``keep`` wants, when given), its header (if any), and every
    finding of its own.  The file is read a window at a time; only the entries kept are held."""
    entries, headers, findings = [], [], []
    with open(path, "rb") as stream:
        items = list(_items(read_sidecar(kind, stream, kinds.base_offset_of(path)), keep))
    for item in items:
        if isinstance(item, Entry):
            entries.append(item)
            findings += item.findings
        elif isinstance(item, Header):
            headers.append(item)
            findings += item.findings
        else:
            findings.append(item)
    return entries, headers, findings


def _items(items, keep):
    for item in items:
        if isinstance(item, Entry) and keep is not None and not keep(item):
            if item.findings:   # its findings are the file's, kept or not
                yield from item.findings
            continue
        yield item


def _where(path: str, pos: int) -> str:
    return f"{os.path.basename(path)} pos {pos}"


@dataclass
class LeaderEpochs:
    """The first batch of each leader epoch in a partition's log, and the partition's leader-epoch-checkpoint held
    against them (verify-crc --deep's cross-check, and kbatch replicas' for each copy)."""

    # (epoch, base offset, log path, pos, the last offset of the batches of the epochs before it or None)
    starts: list[tuple[int, int, str, int, int | None]] = field(default_factory=list)
    last_offset: int | None = None   # the last offset of a batch with an epoch

    def take(self, epoch: int | None, base_offset: int, last_offset: int, log: str, pos: int) -> None:
        """LeaderEpochFileCache.assign(partitionLeaderEpoch, baseOffset) for a batch of magic 2, in offset order."""
        if epoch is None or epoch < 0:
            return
        if not self.starts or epoch > self.starts[-1][0]:
            self.starts.append((epoch, base_offset, log, pos, self.last_offset))
        self.last_offset = last_offset

    def held_against(self, path: str, directory: str, first_base: int | None) -> Iterator[Located]:
        """The findings of the leader-epoch-checkpoint at ``path`` against the epochs taken: its own, an epoch of
        the batches it has no entry for (epoch-missing), an entry that cannot be where its epoch began
        (epoch-mismatch), for the partition ``directory`` (its name: one renamed -delete is loaded empty).
        ``first_base``: the first segment's base offset (0: the whole history is here)."""
        # Only the entries of the log's epochs are held, and the lowest epoch of all.
        log_epochs = {epoch for epoch, *_ in self.starts}
        lowest: list[int] = []
        count = [0]
        exact = first_base == 0

        def keep(entry: Entry) -> bool:
            count[0] += 1
            epoch = entry.fields["epoch"]
            if epoch is not None and (not lowest or epoch < lowest[0]):
                lowest[:] = [epoch]
            return epoch in log_epochs

        entries, _, own = _read(path, kinds.LEADER_EPOCH_CHECKPOINT, keep=keep)
        yield from (Located(path, finding) for finding in own)
        if not count[0] and (kinds.renamed_partition(directory) or ("", ""))[1] == "delete":
            # LogLoader.load of a directory renamed -delete (a broker restarted before removing it) recovers
            # nothing: its next offset is 0 and leaderEpochCache.truncateFromEndAsyncFlush(0) empties the
            # checkpoint. The -future and -stray ones are loaded like any partition.
            return
        checkpoint = {entry.fields["epoch"]: entry for entry in entries}
        # A log start offset its checkpoint cannot give (no file, or one that does not read: said by the log
        # directory's own findings) is held as one unknown: the lowest entry may start anywhere (below).
        starts, log_start = self.starts, log_start_offset(directory).offset
        if log_start is not None:
            starts = _after_log_start(starts, log_start)
        for number, (epoch, start, log, pos, before) in enumerate(starts):
            entry = checkpoint.get(epoch)
            if lowest and epoch <= lowest[0]:
                # The log start offset may lie above what log-start-offset-checkpoint says (the broker writes it
                # once a minute), or that file may not be beside the partition: records below it may still be
                # in the first segment while the checkpoint was truncated from the start at it (see
                # _after_log_start). So the lowest entry may start anywhere up to the next epoch's first batch,
                # and the epochs below it have no entry (the last epoch: up to the log end offset).
                if number + 1 < len(starts):
                    following, start, following_log, following_pos, _ = starts[number + 1]
                    bound = f"the first batch of epoch {following}, {_where(following_log, following_pos)}"
                else:
                    assert self.last_offset is not None   # set with each epoch start
                    start, bound = self.last_offset + 1, "the log end offset"
            else:
                bound = f"the first batch of epoch {epoch} left, {_where(log, pos)}"
            if entry is None:
                if number == 0 and not exact and lowest and lowest[0] < epoch:
                    continue   # the epoch began before the oldest segment kept; an older entry covers it
                if lowest and epoch < lowest[0]:
                    continue   # below the log start offset, perhaps (above)
                yield Located(path, Finding(
                    "epoch-missing", 0, 0, 0, "entries",
                    f"an entry '{epoch} {start}' (the first batch of epoch {epoch}, {_where(log, pos)})", "none"))
                continue
            found = entry.fields["start_offset"]
            # The entry was written when the leader appended the epoch's first batch; the log cleaner may since
            # have removed that batch (and the ones after it) but never touches the checkpoint, so the entry
            # may lie anywhere after the epochs before it, up to the first batch left (LogCleaner keeps
            # LeaderEpochFileCache as it is). After retention, the oldest entry starts at the log start offset.
            if before is None and exact:
                before = -1   # (the first segment's base offset, 0, less one)
            if found is None or found > start or (before is not None and found <= before):
                low = "" if before is None else f"above {before} (the epochs before it) and "
                yield Located(path, Finding(
                    "epoch-mismatch", entry.pos, entry.pos, entry.size, "start_offset",
                    f"{low}at most {start} ({bound})", str(found)))


class PartitionCheck:
    """The cross-checks of one partition directory; iterate :meth:`run` for the findings, in segment order."""

    def __init__(self, directory: str, *, decompressed_limit: int | None = None, segments_verified: bool = False):
        self.directory = directory
        # The segments are verified batch by batch too (verify-crc --deep, scan --deep): a first batch below
        # the name's base offset is then reported there (below-segment-base), once, not here a second time.
        self.segments_verified = segments_verified
        self.segments, self.snapshots, self.singles = partition_files(directory)
        self.decompressor = Decompressor(decompressed_limit) if decompressed_limit else Decompressor()
        self.producers: dict[int, ProducerState] = {}
        self.epochs = LeaderEpochs()                                # the batches' epochs, for the checkpoint
        self.walk_start: int | None = None                         # the first offset the walk saw
        self.exact = bool(self.segments) and self.segments[0].base == 0   # the whole history is here
        self.next_offset: int | None = None
        self.last_absent = -1                                       # the last offset below the walk in no batch read
        self.log_findings: list[Located] = []
        self.doubted_markers: set[int] = set()                     # offsets of the markers not believed
        self.marker_findings: list[Located] = []
        self._log = ""                                              # the segment being walked
        self.pending_snapshots = sorted(self.snapshots.items())    # those above the batches taken so far
        self.previous: tuple[SegmentFiles, int | None] | None = None   # (the segment before, its last offset)
        self.open: _OpenSegment | None = None                       # the segment whose batches are being taken
        self.batches = self.records = self.bytes = 0                # what the walk read, for its summary

    # -- the walk ---------------------------------------------------------------------------------------

    def run(self) -> Iterator[Located]:
        """Every finding, each log read here: the check on its own, where no walk verifying the logs hands it
        their batches' headers (each segment in offset order: :meth:`begin`, :meth:`take` for each of its log's
        batches in file order, :meth:`finish`; then :meth:`end`)."""
        for number, segment in enumerate(self.segments):
            with open(segment.log, "rb") as stream:
                reader = SegmentReader(stream, ReadOptions())
                yield from self.begin(number)
                for batch in self._headers(segment, reader):
                    yield from self.take(batch)
                yield from self.finish(reader.size)   # (its size once read: a log cut while read is shorter)
        yield from self.end()

    def _headers(self, segment: SegmentFiles, reader: SegmentReader) -> Iterator[BatchHeader]:
        """The headers of a log's batches as this check reads them (headers only; a producer's control batch's
        record for its marker); the damage met on the way is kept in :attr:`log_findings`."""
        def load(batch: Batch) -> None:
            load_records(batch, reader.read_bytes(batch.payload_pos, batch.payload_size), self.decompressor)

        for item in entries(reader):
            if isinstance(item, Finding):
                if item.is_damage:
                    self.log_findings.append(Located(segment.log, item))
                continue
            yield header_of(item, load)

    def begin(self, number: int) -> Iterator[Located]:
        """The ``number``-th segment's start: its index files read (their own findings), its batches to come."""
        segment = self.segments[number]
        rolled = number < len(self.segments) - 1
        offsets = self._index(segment, kinds.OFFSET_INDEX, rolled)
        times = self._index(segment, kinds.TIME_INDEX, rolled)
        yield from offsets.own + times.own
        txn_entries: list[Entry] = []
        if kinds.TXN_INDEX in segment.others:
            txn_entries, _, own = _read(segment.others[kinds.TXN_INDEX], kinds.TXN_INDEX)
            yield from (Located(segment.others[kinds.TXN_INDEX], finding) for finding in own)
        self._log = segment.log
        self.open = _OpenSegment(segment, rolled, offsets, times, txn_entries)

    def take(self, batch: BatchHeader) -> Iterator[Located]:
        """The open segment's next batch (in file order) held against its files and the partition's."""
        open_, pending_snapshots = self.open, self.pending_snapshots
        assert open_ is not None   # (begin)
        self.batches += 1
        self.records += max(batch.records_count or 0, 0)
        if open_.first is None:
            open_.first = batch
            yield from self._segment_start(open_.segment, batch, self.previous)
        # Snapshots taken at an offset this batch reaches hold the state before it.
        while pending_snapshots and pending_snapshots[0][0] <= batch.base_offset:
            yield from self._snapshot(*pending_snapshots.pop(0))
        yield from open_.offsets.batch(batch)
        if batch.max_timestamp is not None and batch.max_timestamp > open_.max_timestamp[0]:
            open_.max_timestamp = (batch.max_timestamp, batch.last_offset)
            yield from open_.times.time_batch(batch, open_.max_timestamp)
        else:
            yield from open_.times.time_batch(batch, None)
        if batch.magic >= 2:
            self.epochs.take(batch.partition_leader_epoch, batch.base_offset, batch.last_offset, open_.segment.log,
                             batch.pos)
        if self.next_offset is None or batch.base_offset > self.next_offset:
            self.last_absent = batch.base_offset - 1   # a gap: what compaction leaves
        abort = self._producer(batch)
        yield from self.marker_findings
        self.marker_findings.clear()
        if abort is not None:
            open_.aborts.append((abort, batch))
        open_.last_offset = batch.last_offset
        self.next_offset = batch.last_offset + 1

    def finish(self, size: int) -> Iterator[Located]:
        """The open segment's end: its log ``size`` bytes, every batch taken."""
        open_, self.open = self.open, None
        assert open_ is not None   # (begin)
        self.bytes += size
        yield from open_.offsets.finish(size)
        yield from open_.times.finish_time(open_.rolled, open_.max_timestamp, open_.segment.log)
        yield from self._txn_index(open_.segment, open_.txn_entries, open_.aborts)
        self.previous = (open_.segment, open_.last_offset)

    def end(self) -> Iterator[Located]:
        """The findings after the last segment's: the snapshots above the log, the epochs, the files the log
        says nothing of."""
        while self.pending_snapshots:
            yield from self._snapshot(*self.pending_snapshots.pop(0))
        path = self.singles.get(kinds.LEADER_EPOCH_CHECKPOINT)
        if path is not None:
            yield from self.epochs.held_against(path, self.directory, self.segments[0].base if self.segments else None)
        for kind in (kinds.PARTITION_METADATA, kinds.QUORUM_STATE):   # read on their own: the log says nothing of them
            if kind in self.singles:
                path = self.singles[kind]
                yield from (Located(path, finding) for finding in _read(path, kind)[2])

    # -- segments ---------------------------------------------------------------------------------------

    def _segment_start(self, segment: SegmentFiles, batch: BatchHeader, previous) -> Iterator[Located]:
        if self.walk_start is None:
            self.walk_start = batch.base_offset
        if batch.base_offset < segment.base and not self.segments_verified:
            # LogSegment: offsets are stored relative to the base offset in the name; below it is corrupt.
            yield Located(segment.log, Finding(
                "segment-base-mismatch", batch.pos, batch.pos, 8, "base_offset",
                f"{segment.base} or more (the base offset in the file name)",
                f"{batch.base_offset} (the first batch, {_where(segment.log, batch.pos)})"))
        if previous is not None and previous[1] is not None:
            before, last = previous
            if last >= segment.base:
                yield Located(segment.log, Finding(
                    "segment-overlap", batch.pos, batch.pos, 8, "base_offset",
                    f"a base offset above {last} (the last offset of {os.path.basename(before.log)})",
                    f"the file name's {segment.base}"))
            elif batch.base_offset > last + 1:
                yield Located(segment.log, Finding(
                    "segment-gap", batch.pos, batch.pos, 8, "base_offset",
                    f"{last + 1} (after the last offset of {os.path.basename(before.log)})",
                    f"{batch.base_offset}: offsets {last + 1}..{batch.base_offset - 1} are in no segment"))

    # -- offset and time indexes ----------------------------------------------------------------------

    def _index(self, segment: SegmentFiles, kind: str, rolled: bool) -> "_IndexCursor":
        path = segment.others.get(kind)
        if path is None:
            return _IndexCursor(kind, None, [], [])
        entries, _, own = _read(path, kind)
        located = [Located(path, finding) for finding in own]
        if rolled:
            # LogSegment.onBecomeInactiveSegment trims a rolled segment's indexes; a zero tail left means
            # the broker never did, and Kafka would read the zero slots as entries.
            located = [Located(path, Finding("index-zero-tail-rolled", f.entry_pos, f.pos, f.size, f.field,
                                             "no zero tail (a rolled segment's index is trimmed)", f.actual))
                       if f.code == "zero-tail" else Located(path, f) for f in own]
        return _IndexCursor(kind, path, entries, located, log=segment.log)

    # -- producer state ---------------------------------------------------------------------------------

    def _producer(self, batch: BatchHeader) -> Abort | None:
        """ProducerAppendInfo.append; returns the aborted transaction an ABORT marker completes."""
        producer_id, epoch = batch.producer_id, batch.producer_epoch
        if producer_id is None or producer_id < 0 or epoch is None:   # a v0/v1 message, or a batch of no producer
            return None
        state = self.producers.get(producer_id)
        if state is None:
            state = self.producers[producer_id] = ProducerState()
        if state.epoch != epoch:   # ProducerStateEntry.maybeUpdateProducerEpoch
            state.epoch, state.last_sequence, state.last_offset, state.offset_delta = epoch, -1, -1, 0
        if batch.is_control:
            found = batch.marker
            if found is None:
                return None   # an empty control batch: its transaction was cleaned away
            marker = found.believed
            if marker is None:
                # Not believed (kbatch.reading.markers): the transaction it would end has no known outcome, so nothing
                # about it (its .txnindex entry, the snapshot's coordinator epoch) can be held to the log.
                self.doubted_markers.add(batch.base_offset)
                self.marker_findings.append(Located(self._log, Finding(
                    "marker-not-believed", batch.pos, batch.pos, batch.size, "control",
                    "an ABORT or COMMIT marker that reads (CRC and record)", describe(found, batch))))
                state.coordinator_epoch = None
                state.current_txn_first_offset = NO_OFFSET
                state.txn_first_known = False
                return None
            completed = None
            if marker.type == "ABORT":
                begun = state.current_txn_first_offset != NO_OFFSET
                # With no batch of it read, the cleaner may have removed them all and kept the marker and its
                # .txnindex entry (CleanedTransactionMetadata.onControlBatchRead); Kafka writes no entry for
                # a transaction with no batch (ProducerAppendInfo.appendEndTxnMarker), so _txn_index asks
                # the entry to say where they were.
                completed = Abort(producer_id, state.current_txn_first_offset if begun else None,
                                  batch.base_offset, self._last_stable_offset(producer_id, batch.base_offset),
                                  state.txn_first_known, state.txn_after if begun else state.last_seen_offset,
                                  state.txn_absent_before if begun else self.last_absent)
            state.last_seen_offset = batch.last_offset
            state.coordinator_epoch = marker.coordinator_epoch
            timestamp = batch.marker_timestamp
            assert timestamp is not None   # v2: a batch and its records have timestamps
            state.timestamp = timestamp
            state.current_txn_first_offset = NO_OFFSET
            state.txn_first_known = True
            return completed
        state.last_sequence = batch.last_sequence
        state.last_offset, state.offset_delta = batch.last_offset, batch.last_offset - batch.base_offset
        assert batch.max_timestamp is not None   # (v2)
        state.timestamp = batch.max_timestamp
        if batch.is_transactional and state.current_txn_first_offset == NO_OFFSET:
            state.current_txn_first_offset = batch.base_offset
            # Without the partition's whole history the first batch seen may not be the transaction's first.
            state.txn_first_known = self.exact
            state.txn_absent_before, state.txn_after = self.last_absent, state.last_seen_offset
        state.last_seen_offset = batch.last_offset
        return None

    def _last_stable_offset(self, producer_id: int, marker_offset: int) -> int:
        """ProducerStateManager.lastStableOffset: the earliest other open transaction, else lastOffset + 1."""
        others = [state.current_txn_first_offset for pid, state in self.producers.items()
                  if pid != producer_id and state.current_txn_first_offset != NO_OFFSET]
        return min(others) if others else marker_offset + 1

    def _snapshot(self, offset: int, path: str) -> Iterator[Located]:
        # Only the entries of the log's producers are compared, the others are not held: a producer only in the
        # snapshot is one whose batches retention or the cleaner removed, and Kafka keeps it (UnifiedLog.
        # rebuildProducerState: ProducerStateManager.truncateAndReload loads the latest snapshot, dropping only
        # producers idle past producer.id.expiration.ms, then replays the log after its offset).
        entries, headers, own = _read(path, kinds.PRODUCER_SNAPSHOT,
                                      keep=lambda entry: entry.fields["producer_id"] in self.producers)
        yield from (Located(path, finding) for finding in own)
        if any(finding.is_damage for finding in own) or self.walk_start is None or offset <= self.walk_start:
            return   # Kafka discards a corrupt snapshot; one before the log's first batch has nothing to hold
        by_producer = {entry.fields["producer_id"]: entry for entry in entries}
        for producer_id, state in sorted(self.producers.items()):
            entry = by_producer.get(producer_id)
            if entry is None:
                yield Located(path, Finding(
                    "snapshot-missing-producer", 0, 0, 0, "producer_entries",
                    f"an entry for producer {producer_id} (its last batch, offset {state.last_offset}, "
                    f"is below the snapshot's offset {offset})", "none (expired, or lost)"), producer_id)
                continue
            # ProducerStateManager.writeSnapshot writes each ProducerStateEntry as the appends left it:
            # ProducerAppendInfo.appendDataBatch (via ProducerStateEntry.addBatch: epoch, last sequence, last
            # offset, offset delta, the batch's maxTimestamp; the transaction's first offset) and
            # appendEndTxnMarker (coordinator epoch, the marker record's timestamp, no open transaction).
            expected = {"epoch": state.epoch, "last_sequence": state.last_sequence,
                        "last_offset": state.last_offset, "offset_delta": state.offset_delta,
                        "timestamp": state.timestamp}
            if state.coordinator_epoch is not None:
                expected["coordinator_epoch"] = state.coordinator_epoch
            if state.txn_first_known:
                expected["current_txn_first_offset"] = state.current_txn_first_offset
            for name, value in expected.items():
                if entry.fields[name] != value:
                    yield Located(path, Finding(
                        "snapshot-mismatch", entry.pos, entry.pos, entry.size, f"producer_entries[{entry.slot}].{name}",
                        f"{value} (producer {producer_id} in the log below offset {offset})",
                        str(entry.fields[name])), producer_id)

    # -- transaction index --------------------------------------------------------------------------------

    def _txn_index(self, segment: SegmentFiles, entries: list[Entry], aborts: list[tuple[Abort, BatchHeader]]) \
            -> Iterator[Located]:
        path = segment.others.get(kinds.TXN_INDEX)
        by_last = {entry.fields["last_offset"]: entry for entry in entries}
        for abort, batch in aborts:
            entry = by_last.pop(abort.last_offset, None)
            if entry is None:
                if abort.first_offset is None:
                    continue   # no batch, no entry: Kafka writes none, and the cleaner drops it with the batches
                # About the log: the ABORT marker is there, its entry is not (nor, maybe, the .txnindex).
                txnindex = os.path.basename(path) if path else "no .txnindex file"
                yield Located(segment.log, Finding(
                    "txnindex-missing", batch.pos, batch.pos, batch.size, "aborted_txn",
                    f"an entry for producer {abort.producer_id}'s aborted transaction {abort.first_offset}.."
                    f"{abort.last_offset} in {os.path.basename(os.path.splitext(segment.log)[0])}.txnindex",
                    f"none ({txnindex})" if path else txnindex))
                continue
            assert path is not None   # the entry was read from it
            marker = f"ABORT marker at {_where(segment.log, batch.pos)}"
            found_first = entry.fields["first_offset"]
            checks = [("producer_id", entry.fields["producer_id"] == abort.producer_id,
                       f"{abort.producer_id} ({marker})")]
            # Where the cleaner removed the transaction's batches (all, or the first ones) and kept the marker and
            # the entry, the entry's first offset is as it was (CleanedTransactionMetadata.onControlBatchRead
            # appends the AbortedTxn it took from the .txnindex), and its lastStableOffset cannot be had again:
            # the batches it was worked from may be gone too.
            cleaned = _cleaned_away(abort, found_first)
            if abort.first_offset is None and not cleaned:
                checks.append(("first_offset", False,
                               f"above {abort.after} (producer {abort.producer_id}'s last offset before the "
                               f"{marker}) and at most {abort.absent_before} (the last offset in no batch before "
                               "it): where the cleaner removed the transaction's batches"))
            elif abort.first_known and not cleaned:
                checks.append(("first_offset", found_first == abort.first_offset, f"{abort.first_offset} ({marker})"))
                checks.append(("last_stable_offset", entry.fields["last_stable_offset"] == abort.last_stable_offset,
                               f"{abort.last_stable_offset} ({marker})"))
            for name, right, expected in checks:
                if not right:
                    yield Located(path, Finding(
                        "txnindex-mismatch", entry.pos, entry.pos, entry.size, name, expected, str(entry.fields[name])))
        for entry in by_last.values():
            assert path is not None   # the entry was read from it
            if entry.fields["last_offset"] in self.doubted_markers:
                continue   # it names a marker not believed (reported at the marker): it may well be right
            yield Located(path, Finding(
                "txnindex-unmatched", entry.pos, entry.pos, entry.size, "last_offset",
                f"an ABORT marker at offset {entry.fields['last_offset']} in {os.path.basename(segment.log)}",
                "no such marker"))

def _cleaned_away(abort: Abort, first_offset: int | None) -> bool:
    """Whether a .txnindex entry's first offset is where the log cleaner removed the aborted transaction's first
    batches: below the first batch read of it (or its marker, none read), above the producer's batches before
    it, and at or below an offset in no batch (Cleaner discards an aborted batch whole, or keeps its header
    only when it is the producer's last: cleanInto's RETAIN_EMPTY)."""
    below = abort.last_offset if abort.first_offset is None else abort.first_offset
    return first_offset is not None and abort.after < first_offset <= abort.absent_before and first_offset < below


def _after_log_start(starts: list[tuple], log_start: int) -> list[tuple]:
    """The epochs as LeaderEpochFileCache.truncateFromStart(logStartOffset) leaves them once DeleteRecords or
    retention moved the log start offset past batches still in the first segment: every epoch whose successor
    starts at or below it goes, and the last of those starts at the log start offset itself."""
    kept = [entry for number, entry in enumerate(starts)
            if number + 1 == len(starts) or starts[number + 1][1] > log_start]
    if kept and kept[0][1] < log_start:
        epoch, _, log, pos, _ = kept[0]
        kept[0] = (epoch, log_start, log, pos, log_start - 1)
    return kept


class _IndexCursor:
    """An offset or time index walked alongside its segment's batches (both are in position/offset order)."""

    def __init__(self, kind: str, path: str | None, entries: list[Entry], own: list[Located], log: str = ""):
        self.kind, self.path, self.own, self.log = kind, path, own, log
        if kind == kinds.OFFSET_INDEX:
            self.pending = sorted(entries, key=lambda entry: entry.fields["position"])
        else:
            self.pending = sorted(entries, key=lambda entry: entry.fields["offset"] or 0)
        self.open: Entry | None = None          # the offset index entry whose stretch of batches is being read
        self.stretch_last: int | None = None
        self.last_timestamp = max((entry.fields["timestamp"] for entry in entries), default=-1) \
            if kind == kinds.TIME_INDEX else -1

    # offset index (OffsetIndex; LogSegment.append: largest offset of an append -> where the append began)

    def batch(self, batch: BatchHeader) -> Iterator[Located]:
        if self.kind != kinds.OFFSET_INDEX:
            return
        while self.pending and self.pending[0].fields["position"] < batch.pos + batch.size:
            entry = self.pending.pop(0)
            position = entry.fields["position"]
            if position != batch.pos:
                yield self._finding("index-not-batch-start", entry, "position",
                                    f"the start of a batch (the batch around it starts at "
                                    f"{_where(self.log, batch.pos)})" if position > batch.pos else
                                    f"the start of a batch (the next starts at {_where(self.log, batch.pos)})",
                                    str(position))
                continue
            yield from self._close()
            if entry.fields["offset"] is not None and entry.fields["offset"] < batch.base_offset:
                yield self._finding("index-offset-mismatch", entry, "relative_offset",
                                    f"{batch.base_offset}..{batch.last_offset} (the batch at "
                                    f"{_where(self.log, batch.pos)}); a seek for {entry.fields['offset']} "
                                    "would start past it", str(entry.fields["offset"]))
                continue
            self.open = entry
        self.stretch_last = batch.last_offset

    def _close(self) -> Iterator[Located]:
        entry, self.open = self.open, None
        if entry is not None and self.stretch_last is not None and entry.fields["offset"] > self.stretch_last:
            yield self._finding("index-offset-mismatch", entry, "relative_offset",
                                f"at most {self.stretch_last} (the last offset before the next entry's position)",
                                str(entry.fields["offset"]))

    def finish(self, log_size: int) -> Iterator[Located]:
        if self.kind != kinds.OFFSET_INDEX:
            return
        yield from self._close()
        for entry in self.pending:
            yield self._finding("index-not-batch-start", entry, "position",
                                f"a batch start below {log_size} (the size of {os.path.basename(self.log)})",
                                str(entry.fields["position"]))

    # time index (TimeIndex; LogSegment.append: maxTimestampSoFar and the last offset of its batch)

    def time_batch(self, batch: BatchHeader, new_max: tuple[int, int] | None) -> Iterator[Located]:
        if self.kind != kinds.TIME_INDEX:
            return
        while self.pending and (self.pending[0].fields["offset"] or 0) <= batch.last_offset:
            entry = self.pending.pop(0)
            timestamp, offset = entry.fields["timestamp"], entry.fields["offset"]
            if offset != batch.last_offset:
                yield self._finding("timeindex-mismatch", entry, "relative_offset",
                                    "the last offset of a batch (the batch holding it ends at "
                                    f"{batch.last_offset}, {_where(self.log, batch.pos)})", str(offset))
            elif new_max is None or timestamp != new_max[0]:
                expected = (f"{new_max[0]}" if new_max is not None else
                            f"no entry: the batch ending at {offset} ({_where(self.log, batch.pos)}) "
                            f"raises no maximum (its maxTimestamp {batch.max_timestamp})")
                if new_max is not None:
                    expected += f" (the maxTimestamp of the batch at {_where(self.log, batch.pos)})"
                yield self._finding("timeindex-mismatch", entry, "timestamp", expected, str(timestamp))

    def finish_time(self, rolled: bool, max_timestamp: tuple[int, int], log: str) -> Iterator[Located]:
        if self.kind != kinds.TIME_INDEX or self.path is None:
            return
        for entry in self.pending:
            yield self._finding("timeindex-mismatch", entry, "relative_offset",
                                f"an offset of {os.path.basename(log)} (it ends before)", str(entry.fields["offset"]))
        # LogSegment.onBecomeInactiveSegment appends the segment's largest timestamp when it rolls.
        if rolled and max_timestamp[0] >= 0 and self.last_timestamp < max_timestamp[0]:
            yield Located(self.path, Finding(
                "timeindex-missing-max", 0, 0, 0, "entries",
                f"a last entry ({max_timestamp[0]}, offset {max_timestamp[1]}): the segment's largest timestamp, "
                "appended when it rolled", f"the last entry's timestamp {self.last_timestamp}"))

    def _finding(self, code, entry: Entry, field_name, expected, actual) -> Located:
        assert self.path is not None   # only a cursor over an index file has its entries
        return Located(self.path, Finding(code, entry.pos, entry.pos, entry.size, field_name, expected, actual))
