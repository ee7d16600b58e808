"""``kbatch hexdump-annotate``: every byte tied to exactly one field, from the construct declarations."""

from __future__ import annotations

import io

import pytest

from kbatch.ops.annotate import decompressed_spans, entry_spans
from kbatch.format.codecs import Decompressor
from kbatch.format.findings import Finding
from kbatch.reading.reader import ReadOptions, SegmentReader

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
    out = kbatch("hexdump-annotate", "fixtures/v2-none.log", expect=0).out
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
    # a range that is no entry: damage, or an active segment's preallocated zero tail, which is none
    assert kbatch("hexdump-annotate", "--position", "2340", "fixtures/damaged-garbage-between.log").code == 1
    assert kbatch("hexdump-annotate", "--position", "2900", "fixtures/damaged-zero-tail.log").code == 0
    result = kbatch("hexdump-annotate", "--batch", "1", "--offset", "3", "fixtures/v2-none.log")
    assert result.code == 2 and "choose one of" in result.err


def test_a_file_whose_only_entry_is_damaged_is_annotated(kbatch, tmp_path):
    """No batch at all, only damage: the default shows the damaged range (exit 1), not "no such batch"."""
    whole = (FIXTURES / "v2-none.log").read_bytes()
    first_size = _batches(whole)[0].size
    cut = tmp_path / "cut.log"
    cut.write_bytes(whole[:first_size - 10])
    result = kbatch("hexdump-annotate", str(cut))
    assert result.code == 1 and result.err == ""
    assert f"damaged range at 0, {first_size - 10} bytes" in result.out and "truncated" in result.out


def _big_batch(records: int) -> bytes:
    from kbatch.ops.encode import encode_document

    return encode_document({"entries": [{"records": [{"key": None, "value": {"hex": "%04x" % (n % 65536)}}
                                                      for n in range(records)]}]})


def test_a_huge_batch_shows_max_bytes_and_says_what_it_left_out(kbatch, tmp_path, monkeypatch):
    import kbatch.ops.annotate as annotate

    path = tmp_path / "big.log"
    data = _big_batch(20_000)
    path.write_bytes(data)
    walked = []
    declared = annotate._declared
    monkeypatch.setattr(annotate, "_declared", lambda *args, **kw: walked.append(args[3]) or declared(*args, **kw))
    result = kbatch("hexdump-annotate", "--no-color", "--max-bytes", "160", str(path))
    assert result.code == 0
    rows = [line for line in result.out.splitlines() if line[:10].strip().isdigit() and "|" in line]
    assert [int(line.split()[0]) for line in rows] == list(range(0, 160, 16))
    assert f"… {len(data) - 160} more bytes not shown (the first 160 of {len(data)}" in result.out
    # Only the records that overlap the 160 bytes shown are walked: (160 - 61) / 10 bytes a record, plus one.
    records_walked = [path for path in walked if ".records[" in path]
    assert 9 <= len(records_walked) <= 11
    legend = [line for line in result.out.splitlines() if ".records[" in line]
    assert legend and all(int(line.split("records[")[1].split("]")[0]) <= 10 for line in legend)


