"""Verifying a segment: every checksum, and with ``deep`` every invariant Kafka relies on.

The library side of ``kbatch verify-crc`` (and of scan's findings): the fast
CRC pass where it can answer, else the one reader over the file with the
cross-batch and record-level checks of :mod:`kbatch.invariants`.  Findings
come out in file order.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from .codecs import DEFAULT_DECOMPRESSED_LIMIT
from .findings import Finding
from .invariants import OffsetOrder, batch_invariants, segment_range_checks
from .messages.apply import decode_batch
from .messages.topics import decoder_for_path
from .segments import is_remote, segment_base_offset
from .summary import FileSummary


@dataclass(frozen=True)
class VerifyOptions:
    deep: bool = False
    decompressed_limit: int = DEFAULT_DECOMPRESSED_LIMIT
    jobs: int = 1    # processes a large local file is read by, a part each (verify_in_parts)


def verify_file(path: str, stream: BinaryIO, summary: FileSummary, options: VerifyOptions = VerifyOptions(),
                *, stream_is_file: bool = True, progress=None, start: int = 0, stop: int | None = None,
                landed: dict | None = None, on_batch=None) -> Iterator[Finding]:
    """Every finding of the file at ``path`` (its bytes: ``stream``): the fast pass first, then the reader.

    The fast CRC pass (:mod:`kbatch.fastscan`) can answer for a whole local
    file checked without ``deep``: when it calls the file clean, its counts
    and its zero tail are all there is to say, and the full reader never
    runs.  Otherwise -- or for stdin, pasted hex (``stream_is_file`` False), a
    remote object, a range of a file, ``deep`` -- :func:`verify_stream` reads
    the stream for the exact findings.  The arguments are verify_stream's.
    """
    whole = start == 0 and (stop is None or stop >= summary.size)
    local = stream_is_file and path != "-" and not is_remote(path)
    if not options.deep and whole and local:
        from .fastscan import fast_scan

        scan = fast_scan(path.removeprefix("file://"))
        if scan.clean:
            summary.batches, summary.records = scan.entries, scan.records
            summary.batch_bytes = scan.size if scan.zero_tail_pos is None else scan.zero_tail_pos
            for finding in scan.findings():
                summary.add_finding(finding)
                yield finding
            if landed is not None:
                landed["pos"] = scan.size
            return
    decoder = decoder_for_path(path) if options.deep else None
    if options.jobs > 1 and whole and local and summary.size >= 2 * PART_MIN_SIZE and hasattr(os, "fork"):
        yield from verify_in_parts(path.removeprefix("file://"), stream, summary, options, progress=progress,
                                   landed=landed, on_batch=on_batch, decoder=decoder,
                                   segment_base=segment_base_offset(path))
        return
    yield from verify_stream(stream, summary, options, progress=progress, start=start, stop=stop, landed=landed,
                             on_batch=on_batch, decoder=decoder, segment_base=segment_base_offset(path))


def verify_stream(stream: BinaryIO, summary: FileSummary, options: VerifyOptions = VerifyOptions(),
                  *, progress=None, start: int = 0, stop: int | None = None,
                  landed: dict | None = None, on_batch=None, decoder: str | None = None,
                  segment_base: int | None = None, order: OffsetOrder | None = None) -> Iterator[Finding]:
    """Every finding of one input, in file order; ``summary`` counts batches, records and findings.

    Without ``deep`` the reader checks framing and every CRC (each inner
    message of a v0/v1 wrapper too); ``deep`` also decodes every record and
    checks the invariants.  ``progress(pos)`` is called as the walk advances.
    ``start``/``stop`` verify only the entries starting in that range (a
    split of a large file); ``landed["pos"]`` then says where the walk ended.
    ``on_batch(batch)`` is called with each batch before its findings.  With ``deep``, the records of an
    internal topic (``decoder``: kbatch.messages.topics) are read with Kafka's schemas too, and every
    batch is held against ``segment_base``, the base offset the segment's file name says.  ``order`` carries
    the cross-batch offset check on from the entries before ``start``.
    """
    from .reader import ReadOptions, SegmentReader

    # Records become objects only for an internal topic's decoder (control records always do): the
    # invariants read what the record decoder kept as it walked, so memory does not grow with a batch.
    objects = decoder not in (None, "none")
    reader = SegmentReader(stream, ReadOptions(records=options.deep, record_objects=objects,
                                               decompressed_limit=options.decompressed_limit), size=summary.size)
    order = OffsetOrder() if order is None else order
    for item in reader.walk(start, stop):
        if isinstance(item, Finding):
            summary.add_finding(item)
            yield item
            continue
        if options.deep:
            decode_batch(item, decoder)
            item.findings += batch_invariants(item)
            if segment_base is not None:
                item.findings += segment_range_checks(item, segment_base)
            item.findings += order.check(item)   # last: the one check across batches (where parts meet, too)
            item.findings.sort(key=in_file_order)
        summary.add_batch(item)
        if on_batch is not None:
            on_batch(item)
        yield from item.findings
        if progress is not None:
            progress(item.pos + item.size)
    if landed is not None:
        landed["pos"] = reader.landed


def in_file_order(finding: Finding) -> tuple[int, int]:
    """How a batch's findings are sorted: by position (inside compressed records, by the position there)."""
    return finding.pos, finding.inner_pos or 0


