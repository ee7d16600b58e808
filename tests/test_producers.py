"""kbatch producers: a partition's producers held to ProducerAppendInfo's checks, on batches worked by hand
(tests/handmade.py) for each rule, and on a real broker's log, where no rule may fire."""

from __future__ import annotations

import io
import json
import re
import struct
from pathlib import Path

import crc32c
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


def _marker(base_offset: int, outcome: str, epoch: int) -> bytes:
    return batch(base_offset, [end_marker(outcome, 3)], control=True, transactional=True, producer_id=PID,
                 producer_epoch=epoch)


def _zombie_after_an_epoch_bump() -> bytes:
    """Transactions version 2: a transaction at epoch 5, its COMMIT marker at 6 (the coordinator bumped the
    epoch); then a batch at the old epoch 5 (a zombie), which its ABORT marker at 6 ends."""
    return b"".join([data(0, 0, [b"a", b"b"], epoch=5, transactional=True), _marker(2, "COMMIT", 6),
                     data(3, 2, [b"c"], epoch=5, transactional=True), _marker(4, "ABORT", 6)])


def test_a_markers_epoch_is_the_producers_and_a_batch_below_it_goes_back():
    """ProducerAppendInfo.appendEndTxnMarker updates the producer's entry to the marker's epoch
    (ProducerStateEntry.maybeUpdateProducerEpoch): the batch at epoch 5 after it fails checkProducerEpoch."""
    view = _replay(_zombie_after_an_epoch_bump())
    assert _codes(view) == [("producer-epoch-backwards", PID)]
    finding = view.breaks[0][1]
    assert (finding.pos, finding.field, finding.expected, finding.actual) == (
        155, "producerEpoch", f"producer {PID}'s epoch 6 or later (its batch at offset 2)", "5")
    assert [(e.producer_epoch, e.first_sequence, e.last_sequence, e.first_offset, e.last_offset, e.batches,
             e.records, e.breaks) for e in view.epochs] == [
        (5, 0, 1, 0, 1, 1, 2, 0),
        (6, -1, -1, 2, 2, 0, 0, 0),   # begun by the COMMIT marker: no data batch
        (5, 2, 2, 3, 3, 1, 1, 1),     # the zombie's batch: its epoch went back
        (6, -1, -1, 4, 4, 0, 0, 0),   # the ABORT marker's
    ]


def test_a_marker_whose_epoch_goes_back_breaks_the_rule_too():
    # appendEndTxnMarker: checkProducerEpoch (for a replica's append: "Epoch of producer ... is 4, which is < ...")
    view = _replay(data(0, 0, [b"a"], epoch=5, transactional=True), _marker(1, "COMMIT", 4))
    assert _codes(view) == [("producer-epoch-backwards", PID)]
    assert [(e.producer_epoch, e.first_offset, e.breaks) for e in view.epochs] == [(5, 0, 0), (4, 1, 1)]


def test_after_a_marker_bumped_the_epoch_the_next_batch_starts_at_sequence_zero():
    """The marker's epoch cleared the entry's batches: the next transaction at that epoch starts at 0, as the
    first batch of any new epoch does; it joins the epoch the marker began."""
    first = data(0, 0, [b"a", b"b"], epoch=5, transactional=True) + _marker(2, "COMMIT", 6)
    view = _replay(first, data(3, 0, [b"c"], epoch=6, transactional=True), data(4, 1, [b"d"], epoch=6,
                                                                                 transactional=True))
    assert _codes(view) == []
    assert [(e.producer_epoch, e.first_sequence, e.last_sequence, e.first_offset, e.last_offset, e.batches)
            for e in view.epochs] == [(5, 0, 1, 0, 1, 1), (6, 0, 1, 2, 4, 2)]
    view = _replay(first, data(3, 2, [b"c"], epoch=6, transactional=True))
    assert _codes(view) == [("producer-sequence-not-reset", PID)]


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
    assert result.code == 1, result.err   # a rule broken (a warning: the bytes are not damaged)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [(line["type"], line.get("producer_id"), line.get("code")) for line in lines] == [
        ("producer", PID, None), ("producer", 9, None), ("finding", None, "producer-sequence-gap")]
    assert lines[0]["breaks"] == 1 and lines[0]["partition"] == str(directory)
    result = kbatch("producers", "--format", "jsonl", "--producer-id", "9", str(directory))
    assert result.code == 0   # producer 9 broke none
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
    assert result.code == 1, result.err   # the duplicates under epoch 1 break a rule
    assert result.out.replace(str(tmp_path), "TMP") == snapshot


