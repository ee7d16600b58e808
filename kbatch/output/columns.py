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
    these rows; ``schema``: its JSON Schema, where TYPES' is not enough; ``when``: a Python expression saying
    whether the key is written at all (null included); ``spread``: ``read`` gives a dict whose keys are written
    in its place (keys of their own: a sidecar entry's fields), the column's name only a name for them.

    (A plain class, not a dataclass: a run that writes JSON makes a hundred of these at start-up.)"""

    __slots__ = ("name", "type", "nullable", "read", "doc", "optional", "spark", "schema", "when", "spread")

    def __init__(self, name: str, type: str, nullable: bool, read: str, doc: str, *, optional: bool = False,
                 spark: bool = True, schema: dict | None = None, when: str | None = None, spread: bool = False):
        self.name, self.type, self.nullable, self.read, self.doc = name, type, nullable, read, doc
        self.optional, self.spark, self.schema, self.when, self.spread = optional, spark, schema, when, spread

    @property
    def always(self) -> bool:
        """Whether every object of its kind has this key."""
        return not (self.optional or self.when or self.spread)

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
    "any": (None, None),                             # a value of any JSON type (its schema says)
}

# The names the ``read`` expressions use besides batch, record, finding, decode and with_records
# (kbatch/output/_dicts.py imports them: kbatch.output.docs.HELPER_IMPORTS).
HELPERS = ("iso_timestamp", "bytes_json", "schema_ids", "control_dict", "finding_dict", "record_dict", "json_name",
           "lost_offsets_of", "damage_dict", "stats_file_dict", "stats_share_dict", "stats_overhead_dict",
           "stats_bucket_dict", "stats_by_magic_dict", "stats_by_codec_dict", "stats_by_producer_dict", "what_if_dict",
           "what_if_stored_dict", "what_if_left_out_dict", "what_if_layout_dict", "what_if_headers_first_dict",
           "scan_between_dict", "scan_cross_checks_dict", "scan_partition_dict")

_ISO_NOTE = "the timestamp to its left as ISO-8601 UTC with milliseconds (output only; null for -1 or none)"
_BYTES_OR_NULL = {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/bytes"}]}


def _iso(name: str, of: str) -> Column:
    return Column(name, "iso", True, f"iso_timestamp({of}) or None", _ISO_NOTE)


def _kind(kind: str, what: str) -> Column:
    """The ``type`` key that opens every object of a kind: a JSON Lines reader's switch (``select(.type == ...)``)."""
    return Column("type", "string", False, f'"{kind}"', f"always \"{kind}\" ({what})", spark=False,
                  schema={"const": kind})


def _file(read: str, doc: str = "the file, as named on the command line (or found under it)") -> Column:
    """The file a line is about, UTF-8 whatever bytes its name has (kbatch.output.visible.json_name)."""
    return Column("file", "string", False, f"json_name({read})", doc)


# -- a batch: one log entry (a v2 record batch or a v0/v1 message), kbatch.output.jsonout.batch_dict -------

def _lost_offsets(lost: str) -> tuple[Column, ...]:
    """The offsets a damaged batch or range held as far as the entries around it tell (kbatch.reading.lost),
    where ``lost`` (an expression: a LostOffsets or None) knows them: present only then."""
    return (
        Column("lost_first", "int64", True, f"{lost}.first if {lost} else None",
               "a damaged batch's or range's first offset, as inferred (lost_offsets_from says how); a range "
               "whose lost_last is below it held none", optional=True, spark=False),
        Column("lost_last", "int64", True, f"{lost}.last if {lost} else None",
               "a damaged batch's or range's last offset, as inferred", optional=True, spark=False),
        Column("lost_offsets_from", "string", True, f"{lost}.how if {lost} else None",
               "how a damaged batch's offsets are known: its header (unverified), or the entry before it (\"after "
               "the entry before, which ends at 7, up to the wrapper's own offset, its last inner record's\"); "
               "a range's: the entries on either side",
               optional=True, spark=False),
    )


BATCH = (
    _kind("batch", "a jsonl line's kind"),
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
    Column("findings", "array", False, "[finding_dict(finding) for finding in batch.findings]",
           "what is wrong with the entry (keys below)", spark=False,
           schema={"type": "array", "items": {"$ref": "#/$defs/finding"}}),
    *_lost_offsets("batch.lost_offsets"),
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
    _kind("record", "a jsonl line's kind"),
    _file("path"),
    Column("batch_pos", "int64", False, "batch.pos", "its batch's pos"),
    Column("batch_base_offset", "int64", False, "batch.base_offset", "its batch's base_offset"),
    Column("batch_last_offset", "int64", False, "batch.last_offset", "its batch's last_offset"),
    Column("producer_id", "int64", True, "batch.producer_id", "its batch's producer_id (v0/v1: null)"),
    Column("match", "bool", False, "found.selected", "true for a match, false for a record shown around one (-A, -B, "
                                                     "-C)"),
)
GREP_MATCH_TAIL = (
    Column("visible_to_read_committed", "bool", True, "found.seen.visible",
           "with --isolation read_committed only: true; null where its transaction's outcome is unknown",
           when="found.seen is not None"),
    Column("untrusted", "string", True, "found.refused",
           "a record a consumer is refused as corrupt (only there, and never with --isolation): why: batch CRC fails, "
           "message CRC fails, length field wrong, bytes remain after the last record counted "
           "(kbatch.ops.visibility.refused)",
           optional=True),
)
GREP_MATCH = GREP_MATCH_HEAD + RECORD + GREP_MATCH_TAIL

# -- a line of offsets --format jsonl: one offset commit of __consumer_offsets (kbatch.ops.offsets.Commit) -----

COMMIT = (
    _kind("commit", "a jsonl line's kind"),
    _file("commit.path", "the __consumer_offsets segment it was read from"),
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
           "null, or how the transaction it was written in ended: COMMIT (applied unless superseded), ABORT or "
           "OPEN (not applied)"),
    Column("superseded_by", "int64", True, "commit.superseded_by",
           "a transactional commit's: the log_offset of the record that took its place before its COMMIT marker "
           "(a tombstone, or a plain commit of a later record, so the marker does not apply it); null: none"),
    Column("previous_offset", "int64", True, "commit.previous_offset",
           "the group's committed offset on the partition before it (null: none)"),
    Column("move", "string", True, "commit.move",
           "rewind (lower than the one before: records read again), reset-forward (higher, while the group "
           "had no members: records skipped), or null", schema={"enum": ["rewind", "reset-forward", None]}),
)

