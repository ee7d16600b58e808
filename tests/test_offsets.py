"""kbatch offsets: __consumer_offsets replayed as the group coordinator replays it, held to bytes worked by hand
from Kafka's message definitions (OffsetCommitKey/Value, GroupMetadataKey/Value, ConsumerProtocolAssignment:
fixtures/kafka-messages/) and to a real broker's log, its kafka-consumer-groups.sh included."""

from __future__ import annotations

import json
import re
import struct

import pytest

from kbatch.ops.offsets import OffsetHistory, coordinator_partition, java_string_hash
from kbatch.reading.reader import ReadOptions, SegmentReader

from .handmade import batch, end_marker
from .helpers import ROOT, schema_validator

T0 = 1_700_000_000_000


def _string(text: str | None) -> bytes:
    """A non-flexible string: int16 length (-1: null), then UTF-8."""
    if text is None:
        return struct.pack(">h", -1)
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def commit_key(group: str, topic: str, partition: int) -> bytes:
    """Record type 1 (OffsetCommitKey), then the key at version 0's layout."""
    return struct.pack(">h", 1) + _string(group) + _string(topic) + struct.pack(">i", partition)


def commit_value(offset: int, timestamp: int, *, leader_epoch: int = -1, metadata: str = "") -> bytes:
    """OffsetCommitValue version 3: offset, leaderEpoch, metadata, commitTimestamp."""
    return struct.pack(">hqi", 3, offset, leader_epoch) + _string(metadata) + struct.pack(">q", timestamp)


def group_key(group: str) -> bytes:
    return struct.pack(">h", 2) + _string(group)


def group_value(generation: int, members: list[tuple[str, dict[str, list[int]]]]) -> bytes:
    """GroupMetadataValue version 3 of a "consumer" group: each member with its ConsumerProtocolAssignment v0."""
    out = struct.pack(">h", 3) + _string("consumer") + struct.pack(">i", generation) + _string("range")
    out += _string(members[0][0] if members else None) + struct.pack(">q", T0) + struct.pack(">i", len(members))
    for member_id, owned in members:
        assignment = struct.pack(">hi", 0, len(owned))
        for topic, partitions in owned.items():
            assignment += _string(topic) + struct.pack(">i", len(partitions))
            assignment += b"".join(struct.pack(">i", partition) for partition in partitions)
        assignment += struct.pack(">i", -1)   # userData: null
        out += _string(member_id) + _string(None) + _string("client") + _string("/10.0.0.1")
        out += struct.pack(">ii", 300000, 45000) + struct.pack(">i", 0)   # timeouts, an empty subscription
        out += struct.pack(">i", len(assignment)) + assignment
    return out


def _history(segment: bytes, **selection) -> tuple[OffsetHistory, list]:
    import io

    emitted = []
    history = OffsetHistory(emitted.append, **selection)
    for item in SegmentReader(io.BytesIO(segment), ReadOptions(records=True)):
        history.add_batch(item, "seg.log")
    history.finish()
    return history, emitted


def _log() -> bytes:
    """A group's life: commits by members (10, 20), a rewind (5), the group empties and is reset forward (50),
    the offset deleted, committed again (7); then transactions: producer 7's commit aborted, producer 8's
    committed, producer 9's with no marker yet."""
    g, t = "billing", "orders"
    return b"".join([
        batch(0, [(group_key(g), group_value(3, [("member-a", {t: [0, 1]})]))], timestamp=T0),
        batch(1, [(commit_key(g, t, 0), commit_value(10, T0 + 1000, leader_epoch=4))], timestamp=T0 + 1000),
        batch(2, [(commit_key(g, t, 0), commit_value(20, T0 + 2000, leader_epoch=4, metadata="m"))],
              timestamp=T0 + 2000),
        batch(3, [(commit_key(g, t, 0), commit_value(5, T0 + 3000))], timestamp=T0 + 3000),
        batch(4, [(group_key(g), group_value(4, []))], timestamp=T0 + 3500),
        batch(5, [(commit_key(g, t, 0), commit_value(50, T0 + 4000))], timestamp=T0 + 4000),
        batch(6, [(commit_key(g, t, 0), None)], timestamp=T0 + 5000),
        batch(7, [(commit_key(g, t, 0), commit_value(7, T0 + 6000))], timestamp=T0 + 6000),
        batch(8, [(commit_key(g, t, 1), commit_value(100, T0 + 7000))], transactional=True, producer_id=7,
              producer_epoch=0, timestamp=T0 + 7000),
        batch(9, [(commit_key(g, t, 1), commit_value(200, T0 + 7100))], transactional=True, producer_id=8,
              producer_epoch=0, timestamp=T0 + 7100),
        batch(10, [end_marker("ABORT", 5)], control=True, transactional=True, producer_id=7, producer_epoch=0,
              timestamp=T0 + 7200),
        batch(11, [end_marker("COMMIT", 5)], control=True, transactional=True, producer_id=8, producer_epoch=0,
              timestamp=T0 + 7300),
        batch(12, [(commit_key(g, t, 1), commit_value(300, T0 + 8000))], transactional=True, producer_id=9,
              producer_epoch=0, timestamp=T0 + 8000),
    ])


