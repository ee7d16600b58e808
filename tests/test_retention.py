"""kbatch retention: UnifiedLog.deleteOldSegments and LogCleanerManager.cleanableOffsets on partition
directories made by hand (tests/handmade.py batches, checkpoint files as Kafka writes them), and on a real
broker's log directory."""

from __future__ import annotations

import json
import os

import pytest

from .handmade import batch, end_marker

DAY = 24 * 3600 * 1000
NOW = 1_800_000_000_000


def _checkpoint(log_dir, name: str, entries: dict[str, int]) -> None:
    """CheckpointFile: version 0, the count, then "topic partition offset" lines."""
    lines = ["0", str(len(entries))] + [f"{key.rsplit('-', 1)[0]} {key.rsplit('-', 1)[1]} {offset}"
                                        for key, offset in entries.items()]
    (log_dir / name).write_text("\n".join(lines) + "\n")


def _partition(log_dir, name: str, segments: list[tuple[int, list[tuple[int, int]]]], *, high_watermark=None):
    """Segments as (base offset, [(offset, timestamp), ...]), one record batch per record."""
    directory = log_dir / name
    directory.mkdir(parents=True)
    for base, records in segments:
        data = b"".join(batch(offset, [(None, b"v")], timestamp=stamp) for offset, stamp in records)
        (directory / f"{base:020d}.log").write_bytes(data)
    if high_watermark is not None:
        _checkpoint(log_dir, "replication-offset-checkpoint", {name: high_watermark})
    return directory


def _verdicts(kbatch, *args, expect: int = 0) -> list[dict]:
    result = kbatch("retention", "--format", "jsonl", "--now", str(NOW), *args)
    assert result.code == expect, result.err
    return [json.loads(line) for line in result.out.splitlines()]


def test_old_segments_are_deletable_up_to_the_first_kept(tmp_path, kbatch):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 10 * DAY)]), (1, [(1, NOW - 9 * DAY)]),
                                                 (2, [(2, NOW - DAY)]), (3, [(3, NOW - 20 * DAY)])],
                           high_watermark=4)
    lines = _verdicts(kbatch, str(directory))
    assert [(line["base_offset"], line["verdict"]) for line in lines] == [
        (0, "deletable"), (1, "deletable"), (2, "kept"), (3, "kept")]
    assert lines[0]["reasons"] == ["older than retention.ms (604800000)"]
    assert lines[2]["reasons"] == [f"within retention.ms (604800000): expires at {NOW - DAY + 7 * DAY}"]
    # the newest is older than retention, but retention deletes from the oldest and stopped at offset 2
    assert lines[3]["reasons"] == ["an older segment is kept, and retention deletes from the oldest"]


def test_a_fifo_among_the_segments_is_passed_over_and_said(tmp_path, kbatch):
    """A FIFO named as a segment is not opened (opening it waited for a writer forever), as Kafka's LogLoader
    loads regular files only; it is named on stderr, the status is 2, the segments are judged."""
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 10 * DAY)]), (1, [(1, NOW - DAY)])],
                           high_watermark=2)
    os.mkfifo(directory / f"{5:020d}.log")
    lines = _verdicts(kbatch, str(directory), expect=2)
    assert [(line["base_offset"], line["verdict"]) for line in lines] == [(0, "deletable"), (1, "kept")]
    assert kbatch("retention", "--now", str(NOW), str(directory), expect=2).err == (
        f"kbatch: cannot read {directory / f'{5:020d}.log'}: a FIFO, not a regular file: passed over unopened\n")


def test_a_moment_before_1970_is_said_in_epoch_milliseconds(tmp_path, kbatch):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 30 * DAY)]), (1, [(1, NOW)])], high_watermark=2)
    result = kbatch("retention", "--now", "0001-01-01", str(directory), expect=0)
    assert result.out.startswith("as at -62135596800000 (epoch ms); ")


def test_a_future_timestamp_keeps_its_segment_and_every_later_one(tmp_path, kbatch):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 30 * DAY), (1, NOW + 365 * DAY)]),
                                                 (2, [(2, NOW - 30 * DAY)])], high_watermark=3)
    lines = _verdicts(kbatch, str(directory))
    assert [line["verdict"] for line in lines] == ["kept", "kept"]
    assert lines[0]["reasons"] == [f"its largest timestamp {NOW + 365 * DAY} is in the future (batch at offset 1)"]
    assert lines[0]["largest_timestamp"] == NOW + 365 * DAY


