"""The columns of kbatch's output, declared once: every key of a batch, a record and a finding as
``--format json``/``jsonl`` writes it, and every column of the Spark tables ``kbatch scan`` writes.

Each :class:`Column` says its name, its type, whether it may be null, how it is read (a Python expression
over ``batch``, ``record`` or ``finding``, and the helpers :data:`HELPERS` names) and what it means.
Everything else is made from these tables:

* :func:`kbatch.output.jsonout.batch_dict`, ``record_dict``, ``finding_dict`` and ``finding_offsets``,
  written out from the expressions to ``kbatch/output/_dicts.py`` by ``python -m kbatch.output.docs``;
* the Spark schemas of :mod:`kbatch.spark.source` (:func:`spark_ddl`) and the column names its rows and
  :func:`kbatch.spark.report.cross_check_rows` are made in;
* ``kbatch/schema/kbatch-json-v1.schema.json`` and README's lists of keys ("JSON output"), written out by
  ``python -m kbatch.output.docs`` (tests/test_columns.py fails when either is stale).

Checked against it: the compiled JSON Lines writer (:mod:`kbatch.kernels.jsonl`), which writes a batch's
and a record's keys in compiled code and so lists them itself, beside the code that writes each value
(``BATCH_JSON_KEYS``, ``RECORD_JSON_KEYS``).  jsonout uses it only while those are the keys declared here,
and tests/test_columns.py fails where they are not.  (The kernels sit below this package and import nothing
from it.)

This is a plain declaration, importing nothing.
"""

from __future__ import annotations


class Column:
    """One key (or table column): ``name``, ``type`` (one of TYPES), ``nullable`` (may be null in what kbatch
    writes), ``read`` (a Python expression giving its value: see HELPERS), ``doc``; ``optional``: the key is
    left out where the value is null (so it is never null); ``spark``: a column of the Spark table that holds
    these rows; ``schema``: its JSON Schema, where TYPES' is not enough.

    (A plain class, not a dataclass: a run that writes JSON makes a hundred of these at start-up.)"""

    __slots__ = ("name", "type", "nullable", "read", "doc", "optional", "spark", "schema")

    def __init__(self, name: str, type: str, nullable: bool, read: str, doc: str, *, optional: bool = False,
                 spark: bool = True, schema: dict | None = None):
        self.name, self.type, self.nullable, self.read, self.doc = name, type, nullable, read, doc
        self.optional, self.spark, self.schema = optional, spark, schema

    def __repr__(self) -> str:
        return f"Column({self.name!r}, {self.type!r})"


# type -> (JSON Schema type, Spark SQL type)
TYPES = {
    "int32": ("integer", "INT"),
    "int64": ("integer", "LONG"),
    "bool": ("boolean", "BOOLEAN"),
    "float": ("number", "DOUBLE"),
    "string": ("string", "STRING"),
    "iso": ("string", "STRING"),                     # epoch milliseconds as ISO-8601 UTC
    "bytes": (None, "BINARY"),                       # JSON: {"utf8"|"hex"|"base64": ...} (#/$defs/bytes)
    "headers": ("array", "ARRAY<STRUCT<key: BINARY, value: BINARY>>"),
    "object": ("object", None),
    "array": ("array", None),
}

# The names the ``read`` expressions use besides batch, record, finding, decode and with_records
# (kbatch/output/_dicts.py imports them: kbatch.output.docs.HELPER_IMPORTS).
HELPERS = ("iso_timestamp", "bytes_json", "schema_ids", "control_dict", "finding_dict", "record_dict")

