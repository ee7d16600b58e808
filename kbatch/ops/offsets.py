"""Where each consumer group stood, commit by commit: the offsets ``__consumer_offsets`` holds, over time.

A group's coordinator writes every offset commit to ``__consumer_offsets`` as an OffsetCommitKey (group,
topic, partition) with an OffsetCommitValue (offset, leader epoch, metadata, commit time; the expiry time in
version 1 only) and deletes one with a tombstone (a null value).  Replayed in log order, as the coordinator
replays them when it loads the partition (``OffsetMetadataManager.replay``), they give each group's committed
offset per partition at any moment:

* a commit written inside a transaction (``sendOffsetsToTransaction``) counts only when its producer's COMMIT
  marker follows, and from that marker's time on (at ``--at``), and is dropped by an ABORT
  (``OffsetMetadataManager.replayEndTransactionMarker``);
* a tombstone removes the partition's committed offset (an expired offset, a deleted group, or
  ``kafka-consumer-groups --delete-offsets``), and the partition's commits of every transaction still open:
  their COMMIT marker does not apply them (they are *superseded*);
* at a COMMIT marker, a transactional commit is superseded too where the partition's committed offset is of a
  later record (a plain commit written after it): the later one stands;
* a classic group's GroupMetadataValue says its generation and members (and, for the "consumer" protocol,
  which member each partition was assigned to); a KIP-848 group's ConsumerGroupMetadataValue its epoch.

Marked on the way, because they are what an incident asks about: a **rewind** (a committed offset lower than
the one before it: the group will read records again) and a **reset forward** (a higher offset committed
while the group had no members, as ``kafka-consumer-groups --reset-offsets`` does: the records between were
never handed to the group).  These are kbatch's words for what it sees, not Kafka's rules: no finding.

Which ``__consumer_offsets`` partition holds a group, and which ``__transaction_state`` partition a
transactional id, is Kafka's hash of the name (:func:`coordinator_partition`).

Memory grows with the groups and partitions, never with the commits: a commit is handed on as it is read
(transactional ones when their marker is), and only each partition's latest is kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from kbatch.files.inputs import topic_partition
from kbatch.reading.internal import decode_batch
from kbatch.reading.markers import end_marker
from kbatch.reading.model import Batch

if TYPE_CHECKING:
    from kbatch.ops.logs import Replayed

# offsets.topic.num.partitions and transaction.state.log.num.partitions: both 50 unless a broker says otherwise
DEFAULT_COORDINATOR_PARTITIONS = 50


OFFSETS_TOPIC = "__consumer_offsets"


def offsets_segments(files: list[str], named: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Of the segments found under the command line's paths (``named``), those to replay as __consumer_offsets,
    and the partition directories of other topics passed over.  Under a log directory only the offsets topic's
    partitions are the group coordinator's: another topic's records read as its would each be a finding, on a
    healthy broker's bytes.  A file or a partition directory named on the command line is read as asked, and so
    is a segment in a directory not named TOPIC-N (a copy)."""
    asked = {os.path.normpath(path) for path in named}
    kept: list[str] = []
    passed_over: list[str] = []
    for path in files:
        topic, _ = topic_partition(path)
        directory = os.path.dirname(path)
        if topic in (None, OFFSETS_TOPIC) or not asked.isdisjoint((os.path.normpath(path), os.path.normpath(directory))):
            kept.append(path)
        elif directory not in passed_over:
            passed_over.append(directory)
    return kept, passed_over

