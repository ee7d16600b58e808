"""One partition across several brokers' copies: where they diverge, what Kafka truncates each to, what is lost.

Each copy is a partition directory (``TOPIC-N``) with the checkpoints of its log directory.  Its batches are
read as verify-crc reads them, headers and CRCs (:func:`walk_copy`), every copy's stream in step (:func:`compare`), so
memory holds one window of each copy whatever the sizes; only the batches not every copy holds are read again,
their records decoded (:func:`records_held_by_some`); and where a copy lacks a batch another holds, and its own
log cleaner may have removed it whole, that copy's records below its cleaner checkpoint, from the batch on, for the
batch's keys (:class:`Removable`).  Each copy is compared as its broker holds it once started,
after Kafka's own log recovery (:func:`recovered`: a damaged batch past the recovery point cuts the log there).
The truncation each copy would undergo when it follows the copy with the newest leader epoch is Kafka's, round by
round (:func:`truncation_offset`).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple, cast

from kbatch.files import kinds
from kbatch.files.inputs import topic_partition
from kbatch.format.findings import Finding
from kbatch.format.structs import BATCH_HEADER, CONTROL_FLAG_MASK, SIZE_OFFSET
from kbatch.kernels.batchrules import last_sequence
from kbatch.partition.crosscheck import LeaderEpochs
from kbatch.partition.sidefile import Entry, SideFile
from kbatch.partition.textfiles import (CheckpointedOffset, checkpoint, checkpointed_offset, loaded_log_start,
                                       partition_metadata)
from kbatch.reading.cleaner import compacted_alike, removed_whole
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.reading.summary import FileSummary
from kbatch.walk.crcrun import CrcRun
from kbatch.walk.engine import Walk, entries

UNDEFINED_EPOCH = -1   # LeaderEpochFileCache / OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH

# The offset checkpoints of a copy's log directory, and what Kafka does with each when it cannot read it (besides
# taking the log directory offline: CheckpointFileWithFailureHandler.read).
HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINTS_UNREAD = {
    HIGH_WATERMARK_CHECKPOINT: "its high watermark is unknown",
    RECOVERY_POINT_CHECKPOINT: "Kafka's log recovery takes the recovery point as 0 (LogManager.loadLogs)",
    kinds.LOG_START_OFFSET_CHECKPOINT: "Kafka resets the log start offset to the first segment's base offset "
                                       "(LogManager.loadLogs)",
}


class NotACopy(ValueError):
    """A path that names no partition directory (or log directory holding one): a usage error."""


@dataclass
class Damage:
    """An entry of a copy that Kafka's validation fails, and what its log recovery on start does about it."""

    segment: str
    pos: int                                    # where the entry (or the range that is no batch) begins
    base_offset: int | None                     # as its header says (None: bytes that are no batch)
    why: str
    truncate_to: int | None = None              # where recovery cuts the log (None: recovery does not reach it)
    dropped: tuple[int, int] | None = None      # the offsets of the batches cut off with it (first, last)
    is_damage: bool = True                      # False: a zero tail, which recovery cuts off too
    later_segments_dropped: bool = False        # recoverLog deleted the segments after it; False: only its own
                                                # segment is cut (recovered on opening, its offset index missing)


@dataclass
class Copy:
    """One broker's copy of a partition, and what its directory's files say about it."""

    path: str                                   # the partition directory
    topic: str
    partition: int
    topic_id: str | None = None                 # partition.metadata
    high_watermark: int | None = None           # replication-offset-checkpoint
    recovery_point: int | None = None           # recovery-point-offset-checkpoint
    checkpointed_log_start: int | None = None   # log-start-offset-checkpoint
    epoch_file: list[tuple[int, int]] = field(default_factory=list)   # leader-epoch-checkpoint (epoch, start)
    # the offset checkpoints above as read, by file name: their findings where one cannot be read
    offset_checkpoints: dict[str, CheckpointedOffset] = field(default_factory=dict)
    clean_shutdown: bool = False                # .kafka_cleanshutdown in its log directory
    cleaner_checkpoint: int | None = None       # cleaner-offset-checkpoint: its log cleaner's first dirty offset
    # filled as the batches are read
    log_start_offset: int | None = None         # Kafka's (see kafka_log_start); None: no segment
    log_end_offset: int = 0
    batch_epochs: LeaderEpochs = field(default_factory=LeaderEpochs)   # the first batch of each epoch
    first_base: int | None = None               # the first segment's base offset (its name)
    # leader-epoch-checkpoint: where it is damaged or disagrees with the batches (epoch_disagreements)
    epoch_file_findings: list[Finding] = field(default_factory=list)
    damaged: int = 0                            # damaged batches or ranges
    # Kafka's log recovery on start (see recovered): the epochs it assigns, in its order; the entry it cuts the
    # log at; the first entry it fails to validate and does not reach (the damage stays)
    recovered_epochs: list[tuple[int, int]] = field(default_factory=list)
    recovery: Damage | None = None
    kept_damage: Damage | None = None
    # what Kafka's rule gives
    epochs: list[tuple[int, int]] = field(default_factory=list)   # the cache Kafka loads (see loaded_epochs)
    diverges_at: int | None = None
    truncate_to: int | None = None
    truncated_fully: bool = False               # truncated whole and started at the leader's log start
    rounds: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """How the copy is shown: the log directory's name (broker-1, ...), or the path."""
        return os.path.basename(os.path.dirname(self.path)) or self.path

    @property
    def latest_epoch(self) -> int | None:
        return self.epochs[-1][0] if self.epochs else None

    def checkpoint_findings(self, name: str) -> tuple[Finding, ...]:
        """The findings of the log directory's offset checkpoint ``name`` (none: it reads, or there is none)."""
        read = self.offset_checkpoints.get(name)
        return read.findings if read is not None else ()

    @property
    def high_watermark_unread(self) -> bool:
        """Its replication-offset-checkpoint cannot be read: its high watermark is unknown, not absent."""
        return bool(self.checkpoint_findings(HIGH_WATERMARK_CHECKPOINT))

    def hold(self, head: Head) -> None:
        """Count a batch of the copy's in its offsets and its batches' epochs (read in offset order)."""
        if head.last_offset >= self.log_end_offset:
            self.log_end_offset = head.last_offset + 1
        self.batch_epochs.take(head.partition_leader_epoch, head.base_offset, head.last_offset, head.segment, head.pos)


