"""``kbatch hexdump-annotate``: every byte tied to exactly one field, from the construct declarations."""

from __future__ import annotations

import io

import pytest

from kbatch.annotate import decompressed_spans, entry_spans
from kbatch.codecs import Decompressor
from kbatch.findings import Finding
from kbatch.reader import ReadOptions, SegmentReader

from .helpers import FIXTURES, fixture_id, fixture_paths


def _batches(data: bytes):
    return [item for item in SegmentReader(io.BytesIO(data), ReadOptions(records=True))
            if not isinstance(item, Finding)]


def _assert_tiles(spans, start: int, end: int) -> None:
    position = start
    for span in spans:
        assert span.start == position, f"{span.path} starts at {span.start}, expected {position}"
        assert span.end >= span.start
        position = span.end
    assert position == end


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_spans_tile_every_batch_and_its_decompressed_records(path):
    data = path.read_bytes()
    for index, batch in enumerate(_batches(data)):
        spans = entry_spans(batch, data[batch.pos:batch.pos + batch.size], index)
        _assert_tiles(spans, batch.pos, batch.pos + batch.size)
        if batch.compressed and not batch.is_damaged:
            payload = data[batch.payload_pos:batch.payload_pos + batch.payload_size]
            inflated = Decompressor().decompress(batch.attributes & 7, payload, batch.magic)
            _assert_tiles(decompressed_spans(batch, inflated, index), 0, len(inflated))


def test_legend_positions_are_kafkas_v2_header_offsets(kbatch):
    out = kbatch("hexdump-annotate", "fixtures/v2-none.log").out
    starts = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) > 3 and parts[1].startswith("batch[0].") and "–" in parts[2]:
            starts[parts[1].removeprefix("batch[0].")] = int(parts[2].split("–")[0])
    assert {name: starts[name] for name in (
        "base_offset", "batch_length", "partition_leader_epoch", "magic", "crc", "attributes", "last_offset_delta",
        "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence", "records_count")} == {
        "base_offset": 0, "batch_length": 8, "partition_leader_epoch": 12, "magic": 16, "crc": 17, "attributes": 21,
        "last_offset_delta": 23, "base_timestamp": 27, "max_timestamp": 35, "producer_id": 43,
        "producer_epoch": 51, "base_sequence": 53, "records_count": 57}
    assert starts["records[0].length"] == 61


def test_damage_marks_the_failing_field_and_shows_the_rest_raw():
    data = (FIXTURES / "vectors" / "kafkajs_recordbatch_v0_recordbatch_zstd.bin").read_bytes()
    (batch,) = _batches(data)
    spans = entry_spans(batch, data, 0)
    damage = [span for span in spans if span.kind == "damage"]
    assert [span.path for span in damage] == ["batch[0].records[0].key"]
    assert damage[0].finding.code == "record-overrun" and damage[0].end == len(data)


CASES = [
    ("v0-none.log", []), ("v0-gzip.log", ["--decompressed"]), ("v0-lz4.log", []), ("v1-none.log", []),
    ("v1-snappy.log", ["--decompressed"]), ("v2-none.log", ["--width", "32"]), ("v2-gzip.log", ["--decompressed"]),
    ("v2-snappy.log", []), ("v2-lz4.log", []), ("v2-zstd.log", ["--decompressed"]), ("v2-headers.log", []),
    ("v2-txn-commit.log", ["--offset", "905"]), ("v2-txn-abort.log", ["--offset", "1005"]),
    ("v2-empty-compacted.log", ["--batch", "1"]),
    ("damaged-bitflip-record.log", ["--batch", "1"]), ("damaged-crc-field.log", ["--position", "2356"]),
    ("damaged-truncated-tail.log", ["--position", "2730"]), ("damaged-bad-length.log", ["--batch", "1"]),
    ("damaged-bad-length-short.log", ["--batch", "1"]), ("damaged-zero-tail.log", ["--position", "2900"]),
    ("damaged-garbage-between.log", ["--position", "2340"]), ("damaged-v1-bitflip.log", ["--position", "110"]),
    ("mixed-v0-v1-v2.log", ["--range", "0:200"]),
    ("vectors/kafkajs_recordbatch_v0_recordbatch_zstd.bin", []),
]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{name}{'-' + '-'.join(args) if args else ''}".replace("/", "--")
                                                  for name, args in CASES])
def test_hexdump_snapshot(name, args, kbatch, text_snapshot):
    command = ["hexdump-annotate", *args, f"fixtures/{name}"]
    result = kbatch(*command)
    assert result.err == ""
    assert f"$ kbatch {' '.join(command)}\n{result.out}(exit {result.code})\n" == text_snapshot


def test_exit_status_and_usage(kbatch):
    assert kbatch("hexdump-annotate", "fixtures/v2-none.log").code == 0
    assert kbatch("hexdump-annotate", "--batch", "1", "fixtures/damaged-bitflip-record.log").code == 1
    assert kbatch("hexdump-annotate", "--batch", "99", "fixtures/v2-none.log").code == 2
    result = kbatch("hexdump-annotate", "--batch", "1", "--offset", "3", "fixtures/v2-none.log")
    assert result.code == 2 and "choose one of" in result.err
