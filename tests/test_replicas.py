"""kbatch replicas on hand-made copies of one partition, one corner of Kafka's truncation rule each.

The batches are tests/handmade.py's (struct and crc32c, not kbatch's encoder).  Each expected truncation
offset is worked by hand from Kafka trunk: LeaderEpochFileCache.endOffsetFor (the leader's answer),
AbstractFetcherThread.getOffsetTruncationState (the follower's step), LogLoader.load (epoch entries at or past
the log end offset dropped); the working is in each test's comment.
"""

from __future__ import annotations

import json
import os

import pytest

from kbatch.ops.replicas import advice, compare
from kbatch.partition.replicas import end_offset_for
from tests.handmade import batch, compacted, end_marker

TOPIC = "orders"


def _records(base: int, count: int, tag: str) -> list:
    return [(f"k{base + i}".encode(), f"{tag}{base + i}".encode()) for i in range(count)]


def make_copy(root, broker: str, batches: list[bytes], *, epochs: list[tuple[int, int]] | None = None,
              high_watermark: int | None = None, recovery_point: int | None = None,
              epoch_file_text: str | None = None, segments: dict[int, list[bytes]] | None = None,
              indexed: bool = False, clean_shutdown: bool = False, log_start: int | None = None,
              cleaner: int | None = None) -> str:
    """A broker's log directory holding one partition: its segment (or ``segments``, by base offset),
    leader-epoch-checkpoint and checkpoints (``log_start``: log-start-offset-checkpoint; ``cleaner``:
    cleaner-offset-checkpoint); ``indexed``: an (empty) offset index beside each segment, without which Kafka
    recovers the segment on opening it; ``clean_shutdown``: the marker of a clean shutdown."""
    log_dir = os.path.join(str(root), broker)
    directory = os.path.join(log_dir, f"{TOPIC}-0")
    os.makedirs(directory)
    for base, held in (segments or {0: batches}).items():
        with open(os.path.join(directory, f"{base:020d}.log"), "wb") as out:
            out.write(b"".join(held))
        if indexed:
            open(os.path.join(directory, f"{base:020d}.index"), "wb").close()
    if clean_shutdown:
        open(os.path.join(log_dir, ".kafka_cleanshutdown"), "wb").close()
    if epoch_file_text is None and epochs is not None:
        epoch_file_text = f"0\n{len(epochs)}\n" + "".join(f"{epoch} {start}\n" for epoch, start in epochs)
    if epoch_file_text is not None:
        with open(os.path.join(directory, "leader-epoch-checkpoint"), "w") as out:
            out.write(epoch_file_text)
    for name, offset in (("replication-offset-checkpoint", high_watermark),
                         ("recovery-point-offset-checkpoint", recovery_point),
                         ("log-start-offset-checkpoint", log_start), ("cleaner-offset-checkpoint", cleaner)):
        if offset is not None:
            with open(os.path.join(log_dir, name), "w") as out:
                out.write(f"0\n1\n{TOPIC} 0 {offset}\n")
    return log_dir


def test_end_offset_for_is_kafkas():
    # LeaderEpochFileCache.endOffsetFor over epochs 0@0, 2@4, 4@8 with log end 10: the latest epoch answers the
    # log end; one between answers (floor epoch, next epoch's start); one below all (asked, first start); one
    # above all the UNDEFINED pair.
    epochs = [(0, 0), (2, 4), (4, 8)]
    assert end_offset_for(epochs, 4, 10) == (4, 10)
    assert end_offset_for(epochs, 3, 10) == (2, 8)
    assert end_offset_for(epochs, 1, 10) == (0, 4)
    assert end_offset_for([(2, 4), (4, 8)], 1, 10) == (1, 4)
    assert end_offset_for(epochs, 5, 10) == (-1, -1)
    assert end_offset_for(epochs, -1, 10) == (-1, -1)