def test_nothing_at_or_past_the_high_watermark_is_deleted(tmp_path, kbatch):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 30 * DAY)]), (1, [(1, NOW - 30 * DAY)])],
                           high_watermark=1)
    lines = _verdicts(kbatch, str(directory))
    assert [line["verdict"] for line in lines] == ["deletable", "kept"]
    assert lines[1]["reasons"] == ["its records reach the high watermark (1): retention never moves the log start "
                                   "past it"]


def test_retention_bytes_deletes_while_the_log_stays_above_it(tmp_path, kbatch):
    segments = [(offset, [(offset, NOW)]) for offset in range(4)]
    directory = _partition(tmp_path, "orders-0", segments, high_watermark=4)
    size = (directory / f"{0:020d}.log").stat().st_size
    lines = _verdicts(kbatch, "--config", f"retention.bytes={2 * size}", str(directory))
    assert [line["verdict"] for line in lines] == ["deletable", "deletable", "kept", "kept"]
    assert lines[0]["reasons"] == [f"retention.bytes ({2 * size}) exceeded"]


def test_the_log_start_offset_deletes_what_lies_below_it(tmp_path, kbatch):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW)]), (1, [(1, NOW)]), (2, [(2, NOW)])],
                           high_watermark=3)
    _checkpoint(tmp_path, "log-start-offset-checkpoint", {"orders-0": 2})
    lines = _verdicts(kbatch, "--config", "retention.ms=-1", str(directory))
    assert [(line["verdict"], line["reasons"]) for line in lines] == [
        ("deletable", ["below the log start offset"]), ("deletable", ["below the log start offset"]),
        ("kept", ["retention.ms is -1: kept for ever"])]


def test_an_empty_last_segment_is_never_deleted(tmp_path, kbatch):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 30 * DAY)]), (1, [])], high_watermark=1)
    lines = _verdicts(kbatch, str(directory))
    assert [(line["verdict"], line["reasons"]) for line in lines] == [
        ("deletable", ["older than retention.ms (604800000)"]),
        ("kept", ["the last segment, and empty: never deleted"])]


def _compacted_with_an_open_transaction(tmp_path):
    from .handmade import batch as handmade_batch

    directory = tmp_path / "compacted-0"
    directory.mkdir()
    open_txn = handmade_batch(2, [(b"k", b"v")], transactional=True, producer_id=77, producer_epoch=0,
                              base_sequence=0, timestamp=NOW - DAY)
    (directory / f"{0:020d}.log").write_bytes(batch(0, [(b"k", b"a"), (b"k", b"b")], timestamp=NOW - DAY) + open_txn)
    (directory / f"{3:020d}.log").write_bytes(batch(3, [(b"k", b"c")], timestamp=NOW - DAY))
    (directory / f"{4:020d}.log").write_bytes(batch(4, [(b"k", b"d")], timestamp=NOW - DAY))
    _checkpoint(tmp_path, "replication-offset-checkpoint", {"compacted-0": 5})
    return directory


def _transaction_state(tmp_path, transactional_id: bytes, producer_id: int):
    """__transaction_state-0 holding one record: TransactionLogKey v0 (transactionalId), TransactionLogValue v0
    (producerId, producerEpoch, transactionTimeoutMs, transactionStatus 1 Ongoing, transactionPartitions
    [compacted: 0], transactionLastUpdateTimestampMs, transactionStartTimestampMs), as Kafka's
    TransactionLogKey.json / TransactionLogValue.json lay them out."""
    import struct

    def string(text: bytes) -> bytes:
        return struct.pack(">h", len(text)) + text

    key = struct.pack(">h", 0) + string(transactional_id)
    value = (struct.pack(">hqhib", 0, producer_id, 0, 60_000, 1) + struct.pack(">i", 1) + string(b"compacted")
             + struct.pack(">ii", 1, 0) + struct.pack(">qq", NOW - DAY, NOW - DAY))
    directory = tmp_path / "__transaction_state-0"
    directory.mkdir()
    (directory / f"{0:020d}.log").write_bytes(batch(0, [(key, value)], timestamp=NOW - DAY))
    return directory


