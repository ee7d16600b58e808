"""What Kafka's retention and log cleaner would do with each segment of a partition now, and why not.

Retention (``UnifiedLog.deleteOldSegments``) runs three passes, each over the segments from the oldest,
deleting while its condition holds and stopping at the first segment where it does not
(``UnifiedLog.deletableSegments``):

1. ``deleteLogStartOffsetBreachedSegments``: a segment whose next segment starts at or below the log start
   offset (DeleteRecords, or the log start a remote tier moved);
2. ``deleteRetentionSizeBreachedSegments`` (cleanup.policy delete): while the log is larger than
   retention.bytes by at least the segment's size;
3. ``deleteRetentionMsBreachedSegments`` (cleanup.policy delete): while ``now - largestTimestamp >
   retention.ms``, where a segment's largest timestamp is its largest record timestamp, or the file's
   modification time when no record has one (``LogSegment.largestTimestamp``).

In every pass a segment whose end (the next segment's base offset, or the log end offset) lies above the high
watermark is kept, and so is an empty last segment.  So one segment kept stops the pass: a segment with a
timestamp in the future keeps itself, and every segment after it, whatever their age.  With tiered storage
(remote.storage.enable, copy not disabled) a segment also waits until the remote tier holds it
(``isSegmentEligibleForDeletion``), which the log directory does not say: such segments are reported as
waiting on it.

The log cleaner (cleanup.policy compact; ``LogCleanerManager.cleanableOffsets``, ``LogToClean``) cleans from
the first dirty offset (the cleaner-offset-checkpoint's, or the log start offset) up to the first uncleanable
offset: the last stable offset (the first offset of the earliest transaction open, or completed by a marker the
high watermark has not passed, where that lies below the high watermark; else the high watermark:
kbatch.ops.txn.last_stable_offset), the active segment's base offset, or the first segment newer than
min.compaction.lag.ms, whichever is lowest; it picks a log when its dirty ratio (cleanable bytes over clean plus cleanable bytes) exceeds
min.cleanable.dirty.ratio, or when max.compaction.lag.ms has passed for its oldest dirty segment.  The cleanable
bytes end where the segment holding the first uncleanable offset begins (``calculateCleanableBytes``: the
segments are asked from the one holding an offset, ``LogSegments.values``), so an offset inside a segment holds
that whole segment back; and a segment holding the first dirty offset is the first min.compaction.lag.ms asks.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kbatch.format.findings import Finding
from kbatch.ops.logs import Replayed, replay
from kbatch.reading.model import Batch

if TYPE_CHECKING:
    from kbatch.ops.txn import CoordinatorView, Transaction
    from kbatch.partition.textfiles import CheckpointedOffset

# LogConfig's defaults (the broker's own log.* settings override them; --config and --metadata here)
DEFAULTS = {
    "cleanup.policy": "delete",
    "retention.ms": 7 * 24 * 3600 * 1000,
    "retention.bytes": -1,
    "min.cleanable.dirty.ratio": 0.5,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": 2**63 - 1,
    "remote.storage.enable": False,
    "remote.log.copy.disable": False,
    "local.retention.ms": -2,
    "local.retention.bytes": -2,
}
_NUMBERS = {"retention.ms", "retention.bytes", "min.compaction.lag.ms", "max.compaction.lag.ms", "local.retention.ms",
            "local.retention.bytes"}


@dataclass(frozen=True)
class Range:
    """ConfigDef.Range: ``atLeast(low)``, or ``between(low, high)``; both bounds inclusive, the value compared as
    a double (Number.doubleValue), so a ratio of NaN passes both."""

    low: float
    high: float | None = None

    def accepts(self, value: float) -> bool:
        return not (value < self.low or (self.high is not None and value > self.high))

    @property
    def expected(self) -> str:
        if self.high is None:
            return f"at least {self.low} (LogConfig: ConfigDef.Range.atLeast)"
        return f"between {self.low} and {self.high}, inclusive (LogConfig: ConfigDef.Range.between)"


@dataclass(frozen=True)
class ValidList:
    """ConfigDef.ValidList.in(valid...): the list empty, or each part one of ``valid`` (ValidString.in, case
    and all: an empty part is refused, "values must not be empty"); duplicates are dropped before it asks
    (ConfigDef.parseValue)."""

    valid: tuple[str, ...]

    def accepts(self, parts: list[str]) -> bool:
        return all(part in self.valid for part in parts)

    @property
    def expected(self) -> str:
        return f"{' or '.join(self.valid)} (LogConfig: ValidList.in)"


# The validators LogConfig declares for the configs retention reads: Kafka trunk,
# storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java, its CONFIG's define(...) calls.
# ConfigDef.parseValue runs one on the parsed value and throws ConfigException when it refuses it, so
# LogConfig.fromProps throws on a value out of range as on one that does not parse: the broker never runs with
# it.  retention.bytes has none ("can be negative"), nor have the BOOLEANs (remote.storage.enable: null).
VALIDATORS: dict[str, Range | ValidList] = {
    "cleanup.policy": ValidList(("compact", "delete")),   # ValidList.in(CLEANUP_POLICY_COMPACT, CLEANUP_POLICY_DELETE)
    "retention.ms": Range(-1),                            # atLeast(-1)
    "min.cleanable.dirty.ratio": Range(0, 1),             # between(0, 1)
    "min.compaction.lag.ms": Range(0),                    # atLeast(0)
    "max.compaction.lag.ms": Range(1),                    # atLeast(1)
    "local.retention.ms": Range(-2),                      # atLeast(-2)
    "local.retention.bytes": Range(-2),                   # atLeast(-2)
}


def unread_config(keys) -> str | None:
    """Why a config asked for (--config) cannot be applied: a key retention does not read, as a typo of one
    it does would otherwise be passed over and the verdicts given under its default; None: all are read.  (Names
    are quoted by repr: a key is the user's text, shown with its controls escaped.)"""
    for key in keys:
        if key not in DEFAULTS:
            return f"{key!r} is not a config retention reads (those are {', '.join(DEFAULTS)})"
    return None


class ConfigError(ValueError):
    """A topic config (from __cluster_metadata or --config) whose value does not parse as Kafka's LogConfig reads
    it, or that its validator refuses: ``key``, and what Kafka expects (``expected``)."""

    def __init__(self, key: str, text: str, expected: str):
        super().__init__(f"{key} holds {text!r}: expected {expected}")
        self.key, self.text, self.expected = key, text, expected


# Double.parseDouble (Double.valueOf's grammar): a sign, NaN or Infinity as spelt, decimal digits with an exponent,
# or a hexadecimal one with its binary exponent; a suffix f, F, d or D. Not Python's "nan", "inf" nor "1_0".
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
                          r"|0[xX]([0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?\d+)[fFdD]?)", re.ASCII)