def test_commits_are_replayed_in_the_order_the_coordinator_applies_them():
    history, emitted = _history(_log())
    seen = [(c.log_offset, c.partition, c.offset, c.previous_offset, c.move, c.transaction) for c in emitted]
    assert seen == [
        (1, 0, 10, None, None, None),
        (2, 0, 20, 10, None, None),
        (3, 0, 5, 20, "rewind", None),
        (5, 0, 50, 5, "reset-forward", None),   # the group had no members (generation 4)
        (6, 0, None, 50, None, None),           # a tombstone
        (7, 0, 7, None, None, None),            # after a tombstone: nothing before it to move from
        (8, 1, 100, None, None, "ABORT"),       # emitted at its marker, not applied
        (9, 1, 200, None, None, "COMMIT"),
        (12, 1, 300, None, None, "OPEN"),       # no marker: emitted at the end, not applied
    ]
    first = emitted[0]
    assert (first.generation, first.member, first.leader_epoch, first.commit_timestamp) == (3, "member-a", 4, T0 + 1000)
    assert emitted[1].metadata == "m"
    assert emitted[3].generation == 4 and emitted[3].member is None
    assert emitted[4].record_timestamp == T0 + 5000
    position = history.positions[("billing", "orders", 0)]
    assert (position.commit.offset, position.commits, position.rewinds, position.resets) == (7, 6, 1, 1)
    assert history.positions[("billing", "orders", 1)].commit.offset == 200   # 100 aborted, 300 open
    assert history.unreadable == 0


def test_where_a_group_stood_at_a_time():
    history, _ = _history(_log(), at=T0 + 3000)
    assert {key: commit.offset for key, commit in history.positions_at.items()} == {("billing", "orders", 0): 5}
    history, _ = _history(_log(), at=T0 + 4999)
    assert history.positions_at[("billing", "orders", 0)].offset == 50
    history, _ = _history(_log(), at=T0 + 5000)   # a tombstone's time is its record's: 50 was deleted then
    then = history.positions_at[("billing", "orders", 0)]
    assert (then.log_offset, then.offset) == (6, None)
    history, _ = _history(_log(), at=T0 + 6000)
    assert history.positions_at[("billing", "orders", 0)].offset == 7


def _between_a_transaction(record: tuple[bytes, bytes | None]) -> bytes:
    """Group g commits 50 on orders-0; producer 9 commits 100 for it in a transaction (log offset 1); ``record``
    is written outside the transaction (log offset 2); then the transaction's COMMIT marker (3)."""
    return b"".join([
        batch(0, [(commit_key("g", "orders", 0), commit_value(50, T0))], timestamp=T0),
        batch(1, [(commit_key("g", "orders", 0), commit_value(100, T0 + 1000))], transactional=True,
              producer_id=9, producer_epoch=0, base_sequence=0, timestamp=T0 + 1000),
        batch(2, [record], timestamp=T0 + 2000),
        batch(3, [end_marker("COMMIT", 1)], control=True, transactional=True, producer_id=9, producer_epoch=0,
              timestamp=T0 + 3000),
    ])


def test_a_tombstone_removes_the_partitions_commit_from_the_open_transaction():
    """OffsetMetadataManager.replay: a tombstone removes the offset and the partition's pending transactional
    offsets, so the COMMIT marker after it has nothing to apply: no offset is committed."""
    history, emitted = _history(_between_a_transaction((commit_key("g", "orders", 0), None)))
    seen = [(c.log_offset, c.offset, c.previous_offset, c.move, c.transaction, c.superseded_by, c.counts)
            for c in emitted]
    assert seen == [
        (0, 50, None, None, None, None, True),
        (2, None, 50, None, None, None, True),       # the tombstone
        (1, 100, None, None, "COMMIT", 2, False),    # emitted at its marker, superseded by the tombstone
    ]
    position = history.positions[("g", "orders", 0)]
    assert (position.commit.log_offset, position.commit.offset, position.commits) == (2, None, 2)