def test_an_open_transaction_holds_the_cleaner_back(tmp_path, kbatch):
    directory = _compacted_with_an_open_transaction(tmp_path)
    lines = _verdicts(kbatch, "--config", "cleanup.policy=compact", str(directory))
    cleaning = [line for line in lines if line["type"] == "cleaning"][0]
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"]) == (0, 2)
    assert cleaning["blocked_by"] == ["the last stable offset, held at 2 by producer 77's open transaction"]
    assert [line["verdict"] for line in lines if line["type"] == "segment"] == ["kept", "kept", "kept"]


def test_the_producer_holding_the_cleaner_back_is_named_by_its_transactional_id(tmp_path, kbatch):
    """Given a __transaction_state partition too, the open transaction's producer is named as kbatch producers
    names it: by the transactional id the coordinator's record gives its producer id."""
    directory = _compacted_with_an_open_transaction(tmp_path)
    coordinator = _transaction_state(tmp_path, b"orders-writer", 77)
    lines = _verdicts(kbatch, "--config", "cleanup.policy=compact", str(directory), str(coordinator))
    cleaning = [line for line in lines if line["type"] == "cleaning" and line["partition"] == str(directory)]
    assert [line["blocked_by"] for line in cleaning] == [
        ["the last stable offset, held at 2 by the open transaction of transactional id orders-writer (producer 77)"]]
    producers = kbatch("producers", "--format", "jsonl", str(directory), str(coordinator))   # the same join
    assert producers.code == 0, producers.err
    assert {json.loads(line)["transactional_id"] for line in producers.out.splitlines()} == {"orders-writer"}
    # another producer's id names nobody here
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = _transaction_state(other, b"someone-else", 78)
    lines = _verdicts(kbatch, "--config", "cleanup.policy=compact", str(directory), str(elsewhere))
    assert [line["blocked_by"] for line in lines if line["type"] == "cleaning" and line["partition"] == str(directory)] \
        == [["the last stable offset, held at 2 by producer 77's open transaction"]]
    table = kbatch("retention", "--now", str(NOW), "--config", "cleanup.policy=compact", str(directory),
                   str(coordinator))
    assert table.code == 0, table.err
    assert "by the open transaction of transactional id orders-writer (producer 77)" in " ".join(table.out.split())


def test_configs_come_from_the_metadata_log(tmp_path, kbatch):
    from pathlib import Path

    from .helpers import ROOT

    # the fixture's log holds a ConfigRecord (orders: cleanup.policy=compact) at offset 8; its snapshot, at 10,
    # is made by hand and holds none, so only the log is taken
    metadata = tmp_path / "meta" / "__cluster_metadata-0"
    metadata.mkdir(parents=True)
    log = f"{0:020d}.log"
    (metadata / log).write_bytes((Path(ROOT) / "fixtures/internal/__cluster_metadata-0" / log).read_bytes())
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 30 * DAY)]), (1, [(1, NOW)])], high_watermark=2)
    lines = _verdicts(kbatch, "--metadata", str(metadata), str(directory))
    assert lines[0]["verdict"] == "kept"
    assert lines[0]["reasons"][0].startswith("cleanup.policy compact")
    lines = _verdicts(kbatch, "--metadata", str(metadata), "--config", "cleanup.policy=delete", str(directory))
    assert lines[0]["verdict"] == "deletable"


def test_a_bad_config_is_a_usage_error(tmp_path, kbatch):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW)])])
    assert kbatch("retention", "--config", "retention.ms=soon", str(directory)).code == 2
    assert kbatch("retention", "--config", "novalue", str(directory)).code == 2


def test_the_table_at_80_columns(tmp_path, kbatch, snapshot, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW - 10 * DAY)]), (1, [(1, NOW + DAY)]),
                                                 (2, [(2, NOW - 30 * DAY)])], high_watermark=3)
    result = kbatch("retention", "--now", str(NOW), str(directory))
    assert result.code == 0, result.err
    assert result.out.replace(str(tmp_path), "TMP") == snapshot