# GroupCoordinatorRecordSerde's record types read here (kbatch.messages.topics.GROUP_RECORD_TYPES)
_OFFSET_COMMITS = ("OffsetCommitKey", "LegacyOffsetCommitKey")   # record types 1 and 0
_GROUP_METADATA = "GroupMetadataKey"
_CONSUMER_GROUP_METADATA = "ConsumerGroupMetadataKey"


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, as a 32-bit int."""
    value = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        value = (31 * value + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def coordinator_partition(name: str, partitions: int = DEFAULT_COORDINATOR_PARTITIONS) -> int:
    """The coordinator partition of a group id or a transactional id: ``Utils.abs(name.hashCode()) %
    partitions``, as GroupCoordinatorService.partitionFor and TransactionStateManager.partitionFor compute it
    (Utils.abs maps Integer.MIN_VALUE to 0, where Math.abs would leave it negative)."""
    code = java_string_hash(name)
    return (0 if code == -(1 << 31) else abs(code)) % partitions


@dataclass
class Commit:
    """One offset commit (or tombstone) as the log holds it, and what it did to the group's position."""

    group: str
    topic: str
    partition: int
    offset: int | None               # None: a tombstone (the committed offset deleted)
    leader_epoch: int | None
    metadata: str | None
    commit_timestamp: int | None
    expire_timestamp: int | None     # OffsetCommitValue v1 only
    log_offset: int                  # the record's offset in __consumer_offsets
    record_timestamp: int | None     # the record's own: when the coordinator wrote it (a tombstone's only time)
    path: str
    generation: int | None = None    # the group's generation (classic) or epoch (KIP-848) when it was written
    member: str | None = None        # the member the partition was assigned to then (classic "consumer" groups)
    transaction: str | None = None   # None, or how the transaction it was written in ended: COMMIT, ABORT, OPEN
    superseded_by: int | None = None  # a transactional one: the log offset of the record that took its place first
    marker_timestamp: int | None = None  # a transactional one ended by a believed marker: that marker batch's time
    previous_offset: int | None = None
    move: str | None = None          # "rewind", "reset-forward", or None

    @property
    def counts(self) -> bool:
        """Whether the coordinator applies it (not one of a transaction that aborted or is still open, nor one
        superseded before its COMMIT marker)."""
        return self.transaction in (None, "COMMIT") and self.superseded_by is None

    @property
    def time(self) -> int | None:
        """When it happened, as the log says: a commit's commitTimestamp, a tombstone's record timestamp (it has
        no other)."""
        return self.commit_timestamp if self.offset is not None else self.record_timestamp

    @property
    def in_effect_from(self) -> int | None:
        """When the coordinator applied it (None: never, or not known when): a transactional commit at its
        COMMIT marker, whatever its own commitTimestamp says (until the marker the coordinator holds it in
        OffsetMetadataManager.pendingTransactionalOffsets, and a fetch of the group's offsets does not see it);
        any other at :attr:`time`."""
        if not self.counts:
            return None
        return self.time if self.transaction is None else self.marker_timestamp


@dataclass
class Group:
    """What the log says of a group besides its offsets, as of the record last read."""

    name: str
    protocol: str | None = None       # classic groups: protocolType ("consumer", "connect", ...); "consumer (KIP-848)"
    generation: int | None = None
    members: int | None = None
    owners: dict[tuple[str, int], str] = field(default_factory=dict)   # (topic, partition) -> member id
    deleted: bool = False


@dataclass
class Position:
    """A group's committed offset on one partition: the latest commit that counts (at ``--at``: at that time)."""

    commit: Commit
    commits: int = 0
    rewinds: int = 0
    resets: int = 0
    first: Commit | None = None


