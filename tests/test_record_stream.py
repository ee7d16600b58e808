"""dump --records holds no list of a batch's records: every format reads them a chunk at a time.

A few KB of gzip can inflate to millions of 7-byte records (a record-count bomb); the memory this takes
is measured by benchmarks/bench_bombs.py.  Here: the records reach every sink as a stream, and what the
sinks write from it is whole and in order.
"""

from __future__ import annotations

import json

import pytest

import kbatch.render.dumplog
import kbatch.render.table
from kbatch.reading.records import RecordStream

from .helpers import run_kbatch
from .test_reader import _record_count_bomb, v2_batch


@pytest.fixture
def bomb(tmp_path):
    path = tmp_path / "bomb.log"
    path.write_bytes(_record_count_bomb(2500))
    return path


@pytest.mark.parametrize("output_format", ["table", "json", "dumplog"])
def test_records_reach_the_sink_as_a_stream_not_a_list(output_format, bomb, capsys, monkeypatch):
    from kbatch.render.dumplog import DumplogSink
    from kbatch.output.jsonout import JsonSink
    from kbatch.render.table import TableSink

    sink = {"table": TableSink, "json": JsonSink, "dumplog": DumplogSink}[output_format]
    seen = []
    original = sink.batch

    def batch(self, batch):
        seen.append(type(batch.records))
        return original(self, batch)

    monkeypatch.setattr(sink, "batch", batch)
    result = run_kbatch(["dump", "--records", "--format", output_format, str(bomb)], capsys, monkeypatch)
    assert seen == [RecordStream] and result.code == 0


def test_a_records_table_is_printed_in_slices_with_every_record_and_one_header(bomb, capsys, monkeypatch):
    monkeypatch.setattr(kbatch.render.table.TableSink, "ROWS_PER_TABLE", 1000)
    monkeypatch.setenv("COLUMNS", "120")
    result = run_kbatch(["dump", "--records", "--no-color", str(bomb)], capsys, monkeypatch, expect=0)
    rows = [line.split()[0] for line in result.out.splitlines() if line.startswith("    ")]
    assert rows.count("offset") == 1
    # offsetDelta 0 in every record: 2,500 rows of offset 0, none lost between slices
    assert rows[1:] == ["0"] * 2500


def test_json_records_are_written_one_by_one_as_json_dumps_would(tmp_path, capsys, monkeypatch):
    path = tmp_path / "two.log"
    path.write_bytes(v2_batch(0, [b"a", b"\xff\x00", b"c"]) + v2_batch(3, []))
    result = run_kbatch(["dump", "--records", "--format", "json", str(path)], capsys, monkeypatch, expect=0)
    document = json.loads(result.out)
    first, empty = document["files"][0]["entries"]
    assert [record["value"] for record in first["records"]] == [{"utf8": "a"}, {"hex": "ff00"}, {"utf8": "c"}]
    assert list(first)[-2:] == ["records", "payload"] and empty["records"] == []


def test_dumplog_reports_a_repeated_pair_once_as_kafka_keeps_it(bomb, capsys, monkeypatch):
    """2,500 records all at offset 0: Kafka's TreeMap keyed by the previous offset holds one pair."""
    result = run_kbatch(["dump", "--records", "--format", "dumplog", str(bomb)], capsys, monkeypatch, expect=0)
    assert [line for line in result.err.splitlines() if "is followed by" in line] == ["  0 is followed by 0"]
    assert result.out.count("| offset: 0 CreateTime") == 2500


def test_dumplog_holds_a_bounded_number_of_non_consecutive_pairs_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(kbatch.render.dumplog, "MAX_HELD", 100)
    path = tmp_path / "gaps.log"
    path.write_bytes(b"".join(v2_batch(2 * n, [b"x"]) for n in range(150)))   # offsets 0, 2, 4, ...
    result = run_kbatch(["dump", "--records", "--format", "dumplog", str(path)], capsys, monkeypatch, expect=0)
    pairs = [line for line in result.err.splitlines() if "is followed by" in line]
    assert len(pairs) == 100 and pairs[0] == "  0 is followed by 2"
    assert "(and 49 more after the first 100: counted, not kept)" in result.err


def test_diff_reads_changed_batches_records_as_streams(tmp_path, capsys, monkeypatch):
    import kbatch.ops.diff

    seen = []
    original = kbatch.ops.diff._diff_headers

    def diff_headers(a, b, ignore):
        seen.append((type(a.records), type(b.records)))
        return original(a, b, ignore)

    monkeypatch.setattr(kbatch.ops.diff, "_diff_headers", diff_headers)
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(v2_batch(0, [b"one", b"two", b"three"], codec=1))
    b.write_bytes(v2_batch(0, [b"one", b"TWO", b"three"], codec=1))
    result = run_kbatch(["diff", "--format", "jsonl", str(a), str(b)], capsys, monkeypatch)
    assert seen == [(RecordStream, RecordStream)]
    changed = [json.loads(line) for line in result.out.splitlines() if '"record-changed"' in line]
    assert [(line["offset"], line["field"]) for line in changed] == [(1, "value")] and result.code == 1


def _walked(data: bytes):
    """The batch at the start of ``data``, read with its records walked into columns (no objects)."""
    import io

    from kbatch.reading.reader import ReadOptions, SegmentReader

    reader = SegmentReader(io.BytesIO(data), ReadOptions(records=True, record_objects=False))
    return next(item for item in reader)


def test_a_batch_walked_in_one_fill_is_read_again_from_its_columns_until_a_walk_fills_them(monkeypatch):
    """record_chunks need not walk a batch's bytes twice, and never hands out another batch's records."""
    import kbatch.reading.records
    from kbatch.reading.records import record_chunks

    def offsets(batch):
        return [list(columns.column("offset")) for columns in record_chunks(batch)]

    first = _walked(v2_batch(0, [b"v%d" % i for i in range(3)]))
    walks = []
    walker = kbatch.reading.records.RecordWalker
    monkeypatch.setattr(kbatch.reading.records, "RecordWalker", lambda *args: walks.append(args) or walker(*args))
    assert offsets(first) == [[0, 1, 2]] and walks == []          # its own walk's columns
    second = _walked(v2_batch(10, [b"v"] * 2))                      # fills the same columns
    assert offsets(first) == [[0, 1, 2]] and len(walks) == 2      # walked again: they hold the second's now
    assert offsets(second) == [[10, 11]] and len(walks) == 3      # and the second's were refilled by that walk