def test_unclean_election_truncates_old_leader(tmp_path, kbatch):
    # broker-1 led epoch 1 alone (acks=1) and wrote 3..5; broker-2, stale at 3, was elected uncleanly (epoch 2)
    # and wrote its own 3..4.  broker-1 asks for epoch 1: the leader's latest is 2, so it answers the floor
    # epoch 0 and epoch 2's start, 3; broker-1's own end for epoch 0 is 3 (its epoch 1 starts there): min = 3.
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common, batch(3, _records(3, 3, "old"), leader_epoch=1)],
                    epochs=[(0, 0), (1, 3)], high_watermark=3)
    two = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 2, "new"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 3)], high_watermark=3)
    report = compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")])
    first, second = report.copies
    assert report.leader == 1
    assert (first.log_end_offset, first.latest_epoch, first.truncate_to, first.diverges_at) == (6, 1, 3, 3)
    assert (second.log_end_offset, second.latest_epoch, second.truncate_to, second.diverges_at) == (5, 2, 5, None)
    assert "electing broker-2 loses 3 records (3..5), 0 of them below a high watermark" in advice(report)
    result = kbatch("replicas", str(one), str(two))
    assert result.code == 1


def test_the_copy_that_loses_nothing_acknowledged_is_not_said_to_lose_the_fewest_records_where_it_does_not(tmp_path):
    # broker-1 wrote 3..12 in epoch 1, none acknowledged (high watermark 3); broker-2, elected in epoch 2, wrote 3..4
    # and acknowledged 3 (high watermark 4): electing broker-2 loses 10 records, none acknowledged; broker-1 2, one
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common, batch(3, _records(3, 10, "old"), leader_epoch=1)],
                    epochs=[(0, 0), (1, 3)], high_watermark=3)
    two = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 2, "new"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 3)], high_watermark=4)
    said = advice(compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")]))
    assert "electing broker-1 loses 2 records (3..4), 1 of them below a high watermark" in said
    assert "electing broker-2 loses 10 records (3..12), 0 of them below a high watermark" in said
    assert said[-1] == ("electing broker-2 loses no record below a high watermark (the fewest records of the copies "
                        "that lose none)")


def test_one_record_lost_is_said_in_the_singular(tmp_path):
    common = batch(0, _records(0, 2, "v"), leader_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common, batch(2, _records(2, 1, "w"), leader_epoch=0)],
                    epochs=[(0, 0)], high_watermark=3)
    two = make_copy(tmp_path, "broker-2", [common], epochs=[(0, 0)], high_watermark=2)
    lines = advice(compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")]))
    assert "electing broker-2 loses 1 record (2), 1 of them below a high watermark" in lines
    assert "electing broker-1 loses nothing another copy holds" in lines


def test_losses_are_counted_in_records_a_consumer_is_given_not_in_offsets_spanned(tmp_path, kbatch):
    # broker-1 led epoch 1 and wrote 3..12, its cleaner keeping 5 and 12 of them (the batch still spans 3..12), then
    # a transaction's commit marker at 13; broker-2, elected uncleanly in epoch 2, wrote 3..4 and acknowledged them
    # (high watermark 5).  Electing broker-2 loses 2 records, and a control record no consumer is given; not 11.
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    kept = [(5, b"k5", b"old5"), (12, b"k12", b"old12")]
    marker = batch(13, [end_marker("COMMIT", 0)], control=True, transactional=True, producer_id=9, producer_epoch=0,
                   leader_epoch=1)
    one = make_copy(tmp_path, "broker-1", [common, compacted(3, 12, kept, leader_epoch=1), marker],
                    epochs=[(0, 0), (1, 3)], high_watermark=3)
    two = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 2, "new"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 3)], high_watermark=5)
    said = advice(compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")]))
    assert "electing broker-2 loses 2 records (5, 12), 0 of them below a high watermark; and 1 control record (13), " \
        "given to no consumer" in said
    assert "electing broker-1 loses 2 records (3..4), 2 of them below a high watermark" in said
    assert said[-1] == "electing broker-2 loses no record below a high watermark and the fewest records"
    assert kbatch("replicas", one, two).code == 1


def test_a_lost_control_record_alone_is_no_record_a_consumer_is_given(tmp_path, kbatch):
    common = batch(0, _records(0, 3, "v"), leader_epoch=0, transactional=True, producer_id=9, producer_epoch=0,
                   base_sequence=0)
    marker = batch(3, [end_marker("COMMIT", 0)], control=True, transactional=True, producer_id=9, producer_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common, marker], epochs=[(0, 0)], high_watermark=4)
    two = make_copy(tmp_path, "broker-2", [common], epochs=[(0, 0)], high_watermark=3)
    said = advice(compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")]))
    assert "electing broker-2 loses no record a consumer is given, only 1 control record (3), given to no consumer" \
        in said
    assert "electing broker-1 loses nothing another copy holds" in said
    assert kbatch("replicas", one, two).code == 1


def test_epoch_the_leader_never_had_takes_two_rounds(tmp_path):
    # Epochs with gaps: leader 0@0, 2@4, 4@8 (end 10); follower 0@0, 1@2, 3@6 (end 7): epochs 1 and 3 the
    # leader never had.  Round 1: asks 3, the leader answers (2, 8); the follower's own end for 2 is (1, 6):
    # another epoch, so truncate to min(6, 7) = 6 and ask again (truncateFromEnd leaves 0@0, 1@2).  Round 2:
    # asks 1, the leader answers (0, 4); the follower's own for 0 is (0, 2): truncate to min(2, 4, 6) = 2.
    common = batch(0, _records(0, 2, "v"), leader_epoch=0)
    leader = make_copy(tmp_path, "broker-1", [common, batch(2, _records(2, 2, "a"), leader_epoch=0),
                                              batch(4, _records(4, 4, "a"), leader_epoch=2),
                                              batch(8, _records(8, 2, "a"), leader_epoch=4)],
                       epochs=[(0, 0), (2, 4), (4, 8)])
    follower = make_copy(tmp_path, "broker-2", [common, batch(2, _records(2, 4, "b"), leader_epoch=1),
                                                batch(6, _records(6, 1, "b"), leader_epoch=3)],
                         epochs=[(0, 0), (1, 2), (3, 6)])
    report = compare([os.path.join(leader, "orders-0"), os.path.join(follower, "orders-0")])
    copy = report.copies[1]
    assert copy.truncate_to == 2
    assert len(copy.rounds) == 2 and "ask again" in copy.rounds[0]
    assert copy.diverges_at == 2


def test_empty_follower_truncates_to_its_high_watermark(tmp_path):
    # A follower with no epoch (AbstractFetcherThread: truncateToHighWatermark) and an empty log: 0.  Its log starts
    # at its one (empty) segment's base offset, 0 (LogLoader.load).
    leader = make_copy(tmp_path, "broker-1", [batch(0, _records(0, 3, "v"), leader_epoch=0)], epochs=[(0, 0)],
                       high_watermark=3)
    empty = make_copy(tmp_path, "broker-2", [], high_watermark=0)
    report = compare([os.path.join(leader, "orders-0"), os.path.join(empty, "orders-0")])
    copy = report.copies[1]
    assert (copy.log_start_offset, copy.log_end_offset, copy.latest_epoch, copy.truncate_to, copy.diverges_at) == \
        (0, 0, None, 0, None)
    assert "electing broker-2 loses 3 records (0..2), 3 of them below a high watermark" in advice(report)


def _stale_follower(tmp_path, **leader_files) -> tuple[str, str]:
    """broker-1 leads, its epochs 0@0 and 1@8 in its file, its log (20 records, epoch 1) in a segment at 10 (retention
    deleted those below); broker-2, down a long time, holds 0..4 of epoch 0."""
    one = make_copy(tmp_path, "broker-1", [], segments={10: [batch(10, _records(10, 10, "a"), leader_epoch=1)]},
                    epochs=[(0, 0), (1, 8)], high_watermark=20, **leader_files)
    two = make_copy(tmp_path, "broker-2", [batch(0, _records(0, 5, "a"), leader_epoch=0)], epochs=[(0, 0)],
                    high_watermark=5)
    return one, two


def test_a_follower_ending_below_the_leaders_log_start_is_truncated_whole_and_loses_nothing_to_an_election(
        tmp_path, kbatch):
    # broker-1's log-start-offset-checkpoint says 10: LogLoader.load truncates its epoch cache from the start at 10,
    # and truncateFromStart rewrites the surviving entry 1@8 to 1@10.  broker-2 asks for epoch 0: endOffsetFor
    # answers (0, 10), the start of the first epoch above; broker-2's own end for epoch 0 is its log end 5: truncate to
    # min(5, 10, 5) = 5.  Its fetch at 5 lies below the leader's log start 10: OFFSET_OUT_OF_RANGE, and
    # fetchOffsetAndTruncate truncates it whole and starts it at 10.  Its 0..4 retention deleted from broker-1: not
    # lost by electing broker-1, and no divergence.
    one, two = _stale_follower(tmp_path, log_start=10)
    report = compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")])
    leader, follower = report.copies
    assert (report.leader, leader.log_start_offset, leader.epochs) == (0, 10, [(1, 10)])
    assert (follower.truncate_to, follower.truncated_fully, follower.diverges_at) == (10, True, None)
    assert follower.rounds == [
        "asks for epoch 0, leader answers epoch 0 ends at 10: truncate to 5",
        "fetches from 5, below the leader's log start offset 10 (out of range): truncated whole, starts at 10"]
    assert [(each.base_offset, each.holders) for each in report.divergences] == [(10, [0])]   # broker-2 is behind
    said = advice(report)
    assert "electing broker-1 loses nothing another copy holds" in said
    assert "electing broker-2 loses 10 records (10..19), 10 of them below a high watermark" in said
    result = kbatch("replicas", "--format", "jsonl", one, two, expect=1)   # (the copies' ends differ)
    replicas = [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "replica"]
    assert [(r["log_start_offset"], r["truncate_to"], r["truncated_fully"], r["diverges_at"]) for r in replicas] == \
        [(10, 20, False, None), (0, 10, True, None)]


def test_without_a_log_start_checkpoint_the_epoch_cache_is_not_truncated_from_the_start(tmp_path):
    # No log-start-offset-checkpoint: LogManager.loadLogs gives 0, LogLoader.load truncates the epoch cache from the
    # start at 0 (nothing), and the log start is the first segment's base offset, 10 (max(0, 10)).  The leader
    # answers epoch 0 ends at 8; the follower truncates to 5, below the log start 10: truncated whole all the same.
    one, two = _stale_follower(tmp_path)
    report = compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")])
    leader, follower = report.copies
    assert (leader.log_start_offset, leader.epochs) == (10, [(0, 0), (1, 8)])
    assert (follower.truncate_to, follower.truncated_fully) == (10, True)
    assert follower.rounds[0] == "asks for epoch 0, leader answers epoch 0 ends at 8: truncate to 5"


def test_a_follower_fetching_past_the_leaders_end_is_truncated_to_it(tmp_path):
    # broker-2 has no epoch (no epoch file, no log recovery to assign one): truncateToHighWatermark leaves it at 5; its
    # fetch at 5 lies past the leader's log end 3, OFFSET_OUT_OF_RANGE, and fetchOffsetAndTruncate truncates it to the
    # leader's end (leaderEndOffset < replicaEndOffset).
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common], epochs=[(0, 0)], high_watermark=3)
    two = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 2, "w"))], high_watermark=5, indexed=True,
                    clean_shutdown=True)
    follower = compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")]).copies[1]
    assert (follower.truncate_to, follower.truncated_fully) == (3, False)
    assert follower.rounds == ["no leader epoch: truncate to the high watermark 5", "fetches from 5, past the leader's "
                               "log end offset 3 (out of range): truncate to 3"]