@pytest.mark.real_kafka
def test_a_real_log_directory(real_kafka, kbatch):
    """Nothing of the real broker's is older than a week; a month on, every segment of a delete-policy topic up
    to the high watermark is deletable, and the compacted topics (their cleanup.policy from the log directory's
    own __cluster_metadata) are the cleaner's."""
    log_dir = real_kafka.stopped
    result = kbatch("retention", "--format", "jsonl", str(log_dir))
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    segments = [line for line in lines if line["type"] == "segment"]
    assert segments and all(line["verdict"] == "kept" for line in segments)
    result = kbatch("retention", "--format", "jsonl", "--now", str(int(__import__("time").time() * 1000) + 30 * DAY),
                    str(log_dir))
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    by_topic = {}
    for line in lines:
        if line["type"] == "segment":
            by_topic.setdefault(line["path"].split("/")[-2], []).append(line)
    assert all(line["verdict"] == "deletable" for line in by_topic["codec-gzip-0"])
    compacted = [line for line in lines if line["type"] == "cleaning"]
    assert {line["partition"].split("/")[-1] for line in compacted} >= {"compacted-0", "__consumer_offsets-0"}
    assert all(line["verdict"] == "kept" for line in by_topic["compacted-0"])
    # the producer a year ahead (tests/kafka/Workload.java): the broker rolled a segment for its batch (the
    # time to roll, segment.ms, counts from the first batch's timestamp), which keeps that segment
    *earlier, future = by_topic["future-0"]
    assert [line["verdict"] for line in earlier] == ["deletable"] and future["base_offset"] == 1
    assert future["verdict"] == "kept"
    assert future["reasons"][0].startswith(f"its largest timestamp {future['largest_timestamp']} is in the future "
                                           "(batch at offset 1)")


@pytest.mark.real_kafka
def test_a_transaction_left_open_stops_the_cleaner_at_its_first_offset(real_kafka, kbatch):
    """tests/kafka/Workload.java's pinned(): on a compacted topic, a transaction left open between records of an
    idempotent producer, each in a segment of its own. The partition leader reports the transaction's first
    offset (DescribeProducers), and the broker's cleaner cleaned up to it and no further (its
    cleaner-offset-checkpoint); kbatch retention names the producer (by the transactional id the log directory's
    __transaction_state gives it, else by its id) and that offset as what holds the last stable offset and stops
    the cleaner, and kbatch txn shows the transaction open under that transactional id."""
    import re

    from .real_kafka import producer_states

    log_dir = real_kafka.stopped
    (producer_id, _, _, open_from), = [state for state in producer_states(real_kafka.workload)["pinned-0"]
                                       if state[3] >= 0]
    checkpoint = (log_dir / "cleaner-offset-checkpoint").read_text()
    assert int(re.search(r"^pinned 0 (\d+)$", checkpoint, re.M)[1]) == open_from > 0

    result = kbatch("retention", "--format", "jsonl", str(log_dir))
    assert result.code == 0, result.err
    (cleaning,) = [line for line in map(json.loads, result.out.splitlines())
                   if line["type"] == "cleaning" and line["partition"].endswith("/pinned-0")]
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["will_clean"]) == (
        open_from, open_from, False)
    assert cleaning["blocked_by"] == [f"the last stable offset, held at {open_from} by the open transaction of "
                                      f"transactional id txn-pinned (producer {producer_id})"]
    result = kbatch("retention", "--format", "jsonl", "--metadata", str(log_dir / "__cluster_metadata-0"),
                    str(log_dir / "pinned-0"))   # without __transaction_state
    assert result.code == 0, result.err
    (cleaning,) = [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "cleaning"]
    assert cleaning["blocked_by"] == [f"the last stable offset, held at {open_from} by producer {producer_id}'s "
                                      "open transaction"]

    coordinator = sorted(map(str, log_dir.glob("__transaction_state-*")))
    result = kbatch("txn", "--format", "jsonl", str(log_dir / "pinned-0"), *coordinator)
    assert result.code == 0, result.err
    (transaction,) = [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "transaction"]
    assert (transaction["producer_id"], transaction["first_offset"], transaction["outcome"],
            transaction["transactional_id"], transaction["coordinator_state"], transaction["hanging"],
            transaction["last_stable_offset_held"]) == (producer_id, open_from, "OPEN", "txn-pinned", "Ongoing",
                                                        False, True)


