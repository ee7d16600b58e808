"""``kbatch txn``: the transactions of a partition, read from its log (and the coordinator's)."""

from __future__ import annotations

import json
import struct

import pytest

from .helpers import FIXTURES, ROOT

TXN = FIXTURES / "internal" / "txn"
DATA = TXN / "payments-0" / "00000000000000000000.log"
COORDINATOR = TXN / "__transaction_state-0" / "00000000000000000000.log"


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def _lines(result) -> list[dict]:
    return [json.loads(line) for line in result.out.splitlines()]


def test_every_transaction_and_how_it_ended(kbatch):
    result = kbatch("txn", "--format", "jsonl", _rel(TXN))
    assert result.code == 0 and result.err == ""
    side = json.loads(DATA.with_suffix(".json").read_text())
    found = [line for line in _lines(result) if line["type"] == "transaction"]
    assert [{key: txn[key] for key in want} for txn, want in zip(found, side["transactions"])] == \
        side["transactions"]
    assert len(found) == len(side["transactions"])
    (partition,) = [line for line in _lines(result) if line["type"] == "partition"]
    # no replication-offset-checkpoint beside it: the high watermark, and so the last stable offset, unknown
    assert (partition["last_stable_offset"], partition["high_watermark"], partition["last_stable_offset_unknown"]) \
        == (None, None, "no replication-offset-checkpoint beside it records its high watermark")
    assert (partition["committed"], partition["aborted"], partition["empty"], partition["open"]) == (2, 1, 1, 2)
    coordinator = {line["transactional_id"]: line for line in _lines(result) if line["type"] == "coordinator"}
    assert sorted(coordinator) == ["tx-a", "tx-b", "tx-c", "tx-d", "tx-e"]    # tx-old: a tombstone
    assert coordinator["tx-e"]["state"] == "CompleteAbort"                     # the last word wins


def test_without_the_coordinator_nothing_is_called_hanging(kbatch):
    found = [line for line in _lines(kbatch("txn", "--format", "jsonl", _rel(DATA), expect=0))
             if line["type"] == "transaction"]
    assert [txn["outcome"] for txn in found] == ["COMMIT", "ABORT", "COMMIT", "OPEN", "OPEN"]
    assert not any(txn["hanging"] or txn["transactional_id"] for txn in found)


def test_the_table_names_what_holds_the_last_stable_offset(kbatch, text_snapshot):
    result = kbatch("txn", _rel(TXN))
    assert result.code == 0
    assert "last stable offset: unknown, no replication-offset-checkpoint beside it records its high watermark " \
        "(log end 14)\n  open transactions:\n" in result.out
    assert "abort --topic payments \\\n        --partition 0 --start-offset 9\n" in result.out
    assert "HANGING" in result.out and result.out.count("HANGING") == 1
    assert result.out == text_snapshot


def test_the_jsonl_is_pinned(kbatch, jsonl_snapshot):
    assert kbatch("txn", "--format", "jsonl", _rel(TXN), expect=0).out == jsonl_snapshot


def test_damage_is_reported_and_sets_the_exit_status(kbatch):
    result = kbatch("txn", "--format", "jsonl", "fixtures/damaged-truncated-tail.log")
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert any(line["type"] == "finding" and line["code"] == "truncated" for line in _lines(result))


def test_a_transactional_offset_commit_is_a_transaction_of_the_offsets_topic(kbatch):
    path = FIXTURES / "internal" / "__consumer_offsets-12" / "00000000000000000000.log"
    (txn,) = [line for line in _lines(kbatch("txn", "--format", "jsonl", _rel(path), expect=0))
              if line["type"] == "transaction"]
    assert (txn["producer_id"], txn["outcome"], txn["first_offset"], txn["marker_offset"]) == (7001, "COMMIT", 8, 9)


def test_the_same_partition_in_two_log_dirs_is_two_partitions(kbatch):
    internal = FIXTURES / "internal"
    paths = [internal / "__consumer_offsets-12", internal / "damaged" / "__consumer_offsets-0",
             internal / "__cluster_metadata-0", internal / "damaged" / "__cluster_metadata-0"]
    result = kbatch("txn", "--format", "jsonl", *map(_rel, paths), expect=1)
    partitions = [line for line in _lines(result) if line["type"] == "partition"]
    assert [(line["topic"], line["partition"]) for line in partitions] == [
        ("__cluster_metadata", 0), ("__consumer_offsets", 12), ("__cluster_metadata", 0), ("__consumer_offsets", 0)]
    assert len({line["directory"] for line in partitions}) == 4


PARTITION = FIXTURES / "partition" / "orders-0"


