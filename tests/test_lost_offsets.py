"""The offsets a damaged entry or range held, inferred once (kbatch.reading.lost) and said alike by salvage,
verify-crc and dump.

A v0/v1 compressed wrapper's own offset is its last inner record's (AbstractLegacyRecordBatch.lastOffset):
when its records cannot be read, its offsets run from the one after the entry before up to that.  The
wrappers here are kafka-python's (LegacyRecordBatchBuilder), given the offset a broker stores.
"""

from __future__ import annotations

import json
import struct
import zlib

import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kbatch.ops.repair import SalvageReport, salvage

from . import handmade

HOW = "after the entry before, which ends at 7, up to the wrapper's own offset, its last inner record's"


def _wrapper(magic: int, first: int, count: int) -> bytearray:
    """A gzip wrapper of offsets first..first+count-1 as a broker stores it: its offset field the last one
    (v1: inner offsets relative, 0..count-1; v0: absolute)."""
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=1, batch_size=1 << 20)
    for index in range(count):
        builder.append(index if magic else first + index, timestamp=1_700_000_000_000 if magic else None,
                       key=b"k", value=b"wrapped-%d" % (first + index))
    raw = bytearray(builder.build())
    struct.pack_into(">q", raw, 0, first + count - 1)
    struct.pack_into(">I", raw, 12, zlib.crc32(bytes(raw[16:])))
    return raw


def _segment(tmp_path, damage: str, magic: int = 1):
    head = handmade.batch(0, [(b"k", b"v%d" % i) for i in range(8)])
    wrapper = _wrapper(magic, 8, 4)
    if damage == "crc":   # a bit of the gzip data flipped: the CRC fails, the frame holds
        wrapper[len(wrapper) - 10] ^= 0x10
    elif damage == "inflate":   # the same, the CRC made to match: the wrapper as stored, its records unreadable
        wrapper[len(wrapper) - 10] ^= 0x10
        struct.pack_into(">I", wrapper, 12, zlib.crc32(bytes(wrapper[16:])))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(head + bytes(wrapper) + handmade.batch(12, [(b"k", b"after")]))
    return path, len(head), len(wrapper)


@pytest.mark.parametrize("magic", [0, 1])
def test_salvage_names_every_offset_a_damaged_wrapper_held(kbatch, tmp_path, magic):
    path, pos, size = _segment(tmp_path, "crc", magic)
    result = kbatch("salvage", str(path), "-o", str(tmp_path / "out.log"))
    assert result.code == 1
    assert _skipped(path) == [(pos, size, f"8–11 ({HOW})")]
    assert f"8–11 ({HOW})" in result.out.replace("\n", "")


@pytest.mark.parametrize("damage, codes", [("crc", ["crc-mismatch", "decompress-failed"]),
                                           ("inflate", ["decompress-failed"])])
def test_verify_crc_says_the_offsets_and_how_they_are_known(kbatch, tmp_path, damage, codes):
    path, pos, _ = _segment(tmp_path, damage)
    result = kbatch("verify-crc", "--format", "jsonl", str(path))
    assert result.code == 1
    findings = [json.loads(line) for line in result.out.splitlines()]
    findings = [finding for finding in findings if finding["type"] == "finding"]
    assert [finding["code"] for finding in findings] == codes
    for finding in findings:
        assert (finding["entry_pos"], finding["lost_first"], finding["lost_last"], finding["lost_offsets_from"]) == \
            (pos, 8, 11, HOW)
    text = kbatch("verify-crc", str(path))
    assert text.code == 1
    assert f"at pos {findings[0]['pos']} (offsets 8–11 ({HOW}))" in text.out