_ISO_NOTE = "the timestamp to its left as ISO-8601 UTC with milliseconds (output only; null for -1 or none)"
_BYTES_OR_NULL = {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/bytes"}]}


def _iso(name: str, of: str) -> Column:
    return Column(name, "iso", True, f"iso_timestamp({of}) or None", _ISO_NOTE)


# -- a batch: one log entry (a v2 record batch or a v0/v1 message), kbatch.output.jsonout.batch_dict -------

def _lost_offsets(known: str) -> tuple[Column, ...]:
    """A damaged batch's offsets as far as the entry before tells (kbatch.reading.lost), where ``known``:
    present only then."""
    return (
        Column("lost_first", "int64", True, f"batch.lost_offsets.first if {known} else None",
               "a damaged batch's first offset, as inferred (lost_offsets_from says how)", optional=True,
               spark=False),
        Column("lost_last", "int64", True, f"batch.lost_offsets.last if {known} else None",
               "a damaged batch's last offset, as inferred", optional=True, spark=False),
        Column("lost_offsets_from", "string", True, f"batch.lost_offsets.how if {known} else None",
               "how a damaged batch's offsets are known: its header (unverified), or the entry before it (\"after "
               "the entry before, which ends at 7, up to the wrapper's own offset, its last inner record's\")",
               optional=True, spark=False),
    )


BATCH = (
    Column("type", "string", False, '"batch"', "always \"batch\" (a jsonl line's kind)", spark=False,
           schema={"const": "batch"}),
    Column("pos", "int64", False, "batch.pos", "file position of the entry's first byte"),
    Column("size", "int64", False, "batch.size", "bytes in the file, the 12-byte offset and size prefix included"),
    Column("magic", "int32", False, "batch.magic", "0, 1 or 2 (3: the v3 proposal)",
           schema={"description": "3: the v3 proposal Kafka never adopted (kbatch writes and reads it to measure it)",
                   "enum": [0, 1, 2, 3]}),
    Column("base_offset", "int64", False, "batch.base_offset", "the first record's offset"),
    Column("last_offset", "int64", False, "batch.last_offset", "the last record's offset"),
    Column("stored_offset", "int64", False, "batch.offset_field",
           "the offset field as stored (a v1 wrapper's is its last record's)"),
    Column("count", "int32", True, "batch.count", "v2: recordsCount; v0/v1: the messages held"),
    Column("batch_length", "int32", False, "batch.length_field",
           "batchLength (v0/v1: the message size) as stored, which may lie"),
    Column("partition_leader_epoch", "int32", True, "batch.partition_leader_epoch", "v2: partitionLeaderEpoch"),
    Column("crc", "int64", False, "batch.crc", "the CRC as stored"),
    Column("crc_computed", "int64", False, "batch.computed_crc",
           "the CRC of the bytes (v2: CRC-32C of attributes..end; v0/v1: CRC-32 of magic..end)"),
    Column("crc_valid", "bool", False, "batch.crc_valid", "whether the two agree"),
    Column("attributes", "int32", False, "batch.attributes", "the attributes as stored"),
    Column("codec", "string", False, "batch.codec", "none, gzip, snappy, lz4, zstd or unknown(N)",
           schema={"anyOf": [{"enum": ["none", "gzip", "snappy", "lz4", "zstd"]},
                             {"type": "string", "pattern": "^unknown\\(\\d+\\)$"}]}),
    Column("timestamp_type", "string", False, "batch.timestamp_type", "CreateTime, LogAppendTime or NoTimestampType",
           schema={"enum": ["CreateTime", "LogAppendTime", "NoTimestampType"]}),
    Column("is_transactional", "bool", False, "batch.is_transactional", "the transactional flag"),
    Column("is_control", "bool", False, "batch.is_control", "the control flag"),
    Column("last_offset_delta", "int32", True, "batch.last_offset_delta", "v2: lastOffsetDelta"),
    Column("base_timestamp", "int64", True, "batch.base_timestamp",
           "v2: baseTimestamp; v1: the message timestamp (epoch milliseconds)"),
    _iso("base_timestamp_iso", "batch.base_timestamp"),
    Column("max_timestamp", "int64", True, "batch.max_timestamp", "v2: maxTimestamp; v1: the message timestamp"),
    _iso("max_timestamp_iso", "batch.max_timestamp"),
    Column("delete_horizon_ms", "int64", True, "batch.delete_horizon_ms",
           "v2 with the delete-horizon flag: baseTimestamp, when compaction may drop tombstones"),
    Column("producer_id", "int64", True, "batch.producer_id", "v2: producerId (-1: none)"),
    Column("producer_epoch", "int32", True, "batch.producer_epoch", "v2: producerEpoch"),
    Column("base_sequence", "int32", True, "batch.base_sequence", "v2: baseSequence (-1: none)"),
    Column("last_sequence", "int32", True, "batch.last_sequence if batch.magic >= 2 else None",
           "v2: baseSequence + lastOffsetDelta, as Kafka counts it on"),
    Column("payload_pos", "int64", False, "batch.payload_pos",
           "where the records (a wrapper's value) start in the file"),
    Column("payload_size", "int64", False, "batch.payload_size", "their size in the file (compressed, when compressed)"),
    Column("decompressed_size", "int64", True, "batch.decompressed_size",
           "their size decompressed, when they were decompressed"),
    *_lost_offsets("batch.lost_offsets"),
    Column("findings", "array", False, "[finding_dict(finding) for finding in batch.findings]",
           "what is wrong with the entry (keys below)", spark=False,
           schema={"type": "array", "items": {"$ref": "#/$defs/finding"}}),
    Column("records", "array", True,
           "[record_dict(record, batch, decode) for record in (batch.records or [])] if with_records else None",
           "its records (keys below), with --records only", optional=True, spark=False,
           schema={"type": "array", "items": {"$ref": "#/$defs/record"}}),
    Column("payload", "bytes", True, 'None if batch.body is None else bytes_json(batch.body, "base64")',
           "the bytes after the fixed header as stored (what encode-from-json copies), in --format json only",
           optional=True, spark=False, schema={"$ref": "#/$defs/bytes"}),
)

# -- a record, kbatch.output.jsonout.record_dict -------------------------------------------------------

RECORD = (
    Column("offset", "int64", False, "record.offset", "its offset"),
    Column("timestamp", "int64", True, "record.timestamp", "effective: LogAppendTime applied; null for magic 0"),
    _iso("timestamp_iso", "record.timestamp"),
    Column("key", "bytes", True, "bytes_json(record.key, decode)", "the key", schema=_BYTES_OR_NULL),
    Column("value", "bytes", True, "bytes_json(record.value, decode)", "the value", schema=_BYTES_OR_NULL),
    Column("headers", "headers", False,
           '[{"key": bytes_json(key, decode), "value": bytes_json(value, decode)} for key, value in record.headers]',
           'its headers, [{"key", "value"}]',
           schema={"type": "array", "items": {
               "type": "object", "properties": {"key": {"$ref": "#/$defs/bytes"}, "value": _BYTES_OR_NULL},
               "required": ["key"], "additionalProperties": False}}),
    Column("pos", "int64", True, "None if batch.compressed else record.pos",
           "file position of the record (null when compressed)"),
    Column("inner_pos", "int64", True, "record.pos if batch.compressed else None",
           "position in the decompressed bytes (compressed only)"),
    Column("size", "int64", False, "record.size", "its bytes"),
    Column("attributes", "int32", False, "record.attributes", "its attributes"),
    Column("sequence", "int32", True, "record.sequence if batch.magic >= 2 else None",
           "v2: baseSequence + offsetDelta (-1: none)"),
    Column("crc", "int64", True, "record.crc", "v0/v1: the message's own CRC"),
    Column("crc_valid", "bool", True, "record.crc_valid", "v0/v1: whether it verifies"),
    Column("control", "object", True, "None if record.control is None else control_dict(record.control)",
           "a control record: type, type_id, key_version, value_version, coordinator_epoch, data (the fields "
           "of a KRaft control record)",
           schema={"oneOf": [{"type": "null"}, {
               "type": "object", "properties": {
                   "type": {"type": "string"}, "type_id": {"type": ["integer", "null"]},
                   "key_version": {"type": ["integer", "null"]}, "value_version": {"type": ["integer", "null"]},
                   "coordinator_epoch": {"type": ["integer", "null"]}, "data": {"type": ["object", "null"]}},
               "required": ["type"], "additionalProperties": False}]}),
    Column("below_log_start", "bool", True,
           "True if batch.log_start_offset is not None and record.offset < batch.log_start_offset else None",
           "true on a record below its partition's log start offset (log-start-offset-checkpoint, dump without "
           "--isolation only): deleted, never given to a consumer, still in the segment", optional=True,
           schema={"const": True}),
    Column("decoded", "object", True, "None if record.decoded is None else record.decoded.as_dict()",
           "a record of an internal topic (only there): its key and value read with Kafka's schemas", optional=True,
           schema={"type": "object",
                   "description": "an internal topic's key and value read with Kafka's schemas (dump --records)",
                   "properties": {
                       "decoder": {"type": "string"}, "tombstone": {"type": "boolean"},
                       "key": {"type": ["object", "null"]},
                       "value": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {
                           "name": {"type": "string"}, "version": {"type": "integer"},
                           "layout": {"type": "string", "description":
                                      "a message Kafka changed in place (4.0's share-group records): the Kafka "
                                      "release whose layout read it, 4.0 or 4.1+ (kbatch.messages.schemas.LAYOUTS)"},
                           "data": {"type": "object"}}, "required": ["name", "version", "data"]}]}},
                   "required": ["decoder", "key", "value", "tombstone"]}),
    Column("schema_registry", "object", True,
           "schema_ids(record.key, record.value) if record.decoded is None and record.control is None else None",
           "a record whose key or value is in the schema-registry wire format (only there): their schema ids",
           optional=True,
           schema={"type": "object",
                   "description": "the schema ids of a key and value in the schema-registry wire format",
                   "properties": {"key": {"type": ["integer", "null"]}, "value": {"type": ["integer", "null"]}},
                   "required": ["key", "value"], "additionalProperties": False}),
)

