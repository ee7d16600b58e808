"""kbatch replicas takes each copy as its broker holds it once started, after Kafka's own log recovery.

Hand-made copies (tests/handmade.py's bytes, not kbatch's encoder).  Each expectation is worked by hand from Kafka
trunk: LogManager.loadLogs (the .kafka_cleanshutdown marker: no recovery), LogLoader.loadSegmentFiles (a segment
whose offset index is missing is recovered as it is opened), LogLoader.recoverLog (segments.values(recoveryPoint,
MAX): the segment holding the recovery point and all after it; the first one cut deletes the rest),
LogSegment.recover (cut at the first batch ensureValid fails; epochs assigned above the latest),
LogLoader.load (leaderEpochCache.truncateFromEnd at the new log end); the working is in each test's comment.
"""

from __future__ import annotations

import json
import os
import struct

import pytest

from kbatch.ops.replicas import advice, compare
from tests.handmade import batch

from .test_output_schema import LINE
from .test_replicas import _records, make_copy

EPOCHS = [(0, 0), (1, 3), (2, 6)]
COMMON = batch(0, _records(0, 3, "v"), leader_epoch=0)          # offsets 0..2, epoch 0
GOOD = batch(3, _records(3, 3, "v"), leader_epoch=1)            # offsets 3..5, epoch 1
BAD = GOOD[:-1] + bytes([GOOD[-1] ^ 0x01])                      # the same, a byte under its CRC flipped
TAIL = batch(6, _records(6, 2, "v"), leader_epoch=2)            # offsets 6..7, epoch 2
BAD_POS = len(COMMON)                                           # where the damaged batch begins in segment 0


def _pair(root, **damaged_copy) -> tuple[str, str]:
    """broker-1 with the damaged batch at 3 in segment 0 (0..5) and segment 6 (6..7); broker-2 intact, the
    same batches.  Both have every offset index, high watermark 8 and the epoch file 0@0 1@3 2@6."""
    layout = dict(epochs=EPOCHS, high_watermark=8, indexed=True) | damaged_copy
    one = make_copy(root, "broker-1", [], segments={0: [COMMON, BAD], 6: [TAIL]}, **layout)
    two = make_copy(root, "broker-2", [], segments={0: [COMMON, GOOD], 6: [TAIL]}, epochs=EPOCHS,
                    high_watermark=8, indexed=True)
    return one, two


def _compare(*log_dirs):
    return compare([os.path.join(log_dir, "orders-0") for log_dir in log_dirs])


def _jsonl(kbatch, *log_dirs) -> list[dict]:
    """The replica lines, each held to the JSON Schema's line."""
    result = kbatch("replicas", "--format", "jsonl", *log_dirs, expect=1)
    lines = list(map(json.loads, result.out.splitlines()))
    for line in lines:
        LINE.validate(line)
    return [line for line in lines if line["type"] == "replica"]


