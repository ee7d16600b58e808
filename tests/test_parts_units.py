"""kbatch.walk.parts piece by piece, without a file read in parts: where the parts are cut, which part start is
looked for and how far, what a child's answer is taken for, how a child is reaped and a spill copied out.

tests/test_parts.py holds whole walks in parts to one walk; these pin each piece to exact values, fast.
"""

from __future__ import annotations

import io
import os
import pickle
import time

import pytest

import kbatch.walk.parts as parts
from kbatch.walk.parts import MAX_SPILL, PART_MIN_SIZE, PART_START_SEARCH, USUAL_ENTRY_SIZE, Part, Parts


def test_the_sizes_are_the_documented_ones():
    assert (PART_MIN_SIZE, PART_START_SEARCH, USUAL_ENTRY_SIZE, MAX_SPILL) == (2**25, 2**24, 2**20, 2**30)


def test_usable_cpus_is_the_affinity_else_the_count_else_one(monkeypatch):
    assert parts.usable_cpus() == len(os.sched_getaffinity(0))
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 5)
    assert parts.usable_cpus() == 5
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert parts.usable_cpus() == 1


def test_a_file_is_worth_parts_from_two_part_sizes_and_two_jobs(monkeypatch):
    assert parts.worth_parts(64 * 1024 * 1024, 2)
    assert not parts.worth_parts(64 * 1024 * 1024 - 1, 2)
    assert not parts.worth_parts(10**12, 1)
    monkeypatch.delattr(os, "fork")
    assert not parts.worth_parts(10**12, 8)


class _Reader:
    """verified_entry_within answering from a table of (start, stop, max_size) -> position, every call kept."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def verified_entry_within(self, start, stop, max_size):
        self.calls.append((start, stop, max_size))
        return self.answers.get((start, stop, max_size))


def test_a_part_start_is_looked_for_among_usual_entries_first_then_any_up_to_the_search():
    reader = _Reader({(100, 100 + 2**24, 2**20): 4000})
    assert parts.part_start(reader, 100, 10**9) == 4000
    assert reader.calls == [(100, 100 + 2**24, 2**20)]

    reader = _Reader({(100, 100 + 2**24, 2**24): 0})   # an answer of 0 is a start (is not None)
    assert parts.part_start(reader, 100, 10**9) == 0
    assert reader.calls == [(100, 100 + 2**24, 2**20), (100, 100 + 2**24, 2**24)]

    reader = _Reader({})   # the search ends at the part's end when that is nearer
    assert parts.part_start(reader, 100, 5000) is None
    assert reader.calls == [(100, 5000, 2**20), (100, 5000, 2**24)]


def _answering(start, payload) -> Part:
    """A part whose child answered (start, payload) through its pipe (no child: nothing to reap)."""
    pipe, child_end = os.pipe()
    os.write(child_end, pickle.dumps((start, payload)))
    os.close(child_end)
    return Part(0, 10, pipe=pipe)


def test_a_childs_payload_is_taken_only_where_its_walk_began_where_the_walk_stands():
    part = _answering(40, {"landed": 90})
    assert part.result(40) == {"landed": 90}
    assert part.pipe is None and part.result(40) is None   # read once
    assert _answering(40, {"landed": 90}).result(41) is None
    assert _answering(0, "found").result(0) == "found"
    assert _answering(None, None).result(0) is None   # the child found no start


@pytest.mark.parametrize("written", [b"", b"not a pickle", pickle.dumps((3, "cut"))[:-4]],
                         ids=["nothing", "garbage", "cut"])
def test_a_child_that_answered_nothing_readable_gave_up(written):
    pipe, child_end = os.pipe()
    os.write(child_end, written)
    os.close(child_end)
    part = Part(0, 10, pipe=pipe)
    assert part.result(3) is None and part.pipe is None
    with pytest.raises(OSError):
        os.fstat(pipe)   # closed


def test_the_first_part_has_no_child_and_no_answer():
    assert Part(0, 10).result(0) is None


def _child(seconds: float) -> int:
    pid = os.fork()
    if pid == 0:
        time.sleep(seconds)
        os._exit(7)
    return pid


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True   # reaped already
    return False


def test_a_child_that_answered_is_waited_for_and_one_given_up_on_is_killed():
    part = _answering(5, "x")
    part.pid = pid = _child(0)
    assert part.result(5) == "x" and part.pid is None and _gone(pid)

    pipe, _ = os.pipe()
    started = time.monotonic()
    part = Part(0, 10, pid=_child(60), pipe=pipe, spill=io.BytesIO(b"lines"))
    pid, spill = part.pid, part.spill
    part.close()
    assert time.monotonic() - started < 30   # killed, not waited out
    assert (part.pid, part.pipe, part.spill) == (None, None, None) and spill.closed and _gone(pid)
    with pytest.raises(OSError):
        os.fstat(pipe)
    part.close()   # twice is harmless


def test_a_child_that_answered_is_waited_for_not_killed(tmp_path):
    """The answer comes before the child's end: result() waits for the end (a kill would cut it short)."""
    marker = tmp_path / "ended"
    part = _answering(5, "x")
    pid = os.fork()
    if pid == 0:
        time.sleep(0.3)
        marker.write_bytes(b"")
        os._exit(0)
    part.pid = pid
    assert part.result(5) == "x" and marker.exists()