# -- a line of grep --format jsonl, kbatch.output.jsonout.match_dict: the record as above, between these -------

GREP_MATCH_HEAD = (
    Column("type", "string", False, '"record"', "always \"record\" (a jsonl line's kind)", schema={"const": "record"}),
    Column("file", "string", False, "path", "the file, as named on the command line (or found under it)"),
    Column("batch_pos", "int64", False, "batch.pos", "its batch's pos"),
    Column("batch_base_offset", "int64", False, "batch.base_offset", "its batch's base_offset"),
    Column("batch_last_offset", "int64", False, "batch.last_offset", "its batch's last_offset"),
    Column("producer_id", "int64", True, "batch.producer_id", "its batch's producer_id (v0/v1: null)"),
    Column("match", "bool", False, "found.selected", "true for a match, false for a record shown around one (-A, -B, "
                                                     "-C)"),
)
GREP_MATCH_TAIL = (
    # Written where the view was asked for, null included (kbatch.output.jsonout.match_dict writes it itself).
    Column("visible_to_read_committed", "bool", True, "found.seen.visible",
           "with --isolation read_committed only: true; null where its transaction's outcome is unknown"),
    Column("untrusted", "string", True, "found.refused",
           "a record a consumer is refused as corrupt (only there, and never with --isolation): why: batch CRC fails, "
           "message CRC fails, length field wrong, bytes remain after the last record counted "
           "(kbatch.ops.visibility.refused)",
           optional=True),
)
GREP_MATCH = GREP_MATCH_HEAD + RECORD + GREP_MATCH_TAIL