def test_the_log_start_is_the_checkpoint_above_the_first_segment_else_its_base_offset(tmp_path):
    # DeleteRecords moved broker-1's log start to 3 inside its segment at 0 (the checkpoint says 3): its log starts at
    # 3; broker-2's checkpoint (0) lies below its first segment's base offset, 2 (retention): its log starts at 2.
    # Neither copy is missing what the other holds where both logs are (2 and up): no divergence.
    one = make_copy(tmp_path, "broker-1", [batch(0, _records(0, 2, "v")), batch(2, _records(2, 1, "v")),
                                           batch(3, _records(3, 2, "v"))], epochs=[(0, 0)], log_start=3)
    two = make_copy(tmp_path, "broker-2", [], segments={2: [batch(2, _records(2, 1, "v")), batch(3, _records(3, 2, "v"))]},
                    epochs=[(0, 0)], log_start=0)
    report = compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")])
    assert [copy.log_start_offset for copy in report.copies] == [3, 2]
    assert report.divergences == []


def test_epoch_file_behind_its_batches(tmp_path):
    # broker-2's leader-epoch-checkpoint says 0@0 only, its batches carry epoch 1 from 3, past its recovery
    # point 0: LogSegment.recover assigns epoch 1 at 3 on load, and the disagreement is told.  Then as in the
    # unclean election: asks 1, the leader (0@0, 2@3) answers (0, 3); its own end for 0 is 3: truncate to 3.
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    leader = make_copy(tmp_path, "broker-1", [common, batch(3, _records(3, 2, "a"), leader_epoch=2)],
                       epochs=[(0, 0), (2, 3)])
    behind = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 3, "b"), leader_epoch=1)],
                       epochs=[(0, 0)], recovery_point=0)
    report = compare([os.path.join(leader, "orders-0"), os.path.join(behind, "orders-0")])
    copy = report.copies[1]
    assert copy.epochs == [(0, 0), (1, 3)]
    assert copy.truncate_to == 3
    assert ("broker-2: leader-epoch-checkpoint has no entry for an epoch of the batches: expected an entry '1 3' "
            f"(the first batch of epoch 1, 00000000000000000000.log pos {len(common)})") in advice(report)