def test_a_part_without_a_child_closes_without_one():
    part = Part(0, 10)
    part.close()
    assert (part.pid, part.pipe, part.spill) == (None, None, None)


def _parts(monkeypatch, size, jobs, *, start=0, spill=False, part_min=100):
    """Parts with PART_MIN_SIZE ``part_min`` and no child forked: the (cut, stop) of each part forked for."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", part_min)
    forked = []

    def fork(part, path, file_size, work):
        assert (path, file_size, work) == ("x.log", size, _work)
        forked.append((part.cut, part.stop))

    monkeypatch.setattr(parts, "_fork", fork)
    made = Parts("x.log", size, jobs, _work, spill=spill, start=start)
    return [(part.cut, part.stop) for part in made], forked, made


def _work(stream, start, stop, spill):
    """What a child runs (never, where the fork is recorded instead)."""


def test_a_file_is_cut_in_equal_parts_one_a_job_but_none_under_the_least_size(monkeypatch):
    cuts, forked, _ = _parts(monkeypatch, 1000, 3)
    assert cuts == [(0, 333), (333, 666), (666, 1000)] and forked == cuts[1:]
    cuts, forked, _ = _parts(monkeypatch, 1000, 4, start=100, part_min=300)   # 900 bytes: three parts of 300
    assert cuts == [(100, 400), (400, 700), (700, 1000)] and forked == cuts[1:]
    cuts, forked, _ = _parts(monkeypatch, 1000, 20)   # ten parts of the least size, not twenty
    assert len(cuts) == 10 and cuts[1] == (100, 200)
    assert _parts(monkeypatch, 200, 8)[0] == [(0, 100), (100, 200)]
    assert _parts(monkeypatch, 199, 8)[:2] == ([(0, 199)], [])   # under two parts' size: one part, no child
    assert _parts(monkeypatch, 1000, 1)[:2] == ([(0, 1000)], [])
    assert _parts(monkeypatch, 1000, 3, start=1000)[:2] == ([(1000, 1000)], [])


def test_each_child_but_not_the_first_part_spills_to_a_temporary_file(monkeypatch):
    _, _, made = _parts(monkeypatch, 1000, 3, spill=True)
    first, *children = list(made)
    assert first.spill is None and all(part.spill.writable() for part in children)
    with made:
        pass
    assert all(part.spill is None for part in made)
    _, _, made = _parts(monkeypatch, 1000, 3)
    assert [part.spill for part in made] == [None, None, None]
    assert [part.spill for part in Parts("x.log", 1000, 3, _work)] == [None, None, None]   # no spill by default


def test_a_fork_that_fails_closes_the_parts_forked(monkeypatch):
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 100)
    closed = []
    monkeypatch.setattr(Part, "close", lambda part: closed.append(part.cut))

    def fork(part, path, size, work):
        if part.cut == 666:
            raise OSError("no more processes")

    monkeypatch.setattr(parts, "_fork", fork)
    with pytest.raises(OSError, match="no more processes"):
        Parts("x.log", 1000, 3, None)
    assert closed == [0, 333, 666]


def _drain(walk):
    """What a generator yields, and what it returns."""
    said = []
    while True:
        try:
            said.append(next(walk))
        except StopIteration as ended:
            return said, ended.value


def test_a_walk_in_parts_takes_each_childs_walk_and_reads_what_it_left(monkeypatch):
    """Three parts [0,333) [333,666) [666,1000): the first read here; the second's child began at 333 and its
    walk ended at 500, the rest read here; the third's child began at 700, not where the walk stands (666):
    read here."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 100)
    answers = {333: (333, "second"), 666: (700, "third")}

    def fork(part, path, size, work):
        assert (path, size, work, part.spill) == ("x.log", 1000, _work, None)
        part.pipe = True

    monkeypatch.setattr(parts, "_fork", fork)
    monkeypatch.setattr(Part, "result", lambda part, pos: answers[part.cut][1]
                        if part.pipe and answers[part.cut][0] == pos else None)
    monkeypatch.setattr(Part, "close", lambda part: None)

    def take(part, found):
        yield ("took", part.cut, found)
        return 500

    def walk_here(pos, stop):
        yield ("read", pos, stop)
        return stop

    assert _drain(parts.walk_in_parts("x.log", 1000, 3, _work, take, walk_here)) == \
        ([("read", 0, 333), ("took", 333, "second"), ("read", 500, 666), ("read", 666, 1000)], 1000)