def test_the_offsets_follow_the_batch_before_whoever_walked_it(kbatch, tmp_path):
    """Clean batches before the wrapper are taken by the fast runs (verify-crc's CRC run, dump's listing run):
    the entry before is still the one named."""
    batches = [handmade.batch(n, [(b"k", b"v")]) for n in range(8)]
    wrapper = _wrapper(1, 8, 4)
    wrapper[len(wrapper) - 10] ^= 0x10
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches) + bytes(wrapper))
    for args in (["verify-crc", "--format", "jsonl"], ["verify-crc", "--deep", "--format", "jsonl"],
                 ["dump", "--format", "jsonl"]):
        result = kbatch(*args, str(path))
        assert result.code == 1
        lines = [json.loads(line) for line in result.out.splitlines()]
        (first,) = [line for line in lines if line.get("code") == "crc-mismatch" or line.get("pos") == 560]
        assert (first["lost_first"], first["lost_last"], first["lost_offsets_from"]) == (8, 11, HOW), args
        assert "offset-gap" not in result.out   # (--deep: 8..10 are the wrapper's, not absent)


def test_a_damaged_v2_batch_says_its_header_is_unverified(kbatch, tmp_path):
    damaged = bytearray(handmade.batch(8, [(b"k", b"v%d" % i) for i in range(3)]))
    damaged[-2] ^= 1
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(handmade.batch(0, [(b"k", b"v")]) + bytes(damaged) + handmade.batch(11, [(b"k", b"v")]))
    result = kbatch("verify-crc", "--format", "jsonl", str(path))
    (finding,) = [json.loads(line) for line in result.out.splitlines() if '"finding"' in line]
    assert result.code == 1
    assert (finding["lost_first"], finding["lost_last"], finding["lost_offsets_from"]) == \
        (8, 10, "its header, unverified: its CRC fails")


NEIGHBOURS_HOW = "after the entry before, which ends at 7, and before the entry after, which starts at 11"


@pytest.mark.parametrize("field, value, says", [
    (23, 65538, "8–65546"),     # lastOffsetDelta: one flipped bit made 3 lost offsets 65,539
    (0, 1 << 40, f"{1 << 40}–{(1 << 40) + 2}"),   # baseOffset past the entry after
    (0, 2, "2–4"),              # baseOffset at or before the entry before's last
    (23, -5, "8–3"),            # offsets that run backwards
], ids=["last-offset-delta", "base-offset-ahead", "base-offset-behind", "backwards"])
@pytest.mark.parametrize("args", [["verify-crc"], ["verify-crc", "--deep"], ["dump"]], ids=" ".join)
def test_a_damaged_v2_header_whose_offsets_leave_its_neighbours_is_bounded_by_them(kbatch, tmp_path, args, field,
                                                                                   value, says):
    """Offsets increase from entry to entry: an unverified header reaching into an intact neighbour's offsets
    (or running backwards) has a damaged offset field, and the neighbours say what was lost, as salvage does."""
    damaged = bytearray(handmade.batch(8, [(b"k", b"v%d" % i) for i in range(3)]))
    damaged[-2] ^= 1   # (a value's bit: the CRC fails)
    struct.pack_into(">q" if field == 0 else ">i", damaged, field, value)
    path = tmp_path / "00000000000000000000.log"
    head = handmade.batch(0, [(b"k", b"v")] * 8)
    path.write_bytes(head + bytes(damaged) + handmade.batch(11, [(b"k", b"v")]))
    how = f"its header says {says}, unverified (its CRC fails) and not between the entries around it: {NEIGHBOURS_HOW}"
    result = kbatch(*args, "--format", "jsonl", str(path))
    lines = [json.loads(line) for line in result.out.splitlines()]
    damaged_lines = [line for line in lines if line.get("lost_offsets_from")]
    assert result.code == 1 and damaged_lines
    assert {(line["lost_first"], line["lost_last"], line["lost_offsets_from"]) for line in damaged_lines} == \
        {(8, 10, how)}
    assert _skipped(path) == [(len(head), len(damaged), f"8–10 ({how})")]


RANGE_HOW = "after the entry before, which ends at 7, and before the entry after, which starts at 12"


def _range_between(tmp_path, middle: bytes):
    head, tail = handmade.batch(0, [(b"k", b"v")] * 8), handmade.batch(12, [(b"k", b"v")])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(head + middle + tail)
    return path, len(head)


def test_a_range_that_is_no_entry_lies_between_its_neighbours(kbatch, tmp_path):
    path, pos = _range_between(tmp_path, b"\x07" * 40)
    assert _skipped(path) == [(pos, 40, f"8–11 ({RANGE_HOW})")]
    assert kbatch("salvage", str(path), "-o", str(tmp_path / "out.log")).code == 1