# -- a line of offsets --format jsonl: one offset commit of __consumer_offsets (kbatch.ops.offsets.Commit) -----

COMMIT = (
    Column("type", "string", False, '"commit"', "always \"commit\"", schema={"const": "commit"}),
    Column("file", "string", False, "commit.path", "the __consumer_offsets segment it was read from"),
    Column("group", "string", False, "commit.group", "the consumer group"),
    Column("topic", "string", False, "commit.topic", "the topic the offset is committed for"),
    Column("partition", "int32", False, "commit.partition", "the topic's partition"),
    Column("offset", "int64", True, "commit.offset", "the offset committed: the next record the group reads; null "
                                                     "for a tombstone (the committed offset deleted)"),
    Column("leader_epoch", "int32", True, "commit.leader_epoch", "the leader epoch of the last record consumed "
                                                                 "(OffsetCommitValue v3+; null when not known)"),
    Column("metadata", "string", True, "commit.metadata", "the metadata string the client committed with"),
    Column("commit_timestamp", "int64", True, "commit.commit_timestamp", "when it was committed (epoch ms)"),
    _iso("commit_time", "commit.commit_timestamp"),
    Column("expire_timestamp", "int64", True, "commit.expire_timestamp",
           "when it expires (epoch ms; OffsetCommitValue v1 only, else null)"),
    Column("log_offset", "int64", False, "commit.log_offset", "the commit record's offset in __consumer_offsets"),
    Column("record_timestamp", "int64", True, "commit.record_timestamp",
           "the commit record's own timestamp: when the coordinator wrote it (a tombstone's only time)"),
    Column("generation", "int32", True, "commit.generation",
           "the group's generation (classic) or epoch (KIP-848) when it was written, where the log says"),
    Column("member", "string", True, "commit.member",
           "the member the partition was assigned to then (classic groups of the consumer protocol), where known"),
    Column("transaction", "string", True, "commit.transaction",
           "null, or how the transaction it was written in ended: COMMIT (applied), ABORT or OPEN (not applied)"),
    Column("previous_offset", "int64", True, "commit.previous_offset",
           "the group's committed offset on the partition before it (null: none)"),
    Column("move", "string", True, "commit.move",
           "rewind (lower than the one before: records read again), reset-forward (higher, while the group "
           "had no members: records skipped), or null", schema={"enum": ["rewind", "reset-forward", None]}),
)

