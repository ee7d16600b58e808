"""``kbatch stats --what-if``: every layout's size is the size of real bytes, read back by kafka-python."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest
from kafka.record.memory_records import MemoryRecords

from kbatch.output.jsonout import what_if_dict
from kbatch.ops.stats import SegmentStats, collect
from kbatch.ops.reencode import WhatIf

from .helpers import REPRESENTATIVE, ROOT, expected_status, fixture_id, fixture_paths, read_all

ALL = fixture_paths()
KAFKA_PYTHON_LAYOUTS = ("v0", "v1", "v2")


def _what_if(path, recompress: bool) -> tuple[dict, dict[str, bytes]]:
    written = defaultdict(bytearray)
    what_if = WhatIf(recompress=recompress, write=lambda layout, data: written[layout].extend(data))
    with open(path, "rb") as stream:
        collect(SegmentStats(), str(path), stream, what_if=what_if)
    return what_if_dict(what_if), {layout: bytes(data) for layout, data in written.items()}


def _kafka_python_records(data: bytes, magic: int) -> list[tuple]:
    """Every record kafka-python reads in ``data``, which must hold nothing else."""
    records = MemoryRecords(data)
    assert records.valid_bytes() == len(data)
    out = []
    for batch in records:
        assert batch.magic == magic
        if magic == 2 and batch.is_control_batch:
            continue
        for record in batch:
            headers = [(key.encode(), value) for key, value in record.headers] if magic == 2 else []
            out.append((record.offset, record.timestamp if magic else None, record.key, record.value, headers))
    return out


def _expected_records(path, magic: int) -> list[tuple]:
    """The records kbatch reads in the fixture's undamaged data batches, as ``magic`` carries them."""
    batches, _ = read_all(path.read_bytes(), records=True)
    out = []
    for batch in batches:
        if batch.is_damaged or batch.records is None or batch.is_control:
            continue
        for record in batch.records:
            timestamp = (record.timestamp if record.timestamp is not None else -1) if magic else None
            out.append((record.offset, timestamp, record.key, record.value, record.headers if magic == 2 else []))
    return out


@pytest.mark.parametrize("recompress", [False, True], ids=["plain", "recompress"])
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_layout_sizes_are_files_kafka_python_reads_back(path, recompress, tmp_path):
    report, written = _what_if(path, recompress)
    sizes = {row["layout"]: row["recompressed_bytes" if recompress else "bytes"] for row in report["layouts"]}
    for layout in KAFKA_PYTHON_LAYOUTS:
        file = tmp_path / f"{path.stem}.{layout}.log"
        file.write_bytes(written.get(layout, b""))
        assert file.stat().st_size == sizes[layout]
        magic = int(layout[1])
        assert _kafka_python_records(file.read_bytes(), magic) == _expected_records(path, magic)


def test_v2_as_stored_is_the_stored_size_for_uncompressed_v2(kbatch):
    """Encoding a broker's uncompressed v2 batches again gives back their size, byte for byte."""
    for name in ("v2-none.log", "v2-headers.log", "v2-idempotent.log", "v2-logappendtime.log",
                 "v2-txn-commit.log", "v2-empty-compacted.log"):
        stats = kbatch("stats", "--what-if", "--format", "json", f"fixtures/{name}", expect=0)
        report = json.loads(stats.out)["what_if"]
        batches, _ = read_all((ROOT / "fixtures" / name).read_bytes(), records=True)
        v2 = {row["layout"]: row for row in report["layouts"]}["v2"]
        expected = sum(b.size if not b.compressed else 61 + b.decompressed_size for b in batches)
        assert v2["bytes"] == expected, name


def test_v0_v1_drop_headers_and_control_batches(kbatch):
    report = json.loads(kbatch("stats", "--what-if", "--format", "json", "fixtures/v2-txn-commit.log", expect=0).out)
    layouts = {row["layout"]: row for row in report["what_if"]["layouts"]}
    assert layouts["v0"]["control_batches_dropped"] == layouts["v1"]["control_batches_dropped"] == 1
    report = json.loads(kbatch("stats", "--what-if", "--format", "json", "fixtures/v2-headers.log", expect=0).out)
    layouts = {row["layout"]: row for row in report["what_if"]["layouts"]}
    batches, _ = read_all((ROOT / "fixtures" / "v2-headers.log").read_bytes(), records=True)
    headers = [h for b in batches for r in b.records for h in r.headers]
    assert layouts["v1"]["headers_dropped"] == len(headers) > 0
    # Each header: a key length and a value length varint (one byte each here) and the bytes.
    assert layouts["v1"]["header_bytes_dropped"] == sum(2 + len(k) + len(v or b"") for k, v in headers)