def test_the_txnindex_and_snapshot_files_are_held_against_the_log(kbatch):
    result = kbatch("txn", _rel(PARTITION))
    assert result.code == 0
    assert "held against 2 .txnindex and 2 .snapshot files: they agree with the log" in result.out
    (partition,) = [line for line in _lines(kbatch("txn", "--format", "jsonl", _rel(PARTITION)))
                    if line["type"] == "partition"]
    assert [path.rsplit("/", 1)[1] for path in partition["cross_checked"]] == [
        "00000000000000000000.txnindex", "00000000000000000027.snapshot", "00000000000000000027.txnindex",
        "00000000000000000053.snapshot"]
    assert partition["cross_check_findings"] == 0


def test_a_txnindex_that_disagrees_with_the_log_is_a_finding(kbatch, tmp_path):
    """An aborted transaction's .txnindex entry with another producer id (bytes 2..10, AbortedTxn), and a
    segment whose .txnindex is gone though the log holds an ABORT marker."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    for path in PARTITION.iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    index = directory / "00000000000000000000.txnindex"
    data = bytearray(index.read_bytes())
    data[2:10] = (4004).to_bytes(8, "big")
    index.write_bytes(bytes(data))
    (directory / "00000000000000000027.txnindex").unlink()
    result = kbatch("txn", "--format", "jsonl", str(directory))
    assert result.code == 1
    found = {(line["code"], line["file"].rsplit("/", 1)[1]) for line in _lines(result) if line["type"] == "finding"}
    assert found == {("txnindex-mismatch", "00000000000000000000.txnindex"),
                     ("txnindex-missing", "00000000000000000027.log")}
    table = kbatch("txn", str(directory))
    assert "held against 1 .txnindex and 2 .snapshot files: 2 findings (below)" in table.out


def test_an_empty_active_segment_is_read_too(kbatch, tmp_path):
    """A partition just rolled has an empty active segment: every segment was still read (it was taken for
    one left out, for want of a batch, and the partition went unchecked)."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    for path in PARTITION.iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    (directory / "00000000000000000053.log").write_bytes(b"")
    result = kbatch("txn", "--format", "jsonl", str(directory))
    (partition,) = [line for line in _lines(result) if line["type"] == "partition"]
    assert [path.rsplit("/", 1)[1] for path in partition["cross_checked"]] == [
        "00000000000000000000.txnindex", "00000000000000000027.snapshot", "00000000000000000027.txnindex",
        "00000000000000000053.snapshot"]
    assert partition["cross_check_findings"] == 0 and result.code == 0


def test_a_partition_read_in_part_is_not_cross_checked(kbatch):
    """The cross-checks walk every segment of the directory: only when all of them were asked for."""
    result = kbatch("txn", "--format", "jsonl", _rel(PARTITION / "00000000000000000027.log"))
    (partition,) = [line for line in _lines(result) if line["type"] == "partition"]
    assert partition["cross_checked"] == [] and result.code == 0


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_coordinator_table_never_splits_an_iso_time(width):
    """Long transactional ids and many partitions narrowed every column alike, "last update" too: its ISO
    time was folded over two lines.  It is kept whole; the ids and partitions wrap."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from kbatch.render.txn import _coordinator_table

    from .test_terminal import assert_iso_times_whole

    ids = {f"checkout-service-{n}-transactional-producer-{n}": SimpleNamespace(
        transactional_id=f"checkout-service-{n}-transactional-producer-{n}", producer_id=4000 + n, producer_epoch=n,
        state="Ongoing", partitions=[f"payments-{p}" for p in range(12)], timeout_ms=60000,
        last_update_timestamp=1700000000000 + n) for n in range(3)}
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(_coordinator_table(SimpleNamespace(ids=ids)))
    out = console.file.getvalue()
    assert_iso_times_whole(out, width)
    assert all(f"2023-11-14T22:13:20.00{n}Z" in out for n in range(3))
    assert all(len(line) <= width for line in out.splitlines())


def _coordinator_segment(tmp_path, records, *, flip_crc: bool = False) -> str:
    """A __transaction_state-0 segment of ``records`` (key, value) by kafka-python's builder."""
    from .test_hostile_text import _record_batch

    directory = tmp_path / "__transaction_state-0"
    directory.mkdir()
    data = bytearray(_record_batch(0, [(key, value, []) for key, value in records]))
    if flip_crc:
        data[data.index(_TXN_VALUE) + 9] ^= 0x01   # the value's producerId, under the CRC: 7 read as 6
    (directory / "00000000000000000000.log").write_bytes(bytes(data))
    return str(directory)


def _txn_key(tid: bytes) -> bytes:   # TransactionLogKey v0
    return struct.pack(">hh", 0, len(tid)) + tid