@pytest.mark.parametrize("config, said", [
    ("retentoin.ms=1", "'retentoin.ms' is not a config retention reads"),   # a typo, once taken as read
    ("segment.bytes=1024", "'segment.bytes' is not a config retention reads"),
    ("cleanup.policy=compcat", "cleanup.policy holds 'compcat': expected compact or delete"),
    ("\x1b]0;x\x07\u202e=1", "'\\x1b]0;x\\x07\\u202e' is not a config retention reads"),
])
def test_a_config_retention_does_not_read_is_a_usage_error(tmp_path, kbatch, config, said):
    directory = _partition(tmp_path, "orders-0", [(0, [(0, NOW)])])
    result = kbatch("retention", "--config", config, str(directory), expect=2)
    assert said in result.err and result.out == ""


def test_a_damaged_high_watermark_checkpoint_deletes_nothing_and_is_told(tmp_path, kbatch):
    old = [(0, [(0, NOW - 30 * DAY)]), (1, [(1, NOW - 20 * DAY)]), (2, [(2, NOW - 10 * DAY)])]
    directory = _partition(tmp_path, "orders-0", old, high_watermark=3)
    assert [line["verdict"] for line in _verdicts(kbatch, str(directory))] == ["deletable"] * 3
    # "1O", a letter O: CheckpointFile.read throws, and the log directory goes offline; never "no high watermark"
    (tmp_path / "replication-offset-checkpoint").write_text("0\n1\norders 0 1O\n")
    lines = _verdicts(kbatch, str(directory), expect=1)
    assert [(line["verdict"], line["reasons"]) for line in lines if line["type"] == "segment"] == [(
        "kept", ["Kafka cannot read replication-offset-checkpoint (damaged) and takes the log directory offline: "
                 "retention deletes nothing there"])] * 3
    assert [(line["file"], line["code"], line["pos"], line["field"], line["expected"], line["actual"])
            for line in lines if line["type"] == "finding"] == [
        (str(tmp_path / "replication-offset-checkpoint"), "bad-checkpoint", 4, "entry", "topic partition offset",
         "'orders 0 1O'")]


def _metadata_log(tmp_path, configs: list[tuple[str, str, str]]):
    """A __cluster_metadata-0 whose one batch holds a ConfigRecord (topic, name, value) each, from offset 0,
    written by fixtures/make_internal_fixtures.py (Kafka's message definitions, not kbatch's reader)."""
    from .helpers import fixture_writer

    writer = fixture_writer()
    records = [writer.metadata_record("ConfigRecord", 0, {"resourceType": 2, "resourceName": topic, "name": name,
                                                         "value": value})[:2] for topic, name, value in configs]
    metadata = tmp_path / "__cluster_metadata-0"
    metadata.mkdir()
    (metadata / f"{0:020d}.log").write_bytes(batch(0, records))
    return metadata


def test_a_config_record_kafka_cannot_parse_is_a_finding_and_the_other_topics_are_judged(tmp_path, kbatch):
    _metadata_log(tmp_path, [("orders", "cleanup.policy", "\x1b[2Jpurge"), ("payments", "retention.ms", "-1")])
    old = [(0, [(0, NOW - 30 * DAY)]), (1, [(1, NOW - 20 * DAY)])]
    _partition(tmp_path, "orders-0", old, high_watermark=2)
    _partition(tmp_path, "payments-0", old, high_watermark=2)
    _partition(tmp_path, "other-0", old, high_watermark=2)
    _checkpoint(tmp_path, "replication-offset-checkpoint", {"orders-0": 2, "payments-0": 2, "other-0": 2})
    lines = _verdicts(kbatch, str(tmp_path), expect=1)
    segments = [(os.path.basename(os.path.dirname(line["path"])), line["verdict"]) for line in lines
                if line["type"] == "segment"]
    assert segments == [("orders-0", "unknown")] * 2 + [("other-0", "deletable")] * 2 + [("payments-0", "kept")] * 2
    assert [line["reasons"] for line in lines if line["type"] == "segment"][0] == [
        "its topic's config cannot be read: ConfigRecord at offset 0: topic 'orders', cleanup.policy (a "
        "bad-topic-config finding)"]
    assert [(line["code"], line["field"], line["expected"], line["actual"]) for line in lines
            if line["type"] == "finding"] == [
        ("bad-topic-config", "ConfigRecord at offset 0: topic 'orders', cleanup.policy",
         "compact or delete (LogConfig: ValidList.in)", "'\\x1b[2Jpurge'")]
    # the user's own --config stays a usage error, and one over the record's value makes the topic judged
    assert kbatch("retention", "--config", "cleanup.policy=purge", str(tmp_path)).code == 2
    lines = _verdicts(kbatch, "--config", "cleanup.policy=delete", str(tmp_path))
    assert {line["verdict"] for line in lines} == {"deletable", "kept"}