def find_copies(paths: list[str], partition: str | None = None) -> dict[tuple[str, int], list[str]]:
    """Each partition's directories among ``paths`` (partition or log directories); NotACopy for a path that
    holds none."""
    found: dict[tuple[str, int], list[str]] = {}
    for path in paths:
        path = os.path.abspath(path.rstrip("/") or "/")
        if not os.path.isdir(path):
            raise NotACopy(f"{path}: not a directory")
        # a log directory holds partition directories; else a directory named TOPIC-N is one itself
        # (a log directory's own name, broker-1, reads as TOPIC-N too)
        candidates = sorted(
            entry.path for entry in os.scandir(path) if entry.is_dir() and
            topic_partition(os.path.join(entry.path, "x"))[0] is not None and not kinds.renamed_partition(entry.path))
        if not candidates and topic_partition(os.path.join(path, "x"))[0] is not None:
            candidates = [path]
        if not candidates:
            raise NotACopy(f"{path}: neither a partition directory (TOPIC-N) nor a log directory holding one")
        for directory in candidates:
            topic, number = topic_partition(os.path.join(directory, "x"))
            if topic is not None and number is not None and (partition is None or f"{topic}-{number}" == partition):
                found.setdefault((topic, number), []).append(directory)
    return found


def load_copy(directory: str) -> Copy:
    """A copy's checkpoints and epoch file (its batches are read by :func:`compare_streams`)."""
    topic, number = topic_partition(os.path.join(directory, "x"))
    if topic is None or number is None:
        raise NotACopy(f"{directory}: not a partition directory (TOPIC-N)")
    read = {name: checkpointed_offset(directory, name) for name in OFFSET_CHECKPOINTS_UNREAD}
    copy = Copy(directory, topic, number,
                high_watermark=read[HIGH_WATERMARK_CHECKPOINT].offset,
                recovery_point=read[RECOVERY_POINT_CHECKPOINT].offset,
                checkpointed_log_start=read[kinds.LOG_START_OFFSET_CHECKPOINT].offset, offset_checkpoints=read)
    metadata = os.path.join(directory, "partition.metadata")
    if os.path.isfile(metadata):
        with open(metadata, "rb") as stream:
            for item in partition_metadata(SideFile(stream), None):
                if isinstance(item, Entry) and not item.is_damaged:
                    copy.topic_id = item.fields.get("topic_id")
    epochs = os.path.join(directory, "leader-epoch-checkpoint")
    if os.path.isfile(epochs):
        with open(epochs, "rb") as stream:
            for line in checkpoint(kinds.LEADER_EPOCH_CHECKPOINT, SideFile(stream)):
                # (a line that does not read is told by epoch_disagreements, as verify-crc --deep tells it)
                if isinstance(line, Entry) and not line.findings and None not in line.fields.values():
                    copy.epoch_file.append((line.fields["epoch"], line.fields["start_offset"]))
    copy.clean_shutdown = os.path.isfile(os.path.join(os.path.dirname(directory), kinds.CLEAN_SHUTDOWN))
    copy.cleaner_checkpoint = checkpointed_offset(directory, CLEANER_CHECKPOINT).offset
    return copy


def segments(directory: str) -> list[str]:
    """The partition's segments, in offset order (their names are their base offsets).  Anything else so named
    (a directory, a FIFO: opening that would wait for a writer forever) is an OSError, raised before any is
    opened: the copy cannot be read as its broker holds it."""
    from kbatch.files.inputs import passed_over

    found = sorted(glob.glob(os.path.join(glob.escape(directory), "*.log")), key=os.path.basename)
    for path in found:
        if (why := passed_over(path)) is not None:
            raise OSError(f"{path}: {why}: passed over unopened")
    return found


def segment_base(path: str) -> int:
    """A segment's base offset, the number its file name is (LogFileUtils.offsetFromFile); 0 for a name that is no
    number (on which Kafka's log loading fails)."""
    name = os.path.basename(path)[:-len(".log")]
    return int(name) if name.isascii() and name.isdigit() else 0


# What makes two copies of a batch the same (Head.key): base offset, last offset, size, leader epoch, CRC.
HeadKey = tuple[int, int, int, int | None, int | None]


class Head(NamedTuple):
    """What comparing copies reads of one batch: its header's fields, where it lies, whether it is damaged."""

    base_offset: int
    last_offset: int
    size: int
    partition_leader_epoch: int | None
    crc: int | None
    pos: int
    segment: str
    producer_id: int | None       # None: no producer (-1), or a v0/v1 entry
    base_sequence: int | None
    last_sequence: int | None
    damaged: bool                 # its CRC fails, or the reader found its bytes damaged
    invalid: str | None           # why Kafka's validation fails it, log recovery stopping there (invalid_for_kafka)
    records_count: int | None     # recordsCount (v0/v1: the messages held)
    control: bool                 # a control batch: its records (transaction markers) are given to no consumer

    @property
    def key(self) -> HeadKey:
        """What makes two copies of a batch the same: its place, size, epoch and the CRC over the rest."""
        return self[:5]

    @classmethod
    def of_batch(cls, segment: str, batch: Batch) -> Head:
        """A batch the full reader read (one the CRC run did not take: damaged, v0/v1, a count below zero)."""
        producer = batch.producer_id not in (None, -1)
        return cls(batch.base_offset, batch.last_offset, batch.size, batch.partition_leader_epoch, batch.crc,
                   batch.pos, segment, batch.producer_id if producer else None,
                   batch.base_sequence if producer else None, batch.last_sequence if producer else None,
                   not batch.crc_valid or any(finding.is_damage for finding in batch.findings),
                   invalid_for_kafka(batch), batch.count, batch.is_control)