# -- a line of producers --format jsonl: one producer id and epoch in a partition (kbatch.ops.producers) ------

PRODUCER = (
    _kind("producer", "a jsonl line's kind"),
    Column("partition", "string", False, "json_name(epoch.partition)",
           "the partition: its directory (TOPIC-N), or the file"),
    Column("producer_id", "int64", False, "epoch.producer_id", "the producer id"),
    Column("producer_epoch", "int32", False, "epoch.producer_epoch", "the producer epoch"),
    Column("first_sequence", "int32", False, "epoch.first_sequence", "its first batch's baseSequence (-1: none)"),
    Column("last_sequence", "int32", False, "epoch.last_sequence", "its last batch's last sequence (-1: none)"),
    Column("first_offset", "int64", False, "epoch.first_offset",
           "its first batch's base offset (a transaction marker's, where the marker began the epoch)"),
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
    Column("verdict", "string", False, "segment.verdict",
           "deletable, kept, or unknown (its topic's config in __cluster_metadata cannot be read)",
           schema={"enum": ["deletable", "kept", "unknown"]}),
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

# -- what Kafka's log recovery does with an entry its validation fails, in a copy of replicas
# (kbatch.partition.replicas.Damage): the objects a replica line's recovery and kept_damage hold ---------------

DAMAGE = (
    Column("segment", "string", False, "json_name(damage.segment)", "the segment holding it"),
    Column("pos", "int64", False, "damage.pos", "file position where it begins"),
    Column("base_offset", "int64", True, "damage.base_offset", "its header's base offset (null: bytes that are no "
           "batch)"),
    Column("why", "string", False, "damage.why", "why Kafka's validation fails it (ensureValid: the CRC; the framing)"),
    Column("truncate_to", "int64", True, "damage.truncate_to",
           "where recovery cuts the log (LogSegment.readNextOffset of the cut segment); null: recovery does not reach it"),
    Column("dropped_first", "int64", True, "damage.dropped[0] if damage.dropped else None",
           "the first offset of the batches dropped with it (null: none known)"),
    Column("dropped_last", "int64", True, "damage.dropped[1] if damage.dropped else None",
           "the last offset of those batches"),
    Column("later_segments_dropped", "bool", False, "damage.later_segments_dropped",
           "recovery deleted the later segments too (false: only its segment was cut, recovered on opening because "
           "its offset index is missing; or recovery does not reach it)"),
)


def _nullable_object(columns_: tuple[Column, ...]) -> dict:
    """The JSON Schema of a key holding null or an object of ``columns_``."""
    return {"oneOf": [{"type": "null"}, {
        "type": "object", "additionalProperties": False, "required": [column.name for column in columns_],
        "properties": {column.name: {"type": [TYPES[column.type][0], "null"] if column.nullable else
                                     TYPES[column.type][0], "description": column.doc} for column in columns_}}]}


# -- lines of replicas --format jsonl: a broker's copy of a partition (kbatch.partition.replicas.Copy), a record
# not every copy holds (kbatch.partition.replicas.Divergence, with its record's keys: RECORD) --------------------


def _checkpoint_findings(file_name: str, what_then: str) -> Column:
    """A copy's findings of one offset checkpoint of its log directory, as the key ``<file name>_findings``;
    ``what_then`` ends its description (what Kafka does without the file)."""
    return Column(f"{file_name.replace('-', '_')}_findings", "array", False,
                  f"list(map(finding_dict, copy.checkpoint_findings({file_name!r})))",
                  f"where its log directory's {file_name} is damaged{what_then}",
                  schema={"type": "array", "items": {"$ref": "#/$defs/finding"}})

REPLICA = (
    Column("type", "string", False, '"replica"', "always \"replica\"", schema={"const": "replica"}),
    Column("partition", "string", False, "json_name(report.topic + '-' + str(report.partition))",
           "the partition (TOPIC-N)"),
    Column("path", "string", False, "json_name(copy.path)", "the copy's partition directory"),
    Column("log_start_offset", "int64", True, "copy.log_start_offset",
           "the log start offset Kafka loads: its log directory's log-start-offset-checkpoint where that lies above "
           "the first segment's base offset, else that base offset (LogLoader.load); null: no segment"),
    Column("log_end_offset", "int64", False, "copy.log_end_offset", "one past its last batch's last offset"),
    Column("high_watermark", "int64", True, "copy.high_watermark",
           "what its log directory's replication-offset-checkpoint records"),
    Column("latest_epoch", "int32", True, "copy.latest_epoch",
           "the latest leader epoch of the cache Kafka loads for it (checkpoint file, batches recovered)"),
    Column("diverges_at", "int64", True, "copy.diverges_at",
           "the first offset whose batch differs from the newest-epoch copy's (null: none)"),
    Column("truncate_to", "int64", True, "copy.truncate_to",
           "the offset Kafka truncates it to when it follows the newest-epoch copy (AbstractFetcherThread); where "
           "truncated_fully, the leader's log start offset its empty log starts at"),
    Column("truncated_fully", "bool", False, "copy.truncated_fully",
           "the offset it fetches from once truncated lies below the leader's log start offset: Kafka deletes its "
           "whole log and starts it at the leader's (AbstractFetcherThread.fetchOffsetAndTruncate)"),
    Column("clean_shutdown", "bool", False, "copy.clean_shutdown",
           "its log directory holds .kafka_cleanshutdown: Kafka skips log recovery when the broker starts"),
    Column("recovery", "object", True, "None if copy.recovery is None else damage_dict(copy.recovery)",
           "where Kafka's log recovery cuts it when the broker starts (LogSegment.recover, LogLoader.recoverLog; "
           "the offsets above are counted after it), a damage object; null: recovery cuts nothing",
           schema=_nullable_object(DAMAGE)),
    Column("kept_damage", "object", True, "None if copy.kept_damage is None else damage_dict(copy.kept_damage)",
           "the first entry Kafka's validation fails that its log recovery does not reach (its segment below the "
           "recovery point, or a clean shutdown), a damage object: the damage stays, and a follower fetching it "
           "or a consumer reading it fails; null: none", schema=_nullable_object(DAMAGE)),
    Column("epoch_checkpoint_findings", "array", False,
           "[finding_dict(finding) for finding in copy.epoch_file_findings]",
           "where its leader-epoch-checkpoint is damaged or disagrees with its batches (verify-crc --deep's "
           "epoch-missing and epoch-mismatch): a follower asking it where an epoch ends is told by this file",
           schema={"type": "array", "items": {"$ref": "#/$defs/finding"}}),
    _checkpoint_findings("replication-offset-checkpoint", " (verify-crc --deep's findings): Kafka cannot read it, "
                         "and high_watermark is null for unknown, not absent"),
    _checkpoint_findings("recovery-point-offset-checkpoint", ": Kafka's log recovery then takes the recovery point "
                         "as 0 (LogManager.loadLogs)"),
    _checkpoint_findings("log-start-offset-checkpoint", ": Kafka then resets the log start offset to the first "
                         "segment's base offset (LogManager.loadLogs)"),
)

REPLICA_RECORD_HEAD = (
    Column("type", "string", False, '"record"', "always \"record\"", schema={"const": "record"}),
    Column("partition", "string", False, "json_name(report.topic + '-' + str(report.partition))",
           "the partition (TOPIC-N)"),
    Column("replicas", "array", False, "[json_name(report.copies[index].path) for index in divergence.holders]",
           "the copies holding it"),
    Column("below_high_watermark", "bool", True, "high_watermarks.below(record.offset)",
           "below a high watermark a copy holding it recorded: acknowledged to an acks=all producer; null: not "
           "known, a copy holding it has a replication-offset-checkpoint that cannot be read"),
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
    *_lost_offsets("lost_offsets_of(finding, batch)"),
)

# -- the lines of a damaged range, a file's end and an unreadable file (dump, verify-crc, txn, offsets, producers) --

_RAW = Column("raw", "bytes", True, 'None if raw is None else bytes_json(raw, "base64")',
              "the range's bytes (dump --format json only)", optional=True, schema={"$ref": "#/$defs/bytes"})
# A damaged range between entries, as an entry of dump's document (kbatch.output.jsonout.region_dict).
REGION = (_kind("finding", "a damaged range between entries, without bytes of its own"), *FINDING,
          *_lost_offsets("finding.lost_offsets"), _RAW)
# A finding on a line of its own, with its file (dump's JSON Lines write "file" first: every line of theirs does).
FINDING_LINE = (_kind("finding", "a finding on a line of its own"), _file("path"), *FINDING)

# A file's summary: the end of a file in dump and verify-crc (kbatch.reading.summary.FileSummary).
_SUMMARY_COUNTS = (
    Column("findings", "object", False, "dict(sorted(summary.findings.items()))",
           "how many findings of each code", schema={"type": "object", "additionalProperties": {"type": "integer"}}),
    Column("errors", "int64", False, "summary.errors", "the findings that are damage"),
    Column("damaged", "bool", False, "summary.damaged", "whether there is one"),
)
FILE_SUMMARY = (
    _file("summary.path"),
    Column("size", "int64", False, "summary.size", "the file's size when it was opened"),
    Column("batch_count", "int64", False, "summary.batches", "log entries read"),
    Column("record_count", "int64", False, "summary.records", "the records they count"),
    Column("batch_bytes", "int64", False, "summary.batch_bytes", "the bytes they take"),
    *_SUMMARY_COUNTS,
    Column("size_changed", "object", True,
           'None if summary.size_now is None else {"opened": summary.size, "ended_at": summary.size_now}',
           "a file cut while it was read: its size when opened, and where the read found its end", optional=True,
           schema={"type": "object", "properties": {"opened": {"type": "integer"}, "ended_at": {"type": "integer"}},
                   "required": ["opened", "ended_at"], "additionalProperties": False}),
)
# ... and a file beside a segment's (kbatch.partition.sidecars.SidecarSummary)
SIDECAR_SUMMARY = (
    _file("summary.path"),
    Column("size", "int64", False, "summary.size", "the file's size"),
    Column("kind", "string", False, "summary.kind", "its kind (offset-index, time-index, ...)"),
    Column("entry_count", "int64", False, "summary.entries", "its entries"),
    *_SUMMARY_COUNTS,
)
_SUMMARY_KIND = _kind("summary", "a file's last line")
SUMMARY_LINE = (_SUMMARY_KIND, *FILE_SUMMARY)
SIDECAR_SUMMARY_LINE = (_SUMMARY_KIND, *SIDECAR_SUMMARY)

ERROR_LINE = (
    _kind("error", "a file that could not be read"),
    _file("path"),
    Column("error", "string", False, 'f"cannot read: {reason}"', "why it could not be read"),
)

# -- a line of dump --format jsonl on a file beside a segment (kbatch.render.partition) ---------------------

_SIDECAR_FINDINGS = Column("findings", "array", False, "[finding_dict(finding) for finding in item.findings]",
                           "what is wrong with it", schema={"type": "array", "items": {"$ref": "#/$defs/finding"}})
_SIDECAR_FIELDS = Column("fields", "object", False, "item.fields",
                         "its fields, each a key of its own: Kafka's names in snake_case, in layout order "
                         "(offset and position in an .index; timestamp and offset in a .timeindex; ...)",
                         spread=True)
SIDECAR_ENTRY = (
    _kind("entry", "one entry of an index, a snapshot, a checkpoint"),
    Column("kind", "string", False, "item.kind", "the file's kind (offset-index, time-index, ...)"),
    Column("slot", "int64", False, "item.slot", "its number in the file, from 0"),
    Column("pos", "int64", False, "item.pos", "file position of its first byte"),
    Column("size", "int64", False, "item.size", "its bytes"),
    _SIDECAR_FIELDS, _SIDECAR_FINDINGS,
)
SIDECAR_HEADER = (
    _kind("header", "what a file beside a segment says of itself before its entries"),
    Column("kind", "string", False, "item.kind", "the file's kind"),
    _SIDECAR_FIELDS, _SIDECAR_FINDINGS,
)

# -- lines of pcap --format jsonl: a batch found in captured traffic (kbatch.capture.batches.CapturedBatch: its
# keys, then the batch's, BATCH), a finding with its packet (kbatch.capture.batches.CaptureFinding), a capture's
# summary (kbatch.ops.pcap.CaptureSummary) ---------------------------------------------------------------------

_CAPTURE_FILE = _file("path", "the capture file, as named on the command line")
_API = Column("api", "string", True, "found.api",
              "the message it came in: Produce, Fetch or ShareFetch (a finding: also ApiVersions, Metadata)",
              schema={"enum": ["Produce", "Fetch", "ShareFetch", "ApiVersions", "Metadata", None]})
_PACKET = Column("packet", "int64", False, "found.packet",
                 "the packet the Kafka message began in (1-based, as Wireshark counts)")
_CONNECTION = Column("connection", "string", True, "found.connection",
                     "the TCP direction that carried it: client:port -> broker:port, or the reverse; ' #2' and "
                     "on for a later connection on the same ports")
_TOPIC = Column("topic", "string", True, "found.topic",
                "its topic's name: the message's, else (a version naming topics by id) the one a Metadata response "
                "in the capture gave its id; null when none did")
_TOPIC_ID = Column("topic_id", "string", True, "found.topic_id",
                   "its topic's id (Produce v13+, Fetch v13+, ShareFetch), as Kafka prints a Uuid")
_PARTITION = Column("partition", "int32", True, "found.partition", "its partition")
PCAP_BATCH_HEAD = (
    _kind("batch", "a jsonl line's kind"),
    _CAPTURE_FILE,
    Column("direction", "string", False, "found.direction",
           "produce (in a Produce request) or fetch (in a Fetch or ShareFetch response)",
           schema={"enum": ["produce", "fetch"]}),
    _API, _TOPIC, _TOPIC_ID, _PARTITION,
    Column("api_version", "int32", False, "found.request.api_version", "the request's version"),
    Column("correlation_id", "int32", False, "found.request.correlation_id", "the request's correlation id"),
    Column("client_id", "string", True, "found.request.client_id", "the request's client id"),
    _CONNECTION, _PACKET,
    Column("packet_time", "float", False, "found.time", "that packet's time, seconds since the epoch"),
    Column("records_pos", "int64", False, "found.records_pos",
           "where the partition's Records field starts in the message (after its size field): the batch's pos "
           "and its findings' count from the Records field's start"),
    Column("error_code", "int32", True, "found.error_code",
           "the partition's ErrorCode in the response (Produce: whether the broker took it; null: no response)"),
    Column("assigned_offset", "int64", True, "found.assigned_offset",
           "Produce: the offset the broker gave its first record (the response's BaseOffset, plus the offsets "
           "of the partition's batches before it in the request); null without a response or on an error"),
)
PCAP_FINDING = (
    _kind("finding", "a finding on a line of its own"),
    _CAPTURE_FILE,
    *FINDING,
    _PACKET, _CONNECTION, _API, _TOPIC, _TOPIC_ID, _PARTITION,
)
# --against LOGDIR: a captured batch held against the broker's (kbatch.ops.against.Match)
PCAP_MATCH = (
    _kind("match", "a captured batch held against the one on disk"),
    Column("file", "string", False, "json_name(path)", "the capture file, as named on the command line"),
    Column("direction", "string", False, "match.found.direction", "produce or fetch",
           schema={"enum": ["produce", "fetch"]}),
    Column("topic", "string", True, "match.found.topic", "its topic's name, as in its batch line"),
    Column("topic_id", "string", True, "match.found.topic_id", "its topic's id as captured"),
    Column("partition", "int32", False, "match.found.partition", "its partition"),
    Column("base_offset", "int64", True, "match.base_offset",
           "the offset it has on disk (produce: the one its response gave; null: none known)"),
    Column("packet", "int64", False, "match.found.packet", "the packet its Kafka message began in"),
    Column("hop", "string", True, "match.hop",
           "client (bad on the wire already), broker (good on the wire, different or failing on disk), fetch "
           "(the disk's is good, the Fetch response's differs), none (all agree, or differ only as the broker's "
           "LogValidator or the log cleaner rewrites a batch: the explanation says how), null (no disk batch to "
           "compare, or a topic name Kafka refuses, never looked up: the explanation says which)",
           schema={"enum": ["client", "broker", "fetch", "none", None]}),
    Column("first_differing_byte", "int64", True, "match.first_differing_byte",
           "the first byte, from the batch's start, where the two differ outside baseOffset and "
           "partitionLeaderEpoch (produced: from what the broker writes of it, maxTimestamp and timestamp type "
           "set; 0 where the broker rebuilt the batch and the records differ)"),
    Column("disk_file", "string", True, "None if match.disk is None else json_name(match.disk.path)",
           "the segment holding the disk batch"),
    Column("disk_pos", "int64", True, "None if match.disk is None else match.disk.pos", "its position there"),
    Column("explanation", "string", False, "match.explanation", "the same, in a sentence"),
)
PCAP_SUMMARY = (
    _kind("summary", "a capture's last line"),
    _CAPTURE_FILE,
    Column("packets", "int64", False, "summary.packets",
           "the packets read whole, every one (TCP or not), as tshark numbers them"),
    Column("batch_count", "int64", False, "summary.batches", "record batches found"),
    Column("record_count", "int64", False, "summary.records", "the records they count"),
    Column("produced", "int64", False, "summary.produced", "of the batches, those in Produce requests"),
    Column("fetched", "int64", False, "summary.fetched", "... in Fetch and ShareFetch responses"),
    Column("findings", "object", False, "dict(sorted(summary.findings.items()))",
           "how many findings of each code", schema={"type": "object", "additionalProperties": {"type": "integer"}}),
    Column("errors", "int64", False, "summary.errors", "the findings that are damage"),
    Column("hops", "object", True, "None if summary.hops is None else dict(sorted(summary.hops.items()))",
           "--against: how many batches each hop changed (client, broker, fetch), agreed (none), had no disk "
           "batch (unmatched) or named a topic Kafka refuses, not compared (topic-refused)", optional=True,
           schema={"type": "object", "additionalProperties": {"type": "integer"}}),
    Column("damaged", "bool", False, "summary.damaged", "whether a finding is damage, or --against found a hop or a topic Kafka refuses"),
)

# -- the lines of txn --format jsonl (kbatch.ops.txn) ------------------------------------------------------

TRANSACTION = (
    _kind("transaction", "one transaction of a producer on a partition"),
    Column("topic", "string", True, "None if txn.topic is None else json_name(txn.topic)", "its topic, where known"),
    Column("partition", "int32", True, "txn.partition", "its partition, where known"),
    Column("producer_id", "int64", False, "txn.producer_id", "the producer id"),
    Column("producer_epoch", "int32", False, "txn.producer_epoch", "the producer epoch"),
    Column("first_offset", "int64", False, "txn.first_offset", "its first record's offset"),
    Column("last_offset", "int64", False, "txn.last_offset", "its last data record's offset"),
    Column("records", "int64", False, "txn.records", "its data records"),
    Column("batches", "int64", False, "txn.batches", "its data batches"),
    Column("first_timestamp", "int64", True, "txn.first_timestamp", "its first batch's timestamp"),
    Column("outcome", "string", False, "txn.outcome", "COMMIT, ABORT, OPEN, or UNKNOWN (its marker is not believed)",
           schema={"enum": ["COMMIT", "ABORT", "OPEN", "UNKNOWN"]}),
    Column("empty", "bool", False, "txn.empty", "a marker with no data before it"),
    Column("marker_offset", "int64", True, "txn.marker_offset", "its marker's offset"),
    Column("marker_epoch", "int32", True, "txn.marker_epoch", "its marker's producer epoch"),
    Column("coordinator_epoch", "int32", True, "txn.coordinator_epoch", "its marker's coordinator epoch"),
    Column("marker_pos", "int64", True, "txn.marker_pos", "UNKNOWN: where the marker not believed is"),
    Column("marker_doubt", "string", True, "txn.marker_doubt", "UNKNOWN: why it is not believed"),
    Column("if_believed", "string", True, "txn.if_believed", "UNKNOWN: what it would say"),
    Column("transactional_id", "string", True, "txn.transactional_id",
           "its transactional id, from the __transaction_state partitions given"),
    Column("coordinator_state", "string", True, "txn.coordinator_state", "the coordinator's state of it, likewise"),
    Column("hanging", "bool", False, "txn.hanging",
           "open here though the coordinator has moved on: nothing will write its marker (KAFKA-12671)"),
    _file("txn.path", "the segment it starts in"),
    Column("last_stable_offset_held", "bool", False, 'txn.outcome == "OPEN"',
           "whether it holds the partition's last stable offset (it is open)"),
)

TXN_PARTITION = (
    _kind("partition", "a partition's transactions counted"),
    Column("topic", "string", True, "None if view.topic is None else json_name(view.topic)", "its topic, where known"),
    Column("partition", "int32", True, "view.partition", "its partition, where known"),
    Column("directory", "string", True, "None if view.directory is None else json_name(view.directory)",
           "the partition directory its segments were found in"),
    Column("transactions", "int64", False, "len(view.transactions)", "its transactions"),
    Column("committed", "int64", False, 'sum(t.outcome == "COMMIT" for t in view.transactions)', "committed"),
    Column("aborted", "int64", False, 'sum(t.outcome == "ABORT" for t in view.transactions)', "aborted"),
    Column("empty", "int64", False, "sum(t.empty for t in view.transactions)", "markers with no data before them"),
    Column("open", "int64", False, "len(view.open)", "open at the log's end"),
    Column("unknown", "int64", False, 'sum(t.outcome == "UNKNOWN" for t in view.transactions)',
           "of an unknown outcome"),
    Column("last_stable_offset", "int64", True, "view.stable.offset",
           "the last stable offset as its broker has it (UnifiedLog.lastStableOffset: the earliest transaction open, "
           "or completed by a marker the high watermark has not passed, raised to the log start offset, where that "
           "lies below the high watermark; else the high watermark); null: unknown (last_stable_offset_unknown)"),
    Column("last_stable_offset_unknown", "string", True, "view.stable.unknown",
           "why the last stable offset is unknown: no high watermark checkpoint for it, one that cannot be read, or "
           "not every segment of its partition directory read"),
    Column("high_watermark", "int64", True, "view.stable.high_watermark",
           "its log directory's replication-offset-checkpoint's high watermark; null: unknown"),
    Column("log_end_offset", "int64", True, "None if view.last_offset is None else view.last_offset + 1",
           "the log end offset"),
    Column("cross_checked", "array", False, "view.cross_checked",
           "its .txnindex and .snapshot files held to the log", schema={"type": "array", "items": {"type": "string"}}),
    Column("cross_check_findings", "int64", False, "view.cross_check_findings", "where they disagree or do not read"),
)

COORDINATOR = (
    _kind("coordinator", "a transactional id's last state in __transaction_state"),
    Column("transactional_id", "string", False, "state.transactional_id", "the transactional id"),
    Column("producer_id", "int64", False, "state.producer_id", "its producer id"),
    Column("producer_epoch", "int32", False, "state.producer_epoch", "its producer epoch"),
    Column("state", "string", False, "state.state", "the transaction's state (Ongoing, CompleteCommit, ...)"),
    Column("partitions", "array", False, "state.partitions", "the partitions in the transaction (TOPIC-N)",
           schema={"type": "array", "items": {"type": "string"}}),
    Column("timeout_ms", "int64", False, "state.timeout_ms", "the transaction timeout"),
    Column("start_timestamp", "int64", False, "state.start_timestamp", "when the transaction started"),
    Column("last_update_timestamp", "int64", False, "state.last_update_timestamp", "when it last changed"),
    Column("offset", "int64", False, "state.offset", "the offset of the record that says so"),
)

# -- offsets --format jsonl --group/--transactional-id (kbatch.ops.offsets.coordinator_partition) ----------

COORDINATOR_PARTITION = (
    _kind("coordinator_partition", "where a name's coordinator keeps it"),
    Column("group", "string", True, 'name if kind == "group" else None', "the consumer group", optional=True),
    Column("transactional_id", "string", True, 'name if kind == "transactional_id" else None',
           "the transactional id", optional=True),
    Column("topic", "string", False, "topic", "__consumer_offsets or __transaction_state"),
    Column("partition", "int32", False, "partition", "the partition of it Kafka's hash of the name gives"),
    Column("of", "int32", False, "partitions", "of how many"),
)

# -- the lines of diff --format jsonl (kbatch.ops.diff) ----------------------------------------------------

_ANY: dict = {}
DIFFERENCE = (
    _kind("difference", "one difference, old to new"),
    Column("kind", "string", False, "difference.kind",
           "batch-changed, batch-only-a/b, batching, record-changed, record-only-a/b, damage-a/b"),
    Column("offset", "int64", True, "difference.offset", "the record offset (or a batch's base offset) it concerns"),
    Column("field", "string", False, "difference.field", "which field differs (empty for a whole batch or record)"),
    Column("a", "string", True, "difference.a", "A's value (null: A has nothing there)"),
    Column("b", "string", True, "difference.b", "B's value"),
    Column("a_pos", "int64", True, "difference.a_pos", "the file position in A"),
    Column("b_pos", "int64", True, "difference.b_pos", "the file position in B"),
    Column("a_value", "any", True, "difference.a_value", "a record field that differs: A's value whole",
           schema=_ANY),
    Column("b_value", "any", True, "difference.b_value", "B's value whole", schema=_ANY),
    Column("differs_at", "int64", True, "difference.differs_at", "bytes: the first position where they differ"),
)

_COUNTS = {"type": "object", "properties": {name: {"type": "integer"} for name in ("same", "changed", "only_a", "only_b")},
           "required": ["same", "changed", "only_a", "only_b"], "additionalProperties": False}
DIFF_SUMMARY = (
    _kind("summary", "diff's last line"),
    Column("a", "string", False, "json_name(path_a)", "the first input"),
    Column("b", "string", False, "json_name(path_b)", "the second"),
    Column("batches", "object", False, "dict(summary.batches)", "batches same, changed, only in A, only in B",
           schema=_COUNTS),
    Column("records", "object", False, "dict(summary.records)", "records likewise", schema=_COUNTS),
    Column("damaged", "object", False, "dict(summary.damaged)", "damaged ranges in each",
           schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"], "additionalProperties": False}),
    Column("regrouped", "object", False, "dict(summary.regrouped)",
           "spans of offsets the two batch differently, and the batches each holds them in",
           schema={"type": "object", "properties": {key: {"type": "integer"} for key in ("spans", "a", "b")},
                   "required": ["spans", "a", "b"], "additionalProperties": False}),
    Column("first_different_byte", "int64", True, "summary.first_different_byte",
           "the first byte that differs (null: byte-identical)"),
    Column("size_a", "int64", False, "summary.size_a", "A's size"),
    Column("size_b", "int64", False, "summary.size_b", "B's size"),
    Column("same", "bool", False, "summary.same", "whether they hold the same batches and records"),
)

# -- stats --format json: one document (kbatch.ops.stats.SegmentStats; with --what-if, kbatch.ops.reencode.WhatIf) --

def _items(kind: str) -> dict:
    """An array of objects of a kind declared here (its schema is #/$defs/<kind>)."""
    return {"type": "array", "items": {"$ref": f"#/$defs/{kind}"}}


STATS_FILE = (
    _file("entry.path"),
    Column("size", "int64", False, "entry.size", "its size"),
    Column("accounted", "int64", False, "entry.accounted", "what its categories add up to (its size, always)"),
)
STATS_SHARE = (
    Column("category", "string", False, "share.category", "the category's key (entry_framing, batch_header, keys, ...)"),
    Column("label", "string", False, "share.label", "its name in the table"),
    Column("bytes", "int64", False, "share.bytes", "its bytes"),
    Column("per_record", "float", True, "share.per_record", "per data record (null: no records)"),
    Column("share", "float", False, "share.share", "its share of the account's bytes (0..1)"),
)
STATS_OVERHEAD = (
    Column("bytes", "int64", False, "stats.record_overhead",
           "the bytes of the records' fields other than keys, values and headers, stored and inflated"),
    Column("per_record", "float", True, "stats.overhead_per_record", "per data record (null: no records)"),
)
STATS_BUCKET = (
    Column("bucket", "string", False, "label", "a power-of-two range (0, 1, 2-3, 4-7, ...)"),
    Column("batches", "int64", False, "batches", "the batches in it"),
)
_TALLY = (
    Column("batches", "int64", False, "tally.batches", "its batches"),
    Column("records", "int64", False, "tally.records", "their data records"),
    Column("bytes", "int64", False, "tally.bytes", "their bytes"),
    Column("stored_records_bytes", "int64", False, "tally.stored_records_bytes",
           "by codec: the compressed records as stored (else 0)"),
    Column("inflated_records_bytes", "int64", False, "tally.inflated_records_bytes",
           "by codec: what they inflate to (else 0)"),
)
STATS_BY_MAGIC = (Column("magic", "int32", False, "group", "the magic"), *_TALLY)
STATS_BY_CODEC = (
    Column("codec", "string", False, "group", "the codec"), *_TALLY,
    Column("ratio", "float", True, "tally.ratio", "inflated over stored records bytes (null: nothing compressed)"),
)
STATS_BY_PRODUCER = (
    Column("producer_id", "any", False, "group", "the producer id, or \"none\" (no producer id, or -1)",
           schema={"oneOf": [{"type": "integer"}, {"const": "none"}]}),
    *_TALLY,
)
STATS = (
    Column("files", "array", False, "[stats_file_dict(entry) for entry in stats.files]", "the files read",
           schema=_items("stats_file")),
    Column("total_bytes", "int64", False, "stats.total_bytes", "their bytes"),
    Column("batch_count", "int64", False, "stats.batches", "log entries read"),
    Column("record_count", "int64", False, "stats.records",
           "their data records (control records count with control batches)"),
    Column("control_batch_count", "int64", False, "stats.control_batches", "control batches"),
    Column("stored", "array", False,
           "[stats_share_dict(share) for share in stats.shares(stats.stored, stats.total_bytes)]",
           "the bytes in the files by category: they add up to total_bytes", schema=_items("stats_share")),
    Column("inflated", "array", False,
           "[stats_share_dict(share) for share in stats.shares(stats.inflated, stats.inflated_bytes)]",
           "the bytes inside compressed batches by category, as they inflate", schema=_items("stats_share")),
    Column("inflated_bytes", "int64", False, "stats.inflated_bytes", "what compressed batches inflate to"),
    Column("record_overhead", "object", False, "stats_overhead_dict(stats)", "the records' overhead",
           schema={"$ref": "#/$defs/stats_overhead"}),
    Column("records_per_batch", "array", False,
           "[stats_bucket_dict(label, batches) for label, batches in stats.buckets(stats.records_per_batch)]",
           "records per batch, as a distribution", schema=_items("stats_bucket")),
    Column("batch_sizes", "array", False,
           "[stats_bucket_dict(label, batches) for label, batches in stats.buckets(stats.batch_sizes)]",
           "batch sizes in bytes, as a distribution", schema=_items("stats_bucket")),
    Column("by_magic", "array", False,
           "[stats_by_magic_dict(group, tally) for group, tally in sorted(stats.by_magic.items())]",
           "batches, records and bytes per magic", schema=_items("stats_by_magic")),
    Column("by_codec", "array", False,
           "[stats_by_codec_dict(group, tally) for group, tally in sorted(stats.by_codec.items())]",
           "the same per codec, with the compression ratio", schema=_items("stats_by_codec")),
    Column("by_producer", "array", False,
           "[stats_by_producer_dict(group, tally) for group, tally in stats.producers()]",
           "the same per producer id", schema=_items("stats_by_producer")),
    Column("records_measured_by_layout", "int64", False, "stats.records_measured_by_layout",
           "records measured field by field through the layout (their varints not the shortest)"),
    Column("findings", "object", False, "dict(sorted(stats.findings.items()))", "how many findings of each code",
           schema={"type": "object", "additionalProperties": {"type": "integer"}}),
    Column("damaged", "bool", False, "stats.damaged", "whether a finding is damage"),
    Column("what_if", "object", True, "None if what_if is None else what_if_dict(what_if)",
           "--what-if: each layout's size (keys below)", optional=True, schema={"$ref": "#/$defs/what_if"}),
)

# ... stats --what-if (kbatch.ops.reencode.WhatIf, LayoutTotal)
WHAT_IF_STORED = (
    Column("entries", "int64", False, "what_if.stored_entries", "the entries re-encoded"),
    Column("records", "int64", False, "what_if.stored_records", "their data records"),
    Column("bytes", "int64", False, "what_if.stored_bytes", "their bytes as stored"),
)
WHAT_IF_LEFT_OUT = (
    Column("damaged_batches", "int64", False, "what_if.damaged_batches_left_out", "damaged batches not re-encoded"),
    Column("bytes", "int64", False, "what_if.damaged_bytes_left_out", "their bytes and the damaged ranges'"),
)
WHAT_IF_HEADERS_FIRST = (
    Column("compressed_batches", "int64", False, "what_if.compressed_batches", "the compressed batches"),
    Column("inflated_today", "int64", False, "what_if.inflated_today",
           "what a broker inflates to validate them today: all their records"),
    Column("prefix", "int64", False, "what_if.headers_first_prefix",
           "what it would inflate with every record's metadata before all keys and values"),
)
_LEGACY = 'total.legacy'
WHAT_IF_LAYOUT = (
    Column("layout", "string", False, "total.layout", "v0, v1, v2 or v3", schema={"enum": ["v0", "v1", "v2", "v3"]}),
    Column("entries", "int64", False, "total.entries", "log entries written (v0/v1 uncompressed: one per record)"),
    Column("records", "int64", False, "total.records", "records written"),
    Column("bytes", "int64", False, "total.bytes", "their bytes, uncompressed"),
    Column("per_record_overhead", "float", True, "total.per_record_overhead",
           "bytes per record beyond its key, value and header bytes, batch headers included"),
    Column("difference", "int64", False, "total.bytes - stored", "bytes against the stored"),
    Column("recompressed_bytes", "int64", True, "total.recompressed_bytes if recompress else None",
           "--recompress: each entry compressed with its batch's codec"),
    Column("recompressed_difference", "int64", True, "total.recompressed_bytes - stored if recompress else None",
           "--recompress: those bytes against the stored"),
    Column("headers_dropped", "int64", False, "total.headers_dropped", "v0/v1: record headers they cannot carry",
           when=_LEGACY),
    Column("header_bytes_dropped", "int64", False, "total.header_bytes_dropped", "v0/v1: their bytes", when=_LEGACY),
    Column("control_batches_dropped", "int64", False, "total.control_batches_dropped",
           "v0/v1: control batches, which they have not", when=_LEGACY),
    Column("zstd_left_uncompressed", "int64", False, "total.left_uncompressed",
           "v0/v1: zstd batches, which they cannot compress, left uncompressed", when=_LEGACY),
)
WHAT_IF = (
    Column("recompress", "bool", False, "what_if.recompress", "whether --recompress was given"),
    Column("stored", "object", False, "what_if_stored_dict(what_if)", "what was re-encoded",
           schema={"$ref": "#/$defs/what_if_stored"}),
    Column("left_out", "object", False, "what_if_left_out_dict(what_if)", "what was not",
           schema={"$ref": "#/$defs/what_if_left_out"}),
    Column("layouts", "array", False,
           "[what_if_layout_dict(total, what_if.stored_bytes, what_if.recompress) for total in what_if.layout_totals()]",
           "each layout's size", schema=_items("what_if_layout")),
    Column("headers_first", "object", False, "what_if_headers_first_dict(what_if)",
           "what validating compressed batches would inflate with each record's metadata first",
           schema={"$ref": "#/$defs/what_if_headers_first"}),
)

# -- scan --format json: one document (kbatch.spark.report.ScanReport, PartitionReport) ----------------------------

SCAN_BETWEEN = (
    Column("after", "string", False, "between.after", "the segment before"),
    Column("before", "string", False, "between.before", "the segment after"),
    Column("from", "int64", False, "between.first", "the first offset missing (an overlap: held twice)"),
    Column("to", "int64", False, "between.last", "the last"),
)
SCAN_CROSS_CHECKS = (
    Column("errors", "int64", False, "checks.errors", "findings that are damage"),
    Column("warnings", "int64", False, "checks.warnings", "findings that are warnings"),
    Column("findings", "object", False, "dict(sorted(checks.findings.items()))", "how many findings of each code",
           schema={"type": "object", "additionalProperties": {"type": "integer"}}),
)
_OFFSETS_OR_NULL = {"type": ["integer", "null"]}
SCAN_PARTITION = (
    Column("topic", "string", True, "partition.topic", "the topic (null: a segment in no TOPIC-N directory)"),
    Column("partition", "int32", True, "partition.partition", "the partition, likewise"),
    Column("segments", "int64", False, "partition.segments", "its segments"),
    Column("batches", "int64", False, "partition.batches", "their batches"),
    Column("records", "int64", False, "partition.records", "the records the batches count"),
    Column("bytes", "int64", False, "partition.bytes", "the segments' bytes, damaged ones included"),
    Column("compression_ratio", "float", True, "partition.compression_ratio",
           "what compressed batches inflate to over their bytes (null: none compressed)"),
    Column("corrupt_batches", "int64", False, "partition.corrupt_batches", "batches with damage"),
    Column("damaged_segments", "array", False, "partition.damaged_segments",
           "the segments with damage (as given)", schema={"type": "array", "items": {"type": "string"}}),
    Column("offset_gaps", "array", False, "[scan_between_dict(between) for between in partition.offset_gaps]",
           "offsets missing between consecutive segments", schema=_items("scan_between")),
    Column("offset_overlaps", "array", False,
           "[scan_between_dict(between) for between in partition.offset_overlaps]",
           "offsets held by two consecutive segments", schema=_items("scan_between")),
    Column("first_offset", "int64", True, "partition.first_offset", "its first undamaged batch's base offset"),
    Column("last_offset", "int64", True, "partition.last_offset", "its last undamaged batch's last offset"),
    Column("first_timestamp", "int64", True, "partition.first_timestamp", "the smallest base timestamp"),
    Column("last_timestamp", "int64", True, "partition.last_timestamp", "the largest max timestamp"),
    Column("producers", "int64", False, "partition.producers", "distinct producer ids"),
    Column("producer_breaks", "object", False, "partition.producer_breaks",
           "how many times each of kbatch producers' rules broke, by its code",
           schema={"type": "object", "additionalProperties": {"type": "integer"}}),
    Column("open_transactions", "array", False, "partition.open_transactions",
           "the producer ids with a transaction open at the log's end",
           schema={"type": "array", "items": {"type": "integer"}}),
    Column("unknown_outcome_transactions", "array", False, "partition.unknown_outcome_transactions",
           "those whose last transaction ends at a marker whose CRC fails: committed or aborted, nobody can say",
           schema={"type": "array", "items": {"type": "integer"}}),
    Column("cross_checks", "object", True,
           "None if partition.cross_checks is None else scan_cross_checks_dict(partition.cross_checks)",
           "--deep: its indexes, snapshots and checkpoints held to its segments (null: not cross-checked)",
           schema={"oneOf": [{"type": "null"}, {"$ref": "#/$defs/scan_cross_checks"}]}),
)
SCAN = (
    Column("out", "string", False, "report.out", "where the tables went (--out)"),
    Column("tables", "array", False, "report.tables", "the tables written (batches, findings, records)",
           schema={"type": "array", "items": {"enum": ["batches", "findings", "records"]}}),
    Column("segments", "int64", False, "report.segments", "the segments read"),
    Column("bytes", "int64", False, "report.bytes", "their bytes"),
    Column("damaged_segments", "array", False, "report.damaged_segments", "the segments with damage (as given)",
           schema={"type": "array", "items": {"type": "string"}}),
    Column("failed_cross_checks", "array", False, "report.failed_cross_checks",
           "--deep: the partitions (TOPIC-N) whose cross-checks found damage",
           schema={"type": "array", "items": {"type": "string"}}),
    Column("partitions", "array", False, "[scan_partition_dict(partition) for partition in report.partitions]",
           "a report per topic-partition (keys below)", schema=_items("scan_partition")),
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
    return tuple(column.name for column in columns if column.always)


def spark_ddl(columns) -> str:
    """A Spark table's schema as DDL text (every column nullable: Spark holds each Arrow batch a task
    makes to exactly this schema, as it has always been)."""
    return ", ".join(f"{column.name} {TYPES[column.type][1]}" for column in columns)
