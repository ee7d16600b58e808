"""What a file beside a segment is, told by its name as Kafka names it (LogFileUtils.java, Snapshots.java)."""

from __future__ import annotations

import os
import re

LOG = "log"
OFFSET_INDEX = "index"
TIME_INDEX = "timeindex"
TXN_INDEX = "txnindex"
PRODUCER_SNAPSHOT = "snapshot"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition-metadata"
OFFSET_CHECKPOINT = "offset-checkpoint"
KRAFT_CHECKPOINT = "kraft-checkpoint"
QUORUM_STATE = "quorum-state"
META_PROPERTIES = "meta-properties"

# In the order `dump` lists a segment's files.
KINDS = (LOG, OFFSET_INDEX, TIME_INDEX, TXN_INDEX, PRODUCER_SNAPSHOT, LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA,
         OFFSET_CHECKPOINT, KRAFT_CHECKPOINT, QUORUM_STATE, META_PROPERTIES)

DESCRIPTIONS = {
    LOG: "a log segment",
    OFFSET_INDEX: "an offset index",
    TIME_INDEX: "a time index",
    TXN_INDEX: "a transaction index",
    PRODUCER_SNAPSHOT: "a producer state snapshot",
    LEADER_EPOCH_CHECKPOINT: "a leader epoch checkpoint",
    PARTITION_METADATA: "a partition.metadata file",
    OFFSET_CHECKPOINT: "an offset checkpoint",
    KRAFT_CHECKPOINT: "a KRaft snapshot (.checkpoint)",
    QUORUM_STATE: "a KRaft quorum-state file",
    META_PROPERTIES: "a log directory's meta.properties",
}

# Kinds whose bytes are record batches: the segment reader reads them.
BATCH_KINDS = frozenset({LOG, KRAFT_CHECKPOINT})

# <20-digit offset>.<suffix>, optionally with the suffix Kafka adds while deleting, cleaning or swapping.
_OFFSET_FILE = re.compile(r"^(?P<base>\d{20})\.(?P<suffix>log|index|timeindex|txnindex|snapshot)"
                          r"(?:\.(?:deleted|cleaned|swap))?$")
# Snapshots.filenameFromSnapshotId: <20-digit end offset>-<10-digit epoch>.checkpoint; ".part" while it is
# written (Snapshots.PARTIAL_SUFFIX, renamed when frozen), ".deleted" while it is deleted.
_KRAFT_SNAPSHOT = re.compile(r"^(?P<base>\d{20})-(?P<epoch>\d{10})\.checkpoint(?P<state>\.part|\.deleted)?$")
# The checkpoints a log directory holds (LogManager, ReplicaManager, LogCleanerManager).
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
OFFSET_CHECKPOINTS = frozenset({"recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                                LOG_START_OFFSET_CHECKPOINT, "cleaner-offset-checkpoint"})
# The marker a broker leaves in a log directory it shut down cleanly: then it skips log recovery on start
# (CleanShutdownFileHandler.CLEAN_SHUTDOWN_FILE_NAME, read by LogManager.loadLogs).
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"


def kind_of(path: str) -> str | None:
    """The kind a file's name says it is, or None for a name Kafka does not give."""
    name = os.path.basename(path.rstrip("/"))
    match = _OFFSET_FILE.match(name)
    if match:
        return match["suffix"]
    if _KRAFT_SNAPSHOT.match(name):
        return KRAFT_CHECKPOINT
    if name == "leader-epoch-checkpoint":
        return LEADER_EPOCH_CHECKPOINT
    if name == "partition.metadata":
        return PARTITION_METADATA
    if name == "quorum-state":   # FileQuorumStateStore, in __cluster_metadata-0
        return QUORUM_STATE
    if name == "meta.properties":   # MetaPropertiesEnsemble, one per log directory
        return META_PROPERTIES
    if name in OFFSET_CHECKPOINTS:
        return OFFSET_CHECKPOINT
    if name.endswith(".log"):
        return LOG
    return None


def is_partial_snapshot(path: str) -> bool:
    """Whether a file is a KRaft snapshot still being written (or left so by a crash): Kafka never reads one,
    it deletes it at start-up (Snapshots.deleteIfExists via KafkaMetadataLog)."""
    match = _KRAFT_SNAPSHOT.match(os.path.basename(path.rstrip("/")))
    return match is not None and match["state"] == ".part"


def base_offset_of(path: str) -> int | None:
    """The offset a file's name carries: a segment's base offset, a snapshot's end offset."""
    name = os.path.basename(path.rstrip("/"))
    match = _OFFSET_FILE.match(name) or _KRAFT_SNAPSHOT.match(name)
    return int(match["base"]) if match else None


def listing_order(path: str) -> tuple:
    """Where a file goes when a partition directory is listed: by the offset its name carries (a segment's
    files together, in :data:`KINDS` order), then the files named once per partition, then anything else."""
    name = os.path.basename(path.rstrip("/"))
    kind = kind_of(name)
    offset = base_offset_of(name)
    if offset is not None:
        return (0, offset, KINDS.index(kind), name)
    if kind is not None:
        return (1, 0, KINDS.index(kind), name)
    return (2, 0, 0, name)


# LocalLog.DELETE_DIR_PATTERN, FUTURE_DIR_PATTERN, STRAY_DIR_PATTERN: "<topic>-<partition>.<unique id><suffix>"
# (LocalLog.logDeleteDirName, logFutureDirName, logStrayDirName; the suffixes are LogFileUtils'): a partition
# directory Kafka renamed, holding the same files.
_RENAMED_PARTITION = re.compile(r"^(?P<name>\S+-\S+)\.(?P<id>\S+)-(?P<state>delete|future|stray)$")
RENAMED_PARTITION_STATES = {
    "delete": "a partition directory renamed -delete: the partition was deleted (or its replica moved away) and "
              "waits file.delete.delay.ms to be removed (LocalLog.logDeleteDirName)",
    "future": "a partition directory renamed -future: the copy of a replica being moved to this log directory "
              "(alter-replica-log-dirs), which replaces the current one once caught up (LocalLog.logFutureDirName)",
    "stray": "a partition directory renamed -stray: a replica the cluster metadata no longer places on this "
             "broker, kept until it is removed (LocalLog.logStrayDirName)",
}


def renamed_partition(directory: str) -> tuple[str, str] | None:
    """(the partition directory name it had, its state: delete, future or stray) of a directory Kafka
    renamed, or None."""
    match = _RENAMED_PARTITION.match(os.path.basename(directory.rstrip("/")))
    return (match["name"], match["state"]) if match else None
