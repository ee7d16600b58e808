"""verify-crc --deep holds the first batch to the rule salvage holds it to: with no batch before it, the two batches
after it judge it (invariants.first_challenged, first_breaks_sequence).  baseOffset lies outside the CRC: one flipped
high bit in the first batch's used to have salvage drop the first batch (offset-outlier) while verify-crc --deep
called every batch after it overlapping, two commands blaming different batches for the same bytes.  Now both blame
the first, with the same finding, and the order goes on from the second as if the first were not there.
"""

from __future__ import annotations

import io
import json
import shutil

import pytest

import kbatch.walk.parts as parts
from kbatch.files.inputs import segment_base_offset
from kbatch.format.findings import Finding
from kbatch.ops.repair import SalvageReport, salvage
from kbatch.reading.invariants import OffsetOrder
from kbatch.reading.reader import ReadOptions, SegmentReader

from . import handmade
from .helpers import FIXTURES
from .test_fastdeep import assert_same
from .test_outlier import _flip, _segment
from .test_parts import _verify

# v2-none.log: 4 batches, 0..2 at 0, 3..5 at 181, 6..7 at 2335, 8..10 at 2722
CLEAN = FIXTURES / "v2-none.log"
POSITIONS = [0, 181, 2335, 2722]


def _damaged(tmp_path, bit: int, name: str = "damaged.log"):
    """A copy of the clean fixture, the first batch's baseOffset with ``bit`` flipped (0: 2^bit, not 0..2)."""
    path = tmp_path / name
    shutil.copyfile(CLEAN, path)
    path.write_bytes(_flip(bytearray(path.read_bytes()), 0, bit))
    return path


def _verified(kbatch, path, *args: str, expect: int) -> list[dict]:
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", *args, str(path), expect=expect)
    return [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "finding"]