@pytest.mark.parametrize("text, ratio", [("NaN", "nan"), ("0.25", "0.25"), (" 1e-1 ", "0.1"), ("0x1p-2", "0.25"),
                                         (".5d", "0.5"), ("nan", None), ("inf", None), ("1_0", None), ("0,5", None)])
def test_min_cleanable_dirty_ratio_parses_as_javas_double_parse_double(text, ratio):
    from kbatch.ops.retention import ConfigError, parse_config

    if ratio is None:
        with pytest.raises(ConfigError):
            parse_config({"min.cleanable.dirty.ratio": text})
    else:
        assert str(parse_config({"min.cleanable.dirty.ratio": text})["min.cleanable.dirty.ratio"]) == ratio


def test_a_ratio_of_nan_in_a_config_record_or_on_the_command_line(tmp_path, kbatch):
    _metadata_log(tmp_path, [("orders", "min.cleanable.dirty.ratio", "nan")])
    _partition(tmp_path, "orders-0", [(0, [(0, NOW - 30 * DAY)])], high_watermark=1)
    lines = _verdicts(kbatch, str(tmp_path), expect=1)
    assert [(line["code"], line["expected"], line["actual"]) for line in lines if line["type"] == "finding"] == \
        [("bad-topic-config", "a double (Double.parseDouble)", "'nan'")]
    assert kbatch("retention", "--config", "min.cleanable.dirty.ratio=nan", str(tmp_path)).code == 2
    assert kbatch("retention", "--config", "min.cleanable.dirty.ratio=NaN", str(tmp_path)).code == 0


def test_the_table_of_a_damaged_checkpoint_and_a_config_not_read(tmp_path, kbatch, snapshot, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    _metadata_log(tmp_path, [("orders", "retention.ms", "a week")])
    _partition(tmp_path, "orders-0", [(0, [(0, NOW - 10 * DAY)]), (1, [(1, NOW - DAY)])])
    _partition(tmp_path, "payments-0", [(0, [(0, NOW - 10 * DAY)]), (1, [(1, NOW - DAY)])])
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\npayments 0 -\n")
    result = kbatch("retention", "--now", str(NOW), str(tmp_path))
    assert result.code == 1, result.err
    assert result.out.replace(str(tmp_path), "TMP") == snapshot


# -- the cleaner's segments: LogCleanerManager asks LogSegments.values(from, to), which starts at the segment
# holding ``from`` (its floor), never at the first segment after it

def _keyed(base: int, count: int, tag: str, **fields) -> bytes:
    """One batch of ``count`` records at ``base``.., keys k0..k2 over and over, values of 50 ``tag``s and the offset."""
    return batch(base, [(b"k%d" % (i % 3), (tag * 50 + str(base + i)).encode()) for i in range(count)], **fields)


def _compacted(log_dir, segments: dict[int, list[bytes]], **checkpoints: int):
    """orders-0 holding ``segments`` (base offset: batches), and its offsets in the checkpoints named
    (replication_offset_checkpoint=..., cleaner_offset_checkpoint=...)."""
    directory = log_dir / "orders-0"
    directory.mkdir()
    for base, held in segments.items():
        (directory / f"{base:020d}.log").write_bytes(b"".join(held))
    for name, offset in checkpoints.items():
        _checkpoint(log_dir, name.replace("_", "-"), {"orders-0": offset})
    return directory


def _cleaning_of(kbatch, directory, *configs: str) -> dict:
    lines = _verdicts(kbatch, "--config", "cleanup.policy=compact", *configs, str(directory))
    (cleaning,) = [line for line in lines if line["type"] == "cleaning"]
    return cleaning


def test_an_uncleanable_offset_inside_a_segment_holds_that_whole_segment_back(tmp_path, kbatch):
    """Segments 0, 10, 20; a transaction open from 15 and the cleaner checkpointed at 10: the first uncleanable
    offset 15 lies in segment 10, which calculateCleanableBytes takes as the first uncleanable segment
    (nonActiveLogSegmentsFrom(15) starts at it), so logSegments(10, 10) is empty: nothing cleanable, ratio 0.
    kbatch took segment 20 for it: 10's bytes cleanable, a ratio over 0.5, would clean now."""
    open_txn = dict(transactional=True, producer_id=7, producer_epoch=0, base_sequence=0)
    directory = _compacted(tmp_path, {0: [_keyed(0, 10, "v")], 10: [_keyed(10, 5, "w"), _keyed(15, 5, "x", **open_txn)],
                                      20: [_keyed(20, 10, "y")]},
                           replication_offset_checkpoint=30, cleaner_offset_checkpoint=10)
    cleaning = _cleaning_of(kbatch, directory)
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["cleanable_bytes"],
            cleaning["dirty_ratio"], cleaning["due"], cleaning["will_clean"]) == (10, 15, 0, 0.0, False, False)
    assert cleaning["blocked_by"] == ["the last stable offset, held at 15 by producer 7's open transaction"]
    # with the checkpoint at 0 the cleaner may take segment 0 (the segment holding 15 still stops it)
    _checkpoint(tmp_path, "cleaner-offset-checkpoint", {"orders-0": 0})
    cleaning = _cleaning_of(kbatch, directory)
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["cleanable_bytes"],
            cleaning["dirty_ratio"], cleaning["will_clean"]) == (
        0, 15, (directory / f"{0:020d}.log").stat().st_size, 1.0, True)