def test_a_zombie_batch_after_an_epoch_bump_is_a_break_the_table_shows(tmp_path, kbatch, snapshot, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    directory = _partition(tmp_path, _zombie_after_an_epoch_bump())
    result = kbatch("producers", str(directory), expect=1)   # (a rule broken: a warning)
    assert result.out.replace(str(tmp_path), "TMP") == snapshot
    result = kbatch("producers", "--format", "jsonl", str(directory), expect=1)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [(line["producer_epoch"], line["breaks"]) for line in lines if line["type"] == "producer"] == [
        (5, 0), (6, 0), (5, 1), (6, 0)]
    assert [line["code"] for line in lines if line["type"] == "finding"] == ["producer-epoch-backwards"]


# -- the partition's producer snapshots held against its log ----------------------------------------------------
#
# ProducerStateManager.writeSnapshot's layout, written here by hand (version 1): version int16, the CRC-32C of
# what follows, then the producer entries, each producerId int64, producerEpoch int16, lastSequence int32,
# lastOffset int64, offsetDelta int32, timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64.

T = 1_700_000_000_000
SNAPSHOT_FIELDS = ("producer_id", "epoch", "last_sequence", "last_offset", "offset_delta", "timestamp",
                   "coordinator_epoch", "current_txn_first_offset")


def _snapshot_file(entries: list[dict]) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(
        struct.pack(">qhiqiqiq", *(entry[name] for name in SNAPSHOT_FIELDS)) for entry in entries)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


def _log_with_producers() -> bytes:
    """Idempotent producer PID (offsets 0-2), producer 7's transaction left open (3), producer 8's committed (4,
    its COMMIT marker 5, coordinator epoch 11): offsets 0..5, a snapshot's at 6."""
    return b"".join([
        data(0, 0, [b"a", b"b"]),
        batch(2, [(None, b"c")], producer_id=PID, producer_epoch=0, base_sequence=2, timestamp=T + 1),
        batch(3, [(None, b"t")], producer_id=7, producer_epoch=3, base_sequence=0, transactional=True, timestamp=T + 2),
        batch(4, [(None, b"u")], producer_id=8, producer_epoch=5, base_sequence=0, transactional=True, timestamp=T + 3),
        batch(5, [end_marker("COMMIT", 11)], control=True, transactional=True, producer_id=8, producer_epoch=5,
              timestamp=T + 4)])


def _state_at_6() -> list[dict]:
    """What ProducerAppendInfo makes of _log_with_producers (appendDataBatch: the last batch's sequence, offset,
    offset delta and maxTimestamp, its transaction's first offset; appendEndTxnMarker: the coordinator epoch,
    the marker's timestamp, no transaction), worked by hand; and producer 99, whose batches are gone from the
    log (retention), which Kafka keeps in its snapshots."""
    return [
        dict(producer_id=7, epoch=3, last_sequence=0, last_offset=3, offset_delta=0, timestamp=T + 2,
             coordinator_epoch=-1, current_txn_first_offset=3),
        dict(producer_id=8, epoch=5, last_sequence=0, last_offset=4, offset_delta=0, timestamp=T + 4,
             coordinator_epoch=11, current_txn_first_offset=-1),
        dict(producer_id=99, epoch=2, last_sequence=41, last_offset=-1, offset_delta=0, timestamp=T,
             coordinator_epoch=-1, current_txn_first_offset=-1),
        dict(producer_id=PID, epoch=0, last_sequence=2, last_offset=2, offset_delta=0, timestamp=T + 1,
             coordinator_epoch=-1, current_txn_first_offset=-1)]


def _snapshotted(tmp_path, entries: list[dict]):
    directory = _partition(tmp_path, _log_with_producers())
    (directory / f"{6:020d}.snapshot").write_bytes(_snapshot_file(entries))
    return directory


def test_a_snapshot_that_agrees_with_the_log_adds_no_finding(tmp_path, kbatch):
    directory = _snapshotted(tmp_path, _state_at_6())
    producers, findings = _producers(kbatch, directory)
    assert findings == []
    assert {line["producer_id"] for line in producers} == {PID, 7, 8}   # 99, only in the snapshot, is not the log's
    result = kbatch("producers", str(directory))
    assert result.code == 0, result.err
    assert "  held against 1 .snapshot file: they agree with the log\n" in result.out


@pytest.mark.parametrize(("slot", "name", "wrong"), [
    (3, "epoch", 1), (3, "last_sequence", 7), (3, "last_offset", 1), (3, "offset_delta", 1), (0, "timestamp", T),
    (1, "coordinator_epoch", 10),
    (0, "current_txn_first_offset", -1),   # the snapshot has producer 7's open transaction closed
    (1, "current_txn_first_offset", 4),    # ... and producer 8's committed one still open
])
def test_a_snapshot_that_disagrees_with_the_log(tmp_path, kbatch, slot, name, wrong):
    entries = _state_at_6()
    right, entries[slot][name] = entries[slot][name], wrong
    directory = _snapshotted(tmp_path, entries)
    result = kbatch("producers", "--format", "jsonl", str(directory))
    assert result.code == 1, result.err
    findings = [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "finding"]
    producer_id = entries[slot]["producer_id"]
    assert [(f["file"], f["code"], f["severity"], f["pos"], f["field"], f["expected"], f["actual"]) for f in findings] \
        == [(str(directory / f"{6:020d}.snapshot"), "snapshot-mismatch", "error", 10 + 46 * slot,
             f"producer_entries[{slot}].{name}", f"{right} (producer {producer_id} in the log below offset 6)",
             str(wrong))]
    table = kbatch("producers", str(directory))
    assert table.code == 1
    assert "held against 1 .snapshot file: 1 finding (below)" in table.out
    # only the producers asked for: the disagreement of another is not theirs
    other = next(pid for pid in (PID, 7, 8) if pid != producer_id)
    assert kbatch("producers", "--producer-id", str(other), str(directory)).code == 0
    assert kbatch("producers", "--producer-id", str(producer_id), str(directory)).code == 1


def test_a_producer_of_the_log_missing_from_a_snapshot_is_a_warning(tmp_path, kbatch):
    """Kafka drops a producer idle past producer.id.expiration.ms (ProducerStateManager.removeExpiredProducers)."""
    directory = _snapshotted(tmp_path, [entry for entry in _state_at_6() if entry["producer_id"] != PID])
    result = kbatch("producers", "--format", "jsonl", str(directory))
    assert result.code == 0, result.err   # a warning
    findings = [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "finding"]
    assert [(f["code"], f["severity"]) for f in findings] == [("snapshot-missing-producer", "warning")]
    assert f"producer {PID}" in findings[0]["expected"]


def test_a_snapshot_that_does_not_read_is_damage(tmp_path, kbatch):
    directory = _snapshotted(tmp_path, _state_at_6())
    path = directory / f"{6:020d}.snapshot"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0x01   # under its CRC
    path.write_bytes(bytes(raw))
    result = kbatch("producers", "--format", "jsonl", str(directory))
    assert result.code == 1, result.err
    findings = [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "finding"]
    assert [(f["file"], f["code"]) for f in findings] == [(str(path), "crc-mismatch")]


def test_snapshots_are_held_only_when_every_segment_is_read(tmp_path, kbatch):
    """A snapshot holds the state the whole log below it built: with a segment left out, there is nothing to hold
    it to (the wrong epoch here goes unseen), and no line says it was."""
    entries = _state_at_6()
    entries[3]["epoch"] = 1
    directory = _snapshotted(tmp_path, entries)
    (directory / f"{6:020d}.log").write_bytes(data(6, 3, [b"d"]))
    result = kbatch("producers", str(directory / f"{6:020d}.log"))
    assert result.code == 0, result.err
    assert "held against" not in result.out
    assert _producers(kbatch, directory / f"{6:020d}.log")[1] == []
    assert kbatch("producers", str(directory)).code == 1


@pytest.mark.real_kafka
def test_a_healthy_brokers_producers_break_no_rule(real_kafka, kbatch):
    """Every partition of the real broker (idempotent and transactional producers, compaction, aborts,
    DeleteRecords): no producer rule fires, the transactional producers are named, and every producer .snapshot
    the broker wrote (at each roll, and at its clean shutdown) agrees with the log."""
    result = kbatch("producers", "--format", "jsonl", str(real_kafka.stopped))
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line for line in lines if line["type"] == "finding"] == []
    producers = [line for line in lines if line["type"] == "producer"]
    assert len(producers) > 5
    assert {"txn-b"} <= {line["transactional_id"] for line in producers}
    table = kbatch("producers", str(real_kafka.stopped))
    assert table.code == 0, table.err
    verdicts = {}   # each partition's directory: what its heading's block says of its snapshots (None: nothing)
    for block in table.out.strip().split("\n\n"):
        held = re.search(r"^  held against \d+ \.snapshot files?: (.*)$", block, re.M)
        verdicts[block.split(": ", 1)[0]] = held[1] if held else None
    snapshotted = {partition for partition in verdicts if any(Path(partition).glob("*.snapshot"))}
    assert len(snapshotted) > 5
    assert {partition: verdicts[partition] for partition in snapshotted} == {
        partition: "they agree with the log" for partition in snapshotted}