def _salvaged(kbatch, tmp_path, path) -> list[tuple[int, str]]:
    """salvage's exit status (1: something skipped) and what it skipped, (pos, why), as the library reports it."""
    out = tmp_path / "salvaged" / path.name
    out.parent.mkdir(exist_ok=True)
    kbatch("salvage", str(path), "-o", str(out), expect=1)
    report = SalvageReport(0)
    with open(path, "rb") as stream:
        assert b"".join(salvage(stream, report, segment_base_offset(str(path)))) == out.read_bytes()
    kbatch("verify-crc", "--deep", str(out), expect=0)   # the copy verifies
    return [(skipped.pos, skipped.reason) for skipped in report.skipped]


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("bit", [2, 20, 30, 40, 62])
def test_verify_and_salvage_blame_the_first_batch_alike(kbatch, tmp_path, monkeypatch, bit, jobs):
    """One error, at the first batch, where salvage drops it for the same words; none at the batches after it."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)   # (with --jobs 2: the last two batches are a child's part)
    path = _damaged(tmp_path, bit)
    findings = _verified(kbatch, path, "--jobs", jobs, expect=1)
    base = 1 << bit
    assert [(finding["code"], finding["entry_pos"], finding["base_offset"], finding["last_offset"])
            for finding in findings] == [("offset-outlier", 0, base, base + 2)]
    (outlier,) = findings
    assert outlier["expected"] == "below 3 (the batches after it go on 3..5 → 6)"
    assert outlier["actual"] == (f"{base}: baseOffset {base} is above the sequence the batches after it agree on, "
                                 "3..5 → 6 (baseOffset lies outside the CRC)")
    assert _salvaged(kbatch, tmp_path, path) == [(0, f"offset-outlier: {outlier['actual']}")]


def test_with_a_segment_name_the_range_check_speaks_too_and_both_blame_the_first(kbatch, tmp_path):
    """Named by its base offset, the first batch past the segment's range: salvage drops it for that (its first
    test), verify-crc --deep says that and the outlier, at the first batch alone."""
    path = _damaged(tmp_path, 40, "00000000000000000000.log")
    findings = _verified(kbatch, path, expect=1)
    assert [(finding["code"], finding["entry_pos"]) for finding in findings] == [
        ("beyond-segment-range", 0), ("offset-outlier", 0)]
    assert [pos for pos, _ in _salvaged(kbatch, tmp_path, path)] == [0]


def test_the_table_says_what_the_json_says(kbatch, tmp_path):
    """The table's line names the first batch's offsets as the JSON's base_offset and last_offset do (the outlier
    is told with the second batch after it: the outputs remember that far back)."""
    path = _damaged(tmp_path, 30)
    (finding,) = _verified(kbatch, path, expect=1)
    table = kbatch("verify-crc", "--deep", str(path), expect=1).out
    (line,) = [line for line in table.splitlines() if line.startswith(f"{path}: ")]
    assert line == (f"{path}: ✗ error offset-outlier at pos 0 (offsets {finding['base_offset']}–"
                    f"{finding['last_offset']}), 8 bytes, base_offset: expected {finding['expected']}, found "
                    f"{finding['actual']}")
    assert "1 offset-outlier" in table and "overlap" not in table


def test_damage_between_the_second_and_third_batch_does_not_save_the_first(kbatch, tmp_path):
    """salvage judges the first across a damaged range after the second (test_salvage_first_batch): so does
    verify-crc --deep, which says the range and the outlier, and no overlap."""
    data = bytearray(CLEAN.read_bytes())
    data[POSITIONS[2]:POSITIONS[2]] = b"\x07" * 40
    path = tmp_path / "damaged.log"
    path.write_bytes(_flip(data, 0, 30))
    findings = _verified(kbatch, path, expect=1)
    assert [(finding["code"], finding["entry_pos"]) for finding in findings] == [
        ("resync", POSITIONS[2]), ("offset-outlier", 0)]
    assert [(pos, why.split(":")[0]) for pos, why in _salvaged(kbatch, tmp_path, path)] == [
        (0, "offset-outlier"), (POSITIONS[2], "resync")]


@pytest.mark.parametrize("jobs", [2, 3, 4, 5, 7])
@pytest.mark.parametrize("bit", [18, 45])
def test_parts_say_what_one_walk_says(tmp_path, monkeypatch, bit, jobs):
    """Wherever the parts meet (the second batch the first of a child's part, or the third), the first is blamed
    alone, with its offsets, as one walk blames it."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    data, positions = _segment()
    path = tmp_path / "copy.log"
    path.write_bytes(_flip(data, positions[0], bit))
    whole = _verify(path, jobs=1, deep=True)
    base = 1078 + (1 << bit)
    assert [(finding.code, finding.entry_pos, offsets) for finding, offsets in whole[0]] == [
        ("offset-outlier", 0, (base, base + 7))]
    assert _verify(path, jobs=jobs, deep=True) == whole


def test_parts_say_it_when_the_first_batch_is_a_childs(tmp_path, monkeypatch):
    """Garbage over the whole first part: the file's first batch starts the child's part, whose walk holds the batch
    after it against it as a walk from the start does."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    data, positions = _segment(6)
    path = tmp_path / "copy.log"
    path.write_bytes(b"\x07" * len(data) + _flip(data, positions[0], 30))
    whole = _verify(path, jobs=1, deep=True)
    assert [(finding.code, offsets) for finding, offsets in whole[0]] == [
        ("resync", None), ("offset-outlier", (1078 + (1 << 30), 1078 + (1 << 30) + 7))]
    assert _verify(path, jobs=2, deep=True) == whole


def test_the_fast_pass_says_what_the_full_reader_says():
    data, positions = _segment()
    findings, walked = assert_same(_flip(data, positions[0], 30), "copy.log")
    assert [finding[:2] for finding in findings] == [("offset-outlier", 0)]
    assert walked > 0


# -- OffsetOrder: what it holds, and when it tells --------------------------------------------------------


def _batch(base: int, last: int, pos: int):
    """A batch of ``base``..``last`` read as the walk reads it, said to lie at ``pos``."""
    raw = handmade.batch(base, [(b"k", b"v")] * (last - base + 1))
    (batch,) = SegmentReader(io.BytesIO(raw), ReadOptions())
    batch.pos = pos
    return batch


def _overlap(pos: int, before: int, before_pos: int, base: int) -> Finding:
    return Finding("offset-overlap", pos, pos, 8, "base_offset",
                   f"more than {before} (the last offset of the batch at {before_pos})", str(base))


def test_the_second_batch_is_held_until_the_third_tells():
    order = OffsetOrder()
    assert order.check(_batch(1000, 1009, 0)) == []
    assert order.check(_batch(10, 19, 100)) == []   # held: the third tells which of the two is off
    assert order.holds_finding_of(_batch(10, 19, 100))
    (outlier,) = order.check(_batch(20, 29, 200))
    assert (outlier.code, outlier.entry_pos) == ("offset-outlier", 0)
    assert (order.last_offset, order.last_pos) == (29, 200)   # on from the second, as if the first were not there
    assert order.check(_batch(30, 39, 300)) == [] and order.end() == []


@pytest.mark.parametrize("third, told", [
    ((1010, 1019), "with the third"),   # the third goes on from the first: the first stands
    (None, "at the end"),               # only one batch after the first: nothing tells which is off
])
def test_the_second_batchs_overlap_is_told_when_the_first_stands(third, told):
    order = OffsetOrder()
    order.check(_batch(1000, 1009, 0))
    assert order.check(_batch(10, 19, 100)) == []
    overlap = _overlap(100, 1009, 0, 10)
    if third is None:
        assert order.end() == [overlap]
    else:
        assert order.check(_batch(*third, 200)) == [overlap]
        assert order.end() == []


def test_an_overlap_held_against_the_first_is_told_once_batches_walked_elsewhere_go_on():
    order = OffsetOrder()
    order.check(_batch(1000, 1009, 0))
    order.check(_batch(10, 19, 100))
    order.walked_past(1100, 900, 1050)   # (--deep's fast pass took batches above the first's offsets)
    assert order.take_settled() == [_overlap(100, 1009, 0, 10)]
    assert order.end() == []


def test_a_parts_first_batch_is_not_held_to_the_files_first_batch_rule(tmp_path, monkeypatch):
    """A batch of a thousand offsets, compacted to one record, in the middle, the two after it within its offsets:
    they overlap it (it is not the file's first: the rule is not its), also where it starts a child's part, whose
    walk holds the batch after it against it; the file's first batch, its baseOffset flipped, is the outlier."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    batches = [handmade.batch(8 * n, [(b"k", b"v%d" % i) for i in range(8)]) for n in range(6)]
    batches[0] = _flip(bytearray(batches[0]), 0, 30)
    big = len(batches)
    batches += [handmade.compacted(48, 1048, [(48, b"k", b"kept")]),
                handmade.batch(60, [(b"k", b"w%d" % i) for i in range(8)]),
                handmade.batch(70, [(b"k", b"x%d" % i) for i in range(8)]),
                handmade.batch(1049, [(b"k", b"after")])]
    positions = [sum(map(len, batches[:n])) for n in range(len(batches))]
    path = tmp_path / "copy.log"
    path.write_bytes(b"".join(batches))
    whole = _verify(path, jobs=1, deep=True)
    assert [(finding.code, finding.entry_pos, offsets) for finding, offsets in whole[0]] == [
        ("offset-outlier", 0, (1 << 30, (1 << 30) + 7)),
        ("offset-overlap", positions[big + 1], (60, 67)), ("offset-overlap", positions[big + 2], (70, 77))]
    size = positions[-1] + len(batches[-1])

    def starts_a_part(jobs):   # (kbatch.walk.parts.Parts: a part starts at the first entry at or past its cut)
        return any(positions[big - 1] < size * part // jobs <= positions[big] for part in range(1, jobs))

    jobs = [jobs for jobs in range(2, 12) if starts_a_part(jobs)]
    assert jobs
    for count in jobs:
        assert _verify(path, jobs=count, deep=True) == whole


def test_a_batch_after_a_failed_challenge_may_still_outvote_the_first(kbatch, tmp_path):
    """0..7 flipped to 2^30, 8..15, 16..23 flipped to 0, 24..31: the second lies within the first, the third does
    not go on from it (its overlap is told), but lies within the first too, and the fourth goes on from it.  Both
    commands blame the first and the second; the outlier, told with the fourth batch, carries the first's offsets."""
    batches = [handmade.batch(8 * n, [(b"k", b"v%d" % i) for i in range(8)]) for n in range(5)]
    batches[0] = _flip(bytearray(batches[0]), 0, 30)
    batches[2] = _flip(bytearray(batches[2]), 0, 4)
    positions = [sum(map(len, batches[:n])) for n in range(len(batches))]
    path = tmp_path / "damaged.log"
    path.write_bytes(b"".join(batches))
    findings = _verified(kbatch, path, expect=1)
    assert [(finding["code"], finding["entry_pos"], finding["base_offset"]) for finding in findings] == [
        ("offset-overlap", positions[1], 8), ("offset-outlier", 0, 1 << 30), ("offset-gap", positions[3], 24)]
    assert [(pos, why.split(":")[0]) for pos, why in _salvaged(kbatch, tmp_path, path)] == [
        (0, "offset-outlier"), (positions[1], "offset-overlap")]