def test_damage_past_the_recovery_point_cuts_the_log(tmp_path, kbatch, monkeypatch):
    # No clean shutdown; recovery point 3 lies in segment 0, so recoverLog recovers segments 0 and 6.
    # LogSegment.recover: COMMON passes (its epoch 0 is not above the file's latest, 2: nothing assigned), BAD
    # fails ensureValid: segment 0 is cut at position len(COMMON), readNextOffset 3, and segment 6 deleted.
    # truncateFromEnd(3) leaves 0@0.  broker-2 (epoch 2) leads; broker-1 asks for epoch 0, the leader answers
    # (0, 3), its own end for 0 is 3: truncate to 3.  Electing broker-1 loses 3..7.
    one, two = _pair(tmp_path, recovery_point=3)
    report = _compare(one, two)
    first, second = report.copies
    assert report.leader == 1
    assert (first.log_end_offset, first.epochs, first.latest_epoch, first.truncate_to, first.diverges_at) == \
        (3, [(0, 0)], 0, 3, None)
    assert first.rounds == ["asks for epoch 0, leader answers epoch 0 ends at 3: truncate to 3"]
    assert (second.log_end_offset, second.latest_epoch, second.recovery) == (8, 2, None)
    cut = first.recovery
    assert (os.path.basename(cut.segment), cut.pos, cut.base_offset, cut.truncate_to, cut.dropped,
            cut.later_segments_dropped) == ("00000000000000000000.log", BAD_POS, 3, 3, (3, 7), True)
    assert first.kept_damage is None
    lines = advice(report)
    assert lines[0] == (
        "broker-1: Kafka's log recovery on start (no clean shutdown; the segment holds or follows the recovery "
        f"point 3) truncates it at offset 3: the damaged batch at offset 3 (position {BAD_POS} of "
        "00000000000000000000.log: its CRC fails) fails validation, and it and all after it (offsets 3..7) are "
        "dropped")
    assert "electing broker-1 loses 5 records (3..7), 5 of them below a high watermark" in lines
    assert not any("good copy" in line for line in lines)   # broker-1 holds no damaged batch once recovered

    replica = _jsonl(kbatch, one, two)[0]
    assert (replica["log_end_offset"], replica["latest_epoch"], replica["truncate_to"], replica["clean_shutdown"],
            replica["kept_damage"]) == (3, 0, 3, False, None)
    assert replica["recovery"] == {
        "segment": cut.segment, "pos": BAD_POS, "base_offset": 3, "why": "its CRC fails", "truncate_to": 3,
        "dropped_first": 3, "dropped_last": 7, "later_segments_dropped": True}
    monkeypatch.setenv("COLUMNS", "400")
    table = kbatch("replicas", one, two, expect=1).out
    assert f"truncates it at offset 3: the damaged batch at offset 3 (position {BAD_POS} of" in table


def test_the_recovery_point_inside_a_segment_recovers_all_of_it(tmp_path):
    # One segment 0..7, recovery point 6 past the damaged batch at 3: LogSegments.values(6, MAX) starts at
    # floorKey(6), segment 0, so the whole segment is recovered and cut at 3 all the same.
    one = make_copy(tmp_path, "broker-1", [COMMON, BAD, TAIL], epochs=EPOCHS, recovery_point=6, indexed=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, GOOD, TAIL], epochs=EPOCHS, indexed=True)
    first = _compare(one, two).copies[0]
    assert (first.log_end_offset, first.recovery.truncate_to, first.recovery.dropped, first.kept_damage) == \
        (3, 3, (3, 7), None)


def test_damage_below_the_recovery_point_stays(tmp_path, kbatch):
    # Recovery point 6: recoverLog recovers segment 6 alone; segment 0, indexed, is not recovered.  broker-1
    # keeps every batch: log end 8, its cache the file's (segment 6's epoch 2 is no newer than the latest).
    # The copies tie on (epoch 2, end 8): broker-1, the first, is the one the other follows.
    one, two = _pair(tmp_path, recovery_point=6)
    report = _compare(one, two)
    first, second = report.copies
    assert (first.log_end_offset, first.epochs, first.recovery) == (8, EPOCHS, None)
    kept = first.kept_damage
    assert (os.path.basename(kept.segment), kept.pos, kept.base_offset, kept.truncate_to) == \
        ("00000000000000000000.log", BAD_POS, 3, None)
    lines = advice(report)
    assert lines[0] == (
        f"broker-1: the damaged batch at offset 3 (position {BAD_POS} of 00000000000000000000.log: its CRC fails) "
        "fails validation, but its segment lies wholly below the recovery point 6: Kafka's log recovery does not "
        "reach it and the damage stays; a follower fetching it from broker-1, or a consumer reading it, fails")
    assert "a good copy of the damaged batch at offset 3 of broker-1 is on broker-2" in lines
    replica = _jsonl(kbatch, one, two)[0]
    assert (replica["log_end_offset"], replica["recovery"], replica["kept_damage"]["pos"],
            replica["kept_damage"]["truncate_to"]) == (8, None, BAD_POS, None)


