"""``verify-crc``'s run (without ``--deep``) over the entries it has nothing to say about: a use of the engine.

Without ``--deep`` the full reader checks an entry's frame and CRC and makes
a Batch of it, about 25 µs an entry, for an answer that is nearly always
"nothing to say".  :class:`CrcRun` takes the v2 batches
:func:`kbatch.walk.engine.clean_v2_batches` hands out (framed as
kbatch.format.framing says, a count that is not negative, the CRC holding) and
counts them; at any other entry it stops and the full reader reads that one
(:class:`kbatch.walk.engine.Walk`).  Over a whole local file the walk's window
is read ahead on a second thread (kbatch.reading.readahead), so checking one
chunk and reading the next go on at once: the CRC pass of
:func:`kbatch.ops.verify.verify_file`.  It serves every other walk too: a range
of a file (a part, a Spark split), a stream; and ``kbatch replicas``, which keeps
each taken batch's header fields to compare the copies by
(:func:`kbatch.partition.replicas.walk_copy`).
"""

from __future__ import annotations

from typing import Callable

from kbatch.reading.summary import FileSummary
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
        self.taken = 0   # batches taken here (the rest went to the full reader)
        self.last_pos: int | None = None

    def walk(self, window, pos: int, stop: int) -> int:
        """Take the batches from ``pos`` (an entry start) that lie whole in the reader's window and start
        before ``stop``; where the walk stopped (``pos`` itself when the entry there is the full reader's)."""
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
        self.last_pos = batch_pos
        self.summary.batches += taken
        self.summary.records += records
        self.summary.batch_bytes += end_pos - pos
        self.taken += taken
        return end_pos
