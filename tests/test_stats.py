"""``kbatch stats``: every byte of a file under one category, adding up to the file size."""

from __future__ import annotations

import io
import json

import pytest

import kbatch.reading.records as kbatch_records
from kbatch.ops.encode import encode_document
from kbatch.reading.reader import ReadOptions
from kbatch.ops.stats import SegmentStats, collect, varint_size

from .helpers import FIXTURES, ROOT, expected_status, fixture_id, fixture_paths, read_all

ALL = fixture_paths()


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def _stats_of(data: bytes) -> SegmentStats:
    stats = SegmentStats()
    collect(stats, "<bytes>", io.BytesIO(data))
    return stats


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_categories_add_up_to_the_file_size(path, kbatch):
    result = kbatch("stats", "--format", "json", _rel(path))
    report = json.loads(result.out)
    size = path.stat().st_size
    assert sum(row["bytes"] for row in report["stored"]) == size == report["total_bytes"]
    assert report["files"] == [{"file": _rel(path), "size": size, "accounted": size}]
    # The inflated account adds up to what the reader inflates, batch by batch.
    batches, _ = read_all(path.read_bytes(), records=True)
    assert report["inflated_bytes"] == sum(batch.decompressed_size or 0 for batch in batches)
    assert sum(row["bytes"] for row in report["inflated"]) == report["inflated_bytes"]
    assert result.code == (1 if report["damaged"] else 0)


@pytest.mark.parametrize("path", [p for p in ALL if not expected_status(p)], ids=fixture_id)
def test_a_clean_file_has_no_byte_left_unexplained(path, kbatch):
    report = json.loads(kbatch("stats", "--format", "json", _rel(path), expect=0).out)
    categories = {row["category"] for row in report["stored"] + report["inflated"]}
    assert "damaged" not in categories
    assert report["records_measured_by_layout"] == 0


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_stats_json_snapshot(path, kbatch, json_snapshot):
    assert kbatch("stats", "--format", "json", _rel(path), expect=expected_status(path)).out == json_snapshot


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_stats_table_snapshot(path, kbatch, text_snapshot):
    result = kbatch("stats", _rel(path))
    assert f"{result.out}(exit {result.code})\n" == text_snapshot


def _stats_with(path, record_objects: bool) -> dict:
    stats = SegmentStats()
    with open(path, "rb") as stream:
        collect(stats, "<file>", stream, ReadOptions(records=True, record_objects=record_objects))
    return stats.as_dict()


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_columns_and_record_objects_give_the_same_accounting(path):
    """stats reads v2 records as the decoder's columns; Record objects (what --what-if reads) agree (the pure
    build's: tests/test_recordwalk.py runs this again with KBATCH_PURE_PYTHON=1)."""
    assert _stats_with(path, record_objects=False) == _stats_with(path, record_objects=True)


def test_stats_builds_no_record_objects_for_data_batches(kbatch, monkeypatch):
    made = []
    real = kbatch_records._records

    def spy(columns, batch, data, shift):
        made.append(batch.is_control)
        return real(columns, batch, data, shift)

    monkeypatch.setattr(kbatch_records, "_records", spy)
    report = json.loads(kbatch("stats", "--format", "json", "fixtures/v2-txn-commit.log", expect=0).out)
    assert report["record_count"] > 0
    assert made and all(made)   # control batches only: their markers are decoded from objects


def test_two_records_field_by_field():
    """Worked by hand: a batch of two 5-byte values, no keys, no headers (DefaultRecord.sizeInBytes)."""
    data = encode_document({"entries": [{"records": [
        {"offset": 0, "timestamp": 1714000000000, "key": None, "value": {"utf8": "hello"}},
        {"offset": 1, "timestamp": 1714000000000, "key": None, "value": {"utf8": "world"}}]}]})
    stats = _stats_of(data)
    per_record = {"record_length": 1, "record_attributes": 1, "record_timestamp": 1, "record_offset_delta": 1,
                  "key_length": 1, "value_length": 1, "values": 5, "headers_count": 1}
    expected = {"entry_framing": 12, "batch_header": 49, **{key: 2 * size for key, size in per_record.items()}}
    assert {key: size for key, size in stats.stored.items() if size} == expected
    assert stats.total_bytes == len(data) == 85
    assert stats.records == 2 and stats.record_overhead == 14


def test_an_overlong_varint_is_measured_through_the_layout():
    """A key length written in 3 bytes (legal to read, never written by Kafka) is counted as 3 bytes."""
    data = encode_document({"entries": [{"records": [
        {"key": {"utf8": "k"}, "key_length": {"hex": "828000"}, "value": {"utf8": "v"}},
        {"key": {"utf8": "k"}, "value": {"utf8": "v"}}]}]})
    stats = _stats_of(data)
    assert stats.records_measured_by_layout == 1
    assert stats.stored["key_length"] == 3 + 1
    assert stats.stored["damaged"] == 0
    assert stats.total_bytes == len(data)