def test_a_tombstone_supersedes_only_the_commits_written_before_it():
    """The same transaction commits again for the partition after the tombstone: that one is pending anew."""
    again = batch(4, [(commit_key("g", "orders", 0), commit_value(120, T0 + 4000))], transactional=True,
                  producer_id=9, producer_epoch=0, base_sequence=1, timestamp=T0 + 4000)
    log = _between_a_transaction((commit_key("g", "orders", 0), None))
    marker = batch(5, [end_marker("COMMIT", 1)], control=True, transactional=True, producer_id=9, producer_epoch=0)
    history, emitted = _history(log + again + marker)
    assert [(c.log_offset, c.offset, c.transaction, c.superseded_by) for c in emitted] == [
        (0, 50, None, None), (2, None, None, None), (1, 100, "COMMIT", 2), (4, 120, "COMMIT", None)]
    assert history.positions[("g", "orders", 0)].commit.offset == 120


def test_at_the_commit_marker_a_later_plain_commit_stands():
    """OffsetMetadataManager.replayEndTransactionMarker applies a pending offset only where its record is later
    than the committed one's ("Skipped the materialization"): 200 (log offset 2) stands over 100 (log offset
    1), and nothing is rewound."""
    history, emitted = _history(_between_a_transaction((commit_key("g", "orders", 0), commit_value(200, T0 + 2000))))
    seen = [(c.log_offset, c.offset, c.previous_offset, c.move, c.transaction, c.superseded_by, c.counts)
            for c in emitted]
    assert seen == [
        (0, 50, None, None, None, None, True),
        (2, 200, 50, None, None, None, True),
        (1, 100, None, None, "COMMIT", 2, False),   # superseded by the later record
    ]
    position = history.positions[("g", "orders", 0)]
    assert (position.commit.offset, position.commits, position.rewinds) == (200, 2, 0)


def test_at_the_commit_marker_a_transactional_commit_later_than_the_committed_one_is_applied():
    """The plain commit came before the transactional one: the transactional one is the later record."""
    log = b"".join([
        batch(0, [(commit_key("g", "orders", 0), commit_value(200, T0))], timestamp=T0),
        batch(1, [(commit_key("g", "orders", 0), commit_value(100, T0 + 1000))], transactional=True,
              producer_id=9, producer_epoch=0, base_sequence=0, timestamp=T0 + 1000),
        batch(2, [end_marker("COMMIT", 1)], control=True, transactional=True, producer_id=9, producer_epoch=0),
    ])
    history, emitted = _history(log)
    assert [(c.offset, c.previous_offset, c.move, c.superseded_by) for c in emitted] == [
        (200, None, None, None), (100, 200, "rewind", None)]
    assert history.positions[("g", "orders", 0)].commit.offset == 100


def test_a_selection_leaves_out_other_groups_and_topics():
    other = batch(13, [(commit_key("audit", "payments", 0), commit_value(1, T0))])
    _, emitted = _history(_log() + other, groups={"audit"})
    assert [(c.group, c.topic) for c in emitted] == [("audit", "payments")]
    _, emitted = _history(_log() + other, topics={"payments"})
    assert [(c.group, c.offset) for c in emitted] == [("audit", 1)]


def test_a_record_that_does_not_read_is_counted_and_not_taken_for_a_tombstone():
    broken = commit_value(9, T0)[:-3]    # the commit time cut short
    history, emitted = _history(batch(0, [(commit_key("g", "t", 0), broken)]))
    assert emitted == [] and history.unreadable == 1


@pytest.mark.parametrize("name, java_hash", [
    ("", 0), ("hello", 99162322), ("Aa", 2112), ("BB", 2112),
    ("polygenelubricants", -2**31),   # Integer.MIN_VALUE: Utils.abs makes it 0, where Math.abs would not
    ("\U0001F600", 0xD83D * 31 + 0xDE00),   # hashed as Java's two UTF-16 code units
])
def test_names_hash_as_java_strings_do(name, java_hash):
    assert java_string_hash(name) == java_hash


def test_the_coordinator_partition_is_kafkas_hash():
    assert coordinator_partition("polygenelubricants", 50) == 0
    assert coordinator_partition("hello", 50) == 99162322 % 50
    assert coordinator_partition("Aa", 7) == coordinator_partition("BB", 7) == 2112 % 7
    assert coordinator_partition("x" * 7, 50) == abs(java_string_hash("x" * 7)) % 50


# -- the command line --------------------------------------------------------------------------------------

def _segment(tmp_path, data: bytes):
    directory = tmp_path / "__consumer_offsets-9"
    directory.mkdir()
    path = directory / f"{0:020d}.log"
    path.write_bytes(data)
    return path