def test_an_epoch_whose_first_batches_the_cleaner_removed_is_no_disagreement(tmp_path, kbatch):
    """The log cleaner removes whole batches and never touches leader-epoch-checkpoint: epoch 1 began at 3 (its
    entry says so) and its first batch left is at 5. verify-crc --deep's rule (crosscheck.LeaderEpochs) lets an entry
    lie anywhere above the epochs before it up to that batch; a follower merely behind is no reason to say more."""
    cleaned = [batch(0, _records(0, 3, "v"), leader_epoch=0), batch(5, _records(5, 2, "v"), leader_epoch=1)]
    leader = make_copy(tmp_path, "broker-1", [*cleaned, batch(7, _records(7, 1, "v"), leader_epoch=1)],
                       epochs=[(0, 0), (1, 3)], clean_shutdown=True, indexed=True)
    behind = make_copy(tmp_path, "broker-2", cleaned, epochs=[(0, 0), (1, 3)], clean_shutdown=True, indexed=True)
    report = compare([os.path.join(leader, "orders-0"), os.path.join(behind, "orders-0")])
    assert [copy.epoch_file_findings for copy in report.copies] == [[], []]
    assert not [line for line in advice(report) if "leader-epoch-checkpoint" in line]
    for copy in (leader, behind):
        checked = kbatch("verify-crc", "--deep", "--format", "jsonl", os.path.join(copy, "orders-0"))
        assert checked.code == 0, checked.out


