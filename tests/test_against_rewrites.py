"""``kbatch pcap --against LOGDIR`` where the disk's batch is not the captured one byte for byte, and rightly so:
the broker's LogValidator rewrote it (maxTimestamp, LogAppendTime, a rebuild), or the log cleaner compacted it
since (MemoryRecords.filterTo).  Hop none, saying what was rewritten; a record changed besides is still a hop."""

from __future__ import annotations

import gzip
import struct

import crc32c
import pytest

pytest.importorskip("dpkt")

from tests import handmade  # noqa: E402
from tests.capture_builder import Capture, fetch_response, request, response  # noqa: E402
from tests.test_pcap import _as_written, _logdir, _matches, _produced, _write  # noqa: E402

TS = 1_700_000_000_000
PRODUCER = {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0}
THREE = handmade.batch(0, [(b"k1", b"v1"), (b"k1", b"v2"), (b"k2", b"v3")], **PRODUCER)
# what the cleaner leaves of THREE written at 500: base and last offset kept, the first k1 removed
COMPACTED = handmade.compacted(500, 502, [(501, b"k1", b"v2"), (502, b"k2", b"v3")], leader_epoch=5, **PRODUCER)


def _fetched(batch: bytes) -> Capture:
    return (Capture().send(request("Fetch", 12, 12, b"", flexible=True))
            .answer(response(12, fetch_response(12, {"orders": {0: batch}}), flexible=True)))


