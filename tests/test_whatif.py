"""``kbatch stats --what-if``: every layout's size is the size of real bytes, read back by kafka-python."""

from __future__ import annotations

import io
import json
from collections import defaultdict

import pytest
from kafka.record.memory_records import MemoryRecords

from kbatch.stats import SegmentStats, collect
from kbatch.whatif import WhatIf

from .helpers import ROOT, fixture_id, fixture_paths, read_all

ALL = fixture_paths()
KAFKA_PYTHON_LAYOUTS = ("v0", "v1", "v2")


def _what_if(path, recompress: bool) -> tuple[dict, dict[str, bytes]]:
    written = defaultdict(bytearray)
    what_if = WhatIf(recompress=recompress, write=lambda layout, data: written[layout].extend(data))
    with open(path, "rb") as stream:
        collect(SegmentStats(), str(path), stream, what_if=what_if)
    return what_if.as_dict(), {layout: bytes(data) for layout, data in written.items()}


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
        report = json.loads(kbatch("stats", "--what-if", "--format", "json", f"fixtures/{name}").out)["what_if"]
        batches, _ = read_all((ROOT / "fixtures" / name).read_bytes(), records=True)
        v2 = {row["layout"]: row for row in report["layouts"]}["v2"]
        expected = sum(b.size if not b.compressed else 61 + b.decompressed_size for b in batches)
        assert v2["bytes"] == expected, name


def test_v0_v1_drop_headers_and_control_batches(kbatch):
    report = json.loads(kbatch("stats", "--what-if", "--format", "json", "fixtures/v2-txn-commit.log").out)
    layouts = {row["layout"]: row for row in report["what_if"]["layouts"]}
    assert layouts["v0"]["control_batches_dropped"] == layouts["v1"]["control_batches_dropped"] == 1
    report = json.loads(kbatch("stats", "--what-if", "--format", "json", "fixtures/v2-headers.log").out)
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


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_what_if_snapshot(path, kbatch, text_snapshot):
    rel = path.relative_to(ROOT).as_posix()
    result = kbatch("stats", "--what-if", "--recompress", "--format", "json", rel)
    table = kbatch("stats", "--what-if", rel)
    what_if = json.dumps(json.loads(result.out)["what_if"], indent=1)
    shown = table.out[table.out.index("What if"):]
    assert f"{what_if}\n{shown}(exit {table.code})\n" == text_snapshot


@pytest.mark.parametrize("name", ["v2-snappy-raw.log", "v2-snappy.log", "v2-gzip.log", "v2-none.log"])
def test_v2_recompressed_is_the_stored_size_where_the_codec_writes_the_same_bytes(name):
    """snappy keeps the batch's framing (raw or xerial); gzip at kafka-python's level gives the same bytes."""
    report, _ = _what_if(ROOT / "fixtures" / name, recompress=True)
    v2 = {row["layout"]: row for row in report["layouts"]}["v2"]
    assert v2["recompressed_bytes"] == report["stored"]["bytes"] == (ROOT / "fixtures" / name).stat().st_size