def test_min_compaction_lag_asks_the_segment_holding_the_first_dirty_offset(tmp_path, kbatch):
    """The cleaner checkpointed at 15, inside segment 10, whose newest record is within min.compaction.lag.ms:
    findFirstUncleanableSegment asks nonActiveLogSegmentsFrom(15), segment 10 first, and stops there; the first
    uncleanable offset is max(15, 10) and nothing is cleanable.  kbatch asked only segments from 20 on, and
    stopped at the active segment with segment 10's bytes cleanable."""
    old, recent = NOW - 400 * DAY, NOW - 600_000
    directory = _compacted(tmp_path, {0: [_keyed(0, 10, "v", timestamp=old)],
                                      10: [_keyed(10, 5, "w", timestamp=old), _keyed(15, 5, "x", timestamp=recent)],
                                      20: [_keyed(20, 10, "y", timestamp=recent)]},
                           replication_offset_checkpoint=30, cleaner_offset_checkpoint=15)
    cleaning = _cleaning_of(kbatch, directory, "--config", "min.compaction.lag.ms=3600000")
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["blocked_by"],
            cleaning["cleanable_bytes"], cleaning["dirty_ratio"], cleaning["will_clean"]) == (
        15, 15, ["min.compaction.lag.ms (3600000)"], 0, 0.0, False)


def test_max_compaction_lag_asks_the_segment_holding_the_first_dirty_offset(tmp_path, kbatch):
    """maxCompactionDelay takes the first batch timestamps of nonActiveLogSegmentsFrom(firstDirtyOffset): with
    the cleaner checkpointed at 15, segment 10's (a year old) is among them, and max.compaction.lag.ms of a day
    has passed: the log is due.  kbatch asked only segment 20's (an hour old): not due."""
    directory = _compacted(tmp_path, {0: [_keyed(0, 10, "v", timestamp=NOW - 400 * DAY)],
                                      10: [_keyed(10, 10, "w", timestamp=NOW - 365 * DAY)],
                                      20: [_keyed(20, 10, "x", timestamp=NOW - 3_600_000)],
                                      30: [_keyed(30, 1, "y", timestamp=NOW)]},
                           replication_offset_checkpoint=31, cleaner_offset_checkpoint=15)
    cleaning = _cleaning_of(kbatch, directory, "--config", f"max.compaction.lag.ms={DAY}",
                            "--config", "min.cleanable.dirty.ratio=0.9")
    sizes = {base: (directory / f"{base:020d}.log").stat().st_size for base in (0, 10, 20)}
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["blocked_by"],
            cleaning["cleanable_bytes"], cleaning["due"], cleaning["will_clean"]) == (
        15, 30, ["the active segment"], sizes[10] + sizes[20], True, True)
    # LogToClean.cleanBytes: the segments below the first dirty offset (0 and 10; 10 is counted in both)
    assert cleaning["dirty_ratio"] == (sizes[10] + sizes[20]) / (sizes[0] + sizes[10] + sizes[10] + sizes[20])


# -- the last stable offset the cleaner stops at: UnifiedLog.lastStableOffset