class OffsetHistory:
    """Replays ``__consumer_offsets`` batches in log order (one partition's segments, oldest first).

    ``emit(commit)`` is called for every commit in the order the coordinator applies it (a transactional one
    when its marker is read, or at :meth:`finish` if none is); ``groups`` and ``topics`` select (None: all);
    :attr:`positions` hold each partition's latest committed offset, and with ``at`` (epoch milliseconds)
    :attr:`positions_at` the one committed at that time (a tombstone where it was deleted by then: each as of
    :attr:`Commit.in_effect_from`, a transactional commit's its COMMIT marker's time).
    """

    def __init__(self, emit: Callable[[Commit], None] | None = None, *, groups: set[str] | None = None,
                 topics: set[str] | None = None, at: int | None = None):
        self.emit = emit or (lambda commit: None)
        self.groups = groups
        self.topics = topics
        self.at = at
        self.positions: dict[tuple[str, str, int], Position] = {}
        self.positions_at: dict[tuple[str, str, int], Commit] = {}
        self.group_state: dict[str, Group] = {}
        self.pending: dict[int | None, list[Commit]] = {}   # producer id -> its open transaction's commits
        self.unreadable = 0                          # records whose key or value did not read

    def add_batch(self, batch: Batch, path: str) -> None:
        """Replay one batch; a record that does not read adds its finding to the batch's (as dump's do)."""
        if batch.is_damaged or batch.records is None:
            return   # its damage is the walk's finding; what it held is not seen
        decode_batch(batch, "offsets")
        if batch.is_control:
            self._end_transaction(batch)
            return
        for record in batch.records:
            self._record(batch, record, path)

    def finish(self) -> None:
        """Commits of transactions with no marker yet: written, not applied (the transaction is open)."""
        for commits in self.pending.values():
            for commit in commits:
                commit.transaction = "OPEN"
                self.emit(commit)
        self.pending.clear()

    def _record(self, batch: Batch, record, path: str) -> None:
        decoded = record.decoded
        if decoded.key is None or (decoded.value is None and not decoded.tombstone):
            self.unreadable += 1   # (its finding says why): what it said is not in the history
            return
        name, key = decoded.key["name"], decoded.key["data"]
        if name in _OFFSET_COMMITS:
            self._commit(batch, record, path, key, decoded.value)
        elif name == _GROUP_METADATA:
            self._classic_group(key["group"], None if decoded.tombstone else decoded.value)
        elif name == _CONSUMER_GROUP_METADATA and decoded.value is not None:
            group = self.group_state.setdefault(key["groupId"], Group(key["groupId"]))
            group.protocol, group.generation = "consumer (KIP-848)", decoded.value["data"]["epoch"]

    def _classic_group(self, name: str, value: dict | None) -> None:
        group = self.group_state.setdefault(name, Group(name))
        if value is None:   # GroupMetadataManager: a tombstone deletes the group
            group.deleted, group.members, group.owners = True, 0, {}
            return
        data = value["data"]
        group.deleted = False
        group.protocol, group.generation = data["protocolType"], data["generation"]
        members = data["members"] or []
        group.members = len(members)
        group.owners = {}
        for member in members:
            assignment = member.get("assignment")
            if isinstance(assignment, dict):   # a "consumer" group's ConsumerProtocolAssignment, read
                for owned in assignment.get("assignedPartitions") or []:
                    for partition in owned["partitions"]:
                        group.owners[(owned["topic"], partition)] = member["memberId"]

    def _commit(self, batch: Batch, record, path: str, key: dict, value: dict | None) -> None:
        if (self.groups is not None and key["group"] not in self.groups) or \
                (self.topics is not None and key["topic"] not in self.topics):
            return
        data = value["data"] if value is not None else {}
        group = self.group_state.get(key["group"])
        commit = Commit(key["group"], key["topic"], key["partition"], data.get("offset"),
                        _known(data.get("leaderEpoch")), data.get("metadata"), data.get("commitTimestamp"),
                        _known(data.get("expireTimestamp")), record.offset, record.timestamp, path,
                        generation=group.generation if group else None,
                        member=group.owners.get((key["topic"], key["partition"])) if group else None)
        if commit.offset is None:
            self._supersede_pending(commit)
            self._apply(commit)
        elif batch.is_transactional:
            self.pending.setdefault(batch.producer_id, []).append(commit)
        else:
            self._apply(commit)

    def _supersede_pending(self, tombstone: Commit) -> None:
        """OffsetMetadataManager.replay: a tombstone (in a transaction or not) deletes the partition's offset at
        once and removes it from the pending offsets of every open transaction, so no marker applies those."""
        where = (tombstone.group, tombstone.topic, tombstone.partition)
        for commits in self.pending.values():
            for commit in commits:
                if (commit.group, commit.topic, commit.partition) == where and commit.superseded_by is None:
                    commit.superseded_by = tombstone.log_offset

    def _end_transaction(self, batch: Batch) -> None:
        marker = end_marker(batch)
        commits = self.pending.pop(batch.producer_id, [])
        outcome = marker.outcome if marker is not None else "UNKNOWN"
        # When a believed marker's transaction took effect: the marker batch's maxTimestamp, as the reader gives it.
        # CoordinatorRuntime.completeTransaction replays the marker (OffsetMetadataManager.replayEndTransactionMarker
        # moves the pending offsets into the committed ones) and then writes it stamped with its clock's
        # time.milliseconds() (MemoryRecords.withEndTransactionMarker: one record at delta 0, base and max timestamps
        # alike); under LogAppendTime the broker's append time is the maxTimestamp.  Not the baseTimestamp: the log
        # cleaner replaces it with a delete horizon (a day ahead) in a marker it keeps.  Not the commit record's own
        # commitTimestamp: that is when it was written, not when it counted.  -1 (NO_TIMESTAMP): not known when, so
        # not placed at --at, as a commit with no time is not.
        stamp = batch.max_timestamp if outcome in ("COMMIT", "ABORT") else None
        for commit in commits:
            commit.transaction = outcome
            commit.marker_timestamp = stamp if stamp is not None and stamp >= 0 else None
            standing = self.positions.get((commit.group, commit.topic, commit.partition))
            if outcome == "COMMIT" and commit.superseded_by is None and standing is not None \
                    and standing.commit.offset is not None and standing.commit.log_offset > commit.log_offset:
                # OffsetMetadataManager.replayEndTransactionMarker keeps the offset of the later record ("Skipped
                # the materialization"): a plain commit written after this one, before the marker, stands
                commit.superseded_by = standing.commit.log_offset
            self._apply(commit)

    def _apply(self, commit: Commit) -> None:
        if commit.counts:
            where = (commit.group, commit.topic, commit.partition)
            position = self.positions.get(where)
            if position is None:
                position = self.positions[where] = Position(commit, first=commit)
            else:
                commit.previous_offset = before = position.commit.offset
                group = self.group_state.get(commit.group)
                if before is not None and commit.offset is not None:
                    if commit.offset < before:
                        commit.move = "rewind"
                    elif commit.offset > before and group is not None and group.members == 0:
                        commit.move = "reset-forward"
                position.commit = commit
            position.commits += 1
            position.rewinds += commit.move == "rewind"
            position.resets += commit.move == "reset-forward"
            when = commit.in_effect_from
            if self.at is not None and when is not None and when <= self.at:
                self.positions_at[where] = commit
        self.emit(commit)



