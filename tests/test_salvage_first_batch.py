"""salvage holds the first batch to the tests any other batch meets: its offsets against the base offset in the
segment's file name (LogSegment.recover: ensureOffsetInRange(batch.lastOffset())), and against the batches
after it (two that agree against one).  baseOffset lies outside the CRC: one flipped bit there used to keep the
corrupt first batch and drop every good one after it as overlapping, with offsets said lost that kept batches
held, and a copy verify-crc --deep failed.
"""

from __future__ import annotations

import pytest

from kbatch.files.inputs import segment_base_offset
from kbatch.ops.repair import SalvageReport, salvage

from . import handmade
from .helpers import read_all

SIZE = 81   # each batch here: two records
MISPLACED = "its records, whose true offsets its header no longer says"
FROM_BASE = "from the segment's base offset, 0 (its file name)"


def _batches(count: int = 4) -> list[bytes]:
    """Batches of offsets 0..1, 2..3, ... as a broker appends them."""
    return [handmade.batch(2 * i, [(b"k%d" % (2 * i), b"v"), (b"k%d" % (2 * i + 1), b"v")]) for i in range(count)]


def _based(batch: bytes, base_offset: int) -> bytes:
    """The batch with another baseOffset (outside the CRC: it still verifies)."""
    return base_offset.to_bytes(8, "big", signed=True) + batch[8:]


def _salvaged(kbatch, tmp_path, name: str, data: bytes):
    """Salvage ``data`` saved as ``name`` (exit status 1: something is left out), and verify-crc --deep the copy,
    named as the input is (exit status 0: Kafka loads it): the (base, last) offsets kept, and what was skipped (pos,
    size, why, offsets lost)."""
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "salvaged" / name
    out.parent.mkdir()
    kbatch("salvage", str(path), "-o", str(out), expect=1)
    batches, findings = read_all(out.read_bytes())
    assert not findings
    report = SalvageReport(0)
    with open(path, "rb") as stream:
        assert b"".join(salvage(stream, report, segment_base_offset(str(path)))) == out.read_bytes()
    skipped = [(skipped.pos, skipped.size, skipped.reason, skipped.offsets) for skipped in report.skipped]
    kbatch("verify-crc", "--deep", str(out), expect=0)
    return [(batch.base_offset, batch.last_offset) for batch in batches], skipped


GOOD_AFTER = [(2, 3), (4, 5), (6, 7)]


def test_a_first_batch_beyond_the_segment_is_dropped_and_the_good_ones_after_it_kept(kbatch, tmp_path):
    """4 batches at 0..7, the first's baseOffset 2^33: its last offset lies past the segment's range."""
    good = _batches()
    data = _based(good[0], 1 << 33) + b"".join(good[1:])
    kept, skipped = _salvaged(kbatch, tmp_path, "00000000000000000000.log", data)
    assert kept == GOOD_AFTER
    assert skipped == [(0, SIZE, "beyond-segment-range: found 8589934593, expected a last offset at most 2147483647 "
                                 "(the file name's base + 2^31-1)",
                        f"0–1 ({MISPLACED}: {FROM_BASE}, and before the entry after, which starts at 2)")]


def test_without_a_segment_name_the_batches_after_it_make_the_first_the_outlier(kbatch, tmp_path):
    good = _batches()
    data = _based(good[0], 1 << 33) + b"".join(good[1:])
    kept, skipped = _salvaged(kbatch, tmp_path, "copy.log", data)
    assert kept == GOOD_AFTER
    assert skipped == [(0, SIZE, "offset-outlier: 8589934592: baseOffset 8589934592 is above the sequence the batches "
                                 "after it agree on, 2..3 → 4 (baseOffset lies outside the CRC)",
                        f"?–1 ({MISPLACED}: before the entry after, which starts at 2)")]


