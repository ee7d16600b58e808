"""kbatch replicas on copies of a compacted topic where one broker's own log cleaner removed a batch whole.

Cleaner.cleanInto drops a batch none of whose records it retains (BatchRetention.DELETE_EMPTY): each record has a
later record of its key in the offset map, built from the copy's own records below the offset its round cleans to
(the cleaner-offset-checkpoint it writes).  It keeps the batch, empty, when it holds an active producer's last data
offset or ends the round (RETAIN_EMPTY).  Another copy whose cleaner has not run that far still holds the batch:
both are healthy, and replicas tells the batch apart from a divergence only where the lacking copy's own log shows
the rule met (kbatch.reading.cleaner.removed_whole).
"""

from __future__ import annotations

import os

from kbatch.map.gather import lane_state
from kbatch.ops.replicas import advice, compare
from tests.handmade import batch, end_marker
from tests.test_replicas import make_copy

FIRST = batch(0, [(b"k0", b"v0"), (b"k1", b"v1")])         # 0..1, both keys written again at 4..5
OTHER = batch(2, [(b"k2", b"v2"), (b"k3", b"v3")])         # 2..3
AGAIN = batch(4, [(b"k0", b"v4"), (b"k1", b"v5")])         # 4..5
TAIL = batch(6, [(b"k2", b"v6"), (b"k3", b"v7")])          # 6..7, the last batch the cleaner's round ends at
KEYLESS = batch(0, [(None, b"v0"), (None, b"v1")])         # 0..1, records without a key
MARKER_KEY = end_marker("ABORT", 0)[0]                      # the key bytes of an ABORT marker's record

REMOVED_LINE = ("1 batch (0..1) that another copy holds was removed whole by broker-2's own log cleaner (each "
                "broker's log cleaner compacts its own copy): below its cleaner-offset-checkpoint 8, each of its "
                "records has a later record of the same key there, which a consumer is given instead: no "
                "divergence, electing broker-2 loses none of it")


def _copies(tmp_path, held: list[bytes], *, cleaner: int | None = 8, first: bytes = FIRST,
            lacking: list[bytes] | None = None) -> tuple[str, str]:
    """broker-1 holding ``first`` and ``held`` after it; broker-2 holding ``held`` only (``lacking``: those), its
    cleaner-offset-checkpoint at ``cleaner``; epoch 0, high watermark 8."""
    one = make_copy(tmp_path, "broker-1", [first, *held], epochs=[(0, 0)], high_watermark=8)
    two = make_copy(tmp_path, "broker-2", held if lacking is None else lacking, epochs=[(0, 0)], high_watermark=8,
                    cleaner=cleaner)
    return one, two


def _compare(*dirs: str):
    return compare([os.path.join(directory, "orders-0") for directory in dirs])


def _divergent(report) -> list[tuple[int, list[int]]]:
    return [(each.base_offset, each.holders) for each in report.divergences]


def test_a_batch_one_copys_cleaner_removed_whole_is_no_divergence(tmp_path, kbatch, monkeypatch):
    # broker-2's cleaner ran to 8: k0 and k1 were written again at 4 and 5, so it kept none of 0..1 and dropped the
    # batch; broker-1's has not run.  No divergence, nothing lost, nothing truncated: exit 0.
    one, two = _copies(tmp_path, [OTHER, AGAIN, TAIL])
    report = _compare(one, two)
    assert (report.divergences, report.removed, report.agree) == ([], [(0, 1, 1)], True)
    assert [(copy.diverges_at, copy.truncate_to) for copy in report.copies] == [(None, 8), (None, 8)]
    assert advice(report) == [f"{REMOVED_LINE}: nothing to repair"]
    monkeypatch.setenv("COLUMNS", "400")
    result = kbatch("replicas", one, two, expect=0)
    assert REMOVED_LINE in result.out and "loses" not in result.out.replace("loses none of it", "")
    jsonl = kbatch("replicas", "--format", "jsonl", one, two, expect=0)
    assert [line for line in jsonl.out.splitlines() if '"type": "record"' in line] == []


