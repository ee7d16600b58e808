"""Verifying a segment: every checksum, and with ``deep`` every invariant Kafka relies on.

The library side of ``kbatch verify-crc`` (and of scan's findings): one walk
over the file (:mod:`kbatch.walk.engine`), a fast run over the entries with
nothing to say and the full reader for the others, with ``deep`` the
cross-batch and record-level checks of :mod:`kbatch.reading.invariants`.
Findings come out in file order.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Iterator, NamedTuple, cast

from kbatch.format.codecs import DEFAULT_DECOMPRESSED_LIMIT
from kbatch.format.findings import Finding
from kbatch.reading.invariants import OffsetOrder, batch_invariants, breaks_sequence, segment_range_checks
from kbatch.messages import decoder_for_path
from kbatch.walk.parts import walk_in_parts, worth_parts
from kbatch.files.inputs import is_remote, segment_base_offset
from kbatch.reading.summary import FileSummary

if TYPE_CHECKING:
    from kbatch.reading.model import Batch
    from kbatch.walk.engine import Run
    from kbatch.walk.headers import Headers


class VerifyOptions(NamedTuple):
    deep: bool = False
    decompressed_limit: int = DEFAULT_DECOMPRESSED_LIMIT
    jobs: int = 1    # processes a large local file is read by, a part each (verify_in_parts)
    kafka_version: str | None = None   # the release whose layouts read internal records (--kafka-version)


def verify_file(path: str, stream: BinaryIO, summary: FileSummary, options: VerifyOptions = VerifyOptions(),
                *, stream_is_file: bool = True, progress=None, start: int = 0, stop: int | None = None,
                landed: dict | None = None, on_batch=None, headers: Headers | None = None) -> Iterator[Finding]:
    """Every finding of the file at ``path`` (its bytes: ``stream``), in file order.

    A whole local file checked without ``deep`` is walked in this process first (:func:`verify_stream`, its
    window read ahead on a second thread: the CRC pass): nearly every entry is the CRC run's, and a file with
    nothing to say is read once, by it.  Past damage, the rest of the file goes to parts when it is worth them
    (:func:`verify_in_parts`).  Otherwise -- stdin, pasted hex (``stream_is_file`` False), a remote object, a
    range of a file -- :func:`verify_stream` reads the stream; with ``deep``, a large local file is read in
    parts from the start.  The arguments are verify_stream's.
    """
    whole = start == 0 and (stop is None or stop >= summary.size)
    local = stream_is_file and path != "-" and not is_remote(path)
    walk_from = start
    decoder = decoder_for_path(path) if options.deep else None
    walked: dict = {}
    if not options.deep and whole and local:
        yield from verify_stream(stream, summary, options, progress=progress, landed=walked, on_batch=on_batch,
                                 read_ahead=True,
                                 parts_from=lambda pos: worth_parts(summary.size - pos, options.jobs))
        if "parts_from" not in walked:
            if landed is not None:
                landed["pos"] = walked["pos"]
            return
        walk_from = walked["pos"]
    if whole and local and worth_parts(summary.size - walk_from, options.jobs):
        yield from verify_in_parts(path.removeprefix("file://"), stream, summary, options, progress=progress,
                                   landed=landed, on_batch=on_batch, decoder=decoder,
                                   segment_base=segment_base_offset(path), start=walk_from,
                                   follows=walked.get("last_offset"), headers=headers)
        return
    # a KRaft snapshot (its own rules: kbatch.reading.kraft.SnapshotRules), read from its start
    snapshot = decoder == "metadata" and path.endswith(".checkpoint") and start == 0
    yield from verify_stream(stream, summary, options, progress=progress, start=walk_from, stop=stop, landed=landed,
                             on_batch=on_batch, decoder=decoder, segment_base=segment_base_offset(path),
                             snapshot=snapshot, headers=headers)


def verify_stream(stream: BinaryIO, summary: FileSummary, options: VerifyOptions = VerifyOptions(),
                  *, progress=None, start: int = 0, stop: int | None = None,
                  landed: dict | None = None, on_batch=None, decoder: str | None = None,
                  segment_base: int | None = None, order: OffsetOrder | None = None,
                  snapshot: bool = False, read_ahead: bool = False, parts_from=None,
                  follows: int | None = None, headers: Headers | None = None) -> Iterator[Finding]:
    """Every finding of one input, in file order; ``summary`` counts batches, records and findings.

    Without ``deep`` the reader checks framing and every CRC (each inner
    message of a v0/v1 wrapper too); ``deep`` also decodes every record and
    checks the invariants.  ``progress(pos)`` is called as the walk advances.
    ``start``/``stop`` verify only the entries starting in that range (a
    split of a large file); ``landed["pos"]`` then says where the walk ended.
    ``on_batch(batch)`` is called with each batch before its findings.  With ``deep``, the records of an
    internal topic (``decoder``: kbatch.messages.topics) are read with Kafka's schemas too, and every
    batch is held against ``segment_base``, the base offset the segment's file name says.  ``order`` carries
    the cross-batch offset check on from the entries before ``start``.  ``read_ahead`` reads the stream (a
    local file) ahead of the walk on a second thread.  ``parts_from(pos)``, once the walk met damage, is asked
    each time the run went on to ``pos`` whether the rest is read in parts: then the walk ends there, and
    ``landed`` says so (``landed["parts_from"]``).  ``follows``: the last offset of the intact entry before
    ``start``, read by another walk (``landed["last_offset"]`` says this walk's, for the next).  With ``deep``,
    ``headers`` (kbatch.walk.headers.Headers) takes each batch's header in file order, for the partition
    cross-checks, which then need not read the log again.
    """
    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.walk.crcrun import CrcRun   # (looked up here: tests swap it)
    from kbatch.walk.engine import Walk

    # Records become objects only for an internal topic's decoder (control records always do): the
    # invariants read what the record decoder kept as it walked, so memory does not grow with a batch.
    objects = decoder not in (None, "none")
    if objects:
        from kbatch.reading.internal import decode_batch
    reader = SegmentReader(stream, ReadOptions(records=options.deep, record_objects=objects,
                                               decompressed_limit=options.decompressed_limit), size=summary.size,
                           read_ahead=read_ahead)
    reader.follows(follows)
    order = OffsetOrder() if order is None else order
    snapshot_rules = None
    if snapshot and options.deep and objects:
        from kbatch.reading.kraft import SnapshotRules
        snapshot_rules = SnapshotRules()
    # The run over the entries with nothing to say (kbatch.walk.engine): --deep's walks the data batches in
    # its compiled loop (kbatch.walk.deep), the CRC run the v2 batches whose CRC holds (kbatch.walk.crcrun);
    # every other entry is the full reader's, one at a time.  (An internal topic's records are objects: no run.)
    run: Run | None = None
    if not options.deep:
        run = CrcRun(summary, reader.options.max_entry_size)
    elif not objects:
        from kbatch.walk.deep import DeepRun   # (looked up here: tests swap it)

        run = DeepRun(summary, order, segment_base, reader.options.max_entry_size, reader.decompressor, headers)
    stop = summary.size if stop is None else min(stop, summary.size)
    walk = Walk(reader, run)

    def ran(pos):   # the run went on to pos: the walk ends there when the rest goes to parts
        if progress is not None:
            progress(pos)
        if parts_from is not None and summary.damaged and parts_from(pos):
            if landed is not None:
                landed["parts_from"] = pos
            return True
        return False

    try:
        for item in walk.items(start, stop, ran):
            yield from _told(summary, order.take_settled())   # gaps held, told once the batches after went on
            if isinstance(item, Finding):
                if item.code == "truncated-while-reading" and summary.size_now is not None:
                    continue   # told once a file, whatever the parts or readers that noticed
                order.damaged_range(item)
                yield from _told(summary, order.take_settled())   # (a gap held before the range is told first)
                summary.add_finding(item)
                yield item
                continue
            if options.deep:
                if objects:
                    decode_batch(item, decoder, options.kafka_version)
                if snapshot_rules is not None:
                    item.findings += snapshot_rules.batch(item)
                item.findings += batch_invariants(item)
                if segment_base is not None:
                    item.findings += segment_range_checks(item, segment_base)
                item.findings += order.check(item)   # last: the one check across batches (where parts meet, too)
                item.findings.sort(key=in_file_order)
            summary.add_batch(item)
            if headers is not None:
                headers.batch(item)
            if on_batch is not None:
                on_batch(item)
            yield from item.findings
            if progress is not None:
                progress(item.pos + item.size)
            del item   # a batch holds a view of the reader's window: let it go before the run reads on
        if landed is not None:
            landed["last_offset"] = reader.last_intact_offset()
    finally:
        reader.close()   # (a read-ahead thread stops: the rest may go to forked parts)
    pos = cast(int, walk.landed)   # (set by items)
    yield from _told(summary, order.take_settled())
    if pos >= summary.size:   # the end of the input: no batch after the last to call it an outlier
        yield from _told(summary, order.end())
    if snapshot_rules is not None and pos >= summary.size:
        for finding in snapshot_rules.end():
            summary.add_finding(finding)
            yield finding
    if landed is not None:
        landed["pos"] = pos


def _told(summary: FileSummary, findings: list[Finding]) -> Iterator[Finding]:
    """Findings about batches told after them (OffsetOrder's held gaps), counted as they are yielded."""
    for finding in findings:
        summary.add_finding(finding)
        yield finding


def in_file_order(finding: Finding) -> tuple[int, int]:
    """How a batch's findings are sorted: by position (inside compressed records, by the position there)."""
    return finding.pos, finding.inner_pos or 0


# ---------------------------------------------------------------------------
# A large file in parts, a process each (kbatch.walk.parts)
# ---------------------------------------------------------------------------

MAX_PART_FINDINGS = 10_000   # a part with more is read again by the parent (they would sit in memory)


def verify_in_parts(path: str, stream: BinaryIO, summary: FileSummary, options: VerifyOptions, *, progress=None,
                    landed: dict | None = None, on_batch=None, decoder: str | None = None,
                    segment_base: int | None = None, start: int = 0,
                    follows: int | None = None, headers: Headers | None = None) -> Iterator[Finding]:
    """verify_stream's findings for a local file from ``start`` (an entry start, 0 unless verify_stream walked
    the entries before it) to its end, its parts read at once by ``options.jobs`` processes.

    Each child sends back its findings with the batches they belong to, its
    counts, and where its walk ended.  Besides the hand-over, a part's results
    stand only where its first batch goes on from the offsets before it (the
    one check across batches, which the parent makes where parts meet).  What
    comes out, and in what order, is verify_stream's over the whole file; only
    ``on_batch`` is not called for a child's batches with nothing to report.
    """
    order = OffsetOrder()
    # The last offset of the last intact entry walked, whoever walked it: where the parent reads on after a
    # child's part, what a damaged range there lost is told from it (a child's part starts at an intact entry).
    before_last = follows

    def work(part_stream, start, stop, _spill):
        return _verify_part(path, part_stream, start, stop, summary.size, options, decoder, segment_base,
                            headers is not None)

    def take(_part, found):
        nonlocal before_last
        if options.deep and not found.goes_on_from(order):
            return None
        if headers is not None:
            headers.extend(found.headers)
        yield from found.replay(summary, order if options.deep else None, on_batch)
        before_last = found.last_offset if found.last_offset is not None else before_last
        if progress is not None:
            progress(found.landed)
        return found.landed

    def walk_here(pos, stop):
        nonlocal before_last
        walked = {}
        yield from verify_stream(stream, summary, options, progress=progress, start=pos, stop=stop, landed=walked,
                                 on_batch=on_batch, decoder=decoder, segment_base=segment_base, order=order,
                                 follows=before_last, headers=headers)
        before_last = walked["last_offset"]
        return walked["pos"]

    pos = yield from walk_in_parts(path, summary.size, options.jobs, work, take, walk_here, start=start)
    if pos >= summary.size:   # (the last part's held gap is the parent's to tell: verify_stream's end)
        yield from _told(summary, order.end())
    if landed is not None:
        landed["pos"] = pos


@dataclass
class _Found:
    """What a child found in its part: findings in file order, and what the parent needs to go on."""

    items: list[Finding | tuple[Batch, list[Finding]]]   # a damaged range, or a batch and its findings
    summary: FileSummary          # what the part's walk counted
    landed: int                   # where it ended
    first: Batch | None           # the part's first batch (its findings are in items)
    second_base: int | None       # the base offset of the part's second batch, if the full reader read it
    order: OffsetOrder            # the part's OffsetOrder at its end
    last_offset: int | None       # the last offset of the last intact entry it walked
    # each batch's header as a plain tuple, when the parent asked for them (verify_stream's headers)
    headers: list[tuple] = dataclasses.field(default_factory=list)

    def goes_on_from(self, order: OffsetOrder) -> bool:
        """Whether the part's own offset checks are the ones a walk from the start makes.

        The part's walk began with no offsets before it; after its first batch it holds what a whole
        walk holds when that batch's last offset is above every offset before it (OffsetOrder.check),
        unless that batch jumps up and the second goes on from before it (an outlier: invariants.
        breaks_sequence), which only a walk from the start can tell.  Nor when the part's walk held a batch
        against its first batch, as only the file's first is held (invariants.first_challenged): with
        batches before it, that batch is the first of the part's walk alone.
        """
        if self.first is None or order.last_offset is None:
            return True
        if self.order.first_held:
            return False
        whole = copy.copy(order)   # what a walk from the start holds after the part's first batch
        whole.check(self.first)
        if (whole.last_offset, whole.last_pos) != (self.first.last_offset, self.first.pos):
            return False   # the first batch did not raise the order: the part's own walk assumed it did
        jump = whole.jump
        return jump is None or self.second_base is None or \
            not breaks_sequence(jump.before[1], jump.base_offset, jump.last_offset, self.second_base)

    def replay(self, summary: FileSummary, order: OffsetOrder | None, on_batch) -> Iterator[Finding]:
        """The part's findings; with ``order`` (deep), its first batch checked against the batches before it."""
        told = summary.size_now is not None   # the file's cut was reported already (once a file)
        summary.add_summary(self.summary)
        if told and self.summary.size_now is not None:
            summary.findings["truncated-while-reading"] -= 1
            summary.errors -= 1
        for item in self.items:
            if isinstance(item, Finding):
                if told and item.code == "truncated-while-reading":
                    continue
                if order is not None:
                    order.damaged_range(item)
                    yield from _told(summary, order.take_settled())
                yield item
                continue
            batch, findings = item
            if batch is self.first and order is not None:
                across = order.check(batch)   # verify_stream's last check of a batch, so it sorts the same
                later = order.holds_finding_of(batch)   # (a finding about it may be told after it)
                # The part's walk went on past this batch (goes_on_from): it is no outlier, and a gap held for it
                # is told after its findings, as a whole walk tells it (OffsetOrder.check, walked_past).
                held = order.end() if self.summary.batches > 1 else []
                for finding in across + held:
                    summary.add_finding(finding)
                findings = sorted(findings + across, key=in_file_order) + held
                batch.findings = findings
                if not findings and not later:
                    continue
            if on_batch is not None:
                on_batch(batch)
            yield from findings
        if order is not None and self.summary.batches > 1:
            # (a part of one batch: the check above left the order as a whole walk leaves it -- the part's
            # own walk had no batch before it to call that one a jump from)
            order.continue_from(self.order)


def _verify_part(path: str, stream: BinaryIO, start: int, stop: int, size: int, options: VerifyOptions, decoder,
                 segment_base, with_headers: bool = False) -> _Found | None:
    """A child's part: verify_stream over [start, stop), kept for the parent.

    Only the batches with findings are kept (and the first, for the check across batches); None when the
    part holds more than MAX_PART_FINDINGS findings.
    """
    summary = FileSummary(path, size)
    order = OffsetOrder()
    items: list = []
    walked: dict = {}
    first = second_base = None
    pending = 0   # findings of the batch just handed over that verify_stream is still to yield
    if with_headers:
        from kbatch.walk.headers import Headers
    headers = Headers(plain=True) if with_headers else None   # (plain tuples pickle fast)

    def keep(batch):
        nonlocal first, pending, second_base
        pending = len(batch.findings)
        if summary.batches == 2:   # (counted before on_batch) the second: it may show the first an outlier
            second_base = batch.base_offset
        if batch.findings or first is None or order.holds_finding_of(batch):   # (told after it)
            # Only what the parent needs, and what pickles (not the record decoder's columns).
            # (no body: verify_stream's reader keeps no entry's bytes, ReadOptions.keep_body)
            kept = dataclasses.replace(batch, records=None, record_data=None, record_checks=None, walked_columns=None,
                                       findings=[])
            first = kept if first is None else first
            items.append((kept, list(batch.findings)))

    for count, finding in enumerate(verify_stream(stream, summary, options, start=start, stop=stop, landed=walked,
                                                  on_batch=keep, decoder=decoder, segment_base=segment_base,
                                                  order=order, headers=headers)):
        if count >= MAX_PART_FINDINGS:
            return None
        if pending:
            pending -= 1   # one of the batch's own: kept with it
        else:
            items.append(finding)   # a damaged range between batches
    return _Found(items, summary, walked["pos"], first, second_base, order, walked["last_offset"],
                  headers.taken if headers is not None else [])


class QuietSink:
    """The sink of ``verify-crc --quiet``: it says nothing (the exit status says it all), and loads no renderer."""

    def entry(self, batch) -> None:
        pass

    def unreadable(self, path: str, reason: str) -> None:
        pass

    def finding(self, path: str, finding: Finding) -> None:
        pass

    def file_done(self, summary: FileSummary) -> None:
        pass

    def close(self) -> None:
        pass
