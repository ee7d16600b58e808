"""kbatch offsets --at: a transactional offset commit counts from its COMMIT marker's time, not its own record's.

Until the marker the group coordinator holds the commit pending (OffsetMetadataManager.replay puts a record of a
producer id in pendingTransactionalOffsets; replayEndTransactionMarker moves it into the committed offsets), so at
a time between the commit record and the marker the group's committed offset is still the one before it."""

from __future__ import annotations

import re
import struct

import pytest

from .handmade import batch, compacted, end_marker
from .test_offsets import T0, _history, _log, _segment, commit_key, commit_value

MARKER_AT = T0 + 60_000   # the COMMIT marker: a minute after the transaction's commit record (T0 + 1000)


def _committed_late(marker: bytes | None = None, *, tail: bytes = b"") -> bytes:
    """Group g commits 50 on orders-0 (log offset 0); producer 8 commits 100 for it in a transaction (1), written
    at T0 + 1 s; ``tail`` follows; then its COMMIT marker (``marker``, by default at MARKER_AT)."""
    return b"".join([
        batch(0, [(commit_key("g", "orders", 0), commit_value(50, T0))], timestamp=T0),
        batch(1, [(commit_key("g", "orders", 0), commit_value(100, T0 + 1000))], transactional=True,
              producer_id=8, producer_epoch=0, base_sequence=0, timestamp=T0 + 1000),
        tail,
        marker if marker is not None else
        batch(9, [end_marker("COMMIT", 1)], control=True, transactional=True, producer_id=8, producer_epoch=0,
              timestamp=MARKER_AT),
    ])


def _at(log: bytes, at: int) -> int | None:
    history, _ = _history(log, at=at)
    then = history.positions_at.get(("g", "orders", 0))
    return None if then is None else then.offset


def test_a_transactional_commit_counts_from_its_commit_marker_not_its_record():
    log = _committed_late()
    assert _at(log, T0 + 1000) == 50            # the commit record's own time: still pending
    assert _at(log, MARKER_AT - 1) == 50
    assert _at(log, MARKER_AT) == 100
    history, emitted = _history(log, at=MARKER_AT)
    applied = emitted[-1]
    assert (applied.offset, applied.transaction, applied.commit_timestamp, applied.marker_timestamp,
            applied.in_effect_from) == (100, "COMMIT", T0 + 1000, MARKER_AT, MARKER_AT)
    assert history.positions[("g", "orders", 0)].commit.offset == 100


def _unbelieved(producer_id: int) -> bytes:
    """A control batch whose record is no end marker (type 5): a broker's EndTransactionMarker.deserialize throws on
    it, so kbatch does not believe it (kbatch.reading.markers) and its transaction stays as it was."""
    return batch(4, [(struct.pack(">hh", 0, 5), struct.pack(">hi", 0, 1))], control=True, transactional=True,
                 producer_id=producer_id, producer_epoch=0, timestamp=T0 + 3000)


@pytest.mark.parametrize("ending", ["ABORT", "not believed", "absent"])
def test_a_transaction_aborted_unbelieved_or_unended_never_counts(ending):
    """Producer 9 commits 300 for the same partition at T0 + 2 s, its transaction ended by ``ending``; producer
    8's 100 counts from its COMMIT marker, producer 9's 300 at no time."""
    tail = batch(3, [(commit_key("g", "orders", 0), commit_value(300, T0 + 2000))], transactional=True,
                 producer_id=9, producer_epoch=0, base_sequence=0, timestamp=T0 + 2000)
    if ending == "ABORT":
        tail += batch(4, [end_marker("ABORT", 1)], control=True, transactional=True, producer_id=9, producer_epoch=0,
                      timestamp=T0 + 3000)
    elif ending == "not believed":
        tail += _unbelieved(9)
    log = _committed_late(tail=tail)
    assert _at(log, T0 + 30_000) == 50
    assert _at(log, MARKER_AT + 3_600_000) == 100
    _, emitted = _history(log, at=MARKER_AT + 3_600_000)
    (never,) = [commit for commit in emitted if commit.offset == 300]
    assert never.transaction == {"ABORT": "ABORT", "not believed": "OPEN", "absent": "OPEN"}[ending]
    assert never.in_effect_from is None


