"""What the reader hands out: batches and records, decoded, with their positions.

One :class:`Batch` stands for one log entry of a segment, whatever its magic:
a v2 record batch, or a v0/v1 message (an uncompressed message holds one
record; a compressed "wrapper" message holds its inner messages as records).
Fields that a magic does not have are ``None``.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, fields
from typing import TYPE_CHECKING, Iterator, NamedTuple, Protocol

from kbatch.format.findings import Finding
# The sequence rules, compiled: used from here (increment_sequence by importers of this module).
from kbatch.kernels.batchrules import NO_SEQUENCE, increment_sequence, last_sequence  # noqa: F401

if TYPE_CHECKING:   # for the annotations only: reading a segment does not load the decoders
    from kbatch.messages.topics import Decoded

TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
NO_TIMESTAMP_TYPE = "NoTimestampType"  # magic 0 (TimestampType.NO_TIMESTAMP_TYPE)


class LostOffsets(NamedTuple):
    """The offsets a damaged entry or range held: ``first``..``last`` (None: nothing tells), and ``how`` that
    is known (kbatch.reading.lost works them out)."""

    first: int | None
    last: int | None
    how: str

    @property
    def none(self) -> bool:
        return self.first is not None and self.last is not None and self.last < self.first

    def span(self) -> str:
        if self.none:
            return "none"
        if self.first is not None and self.first == self.last:
            return str(self.first)
        return f"{'?' if self.first is None else self.first}–{'?' if self.last is None else self.last}"

    def text(self) -> str:
        return f"{self.span()} ({self.how})"


@dataclass(slots=True)
class RecordChecks:
    """What a walk over a batch's records found that ``verify-crc --deep`` checks against the header
    (kbatch.reading.records fills it)."""

    decoded: int                     # records that decoded
    last_offset_delta: int           # the last one's offsetDelta
    last_offset: int                 # ... and its offset (baseOffset + offsetDelta, as Java adds longs)
    max_timestamp: int               # the largest baseTimestamp + timestampDelta
    # (index, pos, size, previous offset, offset) where offsets do not increase; pos as Record.pos
    order_breaks: list = field(default_factory=list)
    breaks_not_kept: int = 0         # order breaks past the first MAX_HELD, counted only


@dataclass(slots=True)
class ControlMarker:
    """The decoded key and value of a control record."""

    key_version: int
    type_id: int
    type: str                       # ABORT, COMMIT, ... or UNKNOWN(n)
    value_version: int | None = None
    coordinator_epoch: int | None = None
    data: dict | None = None        # KRaft types: the value's fields (LeaderChangeMessage, VotersRecord, ...)


@dataclass(slots=True)
class Record:
    offset: int
    timestamp: int | None           # effective: LogAppendTime already applied; None for magic 0
    key: bytes | None
    value: bytes | None
    headers: list[tuple[bytes, bytes | None]]
    pos: int                        # where the record starts (see Batch.compressed)
    size: int
    attributes: int = 0
    sequence: int = NO_SEQUENCE     # v2: baseSequence + offsetDelta
    # v0/v1 only: every message carries its own checksum
    magic: int | None = None
    crc: int | None = None
    crc_valid: bool | None = None
    control: ControlMarker | None = None
    decoded: Decoded | None = None   # an internal topic's key and value read with Kafka's schemas (messages.topics)


class RecordsMadeAsRead(Protocol):
    """A batch's records made a chunk at a time as they are iterated (kbatch.reading.records.RecordStream), in
    place of the reader's list for an output that only iterates."""

    def __iter__(self) -> Iterator[Record]: ...

    def __len__(self) -> int: ...


class ProducerFields(NamedTuple):
    """A v2 batch's producer fields (DefaultRecordBatch: producerId, producerEpoch, baseSequence), which a
    v2 header always has and v0/v1 have not: ``Batch.producer``."""

    id: int
    epoch: int
    base_sequence: int