def _producers(kbatch, *paths) -> tuple[list[dict], list[dict]]:
    """kbatch producers --format jsonl on ``paths``, which a healthy broker wrote: its producer lines and its
    findings, once it exits 0."""
    result = kbatch("producers", "--format", "jsonl", *map(str, paths))
    assert result.code == 0, result.out[-2000:] + result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    return ([line for line in lines if line["type"] == "producer"],
            [line for line in lines if line["type"] == "finding"])


def _kafka_batches(real_kafka, segment) -> list[dict]:
    """Each batch of a segment as Kafka's DumpLogSegments --deep-iteration --print-data-log prints it: its
    "name: value" fields, with its records' payloads (a data batch) or its marker (a control batch)."""
    batches = []
    for line in real_kafka.broker.dump_log_segments("--deep-iteration", "--print-data-log", "--files",
                                                    str(segment)).splitlines():
        if line.startswith("baseOffset:"):
            batches.append({**dict(re.findall(r"(\w+): (\S+)", line)), "payloads": []})
        elif line.startswith("| offset:"):
            if "endTxnMarker: " in line:
                batches[-1]["marker"] = re.search(r"endTxnMarker: (\w+)", line)[1]
            else:
                batches[-1]["payloads"].append(line.split(" payload: ", 1)[1])
    return batches


