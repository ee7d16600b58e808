"""A transaction marker that is not believed: its CRC fails, or its record is no ABORT or COMMIT (kbatch.reading.markers).

``txn``, the partition cross-checks and ``scan`` all hold to the one rule: such a marker ends the transaction
it would end with an unknown outcome, says what it would be if believed, and is never taken as COMMIT or
ABORT; the producer's next transaction stays apart.
"""

from __future__ import annotations

import json
import struct

import pytest

from .handmade import batch, end_marker

PRODUCER = 9001


def _txn_data(n: int, base: int, sequence: int) -> bytes:
    return batch(base, [(b"k%d" % i, b"v%d" % i) for i in range(n)], transactional=True, producer_id=PRODUCER,
                 producer_epoch=0, base_sequence=sequence)


def _marker(offset: int, kind_or_record, *, crc: int | None = None) -> bytes:
    record = end_marker(kind_or_record, 5) if isinstance(kind_or_record, str) else kind_or_record
    data = bytearray(batch(offset, [record], control=True, transactional=True, producer_id=PRODUCER,
                           producer_epoch=0))
    if crc is not None:
        data[17:21] = struct.pack(">I", crc)
    return bytes(data)


def _log(first_marker: bytes) -> tuple[bytes, int]:
    """Producer 9001: records 1-12, the given marker at 13, records 14-18, an intact ABORT at 19; the marker's
    position."""
    head = batch(0, [(b"k", b"plain")]) + _txn_data(6, 1, 0) + _txn_data(6, 7, 6)
    return head + first_marker + _txn_data(5, 14, 12) + _marker(19, "ABORT"), len(head)


def _partition(tmp_path, data: bytes):
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(data)
    return directory


def _lines(result) -> list[dict]:
    return [json.loads(line) for line in result.out.splitlines()]


def _transactions(kbatch, path) -> list[tuple]:
    return [(t["first_offset"], t["last_offset"], t["outcome"], t["marker_offset"], t["if_believed"])
            for t in _lines(kbatch("txn", "--format", "jsonl", str(path))) if t["type"] == "transaction"]


# byte positions in the COMMIT marker batch (78 bytes): its CRC field, its maxTimestamp, its record's
# key, its coordinator epoch
@pytest.mark.parametrize("flipped", [18, 40, 67, 76])
def test_a_damaged_commit_marker_leaves_its_transaction_of_unknown_outcome(kbatch, tmp_path, flipped):
    data, at = _log(_marker(13, "COMMIT"))
    damaged = bytearray(data)
    damaged[at + flipped] ^= 0x04
    directory = _partition(tmp_path, bytes(damaged))
    found = _transactions(kbatch, directory)
    assert [t[:4] for t in found] == [(1, 12, "UNKNOWN", 13), (14, 18, "ABORT", 19)]
    table = kbatch("txn", str(directory))
    assert table.code == 1
    assert "aborted (consumers skip the producer's records): 14–19 (producer 9001)" in table.out
    assert f"outcome unknown, the marker at offset 13 (pos {at}) is not believed" in table.out
    # the cross-checks take the same view: no ABORT, no COMMIT at 13
    deep = kbatch("verify-crc", "--deep", "--format", "jsonl", str(directory))
    doubted = [line for line in _lines(deep) if line.get("code") == "marker-not-believed"]
    assert [line["entry_pos"] for line in doubted] == [at]


def test_a_marker_with_crc_zero_is_reported_with_what_it_would_say(kbatch, tmp_path):
    """A marker written with CRC 0 (as a librdkafka mock broker writes them): whole otherwise, never believed."""
    data, at = _log(_marker(13, "COMMIT", crc=0))
    directory = _partition(tmp_path, data)
    assert _transactions(kbatch, directory) == [(1, 12, "UNKNOWN", 13, "COMMIT"), (14, 18, "ABORT", 19, None)]
    (doubted,) = [t for t in _lines(kbatch("txn", "--format", "jsonl", str(directory), expect=1))
                  if t["type"] == "transaction" and t["outcome"] == "UNKNOWN"]
    assert doubted["marker_pos"] == at and "if believed, a COMMIT (coordinator epoch 5)" in doubted["marker_doubt"]
    deep = kbatch("verify-crc", "--deep", "--format", "jsonl", str(directory), expect=1)
    (doubted,) = [line for line in _lines(deep) if line.get("code") == "marker-not-believed"]
    assert "if believed, a COMMIT" in doubted["actual"] and doubted["entry_pos"] == at


def test_a_producers_control_batch_of_another_type_is_no_commit(kbatch, tmp_path):
    """LEADER_CHANGE (type 2) in a producer's transactional control batch: a broker's producer-state rebuild
    throws on it (EndTransactionMarker.deserialize); kbatch reports it and never counts it a COMMIT."""
    # LeaderChangeMessage v0 (flexible): leader 1, voters [1], granting voters [1]
    leader_change = (struct.pack(">hh", 0, 2), bytes.fromhex("0000" "00000001" "02" "00000001" "00" "02" "00000001"
                                                             "00" "00"))
    data, at = _log(_marker(13, leader_change))
    directory = _partition(tmp_path, data)
    deep = kbatch("verify-crc", "--deep", "--format", "jsonl", str(directory / "00000000000000000000.log"))
    assert deep.code == 1
    (wrong,) = [line for line in _lines(deep) if line.get("code") == "control-not-end-marker"]
    assert wrong["entry_pos"] == at and "LEADER_CHANGE" in wrong["actual"]
    assert [t[:3] for t in _transactions(kbatch, directory)] == [(1, 12, "UNKNOWN"), (14, 18, "ABORT")]
    checks = kbatch("verify-crc", "--deep", "--format", "jsonl", str(directory))
    assert any(line.get("code") == "marker-not-believed" for line in _lines(checks))


def test_what_a_doubted_marker_would_say_is_worded_as_read(kbatch, tmp_path):
    """"an ABORT" (not "a ABORT"); a marker whose records do not decode as its header says (here its attributes
    name zstd) is not said to be unreadable in itself: its records were never walked to its key."""
    data, at = _log(_marker(13, "ABORT", crc=0))
    (doubted,) = [t for t in _lines(kbatch("txn", "--format", "jsonl", str(_partition(tmp_path, data))))
                  if t["type"] == "transaction" and t["outcome"] == "UNKNOWN"]
    assert "; if believed, an ABORT (coordinator epoch 5)" in doubted["marker_doubt"]
    data, at = _log(_marker(13, "COMMIT"))
    damaged = bytearray(data)
    damaged[at + 22] ^= 0x04   # attributes: codec none -> zstd
    directory = tmp_path / "lz4"
    directory.mkdir()
    result = kbatch("txn", str(_partition(directory, bytes(damaged))))
    assert result.code == 1
    text = " ".join(result.out.split())   # (a line of the table may be wrapped)
    assert "its records do not decode as its header describes them, so what it would say is not known" in text
    assert "cannot be read" not in text
