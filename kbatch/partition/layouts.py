"""The layouts of the files beside a segment, declared once (as :mod:`kbatch.format.layouts` does for batches).

Binary files are construct Structs, turned into ``struct`` codecs by
:func:`kbatch.format.layouts.fixed_layout` for the readers.  Field names are
snake_case of Kafka's own; each doc holds the camelCase name of the Kafka
source it comes from.  The two text files (checkpoints and
``partition.metadata``) are line grammars, declared here too.
"""

from __future__ import annotations

import re

from construct import Int16sb, Int32sb, Int32ub, Int64sb, Struct

from kbatch.format.layouts import fixed_layout

# ---------------------------------------------------------------------------
# Offset index, <base>.index (OffsetIndex.java: ENTRY_SIZE = 8)
#
# Entries are (relativeOffset, physicalPosition): offset - baseOffset of the segment, and the file position
# of the batch (or appended chunk) that starts there.  LogSegment.append adds one after more than
# index.interval.bytes (default 4096) were appended since the last: the offset is the largest of the append,
# the position where the append began.  An active segment's index is preallocated to segment.index.bytes
# (AbstractIndex: raf.setLength(maxIndexSize)) and zero-filled past its entries; rolling trims it
# (LogSegment.onBecomeInactiveSegment -> trimToValidSize).
# ---------------------------------------------------------------------------

OffsetIndexEntry = Struct(
    "relative_offset" / Int32sb * "relativeOffset: offset - the segment's baseOffset",
    "position" / Int32sb * "physical position of the batch in the .log",
)

# ---------------------------------------------------------------------------
# Time index, <base>.timeindex (TimeIndex.java: ENTRY_SIZE = 12)
#
# Entries are (timestamp, relativeOffset): the largest timestamp so far in the segment and the last offset
# of the batch that carries it (LogSegment.append: maxTimestampAndOffsetSoFar).  maybeAppend writes only a
# timestamp larger than the last entry's, so timestamps strictly increase; on roll the segment's max
# timestamp is appended once more if it is new (onBecomeInactiveSegment).  Preallocated like the offset index.
# ---------------------------------------------------------------------------

TimeIndexEntry = Struct(
    "timestamp" / Int64sb * "timestamp: the largest batch maxTimestamp so far",
    "relative_offset" / Int32sb * "relativeOffset of the batch carrying it (its last offset)",
)

# ---------------------------------------------------------------------------
# Transaction index, <base>.txnindex (AbortedTxn.java: TOTAL_SIZE = 34; TransactionIndex.java)
#
# One entry per aborted transaction whose ABORT marker landed in this segment (LogSegment.updateTxnIndex),
# appended in marker order, never preallocated.  lastStableOffset is the first offset of the earliest other
# transaction still open when the marker was written, else lastOffset + 1
# (ProducerStateManager.lastStableOffset).  The version is an int16 (MessageUtil.toVersionPrefixedByteBuffer of
# the generated AbortedTxn, clients/.../message/AbortedTxn.json: validVersions 0), read back as one
# (TransactionIndex.iterable: buffer.getShort()).
# ---------------------------------------------------------------------------

ABORTED_TXN_VERSION = 0   # AbortedTxn.CURRENT_VERSION

AbortedTxnEntry = Struct(
    "version" / Int16sb * "version (0)",
    "producer_id" / Int64sb * "producerId",
    "first_offset" / Int64sb * "firstOffset: the transaction's first offset",
    "last_offset" / Int64sb * "lastOffset: the ABORT marker's offset",
    "last_stable_offset" / Int64sb * "lastStableOffset when the marker was written",
)

# ---------------------------------------------------------------------------
# Producer state snapshot, <offset>.snapshot (ProducerStateManager.java writeSnapshot/readSnapshot;
# storage/src/main/resources/message/ProducerSnapshot.json, version 1)
#
#   version int16 | crc uint32 | producerEntries: int32 count, then that many entries
#
# The CRC is CRC-32C over every byte after it (PRODUCER_ENTRIES_OFFSET = 6 to the end).  The file name's
# offset is the log end offset the state holds for: at a roll, the new segment's base offset
# (UnifiedLog.roll -> takeSnapshot).  An entry's lastSequence/lastOffset/offsetDelta are -1/-1/0 when the
# producer has no batch metadata (ProducerStateEntry: after an epoch bump by a marker).
# ---------------------------------------------------------------------------

PRODUCER_SNAPSHOT_VERSION = 1

ProducerSnapshotHeader = Struct(
    "version" / Int16sb * "version (1)",
    "crc" / Int32ub * "crc: CRC-32C of the bytes after it",
    "producer_entries_count" / Int32sb * "producerEntries: array length",
)

