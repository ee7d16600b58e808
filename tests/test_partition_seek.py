"""``dump --offset-range`` / ``--since`` / ``--until``: started by the indexes (verified), batches outside skipped.

Whatever the start, the selection must be what a walk from byte 0 selects: every test compares with the
records the whole segment holds.
"""

from __future__ import annotations

import json
import shutil

import pytest

from kbatch.reading import reader as kbatch_reader
from kbatch.reading import v2 as v2_batches
from kbatch.partition.seek import Window, start_position
from kbatch.reading.reader import SegmentReader

from .test_partition_files import PARTITION, ROOT

CLEAN = PARTITION / "orders-0"
SEGMENTS = sorted(CLEAN.glob("*.log"))


def _records(kbatch, *args, expect: int):
    result = kbatch("dump", "--format", "jsonl", "--records", *args, expect=expect)
    lines = [json.loads(line) for line in result.out.splitlines()]
    return result, [(r["offset"], r["timestamp"]) for line in lines if line["type"] == "batch" for r in line["records"]]


@pytest.fixture(scope="module")
def everything():
    """Every record of the partition, (segment, offset, timestamp), read whole by the reader."""
    out = []
    for segment in SEGMENTS:
        with open(segment, "rb") as stream:
            for batch in SegmentReader(stream, kbatch_reader.ReadOptions(records=True)):
                out += [(segment, r.offset, r.timestamp) for r in batch.records]
    return out


def test_the_index_says_where_to_start():
    segment = CLEAN / "00000000000000000027.log"
    with open(segment, "rb") as stream:
        reader = SegmentReader(stream)
        # .index: (34, 570), (41, 1051), (47, 1549), (52, 2047): the largest entry at or below the target
        assert start_position(str(segment), reader, stream, Window(41, 41)).pos == 1051
        assert start_position(str(segment), reader, stream, Window(46, 60)).pos == 1051
        assert start_position(str(segment), reader, stream, Window(33, 33)).pos == 0
        # .timeindex (1700000039000, 41) is the last entry before the time: start after offset 41
        assert start_position(str(segment), reader, stream, Window(since=1_700_000_040_000)).pos == 1051


@pytest.mark.parametrize("low", range(0, 58, 4))
def test_offset_ranges_select_what_a_whole_walk_does(kbatch, everything, tmp_path, low):
    high = low + 5
    expected = [(offset, ts) for segment, offset, ts in everything if low <= offset <= high]
    found = []
    bare = tmp_path / "bare"
    bare.mkdir()
    for segment in SEGMENTS:
        result, records = _records(kbatch, "--offset-range", f"{low}:{high}", str(segment.relative_to(ROOT)), expect=0)
        assert result.err == ""
        shutil.copy(segment, bare / segment.name)      # the same segment without its indexes
        _, unindexed = _records(kbatch, "--offset-range", f"{low}:{high}", str(bare / segment.name), expect=0)
        assert unindexed == records
        found += records
    assert found == expected


@pytest.mark.parametrize("since, until", [(1_700_000_030_000, 1_700_000_033_000), (1_700_000_005_500, None),
                                          (None, 1_700_000_006_000), (1_700_000_050_000, 1_700_000_050_000)])
def test_time_windows_select_what_a_whole_walk_does(kbatch, everything, since, until):
    expected = [(offset, ts) for _, offset, ts in everything
                if (since is None or ts >= since) and (until is None or ts <= until)]
    found = []
    for segment in SEGMENTS:
        args = [*(["--since", str(since)] if since else []), *(["--until", str(until)] if until else [])]
        _, records = _records(kbatch, *args, str(segment.relative_to(ROOT)), expect=0)
        found += records
    assert sorted(found) == sorted(expected)


def test_iso_times_are_utc_milliseconds(kbatch):
    segment = str((CLEAN / "00000000000000000027.log").relative_to(ROOT))
    _, iso = _records(kbatch, "--since", "2023-11-14T22:14:00Z", "--until", "2023-11-14T22:14:01", segment, expect=0)
    assert iso == [(42, 1_700_000_040_000), (43, 1_700_000_041_000)]
    assert kbatch("dump", "--since", "yesterday", segment).code == 2


@pytest.mark.parametrize("value, said", [
    ("--5", "expected epoch milliseconds or an ISO 8601 time, got '--5'"),   # (int() raised on it)
    ("9" * 5000, "expected epoch milliseconds a Java long holds, got a number of 5000 digits"),   # (int()'s limit)
    ("9223372036854775808", "expected epoch milliseconds a Java long holds, got 9223372036854775808"),
    ("\u0661\u0662", "expected epoch milliseconds or an ISO 8601 time, got '\u0661\u0662'"),   # (int() reads them)
])
def test_a_time_that_is_no_java_long_nor_iso_8601_is_a_usage_error(kbatch, value, said):
    segment = str((CLEAN / "00000000000000000027.log").relative_to(ROOT))
    result = kbatch("dump", f"--since={value}", segment, expect=2)
    assert said in " ".join(result.err.split()) and "internal error" not in result.err
    # the least a long holds: before 1970, said in epoch milliseconds (it was "stamped until : 1 segment")
    assert "outside stamped until -9223372036854775808 (epoch ms): 1 segment" \
        in kbatch("dump", "--until=-9223372036854775808", segment, expect=0).out


