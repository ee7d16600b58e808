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

# In the order `dump` lists a segment's files.
KINDS = (LOG, OFFSET_INDEX, TIME_INDEX, TXN_INDEX, PRODUCER_SNAPSHOT, LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA,
         OFFSET_CHECKPOINT, KRAFT_CHECKPOINT, QUORUM_STATE)

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
}

# Kinds whose bytes are record batches: the segment reader reads them.
BATCH_KINDS = frozenset({LOG, KRAFT_CHECKPOINT})

# <20-digit offset>.<suffix>, optionally with the suffix Kafka adds while deleting, cleaning or swapping.
_OFFSET_FILE = re.compile(r"^(?P<base>\d{20})\.(?P<suffix>log|index|timeindex|txnindex|snapshot)"
                          r"(?:\.(?:deleted|cleaned|swap))?$")
# Snapshots.filenameFromSnapshotId: <20-digit end offset>-<10-digit epoch>.checkpoint
_KRAFT_SNAPSHOT = re.compile(r"^(?P<base>\d{20})-(?P<epoch>\d{10})\.checkpoint(?:\.deleted)?$")
# The checkpoints a log directory holds (LogManager, ReplicaManager, LogCleanerManager).
OFFSET_CHECKPOINTS = frozenset({"recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                                "log-start-offset-checkpoint", "cleaner-offset-checkpoint"})


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
    if name in OFFSET_CHECKPOINTS:
        return OFFSET_CHECKPOINT
    if name.endswith(".log"):
        return LOG
    return None


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