@dataclass(slots=True)
class Batch:
    pos: int                        # file position of the entry's first byte
    size: int                       # bytes in the file, including the 12-byte offset+size prefix
    magic: int
    length_field: int               # batchLength / message size as stored (may lie: see findings)
    offset_field: int               # baseOffset / message offset as stored (a v1 wrapper's is its last record's)
    base_offset: int
    last_offset: int
    count: int | None               # v2: recordsCount; v0/v1: messages held
    attributes: int
    codec: str
    crc: int
    computed_crc: int
    timestamp_type: str
    base_timestamp: int | None      # v2: baseTimestamp; v1: the message timestamp
    max_timestamp: int | None       # v2: maxTimestamp; v1: the message timestamp
    partition_leader_epoch: int | None = None
    last_offset_delta: int | None = None
    producer_id: int | None = None
    producer_epoch: int | None = None
    base_sequence: int | None = None
    is_transactional: bool = False
    is_control: bool = False
    delete_horizon_ms: int | None = None
    payload_pos: int = 0            # where the records (or a wrapper's value) start in the file
    payload_size: int = 0           # their size in the file (compressed, when compressed)
    decompressed_size: int | None = None
    # The fields above are a batch's header fields (HEADER_FIELDS), what its fixed header and its place in the
    # file give; those below are filled in as it is read, and only ever named.
    _: KW_ONLY
    # A list as the reader walked them; an output that only iterates may have them stand as RecordsMadeAsRead
    records: list[Record] | RecordsMadeAsRead | None = None
    # v2, once its records were walked: what verify-crc --deep compares with the header (records.RecordChecks)
    record_checks: RecordChecks | None = None
    # v2 records walked without Record objects (ReadOptions.record_objects False): their bytes, decompressed,
    # for an output that reads them from the decoder's columns (records.record_chunks)
    record_data: bytes | memoryview | None = None
    # (the columns, their fill count) when one fill walked them all: read again while no walk filled them since
    walked_columns: tuple | None = None
    findings: list[Finding] = field(default_factory=list)
    # The bytes after the fixed header as stored (v2: the records, compressed as they are; v0/v1: key
    # length to the end), kept only when ReadOptions.keep_body asks: what encode-from-json rebuilds from.
    body: bytes | None = None
    # The log start offset of the batch's partition, where a listing knows it: its records below it are deleted
    # (DeleteRecords, retention) and never given to a consumer, though still in the segment.
    log_start_offset: int | None = None
    # A damaged entry's offsets as far as the intact entry before it tells (kbatch.reading.lost.LostOffsets),
    # set by the reader; None for an intact one, whose header says them.
    lost_offsets: LostOffsets | None = None

    @property
    def crc_valid(self) -> bool:
        return self.crc == self.computed_crc

    @property
    def compressed(self) -> bool:
        """True when record positions are inside the decompressed bytes, not the file."""
        return self.codec != "none"

    @property
    def last_sequence(self) -> int:
        """DefaultRecordBatch.lastSequence: only -1 means 'no sequence'; it counts lastOffsetDelta on."""
        return last_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def record_list(self) -> list[Record] | None:
        """``records`` where the reader's list is known to stand: the checks and counts run before any output
        streams them, and a control batch's or a v0/v1 message's are never streamed."""
        assert self.records is None or isinstance(self.records, list)
        return self.records

    @property
    def producer(self) -> ProducerFields | None:
        """The producer fields of a v2 header (``id`` -1: none); None for a v0/v1 message, which has none."""
        if self.producer_id is None or self.producer_epoch is None or self.base_sequence is None:
            return None
        return ProducerFields(self.producer_id, self.producer_epoch, self.base_sequence)

    @property
    def is_damaged(self) -> bool:
        return any(finding.is_damage for finding in self.findings)


# A batch's header fields, in the order Batch takes them (its parameters before the keyword-only ones): what
# kbatch.reading.v2.batch_fields gives for a v2 header, each by its name, and what the compiled line writer
# (kbatch.kernels.jsonl.fields_json) writes a clean batch's line from without a Batch.
HEADER_FIELDS = tuple(each.name for each in fields(Batch) if not each.kw_only)
