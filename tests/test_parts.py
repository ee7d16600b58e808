"""verify-crc over a large file in parts, a forked process each, says exactly what one walk over it says.

The parts are made small here (PART_MIN_SIZE) so that the fixtures and a few handmade segments are cut.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import kbatch.walk.parts as parts
import kbatch.ops.verify as verify
from kbatch.reading.reader import SegmentReader
from kbatch.reading.summary import FileSummary
from kbatch.render.verify import BatchOffsets

from . import handmade
from .helpers import FIXTURES, fixture_id, fixture_paths, run_kbatch


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of 64 bytes and up, and the (cut, stop) of each part a child was forked for."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    forks = []
    fork = parts._fork

    def counted(part, *args):
        forks.append((part.cut, part.stop))
        return fork(part, *args)

    monkeypatch.setattr(parts, "_fork", counted)
    return forks


def _verify(path, *, jobs: int, deep: bool):
    """Every finding with the offsets of the batch it was reported under, and the summary."""
    summary = FileSummary(str(path), path.stat().st_size)
    batches = BatchOffsets()   # as verify-crc's outputs tell a finding's batch
    seen = []
    with open(path, "rb", buffering=0) as stream:
        for finding in verify.verify_file(str(path), stream, summary, verify.VerifyOptions(deep=deep, jobs=jobs),
                                          on_batch=batches.entry):
            batch = batches.batch_of(finding)
            seen.append((finding, None if batch is None else (batch.base_offset, batch.last_offset)))
    return seen, summary.as_dict()


@pytest.mark.parametrize("deep", [True, False], ids=["deep", "crc"])
@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_every_fixture_verifies_the_same_in_parts(path, deep, small_parts):
    whole = _verify(path, jobs=1, deep=deep)
    assert not small_parts
    for jobs in (2, 3, 7):
        forked = len(small_parts)
        assert _verify(path, jobs=jobs, deep=deep) == whole
        # it compares something: --deep reads every fixture of two parts' size in parts (without, only the
        # rest past damage goes to parts)
        assert len(small_parts) > forked or not (deep and parts.worth_parts(path.stat().st_size, jobs))


def _segment(tmp_path, entries: list[bytes]):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(entries))
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(-6, 6), st.integers(1, 4)), min_size=4, max_size=24),
       damage=st.one_of(st.none(), st.tuples(st.floats(0, 1), st.integers(0, 255))),
       jobs=st.integers(2, 5))
def test_offsets_across_parts_are_checked_as_one_walk_checks_them(tmp_path_factory, small_parts, steps, damage,
                                                                   jobs):
    """Overlaps and gaps between batches (OffsetOrder) where parts meet, with or without a damaged byte."""
    entries, offset = [], 10
    for step, count in steps:
        offset = max(offset + step, 0)
        entries.append(handmade.batch(offset, [(b"k", b"v" * 20)] * count))
        offset += count
    data = bytearray(b"".join(entries))
    if damage is not None:
        data[int(damage[0] * (len(data) - 1))] = damage[1]
    path = tmp_path_factory.mktemp("parts") / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    assert _verify(path, jobs=jobs, deep=True) == _verify(path, jobs=1, deep=True)


def test_a_cut_inside_an_entry_is_read_again_from_where_the_walk_ended(tmp_path, small_parts):
    """A record's value holding a whole batch looks like an entry to the cut: the hand-over shows it."""
    inner = handmade.batch(900, [(b"inner", b"x")])
    before, after = handmade.batch(0, [(b"a", b"1" * 40)]), handmade.batch(2, [(b"c", b"3" * 40)])
    outer = handmade.batch(1, [(b"b", b"." * 400 + inner + b"." * 40)])
    path = _segment(tmp_path, [before, outer, after])
    inner_pos = len(before) + outer.index(inner)
    with open(path, "rb", buffering=0) as stream:
        cut = path.stat().st_size // 2
        assert parts.part_start(SegmentReader(stream), cut, path.stat().st_size) == inner_pos   # inside `outer`
    whole = _verify(path, jobs=1, deep=True)
    assert _verify(path, jobs=2, deep=True) == whole
    assert whole == ([], whole[1]) and whole[1]["batch_count"] == 3


