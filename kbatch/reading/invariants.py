"""The invariants a careful reader relies on beyond framing and checksums (``verify-crc --deep``).

Each check is one function over decoded batches and yields findings with the
position of the field concerned.  The rules are Kafka's: DefaultRecordBatch
(lastOffsetDelta, maxTimestamp, producer fields, attributes),
AbstractLegacyRecordBatch (wrapper timestamps), and the log's own order
(Log.analyzeAndValidateRecords: offsets only go up).  A v2 batch's rules are
written once, on plain values, in :mod:`kbatch.kernels.recordwalk` (compiled where it
can be): the checks here word findings from them, and --deep's fast pass
(kbatch.walk.deep) asks them of batches it makes no object of.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, cast

from kbatch.format.findings import MAX_HELD, Finding
from kbatch.reading.lost import wrapper_not_opened
from kbatch.reading.model import Batch, Record
from kbatch.kernels.batchrules import (
    MAX_RELATIVE_OFFSET,
    NO_PRODUCER_ID,
    last_offset_delta_short,
    max_timestamp_differs,
    offset_order_problem,
    producer_fields_problem,
    segment_range_problem,
    v2_reserved_bits,
)
from kbatch.format.structs import BATCH_HEADER, LEGACY_CODEC_MASK, LEGACY_TIMESTAMP_TYPE_MASK, MESSAGE_V1_HEADER

LEGACY_DEFINED_ATTRIBUTES = {0: LEGACY_CODEC_MASK, 1: LEGACY_CODEC_MASK | LEGACY_TIMESTAMP_TYPE_MASK}


def _header_finding(batch: Batch, code: str, field: str, expected, actual) -> Finding:
    layout = BATCH_HEADER if batch.magic == 2 else MESSAGE_V1_HEADER
    return Finding(code, batch.pos, batch.pos + layout.offsets[field], layout.sizes[field], field,
                   str(expected), str(actual))


def batch_invariants(batch: Batch) -> list[Finding]:
    """Everything that can be checked inside one batch whose records were decoded."""
    if batch.magic == 2:
        return list(_v2_checks(batch))
    if batch.magic in LEGACY_DEFINED_ATTRIBUTES:
        return list(_legacy_checks(batch))
    return []   # magic 3, the proposed layout (kbatch/reading/v3.py): Kafka defines no rules for it to check


def _v2_checks(batch: Batch) -> Iterator[Finding]:
    for rule in V2_BATCH_RULES:
        yield from rule(batch)


def _reserved_bits(batch: Batch) -> Iterator[Finding]:
    if v2_reserved_bits(batch.attributes):
        yield _header_finding(batch, "reserved-bits", "attributes", "bits 7-15 clear",
                              f"0x{batch.attributes & 0xFFFF:04x}")


def _walked_whole(batch: Batch):
    """What the record decoder kept while it walked (kbatch.reading.records.RecordChecks: no object per
    record), when it walked every record: an empty batch keeps its original header fields, and a short one
    is reported already."""
    checks = batch.record_checks
    return checks if checks is not None and checks.decoded and checks.decoded == batch.count else None


def _last_offset_delta(batch: Batch) -> Iterator[Finding]:
    checks = _walked_whole(batch)
    if checks and last_offset_delta_short(batch.base_offset, batch.last_offset_delta, checks.last_offset):
        yield _header_finding(batch, "last-offset-delta-mismatch", "last_offset_delta",
                              f"at least {checks.last_offset - batch.base_offset} (the last record's offsetDelta)",
                              batch.last_offset_delta)


def _offset_delta_order(batch: Batch) -> Iterator[Finding]:
    checks = _walked_whole(batch)
    if not checks:
        return
    for index, pos, size, previous, offset in checks.order_breaks:
        yield _record_finding(batch, pos, size, "offset-delta-order", f"records[{index}].offsetDelta",
                              f"more than {previous}", str(offset))
    if checks.breaks_not_kept:
        yield _record_finding(batch, checks.order_breaks[-1][1], 0, "not-all-kept", "records",
                              f"at most {MAX_HELD} offset-delta-order findings kept per batch",
                              f"{checks.breaks_not_kept} more; checked and counted, not listed")


def _max_timestamp(batch: Batch) -> Iterator[Finding]:
    checks = _walked_whole(batch)
    if checks and max_timestamp_differs(batch.timestamp_type == "CreateTime", batch.max_timestamp,
                                        checks.max_timestamp):
        yield _header_finding(batch, "max-timestamp-mismatch", "max_timestamp",
                              f"{checks.max_timestamp} (the largest record timestamp)", batch.max_timestamp)


def _control_records(batch: Batch) -> Iterator[Finding]:
    # A transaction marker batch holds exactly one record (EndTransactionMarker); KRaft writes several
    # control records in one batch (the bootstrap KRAFT_VERSION + KRAFT_VOTERS, a snapshot's header and footer
    # batches: raft's RecordsIterator/ControlRecord), which is valid.  (A control batch's records are always
    # read into objects: kbatch.reading.records.walk_batch_records.)
    if not _walked_whole(batch):
        return
    records = batch.records or []
    markers = [record for record in records if record.control is not None
               and record.control.type in ("ABORT", "COMMIT")]
    if batch.is_control and markers and len(records) != 1:
        yield _header_finding(batch, "bad-control-record", "records_count",
                              "1 control record (a transaction marker stands alone)", len(records))


def _producer_checks(batch: Batch) -> Iterator[Finding]:
    problem = producer_fields_problem(batch.is_transactional, batch.is_control, batch.producer_id,
                                      batch.producer_epoch, batch.base_sequence)
    if problem == "transactional-without-producer":
        yield _header_finding(batch, problem, "producer_id", "a producerId for a transactional batch", NO_PRODUCER_ID)
    elif problem == "inconsistent-producer-fields":
        actual = f"producerId {batch.producer_id}, epoch {batch.producer_epoch}, baseSequence {batch.base_sequence}"
        yield _header_finding(batch, problem, "producer_id",
                              "a baseSequence and epoch >= 0 with a producerId (LogValidator.validateBatch)", actual)


# Every rule a v2 batch is held to inside itself, once.  verify-crc --deep's fast pass
# (kbatch.kernels.cleanruns.CleanBatches) takes a batch without the full reader only while it checks each of
# these by name (kbatch.kernels.cleanruns.RULES): a rule added here alone turns the fast pass off (kbatch.walk.deep).
V2_BATCH_RULES = (_reserved_bits, _producer_checks, _last_offset_delta, _offset_delta_order, _max_timestamp,
                  _control_records)


def _record_finding(batch: Batch, pos: int, size: int, code: str, field: str, expected: str,
                    actual: str) -> Finding:
    """A finding about the record at ``pos`` (Record.pos: in the file, or inside the decompressed records)."""
    if batch.compressed:
        return Finding(code, batch.pos, batch.payload_pos, batch.payload_size, field, expected, actual, pos)
    return Finding(code, batch.pos, pos, size, field, expected, actual)


def _increasing(batch: Batch, records: list[Record], offsets: list[int], field: str) -> Iterator[Finding]:
    for index in range(1, len(offsets)):
        if offsets[index] <= offsets[index - 1]:
            record = records[index]
            yield _record_finding(batch, record.pos, record.size, "offset-delta-order", f"records[{index}].{field}",
                                  f"more than {offsets[index - 1]}", str(offsets[index]))


def _legacy_checks(batch: Batch) -> Iterator[Finding]:
    defined = LEGACY_DEFINED_ATTRIBUTES[batch.magic]
    if batch.attributes & ~defined & 0xFF:
        yield _header_finding(batch, "reserved-bits", "attributes", f"only bits 0x{defined:02x}",
                              f"0x{batch.attributes & 0xFF:02x}")
    records = batch.record_list or []
    if batch.codec == "none" or not records:
        return
    yield from _increasing(batch, records, [record.offset for record in records], "offset")
    if batch.magic == 1 and batch.timestamp_type == "CreateTime":
        largest = max(cast("list[int]", [record.timestamp for record in records]))   # (magic 1: each has one)
        if largest != batch.max_timestamp:
            yield _header_finding(batch, "max-timestamp-mismatch", "timestamp",
                                  f"{largest} (the largest inner timestamp)", batch.max_timestamp)


def segment_range_checks(batch: Batch, segment_base: int) -> list[Finding]:
    """A batch's offsets against the base offset in its segment's file name (``00000000000000001234.log``).

    Kafka names a segment by the offset of its first batch and keeps every
    offset in it relative to that name: LogSegment.recover calls
    ensureOffsetInRange(batch.lastOffset()), which needs 0 <= lastOffset - base
    <= Integer.MAX_VALUE (AbstractIndex.toRelative).  A batch starting below
    the name is no batch Kafka appended to this segment.  The offset checked
    is the entry's own offset field: a v2 batch's baseOffset, a v0/v1
    message's offset (for a compressed wrapper, its last inner offset, which
    is what the broker rolled and recovered by).
    """
    field = "base_offset" if batch.magic == 2 else "offset"
    problem = segment_range_problem(batch.offset_field, batch.last_offset, segment_base)
    if problem == "below-segment-base":
        return [Finding(problem, batch.pos, batch.pos, 8, field,
                        f"{segment_base} or more (the base offset in the segment's file name)",
                        str(batch.offset_field))]
    if problem == "beyond-segment-range":
        return [Finding(problem, batch.pos, batch.pos, 8, field,
                        f"a last offset at most {segment_base + MAX_RELATIVE_OFFSET} (the file name's base + 2^31-1)",
                        str(batch.last_offset))]
    return []


def breaks_sequence(before_last: int | None, base_offset: int, last_offset: int, next_base: int) -> bool:
    """Whether a batch (``base_offset``..``last_offset``) is an outlier in the offsets its neighbours agree on:
    it jumps up past the batch before it (whose last offset is ``before_last``), and the batch after it goes on
    from that one, at or below the jumper's own last offset.  baseOffset is outside the CRC (DefaultRecordBatch
    covers attributes onwards): one flipped bit there moves a whole intact batch, and the batches after it
    would otherwise all be called overlapping."""
    return before_last is not None and base_offset > before_last + 1 and before_last < next_base <= last_offset


def first_challenged(first_last: int, next_base: int, next_last: int) -> bool:
    """Whether the batch after the first (``next_base``..``next_last``; the first's last offset: ``first_last``)
    may yet show the first an outlier: it starts at or below the first's last offset and ends below it, so a
    batch after it may go on from it and still lie at or below the first's offsets (:func:`first_breaks_sequence`).
    OffsetOrder holds such a batch until the batch after it tells which of the two is off; any other batch at or
    below the first overlaps it, and the order goes on from the higher of the two.  (salvage holds every batch at
    or below the first: one it drops for overlapping leaves the first unjudged, and the next may still outvote it.)"""
    return next_base <= first_last and next_last < first_last


def first_breaks_sequence(first_last: int, next_base: int, next_last: int, after_base: int) -> bool:
    """Whether the first batch (whose last offset is ``first_last``) is the outlier: no batch before it, so the two
    after it judge it, as a batch's two neighbours judge it in :func:`breaks_sequence`.  The batch after it
    (``next_base``..``next_last``) starts at or below its last offset (:func:`first_challenged`), and the one after
    that (at ``after_base``) goes on from that batch and is still at or below the first's last offset: two batches
    that agree against one.  With only one batch after it, nothing tells which of the two is off: the first stands,
    and the one after it overlaps it."""
    return first_challenged(first_last, next_base, next_last) and next_last < after_base <= first_last


def first_outlier_finding(pos: int, magic: int, base_offset: int, after: tuple[int, int], after_next: int) -> Finding:
    """The error about a first batch whose baseOffset breaks the sequence the batches after it agree on (``after``:
    the base and last offset of the batch after it; ``after_next``: the base offset of the one after that)."""
    field = "base_offset" if magic == 2 else "offset"
    return Finding("offset-outlier", pos, pos, 8, field,
                   f"below {after[0]} (the batches after it go on {after[0]}..{after[1]} → {after_next})",
                   f"{base_offset}: baseOffset {base_offset} is above the sequence the batches after it agree on, "
                   f"{after[0]}..{after[1]} → {after_next} (baseOffset lies outside the CRC)")


def outlier_finding(pos: int, magic: int, base_offset: int, before: tuple[int, int], next_base: int) -> Finding:
    """The error about a batch whose baseOffset breaks the sequence (``before``: the base and last offset of
    the batch before it; ``next_base``: the base offset of the one after)."""
    field = "base_offset" if magic == 2 else "offset"
    return Finding("offset-outlier", pos, pos, 8, field,
                   f"{before[1] + 1} (after {before[0]}..{before[1]}; the batch after it starts at {next_base})",
                   f"{base_offset}: baseOffset {base_offset} breaks the sequence {before[0]}..{before[1]} → "
                   f"{before[1] + 1} (baseOffset lies outside the CRC)")


@dataclass
class _Jump:
    """A batch that jumped up past the one before it: an outlier if the next batch goes on from before it."""

    pos: int
    magic: int
    base_offset: int
    last_offset: int
    before: tuple[int, int]     # the base and last offset of the batch before it
    before_pos: int
    gap: Finding | None         # its offset-gap, held until the next batch shows it is no outlier


@dataclass(frozen=True)
class _Challenger:
    """A batch after the first that lies within the first's offsets (:func:`first_challenged`): the batch after it
    tells which of the two is off."""

    pos: int
    base_offset: int
    last_offset: int
    overlap: Finding            # its offset-overlap, held until the next batch shows the first no outlier


@dataclass(frozen=True)
class _First:
    """The walk's first batch (no batch before it), while every batch since has lain within its offsets: the
    batches after it may yet show it an outlier (:func:`first_breaks_sequence`).  (Frozen: a copy of the order,
    _Found.goes_on_from's, shares it.)"""

    pos: int
    magic: int
    base_offset: int
    last_offset: int
    challenger: _Challenger | None = None   # the batch just before, when it lies within the first's offsets


class OffsetOrder:
    """Across batches, offsets only go up: a gap is legal (compaction, aborted data), an overlap is not.

    A batch that jumps up while the batch after it goes on from the one before it is the one to blame
    (:func:`breaks_sequence`): the next batch reports it (an offset-outlier error at the jumper's position)
    and the order goes on as if the jumper were not there.  The gap the jumper opened is its consequence,
    not news of its own: it is held until the next batch tells (:meth:`check`), and said only when the
    jumper is no outlier -- with the next batch's findings, or, when batches walked elsewhere went on from
    the jumper (:meth:`walked_past`), in :attr:`settled`; at the end of the input, :meth:`end` says it.

    The walk's first batch has no batch before it: the two after it judge it, as salvage judges it (a batch
    after it within its offsets, :func:`first_challenged`, and one going on from that batch, still within
    them: :func:`first_breaks_sequence`).  Then the batch after the second reports it (an offset-outlier error
    at the first's position, :func:`first_outlier_finding`) and the order goes on from the second, as if the
    first were not there.  The second's offset-overlap is held as a jumper's gap is, and said only when the first
    is no outlier (across a damaged range too: salvage judges across it); with only one batch after the first,
    nothing tells which is off: the first stands and the second overlaps it.
    """

    def __init__(self):
        self.last_offset: int | None = None
        self.last_pos: int | None = None
        self.last_base: int | None = None
        self.jump: _Jump | None = None   # the batch just before, when it jumped up
        self.first: _First | None = None   # the first batch, while the batches after it may show it an outlier
        self.first_held = False   # whether a batch was ever held against the first (first_challenged)
        self.damage: tuple[int, int] | None = None   # (pos, size) of a damaged range since the last batch
        self.settled: list[Finding] = []   # held gaps (and overlaps) told since, for the walk to yield (take_settled)

    def check(self, batch: Batch) -> list[Finding]:
        field = "base_offset" if batch.magic == 2 else "offset"
        jump, self.jump = self.jump, None
        first, self.first = self.first, None
        damage, self.damage = self.damage, None
        found = []
        outlier = None
        if first is not None and first.challenger is not None:
            challenger, first = first.challenger, replace(first, challenger=None)
            if first_breaks_sequence(first.last_offset, challenger.base_offset, challenger.last_offset,
                                     batch.base_offset):
                found.append(first_outlier_finding(first.pos, first.magic, first.base_offset,
                                                   (challenger.base_offset, challenger.last_offset), batch.base_offset))
                self.last_base, self.last_offset = challenger.base_offset, challenger.last_offset
                self.last_pos = challenger.pos
                first = None
            else:
                found.append(challenger.overlap)
        elif jump is not None and breaks_sequence(jump.before[1], jump.base_offset, jump.last_offset,
                                                batch.base_offset):
            found.append(outlier_finding(jump.pos, jump.magic, jump.base_offset, jump.before, batch.base_offset))
            self.last_base, self.last_offset = jump.before
            self.last_pos = jump.before_pos
            outlier = jump
        elif jump is not None and jump.gap is not None:
            found.append(jump.gap)
        before, before_pos, before_base = self.last_offset, self.last_pos, self.last_base
        problem = self.problem(_first_offset(batch))
        self.take(batch.last_offset, batch.pos, batch.base_offset)
        if problem == "offset-overlap":
            overlap = Finding(problem, batch.pos, batch.pos, 8, field,
                              f"more than {before} (the last offset of the batch at {before_pos})",
                              str(batch.base_offset))
            if first is not None and first_challenged(first.last_offset, batch.base_offset, batch.last_offset):
                self.first = replace(first, challenger=_Challenger(batch.pos, batch.base_offset, batch.last_offset,
                                                                    overlap))
                self.first_held = True
            else:
                found.append(overlap)
        elif problem == "offset-gap" and before is not None and before_pos is not None:   # (a gap has a batch before)
            gap = _gap_finding(batch, field, before, damage, outlier)
            self.jump = _Jump(batch.pos, batch.magic, batch.base_offset, batch.last_offset,
                              (before_base if before_base is not None else before, before), before_pos, gap)
        elif before is None:   # the first batch: the batches after it may yet show it an outlier
            self.first = _First(batch.pos, batch.magic, batch.base_offset, batch.last_offset)
        return found

    def damaged_range(self, finding: Finding) -> None:
        """A range of bytes that reads as no entry lies between the last batch and the next.  A gap held for
        the last batch is told before it (in :attr:`settled`), so findings stay in file order.  (A batch held
        against the first stays held: the batch after the range still tells which of the two is off.)"""
        if not finding.owns_bytes:
            return
        if self.jump is not None and self.jump.gap is not None:
            self.settled.append(self.jump.gap)
            self.jump.gap = None
        if finding.is_damage and self.damage is None:
            self.damage = (finding.pos, finding.size)

    def problem(self, base_offset: int) -> str | None:
        """What a batch starting at ``base_offset`` is after the batches so far: the finding's code, or None."""
        return offset_order_problem(self.last_offset, base_offset)

    def take(self, last_offset: int, pos: int, base_offset: int | None = None) -> None:
        """Go on past a batch (at ``pos``) whose last offset is ``last_offset``."""
        if self.last_offset is None or last_offset > self.last_offset:
            self.last_offset, self.last_pos, self.last_base = last_offset, pos, base_offset

    def continue_from(self, other: "OffsetOrder") -> None:
        """Take the state a walk over later batches (a part of the file) ended in."""
        self.last_offset, self.last_pos, self.last_base, self.jump, self.first, self.damage = \
            other.last_offset, other.last_pos, other.last_base, other.jump, other.first, other.damage

    def walked_past(self, last_offset: int | None, last_pos: int | None, last_base: int | None) -> None:
        """Batches walked elsewhere (kbatch.walk.deep) went on in order: no jump is pending any more, and a
        gap held for the last one is told (that walk took the next batch only above the jumper's offsets); nor
        is the first batch judged any more, and an overlap held against it is told (that walk took the next
        batch only above the first's offsets)."""
        if self.jump is not None and self.jump.gap is not None:
            self.settled.append(self.jump.gap)
        if self.first is not None and self.first.challenger is not None:
            self.settled.append(self.first.challenger.overlap)
        self.last_offset, self.last_pos, self.last_base = last_offset, last_pos, last_base
        self.jump = self.first = self.damage = None

    def take_settled(self) -> list[Finding]:
        """The held gaps told since last asked, in file order (each before the batches walked after it)."""
        settled, self.settled = self.settled, []
        return settled

    def end(self) -> list[Finding]:
        """At the end of the input: the gap held for the last batch (no batch after it to make it an outlier),
        or the overlap of the batch held against the first (only one batch after the first: the first stands)."""
        jump, self.jump = self.jump, None
        first, self.first = self.first, None
        if jump is not None and jump.gap is not None:
            return [jump.gap]
        return [first.challenger.overlap] if first is not None and first.challenger is not None else []

    def holds_gap_of(self, batch: Batch) -> bool:
        """Whether ``batch``'s offset-gap is held, to be told after the batch (a walk keeps such a batch)."""
        return self.jump is not None and self.jump.gap is not None and self.jump.pos == batch.pos

    def holds_finding_of(self, batch: Batch) -> bool:
        """Whether a finding about ``batch`` may be told after it, so a walk keeps the batch: its offset-gap
        (:meth:`holds_gap_of`), its offset-overlap held against the first batch, or, for the first batch, the
        offset-outlier the batches after it may yet show."""
        first = self.first
        return self.holds_gap_of(batch) or first is not None and (
            first.pos == batch.pos or first.challenger is not None and first.challenger.pos == batch.pos)


def _first_offset(batch: Batch) -> int:
    """Where a batch's offsets start, for the order: a wrapper whose records could not be read says only its
    last, and its first is inferred from the batch before (kbatch.reading.lost): no gap to call absent."""
    lost = batch.lost_offsets
    if lost is not None and wrapper_not_opened(batch) and lost.first is not None and lost.last == batch.offset_field:
        return lost.first
    return batch.base_offset


def _gap_finding(batch: Batch, field: str, before: int, damage: tuple[int, int] | None,
                 outlier: _Jump | None) -> Finding | None:
    """The offset-gap between the last offset before (``before``) and ``batch``; None when the offsets missing
    are just as many as the outlier just dropped holds: its own records, whose header no longer says where
    they are (the outlier's finding says it once)."""
    missing = batch.base_offset - before - 1
    held = None if outlier is None else outlier.last_offset - outlier.base_offset + 1
    if held == missing:
        return None
    if damage is not None:   # the offsets may well be in the bytes that do not read: nobody can call them absent
        where = (f"offsets {before + 1}..{batch.base_offset - 1} fall in the damaged range at pos "
                 f"{damage[0]} ({damage[1]} bytes)")
    elif outlier is not None:
        where = (f"{missing} offsets absent, where the batch at pos {outlier.pos}, whose baseOffset is off, holds "
                 f"{held}")
    else:
        where = f"{missing} offsets absent"
    return Finding("offset-gap", batch.pos, batch.pos, 8, field, str(before + 1), f"{batch.base_offset} ({where})")