def test_batches_outside_the_range_are_not_decoded(kbatch, monkeypatch):
    decoded = []
    real = v2_batches.walk_batch_records

    def counting(batch, *args, **kwargs):
        decoded.append(batch.base_offset)
        return real(batch, *args, **kwargs)

    monkeypatch.setattr(v2_batches, "walk_batch_records", counting)
    segment = str((CLEAN / "00000000000000000027.log").relative_to(ROOT))
    _, records = _records(kbatch, "--offset-range", "44:44", segment, expect=0)
    assert records == [(44, 1_700_000_042_000)] and decoded == [42]


def test_a_wrong_index_is_not_trusted(kbatch, tmp_path):
    copy = tmp_path / "orders-0"
    shutil.copytree(CLEAN, copy)
    index = copy / "00000000000000000027.index"
    raw = bytearray(index.read_bytes())
    raw[8 + 4:8 + 8] = (1060).to_bytes(4, "big")       # (41, 1051) -> (41, 1060): inside a batch
    index.write_bytes(bytes(raw))
    result, records = _records(kbatch, "--offset-range", "41:41", str(copy / "00000000000000000027.log"), expect=0)
    assert records == [(41, 1_700_000_039_000)]
    assert "00000000000000000027.index: the entry for offset 41 (position 1060) does not point at a batch" in result.err


def test_damage_inside_the_range_is_still_reported(kbatch, tmp_path):
    segment = tmp_path / "00000000000000000027.log"
    raw = bytearray((CLEAN / segment.name).read_bytes())
    raw[1051 + 100] ^= 0xFF                            # a record of the batch 39..41
    segment.write_bytes(bytes(raw))
    result = kbatch("dump", "--format", "jsonl", "--offset-range", "40:40", str(segment))
    assert result.code == 1 and "crc-mismatch" in result.out
    assert kbatch("dump", "--offset-range", "45:45", str(segment)).code == 0   # skipped at its header


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_a_selection_shows_only_what_it_selects_and_says_what_it_stepped_over(kbatch, monkeypatch, columns):
    """`dump -r --offset-range 30:30 DIR`: the one batch holding offset 30, not every index and snapshot in
    full nor "0 batches, 0 records, 2223 bytes; clean" (which reads as empty) for the other segments."""
    monkeypatch.setenv("COLUMNS", str(columns))
    directory = str(CLEAN.relative_to(ROOT))
    result = kbatch("dump", "-r", "--offset-range", "30:30", directory)
    assert result.code == 0
    shown = [line.split(" (")[0] for line in result.out.splitlines() if line.startswith(directory + "/")
             and line.endswith(" bytes)")]
    assert shown == [f"{directory}/00000000000000000027.log"]
    assert "0 batches" not in result.out and "index" not in result.out and "snapshot" not in result.out
    assert result.out.rstrip().endswith("Stepped over, outside offsets 30–30: 2 segments, 12 files beside segments.")
    assert "1 batch selected (2 records) of 2219 bytes" in " ".join(result.out.split())
    assert max(map(len, result.out.splitlines())) <= columns
    # A file named is shown as asked; without a selection a directory shows every file, as before.
    index = f"{directory}/00000000000000000027.index"
    assert "4 entries" in " ".join(kbatch("dump", "--offset-range", "30:30", index).out.split())
    assert "Stepped over" not in kbatch("dump", directory).out


def test_a_sparse_index_of_2_gib_is_searched_in_place(kbatch, tmp_path):
    """A preallocated index of any size (segment.index.bytes is an int): binary-searched a slot at a time,
    as Kafka searches the mapped file, never read whole (it was: 1 GB, then an internal error)."""
    import tracemalloc

    segment = tmp_path / "t-0" / "00000000000000000000.log"
    segment.parent.mkdir()
    shutil.copyfile(PARTITION / "orders-0" / "00000000000000000000.log", segment)
    index = PARTITION / "orders-0" / "00000000000000000000.index"
    with open(segment.with_suffix(".index"), "wb") as sparse:
        sparse.write(index.read_bytes())
        sparse.truncate(2**31 - 8)
    tracemalloc.start()
    try:
        result = kbatch("dump", "--records", "--format", "jsonl", "--offset-range", "10:10", str(segment))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    offsets = [r["offset"] for line in result.out.splitlines() for b in [json.loads(line)] if b["type"] == "batch"
               for r in b["records"]]
    assert result.code == 0 and 10 in offsets and peak < 64 * 2**20
