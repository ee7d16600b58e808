"""kbatch replicas on copies of a compacted topic that each broker's own log cleaner compacted differently.

Every replica runs its own cleaner (LogCleanerManager.grabFilthiestCompactedLog never asks which copy leads), to its
own first dirty offset, and a follower fetches the leader's batches as they are: copies of one batch compacted
differently are healthy.  The cleaner rewrites a batch with the records it retains keeping its base offset and, by
overrideLastOffset, its last offset (MemoryRecords.buildRetainedRecordsInto); tests/handmade.py's ``compacted``
writes such a batch by hand.
"""

from __future__ import annotations

import os

from kbatch.ops.replicas import advice, compare
from tests.handmade import batch, compacted, empty_header
from tests.test_replicas import make_copy

# ten records of two keys at 0..9: the cleaner keeps the last of each key, 8 and 9
RECORDS = [(offset, b"k%d" % (offset % 2), b"v%d" % offset) for offset in range(10)]
TAIL = batch(10, [(b"k0", b"v10"), (b"k1", b"v11")])


def _copies(tmp_path, first: bytes, second: bytes, **files) -> tuple[str, str]:
    """broker-1 and broker-2 holding ``first`` and ``second`` at 0 and TAIL after, epoch 0, high watermark 12."""
    return tuple(make_copy(tmp_path, f"broker-{number}", [held, TAIL], epochs=[(0, 0)], high_watermark=12, **files)
                 for number, held in ((1, first), (2, second)))


def _compare(*dirs: str):
    return compare([os.path.join(directory, "orders-0") for directory in dirs])


def test_a_batch_one_copys_cleaner_compacted_is_no_divergence(tmp_path, kbatch, text_snapshot, monkeypatch):
    # broker-2's cleaner kept 8 and 9 of the batch 0..9 (base 0, last 9 kept); broker-1's has not run.  Nothing is
    # truncated, nothing lost: the copies agree, exit 0.
    one, two = _copies(tmp_path, compacted(0, 9, RECORDS), compacted(0, 9, RECORDS[8:]))
    report = _compare(one, two)
    assert (report.divergences, report.compacted) == ([], [(0, 9)])
    assert [(copy.diverges_at, copy.truncate_to) for copy in report.copies] == [(None, 12), (None, 12)]
    assert advice(report) == [
        "every copy holds the same records: 1 batch (0..9) is compacted differently (each broker's log cleaner "
        "compacts its own copy; the records the copies keep in common are the same): nothing to repair"]
    monkeypatch.setenv("COLUMNS", "80")
    result = kbatch("replicas", one, two, expect=0)
    assert result.out == text_snapshot
    jsonl = kbatch("replicas", "--format", "jsonl", one, two, expect=0)
    assert [line for line in jsonl.out.splitlines() if '"type": "record"' in line] == []


def test_a_batch_marked_with_a_delete_horizon_and_one_emptied_for_a_producer_are_no_divergence(tmp_path):
    # A cleaner that removed a tombstone-bearing batch's records but the last marks it with a delete horizon
    # (attributes bit 6, the horizon as baseTimestamp; the records' timestamps stay).  One that removed every record of
    # a producer's last batch keeps it empty (RETAIN_EMPTY, DefaultRecordBatch.writeEmptyHeader).
    horizon = compacted(0, 9, RECORDS[9:], delete_horizon=1_700_000_086_400_000)
    one, two = _copies(tmp_path, compacted(0, 9, RECORDS), horizon)
    assert _compare(one, two).compacted == [(0, 9)]
    produced = dict(producer_id=7, producer_epoch=0, base_sequence=0)
    three, four = (make_copy(tmp_path / "p", f"broker-{number}", [held, TAIL], epochs=[(0, 0)], high_watermark=12)
                   for number, held in ((1, compacted(0, 9, RECORDS, **produced)), (2, empty_header(0, 9, **produced))))
    report = _compare(three, four)
    assert (report.divergences, report.compacted) == ([], [(0, 9)])


def test_batches_that_differ_otherwise_still_diverge(tmp_path, kbatch):
    # A record both keep with another value; another producer epoch; records neither a part of the other's: no
    # cleaner leaves these, so they are told as different batches, exit 1.
    changed = [(8, b"k0", b"other"), (9, b"k1", b"v9")]
    for name, second in (("value", compacted(0, 9, changed)),
                         ("epoch", compacted(0, 9, RECORDS[8:], producer_id=7, producer_epoch=1)),
                         ("apart", compacted(0, 9, RECORDS[:2]))):
        one, two = _copies(tmp_path / name, compacted(0, 9, RECORDS[7:]), second)
        report = _compare(one, two)
        assert ([(each.base_offset, each.holders) for each in report.divergences], report.compacted) == \
            ([(0, [0]), (0, [1])], []), name
        kbatch("replicas", one, two, expect=1)


def test_copies_compacted_differently_count_as_one_holder_against_a_copy_without_the_batch(tmp_path):
    # broker-3, elected uncleanly in epoch 1, wrote a batch of its own at 0: broker-1's and broker-2's batches at 0 are
    # one variant (compacted differently), broker-3's another.  Electing broker-3 loses the 10 records of the fuller;
    # electing broker-2 loses broker-3's one record, not broker-1's 0..7, which its cleaner removed.
    one, two = _copies(tmp_path, compacted(0, 9, RECORDS), compacted(0, 9, RECORDS[8:]))
    three = make_copy(tmp_path, "broker-3", [batch(0, [(b"x", b"y")], leader_epoch=1)], epochs=[(1, 0)],
                      high_watermark=1)
    report = _compare(one, two, three)
    assert [(each.base_offset, each.holders, each.records) for each in report.divergences][:2] == \
        [(0, [0, 1], [(0, 9)]), (0, [2], [(0, 0)])]
    said = advice(report)
    assert "electing broker-2 loses 1 record (0), 1 of them below a high watermark" in said
    assert "electing broker-3 loses 12 records (0..11), 12 of them below a high watermark" in said