def test_a_part_that_fails_or_finds_too_much_is_read_by_the_parent(monkeypatch, small_parts):
    damaged = [path for path in fixture_paths() if path.name.startswith("damaged-")]
    expected = {path: _verify(path, jobs=1, deep=True) for path in damaged}
    monkeypatch.setattr(verify, "MAX_PART_FINDINGS", 0)
    assert {path: _verify(path, jobs=3, deep=True) for path in damaged} == expected

    def fails(*args):
        raise RuntimeError("a child that fails")

    monkeypatch.setattr(verify, "MAX_PART_FINDINGS", 10_000)
    monkeypatch.setattr(verify, "_verify_part", fails)
    assert {path: _verify(path, jobs=3, deep=True) for path in damaged} == expected
    assert small_parts


def test_verify_crc_jobs_prints_the_same(capsys, monkeypatch, small_parts):
    import kbatch.reading.window as window

    # Without --deep, the rest of a file goes to parts once the CRC run goes on past damage: a window of a
    # batch or two lets it go on before the end of a small fixture, and parts of 32 bytes take a short rest.
    monkeypatch.setattr(window, "CHUNK", 300)
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 32)
    paths = [str(path) for path in fixture_paths()]
    for args in (["--deep", "--format", "jsonl"], ["--deep"], []):
        forked = len(small_parts)
        one = run_kbatch(["verify-crc", "--jobs", "1", *args, *paths], capsys, monkeypatch, expect=1)   # damaged ones
        assert len(small_parts) == forked
        several = run_kbatch(["verify-crc", "-j", "4", *args, *paths], capsys, monkeypatch)
        assert several == one
        assert len(small_parts) > forked


def test_parts_need_a_large_local_file(tmp_path, monkeypatch):
    """The default part size keeps small files (and the suite's fixtures) in one walk."""
    forks = []
    monkeypatch.setattr(parts, "_fork", lambda *args: forks.append(args))
    path = _segment(tmp_path, [handmade.batch(offset, [(b"k", b"v")]) for offset in range(100)])
    _verify(path, jobs=4, deep=True)
    assert not forks and parts.PART_MIN_SIZE >= 16 * 1024 * 1024


def test_a_part_keeps_damaged_ranges_after_batches_with_findings(tmp_path, small_parts):
    """In the second part: a batch with a finding (an offset gap), then bytes that are no entry, then more."""
    entries = [handmade.batch(offset, [(b"k", b"v" * 30)]) for offset in range(6)]
    entries += [handmade.batch(10, [(b"k", b"gap before")]), b"\x07" * 50, handmade.batch(11, [(b"k", b"v")]),
                handmade.batch(12, [(b"k", b"v")]), b"\x01" * 30, handmade.batch(13, [(b"k", b"v")])]
    path = _segment(tmp_path, entries)
    whole = _verify(path, jobs=1, deep=True)
    assert [finding.code for finding, _ in whole[0]] == ["offset-gap", "resync", "resync"]
    assert _verify(path, jobs=2, deep=True) == whole
    assert small_parts and small_parts[0][0] < len(b"".join(entries[:6]))


def _part(path, start, stop, *, deep=True, decoder=None, segment_base=None):
    """What a child sends back for [start, stop) of ``path``, computed here in the test's own process."""
    size = path.stat().st_size
    with open(path, "rb", buffering=0) as stream:
        found = verify._verify_part(str(path), stream, start, stop, size, verify.VerifyOptions(deep=deep), decoder,
                                    segment_base)
    if found is not None:   # it goes back pickled: only what the parent needs, no views of the child's window
        assert pickle.loads(pickle.dumps(found)).landed == found.landed
        for batch, _findings in (item for item in found.items if not isinstance(item, verify.Finding)):
            assert (batch.records, batch.record_data, batch.record_checks, batch.walked_columns, batch.findings) == \
                (None, None, None, None, [])
    return found


