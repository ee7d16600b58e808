"""A batch whose baseOffset (outside the CRC) is off while its neighbours agree: blamed alone (offset-outlier).

The rule lives in kbatch.reading.invariants (breaks_sequence, OffsetOrder); --deep's fast pass, the full reader, the
parts of a parallel run and salvage all follow it, so they say the same (with the pure build too:
tests/test_recordwalk.py runs this file again with KBATCH_PURE_PYTHON=1).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import kbatch.walk.parts as parts

from . import handmade
from .test_fastdeep import assert_same
from .test_parts import _verify


def _segment(batches: int = 20, first: int = 1126 - 6 * 8) -> tuple[bytearray, list[int]]:
    data, positions, offset = bytearray(), [], first
    for n in range(batches):
        positions.append(len(data))
        data += handmade.batch(offset, [(b"k%d" % i, b"v%d-%d" % (n, i)) for i in range(8)])
        offset += 8
    return data, positions


def _flip(data: bytearray, pos: int, bit: int) -> bytes:
    out = bytearray(data)
    out[pos + 7 - bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def _codes(result) -> list[str]:
    return [line["code"] for line in map(json.loads, result.out.splitlines()) if line.get("type") == "finding"]


@pytest.mark.parametrize("bit", [17, 18, 30, 45, 62])
@pytest.mark.parametrize("which", [1, 6, 13])
def test_a_flipped_base_offset_is_blamed_on_its_batch_alone(kbatch, tmp_path, which, bit):
    data, positions = _segment()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_flip(data, positions[which], bit))
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(path))
    lines = [json.loads(line) for line in result.out.splitlines()]
    findings = [line for line in lines if line.get("type") == "finding"]
    assert "offset-overlap" not in _codes(result) and result.code == 1
    (outlier,) = [line for line in findings if line["code"] == "offset-outlier"]
    assert outlier["entry_pos"] == positions[which]
    before, after = 1078 + 8 * (which - 1), 1078 + 8 * (which + 1)
    assert f"breaks the sequence {before}..{before + 7} → {before + 8}" in outlier["actual"]
    assert f"the batch after it starts at {after}" in outlier["expected"]


def test_a_base_offset_far_out_is_named_with_the_sequence_it_breaks(kbatch, tmp_path):
    """The batch 1134..1141 at 263274: one error at it, none on the intact batches after it."""
    data, positions = _segment()
    damaged = bytearray(data)
    damaged[positions[7]:positions[7] + 8] = (263274).to_bytes(8, "big")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(damaged))
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(path), expect=1)
    (outlier,) = [line for line in map(json.loads, result.out.splitlines()) if line.get("code") == "offset-outlier"]
    assert "baseOffset 263274 breaks the sequence 1126..1133 → 1134" in outlier["actual"]
    assert "offset-overlap" not in _codes(result)


@pytest.mark.parametrize("bit", [3, 18, 40, 63])
@pytest.mark.parametrize("which", [1, 6, 13])
def test_salvage_drops_the_batch_so_its_copy_verifies(kbatch, tmp_path, which, bit):
    data, positions = _segment()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_flip(data, positions[which], bit))
    out = tmp_path / "salvaged" / "00000000000000000000.log"
    out.parent.mkdir()
    salvage = kbatch("salvage", str(path), "-o", str(out))
    # (bits 40 and 63 also put it outside the segment's range, which salvage tests first, as for any batch)
    assert salvage.code == 1 and any(code in salvage.out for code in ("offset-", "beyond-segment-range",
                                                                      "below-segment-base"))
    assert "kept 19 batches" in salvage.out
    again = kbatch("verify-crc", "--deep", "--format", "jsonl", str(out))
    assert again.code == 0, again.out


@pytest.mark.parametrize("which", [1, 6, 13])
def test_the_fast_pass_says_what_the_full_reader_says(which):
    data, positions = _segment()
    findings, _ = assert_same(_flip(data, positions[which], 18))
    assert [finding[0] for finding in findings].count("offset-outlier") == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(1, 18), bit=st.integers(3, 62), jobs=st.integers(2, 5))
def test_parts_say_what_one_walk_says(tmp_path_factory, monkeypatch, which, bit, jobs):
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    data, positions = _segment()
    path = tmp_path_factory.mktemp("outlier") / "00000000000000000000.log"
    path.write_bytes(_flip(data, positions[which], bit))
    assert _verify(path, jobs=jobs, deep=True) == _verify(path, jobs=1, deep=True)


# -- offsets in a damaged range ------------------------------------------------------------------------


def _v1_wrapper(first: int, count: int, flip_at: int, size_delta: int) -> bytes:
    """A gzip v1 wrapper of offsets first..first+count-1 as a broker stores it, a bit flipped and its size
    field off by ``size_delta``: bytes that read as no entry."""
    import struct
    import zlib

    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=1, compression_type=1, batch_size=1 << 20)
    for index in range(count):
        builder.append(index, timestamp=1_700_000_000_000 + index, key=b"k", value=b"wrapped-%d" % (first + index))
    raw = bytearray(builder.build())
    struct.pack_into(">q", raw, 0, first + count - 1)
    struct.pack_into(">q", raw, 18, 1_700_000_000_000 + count - 1)
    struct.pack_into(">I", raw, 12, zlib.crc32(bytes(raw[16:])))
    raw[flip_at] ^= 0x10
    struct.pack_into(">i", raw, 8, struct.unpack_from(">i", raw, 8)[0] + size_delta)
    return bytes(raw)


@pytest.mark.parametrize("flip_at, size_delta", [(40, 7), (30, -3), (50, 100), (25, 1)])
def test_offsets_where_a_damaged_range_lies_are_not_called_absent(kbatch, tmp_path, flip_at, size_delta):
    head = handmade.batch(0, [(b"k", b"v%d" % i) for i in range(8)])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(head + _v1_wrapper(8, 3, flip_at, size_delta) + handmade.batch(11, [(b"k", b"after")]))
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(path), expect=1)
    (gap,) = [line for line in map(json.loads, result.out.splitlines()) if line.get("code") == "offset-gap"]
    assert gap["actual"] == f"11 (offsets 8..10 fall in the damaged range at pos {len(head)} (121 bytes))"
    assert "absent" not in gap["actual"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.integers(1, 18), jobs=st.integers(2, 5))
def test_parts_say_what_one_walk_says_about_a_damaged_range(tmp_path_factory, monkeypatch, where, jobs):
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    data, positions = _segment()
    damaged = bytes(data[:positions[where]]) + _v1_wrapper(0, 3, 40, 7) + bytes(data[positions[where + 1]:])
    path = tmp_path_factory.mktemp("range") / "00000000000000000000.log"
    path.write_bytes(damaged)
    whole = _verify(path, jobs=1, deep=True)
    assert any("damaged range" in finding.actual for finding, _ in whole[0])
    assert _verify(path, jobs=jobs, deep=True) == whole


# -- a gap is told once, and not for an outlier ---------------------------------------------------------


def _findings(kbatch, path, *args, expect: int) -> list[dict]:
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", *args, str(path), expect=expect)
    lines = [json.loads(line) for line in result.out.splitlines()]
    return [{key: line[key] for key in ("code", "entry_pos", "expected", "actual", "base_offset",
                                                      "last_offset")} for line in lines if line["type"] == "finding"]


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_the_gap_an_outlier_opens_is_its_consequence_not_a_finding(kbatch, tmp_path, monkeypatch, jobs):
    """263274 in place of 1134: one error at the outlier; neither the gap up to it nor the offsets its records
    stand for in the sequence (1134..1141, just as many as it holds) are called absent."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    data, positions = _segment()
    damaged = bytearray(data)
    damaged[positions[7]:positions[7] + 8] = (263274).to_bytes(8, "big")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(damaged))
    findings = _findings(kbatch, path, "--jobs", jobs, expect=1)
    assert findings == [{"code": "offset-outlier", "entry_pos": positions[7],
                         "expected": "1134 (after 1126..1133; the batch after it starts at 1142)",
                         "actual": "263274: baseOffset 263274 breaks the sequence 1126..1133 → 1134 (baseOffset lies "
                                   "outside the CRC)", "base_offset": 263274, "last_offset": 263281}]