def test_copies_that_agree_but_for_a_start_offset_their_epoch_file_names_are_told(tmp_path, kbatch):
    """Every copy holds the same batches, and broker-2's file says epoch 1 began at 1, inside epoch 0's batch
    (0..2): a follower asking broker-2 for epoch 0's end would be told 1 and truncate there."""
    common = [batch(0, _records(0, 3, "v"), leader_epoch=0), batch(3, _records(3, 2, "v"), leader_epoch=1)]
    dirs = [make_copy(tmp_path, "broker-1", common, epochs=[(0, 0), (1, 3)], clean_shutdown=True, indexed=True),
            make_copy(tmp_path, "broker-2", common, epochs=[(0, 0), (1, 1)], clean_shutdown=True, indexed=True)]
    report = compare([os.path.join(each, "orders-0") for each in dirs])
    assert report.agree
    assert advice(report) == [
        "every copy holds the same batches",
        "broker-2: leader-epoch-checkpoint pos 8: start_offset 1, expected above 2 (the epochs before it) and at "
        f"most 3 (the first batch of epoch 1 left, 00000000000000000000.log pos {len(common[0])})"]
    result = kbatch("replicas", *dirs)
    assert result.code == 1, result.out
    assert "broker-2: leader-epoch-checkpoint pos 8: start_offset 1" in result.out
    checked = kbatch("verify-crc", "--deep", "--format", "jsonl", os.path.join(dirs[1], "orders-0"))
    assert checked.code == 1 and '"epoch-mismatch"' in checked.out
    # A program reading --format jsonl is told the same, as verify-crc --deep's findings
    lines = kbatch("replicas", "--format", "jsonl", *dirs, expect=1).out.splitlines()
    told = [json.loads(line)["epoch_checkpoint_findings"] for line in lines]
    assert told[0] == [] and [(each["code"], each["pos"], each["actual"]) for each in told[1]] == \
        [("epoch-mismatch", 8, "1")]


def test_a_damaged_epoch_file_is_told_where(tmp_path, kbatch):
    """A leader-epoch-checkpoint line that does not read (CheckpointFile.read refuses the file): the copies agree,
    and both the text and the jsonl say at which file position the file is damaged."""
    common = [batch(0, _records(0, 3, "v"), leader_epoch=0)]
    dirs = [make_copy(tmp_path, f"broker-{n}", common, epochs=[(0, 0)], clean_shutdown=True, indexed=True)
            for n in (1, 2)]
    with open(os.path.join(dirs[1], "orders-0", "leader-epoch-checkpoint"), "w") as out:
        out.write("0\n1\n0 zero\n")
    result = kbatch("replicas", *dirs, expect=1)
    assert ("broker-2: leader-epoch-checkpoint is damaged at pos 4 (bad-checkpoint, entry: expected epoch "
            "start_offset, found '0 zero')") in result.out
    lines = kbatch("replicas", "--format", "jsonl", *dirs, expect=1).out.splitlines()
    told = [json.loads(line)["epoch_checkpoint_findings"] for line in lines]
    # (and epoch 0, of the batches, has no entry it can read)
    assert told[0] == [] and [(each["code"], each["pos"]) for each in told[1]] == [("bad-checkpoint", 4),
                                                                                   ("epoch-missing", 0)]