def _kept(found):
    """A part's items as (pos, base offset, codes) for a batch and (pos, code) for a damaged range."""
    return [(item.pos, item.code) if isinstance(item, verify.Finding) else
            (item[0].pos, item[0].base_offset, [finding.code for finding in item[1]]) for item in found.items]


def test_a_childs_part_keeps_its_first_batch_those_with_findings_and_the_ranges_between(tmp_path):
    """verify._verify_part, the work of a child, run in this process: exactly what goes back to the parent.

    A batch's own findings go with it; an offset gap is held (OffsetOrder) and told after the batch, a
    damaged range between batches is an item of its own.  Batches the compiled run takes are not kept, and
    the second batch's base offset only when the full reader read it."""
    entries = [handmade.batch(0, [(b"k", b"v")]), handmade.batch(1, [(b"k", b"v")], transactional=True),
               b"\x07" * 20, handmade.batch(5, [(b"k", b"v")]), b"\x01" * 20]
    starts = [sum(map(len, entries[:index])) for index in range(len(entries) + 1)]
    path = _segment(tmp_path, entries)

    whole = _part(path, 0, starts[-1])
    assert _kept(whole) == [(0, 0, []), (starts[1], 1, ["transactional-without-producer"]), (starts[2], "resync"),
                            (starts[3], 5, []), (starts[3], "offset-gap"), (starts[4], "truncated")]
    assert (whole.landed, whole.second_base, whole.last_offset) == (starts[-1], 1, 5)
    assert whole.first is whole.items[0][0]
    assert (whole.summary.batches, sum(whole.summary.findings.values()), whole.order.last_offset) == (3, 4, 5)
    # the file name's base offset is checked too (segment_range_checks)
    assert [codes for _pos, _base, codes in _kept(_part(path, 0, starts[-1], segment_base=1))[:2]] == \
        [["below-segment-base"], ["transactional-without-producer"]]
    # Without --deep the CRC run takes the intact batches: only the damaged ranges are kept.
    crc = _part(path, 0, starts[-1], deep=False)
    assert (_kept(crc), crc.first, crc.second_base, crc.last_offset) == \
        ([(starts[2], "resync"), (starts[4], "truncated")], None, None, 5)


def test_a_part_ends_at_its_stop_and_leaves_a_gap_held_to_the_parent(tmp_path):
    entries = [handmade.batch(offset, [(b"k", b"v" * 30)]) for offset in range(3)]
    entries += [handmade.batch(10, [(b"k", b"gap before")]), b"\x07" * 50, handmade.batch(11, [(b"k", b"v")])]
    starts = [sum(map(len, entries[:index])) for index in range(len(entries) + 1)]
    path = _segment(tmp_path, entries)
    whole = _part(path, 0, starts[-1])
    assert _kept(whole) == [(0, 0, []), (starts[3], 10, []), (starts[3], "offset-gap"), (starts[4], "resync")]
    assert (whole.landed, whole.second_base, whole.last_offset, whole.summary.batches) == (starts[-1], None, 11, 5)
    middle = _part(path, starts[1], starts[4])   # the gap's batch last: the gap held is not told by the part
    assert _kept(middle) == [(starts[1], 1, []), (starts[3], 10, [])]
    assert (middle.landed, middle.last_offset, middle.summary.batches, middle.summary.errors) == (starts[4], 10, 3, 0)
    assert middle.order.last_offset == 10 and middle.order.holds_gap_of(middle.items[1][0])
    # An internal topic's records are read as objects: no compiled run, so the full reader reads the second
    # batch and its base offset is kept; without a decoder the run takes it.
    assert (_part(path, 0, starts[2], decoder="offsets").second_base, _part(path, 0, starts[2]).second_base) == \
        (1, None)


def test_a_part_with_more_findings_than_a_child_keeps_is_none(tmp_path, monkeypatch):
    """MAX_PART_FINDINGS findings are kept; one more and the part goes back to the parent as None."""
    entries = [handmade.batch(0, [(b"k", b"v")]), b"\x07" * 20, handmade.batch(5, [(b"k", b"v")]), b"\x01" * 20]
    path = _segment(tmp_path, entries)   # a resync, an offset gap, the cut: three findings
    monkeypatch.setattr(verify, "MAX_PART_FINDINGS", 3)
    assert [finding.code for finding in _part(path, 0, path.stat().st_size).items[1:] if isinstance(finding,
            verify.Finding)] == ["resync", "offset-gap", "truncated"]
    monkeypatch.setattr(verify, "MAX_PART_FINDINGS", 2)
    assert _part(path, 0, path.stat().st_size) is None


