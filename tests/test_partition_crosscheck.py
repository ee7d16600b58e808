"""A partition directory held against its log: ``verify-crc --deep`` and ``--index-only``.

fixtures/make_partition.py writes the clean partition and one copy per injected inconsistency (its
INJECTIONS); each copy must yield the finding the builder names, about the file it names.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import crc32c
import pytest

from kbatch.format.findings import CODES

from .test_partition_files import PARTITION, _builder

CLEAN = PARTITION / "orders-0"
BUILDER = _builder()

# Every finding code about the files beside a segment, and where it is made to happen.
PARTITION_CODES = {
    # read on their own: tests/test_partition_files.py
    "partial-entry", "ignored-partial-entry", "index-order", "offset-below-base", "unknown-version", "bad-checkpoint",
    "unexpected-key", "line-too-long", "too-large", "bad-quorum-state", "bad-meta-properties",
    # held against the log: here, by the builder's injections or the crafted copies below
    *(code for _, code, _ in BUILDER.INJECTIONS.values()),
    "txnindex-unmatched", "snapshot-missing-producer", "epoch-missing", "segment-overlap", "segment-gap",
    "timeindex-missing-max",
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    return BUILDER.build_broken(CLEAN, tmp_path_factory.mktemp("broken"))


def _findings(kbatch, *args, expect: int) -> list[dict]:
    """verify-crc's findings on ``args``, once its exit status is the one expected."""
    result = kbatch("verify-crc", "--format", "jsonl", *args)
    assert result.code == expect, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    return [line for line in lines if line["type"] == "finding"]


def _copy(tmp_path):
    copy = tmp_path / "orders-0"
    shutil.copytree(CLEAN, copy)
    return copy


@pytest.mark.parametrize("mode", ["--deep", "--index-only"])
def test_the_clean_partition_verifies_with_no_error(kbatch, mode):
    findings = _findings(kbatch, mode, str(CLEAN), expect=0)
    # Only the active segment's preallocated index tails: information, not damage.
    assert [(f["file"].rsplit("/", 1)[-1], f["code"], f["severity"]) for f in findings] == [
        ("00000000000000000053.index", "zero-tail", "info"), ("00000000000000000053.timeindex", "zero-tail", "info")]


def test_a_log_directory_checks_each_partition(kbatch):
    findings = _findings(kbatch, "--index-only", str(PARTITION), expect=0)
    assert {f["file"].rsplit("/", 2)[-2] for f in findings} == {"orders-0"}


@pytest.mark.parametrize("mode", ["--deep", "--index-only"])
@pytest.mark.parametrize("form", ["glob", "every segment named"])
def test_a_partition_whose_every_segment_is_named_is_cross_checked_as_its_directory(kbatch, broken, mode, form):
    """`verify-crc --deep '/var/kafka-logs/*/*.log'` cross-checks every partition, as the directory would."""
    injected = broken["index-entry-into-batch"]
    directory = injected["directory"]
    named = [f"{directory}/*.log"] if form == "glob" else sorted(str(path) for path in
                                                                  Path(directory).glob("*.log"))
    findings = _findings(kbatch, mode, *named, expect=1)
    assert findings == _findings(kbatch, mode, directory, expect=1)
    assert (injected["file"], injected["finding"]) in {
        (f["file"].rsplit("/", 1)[-1], f["code"]) for f in findings}


def test_some_segments_of_a_partition_are_not_cross_checked_and_it_is_said(kbatch):
    one = str(sorted(CLEAN.glob("*.log"))[0])
    result = kbatch("verify-crc", "--deep", one)
    assert result.code == 0
    assert "no partition cross-checked" in result.err and f"{CLEAN}: 1 of its 3 segments" in result.err
    assert "(cross-checks)" not in result.out
    assert kbatch("verify-crc", "--deep", "--quiet", one).err == ""


@pytest.mark.parametrize("named", [["{one}"], ["fixtures/partition/orders-0/0000000000000000002*.log"]])
def test_index_only_with_no_partition_to_check_is_a_usage_error(kbatch, named):
    one = str(sorted(CLEAN.glob("*.log"))[0])
    result = kbatch("verify-crc", "--index-only", *(arg.format(one=one) for arg in named))
    assert result.code == 2 and result.out == ""
    assert "--index-only cross-checks whole partitions" in result.err and "1 of its 3 segments" in result.err