def test_epoch_entries_past_the_log_end_are_dropped(tmp_path):
    # LogLoader.load: leaderEpochCache.truncateFromEndAsyncFlush(nextOffset) drops 5@3, at the log end 3.
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    copy_dir = make_copy(tmp_path, "broker-1", [common], epochs=[(0, 0), (5, 3)])
    other = make_copy(tmp_path, "broker-2", [common], epochs=[(0, 0)])
    report = compare([os.path.join(copy_dir, "orders-0"), os.path.join(other, "orders-0")])
    assert report.copies[0].epochs == [(0, 0)]
    assert report.agree


def test_equal_copies_agree(tmp_path, kbatch):
    common = [batch(0, _records(0, 3, "v"), leader_epoch=0), batch(3, _records(3, 1, "v"), leader_epoch=1)]
    dirs = [make_copy(tmp_path, f"broker-{n}", common, epochs=[(0, 0), (1, 3)], high_watermark=4) for n in (1, 2, 3)]
    result = kbatch("replicas", *map(str, dirs))
    assert result.code == 0, result.out
    assert "every copy holds the same batches: nothing to repair" in result.out


def test_damaged_batch_with_a_good_copy_elsewhere(tmp_path, kbatch):
    # (its broker shut down cleanly: Kafka's log recovery leaves the damaged batch, tests/test_replicas_recovery.py)
    good = batch(0, _records(0, 3, "v"), leader_epoch=0)
    bad = bytearray(good)
    bad[-1] ^= 0xFF   # a byte under the CRC
    one = make_copy(tmp_path, "broker-1", [bytes(bad)], epochs=[(0, 0)], indexed=True, clean_shutdown=True)
    two = make_copy(tmp_path, "broker-2", [good], epochs=[(0, 0)])
    report = compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")])
    assert "a good copy of the damaged batch at offset 0 of broker-1 is on broker-2" in advice(report)
    assert kbatch("replicas", str(one), str(two)).code == 1


def test_lost_producer_sequences(tmp_path):
    common = batch(0, _records(0, 2, "v"), leader_epoch=0, producer_id=7, producer_epoch=0, base_sequence=0)
    one = make_copy(tmp_path, "broker-1", [common, batch(2, _records(2, 3, "x"), leader_epoch=1, producer_id=7,
                                                         producer_epoch=0, base_sequence=2)],
                    epochs=[(0, 0), (1, 2)])
    two = make_copy(tmp_path, "broker-2", [common, batch(2, _records(2, 1, "y"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 2)])
    report = compare([os.path.join(one, "orders-0"), os.path.join(two, "orders-0")])
    assert "broker-1 follows broker-2: producer 7 loses sequences 2..4" in advice(report)


def test_jsonl_objects(tmp_path, kbatch):
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common, batch(3, _records(3, 2, "old"), leader_epoch=1)],
                    epochs=[(0, 0), (1, 3)], high_watermark=4)
    # (broker-2's epoch 2 begins with its batch at 3: an entry at its log end would be dropped on load)
    two = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 1, "new"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 3)], high_watermark=3)
    result = kbatch("replicas", "--format", "jsonl", str(one), str(two))
    assert result.code == 1
    lines = [json.loads(line) for line in result.out.splitlines()]
    replicas = [line for line in lines if line["type"] == "replica"]
    assert [(r["log_end_offset"], r["high_watermark"], r["latest_epoch"], r["diverges_at"], r["truncate_to"])
            for r in replicas] == [(5, 4, 1, 3, 3), (4, 3, 2, None, 4)]
    # below the high watermark of a copy holding the record: broker-1's 4 covers its own 3, broker-2's 3 not its 3
    records = [line for line in lines if line["type"] == "record"]
    assert [(r["offset"], r["below_high_watermark"], r["value"], len(r["replicas"])) for r in records] == \
        [(3, True, {"utf8": "old3"}, 1), (4, False, {"utf8": "old4"}, 1), (3, False, {"utf8": "new3"}, 1)]