# -- dump --format jsonl ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [[], ["--records"], ["--records", "--decode", "hex"]],
                         ids=["listing", "records", "records-hex"])
def test_dump_jsonl_lists_every_fixture_the_same_in_parts(args, capsys, monkeypatch, small_parts):
    paths = [str(path) for path in fixture_paths()]
    one = run_kbatch(["dump", "--format", "jsonl", "-j", "1", *args, *paths], capsys, monkeypatch, expect=1)
    assert not small_parts
    several = run_kbatch(["dump", "--format", "jsonl", "--jobs", "3", *args, *paths], capsys, monkeypatch)
    assert several == one
    assert len(small_parts) > len(paths)


def test_grep_in_parts_says_what_one_walk_says_of_the_damage_between(capsys, monkeypatch, small_parts):
    """Every child stops after its first batch, so the parent searches the rest of each part: a damaged range
    it meets there names the offsets it lost from the child's last batch (SegmentReader.follows), as one walk.
    (A child's own findings go to its stderr, which is not this process's captured one: one fixture whose
    range the parent meets.)"""
    monkeypatch.setattr(parts, "MAX_SPILL", 1)
    paths = [str(FIXTURES / "damaged-garbage-between.log")]
    one = run_kbatch(["grep", "-H", "-j", "1", "", *paths], capsys, monkeypatch, expect=0)
    assert "resync at pos 2335 (no offsets lost" in one.err
    assert run_kbatch(["grep", "-H", "-j", "4", "", *paths], capsys, monkeypatch) == one
    assert small_parts


@pytest.mark.parametrize("args", [[], ["-r"]], ids=["listing", "records"])
def test_a_child_lists_up_to_its_spill_limit_and_the_parent_the_rest(args, capsys, monkeypatch, small_parts):
    monkeypatch.setattr(parts, "MAX_SPILL", 1)   # every child stops after its first batch (or run)
    paths = [str(path) for path in fixture_paths()]
    one = run_kbatch(["dump", "--format", "jsonl", *args, "-j", "1", *paths], capsys, monkeypatch, expect=1)
    assert run_kbatch(["dump", "--format", "jsonl", *args, "-j", "4", *paths], capsys, monkeypatch) == one
    assert small_parts


def test_the_children_hold_at_most_a_quarter_of_the_free_temporary_space(capsys, monkeypatch, small_parts):
    import collections
    import shutil   # (kbatch.walk.parts loads it where it asks: the module's attribute is what it finds)

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, 4 * 3 * 1000))
    assert parts.spill_limit(3) == 1000 and parts.spill_limit(1) == 3000
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, 10**15))
    assert parts.spill_limit(3) == parts.MAX_SPILL
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, 0))
    paths = [str(path) for path in fixture_paths()]   # no room: every child stops after its first batch
    one = run_kbatch(["dump", "--format", "jsonl", "-r", "-j", "1", *paths], capsys, monkeypatch, expect=1)
    assert run_kbatch(["dump", "--format", "jsonl", "-r", "-j", "4", *paths], capsys, monkeypatch) == one
    assert small_parts


def test_only_json_lines_are_listed_in_parts(capsys, monkeypatch, small_parts):
    """A table's widths and a JSON document's commas are the whole output's; --limit and a window stop early;
    stdin is read once."""
    path = str(next(path for path in fixture_paths() if path.name == "mixed-v0-v1-v2.log"))
    for args in (["--format", "table"], ["--format", "json"], ["--format", "dumplog"],
                 ["--format", "jsonl", "--limit", "2"], ["--format", "jsonl", "--offset-range", "1:3"]):
        run_kbatch(["dump", "-j", "4", *args, path], capsys, monkeypatch)
    assert not small_parts
    data = open(path, "rb").read()
    from_stdin = run_kbatch(["dump", "-j", "4", "--format", "jsonl", "-"], capsys, monkeypatch, stdin=data)
    assert from_stdin.code == 0 and from_stdin.out.count("\n") > 3 and not small_parts
    run_kbatch(["dump", "-j", "4", "--format", "jsonl", path], capsys, monkeypatch)
    assert small_parts