def test_only_the_record_with_an_overlong_varint_is_measured_through_the_layout():
    """One over-long varint (a key length in 2 bytes) among many records: the others keep their sizes
    from the columns, and that one is read off the declaration."""
    records = [{"key": {"utf8": f"k{i}"}, "value": {"utf8": "v" * i},
                "headers": [{"key": {"utf8": "h"}, "value": {"utf8": "x"}}]} for i in range(200)]
    records[150]["key_length"] = {"hex": "8800"}   # "k150": 4 bytes, zig-zag 8, shortest 08
    data = encode_document({"entries": [{"codec": codec, "records": records}
                                        for codec in ("none", "gzip")]})
    stats = _stats_of(data)
    assert stats.records_measured_by_layout == 2
    assert stats.stored["key_length"] == 200 + 1 and stats.inflated["key_length"] == 200 + 1
    assert stats.stored["values"] == stats.inflated["values"] == sum(range(200))
    assert stats.stored["damaged"] == stats.inflated["damaged"] == 0
    assert stats.total_bytes == len(data) and stats.records == 400


def test_compressed_records_are_split_as_they_inflate():
    records = [{"key": {"utf8": f"k{i}"}, "value": {"utf8": "x" * 50},
                "headers": [{"key": {"utf8": "h"}, "value": None}]} for i in range(4)]
    data = encode_document({"entries": [{"codec": "gzip", "records": records}]})
    stats = _stats_of(data)
    assert stats.stored["compressed_records"] == len(data) - 61
    assert stats.inflated["keys"] == 8 and stats.inflated["values"] == 200
    assert stats.inflated["header_keys"] == 4 and stats.inflated["header_value_length"] == 4
    assert stats.inflated["header_values"] == 0
    assert stats.by_codec["gzip"].inflated_records_bytes == sum(stats.inflated.values())


def test_log_append_time_deltas_are_sized_from_what_the_record_leaves():
    """Under LogAppendTime the records' timestamps are the batch's: the stored deltas are sized from the bytes."""
    data = encode_document({"entries": [{"timestamp_type": "LogAppendTime", "max_timestamp": 1_800_000_000_000,
                                         "base_timestamp": 1_700_000_000_000, "records": [
        {"value": {"utf8": "a"}, "timestamp_delta": 0},
        {"value": {"utf8": "b"}, "timestamp_delta": 100_000}]}]})   # 100000 zig-zags to 3 varint bytes
    stats = _stats_of(data)
    assert stats.stored["record_timestamp"] == 1 + 3
    assert stats.records_measured_by_layout == 0 and stats.total_bytes == len(data)


def test_varint_sizes_match_kafka():
    # ByteUtils.sizeOfVarint: zig-zag, 7 bits a byte.
    assert [varint_size(v) for v in (0, -1, 63, 64, -64, -65, 8191, 8192)] == [1, 1, 1, 2, 1, 2, 2, 3]
    assert varint_size(-(2**31)) == 5 and varint_size(2**40, 64) == 6


def test_a_directory_means_its_log_files(kbatch):
    report = json.loads(kbatch("stats", "--format", "json", "fixtures", expect=1).out)
    logs = sorted(FIXTURES.rglob("*.log"))
    assert [entry["file"] for entry in report["files"]] == sorted(_rel(p) for p in logs)
    assert report["total_bytes"] == sum(p.stat().st_size for p in logs)
    assert all(entry["accounted"] == entry["size"] for entry in report["files"])


def test_exit_status(kbatch):
    assert kbatch("stats", "fixtures/v2-none.log").code == 0
    assert kbatch("stats", "fixtures/damaged-garbage-between.log").code == 1
    missing = kbatch("stats", "fixtures/no-such.log")
    assert missing.code == 2 and "no-such.log" in missing.err and "Traceback" not in missing.err
    assert missing.out == ""   # no report of nothing
    some = kbatch("stats", "--format", "json", "fixtures/no-such.log", "fixtures/v2-none.log")
    assert some.code == 2 and json.loads(some.out)["total_bytes"] == (FIXTURES / "v2-none.log").stat().st_size


def test_damaged_ranges_are_counted_where_they_lie(kbatch):
    report = json.loads(kbatch("stats", "--format", "json", "fixtures/damaged-garbage-between.log", expect=1).out)
    damaged = {row["category"]: row["bytes"] for row in report["stored"]}["damaged"]
    _, findings = read_all((FIXTURES / "damaged-garbage-between.log").read_bytes())
    assert damaged == sum(f.size for f in findings if f.owns_bytes) == 40
