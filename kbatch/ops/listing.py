"""Listing a segment's entries into a sink, whole or in parts: the library side of ``kbatch dump``.

:class:`Listing` hands every entry the reader reads to a sink (kbatch.output,
kbatch.render) and counts it; its walk is the engine's (kbatch.walk.engine),
with the listing's run (kbatch.walk.listing.ListRun) where the output is JSON
Lines the compiled writer writes.  :func:`list_in_parts` lists a large local
file's parts at once (kbatch.walk.parts.walk_in_parts).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Iterable
from typing import Protocol, TextIO, cast

from kbatch.format.findings import Finding
from kbatch.ops.visibility import CommittedView, refused
from kbatch.partition.seek import Window, keep_selected, select, start_position
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.reading.records import stream_records
from kbatch.reading.summary import FileSummary
from kbatch.output.visible import visible
from kbatch.walk.engine import Walk
from kbatch.walk.parts import copy_out, spill_limit, walk_in_parts, worth_parts


class Sink(Protocol):
    """Where a listing's entries go: kbatch.output's JSON, kbatch.render's tables and dumplog lines."""

    records: bool   # whether it shows each batch's records

    def begin(self, path: str, size: int) -> None: ...
    def batch(self, batch: Batch) -> None: ...
    def region(self, finding: Finding, raw: bytes | None = None) -> None: ...
    def end(self, summary: FileSummary) -> None: ...


class LineSink(Sink, Protocol):
    """The JSON Lines sink (kbatch.output.jsonout.JsonlSink) where its compiled writer writes the lines."""

    compiled_lines: bool
    head: bytes     # what opens every line
    out: TextIO

    def lines(self, data: bytes) -> None: ...


@dataclasses.dataclass
class Listing:
    """What dump does with each entry the reader hands out: each shown to ``sink``, counted in ``summary``."""

    reader: SegmentReader
    summary: FileSummary
    sink: Sink
    options: ReadOptions
    internal: str | None
    columns: bool
    window: Window
    limit: int | None
    committed: CommittedView | None = None   # only what read_committed gives is listed
    log_start: int | None = None   # the partition's log start offset, the records below it marked
    kafka_version: str | None = None   # the release whose layouts read internal records (--kafka-version)
    left_out: int = 0   # records a consumer refuses as corrupt, not listed under --isolation

    def list_from(self, pos: int, stop: int, enough: Callable[[], bool] | None = None) -> int:
        """List the entries that start in [pos, stop) (``pos`` is an entry's start); where the walk ended.

        It ends early after a batch where ``enough()`` says so (asked at least every few MiB), or at --limit.
        """
        walk = Walk(self.reader, self._run())
        ended = self.show(walk.items(pos, stop, None if enough is None else lambda _: enough()), enough)
        return cast(int, walk.landed) if ended is None else ended   # (items set it)

    def _run(self):
        """The listing's walk over the batches it lists as they are (kbatch.walk.listing), where that is its
        output: JSON Lines of every batch, without records, written by the compiled writer; else None."""
        options = self.options
        if not (getattr(self.sink, "compiled_lines", False) and not self.sink.records and self.limit is None
                and not self.window.selects and not options.keep_body and not options.inflate):
            return None
        sink = cast(LineSink, self.sink)   # (only it has compiled lines)
        from kbatch.walk.listing import ListRun   # (looked up here: tests swap it)

        return ListRun(self.summary, sink.head, sink.lines, options.max_entry_size)

    def show(self, items: Iterable[Batch | Finding], enough: Callable[[], bool] | None = None) -> int | None:
        """Show every entry of ``items``; None, or where the showing stopped early (at --limit, or after a
        batch where ``enough()`` says so)."""
        selects, window, limit, sink, summary = self.window.selects, self.window, self.limit, self.sink, self.summary
        internal = self.internal not in (None, "none")
        if internal:   # the schemas load only for an internal topic's records
            from kbatch.reading.internal import decode_batch
        shown = 0
        for item in items:
            if isinstance(item, Finding):
                if item.code == "truncated-while-reading" and summary.size_now is not None:
                    continue   # told once a file (a part's child may have told it)
                summary.add_finding(item)
                keep_raw = self.options.keep_body and item.owns_bytes
                sink.region(item, self.reader.read_bytes(item.pos, item.size) if keep_raw else None)
                continue
            if not self.columns:
                stream_records(item)
            if selects and not keep_selected(item, window):
                continue
            if self.committed is not None and self.committed.batch(item).visible is False:
                for finding in item.findings:   # a batch left out is not listed; its damage still is
                    summary.add_finding(finding)
                    sink.region(finding, None)
                continue
            if self.committed is not None and item.findings and item.records is not None:
                self._leave_out_refused(item)
            if limit is not None and shown >= limit:
                return item.pos
            if internal:
                decode_batch(item, self.internal, self.kafka_version)
            item.log_start_offset = self.log_start
            summary.add_batch(item)
            sink.batch(item)
            shown += 1
            # a batch holds a view of the reader's window: let it go before the walk reads on
            end = item.pos + item.size
            del item
            if enough is not None and enough():
                return end   # where the walk goes on after this batch
        return None

    def _leave_out_refused(self, batch: Batch) -> None:
        """A consumer is never given a record it refuses as corrupt (kbatch.ops.visibility.refused): what one is
        given (--isolation) lists the batch, with its damage, without them.  (Only a damaged batch is asked: its
        records become objects here, where a clean one's may stay a stream.)"""
        records = list(batch.records or ())   # (asked of a batch with records)
        batch.records = [record for record in records if refused(batch, record) is None]
        self.left_out += len(records) - len(batch.records)