def test_jsonl_is_one_commit_per_line_each_valid_against_the_schema(tmp_path, kbatch):
    path = _segment(tmp_path, _log())
    result = kbatch("offsets", "--format", "jsonl", str(path))
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    for line in lines:
        schema_validator("commit").validate(line)
    assert [(line["offset"], line["move"]) for line in lines][:4] == [(10, None), (20, None), (5, "rewind"),
                                                                      (50, "reset-forward")]
    assert lines[0]["commit_time"] == "2023-11-14T22:13:21.000Z" and lines[0]["file"] == str(path)


def test_the_table_at_80_columns(tmp_path, kbatch, snapshot, monkeypatch):
    path = _segment(tmp_path, _log())
    monkeypatch.setenv("COLUMNS", "80")
    result = kbatch("offsets", "--group", "billing", "--at", str(T0 + 3000), str(path))
    assert result.code == 0, result.err
    assert max(map(len, result.out.splitlines())) <= 80 or "kafka-consumer-groups.sh" in result.out
    assert result.out.replace(str(tmp_path), "TMP") == snapshot


def test_a_transactional_commit_a_tombstone_superseded_is_shown_not_applied(tmp_path, kbatch, snapshot):
    path = _segment(tmp_path, _between_a_transaction((commit_key("g", "orders", 0), None)))
    result = kbatch("offsets", "--group", "g", str(path), expect=0)
    assert result.out.replace(str(tmp_path), "TMP") == snapshot
    result = kbatch("offsets", "--format", "jsonl", str(path), expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    for line in lines:
        schema_validator("commit").validate(line)
    assert [(line["log_offset"], line["offset"], line["transaction"], line["superseded_by"]) for line in lines] \
        == [(0, 50, None, None), (2, None, None, None), (1, 100, "COMMIT", 2)]


def test_a_transactional_commit_a_later_plain_commit_superseded_is_shown_not_applied(tmp_path, kbatch, snapshot):
    path = _segment(tmp_path, _between_a_transaction((commit_key("g", "orders", 0), commit_value(200, T0 + 2000))))
    result = kbatch("offsets", "--group", "g", str(path), expect=0)
    assert result.out.replace(str(tmp_path), "TMP") == snapshot


def test_at_a_time_after_a_tombstone_no_offset_is_committed_and_no_reset_is_offered(tmp_path, kbatch, snapshot):
    """The offset was deleted a minute after it was committed: at a time after that the group had none (the
    consumer's auto.offset.reset decides), and no command puts back the deleted 50."""
    path = _segment(tmp_path, b"".join([
        batch(0, [(commit_key("g", "orders", 0), commit_value(50, T0))], timestamp=T0),
        batch(1, [(commit_key("g", "orders", 0), None)], timestamp=T0 + 60_000)]))
    result = kbatch("offsets", "--group", "g", "--at", "2023-11-14T23:00Z", str(path), expect=0)
    assert "--to-offset" not in result.out
    assert result.out.replace(str(tmp_path), "TMP") == snapshot
    result = kbatch("offsets", "--group", "g", "--at", str(T0 + 59_999), str(path), expect=0)
    assert "--topic orders:0 --reset-offsets --to-offset 50 --execute" in result.out


def test_damage_is_a_finding_and_the_replay_goes_on(kbatch):
    result = kbatch("offsets", str(ROOT / "fixtures/internal/damaged/__consumer_offsets-0"))
    assert result.code == 1
    assert "4 record(s) did not read" in result.out
    assert "bad-internal-record" in result.out
    assert re.search(r"t-0 +5 +1 ", result.out)


def test_where_answers_without_files(kbatch):
    result = kbatch("offsets", "--where", "polygenelubricants", "--transactional-id", "hello",
                    "--coordinator-partitions", "50")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "group polygenelubricants: __consumer_offsets-0 (of 50 partitions)",
        f"transactional id hello: __transaction_state-{99162322 % 50} (of 50 partitions)"]


def test_no_files_and_no_question_is_a_usage_error(kbatch):
    result = kbatch("offsets")
    assert result.code == 2


def test_a_hostile_group_name_reaches_neither_the_terminal_nor_the_shell_line(tmp_path, kbatch):
    group = "evil\x1b[2J$(rm -rf ~)"
    segment = batch(0, [(commit_key(group, "t", 0), commit_value(4, T0))])
    result = kbatch("offsets", "--group", group, "--at", str(T0 + 1), str(_segment(tmp_path, segment)))
    assert result.code == 0, result.err
    assert "\x1b" not in result.out
    assert "--group $'evil\\x1b[2J$(rm -rf ~)'" in result.out