_JAVA_TRIM = "".join(map(chr, range(0x21)))   # String.trim: every char up to U+0020
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")   # ConfigDef.COMMA_WITH_WHITESPACE


def java_double(text: str) -> float | None:
    """``text`` as Java's Double.parseDouble reads it (after String.trim); None where Java throws."""
    match = _JAVA_DOUBLE.fullmatch(text.strip(_JAVA_TRIM))
    if match is None:
        return None
    number = match[0].rstrip("fFdD")
    if "x" in number.lower():
        return float.fromhex(number)
    return float(number.replace("Infinity", "inf"))


def parse_config(pairs: dict[str, str]) -> dict:
    """Topic configs as Kafka's text gives them, over DEFAULTS; ConfigError names one that does not parse, or
    that its validator in LogConfig refuses (:data:`VALIDATORS`).

    ConfigDef.parseType trims the text, then: LONG Long.parseLong, DOUBLE Double.parseDouble, BOOLEAN "true" or
    "false" in any case, LIST the parts between commas, each trimmed (none when the text is empty); then
    ConfigDef.parseValue asks the config's validator."""
    from kbatch.partition.textfiles import java_integer

    config = dict(DEFAULTS)
    for key, text in pairs.items():
        trimmed = text.strip(_JAVA_TRIM)
        value: Any
        if key in _NUMBERS:
            value = java_integer(trimmed.encode("utf-8", "replace"), 64)
            if value is None:
                raise ConfigError(key, text, "a long (Long.parseLong)")
        elif key == "min.cleanable.dirty.ratio":
            value = java_double(trimmed)
            if value is None:
                raise ConfigError(key, text, "a double (Double.parseDouble)")
        elif key in ("remote.storage.enable", "remote.log.copy.disable"):
            if trimmed.lower() not in ("true", "false"):
                raise ConfigError(key, text, "true or false")
            value = trimmed.lower() == "true"
        elif key == "cleanup.policy":
            value = _LIST_SEPARATOR.split(trimmed) if trimmed else []
        else:
            config[key] = text
            continue
        validator = VALIDATORS.get(key)
        if validator is not None and not validator.accepts(value):
            raise ConfigError(key, text, validator.expected)
        config[key] = ",".join(value) if isinstance(value, list) else value
    return config


