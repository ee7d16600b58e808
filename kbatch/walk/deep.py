"""``verify-crc --deep`` without an object per batch, for the batches it has nothing to say about.

The full reader makes a Batch object of every entry, walks its records into a
RecordChecks and words every check as a finding: about 30 µs a batch in
Python, whatever the batch says.  Most batches say nothing.
:class:`DeepRun` hands the v2 data batches (any codec; a control batch is the
full reader's) lying whole in the reader's window to
:class:`kbatch.kernels.cleanruns.CleanBatches`, one compiled loop: each header's
fields read by the declaration's offsets and formats, every rule --deep
applies asked on plain values (the functions the full path words its findings
from), its CRC, its records inflated by the reader's decompressor and walked
in place by the one record decoder.

It only ever accepts: at a batch that breaks a rule, or an entry it does not
walk (a v0/v1 entry, a control batch, damage, a codec error), it stops, and
the full reader reads that one entry and reports exactly, then hands back (a
use of :class:`kbatch.walk.engine.Walk`, in :func:`kbatch.ops.verify.verify_stream`).  So the output is the full
reader's whatever the run takes (tests/test_fastdeep.py holds the two to the
same findings and counts on every fixture, every rule and random damage,
compiled and pure); only the time differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kbatch.format.codecs import CodecError, Decompressor
from kbatch.format.framing import CHECKSUMS, size_bounds
from kbatch.kernels import cleanruns
from kbatch.kernels.cleanruns import CleanBatches
from kbatch.reading import invariants
from kbatch.reading.invariants import OffsetOrder
from kbatch.reading.v2 import batch_in_view
from kbatch.reading.summary import FileSummary

if TYPE_CHECKING:   # (handed in by a partition's check only: a lone segment's --deep does not load it)
    from kbatch.walk.headers import Headers


def checks_every_rule() -> bool:
    """Whether the compiled loop checks every rule the full reader holds a v2 batch to: a rule it does not know
    would otherwise pass unseen in every batch it takes."""
    return {rule.__name__ for rule in invariants.V2_BATCH_RULES} <= cleanruns.RULES


class CompiledRun:
    """A run over :class:`kbatch.kernels.cleanruns.CleanBatches`, the compiled loop: the v2 data batches lying
    whole in the reader's window (slid to hold the first: kbatch.reading.v2.batch_in_view), framed by
    framing's bounds, inflated by the reader's decompressor; what each run takes and counts is its own."""

    def __init__(self, batches: CleanBatches, max_entry_size: int, decompressor: Decompressor):
        self.batches = batches
        self.max_entry_size = max_entry_size
        self.inflate = inflater(decompressor)
        self.last_pos: int | None = None

    def _walk(self, window, pos: int, stop: int, last_offset: int | None, last_pos: int | None,
              segment_base: int | None, *, from_first: bool = False) -> tuple[int, int, memoryview, int]:
        """The compiled loop from ``pos`` (an entry start) over the batches starting before ``stop``, after a
        batch ending at ``last_offset`` at ``last_pos`` (``from_first``: after whatever the first batch's
        base offset follows): (the file position of ``data[0]``, where it stopped in ``data``, ``data``, the
        batches it took)."""
        data, i = batch_in_view(window, pos)
        base = pos - i   # the file position of data[0]
        batches = self.batches
        if from_first:
            if i + 8 > len(data):
                return base, i, data, 0
            last_offset = int.from_bytes(data[i:i + 8], "big", signed=True) - 1
        before = batches.batches
        batches.last_offset, batches.last_pos = last_offset, last_pos
        least, most = size_bounds(2, self.max_entry_size)   # framing's rules, handed to the compiled loop
        stopped = batches.walk(data, i, stop - base, base, least, most, segment_base, self.inflate, CHECKSUMS[2])
        taken = batches.batches - before
        if taken:
            self.last_pos = batches.last_pos
        return base, stopped, data, taken


class DeepRun(CompiledRun):
    """Walks the v2 data batches of one input that --deep has nothing to say about, counting them in
    ``summary`` and moving ``order`` on.

    ``order`` is the walk's OffsetOrder, shared with the full reader's batches; ``segment_base`` the base
    offset the segment's file name says (None: not named so); ``max_entry_size`` the reader's, and
    ``decompressor`` the reader's too (its limit, its buffer).  ``headers`` (kbatch.walk.headers.Headers), when
    given, takes the header of each batch walked here, for the partition cross-checks.
    """

    def __init__(self, summary: FileSummary, order: OffsetOrder, segment_base: int | None, max_entry_size: int,
                 decompressor: Decompressor, headers: Headers | None = None):
        super().__init__(CleanBatches(), max_entry_size, decompressor)
        self.summary = summary
        self.headers = headers
        self.order = order
        self.segment_base = segment_base
        self.decompressor = decompressor
        self.walked = 0   # batches walked here (the rest went to the full reader)
        self.takes_batches = checks_every_rule()

    def walk(self, window, pos: int, stop: int) -> int:
        """Walk the batches from ``pos`` that lie whole in the reader's window and start before ``stop``; where
        the walk stopped (``pos`` itself when the entry there is the full reader's)."""
        if not self.takes_batches:
            return pos
        batches, order = self.batches, self.order
        records, batch_bytes = batches.records, batches.batch_bytes
        base, stopped, data, walked = self._walk(window, pos, stop, order.last_offset, order.last_pos,
                                                 self.segment_base)
        if walked:
            # the last batch walked here: its base offset (for the offset-outlier rule's wording)
            at = batches.last_pos - base
            order.walked_past(batches.last_offset, batches.last_pos,
                              int.from_bytes(data[at:at + 8], "big", signed=True))
            if self.headers is not None:
                self.headers.run(data, pos - base, stopped, base)
        self.walked += walked
        self.summary.batches += walked
        self.summary.records += batches.records - records
        self.summary.batch_bytes += batches.batch_bytes - batch_bytes
        return base + stopped


class MatchRun(CompiledRun):
    """grep's run: the v2 data batches in which no record is selected (the compiled loop with the query's
    RecordMatch).  It stops at the first it does not take -- one where a record may be selected, or one with
    anything to report -- which the full reader reads.  Offsets in order are not the search's business: it
    takes batches whose offsets run on from the first (a gap or an overlap ends it)."""

    def __init__(self, match, max_entry_size: int, decompressor: Decompressor):
        super().__init__(CleanBatches(match=match), max_entry_size, decompressor)
        self.taken = 0

    def walk(self, window, pos: int, stop: int) -> int:
        base, stopped, _, self.taken = self._walk(window, pos, stop, None, None, None, from_first=True)
        return base + stopped


def inflater(decompressor: Decompressor):
    """What the compiled loop inflates a compressed batch's records with: as kbatch.reading.v2.load_records
    inflates them, None where they do not inflate (that batch is then the full reader's)."""
    def inflate(codec_id: int, payload):
        try:
            return decompressor.decompress_view(codec_id, payload, 2)
        except CodecError:
            return None
    return inflate