@pytest.mark.parametrize("bit, why", [
    (2, "offset-outlier: 4: baseOffset 4 is above the sequence the batches after it agree on, 2..3 → 4 "
        "(baseOffset lies outside the CRC)"),
    (30, "offset-outlier: 1073741824: baseOffset 1073741824 is above the sequence the batches after it agree on, "
         "2..3 → 4 (baseOffset lies outside the CRC)"),
    (31, "beyond-segment-range: found 2147483649, expected a last offset at most 2147483647 (the file name's base + "
         "2^31-1)"),
    (63, "below-segment-base: found -9223372036854775808, expected 0 or more (the base offset in the segment's file "
         "name)"),
])
def test_a_flipped_bit_in_the_first_base_offset_drops_that_batch_alone(kbatch, tmp_path, bit, why):
    """Within the segment's range the batches after it tell; beyond it or below it the file name does."""
    good = _batches()
    flipped = bytearray(good[0])
    flipped[7 - bit // 8] ^= 1 << (bit % 8)
    kept, skipped = _salvaged(kbatch, tmp_path, "00000000000000000000.log",
                                              bytes(flipped) + b"".join(good[1:]))
    assert kept == GOOD_AFTER
    assert skipped == [(0, SIZE, why, f"0–1 ({MISPLACED}: {FROM_BASE}, and before the entry after, which starts at 2)")]


def test_two_batches_the_segment_name_tells(kbatch, tmp_path):
    good = _batches(2)
    kept, skipped = _salvaged(kbatch, tmp_path, "00000000000000000000.log",
                                              _based(good[0], 1 << 33) + good[1])
    assert kept == [(2, 3)]
    assert [(pos, offsets) for pos, _, _, offsets in skipped] == \
        [(0, f"0–1 ({MISPLACED}: {FROM_BASE}, and before the entry after, which starts at 2)")]


def test_two_batches_and_nothing_else_to_tell_the_first_stands(kbatch, tmp_path):
    """One batch after the first cannot outvote it: the later one overlaps, as verify-crc --deep says, and what it
    lost is what no batch kept holds, not its header's offsets."""
    good = _batches(2)
    kept, skipped = _salvaged(kbatch, tmp_path, "copy.log", _based(good[0], 1 << 33) + good[1])
    assert kept == [(1 << 33, (1 << 33) + 1)]
    assert skipped == [(SIZE, SIZE, "offset-overlap: baseOffset 2 is not above 8589934593, the last offset kept",
                        f"8589934594–? ({MISPLACED}: after the entry before, which ends at 8589934593)")]


def test_one_batch_beyond_the_segment_leaves_an_empty_copy(kbatch, tmp_path):
    kept, skipped = _salvaged(kbatch, tmp_path, "00000000000000000000.log",
                                              _based(_batches(1)[0], 1 << 33))
    assert kept == []
    assert [offsets for _, _, _, offsets in skipped] == [f"0–? ({MISPLACED}: {FROM_BASE})"]


def test_a_last_batch_beyond_the_segment_is_dropped_too(kbatch, tmp_path):
    """Every batch is held to the segment's range, not the first alone: no batch after the last tells."""
    good = _batches()
    kept, skipped = _salvaged(kbatch, tmp_path, "00000000000000000000.log",
                                              b"".join(good[:3]) + _based(good[3], 1 << 33))
    assert kept == [(0, 1), (2, 3), (4, 5)]
    assert [(pos, offsets) for pos, _, _, offsets in skipped] == \
        [(3 * SIZE, f"6–? ({MISPLACED}: after the entry before, which ends at 5)")]


def test_an_overlapping_batch_loses_the_offsets_no_kept_batch_holds(kbatch, tmp_path):
    """The second batch's baseOffset 2 became 0: its header's 0..1 are the first batch's; 2..3 are what is lost."""
    good = _batches()
    kept, skipped = _salvaged(kbatch, tmp_path, "00000000000000000000.log",
                                              good[0] + _based(good[1], 0) + b"".join(good[2:]))
    assert kept == [(0, 1), (4, 5), (6, 7)]
    assert skipped == [(SIZE, SIZE, "offset-overlap: baseOffset 0 is not above 1, the last offset kept",
                        f"2–3 ({MISPLACED}: after the entry before, which ends at 1, and before the entry after, "
                        "which starts at 4)")]


def test_damage_after_the_batch_that_outvotes_the_first_lies_between_the_batches_kept(kbatch, tmp_path):
    good = _batches()
    garbage = b"\x07" * 40
    data = _based(good[0], 1 << 33) + good[1] + garbage + b"".join(good[2:])
    kept, skipped = _salvaged(kbatch, tmp_path, "copy.log", data)
    assert kept == GOOD_AFTER
    assert [(pos, size, offsets) for pos, size, _, offsets in skipped] == [
        (0, SIZE, f"?–1 ({MISPLACED}: before the entry after, which starts at 2)"),
        (2 * SIZE, 40, "none (after the entry before, which ends at 3, and before the entry after, which starts at 4)"),
    ]


def test_an_outlier_in_the_middle_is_said_as_the_first_is(kbatch, tmp_path):
    """The second batch's baseOffset 2 became 2^33 + 2 (past the segment's range too): the batches around it agree."""
    good = _batches()
    kept, skipped = _salvaged(kbatch, tmp_path, "00000000000000000000.log",
                                              good[0] + _based(good[1], (1 << 33) + 2) + b"".join(good[2:]))
    assert kept == [(0, 1), (4, 5), (6, 7)]
    assert [(pos, offsets) for pos, _, _, offsets in skipped] == \
        [(SIZE, f"2–3 ({MISPLACED}: after the entry before, which ends at 1, and before the entry after, which starts "
                "at 4)")]