def test_the_last_stable_offset_is_never_above_the_high_watermark(tmp_path, kbatch):
    """High watermark 10, a transaction open from 22: UnifiedLog.lastStableOffset gives the first unstable offset
    only below the high watermark, else the high watermark: 10, in segment 10, so nothing is cleanable.  kbatch
    took the open transaction's 22: stopped at the active segment, segment 10's bytes cleanable, would clean."""
    open_txn = dict(transactional=True, producer_id=7, producer_epoch=0, base_sequence=0)
    directory = _compacted(tmp_path, {0: [_keyed(0, 10, "v")], 10: [_keyed(10, 10, "w")],
                                      20: [_keyed(20, 2, "y"), _keyed(22, 3, "x", **open_txn)]},
                           replication_offset_checkpoint=10, cleaner_offset_checkpoint=10)
    cleaning = _cleaning_of(kbatch, directory)
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["blocked_by"],
            cleaning["cleanable_bytes"], cleaning["dirty_ratio"], cleaning["will_clean"]) == (
        10, 10, ["the last stable offset"], 0, 0.0, False)


def _committed_across_segments(tmp_path, high_watermark: int):
    """Segment 0: 0..4 plain, 5..9 producer 7's transaction; segment 10: its COMMIT marker at 10, 11..19 plain;
    segment 20 (active): 20..29."""
    producer = dict(transactional=True, producer_id=7, producer_epoch=0)
    return _compacted(tmp_path, {0: [_keyed(0, 5, "v"), _keyed(5, 5, "t", base_sequence=0, **producer)],
                                 10: [batch(10, [end_marker("COMMIT", 0)], control=True, **producer),
                                      _keyed(11, 9, "w")],
                                 20: [_keyed(20, 10, "y")]},
                      replication_offset_checkpoint=high_watermark, cleaner_offset_checkpoint=0)


def test_a_transaction_whose_marker_the_high_watermark_has_not_passed_holds_the_last_stable_offset(tmp_path, kbatch):
    """A transaction committed at 10 with the high watermark at 10 is not yet replicated: ProducerStateManager keeps
    it in unreplicatedTxns (completeTxn) until the high watermark passes its marker (removeUnreplicatedTransactions),
    and firstUnstableOffset counts it: the last stable offset is its first offset, 5, in segment 0, and nothing is
    cleanable.  kbatch counted only open transactions: the high watermark, 10, segment 0 cleanable."""
    directory = _committed_across_segments(tmp_path, 10)
    cleaning = _cleaning_of(kbatch, directory)
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["blocked_by"],
            cleaning["cleanable_bytes"], cleaning["dirty_ratio"], cleaning["will_clean"]) == (
        0, 5, ["the last stable offset, held at 5 by producer 7's transaction, whose COMMIT marker at 10 the high "
               "watermark has not passed"], 0, 0.0, False)


def test_a_transaction_whose_marker_lies_below_the_high_watermark_holds_nothing(tmp_path, kbatch):
    directory = _committed_across_segments(tmp_path, 11)
    cleaning = _cleaning_of(kbatch, directory)
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["blocked_by"],
            cleaning["cleanable_bytes"], cleaning["dirty_ratio"], cleaning["will_clean"]) == (
        0, 11, ["the last stable offset"], (directory / f"{0:020d}.log").stat().st_size, 1.0, True)


def test_the_last_stable_offset_is_raised_to_the_log_start_offset(tmp_path, kbatch):
    """A transaction open from 5 and the log start offset at 7 (DeleteRecords): maybeIncrementFirstUnstableOffset
    raises the first unstable offset to the log start offset, 7."""
    producer = dict(transactional=True, producer_id=7, producer_epoch=0, base_sequence=0)
    directory = _compacted(tmp_path, {0: [_keyed(0, 5, "v"), _keyed(5, 5, "t", **producer)],
                                      10: [_keyed(10, 10, "w")]},
                           replication_offset_checkpoint=20, log_start_offset_checkpoint=7)
    cleaning = _cleaning_of(kbatch, directory)
    assert (cleaning["first_dirty_offset"], cleaning["first_uncleanable_offset"], cleaning["blocked_by"],
            cleaning["cleanable_bytes"]) == (
        7, 7, ["the last stable offset, held at 7 (the log start offset) by producer 7's open transaction"], 0)