def test_the_leaders_cleaner_removing_a_batch_a_follower_holds_is_no_divergence_either(tmp_path):
    # broker-2, leading in epoch 1, removed 0..1; broker-1 follows it and holds 0..1: it diverges nowhere, and
    # loses no producer sequence.
    first = batch(0, [(b"k0", b"v0"), (b"k1", b"v1")], producer_id=7, producer_epoch=0, base_sequence=0)
    again = batch(4, [(b"k0", b"v4"), (b"k1", b"v5")], producer_id=7, producer_epoch=0, base_sequence=2,
                  leader_epoch=1)
    tail = batch(6, [(b"k2", b"v6"), (b"k3", b"v7")], leader_epoch=1)
    one = make_copy(tmp_path, "broker-1", [first, OTHER, again, tail], epochs=[(0, 0), (1, 4)], high_watermark=8)
    two = make_copy(tmp_path, "broker-2", [OTHER, again, tail], epochs=[(0, 0), (1, 4)], high_watermark=8,
                    cleaner=8)
    report = _compare(one, two)
    assert (report.leader, _divergent(report), report.removed) == (0, [], [(0, 1, 1)])
    assert [copy.diverges_at for copy in report.copies] == [None, None]


def test_batches_the_copys_cleaner_could_not_have_removed_still_diverge(tmp_path, kbatch):
    # Each breaks one part of Kafka's rule, as broker-2's own log shows it: the batch stays a divergence, broker-1
    # alone holding it, and electing broker-2 loses its 2 records, exit 1.
    producer = dict(producer_id=7, producer_epoch=0, base_sequence=0)
    cases = {
        # no cleaner-offset-checkpoint: its cleaner never ran (or the topic is not compacted)
        "no checkpoint": dict(held=[OTHER, AGAIN, TAIL], cleaner=None),
        # the records of k0 and k1 at 4..5 lie at and past the first dirty offset: no offset map held them
        "later keys dirty": dict(held=[OTHER, AGAIN, TAIL], cleaner=4),
        # the batch ends where the round ended: kept, if empty (upperBoundOffsetOfCleaningRound), its records
        # without a key though they are
        "last of the round": dict(held=[OTHER, AGAIN, TAIL], cleaner=2, first=KEYLESS),
        # a checkpoint past the log end, which Kafka resets (cleanableOffsets)
        "past the log end": dict(held=[OTHER, AGAIN, TAIL], cleaner=100),
        # k9 is written nowhere later: its record is the latest of its key
        "a key not written again": dict(held=[OTHER, AGAIN, TAIL], first=batch(0, [(b"k0", b"v0"), (b"k9", b"v1")])),
        # the producer's last data batch: kept empty while the producer is active (isBatchLastRecordOfProducer),
        # and a marker of it after does not change its last data offset
        "the producer's last": dict(held=[OTHER, AGAIN, batch(6, [end_marker("COMMIT", 0)], control=True,
                                                                 transactional=True, producer_id=7,
                                                                 producer_epoch=0)],
                                    first=batch(0, [(b"k0", b"v0"), (b"k1", b"v1")], transactional=True,
                                                **producer), cleaner=7),
        # a transaction marker: dropped only once its delete horizon passed, which the log does not say, whatever
        # later data its producer wrote, with its records' key bytes
        "a marker": dict(held=[OTHER, batch(4, [(MARKER_KEY, b"v4"), (MARKER_KEY, b"v5")], producer_id=8,
                                            producer_epoch=0, base_sequence=0), TAIL],
                         first=batch(0, [end_marker("ABORT", 0), end_marker("ABORT", 0)], control=True,
                                     transactional=True, producer_id=8, producer_epoch=0)),
    }
    for name, case in cases.items():
        one, two = _copies(tmp_path / name.replace(" ", "-").replace("'", ""), **case)
        report = _compare(one, two)
        assert (_divergent(report)[:1], report.removed) == ([(0, [0])], []), name
        said = kbatch("replicas", one, two, expect=1).out
        assert "removed whole" not in said, name
        if name != "a marker":
            assert "electing broker-2 loses 2 records (0..1)" in " ".join(advice(report)), name