# -- a real broker ------------------------------------------------------------------------------------------

@pytest.mark.real_kafka
def test_real_groups_live_where_kafkas_hash_puts_them(real_kafka, kbatch):
    """The broker runs with offsets.topic.num.partitions=3 (tests/real_kafka.py): every group with commits is
    in the __consumer_offsets partition the hash names."""
    log_dir = real_kafka.stopped
    seen = {}
    for directory in sorted(log_dir.glob("__consumer_offsets-*")):
        result = kbatch("offsets", "--format", "jsonl", str(directory))
        assert result.code == 0, result.err
        for line in result.out.splitlines():
            seen[json.loads(line)["group"]] = int(directory.name.rsplit("-", 1)[1])
    assert {"classic-group", "consumer-group"} <= set(seen)
    assert seen == {group: coordinator_partition(group, 3) for group in seen}


@pytest.mark.real_kafka
def test_a_reset_by_kafkas_own_tool_is_a_rewind_and_the_position_is_what_the_tool_describes(real_kafka, kbatch):
    directory = real_kafka.stopped / f"__consumer_offsets-{coordinator_partition('classic-group', 3)}"
    result = kbatch("offsets", "--format", "jsonl", "--group", "classic-group", str(directory))
    assert result.code == 0, result.err
    commits = [json.loads(line) for line in result.out.splitlines()]
    last = [c for c in commits if c["topic"] == "codec-gzip" and c["partition"] == 0][-1]
    assert (last["offset"], last["move"]) == (3, "rewind")
    assert last["previous_offset"] > 3
    # kafka-consumer-groups.sh --describe: CURRENT-OFFSET of codec-gzip 0
    described = re.search(r"^classic-group\s+codec-gzip\s+0\s+(\d+)", real_kafka.group_described, re.M)
    assert described and int(described[1]) == last["offset"]
    # before the reset, the group stood where its consumer last committed
    result = kbatch("offsets", "--group", "classic-group", "--at", str(real_kafka.reset_at - 1), str(directory))
    assert result.code == 0, result.err
    assert f"--topic codec-gzip:0 --reset-offsets --to-offset {last['previous_offset']} --execute" in result.out


def test_a_log_directory_is_read_for_its_offsets_partitions_only(tmp_path, kbatch):
    """A broker's log directory holds every topic's partitions: only __consumer_offsets' are the group
    coordinator's (another topic's records read as its would each be a finding on healthy bytes). A partition
    directory named on the command line is read as asked."""
    import shutil

    log_dir = tmp_path / "kafka-logs"
    shutil.copytree(ROOT / "fixtures/internal/__consumer_offsets-12", log_dir / "__consumer_offsets-12")
    (log_dir / "orders-0").mkdir()
    shutil.copy(ROOT / "fixtures/v2-none.log", log_dir / "orders-0" / "00000000000000000000.log")
    alone = kbatch("offsets", str(log_dir / "__consumer_offsets-12"))
    assert alone.code == 0, alone.err
    whole = kbatch("offsets", str(log_dir))
    assert whole.code == 0, whole.err
    assert whole.out == alone.out
    assert whole.err == "kbatch: note: read __consumer_offsets only: passed over 1 partition(s) of other topics " \
                        "(orders-0)\n"
    named = kbatch("offsets", str(log_dir / "orders-0"))
    assert named.code == 1 and "did not read" in named.out and named.err == ""
    shutil.rmtree(log_dir / "__consumer_offsets-12")
    nothing = kbatch("offsets", str(log_dir))
    assert nothing.code == 2 and nothing.out == ""
    assert nothing.err.endswith(f"kbatch: no __consumer_offsets partition in {log_dir}\n")


@pytest.mark.real_kafka
def test_a_real_brokers_log_directory_reads_clean(real_kafka, kbatch):
    """The broker's whole log directory (user topics, the other internal topics, checkpoints): what its
    __consumer_offsets partitions say, each read alone, and no finding."""
    log_dir = real_kafka.stopped
    whole = kbatch("offsets", "--format", "jsonl", str(log_dir))
    assert whole.code == 0, whole.err
    assert whole.err.startswith("kbatch: note: read __consumer_offsets only: passed over ")
    each = [kbatch("offsets", "--format", "jsonl", str(directory))
            for directory in sorted(log_dir.glob("__consumer_offsets-*"))]
    assert all(result.code == 0 for result in each)
    assert sorted(whole.out.splitlines()) == sorted(line for result in each for line in result.out.splitlines())
    assert '"type": "finding"' not in whole.out and whole.out