@pytest.mark.parametrize("args", [["verify-crc"], ["verify-crc", "-j", "2"], ["verify-crc", "--deep"], ["dump"]],
                         ids=" ".join)
def test_verify_crc_and_dump_say_what_a_range_that_is_no_entry_lost(kbatch, tmp_path, args):
    """The batch of offsets 8-11 was eaten (its magic byte is 17): the range it leaves is reported with the
    offsets salvage reports for it, whichever walk reads the file."""
    eaten = bytearray(handmade.batch(8, [(b"k", b"v")] * 4))
    eaten[16] = 17
    path, pos = _range_between(tmp_path, bytes(eaten))
    result = kbatch(*args, "--format", "jsonl", str(path))
    assert result.code == 1
    (finding,) = [json.loads(line) for line in result.out.splitlines() if '"code": "resync"' in line]
    assert (finding["pos"], finding.get("base_offset"), finding.get("last_offset"), finding["lost_first"],
            finding["lost_last"], finding["lost_offsets_from"]) == (pos, None, None, 8, 11, RANGE_HOW)
    text = kbatch(*args, str(path))
    assert text.code == 1
    assert f"resync at pos {pos} (offsets 8–11 ({RANGE_HOW})), {len(eaten)} bytes" in text.out.replace("\n", "")


def test_a_range_between_adjacent_offsets_lost_none(kbatch, tmp_path):
    """Garbage between offsets 7 and 12's batch... made adjacent: nothing was lost, and the line says so."""
    head, tail = handmade.batch(0, [(b"k", b"v")] * 8), handmade.batch(8, [(b"k", b"v")])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(head + b"\x07" * 40 + tail)
    result = kbatch("verify-crc", "--format", "jsonl", str(path))
    (finding,) = [json.loads(line) for line in result.out.splitlines() if '"code": "resync"' in line]
    assert result.code == 1
    assert (finding["lost_first"], finding["lost_last"]) == (8, 7)   # an empty range
    text = kbatch("verify-crc", str(path))
    assert text.code == 1
    assert "(no offsets lost: after the entry before, which ends at 7, and before the entry after, which starts " \
           "at 8)" in text.out.replace("\n", "")


def test_a_range_before_a_wrapper_ends_where_nothing_tells(kbatch, tmp_path):
    """A v1 wrapper's offset field is its last inner record's: the range before it lost offsets from 8 on,
    up to an offset its header does not tell."""
    head = handmade.batch(0, [(b"k", b"v")] * 8)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(head + b"\x07" * 40 + bytes(_wrapper(1, 12, 4)))
    result = kbatch("verify-crc", "--format", "jsonl", str(path))
    (finding,) = [json.loads(line) for line in result.out.splitlines() if '"code": "resync"' in line]
    assert result.code == 1
    assert (finding["lost_first"], "lost_last" in finding, finding["lost_offsets_from"]) == \
        (8, False, "after the entry before, which ends at 7")


def test_a_cut_tail_lost_every_offset_after_the_entry_before(kbatch, tmp_path):
    head, cut = handmade.batch(0, [(b"k", b"v")] * 8), handmade.batch(8, [(b"k", b"v")] * 3)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(head + cut[:-5])
    result = kbatch("verify-crc", "--format", "jsonl", str(path))
    (finding,) = [json.loads(line) for line in result.out.splitlines() if '"code": "truncated"' in line]
    assert result.code == 1
    assert (finding["pos"], finding["lost_first"], "lost_last" in finding, finding["lost_offsets_from"]) == \
        (len(head), 8, False, "after the entry before, which ends at 7")
    assert "truncated at pos %d (offsets 8–? (after the entry before, which ends at 7))" % len(head) in \
        kbatch("verify-crc", str(path)).out


def _skipped(path) -> list[tuple[int, int, str]]:
    report = SalvageReport(0)
    with open(path, "rb") as stream:
        for _ in salvage(stream, report):
            pass
    return [(skipped.pos, skipped.size, skipped.offsets) for skipped in report.skipped]