def test_zstd_stays_uncompressed_before_magic_2():
    report, written = _what_if(ROOT / "fixtures" / "v2-zstd.log", recompress=True)
    layouts = {row["layout"]: row for row in report["layouts"]}
    assert layouts["v1"]["zstd_left_uncompressed"] == report["stored"]["entries"]
    assert layouts["v1"]["recompressed_bytes"] == layouts["v1"]["bytes"]


def test_headers_first_prefix_is_the_records_but_keys_and_values():
    report, _ = _what_if(ROOT / "fixtures" / "v2-gzip.log", recompress=False)
    batches, _ = read_all((ROOT / "fixtures" / "v2-gzip.log").read_bytes(), records=True)
    first = report["headers_first"]
    assert first["compressed_batches"] == len(batches)
    assert first["inflated_today"] == sum(b.decompressed_size for b in batches)
    payload = sum(len(r.key or b"") + len(r.value or b"") for b in batches for r in b.records)
    assert first["prefix"] == first["inflated_today"] - payload


def test_damaged_batches_are_left_out_and_said_so():
    report, written = _what_if(ROOT / "fixtures" / "damaged-crc-field.log", recompress=False)
    batches, _ = read_all((ROOT / "fixtures" / "damaged-crc-field.log").read_bytes(), records=True)
    damaged = [b for b in batches if b.is_damaged]
    assert report["left_out"] == {"damaged_batches": len(damaged), "bytes": sum(b.size for b in damaged)}
    assert report["stored"]["bytes"] == sum(b.size for b in batches if not b.is_damaged)


def test_recompress_needs_what_if(kbatch):
    result = kbatch("stats", "--recompress", "fixtures/v2-none.log")
    assert result.code == 2 and "--what-if" in result.err


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=fixture_id)
def test_what_if_snapshot(path, kbatch, text_snapshot):
    rel = path.relative_to(ROOT).as_posix()
    result = kbatch("stats", "--what-if", "--recompress", "--format", "json", rel, expect=expected_status(path))
    table = kbatch("stats", "--what-if", rel, expect=expected_status(path))
    what_if = json.dumps(json.loads(result.out)["what_if"], indent=1)
    shown = table.out[table.out.index("What if"):]
    assert f"{what_if}\n{shown}(exit {table.code})\n" == text_snapshot


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_what_if_counts_and_legacy_sizes_by_kafkas_rules(path, kbatch):
    """On every input: the stored counts are the undamaged entries' and data records'; a v0 message is
    Kafka's 12 bytes of framing (LOG_OVERHEAD) and 14 of header (LegacyRecord.RECORD_OVERHEAD_V0) before its
    key and value, v1 8 more for the timestamp, one message a record where nothing is compressed; and the
    table shows each layout's entries and bytes as the JSON does."""
    rel = path.relative_to(ROOT).as_posix()
    expect = expected_status(path)
    report = json.loads(kbatch("stats", "--what-if", "--format", "json", rel, expect=expect).out)["what_if"]
    batches, _ = read_all(path.read_bytes(), records=True)
    kept = [batch for batch in batches if not batch.is_damaged]
    data = [record for batch in kept if not batch.is_control for record in batch.records or ()]
    assert report["stored"] == {"entries": len(kept), "records": len(data), "bytes": sum(b.size for b in kept)}
    layouts = {row["layout"]: row for row in report["layouts"]}
    assert all(row["records"] == len(data) for row in report["layouts"])
    if not any(batch.compressed for batch in kept):
        own = sum(len(record.key or b"") + len(record.value or b"") for record in data)
        assert (layouts["v0"]["entries"], layouts["v0"]["bytes"]) == (len(data), 26 * len(data) + own)
        assert (layouts["v1"]["entries"], layouts["v1"]["bytes"]) == (len(data), 34 * len(data) + own)
    table = kbatch("stats", "--what-if", rel, expect=expect).out
    for row in report["layouts"]:
        assert re.search(rf"\n  {row['layout']} +{row['entries']:,} +{row['bytes']:,} ", table), row["layout"]


