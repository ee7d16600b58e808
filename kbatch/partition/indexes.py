"""The three indexes beside a segment: ``.index`` (offset to position), ``.timeindex`` (timestamp to
offset) and ``.txnindex`` (aborted transactions), each a run of fixed-size entries.

Each reader yields an :class:`~kbatch.partition.sidefile.Entry` per entry with what is wrong with it, and the
zero tail and a partial entry as findings (:func:`_entries`).
"""

from __future__ import annotations

from typing import Iterator

from kbatch.files import kinds
from kbatch.format.findings import Finding
from kbatch.format.structs import ABORTED_TXN_ENTRY, ABORTED_TXN_VERSION, OFFSET_INDEX_ENTRY, TIME_INDEX_ENTRY
from kbatch.partition.sidefile import Entry, SideFile, shrunk
from kbatch.reading.window import CHUNK


def _entries(kind: str, data: SideFile, layout, preallocated: bool = True) -> Iterator[tuple | Finding]:
    """(slot, pos, values) for each entry up to the zero tail, read a window at a time; then the zero tail and
    a partial entry as findings.

    A run of all-zero slots at the end is what a broker leaves preallocated in an active segment's index
    (AbstractIndex: the file is set to its maximum size and filled from the front).  No real entry is all
    zero: an offset index entry at position 0 would need more than index.interval.bytes before it.  A file
    Kafka only appends to (``preallocated`` False: the .txnindex) has no zero tail: its zeros are entries.
    """
    entry_size = layout.size
    whole = len(data) - len(data) % entry_size
    used = -(-_end_of_nonzero(data, whole) // entry_size) * entry_size if preallocated else whole
    slot, end = 0, 0
    for pos, piece in data.pieces(0, used, CHUNK - CHUNK % entry_size):
        for values in layout.codec.iter_unpack(memoryview(piece)[:len(piece) - len(piece) % entry_size]):
            yield slot, pos, values
            slot, pos = slot + 1, pos + entry_size
        end = pos
    if end < used:
        yield shrunk(kind, data, end)
        return
    if used < whole:
        yield Finding("zero-tail", used, used, whole - used, "tail",
                      f"{kinds.DESCRIPTIONS[kind]} entry or the end of the file",
                      f"{(whole - used) // entry_size} preallocated zero slots ({whole - used} bytes)")
    if whole < len(data):
        # TransactionIndex reads an entry only while a whole one is left; the index files must be whole.
        code = "partial-entry" if preallocated else "ignored-partial-entry"
        yield Finding(code, whole, whole, len(data) - whole, "entry",
                      f"whole {entry_size}-byte entries (the file size a multiple of {entry_size})",
                      f"{len(data) - whole} bytes left over")


def _end_of_nonzero(data, end: int, chunk: int = 1 << 16) -> int:
    """Where the run of zero bytes that ends at ``end`` starts: read from the end back, a chunk at a time."""
    data = SideFile(data)
    whole = end
    while end > 0:
        start = max(0, end - chunk)
        piece = data.read(start, end - start)
        if len(piece) < end - start:
            return whole   # the file shrank while read: no tail known, the forward read finds where it ends
        kept = len(piece.rstrip(b"\x00"))
        if kept:
            return start + kept
        end = start
    return 0


def _absolute(base_offset: int | None, relative: int) -> int | None:
    return None if base_offset is None else base_offset + relative


def _below_base(pos: int, where: int, relative: int) -> Finding:
    """An index entry's relative offset below 0: OffsetIndex.sanityCheck's "the last offset ... is less than the
    base offset" (the time index's relative offsets are the same field)."""
    return Finding("offset-below-base", pos, where, 4, "relative_offset",
                   "0 or more (an offset at or above the segment's base offset)", str(relative))


def offset_index(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
    layout = OFFSET_INDEX_ENTRY
    previous: tuple[int, int] | None = None
    for item in _entries(kinds.OFFSET_INDEX, data, layout):
        if isinstance(item, Finding):
            yield item
            continue
        slot, pos, (relative, position) = item
        entry = Entry(kinds.OFFSET_INDEX, slot, pos, layout.size,
                      {"offset": _absolute(base_offset, relative), "relative_offset": relative, "position": position})
        where = pos + layout.offsets["relative_offset"]
        if relative < 0:
            entry.findings.append(_below_base(pos, where, relative))
        if previous is not None and relative <= previous[0]:
            entry.findings.append(Finding("index-order", pos, where, 4, "relative_offset",
                                          f"more than {previous[0]} (the previous entry's; OffsetIndex.append)",
                                          str(relative)))
        if position < 0 or (previous is not None and position <= previous[1]):
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["position"], 4, "position",
                                          f"more than {previous[1] if previous else -1} (positions increase)",
                                          str(position)))
        previous = (relative, position)
        yield entry


