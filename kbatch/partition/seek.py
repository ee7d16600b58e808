"""Finding the batches of an offset or time range without reading a segment from byte 0.

Two things make ``dump --offset-range`` / ``--since`` fast on a large segment:

* the indexes beside it (``.index``; ``.timeindex`` for time) say where to
  start, as Kafka's own fetch does (OffsetIndex.lookup: the largest entry at
  or below the target; TimeIndex.lookup) -- verified, never trusted: the
  position must hold a batch whose CRC verifies and whose offsets do not pass
  the target, or the walk starts at byte 0 and says so;
* a batch outside the range is skipped at its header (its size says where
  the next begins), neither checked nor decoded.

Headers are read with the declarations of :mod:`kbatch.format.layouts`.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Iterator, NamedTuple

from kbatch.format.findings import Finding
from kbatch.reading.model import Batch
from kbatch.reading.recovery import resync_candidate
from kbatch.format.structs import (
    BATCH_HEADER,
    LEGACY_CODEC_MASK,
    LOG_ENTRY_PREFIX,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MESSAGE_V0_HEADER,
    MESSAGE_V1_HEADER,
    OFFSET_INDEX_ENTRY,
    TIME_INDEX_ENTRY,
)
from kbatch.files import kinds
from kbatch.walk.engine import entries

_HEADER_BYTES = BATCH_HEADER.size   # the longest fixed header: enough for every magic
_V2 = {name: index for index, name in enumerate(BATCH_HEADER.names)}
_V1 = {name: index for index, name in enumerate(MESSAGE_V1_HEADER.names)}


class Window(NamedTuple):
    """What a dump selects: record offsets low..high and timestamps since..until (inclusive; None: open)."""

    low: int | None = None
    high: int | None = None
    since: int | None = None
    until: int | None = None

    @property
    def selects(self) -> bool:
        return any(bound is not None for bound in (self.low, self.high, self.since, self.until))

    def __str__(self) -> str:
        """The selection in words, as a user gave it: "offsets 1500–1500", "records stamped from ... on"."""
        from kbatch.output.values import moment_text

        said = []
        if self.low is not None or self.high is not None:
            said.append(f"offsets {'' if self.low is None else self.low}–{'' if self.high is None else self.high}")
        if self.since is not None or self.until is not None:
            said.append("stamped " + " ".join(
                part for part in (self.since is not None and f"from {moment_text(self.since)}",
                                  self.until is not None and f"until {moment_text(self.until)}") if part))
        return ", ".join(said)


class Header(NamedTuple):
    """A log entry's fixed header, as far as a skip needs it."""

    end: int
    last_offset: int
    base_offset: int | None      # None for a v0/v1 wrapper (its stored offset is its last inner one)
    base_timestamp: int | None
    max_timestamp: int | None


def peek(stream: BinaryIO, pos: int, size: int, max_entry_size: int) -> Header | None:
    """The header at ``pos`` if it plausibly starts a whole entry; None leaves the bytes to the reader."""
    stream.seek(pos)
    raw = stream.read(_HEADER_BYTES)
    if len(raw) < MAGIC_OFFSET + 1:
        return None
    offset, length = LOG_ENTRY_PREFIX.unpack_from(raw)
    magic = raw[MAGIC_OFFSET]
    if not resync_candidate(pos, offset, magic, length, max_entry_size, size):   # framing's rule, offset >= 0
        return None
    end = pos + LOG_OVERHEAD + length
    if magic == 2:
        if len(raw) < BATCH_HEADER.size:
            return None
        fields = BATCH_HEADER.unpack_from(raw)
        return Header(end, offset + fields[_V2["last_offset_delta"]], offset, fields[_V2["base_timestamp"]],
                      fields[_V2["max_timestamp"]])
    layout = MESSAGE_V1_HEADER if magic == 1 else MESSAGE_V0_HEADER
    if len(raw) < layout.size:
        return None
    fields = layout.unpack_from(raw)
    compressed = fields[_V1["attributes"]] & LEGACY_CODEC_MASK
    if compressed and offset == 0:
        return None   # a wrapper with offset 0 keeps absolute inner offsets: only the reader can tell them
    timestamp = fields[_V1["timestamp"]] if magic == 1 else None
    return Header(end, offset, None if compressed else offset, timestamp, timestamp)


