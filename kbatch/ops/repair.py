"""Mending damaged segments without losing a byte of the original.

Two tools, both planned from one pass of the reader:

* :func:`plan_repairs` (``kbatch repair-length``): every length field that
  lies, with the value a CRC proves, and the tail actions Kafka's own log
  recovery would take (cut a partial batch, a zero-filled tail, trailing
  garbage).  A length no CRC proves is reported and left alone; a batch
  whose CRC fails at its own length is damaged inside, which no length
  repair mends.  :func:`write_repaired` then streams a copy with exactly
  the planned changes.
* :func:`salvage` (``kbatch salvage``): copy every entry whose CRC
  verifies, in order, skipping damaged ranges; offsets are never renumbered.

Neither ever writes to its input: output goes to a new file, atomically
(:func:`kbatch.files.outputs.write_atomically`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Iterator

from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS
from kbatch.reading.invariants import (breaks_sequence, first_breaks_sequence, first_outlier_finding, outlier_finding,
                                      segment_range_checks)
from kbatch.reading.lost import entry_lost_offsets, range_lost_offsets
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.format.structs import LOG_OVERHEAD, LOG_ENTRY_PREFIX
from kbatch.walk.engine import each, entries

if TYPE_CHECKING:
    from kbatch.reading.summary import FileSummary

_COPY_CHUNK = 4 * 1024 * 1024
_SIZE_FIELD = slice(LOG_ENTRY_PREFIX.offsets["size"], LOG_ENTRY_PREFIX.offsets["size"] + 4)


@dataclass(frozen=True)
class Action:
    kind: str          # fix-length, cut-tail, crc-damage, unproven
    pos: int           # where the change (or the problem) is
    field: str
    old: str
    new: str
    evidence: str
    applied: bool      # will the write make this change?
    size: int = 0      # fix-length: bytes of the field; cut-tail: bytes cut
    damage: bool = True   # False for what is no damage (a preallocated zero tail)


@dataclass
class RepairPlan:
    size: int
    actions: list[Action] = field(default_factory=list)

    @property
    def changes(self) -> list[Action]:
        return [action for action in self.actions if action.applied]

    @property
    def cut_at(self) -> int | None:
        cuts = [action.pos for action in self.changes if action.kind == "cut-tail"]
        return min(cuts) if cuts else None


def plan_repairs(stream: BinaryIO, *, truncate_tail: bool = False) -> RepairPlan:
    reader = SegmentReader(stream, ReadOptions())
    plan = RepairPlan(reader.size)
    each(entries(reader), lambda batch: plan.actions.extend(_batch_actions(batch)),
         lambda finding: plan.actions.extend(_region_actions(finding, reader.size, truncate_tail)))
    return plan


def _length_finding(batch: Batch) -> Finding | None:
    return next((finding for finding in batch.findings
                 if finding.code == "bad-length" and finding.field in ("batch_length", "size")
                 and finding.pos == batch.pos + _SIZE_FIELD.start), None)


def _batch_actions(batch: Batch) -> Iterator[Action]:
    finding = _length_finding(batch)
    if finding is not None and batch.crc_valid:
        true_length = batch.size - LOG_OVERHEAD
        checksum = CHECKSUMS[batch.magic].name
        yield Action("fix-length", finding.pos, finding.field, finding.actual, str(true_length),
                     f"{checksum} {batch.crc} verifies over exactly these {batch.size} bytes", True, 4)
    elif not batch.crc_valid:
        yield Action("crc-damage", batch.pos, "crc", str(batch.crc), "-",
                     f"the CRC fails at the batch's own length ({batch.computed_crc} computed): its bytes are "
                     "damaged, which no length repair mends", False)


def _region_actions(finding: Finding, size: int, truncate_tail: bool) -> Iterator[Action]:
    if finding.code == "truncated-while-reading":   # nothing can be written from a file that is changing
        yield Action("file-cut", finding.pos, "file", finding.expected, finding.actual,
                     "the plan covers the bytes read before the cut; rerun on a copy that holds still", False)
        return
    if not finding.owns_bytes:
        return
    at_tail = finding.pos + finding.size == size
    if finding.code == "zero-tail":
        yield Action("cut-tail", finding.pos, "tail", f"{finding.size} zero bytes", "cut",
                     "a preallocated segment's unused end (not data)", truncate_tail, finding.size, damage=False)
    elif finding.code == "truncated":
        yield Action("cut-tail", finding.pos, "entry", f"{finding.size} bytes of a partial entry", "cut",
                     f"{finding.expected}; {finding.actual} (Kafka's log recovery cuts it)", truncate_tail,
                     finding.size)
    elif at_tail:
        yield Action("cut-tail", finding.pos, "tail", f"{finding.size} bytes that are no entry", "cut",
                     "trailing garbage: no entry with a valid CRC follows", truncate_tail, finding.size)
    else:
        yield Action("unproven", finding.pos, "entry", f"{finding.size} bytes", "-",
                     "no length makes a CRC verify here; left alone (kbatch salvage skips them)", False,
                     finding.size)


def write_repaired(stream: BinaryIO, plan: RepairPlan) -> Iterator[bytes]:
    """The input's bytes with the planned length fields patched and the tail cut, in chunks."""
    end = plan.cut_at if plan.cut_at is not None else plan.size
    patches = sorted((action.pos, int(action.new)) for action in plan.changes if action.kind == "fix-length")
    position = 0
    for patch_pos, value in patches:
        if patch_pos + 4 > end:
            break
        yield from _copy(stream, position, patch_pos)
        yield value.to_bytes(4, "big", signed=True)
        position = patch_pos + 4
    yield from _copy(stream, position, end)