def replay_offsets(files: list[str], decompressed_limit: int, emit: Callable[[Commit], None] | None = None, *,
                   groups: set[str] | None = None, topics: set[str] | None = None, at: int | None = None
                   ) -> tuple[dict[str, OffsetHistory], Replayed]:
    """Replay the ``__consumer_offsets`` segments ``files``, one :class:`OffsetHistory` per partition (a group's
    records, and a transaction's markers, are in one), each finished; (partition -> history, the replay)."""
    from kbatch.ops.logs import partition_key, replay
    from kbatch.reading.reader import ReadOptions

    histories: dict[str, OffsetHistory] = {}

    def add(path: str, batch: Batch) -> None:
        key = partition_key(path)
        if key not in histories:
            histories[key] = OffsetHistory(emit, groups=groups, topics=topics, at=at)
        histories[key].add_batch(batch, path)

    replayed = replay(files, ReadOptions(records=True, decompressed_limit=decompressed_limit), add)
    for history in histories.values():
        history.finish()
    return histories, replayed

def _known(value: int | None) -> int | None:
    """-1 is how OffsetCommitValue says "none" for a leader epoch and an expiry time."""
    return None if value is None or value < 0 else value


def reset_command(group: str, topic: str, partition: int, offset: int, quote: Callable[[str], str]) -> str:
    """The kafka-consumer-groups.sh line that commits ``offset`` for the group on one partition (the group must
    have no active members; ``--execute`` applies it, without it the tool only shows the plan)."""
    return (f"kafka-consumer-groups.sh --bootstrap-server BROKER:9092 --group {quote(group)} "
            f"--topic {quote(f'{topic}:{partition}')} --reset-offsets --to-offset {offset} --execute")