def _header_set(batch: bytes, *, attributes: int | None = None, max_timestamp: int | None = None) -> bytes:
    """``batch`` with its attributes or maxTimestamp set and its CRC recomputed (as DefaultRecordBatch does)."""
    out = bytearray(batch)
    if attributes is not None:
        out[21:23] = struct.pack(">h", attributes)
    if max_timestamp is not None:
        out[35:43] = struct.pack(">q", max_timestamp)
    out[17:21] = struct.pack(">I", crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


def _value_changed(batch: bytes, old: bytes, new: bytes) -> bytes:
    """``batch`` with a record's value ``old`` made ``new`` (as long), its CRC recomputed."""
    assert len(old) == len(new) and batch.count(old) == 1
    return _header_set(batch.replace(old, new))


def _gzip(base_offset: int, records: list[tuple[bytes, bytes]], level: int, leader_epoch: int = 0,
          deltas: tuple[int, ...] = (0, 1)) -> bytes:
    """A gzip v2 batch (attributes 1) of ``records`` at offset ``deltas``, compressed at ``level``."""
    payload = gzip.compress(b"".join(handmade.record(delta, key, value) for delta, (key, value) in zip(deltas, records)),
                            compresslevel=level, mtime=0)
    after_crc = struct.pack(">hiqqqhii", 1, len(records) - 1, TS, TS, 7, 0, 0, len(records)) + payload
    head = struct.pack(">qiib", base_offset, 4 + 1 + 4 + len(after_crc), leader_epoch, 2)
    return head + struct.pack(">I", crc32c.crc32c(after_crc)) + after_crc


def _one_match(kbatch, tmp_path, disk: bytes, capture: Capture, expect: int, name: str = "c"):
    logs = _logdir(tmp_path / name, disk)
    [found], summary = _matches(kbatch, "--against", logs, _write(tmp_path, capture, f"{name}.pcap"), expect=expect)
    return found, summary, logs


# -- the log cleaner (MemoryRecords.filterTo, buildRetainedRecordsInto) --------------------------------------------

def test_a_produced_batch_the_cleaner_compacted_since_is_hop_none_and_says_so(tmp_path, kbatch):
    found, summary, logs = _one_match(kbatch, tmp_path, COMPACTED, _produced(THREE), 0)
    assert (found["hop"], found["first_differing_byte"], found["base_offset"], found["disk_pos"]) == (
        "none", None, 500, 0)
    assert found["explanation"] == ("the broker wrote the client's records; since, the log cleaner compacted it, "
                                    "2 of its 3 records kept unchanged")
    assert summary["hops"] == {"none": 1} and summary["damaged"] is False
    table = kbatch("pcap", "--against", logs, str(tmp_path / "c.pcap"), expect=0).out
    assert "hop none: the broker wrote the client's records; since, the log cleaner compacted it, 2 of its 3 " \
           "records kept unchanged" in " ".join(table.split())


def test_a_compacted_batch_whose_kept_record_differs_is_still_the_brokers(tmp_path, kbatch):
    changed = _value_changed(COMPACTED, b"v3", b"v9")
    found, summary, _ = _one_match(kbatch, tmp_path, changed, _produced(THREE), 1)
    assert (found["hop"], found["first_differing_byte"], found["explanation"]) == (
        "broker", 11, "good on the wire, different on disk")   # (11: batchLength's low byte)
    assert summary["hops"] == {"broker": 1} and summary["damaged"] is True
    # a record the cleaner never removes (a different key) missing is no compaction either
    other = handmade.compacted(500, 502, [(501, b"k1", b"v2"), (502, b"k3", b"v3")], leader_epoch=5, **PRODUCER)
    found, _, _ = _one_match(kbatch, tmp_path, other, _produced(THREE), 1, "other")
    assert found["hop"] == "broker"


def test_a_batch_the_cleaner_emptied_or_marked_with_a_delete_horizon_is_hop_none(tmp_path, kbatch):
    empty = handmade.empty_header(500, 502, leader_epoch=5, **PRODUCER)
    found, _, _ = _one_match(kbatch, tmp_path, empty, _produced(THREE), 0)
    assert (found["hop"], found["explanation"]) == ("none", "the broker wrote the client's records; since, the log "
                                                            "cleaner removed its 3 records and kept it empty (a "
                                                            "producer's last batch)")
    marked = handmade.compacted(500, 502, [(500, b"k1", b"v1"), (501, b"k1", b"v2"), (502, b"k2", b"v3")],
                                delete_horizon=TS + 86_400_000, leader_epoch=5, **PRODUCER)
    found, _, _ = _one_match(kbatch, tmp_path, marked, _produced(THREE), 0, "marked")
    assert (found["hop"], found["explanation"]) == ("none", "the broker wrote the client's records; since, the log "
                                                            "cleaner marked it with a delete horizon, its records "
                                                            "unchanged")


def test_a_fetch_before_or_after_the_cleaner_ran_is_hop_none(tmp_path, kbatch):
    whole = _as_written(THREE, 500)
    found, summary, _ = _one_match(kbatch, tmp_path, COMPACTED, _fetched(whole), 0)
    assert (found["direction"], found["hop"], found["first_differing_byte"], found["explanation"]) == (
        "fetch", "none", None, "fetched before the log cleaner compacted it: the disk keeps 2 of the 3 records "
                               "fetched, unchanged")
    assert summary["hops"] == {"none": 1}
    found, _, _ = _one_match(kbatch, tmp_path, whole, _fetched(COMPACTED), 0, "later")
    assert (found["hop"], found["explanation"]) == (
        "none", "fetched compacted further than the disk holds it: 2 of the disk's 3 records, unchanged (the "
                "disk's state is older than the fetch, or another replica's)")


def test_a_compacted_fetch_whose_kept_record_differs_is_hop_fetch(tmp_path, kbatch):
    found, summary, _ = _one_match(kbatch, tmp_path, _as_written(THREE, 500),
                                   _fetched(_value_changed(COMPACTED, b"v3", b"v9")), 1)
    assert (found["hop"], found["first_differing_byte"]) == ("fetch", 11)
    assert summary["hops"] == {"fetch": 1} and summary["damaged"] is True


# -- the broker's LogValidator ------------------------------------------------------------------------------------

TWO = handmade.batch(0, [(b"k1", b"v1"), (b"k2", b"v2")], **PRODUCER)
OFF = _header_set(TWO, max_timestamp=TS + 1000)   # a client's maxTimestamp 1000 ms past its records' largest


def test_a_max_timestamp_the_broker_set_to_the_records_largest_is_hop_none(tmp_path, kbatch):
    """LogValidator.assignOffsetsNonCompressed: batch.setMaxTimestamp(CREATE_TIME, maxBatchTimestamp), the CRC
    recomputed: on disk, TWO as its records say."""
    found, summary, logs = _one_match(kbatch, tmp_path, _as_written(TWO, 500), _produced(OFF), 0)
    assert (found["hop"], found["first_differing_byte"], found["explanation"]) == (
        "none", None, "the broker wrote what the client sent, with maxTimestamp set to its records' largest, "
                      "1700000000000 (sent as 1700000001000)")
    assert summary["hops"] == {"none": 1} and summary["damaged"] is False
    table = kbatch("pcap", "--against", logs, str(tmp_path / "c.pcap"), expect=0).out
    assert "hop none: the broker wrote what the client sent, with maxTimestamp set" in " ".join(table.split())
    # setMaxTimestamp makes the attributes afresh (computeAttributes): a bit Kafka reserves, sent, is not written
    found, _, _ = _one_match(kbatch, tmp_path, _as_written(TWO, 500), _produced(_header_set(OFF, attributes=0x100)), 0,
                             "reserved")
    assert (found["hop"], found["first_differing_byte"]) == ("none", None)


def test_a_max_timestamp_the_broker_would_not_write_is_the_brokers(tmp_path, kbatch):
    """Only the records' largest: the disk's maxTimestamp anything else (or left as sent) is a change the
    broker made; so is a record's."""
    for name, disk in (("other", _header_set(_as_written(TWO, 500), max_timestamp=TS + 7)),
                       ("value", _value_changed(_as_written(TWO, 500), b"v2", b"v9"))):
        found, summary, _ = _one_match(kbatch, tmp_path, disk, _produced(OFF), 1, name)
        assert (found["hop"], found["first_differing_byte"]) == ("broker", 17)   # (17: the CRC)
        assert summary["hops"] == {"broker": 1}


def test_a_batch_stamped_with_the_log_append_time_is_hop_none(tmp_path, kbatch):
    """message.timestamp.type=LogAppendTime: setMaxTimestamp(LOG_APPEND_TIME, now), attributes bit 3 set."""
    stamped = _header_set(_as_written(TWO, 500), attributes=0x08, max_timestamp=TS + 5_000)
    found, _, _ = _one_match(kbatch, tmp_path, stamped, _produced(TWO), 0)
    assert (found["hop"], found["explanation"]) == (
        "none", "the broker wrote what the client sent, stamped with the log append time (the topic's "
                "message.timestamp.type)")
    found, _, _ = _one_match(kbatch, tmp_path, _value_changed(stamped, b"v2", b"v9"), _produced(TWO), 1, "value")
    assert (found["hop"], found["first_differing_byte"]) == ("broker", 17)


def test_a_compressed_batch_with_inner_offsets_not_0_1_is_rebuilt_and_compared_by_its_records(tmp_path, kbatch):
    """validateMessagesAndAssignOffsetsCompressed: record.offset() != expectedInnerOffset -> inPlaceAssignment
    false -> buildRecordsAndAssignOffsets, recompressed (here: another gzip level) though the codec is the same.
    (Offset deltas 0, 0 under lastOffsetDelta 1: validateBatch counts only lastOffsetDelta against recordsCount.)
    A batch sent at offsets 0, 1 is kept as it is: bytes that differ then are the broker's doing."""
    records = [(b"k1", b"v1"), (b"k2", b"v2")]
    disk = _gzip(500, records, 9, leader_epoch=5)
    found, summary, _ = _one_match(kbatch, tmp_path, disk, _produced(_gzip(0, records, 1, deltas=(0, 0))), 0)
    assert (found["hop"], found["first_differing_byte"], found["explanation"]) == (
        "none", None, "the broker wrote the client's records, rebuilt with its records at offsets 0, 1, 2, ... "
                      "(record 1 was sent at offset 0)")
    assert summary["hops"] == {"none": 1}
    found, _, _ = _one_match(kbatch, tmp_path, disk, _produced(_gzip(0, records, 1)), 1, "in-place")
    assert (found["hop"], found["first_differing_byte"]) == ("broker", 17)
    found, _, _ = _one_match(kbatch, tmp_path, _gzip(500, [records[0], (b"k2", b"v9")], 9), _produced(
        _gzip(0, records, 1, deltas=(0, 0))), 1, "value")
    assert (found["hop"], found["first_differing_byte"]) == ("broker", 0)


def test_a_batch_recompressed_and_compacted_since_is_hop_none(tmp_path, kbatch):
    """compression.type=gzip, then the cleaner (which keeps the batch's codec): the records agree."""
    kept = handmade.record(1, b"k1", b"v2") + handmade.record(2, b"k2", b"v3")
    after_crc = struct.pack(">hiqqqhii", 1, 2, TS, TS, 7, 0, 0, 2) + gzip.compress(kept, mtime=0)
    disk = struct.pack(">qiib", 500, 9 + len(after_crc), 5, 2) + struct.pack(">I", crc32c.crc32c(after_crc)) \
        + after_crc
    found, _, _ = _one_match(kbatch, tmp_path, disk, _produced(THREE), 0)
    assert (found["hop"], found["explanation"]) == (
        "none", "the broker wrote the client's records, recompressed from none to gzip (the topic's "
                "compression.type); since, the log cleaner compacted it, 2 of its 3 records kept unchanged")


def test_one_rule_for_what_the_cleaner_leaves():
    """replicas and pcap --against ask the same rule."""
    from kbatch.ops import against
    from kbatch.partition import replicas
    from kbatch.reading import cleaner

    assert replicas.compacted_alike is cleaner.compacted_alike is against.compacted_alike


# -- max-timestamp-mismatch: a warning, since no Kafka component refuses the batch ----------------------------------

def test_a_max_timestamp_not_the_records_largest_is_a_warning_on_the_wire_and_on_disk(tmp_path, kbatch):
    """A client may send any maxTimestamp (the leader sets it anew: LogValidator, setMaxTimestamp); a follower,
    the log loader and a consumer read a batch's as it is (DefaultRecordBatch.ensureValid: size and CRC)."""
    import json

    capture = _write(tmp_path, _produced(OFF), "off.pcap")
    lines = [json.loads(line) for line in kbatch("pcap", "--deep", "--format", "jsonl", capture, expect=0)
             .out.splitlines()]
    [finding] = lines[0]["findings"]   # (a batch's findings are in its line)
    assert (finding["code"], finding["severity"], finding["pos"], finding["expected"], finding["actual"]) == (
        "max-timestamp-mismatch", "warning", 35, "1700000000000 (the largest record timestamp)", "1700000001000")
    assert (lines[-1]["findings"], lines[-1]["errors"], lines[-1]["damaged"]) == ({"max-timestamp-mismatch": 1}, 0,
                                                                                 False)
    segment = tmp_path / "00000000000000000500.log"
    segment.write_bytes(_as_written(OFF, 500))
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(segment), expect=0)
    assert [(line["code"], line["severity"]) for line in map(json.loads, result.out.splitlines())
            if line["type"] == "finding"] == [("max-timestamp-mismatch", "warning")]
