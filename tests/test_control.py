"""Control records: the end transaction markers and KRaft's control records, read as Kafka reads them."""

from __future__ import annotations

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