def verify_written(path: str) -> tuple[FileSummary, list[Finding]]:
    """Read a written copy back as ``verify-crc`` reads it: its summary and every finding."""
    import os

    from kbatch.ops.verify import verify_stream
    from kbatch.reading.reader import open_input
    from kbatch.reading.summary import FileSummary

    summary = FileSummary(path, os.path.getsize(path))
    with open_input(path) as stream:
        findings = list(verify_stream(stream, summary))
    return summary, findings

class InputCut(Exception):
    """The input ended early while it was copied: it was cut after the plan was made."""


def _copy(stream: BinaryIO, start: int, stop: int) -> Iterator[bytes]:
    stream.seek(start)
    while start < stop:
        chunk = stream.read(min(_COPY_CHUNK, stop - start))
        if not chunk:
            raise InputCut(f"the input ended at byte {start} while it was copied (the plan read {stop})")
        start += len(chunk)
        yield chunk


# -- salvage ---------------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    pos: int
    size: int
    reason: str
    offsets: str        # the offsets lost, as far as the neighbours tell


@dataclass
class SalvageReport:
    size: int
    kept: int = 0
    kept_records: int = 0
    lengths_fixed: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    dropped_zero_tail: int = 0


def salvage(stream: BinaryIO, report: SalvageReport, segment_base: int | None = None) -> Iterator[bytes]:
    """Every entry whose CRC verifies, in order (a lying length corrected); what is skipped goes in ``report``.

    The copy is a segment Kafka loads as it stands and that verifies with ``--deep``, so a batch is also
    dropped for its offsets (baseOffset lies outside the CRC: one flipped bit moves a whole intact batch),
    every batch alike, the first too:

    * against ``segment_base``, the base offset in the segment's file name (None: no such name): an offset
      below it, or a last offset more than 2^31-1 past it (invariants.segment_range_checks, the rule
      verify-crc --deep holds each batch to: LogSegment.recover calls ensureOffsetInRange(batch.lastOffset()),
      whose LogSegmentOffsetOverflowException makes LogLoader split the segment, LocalLog.splitOverflowedSegment);
    * against its neighbours, two batches that agree against one: a batch whose baseOffset breaks the sequence
      the batch before it and the one after it agree on (invariants.breaks_sequence); the first batch, which
      has none before it, when the two batches after it agree with each other and both lie at or below its
      offsets (invariants.first_breaks_sequence); with only one batch after the first to tell, the first
      stands;
    * a batch at or below an offset kept (offset-overlap) once the batches around it have not made it the one
      kept.

    Each kept batch waits for the next one, which tells (the first waits for two).  The offsets each skipped
    range held are inferred once the batch kept after it is known (kbatch.reading.lost); a batch dropped for
    its offsets is said to have lost those between the batches kept around it, not those its header says.
    """
    reader = SegmentReader(stream, ReadOptions())
    report.size = reader.size
    last_kept: int | None = None
    kept_before: tuple[int, int] | None = None   # base and last offset of the batch kept before the held one
    held: tuple[Batch, bytes] | None = None      # the batch kept last, not yet written
    # a batch at or below the held first batch, until the batch after it tells which of the two is off; and how
    # many skipped ranges were waiting when it came
    challenger: tuple[Batch, bytes, int] | None = None
    # skipped ranges, until the next kept offset is known: (pos, size, why, the damaged entry or None, or the
    # offsets already said; for a range or a batch dropped for its offsets, why its offsets are the neighbours')
    waiting: list[tuple[int, int, str, Batch | None | str, str | None]] = []

    def settle(next_base: int | None) -> None:
        for pos, size, reason, entry, why in waiting:
            if isinstance(entry, str):
                offsets = entry
            elif entry is None:
                offsets = range_lost_offsets(last_kept, next_base, why,
                                             None if why is None else segment_base).text()
            else:
                offsets = entry_lost_offsets(entry, last_kept, next_base).text()
            report.skipped.append(Skipped(pos, size, reason, offsets))
        waiting.clear()

    def misplaced(batch: Batch, reason: str) -> None:
        """A batch whose CRC verifies, dropped for its offsets: its neighbours say what it lost."""
        waiting.append((batch.pos, batch.size, reason, None, _MISPLACED))

    def release(next_base: int | None) -> Iterator[bytes]:
        """Write the held batch, unless the batch after it (at ``next_base``) shows its baseOffset wrong."""
        nonlocal held, last_kept
        if held is None:
            return
        batch, data = held
        held = None
        if next_base is not None and kept_before is not None and \
                breaks_sequence(kept_before[1], batch.base_offset, batch.last_offset, next_base):
            finding = outlier_finding(batch.pos, batch.magic, batch.base_offset, kept_before, next_base)
            lost = range_lost_offsets(kept_before[1], next_base, _MISPLACED)
            report.skipped.append(Skipped(batch.pos, batch.size, f"{finding.code}: {finding.actual}", lost.text()))
            last_kept = kept_before[1]
            return
        report.kept += 1
        report.kept_records += max(batch.count or 0, 0)
        if _length_finding(batch) is not None:
            report.lengths_fixed += 1
        yield data

    def challenge(next_base: int | None) -> None:
        """The batch after the challenger (at ``next_base``; None: none) tells which of the first batch and the
        challenger, the batch after it that lies at or below it, is off."""
        nonlocal held, challenger, last_kept
        assert held is not None and challenger is not None
        first, (second, data, mark) = held[0], challenger
        challenger = None
        if next_base is None or \
                not first_breaks_sequence(first.last_offset, second.base_offset, second.last_offset, next_base):
            misplaced(second, _overlap(second, last_kept))
            return
        finding = first_outlier_finding(first.pos, first.magic, first.base_offset,
                                        (second.base_offset, second.last_offset), next_base)
        later = waiting[mark:]   # the ranges after the challenger lie between it and the batch at next_base
        del waiting[mark:]
        last_kept = None
        settle(second.base_offset)
        waiting.extend(later)
        lost = range_lost_offsets(None, second.base_offset, _MISPLACED, segment_base)
        report.skipped.append(Skipped(first.pos, first.size, f"{finding.code}: {finding.actual}", lost.text()))
        held = (second, data)
        last_kept = second.last_offset

    def read_whole(item: Batch) -> bytes | None:
        """The batch's bytes, a lying length corrected; None when the file was cut inside it while it was read."""
        data = bytearray(reader.read_bytes(item.pos, item.size))
        if len(data) < item.size:   # cut while it was read, after its header: the reader tells where it ends
            waiting.append((item.pos, len(data), "truncated: the file was cut inside this batch while it was read",
                            f"{item.base_offset}–{item.last_offset} (its header)", None))
            return None
        if _length_finding(item) is not None:
            data[_SIZE_FIELD] = (item.size - LOG_OVERHEAD).to_bytes(4, "big", signed=True)
        return bytes(data)

    for item in entries(reader):
        if isinstance(item, Finding):
            if item.code == "zero-tail":
                report.dropped_zero_tail = item.size
            elif item.code == "truncated-while-reading":
                report.skipped.append(Skipped(item.pos, 0, f"{item.code}: {item.actual} (it held {item.expected})",
                                              "all after it, if any"))
            elif item.owns_bytes:
                waiting.append((item.pos, item.size, f"{item.code}: {item.actual}", None, None))
            continue
        if not item.crc_valid:
            waiting.append((item.pos, item.size, f"crc-mismatch: stored {item.crc}, computed {item.computed_crc}",
                            item, None))
            continue
        if segment_base is not None:
            out_of_range = segment_range_checks(item, segment_base)
            if out_of_range:   # no batch of this segment, whatever its neighbours say
                finding = out_of_range[0]
                misplaced(item, f"{finding.code}: found {finding.actual}, expected {finding.expected}")
                continue
        if challenger is not None:
            challenge(item.base_offset)
        if held is not None and report.kept == 0 and item.base_offset <= held[0].last_offset:
            # at or below the first batch: the batch after it tells which of the two is off
            data = read_whole(item)
            if data is not None:
                challenger = (item, data, len(waiting))
            continue
        if held is not None:
            previous = (held[0].base_offset, held[0].last_offset)
            yield from release(item.base_offset)
            if last_kept == previous[1]:   # written, not dropped: it is the one before the next
                kept_before = previous
        if last_kept is not None and item.base_offset <= last_kept:
            # offsets only go up: a batch at or below the last kept offset (a flipped baseOffset bit, most
            # likely) would make the copy fail verify-crc --deep
            misplaced(item, _overlap(item, last_kept))
            continue
        settle(item.base_offset)
        data = read_whole(item)
        if data is None:
            continue
        held = (item, data)
        last_kept = item.last_offset
    if challenger is not None:
        challenge(None)
    yield from release(None)
    settle(None)
    report.skipped.sort(key=lambda skipped: skipped.pos)


_MISPLACED = "its records, whose true offsets its header no longer says"


def _overlap(batch: Batch, last_kept: int | None) -> str:
    return f"offset-overlap: baseOffset {batch.base_offset} is not above {last_kept}, the last offset kept"