@pytest.mark.parametrize("mode", ["--deep", "--index-only"])
@pytest.mark.parametrize("name", list(BUILDER.INJECTIONS))
def test_each_injected_inconsistency_is_found_in_the_right_file(kbatch, broken, name, mode):
    injected = broken[name]
    findings = _findings(kbatch, mode, injected["directory"], expect=1)
    named = {(f["file"].rsplit("/", 1)[-1], f["code"]) for f in findings}
    expected = injected["finding"]
    if mode == "--deep" and expected == "segment-base-mismatch":
        expected = "below-segment-base"   # the segment's own check reports that batch, once
    assert (injected["file"], expected) in named, named
    # No batch is reported twice for one fault.
    first_batch = [f for f in findings if f["file"].endswith(injected["file"]) and f["pos"] == 0
                   and f["code"] in ("segment-base-mismatch", "below-segment-base")]
    assert len(first_batch) <= 1, first_batch


def test_findings_give_the_position_in_both_files(kbatch, broken):
    findings = _findings(kbatch, "--index-only", broken["index-entry-into-batch"]["directory"], expect=1)
    (finding,) = [f for f in findings if f["code"] == "index-not-batch-start"]
    assert (finding["pos"], finding["field"], finding["actual"]) == (8, "position", "952")
    assert "00000000000000000000.log pos 948" in finding["expected"]


def test_plain_verify_crc_does_not_cross_check(kbatch, broken):
    assert _findings(kbatch, broken["txnindex-lost"]["directory"], expect=0) == []


# -- crafted copies for the codes no injection makes -----------------------------------------------------------


def _rewrite_snapshot(path, keep):
    raw = path.read_bytes()
    entries = [raw[10 + 46 * i:10 + 46 * (i + 1)] for i in range(struct.unpack_from(">i", raw, 6)[0])]
    body = struct.pack(">i", len(keep)) + b"".join(entries[i] for i in keep)
    path.write_bytes(struct.pack(">hI", 1, crc32c.crc32c(body)) + body)


def test_txnindex_entry_without_abort_marker(kbatch, tmp_path):
    copy = _copy(tmp_path)
    path = copy / "00000000000000000000.txnindex"
    path.write_bytes(path.read_bytes() + struct.pack(">hqqqq", 0, 2002, 14, 21, 22))   # 21 is a COMMIT
    findings = _findings(kbatch, "--index-only", str(copy), expect=1)
    assert [(f["code"], f["pos"]) for f in findings if f["file"].endswith(".txnindex")] == [("txnindex-unmatched", 34)]


def test_snapshot_without_a_producer_of_the_log(kbatch, tmp_path):
    copy = _copy(tmp_path)
    _rewrite_snapshot(copy / "00000000000000000053.snapshot", keep=[1, 2])
    findings = _findings(kbatch, "--index-only", str(copy), expect=0)   # a warning: not damage
    missing = [f for f in findings if f["code"] == "snapshot-missing-producer"]
    assert len(missing) == 1 and "producer 1001" in missing[0]["expected"]


