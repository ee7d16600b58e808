"""Which offsets a damaged entry or range held, as far as the entries around it tell: the one inference
salvage, verify-crc and dump report.

An offset is a record's, assigned by the broker in order; a damaged entry's own header may still say
where its records lay, and the intact entries on either side bound them.  A v0/v1 compressed wrapper
carries one offset field, its last inner record's (AbstractLegacyRecordBatch.lastOffset returns the
wrapper's offset; LogValidator and MemoryRecordsBuilder write the last offset there for both magics): where
its inner records cannot be read, its first offset is only known as the one after the entry before.
"""

from __future__ import annotations

from kbatch.reading.model import Batch, LostOffsets   # (declared with the model: a Batch holds one)


def wrapper_not_opened(entry: Batch) -> bool:
    """A v0/v1 compressed wrapper whose inner records were not read: its offset field is all it says."""
    return entry.magic in (0, 1) and entry.codec != "none" and not entry.records


def entry_lost_offsets(entry: Batch, before_last: int | None, next_first: int | None = None) -> LostOffsets:
    """The offsets a damaged entry held; ``before_last`` is the last offset of the intact entry before it,
    ``next_first`` the first of the intact entry after it (None: not known)."""
    if wrapper_not_opened(entry):
        last = entry.offset_field
        if before_last is None:
            return LostOffsets(None, last, "up to the wrapper's own offset, its last inner record's; no "
                                           "entry before it tells where they start")
        if before_last < last:
            return LostOffsets(before_last + 1, last, f"after the entry before, which ends at {before_last}, up to "
                                                      "the wrapper's own offset, its last inner record's")
        # an offset field not above the entry before is no help: only the neighbours tell
        return range_lost_offsets(before_last, next_first,
                                  f"the wrapper's own offset {last} is not above the entry before's")
    if entry.magic == 2:
        what = "its header"
    elif entry.codec != "none":
        what = "its inner records"
    else:
        what = "its offset field"
    if entry.crc_valid:
        return LostOffsets(entry.base_offset, entry.last_offset, what)
    first, last = entry.base_offset, entry.last_offset
    # Offsets increase from entry to entry (LogSegment.append refuses any other): a header its own CRC does not
    # vouch for, and whose offsets reach into an intact neighbour's (or run backwards), holds a damaged offset
    # field, and only the neighbours tell (a flipped lastOffsetDelta made 3 lost offsets 65,539).
    if last < first or (before_last is not None and first <= before_last) or \
            (next_first is not None and last >= next_first):
        return range_lost_offsets(before_last, next_first, f"{what} says {first}–{last}, unverified (its CRC fails) "
                                                           "and not between the entries around it")
    return LostOffsets(first, last, f"{what}, unverified: its CRC fails")


def range_lost_offsets(before_last: int | None, next_first: int | None, why: str | None = None,
                       segment_base: int | None = None) -> LostOffsets:
    """The offsets between the intact entries around bytes that are no entry (either may be unknown).  With no
    entry before, ``segment_base`` (the base offset in the segment's file name, if known) is the first offset the
    segment can hold (LogSegment.recover: ensureOffsetInRange)."""
    first = None if before_last is None else before_last + 1
    last = None if next_first is None else next_first - 1
    around = []
    if before_last is not None:
        around.append(f"after the entry before, which ends at {before_last}")
    elif segment_base is not None:
        first = segment_base
        around.append(f"from the segment's base offset, {segment_base} (its file name)")
    if next_first is not None:
        around.append(f"before the entry after, which starts at {next_first}")
    how = ", and ".join(around) or "no intact entry on either side"
    return LostOffsets(first, last, how if why is None else f"{why}: {how}")