def _policies(config: dict) -> set[str]:
    return {policy for policy in str(config["cleanup.policy"]).split(",") if policy}


@dataclass
class SegmentFacts:
    """What retention asks of one segment, read from its batches (and the file's modification time)."""

    path: str
    base_offset: int
    size: int
    modified_ms: int
    last_offset: int | None = None
    largest_record_timestamp: int | None = None
    largest_timestamp_offset: int | None = None     # the batch that holds it
    first_batch_timestamp: int | None = None
    verdict: str = "kept"
    reasons: list[str] = field(default_factory=list)

    @property
    def largest_timestamp(self) -> int:
        """LogSegment.largestTimestamp: the largest record timestamp, else the file's modification time."""
        return self.largest_record_timestamp if self.largest_record_timestamp is not None else self.modified_ms

    def add_batch(self, batch: Batch) -> None:
        self.last_offset = batch.last_offset
        stamp = batch.max_timestamp
        if stamp is not None and stamp >= 0 and (self.largest_record_timestamp is None
                                                 or stamp > self.largest_record_timestamp):
            self.largest_record_timestamp, self.largest_timestamp_offset = stamp, batch.base_offset
        if self.first_batch_timestamp is None and batch.max_timestamp is not None:
            self.first_batch_timestamp = batch.max_timestamp   # (LogSegment.getFirstBatchTimestamp: maxTimestamp)


def segment_facts(path: str, base_offset: int) -> SegmentFacts:
    info = os.stat(path)
    return SegmentFacts(path, base_offset, info.st_size, int(info.st_mtime * 1000))


@dataclass
class Cleaning:
    """What the log cleaner would do with a compacted partition now."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    cleanable_bytes: int
    total_bytes: int
    ratio: float
    due: bool                     # max.compaction.lag.ms has passed for its oldest dirty segment
    will_clean: bool
    blocked_by: list[str]


@dataclass
class PartitionRetention:
    path: str
    segments: list[SegmentFacts]
    log_end_offset: int
    high_watermark: int | None
    log_start_offset: int
    # those of its transactions that may hold its last stable offset (kbatch.ops.txn.unstable, at the checkpointed
    # high watermark: retention never raises the log start past it); named where __transaction_state was read
    transactions: list[Transaction]
    cleaner_checkpoint: int | None = None              # cleaner-offset-checkpoint's offset for it
    cleaning: Cleaning | None = None
    # the offset checkpoints of its log directory that cannot be read (their findings say where)
    unread_checkpoints: list[CheckpointedOffset] = field(default_factory=list)
    config_unread: Finding | None = None               # its topic's config holds a value Kafka cannot parse or refuses

    def unread(self, name: str) -> bool:
        """Whether the log directory's offset checkpoint ``name`` cannot be read (its value unknown, not absent)."""
        return any(os.path.basename(str(read.path)) == name for read in self.unread_checkpoints)


def _log_segments(segments: list[SegmentFacts], start: int, stop: int) -> list[SegmentFacts]:
    """LogSegments.values(from, to): from the segment holding ``start`` (its floor, segments.floorKey(from); the
    first segment where none is) to the last that starts below ``stop``; none when ``start == stop``."""
    if start == stop:
        return []
    floor = max((s.base_offset for s in segments if s.base_offset <= start), default=segments[0].base_offset)
    return [s for s in segments if floor <= s.base_offset < stop]


def _non_active_segments_from(segments: list[SegmentFacts], start: int) -> list[SegmentFacts]:
    """LogSegments.nonActiveLogSegmentsFrom(from): values(from, the active segment's base offset), so the segment
    holding ``start`` comes first; none where ``start`` lies past the active segment's base offset."""
    active = segments[-1].base_offset
    return [] if start > active else _log_segments(segments, start, active)