def test_an_outlier_that_hides_more_than_its_own_offsets_leaves_a_gap_that_says_so(kbatch, tmp_path):
    """1078..1085, then a batch of 8 whose baseOffset reads 900000 where 1086 was, then 1100: 14 offsets are
    missing after 1085, 8 of which the outlier holds."""
    batches = [handmade.batch(1078, [(b"k", b"v%d" % i) for i in range(8)]),
               handmade.batch(900_000, [(b"k", b"w%d" % i) for i in range(8)]),
               handmade.batch(1100, [(b"k", b"after")])]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    findings = _findings(kbatch, path, expect=1)
    assert [(finding["code"], finding["entry_pos"], finding["actual"]) for finding in findings] == [
        ("offset-outlier", len(batches[0]), "900000: baseOffset 900000 breaks the sequence 1078..1085 → 1086 "
                                            "(baseOffset lies outside the CRC)"),
        ("offset-gap", len(batches[0]) + len(batches[1]),
         f"1100 (14 offsets absent, where the batch at pos {len(batches[0])}, whose baseOffset is off, holds 8)")]


@pytest.mark.parametrize("after", ["clean", "control", "none"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_gap_is_told_once_with_its_batch_whoever_reads_the_batch_after_it(kbatch, tmp_path, monkeypatch, after,
                                                                           jobs):
    """A legal gap (20 offsets after 0..7, as compaction leaves): held until the batch after it shows its batch
    is no outlier, then told once, with its own batch's offsets -- whether that batch is walked by --deep's
    fast pass (clean), read by the full reader (a transaction marker) or there is none (the end of the input)."""
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    batches = [handmade.batch(0, [(b"k", b"v%d" % i) for i in range(8)]),
               handmade.batch(28, [(b"k", b"w%d" % i) for i in range(4)], producer_id=7, producer_epoch=0,
                              base_sequence=0, transactional=True)]
    batches += {"clean": [handmade.batch(32 + n, [(b"k", b"x")]) for n in range(5)],
                "control": [handmade.batch(32, [handmade.end_marker("COMMIT", 1)], control=True, producer_id=7,
                                           producer_epoch=0, transactional=True)],
                "none": []}[after]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    findings = _findings(kbatch, path, "--jobs", jobs, expect=0)   # a gap compaction leaves is information
    assert findings == [{"code": "offset-gap", "entry_pos": len(batches[0]), "expected": "8",
                         "actual": "28 (20 offsets absent)", "base_offset": 28, "last_offset": 31}]
