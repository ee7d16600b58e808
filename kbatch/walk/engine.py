"""The one walk engine: a fast run over the entries it has nothing to say about, the full reader for the rest.

The full reader (:class:`kbatch.reading.reader.SegmentReader`) makes a Batch
of every entry and words every check as a finding: exact, and about 25-30 µs
an entry in Python whatever the entry says.  Most entries say nothing.  So a
walk goes::

    while pos < stop:
        pos = run.walk(window, pos, stop)      # as many entries as the run takes, without an object each
        if the run took none:
            the full reader reads the one entry at pos (or the damaged range there), and pos moves past it

A run only ever accepts: at an entry it does not take it stops, and the full
reader reports on that entry exactly, then hands back.  So what a walk says is
the full reader's whatever the run takes; only the time differs.  Each use of
the engine supplies its run, which says what a taken entry yields and where
to hand off:

* the CRC run (:class:`kbatch.walk.crcrun.CrcRun`, ``verify-crc``): a v2 batch
  framed as framing says and whose CRC holds, counted;
* the deep run (:class:`kbatch.walk.deep.DeepRun`, ``verify-crc --deep``): a
  v2 data batch that breaks none of the batch and record rules, in the
  compiled loop;
* the listing run (:class:`kbatch.walk.listing.ListRun`, ``dump --format
  jsonl``): a v2 batch whose CRC holds and whose line the compiled writer
  writes;
* grep's match run (:class:`kbatch.walk.deep.MatchRun`, ``grep``): the deep run's
  batches in which no record is selected;
* the window run (:class:`kbatch.partition.seek.WindowRun`, ``dump --offset-range``,
  ``--since``): the entries whose header puts them outside the selected offsets
  or times, stepped over unread;
* the capture's run (:class:`kbatch.capture.batches._LinesTaken`, ``pcap --format
  jsonl``): the CRC run's batches whose header the header rules say nothing of,
  each one's line written in the compiled loop as it is taken.

Every command reaches a segment's entries through :func:`entries` (a walk with
no run is the full reader's alone), and most hand them on with :func:`each`.

The CRC run and the listing run take the batches :func:`clean_v2_batches`
hands out (the capture's compiled loop the same ones: tests/test_recordwalk.py
holds it to them); the deep run's compiled loop frames them by the same bounds
(kbatch.format.framing.size_bounds).  Over a whole local file, verify-crc's
walk has its window read ahead on a second thread (kbatch.reading.readahead).
"""

from __future__ import annotations

from typing import Callable, Iterator, Protocol

from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS, size_bounds
from kbatch.format.structs import BATCH_HEADER, LOG_OVERHEAD
from kbatch.kernels.batchrules import framed_v2_batch
from kbatch.reading.model import Batch
from kbatch.reading.v2 import batch_in_view

# What the runs check of each batch, read without the header's other fields (the hot loop's one unpack).
_FRAME = BATCH_HEADER.picker("batch_length", "magic", "crc", "records_count")
_unpack_frame = _FRAME.unpack_from


class Run(Protocol):
    last_pos: int | None   # where the last batch it took starts (the reader reads its offsets if damage follows)

    def walk(self, window, pos: int, stop: int) -> int:
        """Take the entries from ``pos`` (an entry start) that start before ``stop``; where it stopped (``pos``
        itself when the entry there is the full reader's)."""


class Walk:
    """One walk over a reader's input: the run's entries taken in bulk, every other one read by the reader.

    :meth:`items` yields what the full reader hands out (a Batch per entry it reads, a Finding per damaged
    range, and at the end the finding that the input was cut while it was read); :attr:`landed` is where
    the walk ended.
    """

    def __init__(self, reader, run: Run | None = None):
        self.reader = reader
        self.run = run
        self.landed: int | None = None

    def items(self, start: int, stop: int, after_run=None) -> Iterator[Batch | Finding]:
        """The full reader's items for the entries starting in [start, stop) that the run does not take.

        ``after_run(pos)`` is called each time the run went on to ``pos``; when it answers true the walk
        ends there.  A caller that holds a Batch should let it go before asking for the next item: it holds
        a view of the reader's window, which the run reads on in.
        """
        reader, run = self.reader, self.run
        pos = self.landed = start
        while pos < min(stop, reader.size):   # (the reader's size shrinks if the file is cut while it is read)
            if run is not None:
                taken = run.walk(reader.window, pos, stop)
                if taken > pos:
                    pos = self.landed = taken
                    reader.passed_batch_at(run.last_pos)   # (a damaged entry's offsets follow it)
                    if after_run is not None and after_run(pos):
                        return
                    continue
            # The entry at pos (or the damaged range there) when the run goes on after it; else all of them.
            yield from reader.walk(pos, pos + 1 if run is not None else stop)
            pos = self.landed = reader.landed
        yield from reader.ending()   # the file cut while it was read


def entries(reader, start: int = 0, stop: int | None = None, run: Run | None = None) -> Iterator[Batch | Finding]:
    """The one way any command reaches a segment's entries: what :meth:`Walk.items` yields for [start, stop)
    (the whole input by default), with ``run`` taking the entries it has nothing to say about.

    ``start`` is where an entry begins (0, or a position the reader or an index verified).
    """
    return Walk(reader, run).items(start, reader.size if stop is None else stop)


def each(items: Iterator[Batch | Finding], batch: Callable[[Batch], object],
         region: Callable[[Finding], object]) -> object:
    """Hand each of ``items`` (:func:`entries`) on: a batch to ``batch``, a damaged range or any other finding
    about the bytes (a zero tail, the input cut while read) to ``region``.  A true answer ends the walk there
    and is returned; else None."""
    for item in items:
        answer = region(item) if isinstance(item, Finding) else batch(item)
        if answer:
            return answer
    return None


def clean_v2_batches(window, pos: int, stop: int, max_entry_size: int):
    """The v2 batches from ``pos`` (an entry start) on that start before ``stop``, lie whole in the reader's
    window (slid to hold the first: :func:`kbatch.reading.v2.batch_in_view`), are framed as
    kbatch.format.framing says, hold a count that is not negative and whose CRC holds: the ones the full
    reader reads without a finding when it does not walk their records.  Each as (file position, view, i,
    end, records count, computed CRC): the batch's bytes are ``view[i:end]``.  It ends at the first entry
    that is not one, which the full reader then reads.
    """
    data, i = batch_in_view(window, pos)
    base = pos - i                       # the file position of data[0]
    limit, last = len(data), stop - base
    least, most = size_bounds(2, max_entry_size)
    crc, crc_start = CHECKSUMS[2].function, CHECKSUMS[2].start
    with memoryview(data) as view:
        while i < last and i + _FRAME.size <= limit:
            batch_length, magic, stored_crc, count = _unpack_frame(data, i)
            end = i + LOG_OVERHEAD + batch_length
            if not framed_v2_batch(magic, batch_length, least, most) or end > limit:
                return   # not a v2 batch, a size that is damage, or one going on past the window
            # kbatch.reading.v2.read_batch after the frame: the CRC, and a count that is not negative.
            if count < 0:
                return
            computed = crc(view[i + crc_start:end])
            if computed != stored_crc:
                return
            yield base + i, view, i, end, count, computed
            i = end
