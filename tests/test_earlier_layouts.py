"""Share-group records as Kafka 4.0 wrote them: read with 4.0's layout, named so, never called damaged.

KIP-932's records changed in place after 4.0 (same version 0, other fields): ShareGroupMetadataValue gained
MetadataHash, ShareSnapshotValue's SnapshotEpoch went from uint16 to int32 and CreateTimestamp/WriteTimestamp
came, ShareUpdateValue's SnapshotEpoch too.  The bytes here are worked by hand from the 4.0 branch's JSON definitions
(fixtures/kafka-messages/4.0, Kafka 4.0.2) and trunk's, with struct only -- no kbatch encoder -- and framed
as a 4.0 broker frames them (CoordinatorRecordSerde: an int16 record type, the key message at that type's
version, non-flexible; an int16 value version 0, the value message, flexible).
"""

from __future__ import annotations

import json
import struct

import pytest

from kbatch.messages.schemas import LAYOUTS
from kbatch.messages.spec import release_number
from kbatch.messages.topics import decode, layouts

from . import handmade


def _int16(value: int) -> bytes:
    return struct.pack(">h", value)


def _int32(value: int) -> bytes:
    return struct.pack(">i", value)


def _int64(value: int) -> bytes:
    return struct.pack(">q", value)


def _string(text: str) -> bytes:
    """A non-flexible string (the keys): int16 length, UTF-8."""
    return _int16(len(text)) + text.encode()


def _compact_string(text: str) -> bytes:
    """A flexible string: unsigned varint length + 1 (every length here is below 127: one byte)."""
    return bytes([len(text) + 1]) + text.encode()


NO_TAGS = b"\x00"   # a flexible struct's tagged-field count, 0
TOPIC_ID = bytes(range(1, 17))


def _key(record_type: int, fields: bytes) -> bytes:
    return _int16(record_type) + fields


def _value(message: bytes) -> bytes:
    return _int16(0) + message


# -- __share_group_state (ShareCoordinatorRecordSerde: 0 ShareSnapshot, 1 ShareUpdate) -----------------------

SHARE_KEY_FIELDS = _string("sg") + TOPIC_ID + _int32(2)            # GroupId, TopicId, Partition
SNAPSHOT_KEY = _key(0, SHARE_KEY_FIELDS)
UPDATE_KEY = _key(1, SHARE_KEY_FIELDS)


def _state_batch(first: int, last: int, state: int, count: int) -> bytes:
    return _int64(first) + _int64(last) + struct.pack(">b", state) + _int16(count) + NO_TAGS


# 4.0: SnapshotEpoch uint16 (40000: above an int16's range), StateEpoch 5, LeaderEpoch 7, StartOffset 100,
# StateBatches [100..109 Acked (2), delivered once]
SNAPSHOT_40 = _value(struct.pack(">H", 40000) + _int32(5) + _int32(7) + _int64(100)
                     + b"\x02" + _state_batch(100, 109, 2, 1) + NO_TAGS)
# 4.0: SnapshotEpoch 40000, LeaderEpoch 7, StartOffset -1 (not updated), StateBatches [110..111 Archived (4), 3]
UPDATE_40 = _value(struct.pack(">H", 40000) + _int32(7) + _int64(-1) + b"\x02" + _state_batch(110, 111, 4, 3)
                   + NO_TAGS)
# trunk (4.1+): SnapshotEpoch int32 3, StateEpoch 5, LeaderEpoch 7, StartOffset 100, CreateTimestamp,
# WriteTimestamp, StateBatches [100..109 Acked, once]
SNAPSHOT_TRUNK = _value(_int32(3) + _int32(5) + _int32(7) + _int64(100) + _int64(1_700_000_000_000)
                        + _int64(1_700_000_001_000) + b"\x02" + _state_batch(100, 109, 2, 1) + NO_TAGS)

# -- __consumer_offsets (GroupCoordinatorRecordSerde: 11 ShareGroupMetadata, 15 ShareGroupStatePartitionMetadata)