def test_a_take_that_declines_leaves_the_part_to_the_parent_and_a_whole_take_reads_nothing(monkeypatch):
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 100)
    monkeypatch.setattr(parts, "_fork", lambda part, path, size, work: setattr(part, "pipe", True))
    monkeypatch.setattr(Part, "result", lambda part, pos: "child" if part.pipe else None)   # the first: no child
    monkeypatch.setattr(Part, "close", lambda part: None)
    landed = {333: None, 666: 1000}   # the second's take declines, the third's takes its whole part

    def take(part, found):
        yield ("took", part.cut)
        return landed[part.cut]

    def walk_here(pos, stop):
        yield ("read", pos, stop)
        return stop

    assert _drain(parts.walk_in_parts("x.log", 1000, 3, None, take, walk_here)) == \
        ([("read", 0, 333), ("took", 333), ("read", 333, 666), ("took", 666)], 1000)
    # from a start: [400, 600) [600, 800) [800, 1000)
    landed.update({600: 800, 800: None})
    assert _drain(parts.walk_in_parts("x.log", 1000, 3, None, take, walk_here, start=400)) == \
        ([("read", 400, 600), ("took", 600), ("took", 800), ("read", 800, 1000)], 1000)


def test_children_forked_for_real_answer_for_their_parts(tmp_path, monkeypatch):
    """Thirty batches of equal size L; three parts cut at size // 3 and 2 * size // 3; each child starts at the
    first batch at or past its cut (its CRC verifies) and its answer is taken where the walk stands."""
    from . import handmade

    batches = [handmade.batch(3 * n, [(b"k", b"v%02d" % n)] * 3) for n in range(30)]
    size_of_one = len(batches[0])
    assert {len(batch) for batch in batches} == {size_of_one}
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    size = 30 * size_of_one
    monkeypatch.setattr(parts, "PART_MIN_SIZE", size // 3)

    def boundary(pos):   # the first batch start at or past pos
        return -(-pos // size_of_one) * size_of_one

    def work(stream, start, stop, spill):
        stream.seek(start)
        return ("child", start, boundary(stop), stream.read(8))

    def take(part, found):
        yield found
        return found[2]

    def walk_here(pos, stop):
        yield ("parent", pos, boundary(stop))
        return boundary(stop)

    first, second = boundary(size // 3), boundary(2 * size // 3)
    assert _drain(parts.walk_in_parts(str(path), size, 3, work, take, walk_here)) == (
        [("parent", 0, first), ("child", first, second, (first // size_of_one * 3).to_bytes(8, "big")),
         ("child", second, size, (second // size_of_one * 3).to_bytes(8, "big"))], size)


def test_the_spill_limit_is_a_quarter_of_the_free_space_shared_and_max_spill_if_unknown(monkeypatch):
    import collections
    import shutil

    import tempfile

    usage = collections.namedtuple("usage", "total used free")
    asked = []
    monkeypatch.setattr(shutil, "disk_usage", lambda path: asked.append(path) or usage(10**12, 0, 4000))
    assert (parts.spill_limit(3), parts.spill_limit(1), parts.spill_limit(0)) == (333, 1000, 1000)
    assert asked == [tempfile.gettempdir()] * 3

    def unknown(path):
        raise OSError("no such place")

    monkeypatch.setattr(shutil, "disk_usage", unknown)
    assert parts.spill_limit(3) == MAX_SPILL


def test_a_spill_is_copied_out_whole_to_a_file_and_to_a_buffer(tmp_path):
    import tempfile

    data = bytes(range(256)) * 5000   # 1.28 MB: more than one piece either way
    with tempfile.TemporaryFile() as spill:
        spill.write(data)
        with open(tmp_path / "out", "w", encoding="utf-8") as out:
            out.write("before\n")
            parts.copy_out(spill, out)   # by the kernel: what `out` held is flushed first
        assert (tmp_path / "out").read_bytes() == b"before\n" + data

        buffer = io.BytesIO()
        text = io.TextIOWrapper(buffer, encoding="utf-8", write_through=False)
        text.write("head\n")
        parts.copy_out(spill, text)
        assert buffer.getvalue() == b"head\n" + data

        # a pipe takes what its buffer holds at a time: several sends, each on from where the last ended
        import threading

        read_end, write_end = os.pipe()
        got = []
        reader = threading.Thread(target=lambda: got.append(open(read_end, "rb").read()))
        reader.start()
        with open(write_end, "w", encoding="utf-8") as out:
            parts.copy_out(spill, out)
        reader.join(30)
        assert got == [data]
