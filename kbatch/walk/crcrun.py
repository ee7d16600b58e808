"""``verify-crc``'s run (without ``--deep``) over the entries it has nothing to say about: a use of the engine.

Without ``--deep`` the full reader checks an entry's frame and CRC and makes
a Batch of it, about 25 µs an entry, for an answer that is nearly always
"nothing to say".  :class:`CrcRun` takes the v2 batches
:func:`kbatch.walk.engine.clean_v2_batches` hands out (framed as
kbatch.format.framing says, a count that is not negative, the CRC holding) and
counts them, in one compiled loop (:func:`kbatch.kernels.cleanruns.counted_batches`,
held to clean_v2_batches by tests/test_recordwalk.py); at any other entry it stops
and the full reader reads that one (:class:`kbatch.walk.engine.Walk`).  Over a whole local file the walk's window
is read ahead on a second thread (kbatch.reading.readahead), so checking one
chunk and reading the next go on at once: the CRC pass of
:func:`kbatch.ops.verify.verify_file`.  It serves every other walk too: a range
of a file (a part, a Spark split), a stream; and ``kbatch replicas``, which keeps
each taken batch's header fields to compare the copies by
(:func:`kbatch.partition.replicas.walk_copy`).
"""

from __future__ import annotations

from typing import Callable

from kbatch.format.framing import CHECKSUMS, size_bounds
from kbatch.kernels.cleanruns import counted_batches
from kbatch.reading.summary import FileSummary
from kbatch.reading.v2 import batch_in_view
from kbatch.walk.engine import clean_v2_batches


class CrcRun:
    """Counts in ``summary`` the v2 batches the full reader would report nothing on without --deep.

    ``max_entry_size`` is the reader's.  ``keep``, when given, is handed each batch taken as
    :func:`kbatch.walk.engine.clean_v2_batches` yields it (``kbatch replicas`` keeps its header fields): it must
    not hold the view, which the window reuses.
    """

    def __init__(self, summary: FileSummary, max_entry_size: int, keep: Callable[[tuple], object] | None = None):
        self.summary = summary
        self.max_entry_size = max_entry_size
        self.keep = keep
        self.least, self.most = size_bounds(2, max_entry_size)   # a v2 batch's size field, framed
        self.taken = 0   # batches taken here (the rest went to the full reader)
        self.last_pos: int | None = None

    def walk(self, window, pos: int, stop: int) -> int:
        """Take the batches from ``pos`` (an entry start) that lie whole in the reader's window and start
        before ``stop``; where the walk stopped (``pos`` itself when the entry there is the full reader's)."""
        if self.keep is None:   # counted in one compiled loop: no object a batch
            data, i = batch_in_view(window, pos)
            base = pos - i   # the file position of data[0]
            with memoryview(data) as view:
                end, taken, records, last_taken = counted_batches(view, i, stop - base, self.least, self.most,
                                                                  CHECKSUMS[2])
            if not taken:
                return pos
            self._count(base + last_taken, taken, records, base + end - pos)
            return base + end
        taken = records = 0
        batch = None
        keep = self.keep
        for batch in clean_v2_batches(window, pos, stop, self.max_entry_size):   # (the hot loop: no more in it)
            taken += 1
            records += batch[4]
            if keep is not None:
                keep(batch)
        if batch is None:
            return pos
        batch_pos, _, i, end, _, _ = batch   # the last: the batches taken lie end to end up to its end
        end_pos = batch_pos + end - i
        self._count(batch_pos, taken, records, end_pos - pos)
        return end_pos

    def _count(self, last_pos: int, taken: int, records: int, size: int) -> None:
        self.last_pos = last_pos
        self.summary.batches += taken
        self.summary.records += records
        self.summary.batch_bytes += size
        self.taken += taken