def kafka_log_start(copy: Copy) -> int | None:
    """The log start offset Kafka loads for the copy (None: no segment): LogLoader.load takes
    max(logStartOffsetCheckpoint, the first segment's base offset): textfiles.loaded_log_start.  Records below it
    were deleted by retention or DeleteRecords: Kafka serves none."""
    return None if copy.first_base is None else loaded_log_start(copy.checkpointed_log_start, copy.first_base)


def invalid_for_kafka(batch: Batch) -> str | None:
    """Why Kafka's own validation fails the entry kbatch read as ``batch`` (None: it passes).

    LogSegment.recover asks each entry batch.ensureValid(): DefaultRecordBatch its CRC (the size below the
    batch overhead kbatch reads as a damaged range), a v0/v1 message LegacyRecord's CRC.  FileLogInputStream
    frames the entry by its length field, which no CRC covers: where kbatch found that field wrong (the CRC
    verifies only at another length), Kafka checks the CRC over other bytes, and it fails.  Damage kbatch finds
    beyond these (a count, a record's fields) Kafka's recovery does not look at.
    """
    if not batch.crc_valid:
        return "its CRC fails"
    if any(finding.code == "bad-length" and finding.pos == batch.pos + SIZE_OFFSET for finding in batch.findings):
        return "its length field is wrong: the CRC fails over the bytes it frames"
    return None


class Region(NamedTuple):
    """Bytes of a segment that are no batch (a damaged range, a zero tail), as the walk found them."""

    segment: str
    finding: Finding


# The header fields a clean batch's Head takes, read by the declaration's names (kbatch.format.layouts).
_CLEAN_HEAD = BATCH_HEADER.picker("base_offset", "partition_leader_epoch", "crc", "attributes", "last_offset_delta",
                                  "producer_id", "base_sequence", "records_count")


def walk_copy(copy: Copy) -> Iterator[Head | Region]:
    """The copy's entries in order: each batch, damaged ones too, as a Head, and each range of bytes that is
    no batch as a Region (the damaged ones, and batches, counted in ``copy.damaged``).

    verify-crc's walk: the CRC run (kbatch.walk.crcrun) takes the v2 batches whose frame and CRC hold, reading
    only their headers; the full reader reads the rest one at a time (records not decoded), and its findings
    say what is wrong.  The run hands its batches over a window at a time, so memory holds one window's
    Heads whatever the copy's size.
    """
    taken: list[Head] = []   # the run's batches since the walk last stopped
    ran_on = False           # whether the run went on (then the walk stops there, to hand them out)

    def hand_out(_pos) -> bool:
        nonlocal ran_on
        ran_on = True
        return True

    paths = segments(copy.path)
    copy.first_base = segment_base(paths[0]) if paths else None
    copy.log_start_offset = kafka_log_start(copy)
    for path in paths:
        def keep(batch, path=path) -> None:
            batch_pos, view, i, end, _, _ = batch
            base_offset, epoch, crc, attributes, delta, producer_id, base_sequence, count = \
                _CLEAN_HEAD.unpack_from(view, i)
            producer = producer_id != -1
            taken.append(Head(base_offset, base_offset + delta, end - i, epoch, crc, batch_pos, path,
                              producer_id if producer else None, base_sequence if producer else None,
                              last_sequence(base_sequence, delta) if producer else None, False, None, count,
                              bool(attributes & CONTROL_FLAG_MASK)))

        with open(path, "rb") as stream:
            reader = SegmentReader(stream, ReadOptions(records=False), read_ahead=True)
            walk = Walk(reader, CrcRun(FileSummary(path, reader.size), reader.options.max_entry_size, keep))
            try:
                while True:
                    ran_on = False
                    for item in walk.items(walk.landed or 0, reader.size, hand_out):
                        if isinstance(item, Finding):   # a range that is no batch (a zero tail is no damage)
                            copy.damaged += item.is_damage
                            yield Region(path, item)
                            continue
                        head = Head.of_batch(path, item)
                        copy.damaged += head.damaged
                        yield head
                    yield from taken
                    taken.clear()
                    if not ran_on:   # the walk reached the end
                        break
            finally:
                reader.close()


def recovered_segments(copy: Copy) -> tuple[list[str], set[str], set[str]]:
    """The copy's segments, and which of them Kafka's LogLoader.load recovers when the broker starts.

    loadSegmentFiles recovers a segment whose offset index is missing (LogSegment.sanityCheck throws
    NoSuchFileException), whatever the shutdown was.  Then recoverLog, unless the log directory holds the clean
    shutdown marker (LogManager.loadLogs: hadCleanShutdown), recovers the unflushed segments,
    segments.values(recoveryPoint, Long.MAX_VALUE): the one holding the recovery point (LogSegments.values
    starts at its floorKey) and all after it.  A recovery point not checkpointed is 0 (LogManager.loadLog).
    Returns (segments, recovered on opening, unflushed).
    """
    paths = segments(copy.path)
    on_open = {path for path in paths if not os.path.isfile(path[:-len(".log")] + ".index")}
    if copy.clean_shutdown:
        return paths, on_open, set()
    point = copy.recovery_point or 0
    holding = [index for index, path in enumerate(paths) if segment_base(path) <= point]
    return paths, on_open, set(paths[holding[-1] if holding else 0:])