@pytest.mark.real_kafka
def test_a_transactional_producer_restarted_under_its_transactional_id(real_kafka, kbatch):
    """tests/kafka/Workload.java's restarted(): two producers in turn under one transactional.id, each committing
    a transaction; the first left a second one open, which the coordinator aborted (its marker bumping the
    epoch) when the second called initTransactions. kbatch producers, held to the batches as Kafka's
    DumpLogSegments prints them and to the leader's DescribeProducers: one producer id, an entry per epoch its
    data or its markers were written under (a marker's epoch is the producer's from then on:
    ProducerAppendInfo.appendEndTxnMarker), the second producer's above the abort marker's and that above the
    first's, no rule broken, the transactional id named from __transaction_state; kbatch txn shows the abort."""
    from .real_kafka import producer_states

    partition = real_kafka.stopped / "restarted-0"
    coordinator = sorted(real_kafka.stopped.glob("__transaction_state-*"))
    kafka = _kafka_batches(real_kafka, partition / f"{0:020d}.log")
    data = [b for b in kafka if b["isControl"] == "false"]
    expected = {}   # (producer id, epoch): [first sequence, last sequence, first offset, last offset]
    for b in kafka:   # an epoch a marker began starts at the marker; its sequences are its data's (-1: none)
        key = (int(b["producerId"]), int(b["producerEpoch"]))
        entry = expected.setdefault(key, [-1, -1, int(b["baseOffset"]), int(b["lastOffset"])])
        if b["isControl"] == "false":
            if entry[1] == -1:
                entry[0] = int(b["baseSequence"])
            entry[1], entry[3] = int(b["lastSequence"]), int(b["lastOffset"])
    producers, findings = _producers(kbatch, partition, *coordinator)
    assert findings == []
    assert {(p["producer_id"], p["producer_epoch"]): [p["first_sequence"], p["last_sequence"], p["first_offset"],
                                                     p["last_offset"]] for p in producers} == expected
    assert {p["transactional_id"] for p in producers} == {"txn-restarted"}
    without, _ = _producers(kbatch, partition)
    assert {p["transactional_id"] for p in without} == {None}

    ((producer_id, current_epoch, _, open_from),) = producer_states(real_kafka.workload)["restarted-0"]
    assert {p["producer_id"] for p in producers} == {producer_id} and open_from == -1
    (abort,) = [b for b in kafka if b.get("marker") == "ABORT"]
    run_epochs = [{int(b["producerEpoch"]) for b in data if b["payloads"][0].startswith(f"run {run} ")}
                  for run in (0, 1)]
    assert max(run_epochs[0]) < int(abort["producerEpoch"]) < min(run_epochs[1]) <= current_epoch
    marker_epochs = {int(b["producerEpoch"]) for b in kafka if b["isControl"] == "true"}
    assert {p["producer_epoch"] for p in producers} == run_epochs[0] | run_epochs[1] | marker_epochs
    assert producers[-1]["producer_epoch"] == current_epoch   # the last marker's, as the leader's entry holds it

    result = kbatch("txn", "--format", "jsonl", str(partition), *map(str, coordinator))
    assert result.code == 0, result.err
    transactions = [line for line in map(json.loads, result.out.splitlines()) if line["type"] == "transaction"]
    left_open = [b for b in data if b["payloads"][0].startswith("run 0 left open")]
    assert [(t["first_offset"], t["outcome"], t["marker_offset"], t["marker_epoch"]) for t in transactions
            if t["outcome"] == "ABORT"] == [(int(left_open[0]["baseOffset"]), "ABORT", int(abort["baseOffset"]),
                                             int(abort["producerEpoch"]))]
    assert [t["outcome"] for t in transactions] == ["COMMIT", "ABORT", "COMMIT"]