def skips(header: Header, window: Window) -> bool:
    """Whether no record of the entry can be in the window (judged from its header alone)."""
    if window.low is not None and header.last_offset < window.low:
        return True
    if window.since is not None and header.max_timestamp is not None and header.max_timestamp < window.since:
        return True
    return False


def past(header: Header, window: Window) -> bool:
    """Whether the entry, and so every later one (offsets only grow), is beyond the offset range."""
    return window.high is not None and header.base_offset is not None and header.base_offset > window.high


class WindowRun:
    """A run (kbatch.walk.engine) that steps over the entries whose header puts them outside ``window``: it
    takes them unread, and the whole rest of the input once an entry lies past the offsets selected (offsets
    only grow).  Anything else -- an entry that may be in the window, bytes that are no plausible header -- it
    leaves to the full reader, which checks and decodes it."""

    last_pos: int | None = None   # it vouches for no batch it steps over (their CRCs are not read)

    def __init__(self, stream: BinaryIO, size: int, max_entry_size: int, window: Window):
        self.stream, self.size, self.max_entry_size, self.window = stream, size, max_entry_size, window

    def walk(self, _window, pos: int, stop: int) -> int:
        while pos < stop:
            header = peek(self.stream, pos, self.size, self.max_entry_size)
            if header is None:
                break
            if past(header, self.window):
                return max(stop, self.size)
            if not skips(header, self.window):
                break
            pos = header.end
        return pos


def select(reader, stream: BinaryIO, start: int, window: Window) -> Iterator[Batch | Finding]:
    """The entries of ``reader``'s input from ``start`` that may hold the window, and every damaged range met."""
    return entries(reader, start, run=WindowRun(stream, reader.size, reader.options.max_entry_size, window))


def keep_selected(batch, window: Window) -> bool:
    """Keep a batch that may hold records of the window; keep only those of its records.

    By time, a batch is kept when its maxTimestamp is at or after --since and its first record's
    timestamp at or before --until; with --records, only the records stamped inside the window (none of
    magic 0, which has no timestamps).
    """
    low, high, since, until = window.low, window.high, window.since, window.until
    if (low is not None and batch.last_offset < low) or (high is not None and batch.base_offset > high):
        return False
    timed = since is not None or until is not None
    if timed:
        first = batch.max_timestamp if batch.timestamp_type == "LogAppendTime" else batch.base_timestamp
        if batch.max_timestamp is None or (since is not None and batch.max_timestamp < since) or \
                (until is not None and batch.records is None and first > until):
            return False
    if batch.records is not None:
        batch.records = [record for record in batch.records
                         if (low is None or record.offset >= low) and (high is None or record.offset <= high)
                         and (not timed or (record.timestamp is not None
                                            and (since is None or record.timestamp >= since)
                                            and (until is None or record.timestamp <= until)))]
        if timed and not batch.records:
            return False
    return True


# -- where to start: the indexes ------------------------------------------------------------------------------


def _sibling(log_path: str, suffix: str) -> str | None:
    if kinds.kind_of(log_path) != kinds.LOG or kinds.base_offset_of(log_path) is None:
        return None
    sibling = os.path.splitext(log_path)[0] + suffix
    return sibling if os.path.isfile(sibling) else None