# TransactionLogValue v0: producerId 7, producerEpoch 0, timeout, status 4 (CompleteCommit), no partitions, times
_TXN_VALUE = struct.pack(">hqhibiqq", 0, 7, 0, 60_000, 4, 0, 1_700_000_000_000, 1_700_000_000_000)


def test_a_coordinator_record_that_does_not_read_is_a_finding_and_exits_1(kbatch, tmp_path):
    """A __transaction_state record whose key or value does not read is said, as dump says it, not passed over."""
    directory = _coordinator_segment(tmp_path, [(_txn_key(b"tx-good"), _TXN_VALUE),
                                                (_txn_key(b"tx-cut"), _TXN_VALUE[:9]),
                                                (b"\x00\x00\x7f\xff", _TXN_VALUE)])
    result = kbatch("txn", "--format", "jsonl", directory, expect=1)
    findings = [line for line in _lines(result) if line["type"] == "finding"]
    assert [(finding["code"], finding["field"]) for finding in findings] == [
        ("bad-internal-record", "records[1].value.producerId"),
        ("bad-internal-record", "records[2].key.transactionalId")]
    assert [line["transactional_id"] for line in _lines(result) if line["type"] == "coordinator"] == ["tx-good"]
    table = kbatch("txn", directory, expect=1).out
    assert "2 record(s) did not read" in table and "records[1].value.producerId" in table


def test_a_coordinator_batch_whose_crc_fails_is_not_believed(kbatch, tmp_path):
    directory = _coordinator_segment(tmp_path, [(_txn_key(b"tx-good"), _TXN_VALUE)], flip_crc=True)
    result = kbatch("txn", "--format", "jsonl", directory, expect=1)
    assert [line["code"] for line in _lines(result) if line["type"] == "finding"] == ["crc-mismatch"]
    assert not [line for line in _lines(result) if line["type"] == "coordinator"]


@pytest.mark.parametrize("command", ["producers", "retention"])
def test_the_other_readers_of_the_coordinator_say_so_too(kbatch, tmp_path, command):
    directory = _coordinator_segment(tmp_path, [(_txn_key(b"tx-cut"), _TXN_VALUE[:9])])
    result = kbatch(command, "--format", "jsonl", directory, expect=1)
    assert [line["field"] for line in _lines(result) if line["type"] == "finding"] == ["records[0].value.producerId"]


def _txn(first: int, last: int, marker: int | None = None, *, empty: bool = False):
    from kbatch.ops.txn import Transaction

    return Transaction("orders", 0, 7, 0, first, last, outcome="OPEN" if marker is None else "COMMIT",
                       marker_offset=marker, empty=empty)


@pytest.mark.parametrize("transactions, high_watermark, log_start, log_end, stable", [
    ([], 10, 0, 20, 10),                          # nothing unstable: the high watermark
    ([_txn(5, 6)], 10, 0, 20, 5),                 # open below it
    ([_txn(12, 13)], 10, 0, 20, 10),              # open above it: never past the high watermark
    ([_txn(5, 6, 10)], 10, 0, 20, 5),             # completed, its marker at the high watermark: unreplicated
    ([_txn(5, 6, 9)], 10, 0, 20, 10),             # its marker below it: removeUnreplicatedTransactions
    ([_txn(9, 9, 9, empty=True)], 5, 0, 20, 5),   # a marker with nothing open completes nothing
    ([_txn(3, 6)], 10, 5, 20, 5),                 # raised to the log start offset
    ([], 40, 0, 30, 30),                          # a checkpoint past the log end: updateHighWatermark's bound
    ([_txn(4, 5, 25)], 40, 0, 30, 30),            # ... where every marker lies below it
    ([_txn(3, 4, 8)], 2, 5, 30, 5),               # a checkpoint below the log start: the log start
])
def test_the_last_stable_offset_as_unified_log_gives_it(transactions, high_watermark, log_start, log_end, stable):
    from kbatch.ops.txn import last_stable_offset

    offset, holder = last_stable_offset(transactions, high_watermark, log_start, log_end)
    assert offset == stable
    held = stable < min(max(high_watermark, log_start), log_end)   # below the high watermark: a transaction's
    assert holder is (transactions[0] if held else None)


# -- the last stable offset as the broker has it: UnifiedLog.lastStableOffset, from the log directory's checkpoints