def test_table_at_80_columns(tmp_path, text_snapshot, monkeypatch, kbatch):
    monkeypatch.setenv("COLUMNS", "80")
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common, batch(3, _records(3, 3, "old"), leader_epoch=1)],
                    epochs=[(0, 0), (1, 3)], high_watermark=3, recovery_point=3)
    two = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 2, "new"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 3)], high_watermark=3, recovery_point=5)
    three = make_copy(tmp_path, "broker-3", [common], epochs=[(0, 0)], high_watermark=3, recovery_point=3)
    result = kbatch("replicas", str(one), str(two), str(three))
    assert result.code == 1
    assert max(map(len, result.out.splitlines())) <= 80
    assert result.out == text_snapshot


@pytest.mark.parametrize("setup, message", [
    ("file", "not a directory"),
    ("empty", "neither a partition directory"),
    ("one", "no partition is present in two or more"),
])
def test_usage_errors(tmp_path, setup, message, kbatch):
    a = make_copy(tmp_path, "broker-1", [batch(0, _records(0, 1, "v"))], epochs=[(0, 0)])
    if setup == "file":
        other = tmp_path / "plain"
        other.write_text("x")
    elif setup == "empty":
        other = tmp_path / "nothing"
        other.mkdir()
    else:
        other = tmp_path / "broker-2"
        (other / "payments-0").mkdir(parents=True)
    result = kbatch("replicas", str(a), str(other))
    assert result.code == 2
    assert message in result.err


def test_different_topic_ids_and_damaged_epoch_file(tmp_path, kbatch):
    common = batch(0, _records(0, 1, "v"))
    one = make_copy(tmp_path, "broker-1", [common], epoch_file_text="0\n1\nnot numbers\n")
    two = make_copy(tmp_path, "broker-2", [common], epochs=[(0, 0)])
    for log_dir, topic_id in ((one, "AAAAAAAAAAAAAAAAAAAAAQ"), (two, "AAAAAAAAAAAAAAAAAAAAAg")):
        with open(os.path.join(log_dir, "orders-0", "partition.metadata"), "w") as out:
            out.write(f"version: 0\ntopic_id: {topic_id}\n")
    result = kbatch("replicas", str(one), str(two))
    assert result.code == 1
    assert "copies of different topics" in result.out
    assert "leader-epoch-checkpoint is damaged" in result.out


@pytest.mark.parametrize("make", [os.mkdir, os.mkfifo], ids=["directory", "fifo"])
def test_unreadable_segment_is_an_io_error(tmp_path, kbatch, make):
    """A directory or a FIFO where a segment would be: an error, said before anything is opened (a FIFO opened
    would wait for a writer forever)."""
    common = batch(0, _records(0, 1, "v"))
    one = make_copy(tmp_path, "broker-1", [common], epochs=[(0, 0)])
    two = make_copy(tmp_path, "broker-2", [common], epochs=[(0, 0)])
    make(os.path.join(two, "orders-0", "00000000000000000005.log"))
    result = kbatch("replicas", str(one), str(two))
    assert result.code == 2
    what = "a directory" if make is os.mkdir else "a FIFO"
    assert result.err == (f"kbatch: error: {two}/orders-0/00000000000000000005.log: {what}, not a regular file: "
                          "passed over unopened\n")


@pytest.mark.parametrize("text", ["0\n1\nnot numbers\n", "\0" * 64, "\xff\xfe garbage"])
def test_a_damaged_epoch_file_is_said_and_exits_1_when_the_copies_agree(tmp_path, kbatch, text):
    """Kafka's CheckpointFile refuses such a file (the broker takes the log directory offline): the copies'
    batches agreeing is no reason to keep quiet about it."""
    common = [batch(0, _records(0, 3, "v"), leader_epoch=0)]
    one = make_copy(tmp_path, "broker-1", common, epoch_file_text=text, high_watermark=3)
    two = make_copy(tmp_path, "broker-2", common, epochs=[(0, 0)], high_watermark=3)
    result = kbatch("replicas", one, two, expect=1)
    assert "broker-1: leader-epoch-checkpoint is damaged" in result.out
    assert "nothing to repair" not in result.out