def test_a_batch_lacking_where_the_copy_holds_another_over_its_offsets_is_no_removal(tmp_path):
    # broker-2 holds a batch of its own over 0..3: 2..3, lacking there, lies within it, and no cleaner removes a
    # batch from inside another; k2 and k3 being written again at 6..7 says nothing of it.
    over = batch(0, [(b"x0", b"y0"), (b"x1", b"y1"), (b"x2", b"y2"), (b"x3", b"y3")])
    one, two = _copies(tmp_path, [OTHER, AGAIN, TAIL], lacking=[over, AGAIN, TAIL])
    report = _compare(one, two)
    assert (_divergent(report), report.removed) == ([(0, [0]), (0, [1]), (2, [0])], [])


def test_a_later_data_batch_of_the_producer_lets_its_batch_go(tmp_path):
    # The producer wrote again at 4..5: 0..1 is no longer its last data batch, and its cleaner may drop it.
    producer = dict(producer_id=7, producer_epoch=0)
    first = batch(0, [(b"k0", b"v0"), (b"k1", b"v1")], base_sequence=0, **producer)
    again = batch(4, [(b"k0", b"v4"), (b"k1", b"v5")], base_sequence=2, **producer)
    one, two = _copies(tmp_path, [OTHER, again, TAIL], first=first)
    report = _compare(one, two)
    assert (report.divergences, report.removed) == ([], [(0, 1, 1)])


def test_records_without_a_key_go_below_the_checkpoint(tmp_path):
    # Cleaner.shouldRetainRecord keeps no record without a key below the offset map's latest offset (a compacted
    # topic refuses them on produce; one written before the topic was made compacted goes at its first cleaning).
    one, two = _copies(tmp_path, [OTHER, AGAIN, TAIL], first=KEYLESS)
    report = _compare(one, two)
    assert (report.divergences, report.removed) == ([], [(0, 1, 1)])


def test_a_copy_lacking_the_batch_otherwise_still_diverges_and_the_cleaned_copy_loses_none_of_it(tmp_path):
    # broker-3 holds no cleaner checkpoint and lacks 0..1 (it was written over, say): the batch stays a
    # divergence, held by broker-1; electing broker-3 loses its 2 records, electing broker-2, whose cleaner removed
    # it, none.
    one, two = _copies(tmp_path, [OTHER, AGAIN, TAIL])
    three = make_copy(tmp_path, "broker-3", [OTHER, AGAIN, TAIL], epochs=[(0, 0)], high_watermark=8)
    report = _compare(one, two, three)
    assert [(each.base_offset, each.holders, each.cleaned) for each in report.divergences] == [(0, [0], [1])]
    assert report.removed == [(0, 1, 1)]
    assert [copy.diverges_at for copy in report.copies] == [None, None, 0]
    said = advice(report)
    assert "electing broker-2 loses nothing another copy holds" in said
    assert "electing broker-3 loses 2 records (0..1), 2 of them below a high watermark" in said
    assert REMOVED_LINE in said


def test_where_the_leaders_cleaner_removed_the_batch_a_copy_holding_it_is_no_other_version_on_the_map(tmp_path):
    # broker-2 leads (the first of equal epochs and ends), its cleaner removed 0..1; broker-3 lacks it otherwise.
    # The map draws broker-1's 0..1 as held by some copies, not as a batch the leader does not hold.
    one, two = _copies(tmp_path, [OTHER, AGAIN, TAIL])
    three = make_copy(tmp_path, "broker-3", [OTHER, AGAIN, TAIL], epochs=[(0, 0)], high_watermark=8)
    report = _compare(two, one, three)
    assert (report.leader, [(each.holders, each.cleaned) for each in report.divergences]) == (0, [([1], [0])])
    assert [copy.diverges_at for copy in report.copies] == [None, None, 0]
    assert lane_state(report, 1, report.divergences[0]) == "held by some copies"
