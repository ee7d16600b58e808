"""A large local file read in parts at once, a forked process each, adding up to one walk over it.

The reader walks a segment front to back; what it says about an entry
depends on nothing before it but where the walk stands.  So a file can be
cut in parts, each part walked by its own process from an entry start, and
the results put end to end -- as long as each part starts exactly where the
walk of the part before it ended.  A cut only gives a guess of where a part
starts (the first entry past the cut whose CRC verifies); bytes inside a
record can look like an entry, so the guess is checked at the hand-over, and
a part whose start was wrong is read by the parent, on from where the walk
ended.  :func:`walk_in_parts` is that walk, the one for every command that
reads a file in parts (verify-crc: kbatch.ops.verify; dump --format jsonl:
kbatch.ops.listing)::

    landed = yield from walk_in_parts(path, size, jobs, work, take, walk_here)

``work(stream, start, stop, spill)`` runs in the child: it walks the entries
starting in [start, stop) of its own handle on the file and returns what the
parent needs, picklable, with ``landed`` (where its walk ended) -- or None to
give up, and the parent reads the part.  Bulk output goes to ``spill``, a
temporary file the parent reads afterwards (up to :func:`spill_limit` bytes).
In the parent, ``take(part, found)`` takes a child's result (where its walk
began where the walk stands) and returns where the walk goes on, or None to
read the part itself; ``walk_here(pos, stop)`` reads [pos, stop) itself and
returns where it ended.  Both are generators: what they yield, the walk
yields.  The first part has no child: the parent reads it while the others
are read.  kbatch's output is the same whatever the number of parts; only the
time differs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

PART_MIN_SIZE = 32 * 1024 * 1024   # no part is smaller: a fork and the search for a part's start cost ms
PART_START_SEARCH = 16 * 1024 * 1024   # how far past its cut a part's first entry is looked for
# Bytes inside records can look like an entry header claiming megabytes; proving one false costs a CRC of
# what it claims.  Entries this size or smaller are tried first.
USUAL_ENTRY_SIZE = 1024 * 1024


# A child writes its bulk output up to this much, the parent the rest of its part.  Past it the parent reads
# what is left while the child sits idle, so it is large: half of 256 MiB of 100-byte records is ~450 MB of
# JSON lines.
MAX_SPILL = 1024 * 1024 * 1024


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worth_parts(size: int, jobs: int) -> bool:
    """Whether ``size`` bytes of a local file are read in parts with ``jobs`` processes."""
    return jobs > 1 and size >= 2 * PART_MIN_SIZE and hasattr(os, "fork")


def part_start(reader, cut: int, stop: int) -> int | None:
    """Where a part cut at ``cut`` starts: the first entry in [cut, stop) whose CRC verifies (looked for no
    further than PART_START_SEARCH).  Only a guess that must be cheap: a wrong one shows at the hand-over."""
    for largest in (USUAL_ENTRY_SIZE, PART_START_SEARCH):
        start = reader.verified_entry_within(cut, min(cut + PART_START_SEARCH, stop), largest)
        if start is not None:
            return start
    return None


def part_starts(reader, cuts: list[int], size: int) -> list[int]:
    """Where the parts of a file cut at ``cuts`` (ascending, the first an entry start) start, as
    :func:`walk_in_parts` starts them: the first at its cut, each other at :func:`part_start` between its cut and
    the next.  A part with no start found is left out: the part before it reads on over its bytes, as the parent
    does when a child found none.  For a reader that plans its parts before reading them (kbatch scan's file
    ranges), so that a cut file is cut the same way whoever reads it."""
    starts = cuts[:1]
    for cut, stop in zip(cuts[1:], cuts[2:] + [size]):
        start = part_start(reader, cut, stop)
        if start is not None:
            starts.append(start)
    return starts


@dataclass
class Part:
    """[cut, stop) of the file; after the first, read by a forked child."""

    cut: int
    stop: int
    pid: int | None = None
    pipe: int | None = None     # the child's result comes through it, pickled
    spill: IO[bytes] | None = None   # a temporary file the child wrote its bulk output to

    def result(self, pos: int):
        """The child's payload if its walk began at ``pos``; None if not, if it gave up or failed (or for the
        first part, which has no child)."""
        if self.pipe is None:
            return None
        import pickle

        try:
            with open(self.pipe, "rb") as results:
                data = results.read()
            start, payload = pickle.loads(data) if data else (None, None)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            start, payload = None, None
        self.pipe = None
        self._reap(kill=False)
        return payload if start == pos else None

    def close(self) -> None:
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        self._reap(kill=True)
        if self.spill is not None:
            self.spill.close()
            self.spill = None

    def _reap(self, kill: bool) -> None:
        if self.pid is None:
            return
        if kill:
            import signal   # here: only a part given up on is killed

            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(self.pid, 0)
        self.pid = None


class Parts:
    """The parts of a file from ``start`` (an entry start) on, the children reading all but the first already
    started (see the module)."""

    def __init__(self, path: str, size: int, jobs: int, work, *, spill: bool = False, start: int = 0):
        if spill:
            import tempfile   # here, not at the top: only a run whose children spill output loads it

        count = max(1, min(jobs, (size - start) // PART_MIN_SIZE))
        cuts = [start + (size - start) * part // count for part in range(count)] + [size]
        self.parts = [Part(cut, stop) for cut, stop in zip(cuts, cuts[1:])]
        try:
            for part in self.parts[1:]:
                part.spill = tempfile.TemporaryFile() if spill else None
                _fork(part, path, size, work)
        except BaseException:
            self.close()
            raise

    def __iter__(self):
        return iter(self.parts)

    def __enter__(self) -> Parts:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for part in self.parts:
            part.close()


def _fork(part: Part, path: str, size: int, work) -> None:
    import pickle

    from kbatch.reading.reader import SegmentReader

    pipe, child_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: never returns, never runs the parent's exit handlers or flushes its output
        status = 1
        try:
            os.close(pipe)
            with open(path, "rb", buffering=0) as stream:   # a file position of its own
                start = part_start(SegmentReader(stream, size=size), part.cut, part.stop)
                found = None if start is None else work(stream, start, part.stop, part.spill)
            with open(child_end, "wb") as out:
                pickle.dump((start, found), out, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)
    os.close(child_end)
    part.pid, part.pipe = pid, pipe


def walk_in_parts(path: str, size: int, jobs: int, work, take, walk_here, *, spill: bool = False, start: int = 0):
    """The walk over a local file from ``start`` (an entry start) to its end, in parts (see the module); yields
    what ``take`` and ``walk_here`` yield, returns where the walk ended."""
    pos = start
    with Parts(path, size, jobs, work, spill=spill, start=start) as parts:
        for part in parts:   # in file order; the children are already at work
            found = part.result(pos)
            if found is not None:
                landed = yield from take(part, found)
                pos = pos if landed is None else landed
            if pos < part.stop:   # no child, or what a child left of its part: read here, on from pos
                pos = yield from walk_here(pos, part.stop)
    return pos


def spill_limit(children: int) -> int:
    """How much each child may write to its spill file: MAX_SPILL, and all of them together never more than
    a quarter of the free space where they are written."""
    import shutil   # (here, as tempfile: a walk whose children write no output, verify-crc's, loads neither)
    import tempfile

    try:
        free = shutil.disk_usage(tempfile.gettempdir()).free
    except OSError:
        return MAX_SPILL
    return min(MAX_SPILL, free // (4 * max(1, children)))


def copy_out(spill, out) -> None:
    """A part's spilled output to ``out``'s bytes (a text stream; both UTF-8): by the kernel where the output
    is a file or a pipe."""
    spill.seek(0)
    out.flush()
    try:
        target = out.buffer.fileno()
    except (OSError, ValueError):   # a buffer without a file descriptor (tests' capture)
        import shutil

        shutil.copyfileobj(spill, out.buffer, 1024 * 1024)
        return
    size, sent = os.fstat(spill.fileno()).st_size, 0
    while sent < size:
        sent += os.sendfile(target, spill.fileno(), sent, size - sent)