GROUP_KEY = _key(11, _string("sg"))
METADATA_40 = _value(_int32(12) + NO_TAGS)                           # Epoch 12
METADATA_TRUNK = _value(_int32(12) + _int64(0x1122334455667788) + NO_TAGS)   # Epoch, MetadataHash
STATE_KEY = _key(15, _string("sg"))
# 4.0's definition (never written by a 4.0 broker): InitializedTopics [{TopicId, TopicName "orders",
# Partitions [0, 1]}], DeletingTopics []
STATE_40 = _value(b"\x02" + TOPIC_ID + _compact_string("orders") + b"\x03" + _int32(0) + _int32(1) + NO_TAGS
                  + b"\x01" + NO_TAGS)
# Bytes both layouts of ShareGroupMetadataValue read whole: 4.0 reads Epoch then one tagged field (tag 5, 6
# bytes), trunk reads Epoch, MetadataHash 0x0105060000000000 and no tagged field.
METADATA_BOTH = _value(_int32(12) + bytes([1, 5, 6]) + bytes(6))


def _segment(tmp_path, topic: str, records: list[tuple[bytes, bytes]]) -> str:
    directory = tmp_path / f"{topic}-0"
    directory.mkdir()
    path = directory / "00000000000000000000.log"
    path.write_bytes(handmade.batch(0, records))
    return str(path)


def _values(result) -> list[dict]:
    return [record["decoded"]["value"] for line in result.out.splitlines()
            for record in json.loads(line).get("records", [])]


def _findings(result) -> list[dict]:
    """The findings of dump --format jsonl's batches, or verify-crc --format jsonl's finding lines."""
    lines = [json.loads(line) for line in result.out.splitlines()]
    return ([finding for line in lines if line.get("type") == "batch" for finding in line["findings"]]
            + [line for line in lines if line.get("type") == "finding"])


def test_a_40_brokers_share_state_records_read_with_40s_layout(tmp_path, kbatch):
    path = _segment(tmp_path, "__share_group_state", [(SNAPSHOT_KEY, SNAPSHOT_40), (UPDATE_KEY, UPDATE_40)])
    result = kbatch("dump", "-r", "--format", "jsonl", path)
    assert result.code == 0 and _findings(result) == []
    snapshot, update = _values(result)
    assert snapshot == {"name": "ShareSnapshotValue", "version": 0, "layout": "4.0", "data": {
        "snapshotEpoch": 40000, "stateEpoch": 5, "leaderEpoch": 7, "startOffset": 100,
        "stateBatches": [{"firstOffset": 100, "lastOffset": 109, "deliveryState": 2, "deliveryCount": 1}]}}
    assert update == {"name": "ShareUpdateValue", "version": 0, "layout": "4.0", "data": {
        "snapshotEpoch": 40000, "leaderEpoch": 7, "startOffset": -1,
        "stateBatches": [{"firstOffset": 110, "lastOffset": 111, "deliveryState": 4, "deliveryCount": 3}]}}
    deep = kbatch("verify-crc", "--deep", "--format", "jsonl", path)
    assert deep.code == 0 and _findings(deep) == []


def test_a_40_brokers_share_group_records_read_with_40s_layout(tmp_path, kbatch):
    path = _segment(tmp_path, "__consumer_offsets", [(GROUP_KEY, METADATA_40)])
    result = kbatch("dump", "-r", "--format", "jsonl", path)
    assert result.code == 0 and _findings(result) == []
    assert _values(result) == [{"name": "ShareGroupMetadataValue", "version": 0, "layout": "4.0",
                                "data": {"epoch": 12}}]


def test_a_layout_no_released_broker_wrote_is_not_read(tmp_path, kbatch):
    """4.0 changed ShareGroupStatePartitionMetadataValue too, but no 4.0 broker writes one (only its serde
    knows the type): bytes of 4.0's definition are not passed off as a 4.0 record."""
    path = _segment(tmp_path, "__consumer_offsets", [(STATE_KEY, STATE_40)])
    result = kbatch("dump", "-r", "--format", "jsonl", "--kafka-version", "4.0", path)
    assert result.code == 1
    (finding,) = _findings(result)
    assert finding["code"] == "bad-internal-record" and finding["field"] == "records[0].value.deletingTopics"
    assert finding["actual"].endswith("(ShareGroupStatePartitionMetadataValue v0) (byte 37 of the value)")