def time_index(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
    layout = TIME_INDEX_ENTRY
    previous: tuple[int, int] | None = None
    for item in _entries(kinds.TIME_INDEX, data, layout):
        if isinstance(item, Finding):
            yield item
            continue
        slot, pos, (timestamp, relative) = item
        entry = Entry(kinds.TIME_INDEX, slot, pos, layout.size,
                      {"timestamp": timestamp, "offset": _absolute(base_offset, relative),
                       "relative_offset": relative})
        where = pos + layout.offsets["relative_offset"]
        if relative < 0:
            entry.findings.append(_below_base(pos, where, relative))
        if previous is not None and timestamp <= previous[0]:
            # TimeIndex.maybeAppend writes only a timestamp larger than the last entry's.
            entry.findings.append(Finding("index-order", pos, pos, 8, "timestamp",
                                          f"more than {previous[0]} (the previous entry's; TimeIndex.maybeAppend)",
                                          str(timestamp)))
        if previous is not None and relative < previous[1]:
            entry.findings.append(Finding("index-order", pos, where, 4, "relative_offset",
                                          f"{previous[1]} or more (the previous entry's)", str(relative)))
        previous = (timestamp, relative)
        yield entry


def txn_index(data: SideFile, base_offset: int | None) -> Iterator[Entry | Finding]:
    layout = ABORTED_TXN_ENTRY
    previous_last = None
    # TransactionIndex only appends (openChannel positions at the end; nothing preallocates it).
    for item in _entries(kinds.TXN_INDEX, data, layout, preallocated=False):
        if isinstance(item, Finding):
            yield item
            continue
        slot, pos, (version, producer_id, first_offset, last_offset, last_stable_offset) = item
        entry = Entry(kinds.TXN_INDEX, slot, pos, layout.size,
                      {"version": version, "producer_id": producer_id, "first_offset": first_offset,
                       "last_offset": last_offset, "last_stable_offset": last_stable_offset})
        if version != ABORTED_TXN_VERSION:
            # TransactionIndex.iterable: an int16 version outside AbortedTxn's supported range (0..0) throws.
            entry.findings.append(Finding("unknown-version", pos, pos, 2, "version", str(ABORTED_TXN_VERSION),
                                          str(version)))
        if base_offset is not None and last_offset < base_offset:
            # TransactionIndex.sanityCheck: "Last offset of aborted transaction ... is less than start offset"
            entry.findings.append(Finding("offset-below-base", pos, pos + layout.offsets["last_offset"], 8,
                                          "last_offset", f"{base_offset} or more (the segment's base offset; "
                                          "TransactionIndex.sanityCheck)", str(last_offset)))
        if first_offset > last_offset:
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["first_offset"], 8,
                                          "first_offset", f"at most {last_offset} (the lastOffset)",
                                          str(first_offset)))
        if previous_last is not None and last_offset <= previous_last:
            # TransactionIndex.append: "the last offset of appended transactions must increase"
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["last_offset"], 8,
                                          "last_offset", f"more than {previous_last} (the previous entry's)",
                                          str(last_offset)))
        if last_stable_offset > last_offset + 1:
            entry.findings.append(Finding("index-order", pos, pos + layout.offsets["last_stable_offset"], 8,
                                          "last_stable_offset", f"at most {last_offset + 1} (lastOffset + 1)",
                                          str(last_stable_offset)))
        previous_last = last_offset
        yield entry

