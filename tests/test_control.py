"""Control records: the end transaction markers and KRaft's control records, read as Kafka reads them."""

from __future__ import annotations

import struct

import pytest

from .handmade import batch, end_marker
from .helpers import read_all


def _control_findings(data: bytes) -> list:
    batches, findings = read_all(data, records=True)
    return batches, [finding for finding in findings if finding.code == "bad-control-record"]


def test_a_well_formed_commit_marker_is_clean():
    batches, findings = _control_findings(batch(10, [end_marker("COMMIT", 7)], control=True, transactional=True,
                                                producer_id=5, producer_epoch=1))
    assert findings == []
    marker = batches[0].records[0].control
    assert (marker.type, marker.key_version, marker.value_version, marker.coordinator_epoch) == ("COMMIT", 0, 0, 7)


def test_a_negative_control_key_version_is_reported():
    # ControlRecordType.parseTypeId: "Invalid version found for control record: -1. May indicate data corruption"
    _, findings = _control_findings(batch(10, [end_marker("ABORT", 7, key_version=-1)], control=True,
                                          transactional=True, producer_id=5, producer_epoch=1))
    assert len(findings) == 1
    assert findings[0].field == "records[0]" and findings[0].expected == "a key version >= 0"
    assert findings[0].actual.startswith("-1")


def test_a_negative_end_marker_value_version_is_reported():
    # EndTransactionMarker.deserializeValue: "Invalid version found for end transaction marker: -3"
    _, findings = _control_findings(batch(10, [end_marker("COMMIT", 7, value_version=-3)], control=True,
                                          transactional=True, producer_id=5, producer_epoch=1))
    assert len(findings) == 1
    assert findings[0].expected == "an end transaction marker value version >= 0"
    assert findings[0].actual.startswith("-3")


def test_a_higher_version_is_read_as_version_0():
    # Kafka logs "Received unknown control record key version 1. Parsing as version 0" and reads on.
    batches, findings = _control_findings(batch(10, [end_marker("COMMIT", 4, key_version=1, value_version=2)],
                                                control=True, transactional=True, producer_id=5, producer_epoch=1))
    assert findings == []
    assert batches[0].records[0].control.coordinator_epoch == 4


# -- KRaft's control records ----------------------------------------------------------------------

def _kraft_version(version: int = 1) -> tuple[bytes, bytes]:
    # key: version 0, type KRAFT_VERSION (5); value: KRaftVersionRecord v0 (flexible): Version int16,
    # KRaftVersion int16, no tagged fields
    return struct.pack(">hh", 0, 5), struct.pack(">hh", 0, version) + b"\x00"


def _snapshot_footer() -> tuple[bytes, bytes]:
    return struct.pack(">hh", 0, 4), struct.pack(">h", 0) + b"\x00"


def test_kraft_control_records_are_decoded_with_their_fields():
    batches, findings = _control_findings(batch(0, [_kraft_version(1), _snapshot_footer()], control=True))
    assert findings == []
    markers = [record.control for record in batches[0].records]
    assert [(marker.type, marker.data) for marker in markers] == [
        ("KRAFT_VERSION", {"version": 0, "kRaftVersion": 1}), ("SNAPSHOT_FOOTER", {"version": 0})]


def test_a_cut_kraft_control_value_is_reported():
    key, value = _kraft_version()
    _, findings = _control_findings(batch(0, [(key, value[:3])], control=True))
    assert len(findings) == 1 and "KRaftVersionRecord" in findings[0].expected


def test_several_kraft_control_records_in_one_batch_are_valid(kbatch, tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(batch(0, [_kraft_version(), _snapshot_footer()], control=True))
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(path))
    assert result.code == 0 and "bad-control-record" not in result.out


def test_a_transaction_marker_batch_holds_exactly_one_record(kbatch, tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(batch(0, [end_marker("COMMIT", 1), end_marker("COMMIT", 1)], control=True,
                           transactional=True, producer_id=5, producer_epoch=1))
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(path))
    assert result.code == 1 and "bad-control-record" in result.out


def _leader_change(version: int) -> bytes:
    """LeaderChangeMessage (flexible from version 0): Version, LeaderId, Voters [1, 3], GrantingVoters [3]."""
    voters = lambda ids: bytes([len(ids) + 1]) + b"".join(struct.pack(">i", i) + b"\x00" for i in ids)  # noqa: E731
    return struct.pack(">hi", version, 3) + voters([1, 3]) + voters([3]) + b"\x00"


@pytest.mark.parametrize("version", [0, 1])
def test_dumplog_prints_leader_change_at_its_own_version(version, kbatch, tmp_path):
    """ControlRecordUtils reads the value at version 0; DumpLogSegments prints it at its Version field, so a
    version-1 message shows every voter's VoterDirectoryId (KIP-853), unread, at its default: Uuid.ZERO_UUID."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(batch(0, [(struct.pack(">hh", 0, 2), _leader_change(version))], control=True))
    out = kbatch("dump", "--format", "dumplog", "--records", str(path), expect=0).out
    zero = ',"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"' if version else ""
    assert (f' LeaderChange: {{"version":{version},"leaderId":3,"voters":[{{"voterId":1{zero}}},'
            f'{{"voterId":3{zero}}}],"grantingVoters":[{{"voterId":3{zero}}}]}}') in out