def test_parts_write_to_a_file_and_a_pipe_as_one_process_does(tmp_path):
    """Whole processes: a child's lines go to the output file through the kernel (sendfile)."""
    import os
    import subprocess
    import sys

    entries = [handmade.batch(offset, [(b"k%d" % offset, b"v" * 90)] * 3) for offset in range(0, 3000, 3)]
    path = _segment(tmp_path, entries)
    small = "import sys, kbatch.walk.parts; kbatch.walk.parts.PART_MIN_SIZE = 4096; from kbatch.cli import main; main()"
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}   # as usual
    outputs = []
    for jobs in ("1", "3"):
        out = tmp_path / f"out-{jobs}.jsonl"
        with open(out, "wb") as target:
            subprocess.run([sys.executable, "-c", small, "dump", "--format", "jsonl", "-r", "-j", jobs, str(path)],
                           stdout=target, check=True, env=buffered)
        piped = subprocess.run([sys.executable, "-c", small, "verify-crc", "--deep", "--format", "jsonl", "-j", jobs,
                                str(path)], capture_output=True, check=True, env=buffered).stdout
        outputs.append((out.read_bytes(), piped))
    assert outputs[0] == outputs[1]
    assert outputs[0][0].count(b"\n") == 1001 and b'"record_count": 3000' in outputs[0][1]


@pytest.mark.parametrize("encoding", ["utf-16", "latin-1"])
def test_an_output_that_is_not_utf8_gets_the_same_lines_in_its_own_encoding(tmp_path, encoding):
    """JSON Lines go to the output's bytes only where it writes UTF-8; any other encoding gets text, in one
    process and in parts (a child's spill, copied out as text)."""
    import os
    import subprocess
    import sys

    entries = [handmade.batch(offset, [(b"k%d" % offset, "v\u00e9".encode() * 40)] * 3) for offset in range(0, 3000, 3)]
    path = _segment(tmp_path, entries)
    small = "import sys, kbatch.walk.parts; kbatch.walk.parts.PART_MIN_SIZE = 4096; from kbatch.cli import main; main()"
    texts = []
    for name, jobs in (("utf-8", "1"), (encoding, "1"), (encoding, "3")):
        run = subprocess.run([sys.executable, "-c", small, "dump", "--format", "jsonl", "-r", "-j", jobs, str(path)],
                             capture_output=True, check=True, env={**os.environ, "PYTHONIOENCODING": name})
        texts.append(run.stdout.decode(name))
    assert texts[0].count("\n") == 1001 and '"v\u00e9v\u00e9' in texts[0]
    assert texts[1] == texts[0] and texts[2] == texts[0]


@pytest.mark.parametrize("args", [["verify-crc", "--deep"], ["dump", "--format", "jsonl", "-r"]])
def test_every_child_hands_its_part_over(tmp_path, capsys, monkeypatch, small_parts, args):
    """Where every part starts at an entry, the parent takes each child's result: none is read twice (a
    result that does not pickle, say, would still give the right output, only at one process's speed)."""
    entries = [handmade.batch(offset, [(b"k%d" % offset, b"v" * 90)] * 3) for offset in range(0, 300, 3)]
    path = str(_segment(tmp_path, entries))
    taken = []
    result = parts.Part.result

    def counted(part, pos):
        found = result(part, pos)
        if part.cut:
            taken.append(found is not None)
        return found

    monkeypatch.setattr(parts.Part, "result", counted)
    one = run_kbatch([*args, "-j", "1", path], capsys, monkeypatch, expect=0)
    assert run_kbatch([*args, "-j", "3", path], capsys, monkeypatch) == one
    assert taken == [True, True]