def recovered(copy: Copy) -> Iterator[Head]:
    """The copy's batches as its broker holds them once started: Kafka's log recovery applied to
    :func:`walk_copy`.

    LogSegment.recover reads a recovered segment's entries in order and truncates the segment at the first
    that fails (ensureValid, the framing; see :func:`invalid_for_kafka`), assigning each earlier batch's
    epoch to the leader epoch cache when it is above the latest (LeaderEpochFileCache.assign).  recoverLog
    then deletes every later segment (truncatedBytes > 0: "Corruption found in segment ..."); a segment
    already cut on opening (its index missing) is cut again by nothing, so it deletes none.  An invalid entry
    recovery does not reach stays in the log, and is read as Kafka serves it.  Sets ``copy.recovery`` (the
    first cut), ``copy.kept_damage`` (the first invalid entry left), ``copy.recovered_epochs`` and, when the
    log's last segment holds no batch, the log end offset (LogSegment.readNextOffset: its base offset).
    """
    paths, on_open, unflushed = recovered_segments(copy)
    epochs_of: dict[str, list[tuple[int, int]]] = {}   # per recovered segment, the epochs recover assigns
    current = ""                      # the segment being read (none yet)
    recovers = False                  # whether recovery reads the current segment
    cut = deleted_after = None        # the segment cut here; the segment whose cut deleted all after it
    segment_end = 0                   # one past the last offset kept in the current segment
    dropped: list[int] = []           # first and last offset cut off with the first cut
    for item in walk_copy(copy):
        if item.segment != current:
            current, segment_end = item.segment, segment_base(item.segment)
            recovers = current in on_open or current in unflushed
        if deleted_after is not None or cut == current:   # (after a deletion, dropped with the first cut)
            if isinstance(item, Head) and copy.recovery is not None and \
                    (deleted_after is not None or current == copy.recovery.segment):
                dropped[:] = [min(dropped[:1] + [item.base_offset]), max(dropped[1:] + [item.last_offset])]
            continue
        if isinstance(item, Region):
            damage = Damage(current, item.finding.pos, None, f"no batch: {item.finding.code}",
                            is_damage=item.finding.is_damage)
        elif item.invalid is not None:
            damage = Damage(current, item.pos, item.base_offset, item.invalid)
        else:   # a batch Kafka's validation passes
            if recovers and item.partition_leader_epoch is not None and item.partition_leader_epoch >= 0:
                assigned = epochs_of.setdefault(current, [])
                if not assigned or item.partition_leader_epoch > assigned[-1][0]:
                    assigned.append((item.partition_leader_epoch, item.base_offset))
            segment_end = max(segment_end, item.last_offset + 1)
            yield item
            continue
        if recovers:
            cut = current
            if current in unflushed and current not in on_open:
                deleted_after = current
            if copy.recovery is None:
                damage.truncate_to, damage.later_segments_dropped = segment_end, deleted_after is not None
                copy.recovery = damage
                if isinstance(item, Head):
                    dropped[:] = [item.base_offset, item.last_offset]
        else:
            if copy.kept_damage is None and damage.is_damage:
                copy.kept_damage = damage
            if isinstance(item, Head):
                segment_end = max(segment_end, item.last_offset + 1)
                yield item
    if copy.recovery is not None:
        copy.recovery.dropped = (dropped[0], dropped[1]) if dropped else None
        if not copy.recovery.is_damage and copy.recovery.dropped is None:
            copy.recovery = None   # a zero tail cut off, nothing with it: no news
    kept = paths[:paths.index(deleted_after) + 1] if deleted_after is not None else paths
    if kept:
        copy.log_end_offset = max(copy.log_end_offset, segment_base(kept[-1]))
    # the order recovery assigns in: the segments recovered on opening, then the unflushed ones kept
    copy.recovered_epochs = [entry for path in paths if path in on_open for entry in epochs_of.get(path, ())] + \
        [entry for path in kept if path in unflushed for entry in epochs_of.get(path, ())]


def loaded_epochs(copy: Copy) -> list[tuple[int, int]]:
    """The leader epoch cache Kafka holds for the copy once it loads the log.

    The file's entries, then the epochs log recovery assigns (:func:`recovered`; LeaderEpochFileCache.assign
    first drops the entries of that epoch or later, or starting at its start offset or later:
    maybeTruncateNonMonotonicEntries); entries at or past the log end offset are dropped (LogLoader.load:
    leaderEpochCache.truncateFromEndAsyncFlush(nextOffset)), as are those below the checkpointed log start but the
    last, which then starts there (truncateFromStartAsyncFlush).
    """
    epochs = list(copy.epoch_file)
    for epoch, start in copy.recovered_epochs:
        if not epochs or epoch > epochs[-1][0]:   # LogSegment.recover: only an epoch above the latest
            while epochs and (epochs[-1][0] >= epoch or epochs[-1][1] >= start):
                epochs.pop()
            epochs.append((epoch, start))
    epochs = [(epoch, start) for epoch, start in epochs if start < copy.log_end_offset]
    # LogLoader.load: leaderEpochCache.truncateFromStartAsyncFlush(logStartOffsetCheckpoint), the checkpoint as read
    # (0 when absent or unread: LogManager.loadLogs); LeaderEpochFileCache.truncateFromStart keeps the last entry
    # starting at or below it and rewrites its start offset to it
    start = copy.checkpointed_log_start or 0
    below = [epoch for epoch, entry_start in epochs if entry_start <= start]
    after = [entry for entry in epochs if entry[1] > start]
    return [(below[-1], start), *after] if below else after