def test_max_bytes_zero_shows_every_byte_and_the_long_legend_lines_up(kbatch, tmp_path):
    path = tmp_path / "big.log"
    data = _big_batch(120)     # 120 records of 9 fields: a legend longer than one slice
    path.write_bytes(data)
    result = kbatch("hexdump-annotate", "--no-color", "--max-bytes", "0", str(path))
    assert result.code == 0 and "not shown" not in result.out
    rows = [line for line in result.out.splitlines() if line[:10].strip().isdigit() and "|" in line]
    assert len(rows) == -(-len(data) // 16)
    legend = [line for line in result.out.splitlines() if "batch[0].records[" in line]
    assert len(legend) == 120 * 9
    # Slices share their column widths: the position column starts in the same place on every line.
    assert len({line.index("batch[0]") for line in legend}) == 1


def test_decompressed_records_are_cut_to_max_bytes_too(kbatch, tmp_path):
    from kbatch.ops.encode import encode_document

    path = tmp_path / "gzip.log"
    path.write_bytes(encode_document({"entries": [{"codec": "gzip", "records": [
        {"key": None, "value": {"hex": "00" * 50}} for _ in range(2000)]}]}))
    result = kbatch("hexdump-annotate", "--no-color", "--decompressed", "--max-bytes", "320", str(path))
    assert result.code == 0
    assert "more bytes not shown (the first 320 of" in result.out
    inner_rows = [line for line in result.out.split("decompressed:")[1].splitlines()
                  if line[:10].strip().isdigit() and "|" in line]
    assert len(inner_rows) == 20


def test_offset_starts_where_the_index_says_and_shows_what_a_walk_from_byte_0_shows(tmp_path, kbatch, monkeypatch):
    import shutil

    segment = FIXTURES / "partition" / "orders-0" / "00000000000000000027.log"
    bare = tmp_path / segment.name          # the same segment without its index
    shutil.copy(segment, bare)
    walks = []
    original = SegmentReader.walk
    monkeypatch.setattr(SegmentReader, "walk", lambda self, start=0, stop=None: walks.append(start) or
                        original(self, start, stop))
    for offset in (40, 52):
        walks.clear()
        indexed = kbatch("hexdump-annotate", "--offset", str(offset), "--no-color", str(segment))
        assert walks and walks[0] > 0, "the walk starts past byte 0"
        plain = kbatch("hexdump-annotate", "--offset", str(offset), "--no-color", str(bare))
        assert indexed.code == plain.code == 0
        assert indexed.out.replace(str(segment), "X") == plain.out.replace(str(bare), "X")
        assert "batch[0]" not in indexed.out.splitlines()[0]


def test_offset_with_an_index_that_lies_says_so_and_reads_from_the_start(tmp_path, kbatch):
    import shutil

    segment = FIXTURES / "partition" / "orders-0" / "00000000000000000027.log"
    copy = tmp_path / segment.name
    shutil.copy(segment, copy)
    index = bytearray(segment.with_suffix(".index").read_bytes())
    for slot in range(0, len(index), 8):
        index[slot + 4:slot + 8] = (3).to_bytes(4, "big")   # every entry's position: inside the first batch
    copy.with_suffix(".index").write_bytes(bytes(index))
    result = kbatch("hexdump-annotate", "--offset", "52", "--no-color", str(copy), expect=0)
    assert "does not point at a batch holding it; reading" in result.err
    assert result.out == kbatch("hexdump-annotate", "--offset", "52", "--no-color", str(segment), expect=0).out.replace(
        str(segment), str(copy))


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_the_legend_keeps_room_for_values_and_the_bytes_column_gives_way_first(kbatch, monkeypatch, columns):
    """At 80 and 100 columns the value column got 1-7 cells (a CRC one digit a line): the bytes, a copy of
    the dump above, narrow and then go before a value is folded."""
    monkeypatch.setenv("COLUMNS", str(columns))
    out = kbatch("hexdump-annotate", "fixtures/v2-none.log", expect=0).out
    legend = out[out.index(" #  field"):].splitlines()
    assert max(map(len, legend)) <= columns
    rows = {line.split()[1]: line for line in legend[1:] if line.split() and line.split()[0].isdigit()}
    assert rows["batch[0].crc"].rstrip().endswith("  1018378712")
    assert rows["batch[0].attributes"].rstrip().endswith("  0 (none, CreateTime)")
    assert ("bytes" in legend[0]) == (columns >= 100)
    if columns == 100:   # narrowed at a byte, what is cut said
        assert "  00 00 01 8b …  " in rows["batch[0].base_timestamp"]


@pytest.mark.parametrize("columns", [80, 120])
def test_a_finding_takes_the_width_under_its_field(columns, kbatch, monkeypatch):
    """At 120 columns with 32 bytes a row, the value column has 24 cells left: a finding there took five
    lines.  It goes under its row, from the field's column across the width."""
    monkeypatch.setenv("COLUMNS", str(columns))
    result = kbatch("hexdump-annotate", "--width", "32", "--batch", "1", "fixtures/damaged-bitflip-record.log")
    assert result.code == 1
    lines = result.out.splitlines()
    legend = lines[next(number for number, line in enumerate(lines) if line.lstrip().startswith("#  field")):]
    assert max(len(line.rstrip()) for line in legend) <= columns   # (a dump row of 32 bytes is wider)
    at = next(number for number, line in enumerate(lines) if line.startswith(" 5  batch[1].crc "))
    finding = "✗ crc-mismatch at pos 202, 2133 bytes, crc: expected 3724361548 (computed), found 3532930407 (stored)"
    under = [line.strip() for line in lines[at + 1:at + 3]]
    if columns >= 120:
        assert under[0] == finding and lines[at + 1].startswith("    ✗")
    else:
        assert " ".join(under) == finding
    assert lines[at + 1 + (columns < 120) + 1].startswith(" 6  batch[1].attributes")