def test_epoch_of_the_log_missing_from_the_checkpoint(kbatch, tmp_path):
    copy = _copy(tmp_path)
    (copy / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n5 53\n")
    findings = _findings(kbatch, "--index-only", str(copy), expect=1)
    (missing,) = [f for f in findings if f["code"] == "epoch-missing"]
    assert missing["file"].endswith("leader-epoch-checkpoint") and "'2 25'" in missing["expected"]
    assert "00000000000000000000.log pos 2025" in missing["expected"]


def test_segments_that_overlap(kbatch, tmp_path):
    copy = _copy(tmp_path)
    for path in copy.glob("00000000000000000053.*"):
        path.rename(copy / f"{50:020d}{path.suffix}")
    findings = _findings(kbatch, "--index-only", str(copy), expect=1)
    assert ("00000000000000000050.log", "segment-overlap") in {(f["file"].rsplit("/", 1)[-1], f["code"]) for f in findings}


def test_segments_with_a_gap_between(kbatch, tmp_path):
    copy = _copy(tmp_path)
    log = copy / "00000000000000000027.log"
    log.write_bytes(log.read_bytes()[:2047])   # without its last batch (offsets 51..52)
    # the gap is information; the index, time index and snapshot entries of the batch gone are errors
    findings = _findings(kbatch, "--index-only", str(copy), expect=1)
    (gap,) = [f for f in findings if f["code"] == "segment-gap"]
    assert gap["severity"] == "info" and gap["file"].endswith("00000000000000000053.log")
    assert "51..52" in gap["actual"]


def test_rolled_time_index_without_its_largest_timestamp(kbatch, tmp_path):
    copy = _copy(tmp_path)
    path = copy / "00000000000000000000.timeindex"
    path.write_bytes(path.read_bytes()[:-12])
    findings = _findings(kbatch, "--index-only", str(copy), expect=0)   # a warning: not damage
    assert [(f["file"].rsplit("/", 1)[-1], f["code"]) for f in findings if f["severity"] != "info"] == [
        ("00000000000000000000.timeindex", "timeindex-missing-max")]


def test_every_partition_code_is_known():
    assert PARTITION_CODES <= set(CODES)


@pytest.mark.parametrize("start", [24, 26])
def test_an_epoch_entry_must_lie_between_the_epochs_before_it_and_its_first_batch(kbatch, tmp_path, start):
    """Epoch 2's first batch is offset 25 and epoch 0's last batch ends at 24, no gap between: only 25 fits.
    (Where the cleaner removed batches, anything above the epoch before and up to the first batch left does:
    tests/test_real_kafka.py holds a compacted partition of a real broker to that.)"""
    copy = _copy(tmp_path)
    (copy / "leader-epoch-checkpoint").write_text(f"0\n3\n0 0\n2 {start}\n5 53\n")
    findings = _findings(kbatch, "--index-only", str(copy), expect=1)
    (mismatch,) = [f for f in findings if f["code"] == "epoch-mismatch"]
    assert mismatch["actual"] == str(start) and "above 24" in mismatch["expected"] and "at most 25" in mismatch["expected"]


# -- every file the cross-checks read is checked on its own too, as dump checks it -------------------------


def _log_directory(tmp_path):
    log_dir = tmp_path / "logs"
    shutil.copytree(CLEAN, log_dir / "orders-0")
    # what a broker writes: cleaner-offset-checkpoint empty (LogCleanerManager), the others with a line a partition
    (log_dir / "cleaner-offset-checkpoint").write_bytes(b"")
    (log_dir / "recovery-point-offset-checkpoint").write_bytes(b"0\n1\norders 0 53\n")
    return log_dir


def test_a_healthy_log_directorys_checkpoints_verify(kbatch, tmp_path):
    findings = _findings(kbatch, "--deep", str(_log_directory(tmp_path)), expect=0)
    assert {f["code"] for f in findings} == {"zero-tail"}


@pytest.mark.parametrize("name, content, code", [
    ("replication-offset-checkpoint", b"0\n2\norders 0 53\n", "bad-checkpoint"),
    ("orders-0/partition.metadata", b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n", "bad-checkpoint"),
    ("orders-0/partition.metadata", b"version: " + b"9" * 5000 + b"\ntopic_id: x\n", "bad-checkpoint"),
])
def test_verify_crc_deep_flags_what_dump_flags(kbatch, tmp_path, name, content, code):
    log_dir = _log_directory(tmp_path)
    (log_dir / name).write_bytes(content)
    findings = _findings(kbatch, "--deep", str(log_dir), expect=1)
    assert [(f["file"], f["code"]) for f in findings if f["severity"] == "error"] == [(str(log_dir / name), code)]
    dumped = kbatch("dump", "--format", "jsonl", str(log_dir / name))
    assert dumped.code == 1 and code in dumped.out


@pytest.mark.parametrize("log_start, epochs, mismatch", [
    ("orders 0 30", "2 30\n5 53", False),     # DeleteRecords to 30: truncateFromStart moved epoch 2 up to it
    ("orders 0 30", "2 31\n5 53", False),     # ... or past it, where the checkpoint lags (written once a minute)
    ("orders 0 30", "2 60\n5 53", True),      # ... but never past the next epoch's first batch
    ("orders 0 30", "0 0\n2 25\n5 53", True),  # ... and dropped epoch 0, whose successor starts below it
    (None, "2 30\n5 53", False),              # no log-start-offset-checkpoint beside it: the log cannot tell
])
def test_epochs_below_the_log_start_offset(kbatch, tmp_path, log_start, epochs, mismatch):
    """LeaderEpochFileCache.truncateFromStart(logStartOffset) after DeleteRecords (the share coordinator prunes
    __share_group_state so): the records below the log start offset stay in the first segment, the checkpoint's
    first entry starts at the log start offset, and the epochs before it are gone."""
    partition = tmp_path / "logs" / "orders-0"
    shutil.copytree(CLEAN, partition)
    if log_start:
        (partition.parent / "log-start-offset-checkpoint").write_text(f"0\n1\n{log_start}\n")
    lines = epochs.splitlines()
    (partition / "leader-epoch-checkpoint").write_text(f"0\n{len(lines)}\n{epochs}\n")
    findings = _findings(kbatch, "--index-only", str(partition), expect=1 if mismatch else 0)
    codes = [f["code"] for f in findings if f["code"].startswith("epoch-")]
    assert codes == (["epoch-mismatch"] if mismatch else [])


# -- what the log cleaner leaves of an aborted transaction (Cleaner, CleanedTransactionMetadata) ----------------
# Bytes worked by hand (tests/handmade.py): producer 5's transaction aborted, producer 6 writing beside it.


def _compacted(tmp_path, log: bytes, *entries: bytes) -> Path:
    directory = tmp_path / "compacted-0"
    directory.mkdir(parents=True)
    (directory / f"{0:020d}.log").write_bytes(log)
    (directory / f"{0:020d}.txnindex").write_bytes(b"".join(entries))
    return directory


def _txnindex_findings(kbatch, directory, expect: int) -> list[tuple[str, str, str]]:
    findings = _findings(kbatch, "--deep", str(directory), expect=expect)
    return [(f["code"], f["field"], f["expected"]) for f in findings if f["severity"] != "info"]


def _marker(offset: int, producer_id: int = 5) -> bytes:
    from .handmade import batch, end_marker

    return batch(offset, [end_marker("ABORT", 0)], control=True, transactional=True, producer_id=producer_id,
                 producer_epoch=0)


def _other(offset: int, count: int = 1) -> bytes:
    from .handmade import batch

    return batch(offset, [(b"k%d" % i, b"v") for i in range(count)], producer_id=6, producer_epoch=0,
                 base_sequence=offset)


def test_an_aborted_transaction_whose_batches_the_cleaner_removed_verifies_clean(kbatch, tmp_path):
    """Offsets 0-1 held producer 5's aborted batch; the cleaner removed it and kept the ABORT marker (3) and its
    .txnindex entry, which still says the transaction began at 0 (CleanedTransactionMetadata)."""
    from .handmade import aborted_txn

    directory = _compacted(tmp_path, _other(2) + _marker(3) + _other(4), aborted_txn(5, 0, 3, 4))
    assert _txnindex_findings(kbatch, directory, expect=0) == []


def test_an_aborted_transaction_the_cleaner_kept_the_last_batch_header_of_verifies_clean(kbatch, tmp_path):
    """The producer's last batch stays as an empty header (Cleaner.cleanInto: RETAIN_EMPTY) while the one before
    it (offset 0) is gone: the entry's first offset lies below the first batch left of the transaction."""
    from .handmade import aborted_txn, empty_header

    log = empty_header(1, 1, transactional=True, producer_id=5, producer_epoch=0, base_sequence=1) \
        + _marker(2) + _other(3)
    directory = _compacted(tmp_path, log, aborted_txn(5, 0, 2, 3))
    assert _txnindex_findings(kbatch, directory, expect=0) == []
    # Had nothing been removed (no gap at offset 0), the entry would be wrong: the transaction began at 1.
    directory = _compacted(tmp_path / "whole", _other(0) + log, aborted_txn(5, 0, 2, 3))
    assert _txnindex_findings(kbatch, directory, expect=1) == [
        ("txnindex-mismatch", "first_offset", "1 (ABORT marker at 00000000000000000000.log pos 132)")]


@pytest.mark.parametrize("first, where", [
    (0, "the first offset lies in the producer's committed transaction before"),
    (2, "the first offset lies in producer 6's batch, which is there"),
    (3, "the first offset is the marker's own"),
])
def test_a_cleaned_abort_entry_must_say_where_the_batches_were(kbatch, tmp_path, first, where):
    """The marker is there and none of the transaction's batches: the entry's first offset must be an offset in
    no batch, above the producer's batches before it (its committed transaction, 0-1, here)."""
    from .handmade import aborted_txn, batch, end_marker

    committed = batch(0, [(b"k", b"committed")], transactional=True, producer_id=5, producer_epoch=0,
                      base_sequence=0) \
        + batch(1, [end_marker("COMMIT", 0)], control=True, transactional=True, producer_id=5, producer_epoch=0)
    log = committed + _other(2) + _marker(3) + _other(4)
    findings = _txnindex_findings(kbatch, _compacted(tmp_path, log, aborted_txn(5, first, 3, 4)), expect=1)
    assert findings == [("txnindex-mismatch", "first_offset",
                         f"above 1 (producer 5's last offset before the ABORT marker at 00000000000000000000.log "
                         f"pos {len(committed) + len(_other(2))}) and at most -1 (the last offset in no batch before "
                         "it): where the cleaner removed the transaction's batches")]


def test_an_entry_with_no_marker_is_still_an_error_after_cleaning(kbatch, tmp_path):
    """The cleaner drops an entry with its marker's last batch, never the marker first: an entry whose
    last offset holds no ABORT marker (a gap there, or another producer's batch) is wrong."""
    from .handmade import aborted_txn

    directory = _compacted(tmp_path, _other(2) + _other(4), aborted_txn(5, 0, 3, 4))
    findings = _txnindex_findings(kbatch, directory, expect=1)
    assert [finding[0] for finding in findings] == ["txnindex-unmatched"]
    # A marker of another producer there: the entry names the wrong producer.
    directory = _compacted(tmp_path / "other", _other(2) + _marker(3, producer_id=9) + _other(4),
                           aborted_txn(5, 0, 3, 4))
    findings = _txnindex_findings(kbatch, directory, expect=1)
    assert [finding[:2] for finding in findings] == [("txnindex-mismatch", "producer_id")]


# -- directories renamed -delete, -future, -stray (LocalLog) -----------------------------------------------------


@pytest.mark.parametrize("state, missing", [("delete", False), ("future", True), ("stray", True)])
def test_a_deleted_partition_reloaded_has_an_empty_epoch_checkpoint(kbatch, tmp_path, state, missing):
    """LogLoader.load recovers nothing of a directory renamed -delete (its next offset is 0) and
    truncateFromEnd(0) empties its leader-epoch-checkpoint: "0\\n0\\n" as CheckpointFile writes no entry. A
    -future or -stray directory is loaded as any partition: there, an empty checkpoint is still wrong."""
    partition = tmp_path / "logs" / f"orders-0.3f1c2a0b9d8e4f7a6b5c4d3e2f1a0b9c-{state}"
    shutil.copytree(CLEAN, partition)
    (partition / "leader-epoch-checkpoint").write_text("0\n0\n")
    findings = _findings(kbatch, "--deep", str(partition), expect=1 if missing else 0)
    assert {f["code"] for f in findings if f["severity"] != "info"} == ({"epoch-missing"} if missing else set())
    # Entries there are still held to the log: one cut short is wrong whatever the directory's name.
    (partition / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    findings = _findings(kbatch, "--deep", str(partition), expect=1)
    assert {f["code"] for f in findings if f["severity"] != "info"} == {"epoch-missing"}


@pytest.mark.parametrize("state, applies", [(None, True), ("future", True), ("delete", False), ("stray", False)])
def test_the_log_start_checkpoint_speaks_for_the_current_and_future_directories_only(state, applies, tmp_path):
    """LogManager.checkpointLogStartOffsetsInDir writes the current and -future logs of a log directory
    (logsByDir): an entry for orders-0 is not about a -delete or -stray copy of it (a topic deleted and made
    again under its name has its own)."""
    from kbatch.partition.textfiles import log_start_offset

    name = "orders-0" if state is None else f"orders-0.3f1c2a0b9d8e4f7a6b5c4d3e2f1a0b9c-{state}"
    partition = tmp_path / name
    partition.mkdir()
    assert log_start_offset(str(partition)).offset is None
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n2\norders 1 7\norders 0 30\n")
    assert log_start_offset(str(partition)).offset == (30 if applies else None)
    assert log_start_offset(str(partition) + "/").offset == (30 if applies else None)