@pytest.mark.parametrize("name", ["v2-snappy-raw.log", "v2-snappy.log", "v2-gzip.log", "v2-none.log", "v2-lz4.log",
                                  "v2-zstd.log"])
def test_v2_recompressed_is_the_stored_size_where_the_codec_writes_the_same_bytes(name):
    """snappy keeps the batch's framing (raw or xerial); lz4 and zstd keep the options of each batch's frame
    (the fixtures mix Kafka's frame with kafka-python's, which writes the content size); gzip at
    kafka-python's level gives the same bytes."""
    report, _ = _what_if(ROOT / "fixtures" / name, recompress=True)
    v2 = {row["layout"]: row for row in report["layouts"]}["v2"]
    assert v2["recompressed_bytes"] == report["stored"]["bytes"] == (ROOT / "fixtures" / name).stat().st_size


@pytest.mark.parametrize("name", ["v2-lz4.log", "v2-zstd.log", "v1-lz4.log", "v0-lz4.log"])
def test_recompressed_v2_is_the_stored_file_byte_for_byte(name):
    report, written = _what_if(ROOT / "fixtures" / name, recompress=True)
    if name.startswith("v2"):
        assert written["v2"] == (ROOT / "fixtures" / name).read_bytes()
    else:   # the fixture's own layout comes back as stored
        assert written[name[:2]] == (ROOT / "fixtures" / name).read_bytes()


def test_write_layouts_writes_what_it_reports(kbatch, tmp_path):
    out = tmp_path / "layouts"
    result = kbatch("stats", "--what-if", "--recompress", "--write-layouts", str(out), "--format", "json",
                    "fixtures/v2-headers.log", "fixtures/v1-gzip.log")
    assert result.code == 0, result.err
    totals = {row["layout"]: row["recompressed_bytes"] for row in json.loads(result.out)["what_if"]["layouts"]}
    for layout, total in totals.items():
        files = [out / f"{name}.{layout}.log" for name in ("v2-headers", "v1-gzip")]
        assert sum(file.stat().st_size for file in files) == total
    for name in ("v2-headers", "v1-gzip"):
        for layout in KAFKA_PYTHON_LAYOUTS:
            data = (out / f"{name}.{layout}.log").read_bytes()
            assert _kafka_python_records(data, int(layout[1])) == _expected_records(
                ROOT / "fixtures" / f"{name}.log", int(layout[1]))
    annotated = kbatch("hexdump-annotate", str(out / "v2-headers.v3.log"))
    assert annotated.code == 1 and "max_timestamp_delta" in annotated.out and "proposed-format" in annotated.out


def test_write_layouts_refuses_two_inputs_of_one_name(kbatch, tmp_path):
    logs = sorted((ROOT / "fixtures" / "logdir").rglob("00000000000000000000.log"))[:2]
    result = kbatch("stats", "--what-if", "--write-layouts", str(tmp_path), *map(str, logs))
    assert result.code == 2 and "both write" in result.err and not list(tmp_path.iterdir())
    assert kbatch("stats", "--write-layouts", str(tmp_path), "fixtures/v2-none.log").code == 2


@pytest.mark.parametrize("path", [p for p in ALL if "damaged" not in p.name], ids=fixture_id)
def test_v0_v1_messages_written_from_records_are_what_a_spec_of_each_writes(path):
    """--what-if writes a v0/v1 message per record straight from the Record (encode.legacy_message); the
    same record as an encode-from-json spec gives the same bytes."""
    from kbatch.ops.encode import encode_entry
    from kbatch.ops.reencode import _legacy_messages

    batches, _ = read_all(path.read_bytes(), records=True)
    for batch in batches:
        if batch.is_damaged or batch.is_control or not batch.records:
            continue
        for magic in (0, 1):
            common = {"magic": magic}
            if magic and batch.timestamp_type == "LogAppendTime":
                common["timestamp_type"] = "LogAppendTime"
            specs = [{**common, "records": [{"offset": r.offset, "key": r.key, "value": r.value,
                                             **({"timestamp": r.timestamp if r.timestamp is not None else -1}
                                                if magic else {})}]} for r in batch.records]
            assert _legacy_messages(batch, batch.records, magic) == [encode_entry(spec, "x") for spec in specs]