# -- a line of producers --format jsonl: one producer id and epoch in a partition (kbatch.ops.producers) ------

PRODUCER = (
    Column("type", "string", False, '"producer"', "always \"producer\"", schema={"const": "producer"}),
    Column("partition", "string", False, "epoch.partition", "the partition: its directory (TOPIC-N), or the file"),
    Column("producer_id", "int64", False, "epoch.producer_id", "the producer id"),
    Column("producer_epoch", "int32", False, "epoch.producer_epoch", "the producer epoch"),
    Column("first_sequence", "int32", False, "epoch.first_sequence", "its first batch's baseSequence (-1: none)"),
    Column("last_sequence", "int32", False, "epoch.last_sequence", "its last batch's last sequence (-1: none)"),
    Column("first_offset", "int64", False, "epoch.first_offset", "its first batch's base offset"),
    Column("last_offset", "int64", False, "epoch.last_offset", "its last batch's last offset"),
    Column("batches", "int64", False, "epoch.batches", "its data batches"),
    Column("records", "int64", False, "epoch.records", "their records"),
    Column("transactional", "bool", False, "epoch.transactional", "whether its first batch is transactional"),
    Column("transactional_id", "string", True, "epoch.transactional_id",
           "its transactional id, where the __transaction_state partitions given name its producer id"),
    Column("breaks", "int64", False, "epoch.breaks", "the rules its batches break (each a finding)"),
)

# -- lines of retention --format jsonl: a segment's verdict (kbatch.ops.retention.SegmentFacts), a compacted
# partition's cleaning (kbatch.ops.retention.Cleaning) ---------------------------------------------------------

SEGMENT_VERDICT = (
    Column("type", "string", False, '"segment"', "always \"segment\"", schema={"const": "segment"}),
    Column("path", "string", False, "segment.path", "the segment file"),
    Column("base_offset", "int64", False, "segment.base_offset", "its base offset (from its name)"),
    Column("size", "int64", False, "segment.size", "its size in bytes"),
    Column("largest_timestamp", "int64", False, "segment.largest_timestamp",
           "LogSegment.largestTimestamp: its largest record timestamp, else the file's modification time"),
    Column("verdict", "string", False, "segment.verdict", "deletable or kept",
           schema={"enum": ["deletable", "kept"]}),
    Column("reasons", "array", False, "segment.reasons", "why (Kafka's rule that deletes or keeps it)"),
)