ProducerSnapshotEntry = Struct(
    "producer_id" / Int64sb * "ProducerId",
    "epoch" / Int16sb * "Epoch: the producer's current epoch",
    "last_sequence" / Int32sb * "LastSequence of its last data batch",
    "last_offset" / Int64sb * "LastOffset of its last data batch",
    "offset_delta" / Int32sb * "OffsetDelta: lastOffset - baseOffset of that batch",
    "timestamp" / Int64sb * "Timestamp: max timestamp of its last batch (or marker)",
    "coordinator_epoch" / Int32sb * "CoordinatorEpoch of its last transaction marker",
    "current_txn_first_offset" / Int64sb * "CurrentTxnFirstOffset of its open transaction (-1: none)",
)

OFFSET_INDEX_ENTRY = fixed_layout(OffsetIndexEntry)
TIME_INDEX_ENTRY = fixed_layout(TimeIndexEntry)
ABORTED_TXN_ENTRY = fixed_layout(AbortedTxnEntry)
PRODUCER_SNAPSHOT_HEADER = fixed_layout(ProducerSnapshotHeader)
PRODUCER_SNAPSHOT_ENTRY = fixed_layout(ProducerSnapshotEntry)
# ProducerStateManager.PRODUCER_ENTRIES_OFFSET: the CRC covers from the array length on.
PRODUCER_SNAPSHOT_CRC_START = PRODUCER_SNAPSHOT_HEADER.offsets["producer_entries_count"]

# ---------------------------------------------------------------------------
# Text checkpoints (CheckpointFile.java; LeaderEpochCheckpointFile.java; OffsetCheckpointFile.java)
#
#   <version>\n<entry count>\n<entry>\n...
#
# leader-epoch-checkpoint entries are "epoch startOffset" (version 0): the first offset written under each
# leader epoch.  The log directory's recovery-point-, replication-offset-, log-start-offset- and
# cleaner-offset-checkpoint entries are "topic partition offset" (version 0).  Fields are split on
# whitespace (WHITE_SPACES_PATTERN).
# ---------------------------------------------------------------------------

CHECKPOINT_VERSION = 0
# (name, bits): an int (32) or a long (64) as Integer.parseInt / Long.parseLong read it; None: a string.
CHECKPOINT_FIELDS = {
    "leader-epoch-checkpoint": (("epoch", 32), ("start_offset", 64)),
    "offset-checkpoint": (("topic", None), ("partition", 32), ("offset", 64)),
}
WHITESPACE = re.compile(rb"[ \t\n\x0b\f\r]+")   # Java's \s: ASCII whitespace only

# ---------------------------------------------------------------------------
# partition.metadata (PartitionMetadataFile.java, PartitionMetadata.encode)
#
#   version: 0\ntopic_id: <Uuid>
#
# The topic id is Uuid.toString(): 16 bytes, URL-safe base64 without padding (22 characters; Uuid.fromString
# takes the padded 24 too).  PartitionMetadataReadBuffer splits each line at ":\\s+".
# ---------------------------------------------------------------------------

PARTITION_METADATA_VERSION = 0   # PartitionMetadataFile.CURRENT_VERSION: the least version Kafka reads
PARTITION_METADATA_SEPARATOR = re.compile(rb":[ \t\n\x0b\f\r]+")
TOPIC_ID = re.compile(r"^[A-Za-z0-9_-]{22}(==)?$")
ZERO_TOPIC_ID = "A" * 22   # Uuid.ZERO_UUID

# ---------------------------------------------------------------------------
# quorum-state, in __cluster_metadata-0 (FileQuorumStateStore.writeElectionStateToFile / readStateFromFile;
# raft/src/main/resources/common/message/QuorumStateData.json, versions 0-1)
#
#   one line of JSON: QuorumStateDataJsonConverter.write plus "data_version"
#
# Each field is (JSON name, type, the versions that have it); a version's fields are mandatory (the
# generated converter throws "unable to locate field ..., which is mandatory in version N").
# ---------------------------------------------------------------------------

QUORUM_STATE_VERSIONS = (0, 1)   # FileQuorumStateStore: LOWEST/HIGHEST_SUPPORTED_VERSION
QUORUM_STATE_FIELDS = (
    ("clusterId", "string", (0,)),
    ("leaderId", "int32", (0, 1)),
    ("leaderEpoch", "int32", (0, 1)),
    ("votedId", "int32", (0, 1)),
    ("votedDirectoryId", "uuid", (1,)),
    ("appliedOffset", "int64", (0,)),
    ("currentVoters", "[]Voter", (0,)),   # nullable; each {"voterId": int32}
)

# ---------------------------------------------------------------------------
# meta.properties, one per log directory (MetaProperties.Builder(Properties); PropertiesUtils.readPropertiesFile)
#
# java.util.Properties text: version (0 when absent), then in version 1 node.id (Integer.parseInt) and
# cluster.id both required; in version 0 broker.id if present; directory.id, when present, a Uuid.
# ---------------------------------------------------------------------------

META_PROPERTIES_VERSIONS = (0, 1)   # MetaPropertiesVersion.fromNumber
