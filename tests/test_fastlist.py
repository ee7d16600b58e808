"""``dump --format jsonl`` lists the same with its run over clean batches as with the full reader alone.

:class:`kbatch.walk.listing.ListRun` writes the line of every v2 batch whose CRC verifies and whose line is its
header, without a Batch object, and hands every other entry to the full reader.  The oracle is the listing
with the run taken out: the same bytes, line for line, summary included, on every fixture, damage and
random header changes.  And the run must take the clean batches (or it would be an empty promise).
The batches are built by kafka-python's builder (an encoder that is not ours).
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings

import kbatch.cli.dump
import kbatch.walk.listing
from kbatch.kernels.recordwalk import is_compiled

from .helpers import FIXTURES, fixture_id, fixture_paths, read_all
from .test_fastdeep import (batches_past_two_windows, changed_segment, field, random_segments, segment, set_field,
                            v2_batch)

pytestmark = pytest.mark.skipif(not is_compiled(), reason="the run writes its lines with the compiled writer only")


def listing(data: bytes, *args: str, expect: int, fast: bool = True, name: str = "00000000000000000000.log"):
    """(dump --format jsonl's output, its exit code, batches the run listed) of ``data`` as a file, once its exit
    code is the one expected."""
    runs = []

    class Counted(kbatch.walk.listing.ListRun):
        def __init__(self, *init):
            super().__init__(*init)
            runs.append(self)

        def walk(self, window, pos, stop):
            return super().walk(window, pos, stop) if fast else pos

    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        path = Path(folder) / name
        path.write_bytes(data)
        patch.setattr(kbatch.walk.listing, "ListRun", Counted)
        out, code = _run(["dump", "--format", "jsonl", *args, str(path)], patch)
    assert code == expect, out
    return out.replace(str(path), "FILE"), code, sum(run.listed for run in runs)


def _run(args: list[str], monkeypatch) -> tuple[str, int]:
    """kbatch's output (UTF-8, as a terminal or a pipe gets it) and exit code: run_kbatch without capsys,
    which hypothesis's repeated calls of one test cannot share."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    try:
        kbatch.cli.main(args)
        code = 0
    except SystemExit as done:
        code = done.code
    out.flush()
    return out.buffer.getvalue().decode("utf-8"), code


def assert_same(data: bytes, *args: str, expect: int, name: str = "00000000000000000000.log") -> tuple[str, int]:
    """The run changes nothing (the exit code expected either way); the listing and how many batches the run
    listed."""
    out, _, listed = listing(data, *args, expect=expect, name=name)
    assert out == listing(data, *args, expect=expect, name=name, fast=False)[0]
    return out, listed


def status(data: bytes) -> int:
    """The exit code of ``data``'s listing (README's "Exit status"): 1 when the reader finds damage in it."""
    _, findings = read_all(data)
    return 1 if any(finding.is_damage for finding in findings) else 0


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


# -- what it lists -----------------------------------------------------------------------------------------


def test_a_plain_segment_is_listed_whole_by_the_run():
    out, listed = assert_same(b"".join(segment(5)), expect=0)
    assert listed == 5
    summary = lines(out)[-1]
    assert (summary["batch_count"], summary["record_count"], summary["errors"]) == (5, 3 + 4 + 5 + 6 + 7, 0)


def test_every_kind_of_clean_v2_batch_is_listed_by_the_run():
    batches = [v2_batch(0, 3, producer=(7, 0, 0)), v2_batch(3, 2, producer=(7, 0, 3), transactional=True),
               v2_batch(5, 0), v2_batch(5, 4, codec=1), v2_batch(9, 4, codec=4),
               set_field(v2_batch(13, 2), "attributes", 0x08 | 0x40),   # LogAppendTime, a delete horizon
               set_field(v2_batch(15, 2), "attributes", 0x80)]          # reserved bits: the listing says nothing
    out, listed = assert_same(b"".join(batches), expect=0)
    assert listed == len(batches)
    assert [line.get("codec") for line in lines(out)[:-1]] == ["none"] * 3 + ["gzip", "zstd", "none", "none"]
    assert lines(out)[5]["delete_horizon_ms"] == lines(out)[5]["base_timestamp"]


def test_batches_across_windows_are_all_listed():
    """More than one window of the reader: the window slides to hold the batch its end cuts, and the run
    lists that one too."""
    batches = batches_past_two_windows()
    out, listed = assert_same(b"".join(batches), expect=0)
    assert listed == len(batches) and len(lines(out)) == len(batches) + 1


def test_a_window_of_empty_batches_is_written_a_few_lines_at_a_time():
    """A line is ~15 times an empty batch's 61 bytes: a window's lines at once would hold ~60 MiB."""
    from kbatch.reading.window import Window
    from kbatch.reading.summary import FileSummary

    empty = v2_batch(0, 0)
    data = b"".join(set_field(empty, "base_offset", offset) for offset in range(1000))
    writes, summary = [], FileSummary("x.log", len(data))
    run = kbatch.walk.listing.ListRun(summary, b'{"file": "x.log", ', writes.append, 1 << 20)
    assert run.walk(Window(io.BytesIO(data), len(data)), 0, len(data)) == len(data)
    assert max(write.count(b"\n") for write in writes) == kbatch.walk.listing.LINES_PER_WRITE < 1000
    assert b"".join(writes).count(b"\n") == summary.batches == run.listed == 1000
    assert [json.loads(line)["base_offset"] for line in b"".join(writes).splitlines()] == list(range(1000))


# -- what it leaves to the full reader ---------------------------------------------------------------------


@pytest.mark.parametrize("change, code, expect", [
    (("crc", 1), "crc-mismatch", 1),
    (("records_count", -1), "records-count-mismatch", 1),
    (("magic", 7), "unknown-magic", 1),
    (("batch_length", 10), "bad-length", 1),
    (("base_offset", 2**63 - 1), None, 0),   # its last offset is past 64 bits: json.dumps writes the line
])
def test_an_entry_with_something_to_say_is_listed_by_the_full_reader(change, code, expect):
    batches = segment(4)
    name, value = change
    batches[2] = set_field(batches[2], name, value, fix_crc=name != "crc")
    out, listed = assert_same(b"".join(batches), expect=expect)
    assert listed <= 3
    if code is None:
        assert lines(out)[2]["last_offset"] == 2**63 - 1 + field(batches[2], "last_offset_delta")
    else:
        assert code in out


@pytest.mark.parametrize("tail, expect", [
    (bytes(300), 0),                                          # zero-tail: an active segment's, no damage
    (b"\x01" * 20, 1),
    (b"\x00" * 8 + b"\x00\x00\x10\x00" + b"\x02", 1),          # a header that promises more than is there
])
def test_a_tail_that_is_no_batch_is_the_full_readers(tail, expect):
    out, listed = assert_same(b"".join(segment(3)) + tail, expect=expect)
    assert listed == 3 and lines(out)[-1]["findings"]


def test_a_length_that_lies_is_recovered_by_the_full_reader():
    batches = segment(4)
    batches[1] = set_field(batches[1], "batch_length", field(batches[1], "batch_length") + 3, fix_crc=False)
    out, listed = assert_same(b"".join(batches), expect=1)
    assert "bad-length" in out and listed == 3


@pytest.mark.parametrize("args", [["--limit", "2"], ["--offset-range", "3:8"], ["--records"], ["--format", "json"]])
def test_listings_the_run_does_not_make_are_the_full_readers(args):
    """(--format json comes after listing's --format jsonl: the last one counts.)"""
    out, _, listed = listing(b"".join(segment(4)), *args, expect=0)
    assert listed == 0 and '"type": "batch"' in out


@settings(max_examples=120, deadline=None)
@given(**random_segments(2**63))
def test_the_same_as_the_full_reader_on_random_batches_and_header_changes(batches, changes, tail):
    data = changed_segment(batches, changes) + tail
    assert_same(data, expect=status(data))


@pytest.mark.parametrize("path", sorted(set(fixture_paths()) | set(FIXTURES.rglob("*.log"))), ids=fixture_id)
def test_the_same_as_the_full_reader_on_every_fixture(path: Path):
    assert_same(path.read_bytes(), expect=status(path.read_bytes()),
                name=path.name if path.suffix == ".log" else "vector.log")


def test_the_fixtures_clean_batches_are_listed_by_the_run():
    """The agreement above is no empty promise: the shipped segments' clean batches take the run."""
    listed = sum(listing(path.read_bytes(), expect=status(path.read_bytes()), name=path.name)[2]
                 for path in sorted(FIXTURES.rglob("*.log")))
    assert listed >= 50, listed