def test_a_marker_the_cleaner_stamped_with_a_delete_horizon_counts_from_its_own_time():
    """The log cleaner keeps a marker with a delete horizon (attributes bit 6) as its baseTimestamp, a day ahead;
    its maxTimestamp (and its record's time) stay the marker's."""
    marker = compacted(9, 9, [(9, *end_marker("COMMIT", 1))], delete_horizon=MARKER_AT + 86_400_000,
                       timestamp=MARKER_AT, control=True, transactional=True, producer_id=8, producer_epoch=0)
    log = _committed_late(marker)
    assert _at(log, MARKER_AT - 1) == 50
    assert _at(log, MARKER_AT) == 100


def test_a_marker_with_no_timestamp_is_not_placed_in_time():
    """A COMMIT marker stamped -1 (RecordBatch.NO_TIMESTAMP): when it took effect is not known, so at no time is its
    commit where the group stood (as a commit with no time of its own is not)."""
    marker = batch(9, [end_marker("COMMIT", 1)], control=True, transactional=True, producer_id=8, producer_epoch=0,
                   timestamp=-1)
    log = _committed_late(marker)
    assert _at(log, T0 + 1000) == 50
    assert _at(log, MARKER_AT + 3_600_000) == 50
    history, _ = _history(log)
    assert history.positions[("g", "orders", 0)].commit.offset == 100   # applied all the same


def test_the_command_puts_the_group_back_where_it_stood_before_the_marker(tmp_path, kbatch):
    path = _segment(tmp_path, _committed_late())
    result = kbatch("offsets", "--group", "g", "--at", str(MARKER_AT - 1), str(path), expect=0)
    assert re.search(r"orders-0 +100 +2 +\S+ +0 +0 +50$", result.out, re.M)
    assert "--topic orders:0 --reset-offsets --to-offset 50 --execute" in result.out
    assert "--to-offset 100" not in result.out
    result = kbatch("offsets", "--group", "g", "--at", "2023-11-14T22:14:20Z", str(path), expect=0)   # MARKER_AT
    assert "--topic orders:0 --reset-offsets --to-offset 100 --execute" in result.out


def test_the_command_counts_the_committed_transaction_and_not_the_unbelieved_one(tmp_path, kbatch):
    """Producer 9's 300 ends at a control batch not believed, a finding (exit status 1): it never counts; producer
    8's 100 counts from its marker."""
    tail = batch(3, [(commit_key("g", "orders", 0), commit_value(300, T0 + 2000))], transactional=True,
                 producer_id=9, producer_epoch=0, base_sequence=0, timestamp=T0 + 2000) + _unbelieved(9)
    path = _segment(tmp_path, _committed_late(tail=tail))
    result = kbatch("offsets", "--group", "g", "--at", str(T0 + 30_000), str(path), expect=1)
    assert "control-not-end-marker" in result.out
    assert "--topic orders:0 --reset-offsets --to-offset 50 --execute" in result.out
    result = kbatch("offsets", "--group", "g", "--at", str(MARKER_AT + 3_600_000), str(path), expect=1)
    assert "--topic orders:0 --reset-offsets --to-offset 100 --execute" in result.out
    assert "--to-offset 300" not in result.out


def test_in_the_shared_log_the_committed_transaction_counts_from_its_marker():
    """test_offsets' log: producer 8's 200 for orders-1 is written at T0 + 7.1 s and its COMMIT marker at T0 + 7.3 s
    (producer 7's 100, aborted, never counts; producer 9's 300 has no marker)."""
    log = _log()
    history, _ = _history(log, at=T0 + 7200)
    assert ("billing", "orders", 1) not in history.positions_at
    history, _ = _history(log, at=T0 + 7300)
    assert history.positions_at[("billing", "orders", 1)].offset == 200
