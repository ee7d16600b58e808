"""``kbatch diff``: pairs of segments an operator meets, and what diff says about them."""

from __future__ import annotations

import json
import shutil

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kbatch.format.checksums import crc32c

from .helpers import FIXTURES


def _batch(base_offset: int, records: list, codec: int = 0) -> bytes:
    """A v2 batch from kafka-python's builder; records are (offset, key, value, headers)."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for offset, key, value, headers in records:
        builder.append(offset - base_offset, timestamp=1_700_000_000_000 + offset, key=key, value=value,
                       headers=headers)
    data = bytearray(builder.build())
    data[0:8] = base_offset.to_bytes(8, "big")
    return bytes(data)


def _records(first: int, count: int, headers=None) -> list:
    return [(offset, b"key-%d" % (offset % 3), b"value-%d" % offset, headers or []) for offset in
            range(first, first + count)]


def _with_crc(batch: bytearray) -> bytes:
    batch[17:21] = crc32c(bytes(batch[21:])).to_bytes(4, "big")
    return bytes(batch)


def _pairs(directory):
    """name -> (A bytes, B bytes, extra args)."""
    clean = (FIXTURES / "v2-none.log").read_bytes()
    changed = bytearray(clean[:181])
    changed[changed.index(b"value-0")] = ord(b"V")
    original = _batch(0, _records(0, 5)) + _batch(5, _records(5, 5))
    latest = {}
    for offset, key, value, headers in _records(0, 10):
        latest[key] = (offset, key, value, headers)
    kept = sorted(latest.values())
    compacted = _batch(0, [r for r in kept if r[0] < 5]) + _batch(5, [r for r in kept if r[0] >= 5])
    return {
        "identical": (clean, clean, []),
        "value-changed": (clean, _with_crc(changed) + clean[181:], []),
        "header-added": (_batch(0, _records(0, 3, [("trace", b"abc")])),
                         _batch(0, _records(0, 3, [("trace", b"abc"), ("retry", b"1")])), []),
        "follower-behind": (clean, clean[:2722], []),
        "compacted": (original, compacted, []),
        "two-codecs": (_batch(0, _records(0, 6), codec=2), _batch(0, _records(0, 6), codec=3), []),
        "two-codecs-records-only": (_batch(0, _records(0, 6), codec=2), _batch(0, _records(0, 3), codec=3)
                                    + _batch(3, _records(3, 3), codec=4), ["--records-only"]),
        "two-codecs-ignored": (_batch(0, _records(0, 6), codec=2), _batch(0, _records(0, 6), codec=3),
                               ["--ignore", "crc,partitionLeaderEpoch,compression"]),
        "damaged-copy": (clean, (FIXTURES / "damaged-garbage-between.log").read_bytes(), []),
    }


EXPECTED = {   # exit status, and the summary's counts
    "identical": (0, {"batches": {"same": 4, "changed": 0, "only_a": 0, "only_b": 0}}),
    "value-changed": (1, {"records": {"same": 10, "changed": 1, "only_a": 0, "only_b": 0}}),
    "header-added": (1, {"records": {"same": 0, "changed": 3, "only_a": 0, "only_b": 0}}),
    "follower-behind": (1, {"batches": {"same": 3, "changed": 0, "only_a": 1, "only_b": 0}}),
    "compacted": (1, {"records": {"same": 3, "changed": 0, "only_a": 7, "only_b": 0}}),
    "two-codecs": (1, {"records": {"same": 6, "changed": 0, "only_a": 0, "only_b": 0}}),
    "two-codecs-records-only": (0, {"records": {"same": 6, "changed": 0, "only_a": 0, "only_b": 0}}),
    "two-codecs-ignored": (0, {"batches": {"same": 1, "changed": 0, "only_a": 0, "only_b": 0}}),
    "damaged-copy": (1, {"damaged": {"a": 0, "b": 1}}),   # one range, one finding
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_diff_pair(name, kbatch, tmp_path, monkeypatch, text_snapshot):
    a, b, args = _pairs(tmp_path)[name]
    (tmp_path / "a.log").write_bytes(a)
    (tmp_path / "b.log").write_bytes(b)
    monkeypatch.chdir(tmp_path)
    code, counts = EXPECTED[name]
    table = kbatch("diff", *args, "a.log", "b.log")
    lines = [json.loads(line) for line in kbatch("diff", "--format", "jsonl", *args, "a.log", "b.log")
             .out.splitlines()]
    summary = lines[-1]
    assert table.code == code and summary["same"] == (code == 0)
    for key, value in counts.items():
        assert summary[key] == value
    command = " ".join(["kbatch diff", *args, "a.log", "b.log"])
    assert f"$ {command}\n{table.out}(exit {table.code})\n" == text_snapshot


def test_first_differing_byte_and_byte_identity(kbatch, tmp_path, monkeypatch):
    clean = (FIXTURES / "v2-none.log").read_bytes()
    (tmp_path / "a.log").write_bytes(clean)
    (tmp_path / "b.log").write_bytes(clean[:100] + b"\x00" + clean[101:])
    monkeypatch.chdir(tmp_path)
    summary = json.loads(kbatch("diff", "--format", "jsonl", "a.log", "b.log", expect=1).out.splitlines()[-1])
    assert summary["first_different_byte"] == 100


@pytest.mark.parametrize("name", ["damaged-crc-field.log", "damaged-garbage-between.log", "damaged-truncated-tail.log",
                                  "damaged-bad-length.log"])
def test_byte_identical_damaged_inputs_are_the_same(name, kbatch, tmp_path, monkeypatch):
    """Two copies of one damaged file differ nowhere: diff says same (exit 0) and that both hold the damage
    alike, and lists no difference (a damaged range on each side was shown as two differences, exit 1)."""
    data = (FIXTURES / name).read_bytes()
    (tmp_path / "a.log").write_bytes(data)
    (tmp_path / "b.log").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    lines = [json.loads(line) for line in kbatch("diff", "--format", "jsonl", "a.log", "b.log", expect=0).out.splitlines()]
    assert [line["type"] for line in lines] == ["summary"]
    summary = lines[0]
    assert summary["same"] is True and summary["first_different_byte"] is None
    assert summary["damaged"]["a"] == summary["damaged"]["b"] >= 1
    table = kbatch("diff", "--no-color", "a.log", "b.log", expect=0).out
    assert "same: the inputs are byte-identical, and so both hold the same damage" in table
    assert "damage-a" not in table and "different" not in table


def test_usage_errors(kbatch, tmp_path):
    result = kbatch("diff", "--ignore", "colour", "fixtures/v2-none.log", "fixtures/v2-none.log")
    assert result.code == 2 and "cannot ignore 'colour'" in result.err
    result = kbatch("diff", "fixtures/v2-none.log", "fixtures/absent.log")
    assert result.code == 2 and "cannot read fixtures/absent.log" in result.err


def test_hex_blobs(kbatch, tmp_path):
    data = (FIXTURES / "v2-gzip.log").read_bytes()
    (tmp_path / "a.hex").write_text(data.hex())
    (tmp_path / "b.hex").write_text(" ".join(f"{byte:02x}" for byte in data))
    assert kbatch("diff", "--hex", str(tmp_path / "a.hex"), str(tmp_path / "b.hex")).code == 0
    shutil.rmtree(tmp_path)


@pytest.mark.parametrize("records_only", [False, True])
def test_max_decompressed_bytes_caps_diff_and_the_capped_batch_is_damage(kbatch, tmp_path, monkeypatch, records_only):
    from kbatch.ops.encode import encode_document

    for name, byte in (("a.log", "00"), ("b.log", "01")):
        (tmp_path / name).write_bytes(encode_document({"entries": [{"codec": "gzip", "records": [
            {"key": None, "value": {"hex": byte * 5000}}]}]}))
    monkeypatch.chdir(tmp_path)
    only = ["--records-only"] if records_only else []
    result = kbatch("diff", *only, "--format", "jsonl", "--max-decompressed-bytes", "1000", "a.log", "b.log")
    lines = [json.loads(line) for line in result.out.splitlines()]
    damage = [line for line in lines if line.get("kind", "").startswith("damage-")]
    assert result.code == 1 and sorted(line["kind"] for line in damage) == ["damage-a", "damage-b"]
    assert all("decompress-too-large" in (line["a"] or line["b"]) for line in damage)
    assert lines[-1]["damaged"] == {"a": 1, "b": 1}
    # Under the default cap the same pair differs in its record's value, and nothing is damaged.
    result = kbatch("diff", *only, "--format", "jsonl", "a.log", "b.log")
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert any(line.get("field") == "value" for line in lines) and lines[-1]["damaged"] == {"a": 0, "b": 0}


def test_each_side_keeps_half_the_records_of_a_wrapper_bomb(monkeypatch):
    """Two wrapper bombs side by side hold no more records than one command reading one of them."""
    import io

    import kbatch.ops.diff
    from kbatch.ops.diff import DiffSummary, diff_streams

    from .test_reader import _wrapper_bomb

    monkeypatch.setattr(kbatch.ops.diff, "MAX_HELD", 200)
    data = _wrapper_bomb(1000)
    summary = DiffSummary()
    differences = list(diff_streams(io.BytesIO(data), io.BytesIO(bytearray(data)), summary, records_only=True))
    assert differences == [] and summary.records["same"] == 100


def _batched(sizes: list[int], codec: int = 0) -> bytes:
    """Records 0..sum(sizes)-1 cut into batches of the given sizes."""
    out, first = b"", 0
    for size in sizes:
        out += _batch(first, _records(first, size), codec=codec)
        first += size
    return out


@pytest.mark.parametrize("sizes_a, sizes_b", [
    ([10] * 10, [20, 5, 5] + [7] * 10),
    ([100], [1] * 100),
    ([3, 97], [50, 50]),
    ([33, 33, 34], [10] * 10),
])
def test_records_batched_differently_are_compared_by_offset(kbatch, tmp_path, sizes_a, sizes_b):
    """The same 100 records cut into other batches: no record is only on one side; the batching is the one
    difference, reported as such."""
    (tmp_path / "a.log").write_bytes(_batched(sizes_a))
    (tmp_path / "b.log").write_bytes(_batched(sizes_b, codec=1))
    result = kbatch("diff", "--format", "jsonl", str(tmp_path / "a.log"), str(tmp_path / "b.log"))
    lines = [json.loads(line) for line in result.out.splitlines()]
    summary = lines[-1]
    assert summary["records"] == {"same": 100, "changed": 0, "only_a": 0, "only_b": 0}
    assert summary["batches"]["only_a"] == summary["batches"]["only_b"] == 0
    assert summary["regrouped"]["a"] + summary["batches"]["same"] + summary["batches"]["changed"] == len(sizes_a)
    assert {line["kind"] for line in lines[:-1]} <= {"batching", "batch-changed"}
    assert result.code == 1
    table = kbatch("diff", str(tmp_path / "a.log"), str(tmp_path / "b.log"))
    assert "only in A" in table.out and "records only" not in table.out and "batched differently" in table.out


def test_a_record_changed_inside_a_span_batched_differently_is_found(kbatch, tmp_path):
    (tmp_path / "a.log").write_bytes(_batched([10] * 10))
    other = bytearray(_batched([25, 25, 50]))
    other[other.index(b"value-42")] = ord("V")
    start = 0
    while True:   # walk to the batch that holds the change
        length = int.from_bytes(other[start + 8:start + 12], "big")
        if start + 12 + length > other.index(b"Value-42"):
            break
        start += 12 + length
    (tmp_path / "b.log").write_bytes(bytes(other[:start]) + _with_crc(other[start:start + 12 + length])
                                     + bytes(other[start + 12 + length:]))
    result = kbatch("diff", "--format", "jsonl", str(tmp_path / "a.log"), str(tmp_path / "b.log"), expect=1)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert lines[-1]["records"] == {"same": 99, "changed": 1, "only_a": 0, "only_b": 0}
    (changed,) = [line for line in lines if line.get("kind") == "record-changed"]
    assert changed["offset"] == 42 and changed["field"] == "value"


@pytest.mark.parametrize("at", [61, 75, 199])
def test_a_value_that_differs_past_what_a_cell_shows_is_shown_where_it_differs(kbatch, tmp_path, at):
    """Values alike for their first ``at`` bytes: the table shows the bytes around the difference, not the
    prefix both share; JSON carries both values whole."""
    value_a = b"x" * at + b"AAAA" + b"y" * 100
    value_b = b"x" * at + b"BBBB" + b"y" * 100
    (tmp_path / "a.log").write_bytes(_batch(0, [(0, b"k", value_a, [])]))
    (tmp_path / "b.log").write_bytes(_batch(0, [(0, b"k", value_b, [])]))
    result = kbatch("diff", "--format", "jsonl", str(tmp_path / "a.log"), str(tmp_path / "b.log"), expect=1)
    (changed,) = [json.loads(line) for line in result.out.splitlines() if '"record-changed"' in line]
    assert changed["a_value"] == {"utf8": value_a.decode()} and changed["b_value"] == {"utf8": value_b.decode()}
    assert changed["differs_at"] == at
    assert "AAAA" in changed["a"] and "BBBB" in changed["b"] and changed["a"] != changed["b"]
    table = kbatch("diff", "--no-color", str(tmp_path / "a.log"), str(tmp_path / "b.log"), expect=1)
    flat = "".join(table.out.split())
    assert "AAAA" in flat and "BBBB" in flat and f"differsfrombyte{at}" in flat


def test_binary_values_that_differ_late_are_shown_where_they_differ(kbatch, tmp_path):
    value_a = bytes(range(256)) * 2
    value_b = bytearray(value_a)
    value_b[300] ^= 0xFF
    (tmp_path / "a.log").write_bytes(_batch(0, [(0, b"k", value_a, [])]))
    (tmp_path / "b.log").write_bytes(_batch(0, [(0, b"k", bytes(value_b), [])]))
    result = kbatch("diff", "--format", "jsonl", str(tmp_path / "a.log"), str(tmp_path / "b.log"), expect=1)
    (changed,) = [json.loads(line) for line in result.out.splitlines() if '"record-changed"' in line]
    assert changed["a_value"] == {"hex": value_a.hex()} and changed["b_value"] == {"hex": bytes(value_b).hex()}
    assert changed["differs_at"] == 300
    assert value_a[300:301].hex() in changed["a"] and bytes(value_b)[300:301].hex() in changed["b"]


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_the_what_column_never_breaks_a_word(kbatch, monkeypatch, columns):
    """At 80 columns `batch-changed` read `batch-chan` / `ged` on two lines."""
    monkeypatch.setenv("COLUMNS", str(columns))
    out = kbatch("diff", "fixtures/internal/__consumer_offsets-12/00000000000000000000.log",
                 "fixtures/internal/damaged/__consumer_offsets-0/00000000000000000000.log", expect=1).out
    cells = {line.split("│")[2].strip() for line in out.splitlines() if line.startswith("│")}
    assert cells - {""} <= {"batching", "batch-changed", "batch-only-a", "batch-only-b", "record-changed",
                            "record-only-a", "record-only-b", "damage-a", "damage-b"} and "batch-changed" in cells
    assert max(map(len, out.splitlines())) <= columns