def end_offset_for(epochs: list[tuple[int, int]], requested: int, log_end_offset: int) -> tuple[int, int]:
    """LeaderEpochFileCache.endOffsetFor: (epoch, end offset) the cache answers for ``requested``."""
    if requested == UNDEFINED_EPOCH or not epochs:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH
    if epochs[-1][0] == requested:
        return requested, log_end_offset
    higher = [entry for entry in epochs if entry[0] > requested]
    if not higher:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH
    floor = [entry for entry in epochs if entry[0] <= requested]
    if not floor:   # below every epoch: the first known epoch's start offset
        return requested, higher[0][1]
    return floor[-1][0], higher[0][1]


def truncation_offset(follower: Copy, leader: Copy) -> tuple[int, list[str]]:
    """The offset Kafka truncates ``follower`` to when it fetches from ``leader``, and each round's step.

    AbstractFetcherThread.maybeTruncate: a follower with no epoch truncates to its high watermark
    (truncateToHighWatermark); otherwise it asks OffsetsForLeaderEpoch for its latest epoch, the leader
    answers with LeaderEpochFileCache.endOffsetFor, and getOffsetTruncationState decides: an epoch the
    follower never had truncates it to the end of its largest epoch below that one and asks again.
    """
    epochs = list(follower.epochs)
    end = follower.log_end_offset
    rounds: list[str] = []
    if not epochs:
        fetch_offset, said = _to_high_watermark(follower, end)
        rounds.append(f"no leader epoch: truncate to {said}")
        return fetch_offset, rounds
    while True:
        asked = epochs[-1][0]
        leader_epoch, leader_end = end_offset_for(leader.epochs, asked, leader.log_end_offset)
        if leader_end == UNDEFINED_EPOCH:
            fetch_offset, said = _to_high_watermark(follower, end)
            rounds.append(f"asks for epoch {asked}, leader knows no end offset: truncate to {said}")
            return fetch_offset, rounds
        # the follower's own answer: UnifiedLog.endOffsetForEpoch (empty when the cache says UNDEFINED)
        own_epoch, own_end = end_offset_for(epochs, leader_epoch, end)
        if own_end == UNDEFINED_EPOCH:
            offset = min(leader_end, end)
            rounds.append(f"asks for epoch {asked}, leader answers epoch {leader_epoch} ends at {leader_end}, "
                          f"below every epoch of the copy: truncate to {offset}")
            return offset, rounds
        if own_epoch != leader_epoch:
            end = min(own_end, end)
            rounds.append(f"asks for epoch {asked}, leader answers epoch {leader_epoch} (never this copy's) ends "
                          f"at {leader_end}: truncate to {end}, ask again")
            epochs = [entry for entry in epochs if entry[1] < end]   # LeaderEpochFileCache.truncateFromEnd
            if not epochs:
                fetch_offset, said = _to_high_watermark(follower, end)
                rounds.append(f"no epoch left: truncate to {said}")
                return fetch_offset, rounds
            continue
        offset = min(own_end, leader_end, end)
        rounds.append(f"asks for epoch {asked}, leader answers epoch {leader_epoch} ends at {leader_end}: "
                      f"truncate to {offset}")
        return offset, rounds


def out_of_range(leader: Copy, fetch_offset: int) -> tuple[int, bool, str | None]:
    """Where the follower's log ends once it fetches from ``leader`` at ``fetch_offset`` (the offset it truncated
    to), whether it was truncated whole, and the step said (None: the fetch is in range, nothing more).

    An offset outside the leader's log is OFFSET_OUT_OF_RANGE, and AbstractFetcherThread.fetchOffsetAndTruncate
    (handleOutOfRangeError) truncates to the leader's log end where it lies past it; where it lies below the
    leader's log start (retention or DeleteRecords deleted what the follower would fetch next), it truncates the
    follower whole and starts it there (truncateFullyAndStartAt).
    """
    if fetch_offset > leader.log_end_offset:
        return leader.log_end_offset, False, (f"fetches from {fetch_offset}, past the leader's log end offset "
                                              f"{leader.log_end_offset} (out of range): truncate to "
                                              f"{leader.log_end_offset}")
    if leader.log_start_offset is not None and fetch_offset < leader.log_start_offset:
        return leader.log_start_offset, True, (f"fetches from {fetch_offset}, below the leader's log start offset "
                                               f"{leader.log_start_offset} (out of range): truncated whole, starts "
                                               f"at {leader.log_start_offset}")
    return fetch_offset, False, None


def _to_high_watermark(follower: Copy, end: int) -> tuple[int, str]:
    """Where truncateToHighWatermark leaves the follower (at most ``end``; a high watermark not checkpointed: the
    log end), and how that is said; one that cannot be read is said to be unknown, ``end`` given in its place."""
    if follower.high_watermark_unread:
        return end, (f"the high watermark, unknown ({HIGH_WATERMARK_CHECKPOINT} cannot be read): "
                     f"the log end offset {end} given in its place")
    offset = min(end, follower.high_watermark if follower.high_watermark is not None else end)
    return offset, f"the high watermark {offset}"


@dataclass
class Divergence:
    """Batches at one base offset that are not the same in every copy (or held by only some)."""

    base_offset: int
    last_offset: int
    holders: list[int]               # indexes of the copies holding this batch's bytes
    crc_valid: list[int]             # of those, the copies whose batch's CRC holds
    damaged: list[int]               # copies whose batch at this offset is damaged
    producer_id: int | None = None
    base_sequence: int | None = None
    last_sequence: int | None = None
    where: tuple[str, int, int] | None = None   # the first holder's batch: (segment, pos, size)
    # the offsets of its records (merged ranges): those a consumer is given, and the control records (markers) of
    # a control batch; a compacted batch's offsets have gaps (record_spans)
    records: list[tuple[int, int]] = field(default_factory=list)
    control_records: list[tuple[int, int]] = field(default_factory=list)
    # copies without it whose own log cleaner removed it whole (Removable.resolve): they hold its keys' later
    # records instead, and lose none of it
    cleaned: list[int] = field(default_factory=list)

    def held_by(self, index: int) -> bool:
        """Whether the copy holds the batch, or its own log cleaner removed it whole."""
        return index in self.holders or index in self.cleaned