def test_the_table_and_kafkas_dump_format_name_and_follow_the_layout(tmp_path, kbatch, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    path = _segment(tmp_path, "__share_group_state", [(SNAPSHOT_KEY, SNAPSHOT_40)])
    table = kbatch("dump", "-r", "--no-color", path)
    assert table.code == 0 and "ShareSnapshotValue v0 (4.0 layout) " in table.out
    dumplog = kbatch("dump", "-r", "--format", "dumplog", path)
    # what a 4.0 kafka-dump-log.sh prints: 4.0's fields, no createTimestamp of trunk's at its default
    assert dumplog.code == 0
    assert ('payload: {"version":"0","data":{"snapshotEpoch":40000,"stateEpoch":5,"leaderEpoch":7,'
            '"startOffset":100,"stateBatches":[{"firstOffset":100,"lastOffset":109,"deliveryState":2,'
            '"deliveryCount":1}]}}') in dumplog.out


def test_hexdump_splits_a_40_value_with_40s_layout(tmp_path, kbatch):
    path = _segment(tmp_path, "__share_group_state", [(SNAPSHOT_KEY, SNAPSHOT_40)])
    result = kbatch("hexdump-annotate", "--no-color", path)
    assert result.code == 0
    lines = result.out.splitlines()
    version = next(line for line in lines if "records[0].value.version " in line)
    epoch = next(line for line in lines if "records[0].value.snapshotEpoch " in line)
    assert "0 (Kafka 4.0 layout)" in version
    assert " 2  9c 40 " in epoch and "40000" in epoch   # a uint16: 2 bytes
    forced = kbatch("hexdump-annotate", "--no-color", "--kafka-version", "4.2.1", path)
    epoch = next(line for line in forced.out.splitlines() if "records[0].value.snapshotEpoch " in line)
    assert forced.code == 0 and " 4  9c 40 00 00 " in epoch   # trunk's int32


def test_trunk_bytes_still_read_with_trunks_layout(tmp_path, kbatch):
    path = _segment(tmp_path, "__share_group_state", [(SNAPSHOT_KEY, SNAPSHOT_TRUNK)])
    result = kbatch("dump", "-r", "--format", "jsonl", path)
    assert result.code == 0 and _findings(result) == []
    (snapshot,) = _values(result)
    assert snapshot["layout"] == "4.1+"
    assert snapshot["data"]["snapshotEpoch"] == 3 and snapshot["data"]["createTimestamp"] == 1_700_000_000_000
    assert snapshot["data"]["deliveryCompleteCount"] == -1   # 4.2's tagged field, absent: its default
    offsets = _segment(tmp_path, "__consumer_offsets", [(GROUP_KEY, METADATA_TRUNK)])
    result = kbatch("dump", "-r", "--format", "jsonl", offsets)
    assert result.code == 0 and _values(result) == [{"name": "ShareGroupMetadataValue", "version": 0,
                                                      "layout": "4.1+",
                                                      "data": {"epoch": 12, "metadataHash": 0x1122334455667788}}]


def test_bytes_no_released_layout_reads_are_damaged(tmp_path, kbatch):
    path = _segment(tmp_path, "__share_group_state", [(SNAPSHOT_KEY, SNAPSHOT_40 + b"\x00")])
    result = kbatch("dump", "-r", "--format", "jsonl", path)
    assert result.code == 1
    (finding,) = _findings(result)
    assert finding["code"] == "bad-internal-record"
    assert "ShareSnapshotValue v0, Kafka 4.1+ layout" in finding["actual"]
    assert "nor does Kafka 4.0's layout read it" in finding["actual"]
    deep = kbatch("verify-crc", "--deep", "--format", "jsonl", path)
    assert deep.code == 1 and [found["actual"] for found in _findings(deep)] == [finding["actual"]]


def test_bytes_both_layouts_read_are_read_with_the_newest_unless_the_version_is_given(tmp_path, kbatch):
    """The stated rule: the newest layout that reads the bytes whole (the one of the releases writing now;
    4.0's share groups were early access); --kafka-version names the release that wrote them."""
    path = _segment(tmp_path, "__consumer_offsets", [(GROUP_KEY, METADATA_BOTH)])
    newest = kbatch("dump", "-r", "--format", "jsonl", path)
    assert newest.code == 0 and _values(newest) == [{"name": "ShareGroupMetadataValue", "version": 0,
                                                     "layout": "4.1+",
                                                     "data": {"epoch": 12, "metadataHash": 0x0105060000000000}}]
    told = kbatch("dump", "-r", "--format", "jsonl", "--kafka-version", "4.0.2", path)
    assert told.code == 0 and _values(told) == [{"name": "ShareGroupMetadataValue", "version": 0, "layout": "4.0",
                                                 "data": {"epoch": 12,
                                                          "_unknownTaggedFields": [{"tag": 5, "hex": "00" * 6}]}}]
    later = kbatch("dump", "-r", "--format", "jsonl", "--kafka-version", "4.1", path)
    assert later.code == 0 and _values(later)[0]["layout"] == "4.1+"


def test_a_given_kafka_version_reads_with_its_layout_only(tmp_path, kbatch):
    path = _segment(tmp_path, "__share_group_state", [(SNAPSHOT_KEY, SNAPSHOT_40)])
    for command in (("dump", "-r", "--format", "jsonl"), ("verify-crc", "--deep", "--format", "jsonl")):
        result = kbatch(*command, "--kafka-version", "4.1.0", path)
        assert result.code == 1
        (finding,) = _findings(result)
        assert finding["code"] == "bad-internal-record"
        assert "Kafka 4.1+ layout" in finding["actual"] and "nor does" not in finding["actual"]
        assert kbatch(*command, "--kafka-version", "4.0", path).code == 0
    found = kbatch("grep", "--kafka-version", "4.0", "--field", "value.data.snapshotEpoch=40000", path)
    assert found.code == 0 and found.out.count("\n") == 1
    missed = kbatch("grep", "--kafka-version", "4.2", "--field", "value.data.snapshotEpoch=40000", path)
    assert missed.code == 1 and missed.out == ""


@pytest.mark.parametrize("version", ["4", "four", "4.0.2.1", "4.x"])
def test_a_kafka_version_that_names_no_release_is_a_usage_error(tmp_path, kbatch, version):
    path = _segment(tmp_path, "__share_group_state", [(SNAPSHOT_KEY, SNAPSHOT_40)])
    result = kbatch("dump", "-r", "--kafka-version", version, path)
    assert result.code == 2 and "--kafka-version" in result.err


def test_every_release_has_exactly_one_layout_of_each_changed_message():
    assert sorted(LAYOUTS) == ["ShareGroupMetadataValue", "ShareSnapshotValue", "ShareUpdateValue"]
    for name in LAYOUTS:
        assert [layout.name for layout in layouts(name)] == ["4.1+", "4.0"]
        for release, expected in (("3.9", "4.0"), ("4.0.0", "4.0"), ("4.0.2", "4.0"), ("4.1.0", "4.1+"),
                                  ("4.2", "4.1+"), ("5.0", "4.1+")):
            assert [layout.name for layout in layouts(name, release)] == [expected], (name, release)
    assert layouts("OffsetCommitValue") == () and layouts("OffsetCommitValue", "4.0") == ()
    assert release_number("4.1+") == (4, 1) == release_number("4.1.7")


def test_other_decoders_ignore_the_kafka_version():
    assert decode("share", SNAPSHOT_KEY, SNAPSHOT_40, "4.0").problems == []
    plain = decode("transactions", b"\x00\x00\x00\x01t", None)
    assert decode("transactions", b"\x00\x00\x00\x01t", None, "4.0").as_dict() == plain.as_dict()


def test_a_dump_read_with_a_given_version_encodes_back_byte_for_byte(tmp_path, kbatch):
    """encode-from-json holds `decoded` to the bytes read with the layout the dump names."""
    path = _segment(tmp_path, "__consumer_offsets", [(GROUP_KEY, METADATA_BOTH)])
    document = json.loads(kbatch("dump", "-r", "--format", "json", "--kafka-version", "4.0", path).out)
    assert document["files"][0]["entries"][0]["records"][0]["decoded"]["value"]["layout"] == "4.0"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document))
    result = kbatch("encode-from-json", str(spec), "-o", str(tmp_path / "out.log"))
    assert result.code == 0 and (tmp_path / "out.log").read_bytes() == (tmp_path / "__consumer_offsets-0" /
                                                                         "00000000000000000000.log").read_bytes()
    document["files"][0]["entries"][0]["records"][0]["decoded"]["value"]["layout"] = "4.1+"
    spec.write_text(json.dumps(document))
    edited = kbatch("encode-from-json", str(spec), "-o", str(tmp_path / "edited.log"))
    assert edited.code == 2 and "records[0].decoded.value.data.metadataHash" in edited.err