class _Slots:
    """An index's slots up to its zero tail, read in place a slot at a time: Kafka binary-searches the mapped
    file the same way (AbstractIndex.largestLowerBoundSlotFor), so a preallocated or sparse index of any size
    costs a few dozen reads, never its bytes in memory."""

    def __init__(self, path: str, layout, key: str):
        self.stream = open(path, "rb")   # closed with the object (start_position holds it briefly)
        size = os.fstat(self.stream.fileno()).st_size
        self.layout, self.key_index = layout, layout.names.index(key)
        slots = size // layout.size
        # Offsets in an index only grow, so no slot but the first can be all zeros: the zero tail a broker
        # preallocates starts at the first such slot, found by halving.
        low, high = 1, slots
        while low < high:
            middle = (low + high) // 2
            if self._raw(middle).count(0) == layout.size:
                high = middle
            else:
                low = middle + 1
        self.count = min(low, slots)
        self.base = kinds.base_offset_of(path) or 0

    def _raw(self, slot: int) -> bytes:
        return os.pread(self.stream.fileno(), self.layout.size, slot * self.layout.size)

    def fields(self, slot: int) -> dict:
        return dict(zip(self.layout.names, self.layout.unpack_from(self._raw(slot))))

    def _key(self, slot: int) -> int:
        return self.layout.unpack_from(self._raw(slot))[self.key_index]

    def largest_at_or_below(self, target: int, strictly: bool = False) -> dict | None:
        """The last slot whose key is at (or, ``strictly``, below) ``target``; keys are taken as sorted."""
        low, high, found = 0, self.count - 1, None
        while low <= high:
            middle = (low + high) // 2
            key = self._key(middle)
            if key < target or (key == target and not strictly):
                found, low = middle, middle + 1
            else:
                high = middle - 1
        if found is None:
            return None
        entry = self.fields(found)
        entry["offset"] = self.base + entry["relative_offset"]
        return entry


def _offset_slots(path: str) -> _Slots:
    return _Slots(path, OFFSET_INDEX_ENTRY, "relative_offset")


def _time_entry_holds(entry: dict, offsets: _Slots, reader, stream) -> bool:
    """Does the batch ending at the entry's offset carry its timestamp (found from the offset index on)?"""
    offset, timestamp = entry["offset"], entry["timestamp"]
    start = offsets.largest_at_or_below(offset - offsets.base)
    pos = start["position"] if start is not None and 0 <= start["position"] < reader.size else 0
    while pos < reader.size:
        header = peek(stream, pos, reader.size, reader.options.max_entry_size)
        if header is None or header.last_offset > offset:
            return False
        if header.last_offset == offset:
            return header.max_timestamp == timestamp and reader.entry_verifies_at(pos)
        pos = header.end
    return False


class Start(NamedTuple):
    pos: int
    note: str | None = None      # why an index was not used, for the user


def start_position(log_path: str, reader, stream: BinaryIO, window: Window) -> Start:
    """Where the first entry of the window can be, by the segment's indexes; 0 without them."""
    from kbatch.output.visible import visible   # the notes name the files

    offsets_path = _sibling(log_path, ".index")
    if offsets_path is None:
        return Start(0)
    target = window.low
    offsets = _offset_slots(offsets_path)
    if window.since is not None:
        times_path = _sibling(log_path, ".timeindex")
        if times_path is not None:
            # Every batch up to an entry stamped before `since` ends before the window: start after it.
            last = _Slots(times_path, TIME_INDEX_ENTRY, "timestamp").largest_at_or_below(window.since, strictly=True)
            if last is not None:
                if not _time_entry_holds(last, offsets, reader, stream):
                    return Start(0, f"kbatch: {visible(os.path.basename(times_path))}: the entry (timestamp "
                                    f"{last['timestamp']}, offset {last['offset']}) is not a batch's "
                                    f"largest timestamp; reading {visible(os.path.basename(log_path))} from the start")
                after = last["offset"] + 1
                target = after if target is None else max(target, after)
    if target is None:
        return Start(0)
    entry = offsets.largest_at_or_below(target - offsets.base)
    if entry is None:
        return Start(0)
    position, indexed = entry["position"], entry["offset"]
    header = peek(stream, position, reader.size, reader.options.max_entry_size) if 0 <= position < reader.size \
        else None
    # Verified, never trusted: a batch must start there, its CRC verify, and none of its offsets be past
    # the target (then every batch before it is below the target too).
    holds = (header is not None and reader.entry_verifies_at(position)
             and (header.base_offset is None or header.base_offset <= min(indexed, target)))
    if not holds:
        return Start(0, f"kbatch: {visible(os.path.basename(offsets_path))}: the entry for offset {indexed} (position "
                        f"{position}) does not point at a batch holding it; reading {visible(os.path.basename(log_path))} "
                        "from the start")
    return Start(position)