@dataclass
class Report:
    """One partition's copies compared."""

    topic: str
    partition: int
    copies: list[Copy]
    problems: list[str] = field(default_factory=list)      # usage-level: different topic ids
    leader: int | None = None                              # the copy with the newest epoch
    divergences: list[Divergence] = field(default_factory=list)
    # (base, last offset) of each batch every copy holds, compacted differently (see cleaned_alike): no divergence
    compacted: list[tuple[int, int]] = field(default_factory=list)
    # (base, last offset, copy) of each batch a copy lacks that its own log cleaner removed whole while another
    # copy holds it (Removable.resolve): no divergence of that copy's
    removed: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.divergences and not any(copy.damaged or copy.recovery for copy in self.copies) and \
            len({copy.log_end_offset for copy in self.copies}) == 1

    def held_only_by(self, index: int) -> list[Divergence]:
        """The batches the copy holds and the leader does not (lost when the leader wins; not those below the
        leader's log start, which retention or DeleteRecords deleted)."""
        if self.leader is None:
            return [each for each in self.divergences if index in each.holders]
        leader = self.copies[self.leader]
        return [each for each in self.divergences if index in each.holders and not each.held_by(self.leader)
                and not starts_past(leader, each.last_offset)]


def compare(directories: list[str]) -> Report:
    """The copies of one partition compared, every copy read once, in step."""
    copies = [load_copy(directory) for directory in directories]
    report = Report(copies[0].topic, copies[0].partition, copies)
    ids = {copy.topic_id for copy in copies if copy.topic_id is not None}
    if len(ids) > 1:
        report.problems.append("copies of different topics (topic ids in partition.metadata: "
                               f"{', '.join(sorted(ids))}): from different clusters, or the topic was recreated")
    streams = [recovered(copy) for copy in copies]
    front: list[Head | None] = [next(stream, None) for stream in streams]   # each copy's next batch
    # batches some copies lack that their own cleaner may have removed whole (resolved once every copy is read)
    removable = Removable(copies)
    while True:
        first = front[0]
        if first is not None and not first.damaged and all(
                head is not None and not head.damaged and head.key == first.key for head in front):
            # the same batch in every copy, intact (nearly every step): nothing to tell; each copy holds its own
            # (where it lies in the copy's files may differ: segments rolled at other offsets)
            for index, (copy, head) in enumerate(zip(copies, front)):
                copy.hold(cast(Head, head))
                if removable.producers:
                    removable.note(index, cast(Head, head))
            front = [next(stream, None) for stream in streams]
            continue
        present = [head.base_offset for head in front if head is not None]
        if not present:
            break
        base = min(present)
        # the copies with a batch at this base offset (by index, in copy order), and that batch
        here = {index: head for index, head in enumerate(front) if head is not None and head.base_offset == base}
        for index, head in here.items():
            copies[index].hold(head)
            if removable.producers:
                removable.note(index, head)
        good = [index for index, head in here.items() if not head.damaged]
        damaged = [index for index, head in here.items() if head.damaged]
        keys: list[HeadKey | None] = list(dict.fromkeys(here[index].key for index in good))   # each variant, in order
        # a copy without the batch that starts past it never had it to serve: retention or DeleteRecords deleted it
        last = max(head.last_offset for head in here.values())
        lacking = [index for index, copy in enumerate(copies) if index not in here and not starts_past(copy, last)]
        # the variants of the batch here, those one copy's cleaner or another's compacted differently as one: by
        # copies holding them intact, the fullest first
        variants = cleaned_alike([[index for index in good if here[index].key == key] for key in keys], here) \
            if len(keys) > 1 else [good]
        if len(variants) == 1 and len(keys) > 1 and not lacking and not damaged:
            report.compacted.append((base, last))
        elif lacking or len(variants) > 1 or damaged:
            # one Divergence per variant of the batch here, with the copies holding it intact
            for holders in variants or [[]]:   # (none: every copy's batch here is damaged)
                # (of variants compacted differently, the one keeping the most records)
                sample = max((here[index] for index in holders), key=lambda head: head.records_count or 0) \
                    if holders else next(iter(here.values()))
                spans = record_spans(sample) if holders else []
                report.divergences.append(Divergence(
                    base, sample.last_offset, holders, holders, damaged, sample.producer_id, sample.base_sequence,
                    sample.last_sequence, (sample.segment, sample.pos, sample.size) if holders else None,
                    [] if sample.control else spans, spans if sample.control else []))
            if lacking and len(variants) == 1 and variants[0] and not damaged:
                # one batch, intact where held: a copy without it whose cleaner ran past it and which holds no other
                # batch over its offsets (none before it reaching them, none after it starting within) may have
                # removed it whole
                removable.add(report.divergences[-1], lacking, [index for index in lacking if (
                    copies[index].log_end_offset <= base and
                    (front[index] is None or cast(Head, front[index]).base_offset > last))])
        for index in here:
            front[index] = next(streams[index], None)
    for copy in copies:
        copy.epochs = loaded_epochs(copy)
        copy.epoch_file_findings = epoch_disagreements(copy)
    candidates = [index for index, copy in enumerate(copies) if copy.latest_epoch is not None]
    if candidates:
        report.leader = max(candidates, key=lambda index: (copies[index].latest_epoch, copies[index].log_end_offset))
        leader = copies[report.leader]
        for index, copy in enumerate(copies):
            if index == report.leader:
                copy.truncate_to = copy.log_end_offset
                continue
            fetch_offset, copy.rounds = truncation_offset(copy, leader)
            copy.truncate_to, copy.truncated_fully, step = out_of_range(leader, fetch_offset)
            copy.rounds += [step] if step is not None else []
    removable.resolve(report)
    _relative_divergence(report)
    return report