CLEANING = (
    Column("type", "string", False, '"cleaning"', "always \"cleaning\"", schema={"const": "cleaning"}),
    Column("partition", "string", False, "partition.path", "the compacted partition's directory"),
    Column("first_dirty_offset", "int64", False, "cleaning.first_dirty_offset",
           "where the cleaner starts (cleaner-offset-checkpoint, or the log start offset)"),
    Column("first_uncleanable_offset", "int64", False, "cleaning.first_uncleanable_offset",
           "where it must stop (LogCleanerManager.cleanableOffsets)"),
    Column("blocked_by", "array", False, "cleaning.blocked_by", "what sets that offset"),
    Column("cleanable_bytes", "int64", False, "cleaning.cleanable_bytes", "the bytes it may clean"),
    Column("dirty_ratio", "float", False, "cleaning.ratio", "cleanable bytes over clean plus cleanable bytes"),
    Column("due", "bool", False, "cleaning.due", "max.compaction.lag.ms has passed for its oldest dirty segment"),
    Column("will_clean", "bool", False, "cleaning.will_clean",
           "whether the cleaner would pick it now (dirty ratio above min.cleanable.dirty.ratio, or due)"),
)

# -- lines of replicas --format jsonl: a broker's copy of a partition (kbatch.partition.replicas.Copy), a record
# not every copy holds (kbatch.partition.replicas.Divergence, with its record's keys: RECORD) --------------------

REPLICA = (
    Column("type", "string", False, '"replica"', "always \"replica\"", schema={"const": "replica"}),
    Column("partition", "string", False, "report.topic + '-' + str(report.partition)", "the partition (TOPIC-N)"),
    Column("path", "string", False, "copy.path", "the copy's partition directory"),
    Column("log_start_offset", "int64", True, "copy.log_start_offset", "its first batch's base offset"),
    Column("log_end_offset", "int64", False, "copy.log_end_offset", "one past its last batch's last offset"),
    Column("high_watermark", "int64", True, "copy.high_watermark",
           "what its log directory's replication-offset-checkpoint records"),
    Column("latest_epoch", "int32", True, "copy.latest_epoch",
           "the latest leader epoch of the cache Kafka loads for it (checkpoint file, batches recovered)"),
    Column("diverges_at", "int64", True, "copy.diverges_at",
           "the first offset whose batch differs from the newest-epoch copy's (null: none)"),
    Column("truncate_to", "int64", True, "copy.truncate_to",
           "the offset Kafka truncates it to when it follows the newest-epoch copy (AbstractFetcherThread)"),
)

REPLICA_RECORD_HEAD = (
    Column("type", "string", False, '"record"', "always \"record\"", schema={"const": "record"}),
    Column("partition", "string", False, "report.topic + '-' + str(report.partition)", "the partition (TOPIC-N)"),
    Column("replicas", "array", False, "[report.copies[index].path for index in divergence.holders]",
           "the copies holding it"),
    Column("below_high_watermark", "bool", False, "record.offset < (highest_high_watermark or 0)",
           "below a high watermark a copy holding it recorded: acknowledged to an acks=all producer"),
)

# -- a finding, kbatch.output.jsonout.finding_dict ------------------------------------------------------

_SEVERITIES = {"enum": ["error", "warning", "info"]}

FINDING = (
    Column("code", "string", False, "finding.code", "a stable code (README: Findings)"),
    Column("severity", "string", False, "finding.severity.value", "error, warning or info", schema=_SEVERITIES),
    Column("entry_pos", "int64", False, "finding.entry_pos", "file position of the log entry it belongs to"),
    Column("pos", "int64", False, "finding.pos", "file position of the bytes concerned"),
    Column("size", "int64", False, "finding.size", "how many bytes"),
    Column("inner_pos", "int64", True, "finding.inner_pos", "inside a compressed batch: the position in the "
           "decompressed bytes"),
    Column("field", "string", False, "finding.field", "the field (batch_length, records[3].key_length, ...)"),
    Column("expected", "string", False, "finding.expected", "what was expected"),
    Column("actual", "string", False, "finding.actual", "what was found"),
)

# The batch a finding lies in (kbatch.output.jsonout.finding_offsets): null for a range between batches.
_INSIDE = "batch is not None and batch.pos == finding.entry_pos"
FINDING_OFFSETS = (
    Column("base_offset", "int64", True, f"batch.base_offset if {_INSIDE} else None",
           "the base offset of the batch it lies in"),
    Column("last_offset", "int64", True, f"batch.last_offset if {_INSIDE} else None",
           "the last offset of the batch it lies in"),
    *_lost_offsets(f"{_INSIDE} and batch.lost_offsets"),
)