def test_clean_shutdown_leaves_the_damage(tmp_path, kbatch):
    # .kafka_cleanshutdown: no recoverLog at all, though the recovery point 3 lies in segment 0.
    one, two = _pair(tmp_path, recovery_point=3, clean_shutdown=True)
    report = _compare(one, two)
    first = report.copies[0]
    assert (first.clean_shutdown, first.log_end_offset, first.latest_epoch, first.recovery) == (True, 8, 2, None)
    assert first.kept_damage.pos == BAD_POS
    lines = advice(report)
    assert lines[0].startswith("broker-1: the damaged batch at offset 3") and \
        "but its log directory was shut down cleanly (.kafka_cleanshutdown): Kafka's log recovery does not reach " \
        "it and the damage stays; a follower fetching it from broker-1, or a consumer reading it, fails" in lines[0]
    assert "a good copy of the damaged batch at offset 3 of broker-1 is on broker-2" in lines
    replica = _jsonl(kbatch, one, two)[0]
    assert (replica["clean_shutdown"], replica["recovery"], replica["kept_damage"]["base_offset"]) == (True, None, 3)


@pytest.mark.parametrize("clean_shutdown", [True, False])
def test_a_missing_offset_index_cuts_its_segment_alone(tmp_path, clean_shutdown):
    # Segment 0 has no offset index: loadSegmentFiles recovers it as it opens it (sanityCheck:
    # NoSuchFileException), whatever the shutdown, and cuts it at 3, deleting nothing else.  Without a clean
    # shutdown recoverLog then recovers segment 0 (it holds the recovery point 0) again: already cut, it truncates
    # no byte, so segment 6 is recovered in turn and stays.  The log end is 8; the epochs recovered (0@0, 2@6) are
    # no newer than the file's latest, which stays whole: truncateFromEnd(8) drops nothing.
    one = make_copy(tmp_path, "broker-1", [], segments={0: [COMMON, BAD], 6: [TAIL]}, epochs=EPOCHS,
                    clean_shutdown=clean_shutdown)
    open(os.path.join(one, "orders-0", "00000000000000000006.index"), "wb").close()
    two = make_copy(tmp_path, "broker-2", [], segments={0: [COMMON, GOOD], 6: [TAIL]}, epochs=EPOCHS, indexed=True)
    report = _compare(one, two)
    first = report.copies[0]
    assert (first.log_end_offset, first.epochs, first.kept_damage) == (8, EPOCHS, None)
    assert (first.recovery.truncate_to, first.recovery.dropped, first.recovery.later_segments_dropped) == \
        (3, (3, 5), False)
    assert advice(report)[0].startswith("broker-1: Kafka recovers 00000000000000000000.log as it opens it (its "
                                        "offset index is missing) and cuts it at offset 3")
    assert advice(report)[0].endswith("it and the rest of the segment (offsets 3..5) are dropped; the later "
                                      "segments stay")


def test_recovered_epochs_replace_what_the_file_says_past_them(tmp_path):
    # The file says 0@0 and 5@6 (written before an unflushed crash); the recovered batches say 0@0, 1@3, 2@6.
    # LogSegment.recover assigns none of them (5 is the latest), then the damaged batch at 6 cuts the log at 6:
    # truncateFromEnd(6) drops 5@6, leaving 0@0: the epochs 1 and 2 of the batches are never assigned.
    bad_tail = TAIL[:-1] + bytes([TAIL[-1] ^ 0x01])
    one = make_copy(tmp_path, "broker-1", [COMMON, GOOD, bad_tail], epochs=[(0, 0), (5, 6)], indexed=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, GOOD, TAIL], epochs=EPOCHS, indexed=True)
    first = _compare(one, two).copies[0]
    assert (first.log_end_offset, first.epochs, first.recovery.pos) == (6, [(0, 0)], len(COMMON) + len(GOOD))
    # An epoch file behind the batches: 0@0 only; recovery assigns 1@3 and 2@6 (each above the latest).
    three = make_copy(tmp_path, "broker-3", [COMMON, GOOD, TAIL], epochs=[(0, 0)], indexed=True)
    assert _compare(three, two).copies[0].epochs == EPOCHS