def judge(partition: PartitionRetention, config: dict, now: int) -> None:
    """Set each segment's verdict ("deletable", "kept" or "unknown") and reasons, and the partition's cleaning."""
    segments = partition.segments
    if not segments:
        return
    if partition.config_unread is not None:
        # LogConfig.fromProps throws: the broker keeps the config it had (DynamicConfigPublisher's fault handler),
        # or fails to start its logs (LogManager.fetchTopicConfigOverrides); which, a log directory does not say
        for segment in segments:
            segment.verdict = "unknown"
            segment.reasons.append(f"its topic's config cannot be read: {partition.config_unread.field} (a "
                                   "bad-topic-config finding)")
        return
    if partition.unread_checkpoints:
        # CheckpointFileWithFailureHandler.read takes the log directory offline: no retention, no cleaning there
        names = ", ".join(os.path.basename(str(read.path)) for read in partition.unread_checkpoints)
        for segment in segments:
            segment.reasons.append(f"Kafka cannot read {names} (damaged) and takes the log directory offline: "
                                   "retention deletes nothing there")
        return
    policies = _policies(config)
    remote = bool(config["remote.storage.enable"]) and not config["remote.log.copy.disable"]
    high_watermark = partition.high_watermark if partition.high_watermark is not None else partition.log_end_offset
    retention_ms = config["retention.ms"]
    retention_bytes = config["retention.bytes"]
    if remote:   # UnifiedLog.localRetentionMs / localRetentionSize: -2 means "as retention.ms / .bytes"
        retention_ms = retention_ms if config["local.retention.ms"] == -2 else config["local.retention.ms"]
        retention_bytes = retention_bytes if config["local.retention.bytes"] == -2 else config["local.retention.bytes"]
    live = list(segments)
    log_start = partition.log_start_offset

    def upper(index: int) -> int:
        return live[index + 1].base_offset if index + 1 < len(live) else partition.log_end_offset

    def delete_while(condition, why: str) -> str | None:
        """UnifiedLog.deletableSegments: delete from the oldest while ``condition(i)`` gives None (deletable),
        stop at the first segment it explains keeping; that explanation."""
        nonlocal live, log_start
        while live:
            segment, is_last = live[0], len(live) == 1
            if is_last and segment.size == 0:
                return "the last segment, and empty: never deleted"
            if high_watermark < upper(0):
                return (f"its records reach the high watermark ({high_watermark}): retention never moves the log "
                        "start past it")
            kept = condition(0)
            if kept is not None:
                return kept
            if remote and not (len(live) > 1 and log_start >= live[1].base_offset):
                return ("tiered storage: deleted once the remote tier holds it (the log directory does not say "
                        "whether it does)")
            segment.verdict = "deletable"
            segment.reasons.append(why + (" (the active segment: Kafka rolls a new one first)" if is_last else ""))
            live = live[1:]
            if live:
                log_start = max(log_start, live[0].base_offset)
        return None

    # 1. deleteLogStartOffsetBreachedSegments
    kept_because = delete_while(
        lambda i: None if i + 1 < len(live) and live[i + 1].base_offset <= log_start else "",
        "below the log start offset")
    if "delete" not in policies and not remote:
        kept_because = kept_because or (
            "cleanup.policy compact: the cleaner compacts it, retention deletes only below the log start offset"
            if "compact" in policies else "cleanup.policy is empty: only the log start offset deletes segments")
    if "delete" in policies or ("compact" not in policies and remote):
        # 2. deleteRetentionSizeBreachedSegments
        if retention_bytes >= 0 and sum(s.size for s in live) >= retention_bytes:
            excess = [sum(s.size for s in live) - retention_bytes]

            def over_size(i):
                if excess[0] - live[i].size >= 0:
                    excess[0] -= live[i].size
                    return None
                return f"the log is within retention.bytes ({retention_bytes}) without it"
            kept_because = delete_while(over_size, f"retention.bytes ({retention_bytes}) exceeded")
        elif retention_bytes >= 0:
            kept_because = f"the log is within retention.bytes ({retention_bytes})"
        # 3. deleteRetentionMsBreachedSegments
        if retention_ms >= 0:
            def too_old(i):
                segment = live[i]
                if segment.largest_timestamp > now:
                    where = "" if segment.largest_timestamp_offset is None else \
                        f" (batch at offset {segment.largest_timestamp_offset})"
                    return f"its largest timestamp {segment.largest_timestamp} is in the future{where}"
                if now - segment.largest_timestamp > retention_ms:
                    return None
                return f"within retention.ms ({retention_ms}): expires at {segment.largest_timestamp + retention_ms}"
            kept_because = delete_while(too_old, f"older than retention.ms ({retention_ms})")
        else:
            kept_because = kept_because or "retention.ms is -1: kept for ever"
    first_kept = True
    for segment in live:
        if first_kept and kept_because:
            segment.reasons.append(kept_because)
        elif not first_kept:
            segment.reasons.append("an older segment is kept, and retention deletes from the oldest")
        first_kept = False
    if "compact" in policies and live:
        partition.cleaning = _cleaning(partition, live, config, now, high_watermark)


