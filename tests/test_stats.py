"""``kbatch stats``: every byte of a file under one category, adding up to the file size."""

from __future__ import annotations

import io
import json
import re

import pytest

import kbatch.reading.records as kbatch_records
from kbatch.ops.encode import encode_document
from kbatch.reading.reader import ReadOptions
from kbatch.output.jsonout import stats_dict
from kbatch.ops.stats import SegmentStats, collect, varint_size

from .helpers import FIXTURES, REPRESENTATIVE, ROOT, expected_status, fixture_id, fixture_paths, read_all, sidecar

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


def _entries(path) -> list[dict]:
    """Each top-level entry of an input as its sidecar gives it (what the encoder wrote, not what kbatch read):
    magic, codec, size, whether a control batch, producer id (None: none), and its records' key and value
    sizes (None for null)."""
    meta = sidecar(path)
    if "vector_expected" in meta:
        def size(value):
            return None if value is None else len(bytes.fromhex(value["hex"]))
        return [{"magic": batch["magic"], "codec": batch["codec"], "size": batch["size"],
                 "control": batch.get("isControl", False), "producer_id": batch.get("producerId", -1),
                 "records": [(size(record["key"]), size(record["value"])) for record in batch["records"]]}
                for batch in meta["vector_expected"]["batches"]]
    fields = {entry["pos"]: entry for entry in meta["header_fields"]}

    def size(value):
        return None if value is None else len(value["hex"]) // 2
    return [{"magic": entry["magic"], "codec": entry["codec"], "size": entry["size"],
             "control": fields[entry["pos"]].get("control", False),
             "producer_id": fields[entry["pos"]].get("producer_id", -1),
             "records": [(size(record["key"]), size(record["value"])) for record in entry["records"]]}
            for entry in meta["expected"]["entries"]]


def _power_of_two_bucket(value: int) -> str:
    """0, 1, 2-3, 4-7, ...: the range of 2**(k-1) .. 2**k - 1 that holds ``value``."""
    if value == 0:
        return "0"
    low = 1 << (value.bit_length() - 1)
    return str(low) if low == 1 else f"{low}-{2 * low - 1}"


def _tally(entries, key) -> list[dict]:
    groups: dict = {}
    for entry in entries:
        group = groups.setdefault(key(entry), {"batches": 0, "records": 0, "bytes": 0})
        group["batches"] += 1
        group["records"] += len(entry["records"])
        group["bytes"] += entry["size"]
    return groups


@pytest.mark.parametrize("path", [p for p in ALL if not expected_status(p)], ids=fixture_id)
def test_stats_json_counts_what_the_encoder_wrote(path, kbatch):
    """On every clean input, the report's counts and byte tallies from the sidecar's entries and records:
    Kafka's 12 bytes of framing (LOG_OVERHEAD) an entry, v2's 49 more of batch header (RECORDS_OFFSET 61
    less the framing), the keys' and values' own bytes stored and, in compressed batches, inflated.  A
    control batch's marker is no data record: its whole entry is "control batches", its records none."""
    report = json.loads(kbatch("stats", "--format", "json", _rel(path), expect=0).out)
    entries = [{**entry, "records": [] if entry["control"] else entry["records"]} for entry in _entries(path)]
    data = [entry for entry in entries if not entry["control"]]
    assert (report["total_bytes"], report["batch_count"], report["record_count"], report["control_batch_count"]) == \
        (path.stat().st_size, len(entries), sum(len(entry["records"]) for entry in entries), len(entries) - len(data))
    stored = {row["category"]: row["bytes"] for row in report["stored"]}
    inflated = {row["category"]: row["bytes"] for row in report["inflated"]}
    assert stored["entry_framing"] == 12 * len(data)
    if all(entry["magic"] == 2 for entry in data):
        assert stored.get("batch_header", 0) == 49 * len(data)
    if any(entry["control"] for entry in entries):
        assert stored["control_batches"] == sum(entry["size"] for entry in entries if entry["control"])

    def own_bytes(compressed):
        chosen = [size for entry in data if (entry["codec"] != "none") == compressed
                  for record in entry["records"] for size in record if size]
        return sum(chosen)
    assert stored.get("keys", 0) + stored.get("values", 0) == own_bytes(compressed=False)
    assert inflated.get("keys", 0) + inflated.get("values", 0) == own_bytes(compressed=True)
    assert stored.get("compressed_records", 0) > 0 or not any(entry["codec"] != "none" for entry in data)
    counts = [len(entry["records"]) for entry in entries]
    sizes = [entry["size"] for entry in entries]

    def histogram(values):
        tally = {}
        for value in sorted(values):
            tally[_power_of_two_bucket(value)] = tally.get(_power_of_two_bucket(value), 0) + 1
        return [{"bucket": label, "batches": n} for label, n in tally.items()]
    assert report["records_per_batch"] == histogram(counts)
    assert report["batch_sizes"] == histogram(sizes)
    by_magic = _tally(entries, lambda entry: entry["magic"])
    assert {row["magic"]: {key: row[key] for key in ("batches", "records", "bytes")} for row in report["by_magic"]} \
        == by_magic
    by_codec = _tally([entry for entry in data if entry["codec"] != "none"], lambda entry: entry["codec"])
    assert {row["codec"]: {key: row[key] for key in ("batches", "records", "bytes")} for row in report["by_codec"]} \
        == by_codec
    by_producer = _tally(entries, lambda entry: "none" if entry["producer_id"] == -1 else entry["producer_id"])
    assert {row["producer_id"]: {key: row[key] for key in ("batches", "records", "bytes")}
            for row in report["by_producer"]} == by_producer
    notes = [finding["code"] for finding in sidecar(path).get("expected", {}).get("findings", [])]
    assert (report["findings"], report["damaged"]) == ({code: notes.count(code) for code in notes}, False)


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=fixture_id)
def test_stats_table_snapshot(path, kbatch, text_snapshot):
    result = kbatch("stats", _rel(path), expect=expected_status(path))
    assert f"{result.out}(exit {result.code})\n" == text_snapshot


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_stats_table_shows_the_json_report(path, kbatch):
    """The table on every input: the same totals and every category's bytes as the JSON report."""
    expect = expected_status(path)
    report = json.loads(kbatch("stats", "--format", "json", _rel(path), expect=expect).out)
    table = kbatch("stats", _rel(path), expect=expect).out
    assert table.startswith(f"1 file(s), {report['total_bytes']:,} bytes: {report['batch_count']:,} entries, "
                            f"{report['record_count']:,} records, {report['control_batch_count']:,} control batches\n")
    for row in report["stored"] + report["inflated"]:
        assert re.search(rf"│ {re.escape(row['label'])} +│ +{row['bytes']:,} │", table), row


def _stats_with(path, record_objects: bool) -> dict:
    stats = SegmentStats()
    with open(path, "rb") as stream:
        collect(stats, "<file>", stream, ReadOptions(records=True, record_objects=record_objects))
    return stats_dict(stats)


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
