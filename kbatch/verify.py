"""Verifying a segment: every checksum, and with ``deep`` every invariant Kafka relies on.

The library side of ``kbatch verify-crc`` (and of scan's findings): the fast
CRC pass where it can answer, else the one reader over the file with the
cross-batch and record-level checks of :mod:`kbatch.invariants`.  Findings
come out in file order.
"""

from __future__ import annotations

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
    if not options.deep and whole and stream_is_file and path != "-" and not is_remote(path):
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
    yield from verify_stream(stream, summary, options, progress=progress, start=start, stop=stop, landed=landed,
                             on_batch=on_batch, decoder=decoder_for_path(path) if options.deep else None,
                             segment_base=segment_base_offset(path))


def verify_stream(stream: BinaryIO, summary: FileSummary, options: VerifyOptions = VerifyOptions(),
                  *, progress=None, start: int = 0, stop: int | None = None,
                  landed: dict | None = None, on_batch=None, decoder: str | None = None,
                  segment_base: int | None = None) -> Iterator[Finding]:
    """Every finding of one input, in file order; ``summary`` counts batches, records and findings.

    Without ``deep`` the reader checks framing and every CRC (each inner
    message of a v0/v1 wrapper too); ``deep`` also decodes every record and
    checks the invariants.  ``progress(pos)`` is called as the walk advances.
    ``start``/``stop`` verify only the entries starting in that range (a
    split of a large file); ``landed["pos"]`` then says where the walk ended.
    ``on_batch(batch)`` is called with each batch before its findings.  With ``deep``, the records of an
    internal topic (``decoder``: kbatch.messages.topics) are read with Kafka's schemas too, and every
    batch is held against ``segment_base``, the base offset the segment's file name says.
    """
    from .reader import ReadOptions, SegmentReader

    # Records become objects only for an internal topic's decoder (control records always do): the
    # invariants read what the record decoder kept as it walked, so memory does not grow with a batch.
    objects = decoder not in (None, "none")
    reader = SegmentReader(stream, ReadOptions(records=options.deep, record_objects=objects,
                                               decompressed_limit=options.decompressed_limit), size=summary.size)
    order = OffsetOrder()
    for item in reader.walk(start, stop):
        if isinstance(item, Finding):
            summary.add_finding(item)
            yield item
            continue
        if options.deep:
            decode_batch(item, decoder)
            item.findings += batch_invariants(item)
            item.findings += order.check(item)
            if segment_base is not None:
                item.findings += segment_range_checks(item, segment_base)
            item.findings.sort(key=lambda finding: (finding.pos, finding.inner_pos or 0))
        summary.add_batch(item)
        if on_batch is not None:
            on_batch(item)
        yield from item.findings
        if progress is not None:
            progress(item.pos + item.size)
    if landed is not None:
        landed["pos"] = reader.landed