def _log_dir(tmp_path, segments: dict[int, list[bytes]], **checkpoints: int):
    """orders-0 holding ``segments`` (base offset: batches), and its offsets in the checkpoints named
    (replication_offset_checkpoint=..., log_start_offset_checkpoint=...): version 0, the count, the entry."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    for base, held in segments.items():
        (directory / f"{base:020d}.log").write_bytes(b"".join(held))
    for name, offset in checkpoints.items():
        (tmp_path / name.replace("_", "-")).write_text(f"0\n1\norders 0 {offset}\n")
    return directory


_PRODUCER = dict(transactional=True, producer_id=7, producer_epoch=0)


def _records(base: int, count: int, **fields) -> bytes:
    from .handmade import batch

    return batch(base, [(b"k", b"v%d" % (base + i)) for i in range(count)], **fields)


def _partition_line(kbatch, *paths) -> dict:
    result = kbatch("txn", "--format", "jsonl", *map(str, paths), expect=0)
    (partition,) = [line for line in _lines(result) if line["type"] == "partition"]
    return partition


def _stable(partition: dict) -> tuple:
    return partition["last_stable_offset"], partition["high_watermark"], partition["last_stable_offset_unknown"]


def test_the_last_stable_offset_is_never_above_the_high_watermark(kbatch, tmp_path):
    """A transaction open from 22, the high watermark at 10: UnifiedLog.lastStableOffset gives the high watermark.
    kbatch said the open transaction's first offset, 22."""
    directory = _log_dir(tmp_path, {0: [_records(0, 10)], 10: [_records(10, 10)],
                                    20: [_records(20, 2), _records(22, 3, base_sequence=0, **_PRODUCER)]},
                         replication_offset_checkpoint=10)
    assert _stable(_partition_line(kbatch, directory)) == (10, 10, None)


def test_a_completed_transaction_holds_the_last_stable_offset_until_the_high_watermark_passes_its_marker(
        kbatch, tmp_path, text_snapshot):
    """Producer 7's transaction 5..9, its COMMIT marker at 10, the high watermark at 10: not yet replicated
    (ProducerStateManager's unreplicatedTxns), it holds the last stable offset at 5; at 11 it holds nothing."""
    from .handmade import batch, end_marker

    directory = _log_dir(tmp_path, {0: [_records(0, 5), _records(5, 5, base_sequence=0, **_PRODUCER)],
                                    10: [batch(10, [end_marker("COMMIT", 0)], control=True, **_PRODUCER),
                                         _records(11, 9)]},
                         replication_offset_checkpoint=10)
    assert _stable(_partition_line(kbatch, directory)) == (5, 10, None)
    table = kbatch("txn", str(directory), expect=0)
    assert "last stable offset held at 5 by producer 7's transaction, whose COMMIT marker at 10 the high " \
        "watermark has not passed (high watermark 10, log end 20)" in table.out.replace("\n", " ")
    assert table.out.replace(str(tmp_path), "TMP") == text_snapshot
    (tmp_path / "replication-offset-checkpoint").write_text("0\n1\norders 0 11\n")
    assert _stable(_partition_line(kbatch, directory)) == (11, 11, None)


def test_the_last_stable_offset_is_raised_to_the_log_start_offset(kbatch, tmp_path):
    """A transaction open from 5, the log start offset at 7 (DeleteRecords): maybeIncrementFirstUnstableOffset
    raises the first unstable offset to 7."""
    directory = _log_dir(tmp_path, {0: [_records(0, 5), _records(5, 5, base_sequence=0, **_PRODUCER)],
                                    10: [_records(10, 10)]},
                         replication_offset_checkpoint=20, log_start_offset_checkpoint=7)
    assert _stable(_partition_line(kbatch, directory)) == (7, 20, None)


def test_the_last_stable_offset_is_unknown_where_the_checkpoints_or_segments_do_not_say(kbatch, tmp_path):
    directory = _log_dir(tmp_path, {0: [_records(0, 5), _records(5, 5, base_sequence=0, **_PRODUCER)],
                                    10: [_records(10, 10)]},
                         replication_offset_checkpoint=20)
    assert _stable(_partition_line(kbatch, directory)) == (5, 20, None)
    # one segment of two: the log end and the transactions would be guesses
    assert _stable(_partition_line(kbatch, directory / f"{0:020d}.log")) == (
        None, None, "not every segment of its partition directory was read")
    # "2O", a letter O: Kafka cannot read it (and takes the log directory offline)
    (tmp_path / "replication-offset-checkpoint").write_text("0\n1\norders 0 2O\n")
    assert _stable(_partition_line(kbatch, directory)) == (
        None, None, "replication-offset-checkpoint cannot be read")
    (tmp_path / "replication-offset-checkpoint").unlink()
    assert _stable(_partition_line(kbatch, directory)) == (
        None, None, "no replication-offset-checkpoint beside it records its high watermark")
    segment = tmp_path / "loose.log"   # a segment outside a partition directory
    segment.write_bytes((directory / f"{0:020d}.log").read_bytes())
    assert _stable(_partition_line(kbatch, segment)) == (
        None, None, "not in a partition directory (TOPIC-N): no high watermark checkpoint")