def _diverged_copies(tmp_path, broker_1_high_watermark: str) -> tuple[str, str]:
    """broker-1 holds 3..5 of epoch 1 (its replication-offset-checkpoint entry ``orders 0 <text>``), broker-2 3..4
    of epoch 2 and high watermark 5: electing broker-2 loses broker-1's three."""
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    one = make_copy(tmp_path, "broker-1", [common, batch(3, _records(3, 3, "old"), leader_epoch=1)],
                    epochs=[(0, 0), (1, 3)])
    with open(os.path.join(one, "replication-offset-checkpoint"), "w") as out:
        out.write(f"0\n1\n{TOPIC} 0 {broker_1_high_watermark}\n")
    two = make_copy(tmp_path, "broker-2", [common, batch(3, _records(3, 2, "new"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 3)], high_watermark=5)
    return one, two


def test_a_damaged_replication_offset_checkpoint_leaves_the_high_watermark_unknown(tmp_path, kbatch):
    # read, broker-1's 6 covers its 3..5: electing broker-2 loses 3 acknowledged records, broker-1 2
    one, two = _diverged_copies(tmp_path, "6")
    result = kbatch("replicas", str(one), str(two))
    assert result.code == 1
    assert "electing broker-2 loses 3 records (3..5), 3 of them below a high watermark" in result.out
    assert "broker-1 holds the most acknowledged data" in result.out
    # "6" with a letter O for the 6's place: CheckpointFile.read throws; never "no high watermark"
    (tmp_path / "damaged").mkdir()
    one, two = _diverged_copies(tmp_path / "damaged", "O")
    result = kbatch("replicas", str(one), str(two))
    assert result.code == 1
    lines = [" ".join(line.split()) for line in result.out.splitlines()]
    assert "broker-1 0 6 ? - 1 3 3" in lines
    assert "broker-1: replication-offset-checkpoint is damaged at pos 4 (bad-checkpoint, entry: expected topic " \
           "partition offset, found 'orders 0 O')" in lines
    assert "electing broker-2 loses 3 records (3..5), 0 to 3 of them below a high watermark (the high watermark " \
           "of broker-1 cannot be read)" in lines
    assert "which copy holds the most acknowledged data cannot be told: the high watermark of broker-1 cannot " \
           "be read" in lines
    assert not any("loses no record below a high watermark" in line for line in lines)


def test_a_damaged_offset_checkpoint_is_in_jsonl_and_exits_1_when_the_copies_agree(tmp_path, kbatch):
    common = [batch(0, _records(0, 3, "v"), leader_epoch=0)]
    one = make_copy(tmp_path, "broker-1", common, epochs=[(0, 0)], high_watermark=3)
    two = make_copy(tmp_path, "broker-2", common, epochs=[(0, 0)], high_watermark=3)
    with open(os.path.join(two, "recovery-point-offset-checkpoint"), "w") as out:
        out.write(f"0\n2\n{TOPIC} 0 3\n")   # a count the entries do not match
    result = kbatch("replicas", "--format", "jsonl", str(one), str(two))
    assert result.code == 1
    replicas = [json.loads(line) for line in result.out.splitlines()]
    assert [r["recovery_point_offset_checkpoint_findings"] for r in replicas] == [[], [{
        "code": "bad-checkpoint", "severity": "error", "entry_pos": 2, "pos": 2, "size": 2, "inner_pos": None,
        "field": "entry_count", "expected": "1 (the entry lines that follow)", "actual": "2"}]]
    assert [r["replication_offset_checkpoint_findings"] for r in replicas] == [[], []]
    table = kbatch("replicas", str(one), str(two))
    assert table.code == 1
    assert "broker-2: Kafka cannot read recovery-point-offset-checkpoint (CheckpointFile.read throws) and takes " \
           "the log directory offline: Kafka's log recovery takes the recovery point as 0 (LogManager.loadLogs)" \
        in " ".join(table.out.split())


def test_a_record_below_an_unread_high_watermark_is_not_known_to_be(tmp_path, kbatch):
    one, two = _diverged_copies(tmp_path, "1x5")
    result = kbatch("replicas", "--format", "jsonl", str(one), str(two))
    assert result.code == 1
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line["high_watermark"] for line in lines if line["type"] == "replica"] == [None, 5]
    # broker-1's 3..5 are held by it alone, its high watermark unread: not known; broker-2's 3..4 lie below its 5
    assert [(r["offset"], r["below_high_watermark"]) for r in lines if r["type"] == "record"] == \
        [(3, None), (4, None), (5, None), (3, True), (4, True)]