def _cleaning(partition: PartitionRetention, segments: list[SegmentFacts], config: dict, now: int,
              high_watermark: int) -> Cleaning:
    """LogCleanerManager.cleanableOffsets and LogToClean, for the segments retention keeps."""
    from kbatch.ops.txn import last_stable_offset

    log_start, end = segments[0].base_offset, partition.log_end_offset
    log_start = max(log_start, partition.log_start_offset)
    checkpointed = partition.cleaner_checkpoint
    first_dirty = checkpointed if checkpointed is not None and log_start <= checkpointed <= end else log_start
    last_stable, holder = last_stable_offset(partition.transactions, high_watermark, log_start, end)
    active = segments[-1].base_offset
    candidates = {"the last stable offset": last_stable, "the active segment": active}
    lag = config["min.compaction.lag.ms"]   # (at least 0: VALIDATORS)
    if lag > 0:
        # findFirstUncleanableSegment: the segment holding the first dirty offset is asked too
        for segment in _non_active_segments_from(segments, first_dirty):
            if segment.largest_timestamp > now - lag:
                candidates[f"min.compaction.lag.ms ({lag})"] = segment.base_offset
                break
    uncleanable = max(first_dirty, min(candidates.values()))
    blockers = [name for name, offset in candidates.items() if offset == min(candidates.values())]
    if holder is not None and "the last stable offset" in blockers:
        blockers[blockers.index("the last stable offset")] = _held(last_stable, holder)
    # calculateCleanableBytes: the first uncleanable segment is the one holding the uncleanable offset (else the
    # active segment), so an offset inside a segment leaves that whole segment dirty but not cleanable
    from_uncleanable = _non_active_segments_from(segments, uncleanable)
    first_uncleanable = from_uncleanable[0].base_offset if from_uncleanable else active
    cleanable = sum(s.size for s in _log_segments(segments, min(first_dirty, first_uncleanable), first_uncleanable))
    clean = sum(s.size for s in _log_segments(segments, -1, first_dirty))   # LogToClean.cleanBytes
    total = clean + cleanable
    ratio = cleanable / total if total else 0.0
    # maxCompactionDelay: the first batch timestamps of nonActiveLogSegmentsFrom(firstDirtyOffset)
    dirty = [s.first_batch_timestamp for s in _non_active_segments_from(segments, first_dirty)
             if s.first_batch_timestamp and s.first_batch_timestamp > 0]
    due = bool(dirty) and min(dirty) < now - config["max.compaction.lag.ms"]
    will = total > 0 and ((due and cleanable > 0) or ratio > config["min.cleanable.dirty.ratio"])
    return Cleaning(first_dirty, uncleanable, cleanable, total, ratio, due, will, blockers)


def _held(last_stable: int, holder: Transaction) -> str:
    """What holds the last stable offset at ``last_stable``: ``holder``, open or not yet replicated."""
    start = "" if last_stable == holder.first_offset else " (the log start offset)"
    if holder.marker_offset is None:
        whose = f"producer {holder.producer_id}'s open transaction" if holder.transactional_id is None else \
            f"the open transaction of transactional id {holder.transactional_id} (producer {holder.producer_id})"
    else:
        whose = (f"producer {holder.producer_id}'s transaction" if holder.transactional_id is None else
                 f"the transaction of transactional id {holder.transactional_id} (producer {holder.producer_id})") + \
            f", whose {holder.outcome} marker at {holder.marker_offset} the high watermark has not passed"
    return f"the last stable offset, held at {last_stable}{start} by {whose}"


