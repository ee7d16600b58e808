"""``dump --format jsonl``'s listing without an object per batch, for the batches it lists as they are.

The full reader makes a Batch of every entry, and the listing writes its line
from it: about 25 µs a batch in Python, most of it the walk's machinery and the
object, not the batch.  Nearly every batch of a listing is a v2 batch whose CRC
verifies and whose line says nothing but its header.  :class:`ListRun` walks
those lying whole in the reader's window: each header unpacked with the struct
derived from the declaration, its CRC checked, its fields made by
:func:`kbatch.reading.v2.batch_fields` (what the full reader makes its Batch
of) and its line written by the compiled writer
(:func:`kbatch.kernels.jsonl.fields_json`, batch_json's own).

It only ever accepts: at an entry that is not such a batch (one
:func:`kbatch.walk.engine.clean_v2_batches` does not hand out, or a line the
writer leaves to json.dumps) it stops, and the full reader lists that one
entry, then hands back (a use of :class:`kbatch.walk.engine.Walk`).  tests/test_fastlist.py holds the output to the full reader's on
every fixture, damage and random headers.
"""

from __future__ import annotations

from kbatch.kernels.jsonl import fields_json
from kbatch.reading.v2 import batch_fields
from kbatch.walk.engine import clean_v2_batches
from kbatch.format.structs import BATCH_HEADER
from kbatch.reading.summary import FileSummary

_unpack_header = BATCH_HEADER.unpack_from

# Lines joined into one write.  Not a window's at once: a line is ~900 bytes, an empty batch 61, so the
# 2 MiB window (kbatch.reading.window.CHUNK) of those would hold ~30 MiB of lines.
LINES_PER_WRITE = 64


class ListRun:
    """Lists the v2 batches the full reader would hand out clean, counting them in ``summary``.

    ``head`` opens every line (JsonlSink.head), ``write(lines)`` takes a run's lines (UTF-8 bytes, each
    ending in a newline), ``max_entry_size`` is the reader's.
    """

    def __init__(self, summary: FileSummary, head: bytes, write, max_entry_size: int):
        self.summary = summary
        self.head = head
        self.write = write
        self.max_entry_size = max_entry_size
        self.listed = 0   # batches listed here (the rest went to the full reader)
        self.last_pos: int | None = None

    def walk(self, window, pos: int, stop: int) -> int:
        """List the batches from ``pos`` (an entry start) that lie whole in the reader's window and start
        before ``stop``; where the walk stopped (``pos`` itself when the entry there is the full reader's)."""
        head, lines = self.head, []
        listed = records = batch_bytes = 0
        for batch_pos, view, i, end, count, computed in clean_v2_batches(window, pos, stop, self.max_entry_size):
            # (the engine read only the fields it checks; a line takes the whole header)
            line = fields_json(batch_fields(batch_pos, end - i, _unpack_header(view, i), computed), head)
            if line is None:
                break
            lines.append(line)
            if len(lines) == LINES_PER_WRITE:
                self._write(lines)
            listed += 1
            records += count
            batch_bytes += end - i
            pos = batch_pos + end - i
            self.last_pos = batch_pos
        self._write(lines)
        self.summary.batches += listed
        self.summary.records += records
        self.summary.batch_bytes += batch_bytes
        self.listed += listed
        return pos

    def _write(self, lines: list) -> None:
        """Write the lines (and empty the list)."""
        if lines:
            lines.append(b"")
            self.write(b"\n".join(lines))
            lines.clear()