class Removable:
    """The batches some copies lack that each copy's own log cleaner may have removed whole
    (:func:`kbatch.reading.cleaner.removed_whole`), and what deciding it asks of those copies' logs.

    Found as the copies are read in step; the producers' later data batches are noted as the rest is read (the
    batches' headers); once every copy is read, each such copy's records below its cleaner checkpoint are read
    again for the keys of the batches it lacks (:meth:`resolve`), only where there are any.
    """

    def __init__(self, copies: list[Copy]) -> None:
        self.copies = copies
        self.found: list[tuple[Divergence, list[int], list[int]]] = []   # (the batch, copies lacking it, those asked)
        # per copy asked, the producer ids of the batches it lacks: the last offset of its last data batch of each
        self.producers: dict[int, dict[int, int]] = {}

    def add(self, divergence: Divergence, lacking: list[int], asked: list[int]) -> None:
        asked = [index for index in asked if (self.copies[index].cleaner_checkpoint or 0) > divergence.last_offset + 1]
        if not asked:
            return
        self.found.append((divergence, lacking, asked))
        if divergence.producer_id is not None:
            for index in asked:
                self.producers.setdefault(index, {}).setdefault(divergence.producer_id, -1)

    def note(self, index: int, head: Head) -> None:
        """Count a batch of copy ``index`` read after the ones it lacks: a later data batch of their producers."""
        watched = self.producers.get(index)
        if watched is not None and head.producer_id in watched and not head.control:
            watched[head.producer_id] = max(watched[head.producer_id], head.last_offset)

    def resolve(self, report: Report) -> None:
        """Mark each batch a copy's own cleaner removed whole (Divergence.cleaned, Report.removed); one every copy
        lacking it so removed is no divergence."""
        if not self.found:
            return
        batches = {id(divergence): read_batch(*divergence.where) if divergence.where else None
                   for divergence, _, _ in self.found}
        for index, copy in enumerate(self.copies):
            mine = [(divergence, batches[id(divergence)]) for divergence, _, asked in self.found if index in asked]
            if not mine:
                continue
            # a checkpoint past the log end Kafka does not believe (LogCleanerManager.cleanableOffsets resets it)
            first_dirty = copy.cleaner_checkpoint if (copy.cleaner_checkpoint or 0) <= copy.log_end_offset else None
            keys = {record.key for _, batch in mine if batch is not None for record in batch.records or ()
                    if record.key is not None}
            latest = latest_offsets(copy, keys, min(divergence.base_offset for divergence, _ in mine), first_dirty) \
                if first_dirty is not None else {}
            for divergence, batch in mine:
                if batch is not None and removed_whole(batch, first_dirty, latest, self.producers.get(index, {})):
                    divergence.cleaned.append(index)
                    report.removed.append((divergence.base_offset, divergence.last_offset, index))
        explained = {id(divergence) for divergence, lacking, _ in self.found if set(divergence.cleaned) == set(lacking)}
        report.divergences = [each for each in report.divergences if id(each) not in explained]
        report.removed.sort(key=lambda each: (each[2], each[0]))


def latest_offsets(copy: Copy, keys: set[bytes], start: int, stop: int) -> dict[bytes, int]:
    """Per key of ``keys``, the latest offset of a record of it in the copy's data batches from ``start`` to below
    ``stop``: what its cleaner's offset map holds of them (Cleaner.buildOffsetMapForSegment maps the records of
    data batches, control batches apart, a key to its latest offset).  A batch whose CRC fails is passed over."""
    latest: dict[bytes, int] = {}
    paths = segments(copy.path)
    for number, path in enumerate(paths):
        if segment_base(path) >= stop:
            break
        if number + 1 < len(paths) and segment_base(paths[number + 1]) <= start:
            continue
        with open(path, "rb") as stream:
            for item in entries(SegmentReader(stream, ReadOptions(records=True))):
                if not isinstance(item, Batch) or item.is_control or not item.crc_valid or item.last_offset < start:
                    continue
                if item.base_offset >= stop:
                    break
                for record in item.records or ():
                    if record.key in keys and start <= record.offset < stop:
                        latest[record.key] = max(latest.get(record.key, -1), record.offset)
    return latest


def cleaned_alike(variants: list[list[int]], here: dict[int, Head]) -> list[list[int]]:
    """The variants of one batch (each the copies holding it) grouped where they differ only as log cleaners leave
    a batch (:func:`kbatch.reading.cleaner.compacted_alike`), in copy order.

    Every broker's cleaner compacts its own copy (LogCleanerManager.grabFilthiestCompactedLog does not ask which
    copy leads) up to its own first dirty offset, and a follower fetches the leader's batches as they are, so copies
    compacted differently are healthy: a consumer reading either is given the same live records.
    """
    read = [(holders, read_batch(here[holders[0]].segment, here[holders[0]].pos, here[holders[0]].size))
            for holders in variants]
    groups: list[list[tuple[list[int], Batch | None]]] = []
    for holders, batch in read:
        group = next((group for group in groups if batch is not None and all(
            compacted_alike(batch, other) for _, other in group)), None)
        if group is None:
            groups.append([(holders, batch)])
        else:
            group.append((holders, batch))
    return [sorted(index for holders, _ in group for index in holders) for group in groups]


def starts_past(copy: Copy, offset: int) -> bool:
    """Whether the copy's log starts past ``offset`` (Kafka serves no record of it there)."""
    return copy.log_start_offset is not None and copy.log_start_offset > offset