def partition_directories(paths: list[str]) -> list[str]:
    """The partition directories the paths name: a directory holding segments is one; a log directory's
    TOPIC-N directories are (but __cluster_metadata-0, whose segments KRaft's snapshots delete)."""
    from kbatch.files.inputs import topic_partition

    found = []
    for path in paths:
        if any(name.endswith(".log") for name in os.listdir(path)):
            found.append(path)
            continue
        for name in sorted(os.listdir(path)):
            child = os.path.join(path, name)
            topic = topic_partition(os.path.join(child, "x"))[0] if os.path.isdir(child) else None
            # KRaft's metadata log is not retention's: snapshots let the controller delete its segments
            if topic is not None and topic != "__cluster_metadata":
                found.append(child)
    return found


def read_partition(directory: str, options, coordinator: CoordinatorView | None = None) \
        -> tuple[PartitionRetention, Replayed]:
    """A partition directory's segments (oldest first) read into their facts, and its checkpoints; with what
    the replay met (kbatch.ops.logs.Replayed).  A __transaction_state partition's records go to ``coordinator``
    too, when given (the transactional ids of the producers: :func:`name_open_transactions`)."""
    from kbatch.files.inputs import passed_over, segment_base_offset
    from kbatch.files.kinds import LOG_START_OFFSET_CHECKPOINT
    from kbatch.ops.txn import PartitionTransactions, is_transaction_state, unstable
    from kbatch.partition.textfiles import checkpointed_offset, loaded_log_start

    # Regular files only, as Kafka loads them (LogLoader.loadSegmentFiles): opening a FIFO would wait forever.
    passed: list[tuple[str, str]] = []
    paths: list[str] = []
    for name in os.listdir(directory):
        if name.endswith(".log"):
            path = os.path.join(directory, name)
            why = passed_over(path)
            if why is None:
                paths.append(path)
            else:
                passed.append((path, f"{why}: passed over unopened"))
    paths.sort(key=lambda path: segment_base_offset(path) or 0)
    facts = {path: segment_facts(path, segment_base_offset(path) or 0) for path in paths}
    transactions = PartitionTransactions(directory, None, directory=directory)
    coordinator = coordinator if is_transaction_state(os.path.join(directory, "x")) else None

    def add(path, batch):
        facts[path].add_batch(batch)
        transactions.add_batch(batch, path)
        if coordinator is not None:
            coordinator.add_batch(batch)

    replayed = replay(paths, options, add,   # (the markers' records; all of __transaction_state's)
                      wants_records=lambda path, batch: batch.is_control or coordinator is not None)
    replayed.unreadable += passed
    segments = list(facts.values())
    last = segments[-1] if segments else None
    end = (last.last_offset + 1 if last.last_offset is not None else last.base_offset) if last else 0
    read = {name: checkpointed_offset(directory, name)
            for name in ("replication-offset-checkpoint", LOG_START_OFFSET_CHECKPOINT, "cleaner-offset-checkpoint")}
    high_watermark = read["replication-offset-checkpoint"].offset
    partition = PartitionRetention(
        directory, segments, end, high_watermark,
        # (a log start not read: the first segment's base offset, as LogManager.loadLogs resets it)
        loaded_log_start(read[LOG_START_OFFSET_CHECKPOINT].offset, segments[0].base_offset if segments else 0),
        unstable(transactions.transactions, end if high_watermark is None else high_watermark),
        read["cleaner-offset-checkpoint"].offset,
        unread_checkpoints=[each for each in read.values() if each.unreadable])
    return partition, replayed


def name_open_transactions(partitions: list[PartitionRetention], coordinator: CoordinatorView) -> None:
    """Name the producer of each partition's transactions (the one that holds its last stable offset among them) by
    its transactional id, where the __transaction_state partitions read hold its producer id (kbatch producers'
    join)."""
    from kbatch.ops.producers import join_transactional_ids

    join_transactional_ids([txn for partition in partitions for txn in partition.transactions], coordinator)