@pytest.mark.real_kafka
def test_an_idempotent_producer_whose_connections_are_cut_retries_without_duplicates(real_kafka, kbatch):
    """tests/kafka/Workload.java's retried(): a proxy lost the broker's answer to three of an idempotent producer's
    Produce requests and cut the connection; the producer sent each batch again with the same sequence and the
    broker, which had appended it, did not append it again. kbatch producers: one producer, its sequences
    unbroken from 0, as the leader's DescribeProducers ends them, no duplicate; the records in the log are
    those a consumer read, each once."""
    from .real_kafka import producer_states

    lost, retried = map(int, re.search(r"^retried: answers lost (\d+), records retried (\d+)$", real_kafka.workload,
                                       re.M).groups())
    assert lost == 3 and retried >= lost   # the producer did send batches the broker had written again
    consumed = [(int(offset), value) for offset, value in re.findall(r"^retried: consumed (\d+) (.*)$",
                                                                     real_kafka.workload, re.M)]
    assert consumed == [(i, f"retried {i}") for i in range(60)]

    partition = real_kafka.stopped / "retried-0"
    producers, findings = _producers(kbatch, partition)
    assert findings == []
    ((producer_id, epoch, last_sequence, open_from),) = producer_states(real_kafka.workload)["retried-0"]
    assert [(p["producer_id"], p["producer_epoch"], p["first_sequence"], p["last_sequence"], p["first_offset"],
             p["last_offset"], p["records"]) for p in producers] == [(producer_id, epoch, 0, last_sequence, 0, 59, 60)]
    result = kbatch("dump", "--records", "--format", "jsonl", "--decode", "utf8", str(partition))
    assert result.code == 0, result.err
    logged = [(record["offset"], record["value"]["utf8"]) for line in result.out.splitlines()
              for item in [json.loads(line)] if item["type"] == "batch" for record in item["records"]]
    assert logged == consumed


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


@pytest.mark.parametrize("command, name", [(["producers"], "00000000000000000027.snapshot"),
                                           (["txn"], "00000000000000000027.txnindex"),
                                           (["offsets"], "00000000000000000000.index"),
                                           (["verify-crc", "--deep"], "00000000000000000027.snapshot"),
                                           (["grep", "x"], "leader-epoch-checkpoint"),
                                           (["stats"], "00000000000000000000.timeindex")])
def test_a_file_beside_the_segments_named_alone_is_not_read_as_a_segment(kbatch, command, name):
    """A healthy producer snapshot (or index, or checkpoint) named on the command line was read as a log
    segment and reported as damaged (resync, unknown-magic): it is passed over, saying what it is and what
    reads it."""
    path = f"fixtures/partition/orders-0/{name}"
    result = kbatch(*command, path, expect=2)
    assert "resync" not in result.out + result.err and "unknown-magic" not in result.out + result.err
    assert f"kbatch: cannot read {path}: " in result.err and "not a log segment" in result.err
    assert "kbatch dump" in result.err
