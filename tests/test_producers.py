"""kbatch producers: a partition's producers held to ProducerAppendInfo's checks, on batches worked by hand
(tests/handmade.py) for each rule, and on a real broker's log, where no rule may fire."""

from __future__ import annotations

import io
import json

import pytest

from kbatch.ops.producers import PartitionProducers, in_sequence
from kbatch.reading.reader import ReadOptions, SegmentReader

from .handmade import batch, end_marker

PID = 4001


def data(base_offset: int, sequence: int, values: list[bytes], *, epoch: int = 0, transactional: bool = False,
         producer_id: int = PID) -> bytes:
    return batch(base_offset, [(None, value) for value in values], producer_id=producer_id, producer_epoch=epoch,
                 base_sequence=sequence, transactional=transactional)


def _replay(*batches: bytes) -> PartitionProducers:
    view = PartitionProducers("orders-0")
    for item in SegmentReader(io.BytesIO(b"".join(batches)), ReadOptions(records=True)):
        view.add_batch(item, "seg.log")
    return view


def _codes(view: PartitionProducers) -> list[tuple[str, int]]:
    return [(finding.code, producer_id) for _, finding, producer_id in view.breaks]


def test_a_producer_in_sequence_breaks_nothing():
    view = _replay(data(0, 0, [b"a", b"b"]), data(2, 2, [b"c"]), data(3, 3, [b"d", b"e", b"f"]))
    assert _codes(view) == []
    [epoch] = view.epochs
    assert (epoch.producer_id, epoch.producer_epoch, epoch.first_sequence, epoch.last_sequence, epoch.first_offset,
            epoch.last_offset, epoch.batches, epoch.records) == (PID, 0, 0, 5, 0, 5, 3, 6)


def test_in_sequence_wraps_after_integer_max():
    # ProducerAppendInfo.inSequence: nextSeq == lastSeq + 1 || (nextSeq == 0 && lastSeq == Integer.MAX_VALUE)
    assert in_sequence(2**31 - 1, 0) and in_sequence(4, 5)
    assert not in_sequence(4, 6) and not in_sequence(4, 4) and not in_sequence(2**31 - 2, 0)


def test_a_gap_in_the_sequence():
    # checkSequence: same epoch, 2 is not in sequence after 0 (the broker refuses OutOfOrderSequence)
    view = _replay(data(0, 0, [b"a"]), data(1, 2, [b"b"]))
    assert _codes(view) == [("producer-sequence-gap", PID)]
    finding = view.breaks[0][1]
    assert (finding.field, finding.expected.split(",")[0], finding.actual) == (
        "baseSequence", "1", "2 (1 sequences missing, 0 offsets removed from the log between)")


def test_a_gap_the_removed_offsets_account_for_is_compaction_not_a_break():
    # the cleaner removed the batch at offsets 1-2 (sequences 1-2): offsets jump by as many
    assert _codes(_replay(data(0, 0, [b"a"]), data(3, 3, [b"d"]))) == []
    # ... but a sequence gap wider than the offsets removed is still one
    assert _codes(_replay(data(0, 0, [b"a"]), data(2, 3, [b"d"]))) == [("producer-sequence-gap", PID)]


def test_a_repeated_sequence():
    view = _replay(data(0, 0, [b"a", b"b"]), data(2, 1, [b"c"]))
    assert _codes(view) == [("producer-sequence-repeat", PID)]


def test_an_epoch_going_back():
    # checkProducerEpoch: a data batch's epoch below the current one (InvalidProducerEpochException)
    view = _replay(data(0, 0, [b"a"], epoch=3), data(1, 1, [b"b"], epoch=2))
    assert _codes(view) == [("producer-epoch-backwards", PID)]


def test_a_new_epoch_starts_at_sequence_zero():
    assert _codes(_replay(data(0, 0, [b"a"]), data(1, 0, [b"b"], epoch=1))) == []
    view = _replay(data(0, 0, [b"a"]), data(1, 5, [b"b"], epoch=1))
    assert _codes(view) == [("producer-sequence-not-reset", PID)]
    assert [(e.producer_epoch, e.first_sequence, e.breaks) for e in view.epochs] == [(0, 0, 0), (1, 5, 1)]


def test_the_first_batch_seen_may_start_anywhere():
    # checkSequence: with no current epoch (records gone to retention or DeleteRecords) any sequence goes
    assert _codes(_replay(data(100, 57, [b"a"]), data(101, 58, [b"b"]))) == []


def test_a_plain_batch_inside_an_open_transaction():
    # appendDataBatch: InvalidTxnStateException
    view = _replay(data(0, 0, [b"a"], transactional=True), data(1, 1, [b"b"]))
    assert _codes(view) == [("producer-txn-state", PID)]
    marker = batch(1, [end_marker("COMMIT", 0)], control=True, transactional=True, producer_id=PID,
                   producer_epoch=0)
    assert _codes(_replay(data(0, 0, [b"a"], transactional=True), marker, data(2, 1, [b"b"]))) == []


