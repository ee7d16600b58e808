"""Records below a partition's log start offset: what DeleteRecords and retention leave in a segment.

Kafka refuses a fetch below the log start offset (UnifiedLog.read) and the consumer drops the records of the
batch it is sent below its fetch offset (CompletedFetch), so the views of what a consumer is given (``dump
--records --isolation``, ``grep --isolation``) start there; the plain listing shows every record and marks
those below it. The log start offset is read from the log-start-offset-checkpoint of the partition's log
directory. Segments worked by hand (tests/handmade.py).
"""

from __future__ import annotations

import json

import pytest

from .handmade import batch, end_marker


def _log_directory(tmp_path, name: str = "orders-0", log_start: str | None = "orders 0 4"):
    """A segment of offsets 0-2 and 3-5 (the log start offset, 4, inside that batch), producer 5's transaction
    at 6-7 and its COMMIT marker at 8."""
    partition = tmp_path / "logs" / name
    partition.mkdir(parents=True)
    log = (batch(0, [(b"k0", b"v0"), (b"k1", b"v1"), (b"k2", b"v2")])
           + batch(3, [(b"k3", b"v3"), (b"k4", b"v4"), (b"k5", b"v5")])
           + batch(6, [(b"k6", b"v6"), (b"k7", b"v7")], transactional=True, producer_id=5, producer_epoch=0,
                   base_sequence=0)
           + batch(8, [end_marker("COMMIT", 0)], control=True, transactional=True, producer_id=5, producer_epoch=0))
    (partition / f"{0:020d}.log").write_bytes(log)
    if log_start is not None:
        (partition.parent / "log-start-offset-checkpoint").write_text(f"0\n1\n{log_start}\n")
    return partition


def _offsets(result) -> list[int]:
    return [record["offset"] for line in result.out.splitlines() for record in json.loads(line).get("records", [])]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_dump_of_what_a_consumer_is_given_starts_at_the_log_start_offset(kbatch, tmp_path, isolation):
    partition = _log_directory(tmp_path)
    result = kbatch("dump", "--records", "--isolation", isolation, "--format", "jsonl", str(partition))
    assert result.code == 0
    assert _offsets(result) == [4, 5, 6, 7]   # 3 of the batch the log start cuts is dropped; no marker (8)
    assert f"{partition}: starts at its log start offset 4 (log-start-offset-checkpoint)" in result.err
    assert "below_log_start" not in result.out


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_grep_of_what_a_consumer_is_given_starts_at_the_log_start_offset(kbatch, tmp_path, isolation):
    partition = _log_directory(tmp_path)
    result = kbatch("grep", "--isolation", isolation, "--format", "jsonl", "", str(partition))
    assert result.code == 0
    assert [json.loads(line)["offset"] for line in result.out.splitlines()] == [4, 5, 6, 7]
    plain = kbatch("grep", "--format", "jsonl", "", str(partition))
    assert plain.code == 0 and [json.loads(line)["offset"] for line in plain.out.splitlines()] == list(range(8))


def test_the_plain_listing_marks_the_records_below_the_log_start_offset(kbatch, tmp_path):
    partition = _log_directory(tmp_path)
    result = kbatch("dump", "--records", "--format", "jsonl", str(partition))
    assert result.code == 0
    records = [record for line in result.out.splitlines() for record in json.loads(line).get("records", [])]
    assert [(record["offset"], record.get("below_log_start")) for record in records] == \
        [(0, True), (1, True), (2, True), (3, True), (4, None), (5, None), (6, None), (7, None), (8, None)]
    assert "its log start offset is 4 (log-start-offset-checkpoint): the records below it are marked" in result.err


def test_the_plain_table_says_which_records_are_below_the_log_start_offset(kbatch, tmp_path, text_snapshot):
    partition = _log_directory(tmp_path)
    result = kbatch("dump", "--records", "--no-color", str(partition / f"{0:020d}.log"))
    assert result.code == 0
    shown = result.out.replace(str(tmp_path), "TMP")
    assert shown.count("below the log start offset 4") == 2
    assert shown == text_snapshot


@pytest.mark.parametrize("name, log_start, applies", [
    ("orders-0", None, False),                                        # no checkpoint: the log cannot tell
    ("orders-0", "orders 1 4", False),                                # an entry for another partition only
    ("orders-0.3f1c2a0b9d8e4f7a6b5c4d3e2f1a0b9c-delete", "orders 0 4", False),   # not about a renamed copy
    ("orders-0.3f1c2a0b9d8e4f7a6b5c4d3e2f1a0b9c-future", "orders 0 4", True),    # ... but about a -future one
])
def test_the_log_start_offset_is_the_checkpoints_for_the_partition(kbatch, tmp_path, name, log_start, applies):
    partition = _log_directory(tmp_path, name, log_start)
    result = kbatch("dump", "--records", "--isolation", "read_uncommitted", "--format", "jsonl", str(partition))
    assert result.code == 0
    assert _offsets(result) == ([4, 5, 6, 7] if applies else list(range(8)))


def test_a_segment_above_the_log_start_offset_is_read_whole(kbatch, tmp_path):
    """Only a segment whose base offset lies below the log start offset can hold records below it."""
    partition = _log_directory(tmp_path, log_start="orders 0 9")
    later = partition / f"{9:020d}.log"
    later.write_bytes(batch(9, [(b"k9", b"v9"), (b"k10", b"v10")]))
    result = kbatch("grep", "--isolation", "read_uncommitted", "--format", "jsonl", "", str(later))
    assert result.code == 0 and [json.loads(line)["offset"] for line in result.out.splitlines()] == [9, 10]
    assert result.err == ""


def test_isolation_read_uncommitted_needs_records(kbatch, tmp_path):
    result = kbatch("dump", "--isolation", "read_uncommitted", str(_log_directory(tmp_path)))
    assert result.code == 2 and "--isolation read_uncommitted selects records: give --records too" in result.err


@pytest.mark.parametrize("isolation", [None, "read_uncommitted", "read_committed"])
def test_a_log_start_checkpoint_kafka_cannot_read_is_said_and_exits_1(kbatch, tmp_path, isolation):
    # "4" with a letter: CheckpointFile.read throws; the log start is unknown, never "none"
    partition = _log_directory(tmp_path, log_start="orders 0 4x")
    chosen = ["--isolation", isolation] if isolation else []
    result = kbatch("dump", "--records", *chosen, "--format", "jsonl", str(partition))
    assert result.code == 1, result.err
    checkpoint = partition.parent / "log-start-offset-checkpoint"
    assert result.err.splitlines()[:2] == [
        f"kbatch: {checkpoint}: bad-checkpoint at pos 4, 12 bytes, entry: expected topic partition offset, found "
        "'orders 0 4x'",
        f"kbatch: {partition}: its log start offset cannot be read ({checkpoint} is damaged): the records below it, "
        "which no consumer is given, cannot be told apart and are shown"]
    assert _offsets(result) == list(range(9 if isolation is None else 8))   # (8: the marker, listed plainly)
    assert "below_log_start" not in result.out
    if isolation:   # grep's status is grep's (0: a record selected), its --strict makes the damage count
        grep = kbatch("grep", "--isolation", isolation, "--format", "jsonl", "", str(partition))
        assert grep.code == 0 and "its log start offset cannot be read" in grep.err
        assert [json.loads(line)["offset"] for line in grep.out.splitlines()] == list(range(8))
        assert kbatch("grep", "--strict", "--isolation", isolation, "", str(partition)).code == 2