# ---------------------------------------------------------------------------
# A large file in parts, a process each
# ---------------------------------------------------------------------------

PART_MIN_SIZE = 32 * 1024 * 1024   # no part is smaller: a fork and the search for a part's start cost ms
MAX_PART_FINDINGS = 10_000         # a part with more is read again by the parent (it would sit in memory)
PART_START_SEARCH = 16 * 1024 * 1024   # how far past its cut a part's first entry is looked for
# Bytes inside records can look like an entry header claiming megabytes; proving one false costs a CRC of
# what it claims.  Entries this size or smaller are tried first.
USUAL_ENTRY_SIZE = 1024 * 1024


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def verify_in_parts(path: str, stream: BinaryIO, summary: FileSummary, options: VerifyOptions, *, progress=None,
                    landed: dict | None = None, on_batch=None, decoder: str | None = None,
                    segment_base: int | None = None) -> Iterator[Finding]:
    """verify_stream's findings for a whole local file, its parts read at once by ``options.jobs`` processes.

    The file is cut in equal parts.  This process reads the first while a
    forked child reads each of the others, from the first entry past its cut
    whose CRC verifies, and sends back what it found: its findings with the
    batches they belong to, its counts, where its walk started and ended.  A
    part's results stand only where the walk before it ended exactly where it
    started, and where its first batch goes on from the offsets before it (the
    one check across batches); otherwise -- a start inside an entry, say, at
    bytes in a record that look like an entry -- this process reads the part
    itself, from where the walk ended.  What comes out, and in what order, is
    verify_stream's over the whole file; only ``on_batch`` is not called for a
    child's batches with nothing to report.
    """
    count = min(options.jobs, summary.size // PART_MIN_SIZE)
    cuts = [summary.size * part // count for part in range(count)] + [summary.size]
    parts = list(zip(cuts, cuts[1:]))
    serial = dataclasses.replace(options, jobs=1)
    children = [_Part.fork(path, cut, stop, summary.size, serial, decoder, segment_base) for cut, stop in parts[1:]]
    order = OffsetOrder()
    walked = {"pos": 0}
    try:
        yield from verify_stream(stream, summary, serial, progress=progress, stop=parts[0][1], landed=walked,
                                 on_batch=on_batch, decoder=decoder, segment_base=segment_base, order=order)
        for (_, stop), child in zip(parts[1:], children):
            found = child.result()
            if found is not None and found.start == walked["pos"] and (not options.deep or found.goes_on_from(order)):
                yield from found.replay(summary, order if options.deep else None, on_batch)
                walked["pos"] = found.landed
                if progress is not None:
                    progress(found.landed)
            elif walked["pos"] < stop:   # read here, on from where the walk ended
                yield from verify_stream(stream, summary, serial, progress=progress, start=walked["pos"], stop=stop,
                                         landed=walked, on_batch=on_batch, decoder=decoder,
                                         segment_base=segment_base, order=order)
    finally:
        for child in children:
            child.close()
    if landed is not None:
        landed["pos"] = walked["pos"]


def part_start(reader, cut: int, stop: int) -> int | None:
    """Where a part cut at ``cut`` starts: the first entry in [cut, stop) whose CRC verifies (looked for no
    further than PART_START_SEARCH).  Only a guess that must be cheap: a wrong one shows at the hand-over."""
    for largest in (USUAL_ENTRY_SIZE, PART_START_SEARCH):
        start = reader.verified_entry_within(cut, min(cut + PART_START_SEARCH, stop), largest)
        if start is not None:
            return start
    return None


@dataclass
class _Found:
    """What a child found in its part: findings in file order, and what the parent needs to go on."""

    items: list                   # a Finding (a damaged range), or (batch, its findings)
    counts: tuple                 # the part's FileSummary: batches, records, batch_bytes, findings, errors
    start: int                    # where the part's walk started
    landed: int                   # ... and ended
    first: object | None          # the part's first batch (its findings are in items)
    last_offset: int | None       # the part's OffsetOrder at its end
    last_pos: int | None

    def goes_on_from(self, order: OffsetOrder) -> bool:
        """Whether the part's own offset checks are the ones a walk from the start makes.

        The part's walk began with no offsets before it; after its first batch it holds what a whole
        walk holds when that batch's last offset is above every offset before it (OffsetOrder.check).
        """
        return self.first is None or order.last_offset is None or self.first.last_offset > order.last_offset

    def replay(self, summary: FileSummary, order: OffsetOrder | None, on_batch) -> Iterator[Finding]:
        """The part's findings; with ``order`` (deep), its first batch checked against the batches before it."""
        summary.batches += self.counts[0]
        summary.records += self.counts[1]
        summary.batch_bytes += self.counts[2]
        summary.findings.update(self.counts[3])
        summary.errors += self.counts[4]
        for item in self.items:
            if isinstance(item, Finding):
                yield item
                continue
            batch, findings = item
            if batch is self.first and order is not None:
                across = order.check(batch)   # verify_stream's last check of a batch, so it sorts the same
                for finding in across:
                    summary.add_finding(finding)
                findings = sorted(findings + across, key=in_file_order)
                batch.findings = findings
                if not findings:
                    continue
            if on_batch is not None:
                on_batch(batch)
            yield from findings
        if order is not None and self.last_offset is not None:
            order.last_offset, order.last_pos = self.last_offset, self.last_pos


class _Part:
    """A part of a file verified by a forked child; what it found comes back pickled through a pipe."""

    def __init__(self, pid: int, pipe: int):
        self.pid, self.pipe = pid, pipe

    @classmethod
    def fork(cls, path: str, cut: int, stop: int, size: int, options: VerifyOptions, decoder, segment_base):
        pipe, child_end = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child: never returns, never runs the parent's exit handlers or flushes its output
            status = 1
            try:
                os.close(pipe)
                found = _verify_part(path, cut, stop, size, options, decoder, segment_base)
                with open(child_end, "wb") as out:
                    pickle.dump(found, out, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        os.close(child_end)
        return cls(pid, pipe)

    def result(self) -> _Found | None:
        """What the child found; None if it failed or found too much (the parent reads the part itself)."""
        try:
            with open(self.pipe, "rb") as results:
                data = results.read()
            found = pickle.loads(data) if data else None
        except (OSError, pickle.UnpicklingError, EOFError):
            found = None
        self.pipe = None
        self._reap(kill=False)
        return found

    def close(self) -> None:
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        self._reap(kill=True)

    def _reap(self, kill: bool) -> None:
        if self.pid is None:
            return
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(self.pid, 0)
        self.pid = None


def _verify_part(path: str, cut: int, stop: int, size: int, options: VerifyOptions, decoder,
                 segment_base) -> _Found | None:
    """A child's part: verify_stream from the part's start up to ``stop``, with a handle of its own on the
    file, kept for the parent.

    Only the batches with findings are kept (and the first, for the check across batches); None when no
    entry starts the part, or it holds more than MAX_PART_FINDINGS findings.
    """
    from .reader import SegmentReader

    summary = FileSummary(path, size)
    order = OffsetOrder()
    items: list = []
    walked: dict = {}
    first = None
    pending = 0   # findings of the batch just handed over that verify_stream is still to yield

    def keep(batch):
        nonlocal first, pending
        pending = len(batch.findings)
        if batch.findings or first is None:
            kept = dataclasses.replace(batch, records=None, record_data=None, record_checks=None, body=None,
                                       findings=[])
            first = kept if first is None else first
            items.append((kept, list(batch.findings)))

    with open(path, "rb", buffering=0) as stream:   # a file position of its own, not the parent's
        start = part_start(SegmentReader(stream, size=size), cut, stop)
        if start is None:
            return None
        for count, finding in enumerate(verify_stream(stream, summary, options, start=start, stop=stop,
                                                      landed=walked, on_batch=keep, decoder=decoder,
                                                      segment_base=segment_base, order=order)):
            if count >= MAX_PART_FINDINGS:
                return None
            if pending:
                pending -= 1   # one of the batch's own: kept with it
            else:
                items.append(finding)   # a damaged range between batches
    counts = (summary.batches, summary.records, summary.batch_bytes, summary.findings, summary.errors)
    return _Found(items, counts, start, walked["pos"], first, order.last_offset, order.last_pos)