def _relative_divergence(report: Report) -> None:
    """Each copy's first offset whose batch is not the leader copy's (None: none, or no leader)."""
    if report.leader is None:
        return
    for index, copy in enumerate(report.copies):
        if index == report.leader:
            copy.diverges_at = None
            continue
        first = None
        for each in report.divergences:
            # a copy merely behind (the batch past its end) does not diverge: it fetches the rest; nor where the
            # leader's log starts past the batch: the follower truncates whole (out_of_range)
            if each.base_offset < copy.log_end_offset and not starts_past(report.copies[report.leader], each.last_offset) \
                    and each.held_by(index) != each.held_by(report.leader):
                first = each.base_offset
                break
        copy.diverges_at = first


def epoch_disagreements(copy: Copy) -> list[Finding]:
    """Where the copy's epoch file is damaged, and where it and its batches' epochs disagree, by verify-crc
    --deep's rule (the log cleaner and retention leave entries that are no batch's offset: crosscheck.LeaderEpochs
    says which may be): its findings, epoch-missing and epoch-mismatch among them."""
    path = os.path.join(copy.path, kinds.LEADER_EPOCH_CHECKPOINT)
    if not os.path.isfile(path):
        return []
    return [located.finding for located in copy.batch_epochs.held_against(path, copy.path, copy.first_base)]


def epoch_file_lines(copy: Copy) -> list[str]:
    """What a person is told of the copy's epoch file (Copy.epoch_file_findings)."""
    told = []
    for finding in copy.epoch_file_findings:
        if finding.code == "epoch-missing":
            told.append(f"leader-epoch-checkpoint has no entry for an epoch of the batches: expected {finding.expected}")
        elif finding.code == "epoch-mismatch":
            told.append(f"leader-epoch-checkpoint pos {finding.pos}: start_offset {finding.actual}, expected "
                        f"{finding.expected}")
        else:
            told.append(f"leader-epoch-checkpoint is damaged at pos {finding.pos} ({finding.code}, {finding.field}: "
                        f"expected {finding.expected}, found {finding.actual})")
    return told


def lost_sequences(report: Report, index: int) -> dict[int, list[tuple[int, int]]]:
    """Per producer id, the sequence ranges the copy holds and the leader copy does not."""
    lost: dict[int, list[tuple[int, int]]] = {}
    for each in report.held_only_by(index):
        if each.producer_id is not None and each.base_sequence is not None and each.last_sequence is not None \
                and each.base_sequence >= 0:
            lost.setdefault(each.producer_id, []).append((each.base_sequence, each.last_sequence))
    return lost


def read_batch(segment: str, pos: int, size: int) -> Batch | None:
    """The batch at ``pos`` of ``segment``, read again with its records decoded (None: none reads there)."""
    with open(segment, "rb") as stream:
        for item in entries(SegmentReader(stream, ReadOptions(records=True)), pos, pos + size):
            if isinstance(item, Batch) and item.pos == pos:
                return item
    return None


def offset_ranges(spans) -> list[tuple[int, int]]:
    """Offset ranges (first, last) merged where they overlap or touch, in order."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def record_spans(head: Head) -> list[tuple[int, int]]:
    """The offsets of the batch's records, as ranges.  A batch holding a record at every offset it spans says so
    by its count; one the log cleaner compacted keeps its base and last offsets (MemoryRecords.filterTo:
    buildRetainedRecordsInto, overrideLastOffset) and fewer records, whose offsets only its records tell."""
    if head.records_count == head.last_offset - head.base_offset + 1:
        return [(head.base_offset, head.last_offset)]
    batch = read_batch(head.segment, head.pos, head.size)
    if batch is None:   # (not read again: counted as whole)
        return [(head.base_offset, head.last_offset)]
    return offset_ranges((record.offset, record.offset) for record in batch.records or ())


def records_held_by_some(report: Report) -> Iterator[tuple[Divergence, Batch]]:
    """Each batch not every copy holds, read again with its records decoded from a copy holding it intact:
    only those batches' bytes are read twice."""
    for each in report.divergences:
        if not each.holders or len(each.holders) == len(report.copies) or each.where is None:
            continue
        batch = read_batch(*each.where)
        if batch is not None:
            yield each, batch


class HighWatermarks(NamedTuple):
    """The high watermarks some copies recorded: the highest read, and the copies whose cannot be read."""

    highest: int | None
    unread: list[Copy]

    def below(self, offset: int) -> bool | None:
        """Whether ``offset`` lies below a high watermark of these copies: acknowledged to an acks=all producer (the
        checkpoint may trail what was); None where no high watermark read says so and one cannot be read."""
        if self.highest is not None and offset < self.highest:
            return True
        return None if self.unread else False


def high_watermarks(report: Report, holders: list[int] | None = None) -> HighWatermarks:
    """The high watermarks the copies (those of ``holders``) recorded."""
    copies = report.copies if holders is None else [report.copies[index] for index in holders]
    marks = [copy.high_watermark for copy in copies if copy.high_watermark is not None]
    return HighWatermarks(max(marks) if marks else None, [copy for copy in copies if copy.high_watermark_unread])


def offset_checkpoint_lines(copy: Copy) -> list[str]:
    """What a person is told of the offset checkpoints of the copy's log directory that cannot be read: where each
    is damaged, as verify-crc --deep tells it, and what that leaves unknown."""
    told = []
    for name, unread in OFFSET_CHECKPOINTS_UNREAD.items():
        findings = copy.checkpoint_findings(name)
        told += [f"{name} is damaged at pos {finding.pos} ({finding.code}, {finding.field}: expected "
                 f"{finding.expected}, found {finding.actual})" for finding in findings]
        if findings:
            told.append(f"Kafka cannot read {name} (CheckpointFile.read throws) and takes the log directory offline: "
                        f"{unread}")
    return told