def test_a_segment_emptied_by_the_cut_keeps_its_base_offset(tmp_path):
    # Segment 6 begins with a damaged batch: recovery cuts it to nothing, and the log end offset is its
    # LogSegment.readNextOffset, the base offset 6 of its name, not one past the last batch kept (2).
    bad_tail = TAIL[:-1] + bytes([TAIL[-1] ^ 0x01])
    one = make_copy(tmp_path, "broker-1", [], segments={0: [COMMON], 6: [bad_tail]}, epochs=EPOCHS, indexed=True)
    two = make_copy(tmp_path, "broker-2", [], segments={0: [COMMON], 6: [TAIL]}, epochs=EPOCHS, indexed=True)
    first = _compare(one, two).copies[0]
    assert (first.log_end_offset, first.recovery.truncate_to, first.recovery.pos, first.epochs) == \
        (6, 6, 0, [(0, 0), (1, 3)])


def test_a_new_epoch_replaces_the_entries_it_overtakes(tmp_path):
    # The file says 0@0 and 1@10 (an entry from a log since truncated); the batches say 0@0 and 2@3 (3..12).
    # Recovery assigns 2@3, above the latest 1: LeaderEpochFileCache.maybeTruncateNonMonotonicEntries first drops
    # 1@10 (its start is past 3), so the cache is 0@0 2@3, though 10 is below the log end 13.
    long = batch(3, _records(3, 10, "v"), leader_epoch=2)
    one = make_copy(tmp_path, "broker-1", [COMMON, long], epochs=[(0, 0), (1, 10)], indexed=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, long], epochs=[(0, 0), (2, 3)], indexed=True)
    first = _compare(one, two).copies[0]
    assert (first.log_end_offset, first.epochs) == (13, [(0, 0), (2, 3)])


def test_a_length_field_that_lies_cuts_the_log(tmp_path):
    # GOOD's size field 7 more than its bytes: kbatch finds its CRC at the true length (bad-length), but Kafka's
    # FileLogInputStream frames it by the field, so ensureValid checks the CRC over other bytes and fails.
    size = struct.unpack(">i", GOOD[8:12])[0]
    lying = GOOD[:8] + struct.pack(">i", size + 7) + GOOD[12:]
    one = make_copy(tmp_path, "broker-1", [COMMON, lying, TAIL], epochs=EPOCHS, indexed=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, GOOD, TAIL], epochs=EPOCHS, indexed=True)
    first = _compare(one, two).copies[0]
    assert (first.log_end_offset, first.recovery.pos, first.recovery.dropped, first.recovery.why) == \
        (3, BAD_POS, (3, 7), "its length field is wrong: the CRC fails over the bytes it frames")


def test_bytes_that_are_no_batch_cut_the_log(tmp_path, kbatch, monkeypatch):
    # Garbage between COMMON and GOOD: FileLogInputStream frames it by whatever its size field reads, and
    # ensureValid (or the framing) fails there: the log is cut at 3, GOOD and TAIL dropped with it.
    garbage = b"\x00garbage!" * 3
    one = make_copy(tmp_path, "broker-1", [COMMON, garbage, GOOD, TAIL], epochs=EPOCHS, indexed=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, GOOD, TAIL], epochs=EPOCHS, indexed=True)
    first = _compare(one, two).copies[0]
    assert (first.log_end_offset, first.recovery.pos, first.recovery.base_offset, first.recovery.dropped,
            first.recovery.why) == (3, BAD_POS, None, (3, 7), "no batch: resync")
    monkeypatch.setenv("COLUMNS", "400")
    assert f"truncates it at offset 3: the bytes at position {BAD_POS} of 00000000000000000000.log (no batch: " \
        "resync) fail validation, and they and all after them (offsets 3..7) are dropped" in \
        kbatch("replicas", one, two, expect=1).out


