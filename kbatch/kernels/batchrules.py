"""The rules of a v2 batch, on plain values, and its sequence arithmetic (DefaultRecordBatch).

Written once: kbatch.reading.invariants words the full reader's findings from them, and
:class:`kbatch.kernels.cleanruns.CleanBatches` asks them of the batches it makes no object of (C-level
declarations in ``batchrules.pxd``).  Compiled by Cython where it can be; plain Python otherwise.
"""

from __future__ import annotations

import struct

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

from kbatch.format.structs import (
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)

_INT_MAX = cython.declare(cython.longlong, 2**31 - 1)

_ALL_ONES = cython.declare(cython.ulonglong, 2**64 - 1)


@cython.final
@cython.cclass
class HeaderField:
    """One integer field of a fixed-size layout (kbatch.format.structs), read where it lies in a buffer: big-endian,
    signed or not as the declaration's struct format says.  Compiled, reading a header's fields this way
    spares the tuple of Python ints unpack_from makes of all of them.  (Its C attributes are declared in
    batchrules.pxd.)"""

    def __init__(self, layout, name: str):
        self.at, self.size = layout.offsets[name], layout.sizes[name]
        field_format = dict(layout.fields)[name]
        self.signed = field_format.islower()   # struct: "q", "l", "h", "b" signed; "L" not
        self._unpack_from = struct.Struct(">" + field_format).unpack_from

    @cython.ccall
    @cython.exceptval(check=False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def read(self, data: cython.const[cython.uchar][::1], start: cython.Py_ssize_t) -> cython.longlong:
        """The field of the layout lying at ``data[start:]`` (the caller has checked the layout fits)."""
        if not cython.compiled:   # the same number, as plain Python reads it fastest (no slice of data)
            return self._unpack_from(data, start + self.at)[0]
        value: cython.ulonglong = 0
        k: cython.int
        for k in range(self.size):
            value = (value << 8) | data[start + self.at + k]
        if self.signed and value >> (8 * self.size - 1):   # the sign bit set: -(the complement) - 1
            return -cython.cast(cython.longlong, ~value & (_ALL_ONES >> (64 - 8 * self.size))) - 1
        return cython.cast(cython.longlong, value)



@cython.final
@cython.cclass
class V2Header:
    """Every field of a v2 batch's header (BATCH_HEADER) as a :class:`HeaderField`: the one set the kernels read
    a header with where it lies (cleanruns.py, jsonl.py; declared in batchrules.pxd)."""

    def __init__(self):
        self.base_offset = HeaderField(BATCH_HEADER, "base_offset")
        self.batch_length = HeaderField(BATCH_HEADER, "batch_length")
        self.partition_leader_epoch = HeaderField(BATCH_HEADER, "partition_leader_epoch")
        self.magic = HeaderField(BATCH_HEADER, "magic")
        self.crc = HeaderField(BATCH_HEADER, "crc")
        self.attributes = HeaderField(BATCH_HEADER, "attributes")
        self.last_offset_delta = HeaderField(BATCH_HEADER, "last_offset_delta")
        self.base_timestamp = HeaderField(BATCH_HEADER, "base_timestamp")
        self.max_timestamp = HeaderField(BATCH_HEADER, "max_timestamp")
        self.producer_id = HeaderField(BATCH_HEADER, "producer_id")
        self.producer_epoch = HeaderField(BATCH_HEADER, "producer_epoch")
        self.base_sequence = HeaderField(BATCH_HEADER, "base_sequence")
        self.records_count = HeaderField(BATCH_HEADER, "records_count")


V2_HEADER = V2Header()

NO_SEQUENCE = -1   # a batch's baseSequence (a record's sequence) when the producer is not idempotent


def last_sequence(base_sequence, last_offset_delta):
    """DefaultRecordBatch.lastSequence (:func:`v2_last_sequence`), of a batch that may have no baseSequence."""
    if base_sequence is None:
        return NO_SEQUENCE
    return v2_last_sequence(base_sequence, last_offset_delta)


@cython.ccall
@cython.exceptval(check=False)
def v2_last_sequence(base_sequence: cython.longlong, last_offset_delta: cython.longlong) -> cython.longlong:
    """DefaultRecordBatch.lastSequence: only -1 means 'no sequence'; it counts lastOffsetDelta on."""
    if base_sequence == _NO_SEQUENCE:
        return _NO_SEQUENCE
    return increment_sequence(base_sequence, last_offset_delta)


@cython.ccall
@cython.exceptval(check=False)
def increment_sequence(sequence: cython.longlong, increment: cython.longlong) -> cython.longlong:
    """DefaultRecordBatch.incrementSequence: producer sequences wrap from Integer.MAX_VALUE to 0."""
    if sequence > _INT_MAX - increment:
        return increment - (_INT_MAX - sequence) - 1
    return sequence + increment


# -- The rules of a v2 batch, on plain values ---------------------------------------------------------
#
# What Kafka holds a v2 batch to beyond its framing and CRC, one function a rule: DefaultRecordBatch
# (attributes, producer fields, lastOffsetDelta, maxTimestamp), the log's own order
# (Log.analyzeAndValidateRecords: offsets only go up) and a segment's range (LogSegment.recover).
# kbatch.reading.invariants words the full reader's findings from them; CleanBatches below asks them of batches
# it makes no object of.  An offset is a Python int where it can pass Java's long (a batch's last offset is
# baseOffset + lastOffsetDelta, counted exactly).

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
# Bits of the v2 attributes Kafka defines (codec 0-2, timestampType 3, transactional 4, control 5,
# deleteHorizon 6); DefaultRecordBatch only ever reads the low byte, the rest is reserved.
V2_DEFINED_ATTRIBUTES = 0x7F
# AbstractIndex.toRelative: an index stores offsets as int32 relative to the segment's base offset.
MAX_RELATIVE_OFFSET = 2**31 - 1
# The same numbers as C constants where compiled (a Python global is looked up, and boxed, at every use).
_V2_DEFINED_ATTRIBUTES = cython.declare(cython.longlong, V2_DEFINED_ATTRIBUTES)
_NO_PRODUCER_ID = cython.declare(cython.longlong, NO_PRODUCER_ID)
_NO_PRODUCER_EPOCH = cython.declare(cython.longlong, NO_PRODUCER_EPOCH)
_NO_SEQUENCE = cython.declare(cython.longlong, NO_SEQUENCE)
_CODEC_MASK = cython.declare(cython.longlong, COMPRESSION_CODEC_MASK)
_TIMESTAMP_TYPE_MASK = cython.declare(cython.longlong, TIMESTAMP_TYPE_MASK)
_TRANSACTIONAL_MASK = cython.declare(cython.longlong, TRANSACTIONAL_FLAG_MASK)
_CONTROL_MASK = cython.declare(cython.longlong, CONTROL_FLAG_MASK)


@cython.ccall
@cython.exceptval(check=False)
def v2_reserved_bits(attributes: cython.longlong) -> cython.longlong:
    """The bits of a v2 batch's attributes that Kafka defines no meaning for and that are set (0: none)."""
    return attributes & ~_V2_DEFINED_ATTRIBUTES & 0xFFFF


@cython.ccall
def producer_fields_problem(is_transactional: cython.bint, is_control: cython.bint, producer_id: cython.longlong,
                            producer_epoch: cython.longlong, base_sequence: cython.longlong):
    """What Kafka would object to in a batch's producerId, producerEpoch and baseSequence: a code, or None.

    Only producerId decides whether a batch is idempotent (RecordBatch.hasProducerId): with producerId -1
    the broker ignores epoch and sequence, and writes such batches itself (the group and share coordinators'
    CoordinatorRuntime builds every batch with producerId -1, epoch -1, baseSequence 0; some clients write
    epoch 0, sequence 0), so they are no finding. With a producerId, LogValidator.validateBatch refuses a
    negative baseSequence ("Invalid sequence number"), and InitProducerId never hands out a negative epoch.
    """
    if is_transactional and producer_id == _NO_PRODUCER_ID:
        return "transactional-without-producer"
    if is_control or producer_id == _NO_PRODUCER_ID:
        return None  # markers are written by the coordinator: producer id and epoch set, no sequence
    if base_sequence < 0 or producer_epoch < 0:
        return "inconsistent-producer-fields"
    return None


@cython.ccall
def last_offset_delta_short(base_offset, last_offset_delta, last_record_offset) -> cython.bint:
    """The header's lastOffsetDelta falls short of the last record's offset.

    The log cleaner keeps a batch's original lastOffsetDelta when it removes its last records
    (MemoryRecords.filterTo / writeEmptyHeader keep the producer's last sequence), so the last record's
    offsetDelta may be below lastOffsetDelta, never above it.
    """
    return last_record_offset - base_offset > last_offset_delta


@cython.ccall
@cython.exceptval(check=False)
def max_timestamp_differs(create_time: cython.bint, header_max_timestamp: cython.longlong,
                          records_max_timestamp: cython.longlong) -> cython.bint:
    """A CreateTime batch's maxTimestamp is its largest record timestamp (LogAppendTime: the broker's clock)."""
    return create_time and records_max_timestamp != header_max_timestamp


@cython.ccall
def segment_range_problem(offset_field, last_offset, segment_base):
    """A batch's offsets against the base offset in its segment's file name: the finding's code, or None.

    The offset checked is the entry's own offset field (a v2 batch's baseOffset; see
    kbatch.reading.invariants.segment_range_checks).
    """
    if offset_field < segment_base:
        return "below-segment-base"
    if last_offset - segment_base > MAX_RELATIVE_OFFSET:
        return "beyond-segment-range"
    return None


@cython.ccall
def offset_order_problem(last_offset, base_offset):
    """What a batch starting at ``base_offset`` is after batches whose last offset is ``last_offset`` (None:
    none before): a gap is legal (compaction, aborted data) but reported, an overlap is not.  The finding's
    code, or None."""
    if last_offset is not None:
        if base_offset <= last_offset:
            return "offset-overlap"
        if base_offset > last_offset + 1:
            return "offset-gap"
    return None


@cython.ccall
@cython.exceptval(check=False)
def framed_v2_batch(magic: cython.longlong, batch_length: cython.longlong, least: cython.longlong,
                    most: cython.longlong) -> cython.bint:
    """A v2 batch framed as the full reader wants it, for a run that takes batches the reader need not read:
    magic 2 and a batch length within kbatch.format.framing.size_bounds(2, ...), which the caller hands in as
    ``least`` and ``most`` (no bound is written here)."""
    return magic == 2 and least <= batch_length <= most