def list_file(path: str, stream, options: ReadOptions, sink, *, internal: str | None, columns: bool, window: Window,
              limit: int | None, committed=None, log_start: int | None = None, kafka_version: str | None = None,
              jobs: int = 1, note=lambda text: None) -> FileSummary:
    """List one segment's entries into ``sink`` (``dump``): the whole file, in parts at once where it is large
    (``jobs``), or from where the indexes say the window starts, stepping over the batches outside it;
    ``note(text)`` is told what a user should know (an index not trusted, records left out)."""
    if internal not in (None, "none"):   # an internal topic's records are read into objects by its decoder
        options = options._replace(record_objects=True)
    reader = SegmentReader(stream, options)
    summary = FileSummary(path, reader.size)
    sink.begin(path, reader.size)
    listing = Listing(reader, summary, sink, options, internal, columns, window, limit, committed, log_start,
                      kafka_version)
    if worth_parts(reader.size, jobs):
        list_in_parts(path, listing, jobs)
    elif window.selects:
        # Start where the indexes say (verified), and step over batches outside the window at their header.
        start = start_position(path, reader, stream, window)
        if start.note:
            note(start.note)
        listing.show(select(reader, stream, start.pos, window))
    else:
        listing.list_from(0, reader.size)
    if listing.left_out:
        note(f"kbatch: {visible(path)}: records a consumer refuses as corrupt (their batch or message fails its "
             f"check): {listing.left_out}, left out (without --isolation they are listed)")
    sink.end(summary)
    return summary


@dataclasses.dataclass
class _Listed:
    """A child's part: its lines are in its spill file."""

    landed: int
    summary: FileSummary
    last_offset: int | None   # the last offset of the last intact entry it went past


def list_in_parts(path: str, listing: Listing, jobs: int) -> None:
    """JSON Lines of a large local file, its parts listed at once by forked processes (kbatch.walk.parts): each
    child writes its part's lines to a temporary file (up to spill_limit), copied out in file order."""
    sink = cast(LineSink, listing.sink)   # (a large file is listed in parts only as JSON Lines: worth_parts)
    out = sink.out
    limit = spill_limit(jobs - 1)
    errors = getattr(out, "errors", None) or "strict"

    def work(stream, start, stop, spill):
        reader = SegmentReader(stream, listing.options, size=listing.reader.size)
        summary = FileSummary(path, reader.size)
        text = io.TextIOWrapper(spill, encoding="utf-8", errors=errors)   # as the output (JsonlSink.writes_utf8)
        sink.out = text   # this process's copy of the sink
        # Up to the spill limit; the parent lists the rest of the part.
        ended = dataclasses.replace(listing, reader=reader, summary=summary).list_from(
            start, stop, lambda: spill.tell() >= limit)
        text.flush()
        text.detach()
        return _Listed(ended, summary, reader.last_intact_offset())

    def take(part, listed):
        copy_out(part.spill, out)
        listing.summary.add_summary(listed.summary)
        listing.reader.follows(listed.last_offset)   # (what the parent lists after this part goes on from it)
        return listed.landed
        yield   # (a step of walk_in_parts: the lines went to the output, nothing to hand up)

    def walk_here(pos, stop):
        return listing.list_from(pos, stop)
        yield   # (likewise)

    for _ in walk_in_parts(path, listing.reader.size, jobs, work, take, walk_here, spill=True):
        pass
