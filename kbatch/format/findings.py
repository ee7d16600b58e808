"""Findings: what the reader says about bytes that are not as Kafka writes them.

A finding is data, not an exception.  The same record feeds the table, the
JSON output, the exit code and (later) the Spark tables.  Codes are stable,
kebab-case, and documented in :data:`CODES`.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class Severity(str, Enum):
    ERROR = "error"      # the bytes are damaged: Kafka would reject or truncate them
    WARNING = "warning"  # legal for Kafka to read, but not what a correct writer makes
    INFO = "info"        # worth knowing, not damage (a preallocated zero tail, a quirk)


# code -> (severity, what it means)
CODES: dict[str, tuple[Severity, str]] = {
    "crc-mismatch": (Severity.ERROR, "the stored CRC does not match the bytes it covers"),
    "bad-length": (Severity.ERROR, "a length or size field disagrees with the bytes"),
    "truncated": (Severity.ERROR, "the input ends inside a log entry"),
    "unknown-magic": (Severity.ERROR, "the magic byte is not 0, 1 or 2"),
    "proposed-format": (Severity.ERROR, "magic 3: the v3 format proposed for Kafka and never adopted; Kafka rejects it"),
    "resync": (Severity.ERROR, "bytes that are no log entry were skipped up to the next valid one (one finding a "
                               "range: its text says what the first bytes read as, e.g. unknown-magic)"),
    "truncated-while-reading": (Severity.ERROR, "the file was cut while it was read: it ends earlier than when "
                                                "opened, and what was read there is all there is"),
    "zero-tail": (Severity.INFO, "the input ends in zero bytes, as a broker-preallocated segment does"),
    "unknown-codec": (Severity.ERROR, "the attributes name a compression codec Kafka does not have"),
    "decompress-failed": (Severity.ERROR, "the compressed records do not decompress"),
    "decompress-too-large": (Severity.ERROR, "the records decompress to more than the configured cap"),
    "varint-overflow": (Severity.ERROR, "a varint runs past 5 bytes (varlong: 10)"),
    "record-overrun": (Severity.ERROR, "a record field runs past the end of the record or the batch"),
    "bad-record-length": (Severity.ERROR, "a record's length disagrees with the bytes its fields use"),
    "records-count-mismatch": (Severity.ERROR, "recordsCount disagrees with the records present"),
    "trailing-bytes": (Severity.ERROR, "bytes remain after the last record of a batch"),
    "message-trailing-bytes": (Severity.WARNING, "bytes after a v0/v1 message's value, which Kafka reads and ignores"),
    "empty-wrapper": (Severity.ERROR, "a compressed v0/v1 message holds no inner message"),
    "bad-control-record": (Severity.ERROR, "a control batch does not hold a well-formed control record"),
    "marker-not-believed": (Severity.WARNING, "a transaction marker whose CRC fails or whose record does not read "
                                              "as ABORT or COMMIT: the transaction it would end has no known outcome"),
    "control-not-end-marker": (Severity.ERROR, "a producer's control batch holds a type other than ABORT or COMMIT, "
                                               "on which a broker's producer-state rebuild fails"),
    "nested-compression": (Severity.ERROR, "a compressed message set holds another compressed message"),
    "inner-magic-mismatch": (Severity.WARNING, "an inner message's magic differs from its wrapper's"),
    "negative-length": (Severity.WARNING, "a key or value length below -1, which Kafka reads as null"),
    "long-overflow": (Severity.ERROR, "a record offset or timestamp overflows Java's long (shown wrapped, as Kafka "
                                      "computes it)"),
    "bad-wrapper-offset": (Severity.ERROR, "a v1 wrapper's offset is below its last inner offset (and not 0)"),
    "not-all-kept": (Severity.WARNING, "a batch or wrapper holds more records (or findings) than are kept: all "
                                       "are checked, the first are listed"),
    "wrapper-offset-zero": (Severity.INFO, "a v1 wrapper with offset 0: inner offsets are taken as absolute"),
    # The invariants `verify-crc --deep` checks beyond framing and checksums:
    "last-offset-delta-mismatch": (Severity.ERROR, "a record's offsetDelta is beyond lastOffsetDelta"),
    "offset-delta-order": (Severity.ERROR, "record offsets do not strictly increase within a batch"),
    "offset-overlap": (Severity.ERROR, "a batch starts at or below an offset an earlier batch holds"),
    "below-segment-base": (Severity.ERROR, "a batch's offset is below the base offset in its segment's file name"),
    "beyond-segment-range": (Severity.ERROR, "a batch's last offset is more than 2^31-1 past its segment's base"),
    "offset-outlier": (Severity.ERROR, "a batch's baseOffset breaks the sequence the batches on both sides of it (the "
                                       "first batch's: the two after it) agree on (baseOffset is outside the CRC)"),
    "offset-gap": (Severity.INFO, "offsets skip between batches (legal after compaction or aborted transactions)"),
    # Not about the bytes: a range of a file split for parallel reading did not end where the next began.
    "split-handover": (Severity.INFO, "a split range's walk did not end where the next range began"),
    # No Kafka component refuses it: a leader sets a client's anew (LogValidator: setMaxTimestamp), a follower,
    # the log loader and a consumer read it as it is (DefaultRecordBatch.ensureValid checks size and CRC only)
    "max-timestamp-mismatch": (Severity.WARNING, "maxTimestamp is not the largest record timestamp (CreateTime), "
                                                 "which no broker writes and none refuses"),
    "reserved-bits": (Severity.WARNING, "attribute bits Kafka reserves are set"),
    "inconsistent-producer-fields": (Severity.WARNING, "a producerId with a negative baseSequence or epoch"),
    "transactional-without-producer": (Severity.ERROR, "a transactional batch without a producerId"),
    # The files beside a segment (kbatch.partition), each read on its own:
    "partial-entry": (Severity.ERROR, "an index ends inside an entry (its size is no multiple of the entry size)"),
    "ignored-partial-entry": (Severity.WARNING, "a .txnindex ends inside an entry: Kafka reads the whole entries "
                                                "and ignores the rest"),
    "unexpected-key": (Severity.WARNING, "a partition.metadata line's key is not the one Kafka writes (Kafka "
                                         "does not read it)"),
    "line-too-long": (Severity.WARNING, "a text line longer than any Kafka writes, read up to its first 4096 bytes"),
    "too-large": (Severity.ERROR, "a file beside a segment larger than Kafka can read (more than 2^31-1 bytes)"),
    "bad-quorum-state": (Severity.ERROR, "a quorum-state file FileQuorumStateStore cannot read"),
    "bad-meta-properties": (Severity.ERROR, "a meta.properties Kafka cannot load (MetaProperties.Builder)"),
    "bad-topic-config": (Severity.ERROR, "a __cluster_metadata ConfigRecord whose topic config value LogConfig cannot "
                                         "parse or refuses as out of range (the controller validates it when set: "
                                         "damage, or a newer Kafka's)"),
    "index-order": (Severity.ERROR, "index entries do not increase as Kafka appends them"),
    "offset-below-base": (Severity.ERROR, "an index entry's offset is below the segment's base offset"),
    "unknown-version": (Severity.ERROR, "a file's version is not one Kafka writes"),
    "bad-checkpoint": (Severity.ERROR, "a checkpoint line or count that Kafka cannot read"),
    # ... and held against the log (verify-crc --deep or --index-only on a partition directory):
    "index-not-batch-start": (Severity.ERROR, "an offset index entry's position is not where a batch starts"),
    "index-offset-mismatch": (Severity.ERROR, "an offset index entry's offset is not in the batches it points at"),
    "index-zero-tail-rolled": (Severity.ERROR, "a rolled segment's index was never trimmed: Kafka reads its zeros"),
    "timeindex-mismatch": (Severity.ERROR, "a time index entry is not a batch's new largest timestamp and its offset"),
    "timeindex-missing-max": (Severity.WARNING, "a rolled segment's time index lacks its largest timestamp"),
    "txnindex-missing": (Severity.ERROR, "an aborted transaction in the log has no .txnindex entry"),
    "txnindex-unmatched": (Severity.ERROR, "a .txnindex entry matches no ABORT marker of its segment"),
    "txnindex-mismatch": (Severity.ERROR, "a .txnindex entry disagrees with the transaction in the log"),
    "snapshot-mismatch": (Severity.ERROR, "a producer snapshot disagrees with the log below its offset"),
    "snapshot-missing-producer": (Severity.WARNING, "a producer of the log is not in a later snapshot (expired?)"),
    "epoch-mismatch": (Severity.ERROR, "a leader-epoch-checkpoint start offset is not its epoch's first batch"),
    "epoch-missing": (Severity.ERROR, "a leader epoch of the log's batches has no leader-epoch-checkpoint entry"),
    "segment-base-mismatch": (Severity.ERROR, "a segment's first batch is below the base offset in its name"),
    "segment-overlap": (Severity.ERROR, "a segment holds offsets at or above the next segment's base offset"),
    "segment-gap": (Severity.INFO, "offsets between two segments are in neither (as after compaction)"),
    # A producer's batches held to the checks a leader makes of a client's append (kbatch.ops.producers,
    # ProducerAppendInfo); warnings, since a broker loading or replicating a log does not make them:
    "producer-epoch-backwards": (Severity.WARNING, "a producer's batch has an epoch below one it wrote before "
                                                   "(checkProducerEpoch)"),
    "producer-sequence-not-reset": (Severity.WARNING, "a producer's new epoch starts at a sequence other than 0 "
                                                      "(checkSequence)"),
    "producer-sequence-repeat": (Severity.WARNING, "a producer's batch repeats or goes back in its sequence "
                                                   "(checkSequence: out of order)"),
    "producer-sequence-gap": (Severity.WARNING, "a producer's sequence skips more than the offsets removed from "
                                                "the log in between (checkSequence: out of order)"),
    "producer-txn-state": (Severity.WARNING, "a producer's plain batch while its transaction is open "
                                             "(appendDataBatch)"),
    "duplicate-records": (Severity.WARNING, "a producer wrote the records of one of its recent batches again, "
                                            "under a new epoch or a repeated sequence: a duplicate idempotence "
                                            "did not stop"),
    # Internal topics (__consumer_offsets, __transaction_state, __cluster_metadata) read with Kafka's schemas:
    "bad-internal-record": (Severity.ERROR, "an internal topic's key or value does not read with Kafka's schema"),
    "unknown-record-version": (Severity.WARNING, "a record type or version kbatch's schemas do not know"),
    "bad-kraft-record": (Severity.ERROR, "a __cluster_metadata record KRaft's reader refuses (a key, a timestamp "
                         "delta, headers, a control type it does not know)"),
    "bad-snapshot": (Severity.ERROR, "a KRaft snapshot that does not start with a SNAPSHOT_HEADER control record"),
    "snapshot-without-footer": (Severity.WARNING, "a KRaft snapshot whose last record is no SNAPSHOT_FOOTER"),
    "tagged-field-size-mismatch": (Severity.WARNING, "a known tagged field's stated size is not what it reads "
                                   "(Kafka reads on from the field's end and never checks)"),
    "record-version-above-schema": (Severity.WARNING, "a version above the newest schema's, read as the newest"),
    "internal-trailing-bytes": (Severity.WARNING, "bytes after a coordinator record's message, which Kafka ignores"),
    # Captured traffic (kbatch pcap): positions are inside the Kafka message, the packet and connection said
    "capture-problem": (Severity.WARNING, "the capture lacks or cannot decode bytes of a Kafka connection (a cut "
                                          "file or packet, a TCP gap, traffic that does not frame as Kafka, a "
                                          "response whose request was not captured): what they held is not checked"),
    "bad-kafka-message": (Severity.ERROR, "a Produce, Fetch, ShareFetch or ApiVersions message that does not read "
                                          "as Kafka's definition of its version says"),
    "unknown-api-version": (Severity.WARNING, "a Produce, Fetch or ShareFetch version Kafka trunk does not define: "
                                              "its batches are not read"),
    "version-not-advertised": (Severity.WARNING, "a request version outside what the broker's ApiVersions response "
                                                 "on that connection gave"),
    "partial-batch": (Severity.INFO, "a Fetch response's records end inside a batch, as a broker cuts them at the "
                                     "fetch's size limit (the consumer stops there)"),
    # An error, though no byte of a batch is wrong: the rule is one Kafka enforces.  No topic of such a name can
    # exist (CreateTopics and auto-creation hold names to Topic.validate), so a broker refuses a Produce request
    # for it (KafkaApis.handleProduceRequest: not in the metadata cache, UNKNOWN_TOPIC_OR_PARTITION) and writes
    # nothing -- the request is what the user looks for (a client that sends it, or the name damaged on the
    # wire); and a broker reads records only from a partition's log, which no such name has, so records under
    # one in a Fetch response are damage, or came from something that is no broker.
    "topic-refused": (Severity.ERROR, "a Produce request, or a Fetch response's records, names a topic Kafka "
                                      "refuses (Topic.validate): the broker refuses the request and has no log "
                                      "of that name"),
}


# Findings that stand for a range of bytes outside any entry (the rest explain an entry or a range).
REGION_CODES = frozenset({"resync", "truncated", "zero-tail"})

# Findings (and records) kept per batch or wrapper: enough for any real one, a bound for a crafted one
# (a few hundred KB of gzip can inflate to millions of minimal records).  The rest are counted.
MAX_HELD = 100_000


class Finding(NamedTuple):
    """One damaged (or noteworthy) byte range.

    ``pos``/``size`` span the bytes concerned, as file positions.  Inside a
    compressed batch the damaged bytes are not in the file: then ``pos``/``size``
    span the compressed region, ``inner_pos`` is the position inside the
    decompressed bytes.  ``entry_pos`` is the position of the log entry the
    finding belongs to (for a damaged region: where the region starts).
    ``lost_offsets``: for a range of bytes that is no entry, the offsets it may
    have held as far as the entries around it tell (kbatch.reading.lost.LostOffsets,
    set by the reader); a damaged entry's own are its batch's.
    """

    code: str
    entry_pos: int
    pos: int
    size: int
    field: str
    expected: str
    actual: str
    inner_pos: int | None = None
    lost_offsets: object | None = None

    @property
    def severity(self) -> Severity:
        return CODES[self.code][0]

    @property
    def owns_bytes(self) -> bool:
        """True for a range of the input that belongs to no entry (skipped, truncated or zero bytes)."""
        return self.code in REGION_CODES and self.inner_pos is None and self.pos == self.entry_pos

    @property
    def is_damage(self) -> bool:
        return self.severity is Severity.ERROR

    def as_dict(self) -> dict:
        """The finding's own fields and its severity (a range's lost offsets are the output's: columns.REGION)."""
        out = self._asdict()
        del out["lost_offsets"]
        out["severity"] = self.severity.value
        return out