def test_the_same_records_again_under_a_new_epoch_are_a_duplicate():
    view = _replay(data(0, 0, [b"x", b"y"]), data(2, 2, [b"z"]), data(3, 0, [b"x", b"y"], epoch=1))
    assert _codes(view) == [("duplicate-records", PID)]
    finding = view.breaks[0][1]
    assert finding.actual == "the records of its batch at offset 0 (under epoch 0, again under epoch 1)"


def test_the_same_records_with_a_repeated_sequence_are_a_duplicate_too():
    view = _replay(data(0, 0, [b"x"]), data(1, 0, [b"x"]))
    assert _codes(view) == [("producer-sequence-repeat", PID), ("duplicate-records", PID)]


def test_the_same_payload_with_new_sequences_is_the_applications_own():
    assert _codes(_replay(data(0, 0, [b"ping"]), data(1, 1, [b"ping"]))) == []
    # ... and another producer's identical records are no duplicate of this one's
    assert _codes(_replay(data(0, 0, [b"x"]), data(1, 0, [b"x"], producer_id=PID + 1))) == []


def test_producers_are_told_apart():
    view = _replay(data(0, 0, [b"a"]), data(1, 0, [b"b"], producer_id=7), data(2, 1, [b"c"]),
                   data(3, 5, [b"d"], producer_id=7))
    assert _codes(view) == [("producer-sequence-gap", 7)]
    assert [(e.producer_id, e.last_offset) for e in view.epochs] == [(PID, 2), (7, 3)]


# -- the command line --------------------------------------------------------------------------------------

def _partition(tmp_path, *batches: bytes):
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / f"{0:020d}.log").write_bytes(b"".join(batches))
    return directory


def test_jsonl_and_the_exit_status(tmp_path, kbatch):
    directory = _partition(tmp_path, data(0, 0, [b"a"]), data(1, 2, [b"b"]), data(2, 0, [b"c"], producer_id=9))
    result = kbatch("producers", "--format", "jsonl", str(directory))
    assert result.code == 0, result.err   # warnings only
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [(line["type"], line.get("producer_id"), line.get("code")) for line in lines] == [
        ("producer", PID, None), ("producer", 9, None), ("finding", None, "producer-sequence-gap")]
    assert lines[0]["breaks"] == 1 and lines[0]["partition"] == str(directory)
    result = kbatch("producers", "--format", "jsonl", "--producer-id", "9", str(directory))
    assert result.code == 0
    assert [json.loads(line)["producer_id"] for line in result.out.splitlines()] == [9]


def test_damage_is_exit_status_1(tmp_path, kbatch):
    broken = bytearray(data(1, 1, [b"b"]))
    broken[-1] ^= 0xFF
    result = kbatch("producers", str(_partition(tmp_path, data(0, 0, [b"a"]), bytes(broken))))
    assert result.code == 1
    assert "crc-mismatch" in result.out


def test_the_table(tmp_path, kbatch, snapshot, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    directory = _partition(tmp_path, data(0, 0, [b"x", b"y"]), data(2, 2, [b"z"]), data(3, 0, [b"x", b"y"], epoch=1),
                           data(5, 0, [b"t"], transactional=True, producer_id=7))
    result = kbatch("producers", str(directory))
    assert result.code == 0, result.err
    assert result.out.replace(str(tmp_path), "TMP") == snapshot


@pytest.mark.real_kafka
def test_a_healthy_brokers_producers_break_no_rule(real_kafka, kbatch):
    """Every partition of the real broker (idempotent and transactional producers, compaction, aborts,
    DeleteRecords): no producer rule fires, and the transactional producers are named."""
    result = kbatch("producers", "--format", "jsonl", str(real_kafka.stopped))
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line for line in lines if line["type"] == "finding"] == []
    producers = [line for line in lines if line["type"] == "producer"]
    assert len(producers) > 5
    assert {"txn-b"} <= {line["transactional_id"] for line in producers}


def test_the_same_records_in_a_new_transaction_are_the_applications_own():
    """Transactions version 2 bumps a transactional producer's epoch with every transaction: the same payload
    committed in two transactions was sent twice by the application (the real broker's workload does so)."""
    def committed(base_offset, epoch, values):
        return data(base_offset, 0, values, epoch=epoch, transactional=True) + batch(
            base_offset + len(values), [end_marker("COMMIT", 0)], control=True, transactional=True, producer_id=PID,
            producer_epoch=epoch + 1)
    assert _codes(_replay(committed(0, 0, [b"x"]), committed(2, 1, [b"x"]))) == []


def test_an_aborted_transactions_records_sent_again_are_no_duplicate():
    aborted = data(0, 0, [b"x"], transactional=True) + batch(1, [end_marker("ABORT", 0)], control=True,
                                                             transactional=True, producer_id=PID, producer_epoch=0)
    assert _codes(_replay(aborted, data(2, 1, [b"y"]), data(3, 0, [b"x"], epoch=1))) == []
    # without the abort, the idempotent producer's records again under a new epoch are a duplicate
    assert _codes(_replay(data(0, 0, [b"x"]), data(1, 1, [b"y"]), data(2, 0, [b"x"], epoch=1))) == [
        ("duplicate-records", PID)]