def retention_report(directories: list[str], configs: dict[str, str], topics: TopicConfigs, options,
                     now: int) -> tuple[list[tuple[PartitionRetention, dict]], Replayed]:
    """Each partition directory read (:func:`read_partition`) and judged at ``now`` under its config (Kafka's
    defaults, then ``topics``' for its topic, then ``configs``, which must parse), its open transactions named by
    ``__transaction_state`` where a directory given holds it; ((partition, config) each, what the reads met).
    A value of ``topics`` that does not parse, or is out of range, is a finding about its ConfigRecord, and its
    topic's segments are judged "unknown"; an offset checkpoint that cannot be read is its findings (once a
    file)."""
    from kbatch.files.inputs import topic_partition
    from kbatch.ops.txn import CoordinatorView

    results = []
    everything = Replayed()
    coordinator = CoordinatorView()   # __transaction_state's, where a directory given holds it
    told: set[str] = set()            # the checkpoints whose findings are told
    for directory in directories:
        topic, _ = topic_partition(os.path.join(directory, "x"))
        own = topics.values.get(topic, {}) if topic is not None else {}
        config, config_unread = dict(DEFAULTS), None
        try:
            config = parse_config({**own, **configs})
        except ConfigError as error:   # (--config parses: the CLI checked it) a ConfigRecord's value does not, or is
            # out of range
            path, finding = topics.finding(topic or "", error)
            config_unread = finding
            if (path, finding) not in everything.findings:
                everything.findings.append((path, finding))
            everything.damaged = True
        partition, replayed = read_partition(directory, options, coordinator)
        partition.config_unread = config_unread
        for read in partition.unread_checkpoints:
            if read.path not in told:
                told.add(str(read.path))
                everything.findings += [(str(read.path), finding) for finding in read.findings]
                everything.damaged = True
        results.append((partition, config))
        everything.findings += replayed.findings
        everything.unreadable += replayed.unreadable
        everything.damaged = everything.damaged or replayed.damaged
    name_open_transactions([partition for partition, _ in results], coordinator)
    for partition, config in results:
        judge(partition, config, now)
    return results, everything


@dataclass
class TopicConfigs:
    """Each topic's configs as __cluster_metadata's ConfigRecords leave them (``values``), and where the record
    that set each lies (``where``: (topic, name) -> (file, batch position, record position, size, offset); a
    compressed batch's record: the batch's)."""

    values: dict[str, dict[str, str]] = field(default_factory=dict)
    where: dict[tuple[str, str], tuple[str, int, int, int, int]] = field(default_factory=dict)

    def finding(self, topic: str, error: ConfigError) -> tuple[str, Finding]:
        """The ConfigRecord of ``topic`` whose value does not parse or is out of range (``error``), as a finding
        about its file.

        The controller validates a topic config when it is set (ConfigurationControlManager, LogConfig.validate),
        so a record holding a value LogConfig cannot parse or refuses is damage, or written by a Kafka that knows a
        value this one does not (LogConfig.fromProps throws ConfigException on it)."""
        path, batch_pos, record_pos, size, offset = self.where.get((topic, error.key),
                                                                   ("__cluster_metadata", 0, 0, 0, -1))
        return path, Finding("bad-topic-config", batch_pos, record_pos, size,
                             f"ConfigRecord at offset {offset}: topic {topic!r}, {error.key}", error.expected,
                             repr(error.text[:80]))


def topic_configs(metadata_directory: str, options) -> TopicConfigs:
    """Each topic's configs as __cluster_metadata's ConfigRecords leave them (resource type 2, TOPIC; a null
    value removes one): its latest snapshot (a .checkpoint file), then the log's records after it."""
    from kbatch.files.inputs import segment_base_offset
    from kbatch.messages.topics import decode_metadata

    names = os.listdir(metadata_directory)
    snapshots = sorted((name for name in names if name.endswith(".checkpoint")), key=lambda n: int(n.split("-")[0]))
    start = int(snapshots[-1].split("-")[0]) if snapshots else 0
    files = [os.path.join(metadata_directory, snapshots[-1])] if snapshots else []
    files += sorted((os.path.join(metadata_directory, name) for name in names if name.endswith(".log")),
                    key=lambda path: segment_base_offset(path) or 0)
    configs = TopicConfigs()

    def add(path, batch):
        if batch.is_control or not batch.records:
            return
        in_snapshot = path.endswith(".checkpoint")
        for record in batch.records:
            if not in_snapshot and record.offset < start:
                continue   # (the snapshot holds it)
            decoded = decode_metadata(record.key, record.value)
            if decoded.value is None or decoded.value["name"] != "ConfigRecord":
                continue
            data = decoded.value["data"]
            if data["resourceType"] != 2:
                continue
            topic = configs.values.setdefault(data["resourceName"], {})
            if data["value"] is None:
                topic.pop(data["name"], None)
            else:
                topic[data["name"]] = data["value"]
                configs.where[data["resourceName"], data["name"]] = (
                    path, batch.pos, *((batch.pos, batch.size) if batch.compressed else (record.pos, record.size)),
                    record.offset)

    replay(files, options, add)
    return configs