# -- the Spark tables (kbatch.spark.source): each row says where it comes from --------------------------

LOCATION = (
    Column("file", "string", False, "path", "the segment's path"),
    Column("topic", "string", True, "topic", "from its <topic>-<partition> directory"),
    Column("partition", "int32", True, "partition", "from its <topic>-<partition> directory"),
)

SPARK_BATCHES = LOCATION + tuple(column for column in BATCH if column.spark) + (
    Column("finding_count", "int32", False, "len(batch.findings)", "how many findings the batch has"),
    Column("damaged", "bool", False, "batch.is_damaged", "whether one of them is damage"),
)

SPARK_FINDINGS = LOCATION + tuple(column for column in FINDING + FINDING_OFFSETS if column.spark)

# One row per record, with what it needs of its batch (kbatch.spark.source.record_rows and ColumnarRecords).
SPARK_RECORDS = LOCATION + (
    Column("batch_pos", "int64", False, "batch.pos", "its batch's pos"),
    Column("batch_base_offset", "int64", False, "batch.base_offset", "its batch's base_offset"),
    Column("magic", "int32", False, "batch.magic", "its batch's magic"),
    Column("codec", "string", False, "batch.codec", "its batch's codec"),
    Column("offset", "int64", False, "record.offset", "its offset"),
    Column("timestamp", "int64", True, "record.timestamp", "effective: LogAppendTime applied"),
    Column("timestamp_type", "string", False, "batch.timestamp_type", "its batch's timestamp_type"),
    Column("key", "bytes", True, "record.key", "the key's bytes"),
    Column("value", "bytes", True, "record.value", "the value's bytes"),
    Column("headers", "headers", False, "record.headers", "its headers, as structs of key and value bytes"),
    Column("sequence", "int32", True, "record.sequence if batch.magic >= 2 else None", "v2: its sequence"),
    Column("producer_id", "int64", True, "batch.producer_id", "its batch's producer_id"),
    Column("is_transactional", "bool", False, "batch.is_transactional", "its batch's transactional flag"),
    Column("is_control", "bool", False, "batch.is_control", "its batch's control flag"),
    Column("control_type", "string", True, "control.type", "a control record's type (ABORT, COMMIT, ...)"),
    Column("coordinator_epoch", "int32", True, "control.coordinator_epoch", "a transaction marker's coordinator epoch"),
    Column("control_data", "string", True, "control.data", "the fields of a KRaft control record, as JSON text"),
    Column("decoder", "string", True, "internal", "an internal topic's decoder (offsets, transactions, ...)"),
    Column("decoded_key", "string", True, "decoded.key", "its key read with Kafka's schemas, as JSON text"),
    Column("decoded_value", "string", True, "decoded.value", "its value read with Kafka's schemas, as JSON text"),
    Column("key_schema_id", "int32", True, 'ids["key"]', "the schema-registry id of a framed key"),
    Column("value_schema_id", "int32", True, 'ids["value"]', "the schema-registry id of a framed value"),
    Column("visible_to_read_committed", "bool", True, "visible",
           "whether a read_committed consumer is given the record (kbatch.ops.visibility); null where its "
           "transaction's outcome is unknown"),
)

SPARK_TABLES = {"batches": SPARK_BATCHES, "records": SPARK_RECORDS, "findings": SPARK_FINDINGS}


def names(columns) -> tuple[str, ...]:
    return tuple(column.name for column in columns)


def always_written(columns) -> tuple[str, ...]:
    """The keys every object of these columns has, in order (the optional ones left out)."""
    return tuple(column.name for column in columns if not column.optional)


def spark_ddl(columns) -> str:
    """A Spark table's schema as DDL text (every column nullable: Spark holds each Arrow batch a task
    makes to exactly this schema, as it has always been)."""
    return ", ".join(f"{column.name} {TYPES[column.type][1]}" for column in columns)