def test_a_zero_tail_is_no_damage(tmp_path, kbatch):
    # A preallocated segment's zero tail: recovery cuts those bytes, nothing with them: the copies agree.
    one = make_copy(tmp_path, "broker-1", [COMMON, GOOD, bytes(4096)], epochs=[(0, 0), (1, 3)], indexed=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, GOOD], epochs=[(0, 0), (1, 3)], indexed=True)
    report = _compare(one, two)
    assert report.agree and report.copies[0].recovery is None and report.copies[0].damaged == 0
    assert kbatch("replicas", one, two, expect=0).out.count("nothing to repair") == 1


def test_a_zero_tail_mid_log_drops_the_later_segments(tmp_path, kbatch, monkeypatch):
    # Zeros end segment 0 and segment 3 follows: LogSegment.recover reads size 0 below the v0 overhead
    # (FileLogInputStream: CorruptRecordException), cuts the zeros, and recoverLog deletes segment 3.
    one = make_copy(tmp_path, "broker-1", [], segments={0: [COMMON, bytes(100)], 3: [GOOD]},
                    epochs=[(0, 0), (1, 3)], indexed=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, GOOD], epochs=[(0, 0), (1, 3)], indexed=True)
    first = _compare(one, two).copies[0]
    assert (first.log_end_offset, first.epochs, first.damaged) == (3, [(0, 0)], 0)
    assert (first.recovery.is_damage, first.recovery.truncate_to, first.recovery.dropped) == (False, 3, (3, 5))
    monkeypatch.setenv("COLUMNS", "400")
    assert "broker-1: Kafka's log recovery on start (no clean shutdown; the segment holds or follows the recovery " \
        "point 0) truncates it at offset 3: zero bytes end the segment, and the later segments (offsets 3..5) are " \
        "dropped" in kbatch("replicas", one, two, expect=1).out


@pytest.mark.parametrize("damaged_leads", [False, True])
def test_different_versions_are_not_good_copies(tmp_path, damaged_leads):
    # broker-1's batch at 3 is damaged and stays (clean shutdown); broker-2 and broker-3 hold different intact
    # batches at 3.  The version Kafka keeps is the newest-epoch copy's: broker-2's (epoch 2), unless broker-1
    # itself has the newest epoch (3), when which version its damaged batch was cannot be told.
    other = batch(3, _records(3, 2, "w"), leader_epoch=1)
    one = make_copy(tmp_path, "broker-1", [COMMON, BAD], epochs=[(0, 0), (3 if damaged_leads else 1, 3)],
                    indexed=True, clean_shutdown=True)
    two = make_copy(tmp_path, "broker-2", [COMMON, batch(3, _records(3, 3, "v"), leader_epoch=2)],
                    epochs=[(0, 0), (2, 3)], indexed=True)
    three = make_copy(tmp_path, "broker-3", [COMMON, other], epochs=[(0, 0), (1, 3)], indexed=True)
    report = _compare(one, two, three)
    lines = advice(report)
    assert not any(line.startswith("a good copy") for line in lines)
    if damaged_leads:
        assert report.leader == 0
        assert ("the damaged batch at offset 3 of broker-1: broker-2, broker-3 hold different versions of offset 3, "
                "the copy with the newest leader epoch, broker-1, holding it damaged: which one, if any, is a good "
                "copy of it cannot be told") in lines
    else:
        assert report.leader == 1
        assert ("the damaged batch at offset 3 of broker-1: the version Kafka keeps is the one on broker-2 (the "
                "copy with the newest leader epoch, which the others follow); broker-3 holds a different version "
                "of offset 3, not a good copy of the same batch") in lines
