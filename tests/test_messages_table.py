"""The schema table against Kafka's definitions: no drift, and every message at every version reads back.

The round trip writes each message with ``fixtures/make_internal_fixtures.py``'s writer (its own reading of
Kafka's MessageDataGenerator, straight from the JSON definitions, no kbatch) and a value in every field,
tagged ones included, then reads it with kbatch's decoder.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kbatch.messages import make_table, schemas
from kbatch.messages.decoder import MessageDecoder, to_json
from kbatch.messages.spec import version_range

from .helpers import fixture_writer

ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = ROOT / "fixtures" / "kafka-messages"
MIRROR = Path("/work/.mirror/confluentinc+kafka/repo")


FIX = fixture_writer()


def test_the_table_is_what_the_definitions_say():
    assert (ROOT / "kbatch" / "messages" / "schemas.json").read_text() == make_table.table(DEFINITIONS)


def test_the_table_names_the_commit_its_definitions_come_from():
    commit, release = make_table.current(DEFINITIONS)
    assert (schemas.KAFKA_COMMIT, schemas.KAFKA_RELEASE) == (commit, release)
    assert commit in (ROOT / "README.md").read_text()


@pytest.mark.skipif(not MIRROR.exists(), reason="no Kafka git mirror on this machine")
def test_the_copies_are_kafkas_files_at_their_commits():
    """Drift: each copy in fixtures/kafka-messages is, byte for byte, the file at the commit SOURCES.txt names."""
    for name, line in make_table.sources(DEFINITIONS).items():
        path, commit, _ = line.split(" ", 2)
        kafka = subprocess.run(["git", "-C", str(MIRROR), "show", f"{commit}:{path}"], capture_output=True)
        assert kafka.returncode == 0 and kafka.stdout == (DEFINITIONS / name).read_bytes(), name


@pytest.mark.skipif(not MIRROR.exists(), reason="no Kafka git mirror on this machine")
def test_the_earlier_layouts_are_kafkas_files_at_their_release_lines_commits():
    """Each release line's folder holds its definitions, byte for byte Kafka's at the commit it names."""
    for line, commit, release, _, paths in make_table.EARLIER_LAYOUTS:
        folder = DEFINITIONS / line
        assert make_table.current(folder) == (commit, release)
        assert sorted(make_table.sources(folder)) == sorted(Path(path).name for path in paths)
        assert sorted(path.name for path in folder.glob("*.json")) == sorted(Path(path).name for path in paths)
        for name, source in make_table.sources(folder).items():
            path, at, _ = source.split(" ", 2)
            assert at == commit
            kafka = subprocess.run(["git", "-C", str(MIRROR), "show", f"{at}:{path}"], capture_output=True)
            assert kafka.returncode == 0 and kafka.stdout == (folder / name).read_bytes(), name


def test_an_earlier_layout_is_another_layout_than_trunks():
    """Only a definition whose fields differ from trunk's is kept: one layout per distinct released one."""
    for name, every in schemas.LAYOUTS.items():
        assert every[0].schema is schemas.SCHEMAS[name] and every[0].until is None
        fields = [layout.schema.fields for layout in every]
        assert len(set(fields)) == len(fields), name
        assert all(newer.since == older.until for newer, older in zip(every, every[1:])), name


def _every_earlier_layout():
    for line, *_, paths in make_table.EARLIER_LAYOUTS:
        for path in paths:
            yield pytest.param(line, Path(path).stem, id=f"{line}-{Path(path).stem}")


@pytest.mark.parametrize("line,name", list(_every_earlier_layout()))
def test_every_earlier_layout_round_trips(line, name):
    layout = next(layout for layout in schemas.LAYOUTS[name] if layout.name == line)
    writer = FIX.Writer(f"{line}/{name}", 0)
    values = {FIX.camel(field["name"]): _sample(field, writer, 0) for field in writer.spec["fields"]
              if FIX._present(field, 0)}
    data = writer.message(values)
    fields, end = MessageDecoder(layout.schema, 0, name).decode(data)
    assert end == len(data)
    assert to_json(fields) == FIX.expected(f"{line}/{name}", 0, values)["data"]


@pytest.mark.skipif(not MIRROR.exists(), reason="no Kafka git mirror on this machine")
def test_regenerating_from_the_mirror_writes_the_same_table(tmp_path):
    kafka = make_table.Kafka(MIRROR, schemas.KAFKA_COMMIT)
    make_table.regenerate(kafka, tmp_path, tmp_path / "schemas.json")
    assert (tmp_path / "schemas.json").read_text() == (ROOT / "kbatch" / "messages" / "schemas.json").read_text()


def test_removed_record_types_keep_the_definition_they_were_written_with():
    from kbatch.messages.topics import GROUP_RECORD_TYPES
    assert GROUP_RECORD_TYPES[9] == "ShareGroupPartitionMetadata"
    assert GROUP_RECORD_TYPES[18] == "StreamsGroupPartitionMetadata"
    sources = make_table.sources(DEFINITIONS)
    assert schemas.KAFKA_COMMIT not in sources["ShareGroupPartitionMetadataValue.json"]
    assert "released in 4.0" in sources["ShareGroupPartitionMetadataValue.json"]


_SAMPLES = {"int8": -7, "int16": -300, "int32": 123456, "int64": -(1 << 40), "uint16": 65000,
            "uint32": 4000000000, "float64": 2.5, "bool": True, "string": "kafka\u00e9",
            "bytes": b"\x00\xffraw", "records": b"\x00\x01batch", "uuid": "0a8hLp9fQyKg2T1S2cH2kQ"}


def _sample(field: dict, writer, version: int):
    """A value unlike the field's default, so that a tagged field is written and a misread shows."""
    kind = field["type"]
    element = kind[2:] if kind.startswith("[]") else kind
    inner = writer.fields_of(field)
    if inner:
        one = {FIX.camel(sub["name"]): _sample(sub, writer, version) for sub in inner
               if FIX._present(sub, version)}
        return [one, one] if kind.startswith("[]") else one
    if kind.startswith("[]"):
        return [_SAMPLES[element], _SAMPLES[element]]
    return _SAMPLES[kind]


# the definition file of each message (ZkMigrationRecord.json defines ZkMigrationStateRecord)
FILES = {make_table.load(path)["name"]: path.stem for path in DEFINITIONS.glob("*.json")}


def _every_version():
    for name, schema in sorted(schemas.SCHEMAS.items()):
        low, high = version_range(schema.valid)
        for version in range(low, high + 1):
            yield pytest.param(name, version, id=f"{name}-v{version}")


@pytest.mark.parametrize("name,version", list(_every_version()))
def test_every_message_and_version_round_trips(name, version):
    writer = FIX.Writer(FILES[name], version)
    values = {FIX.camel(field["name"]): _sample(field, writer, version) for field in writer.spec["fields"]
              if FIX._present(field, version)}
    data = writer.message(values)
    fields, end = MessageDecoder(schemas.SCHEMAS[name], version, name).decode(data)
    assert end == len(data)
    assert to_json(fields) == FIX.expected(FILES[name], version, values)["data"]


# Values a Kafka 4.4.0 broker (KRaft, one node) wrote to __cluster_metadata-0, copied byte for byte.
REGISTER_BROKER_V4 = bytes.fromhex(
    "01000400000001000134aea154104bbbb2e75a0ecc67a4c2000000000000000b020a504c41494e544558540a3132372e302e302e"
    "314a94000000080e73686172652e76657273696f6e0000000200116d657461646174612e76657273696f6e000700210021656c69"
    "6769626c652e6c65616465722e7265706c696361732e76657273696f6e0000000100147472616e73616374696f6e2e7665727369"
    "6f6e00000002001073747265616d732e76657273696f6e00000001000e67726f75702e76657273696f6e00000001000e6b726166"
    "742e76657273696f6e000000010000010001001102f7c7a503d79e99f1502e449f64601a48")
BROKER_CHANGE_V3 = bytes.fromhex("01110300000001000000000000000b01030101")


def test_what_kafka_4_4_writes_to_the_cluster_metadata_reads():
    from kbatch.messages.topics import decode_metadata
    broker = decode_metadata(None, REGISTER_BROKER_V4)
    assert broker.problems == []
    assert (broker.value["name"], broker.value["version"]) == ("RegisterBrokerRecord", 4)
    data = broker.value["data"]
    assert data["brokerId"] == 1 and data["endPoints"][0]["name"] == "PLAINTEXT" and data["rack"] is None
    assert {feature["name"] for feature in data["features"]} >= {"metadata.version", "share.version"}
    assert data["logDirs"] == ["98elA9eemfFQLkSfZGAaSA"]   # meta.properties directory.id
    change = decode_metadata(None, BROKER_CHANGE_V3)
    assert change.problems == [] and change.value["name"] == "BrokerRegistrationChangeRecord"
    assert change.value["version"] == 3 and change.value["data"]["brokerEpoch"] == 11


def test_a_metadata_record_above_the_newest_version_reads_as_the_newest_with_a_warning():
    """AbstractApiMessageSerde.read checks no version; the generated read() takes any version above the
    newest as the newest (VersionConditional), so Kafka reads such a record: kbatch too, and says so."""
    from kbatch.messages.topics import decode_metadata
    newest = schemas.SCHEMAS["BrokerRegistrationChangeRecord"].valid_range[1]
    above = BROKER_CHANGE_V3[:2] + bytes([newest + 5]) + BROKER_CHANGE_V3[3:]
    decoded = decode_metadata(None, above)
    assert [problem.code for problem in decoded.problems] == ["record-version-above-schema"]
    assert decoded.value["version"] == newest + 5
    assert decoded.value["data"] == decode_metadata(None, BROKER_CHANGE_V3).value["data"]


# BrokerRegistrationChangeRecord v0 as AbstractApiMessageSerde frames it: brokerId 1, brokerEpoch 11
_CHANGE_V0 = bytes.fromhex("011100" "00000001" "000000000000000b")


def test_a_tag_sent_before_its_field_exists_is_refused_as_kafka_refuses_it():
    """MessageDataGenerator.generateClassReader: InControlledShutdown is tag 1 from version 1; at version 0
    the generated reader throws "Tag 1 is not valid for version 0" (it is not an unknown tag)."""
    from kbatch.messages.decoder import MessageError
    from kbatch.messages.topics import decode_metadata
    record = _CHANGE_V0 + bytes([1, 1, 1, 1])          # one tag: tag 1, size 1, value 1
    decoded = decode_metadata(None, record)
    assert [problem.code for problem in decoded.problems] == ["bad-internal-record"]
    assert decoded.value is None and "inControlledShutdown" in decoded.problems[0].actual
    with pytest.raises(MessageError) as refused:
        MessageDecoder(schemas.SCHEMAS["BrokerRegistrationChangeRecord"], 0).decode(record, 3)
    assert refused.value.java == "Tag 1 is not valid for version 0"


def test_a_known_tags_size_that_disagrees_is_a_warning_and_kafka_reads_on_from_the_fields_end():
    """The generated reader reads a known tag's field from the stream and ignores the size: Fenced (int8)
    stated as 2 bytes reads 1, and the next tag follows it.  Kafka prints the record; so does dumplog."""
    from kbatch.render.internal import dumplog_tokens
    from kbatch.messages.topics import decode_metadata
    record = _CHANGE_V0 + bytes([2, 0, 2, 1, 9, 1, 0x55])  # tag 0 "2 bytes" = 1 byte; then unknown tag 9
    decoded = decode_metadata(None, record)
    assert [problem.code for problem in decoded.problems] == ["tagged-field-size-mismatch"]
    assert decoded.value["data"]["fenced"] == 1
    assert decoded.value["data"]["_unknownTaggedFields"] == [{"tag": 9, "hex": "55"}]
    decoded = decode_metadata(None, _CHANGE_V0 + bytes([1, 0, 2, 1]))
    assert [problem.code for problem in decoded.problems] == ["tagged-field-size-mismatch"]
    line = dumplog_tokens(decoded, 7)
    assert "Error at" not in line and '"fenced":1' in line


def test_a_tagged_field_count_past_2_to_the_31_at_the_end_reads_as_none():
    """ByteUtils.readUnsignedVarint gives a Java int: 2^31 is negative and the generated loop
    (_i < _numTaggedFields) never runs; Kafka reads the record, and nothing is left unread."""
    from kbatch.messages.topics import decode_metadata
    noop = schemas.SCHEMAS["NoOpRecord"].api_key
    for count in (b"\x80\x80\x80\x80\x08", b"\xff\xff\xff\xff\x0f"):
        decoded = decode_metadata(None, bytes([1, noop, 0]) + count)
        assert decoded.problems == [] and decoded.value["data"] == {}


def _metadata_segment(tmp_path, batches) -> str:
    """A __cluster_metadata-0 segment of v2 batches (kafka-python's builder, as make_fixtures frames them)."""
    import make_fixtures as mf
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    data, offset = bytearray(), 0
    for records, control in batches:
        recs = [mf.R(offset + i, ts, key, value, headers) for i, (ts, key, value, headers) in enumerate(records)]
        data += mf.v2_batch(offset, recs, control=control).raw
        offset += len(records)
    (directory / "00000000000000000000.log").write_bytes(bytes(data))
    return str(directory / "00000000000000000000.log")


def test_kraft_refuses_what_its_reader_refuses_in_the_cluster_metadata(tmp_path, kbatch):
    """RecordsDecodingStrategy.readRecord/decodeDataRecord, ControlRecord.of: a key, a timestamp delta,
    a header, a COMMIT marker: each a bad-kraft-record with Kafka's text; a record as KRaft writes it none."""
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        good = BROKER_CHANGE_V3
        commit = (struct_pack(">hh", 0, 1), struct_pack(">hi", 0, 7))   # EndTransactionMarker: COMMIT
        path = _metadata_segment(tmp_path, [
            ([(1000, None, good, [])], False),                    # as KRaft writes it
            ([(1000, b"k", good, [])], False),                    # a key
            ([(1000, None, good, []), (1005, None, good, [])], False),   # timestampDelta 5
            ([(1000, None, good, [("h", b"v")])], False),           # a header: the last byte is 'v'
            ([(1000, *commit, [])], True),                        # a COMMIT marker
        ])
    finally:
        sys.path.remove(str(ROOT / "fixtures"))
    import json
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", path)
    found = [json.loads(line) for line in result.out.splitlines()]
    refused = [(f["field"], f["actual"]) for f in found if f.get("code") == "bad-kraft-record"]
    assert result.code == 1 and len(refused) == 4, found
    assert "Got key in the record when no key was expected" in refused[0][1]
    assert refused[1][0] == "records[1].timestampDelta" and "Got timestamp delta of 5" in refused[1][1]
    assert "Got numHeaders of 118" in refused[2][1]
    assert "Unknown control record type COMMIT" in refused[3][1]
    assert all(f["entry_pos"] != 0 for f in found if f.get("type") == "finding")   # the first batch is clean


def struct_pack(fmt, *values):
    import struct
    return struct.pack(fmt, *values)


SNAPSHOT = ROOT / "fixtures" / "kraft" / "__cluster_metadata-0" / "00000000000000007269-0000000001.checkpoint"


def _codes(result) -> list[str]:
    import json
    return [json.loads(line).get("code") for line in result.out.splitlines() if '"finding"' in line]


def test_a_snapshot_kafka_wrote_reads_clean_and_one_cut_at_either_end_does_not(tmp_path, kbatch):
    """RecordsSnapshotReader.nextBatch refuses a first batch that is no SNAPSHOT_HEADER control batch; the
    footer RecordsSnapshotWriter.freeze appends is checked by no reader: its absence is a warning."""
    clean = kbatch("verify-crc", "--deep", "--format", "jsonl", str(SNAPSHOT))
    assert clean.code == 0 and _codes(clean) == []
    data = SNAPSHOT.read_bytes()
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    headless, footless = directory / "a.checkpoint", directory / "b.checkpoint"
    headless.write_bytes(data[83:])             # the header batch is the first 83 bytes
    footless.write_bytes(data[:-75])            # the footer batch the last 75
    no_header = kbatch("verify-crc", "--deep", "--format", "jsonl", str(headless))
    assert no_header.code == 1 and _codes(no_header) == ["bad-snapshot"]
    assert "First batch is not a control batch" in no_header.out
    no_footer = kbatch("verify-crc", "--deep", "--format", "jsonl", str(footless))
    assert no_footer.code == 0 and _codes(no_footer) == ["snapshot-without-footer"]


# A ConsumerGroupMemberMetadata record (type 5) a Kafka 4.4.0 broker wrote for a consumer of the new
# protocol, and the tail of the line its kafka-dump-log.sh --offsets-decoder printed for it.
MEMBER_KEY = bytes.fromhex("0005000c6d73672d6e657770726f746f001659634d623354776451693230766c4347586144353941")
MEMBER_VALUE = bytes.fromhex("0000000011636f6e736f6c652d636f6e73756d65720b2f3132372e302e302e310203743101000493e0"
                             "0001000100")
MEMBER_LINE = (' key: {"type":"5","data":{"groupId":"msg-newproto","memberId":"YcMb3TwdQi20vlCGXaD59A"}} payload: '
               '{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"console-consumer",'
               '"clientHost":"/127.0.0.1","subscribedTopicNames":["t1"],"subscribedTopicRegex":"",'
               '"rebalanceTimeoutMs":300000,"serverAssignor":null,"classicMemberMetadata":null}}')


def test_a_new_protocol_member_prints_as_kafka_4_4_prints_it():
    """ClassicMemberMetadata's "default": null is JSON null, which FieldSpec takes for no default (the
    empty struct): the broker writes its null as a tag, and the JSON converter prints it."""
    from kbatch.messages.topics import decode_offsets
    from kbatch.render.internal import dumplog_tokens
    decoded = decode_offsets(MEMBER_KEY, MEMBER_VALUE)
    assert decoded.problems == []
    assert dumplog_tokens(decoded, 0) == MEMBER_LINE


# A TransactionLogValue v1 (Ongoing) a Kafka 4.4.0 broker wrote, and what its --transaction-log-decoder printed.
TXN_KEY = bytes.fromhex("000000086d73672d74782d31")
TXN_VALUE = bytes.fromhex("0001000000000000000100000000ea600102037431020000000000000001a21ab36515000001a21ab36515"
                          "0100080000000000000001")
TXN_LINE = (' key: {"type":"0","data":{"transactionalId":"msg-tx-1"}} payload: {"version":"1","data":{"producerId":1,'
            '"previousProducerId":1,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":"Ongoing",'
            '"transactionPartitions":[{"topic":"t1","partitionIds":[0]}],"transactionLastUpdateTimestampMs":'
            '1795744294165,"transactionStartTimestampMs":1795744294165}}')


def test_a_transaction_prints_its_state_by_name_as_kafka_4_4_does():
    """DumpLogSegments.TransactionLogMessageParser.valueAsJson replaces the status id by its state name."""
    from kbatch.messages.topics import decode_transactions
    from kbatch.render.internal import dumplog_tokens
    decoded = decode_transactions(TXN_KEY, TXN_VALUE)
    assert decoded.problems == [] and dumplog_tokens(decoded, 1) == TXN_LINE


def test_remote_log_metadata_reads_with_tiered_storages_records(tmp_path, kbatch):
    """RemoteLogMetadataSerde: BytesApiMessageSerde's frame around storage's own MetadataRecordType, chosen
    from the partition directory __remote_log_metadata-N; dumplog leaves the payload to Kafka's default."""
    import json
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        import make_fixtures as mf
        delete = {"topicIdPartition": {"id": "0a8hLp9fQyKg2T1S2cH2kQ", "name": "t", "partition": 3},
                  "brokerId": 1, "eventTimestampMs": 1700000000000, "remotePartitionDeleteState": 1}
        value = FIX.metadata("RemotePartitionDeleteMetadataRecord", 0, delete)
        directory = tmp_path / "__remote_log_metadata-0"
        directory.mkdir()
        (directory / "00000000000000000000.log").write_bytes(
            mf.v2_batch(0, [mf.R(0, 1700000000000, None, value)]).raw)
    finally:
        sys.path.remove(str(ROOT / "fixtures"))
    segment = str(directory / "00000000000000000000.log")
    result = kbatch("dump", "-r", "--format", "jsonl", segment)
    record = json.loads(result.out.splitlines()[0])["records"][0]["decoded"]
    assert result.code == 0 and record["decoder"] == "remote"
    assert (record["value"]["name"], record["value"]["apiKey"]) == ("RemotePartitionDeleteMetadataRecord", 2)
    assert record["value"]["data"] == FIX.expected("RemotePartitionDeleteMetadataRecord", 0, delete)["data"]
    assert kbatch("verify-crc", "--deep", segment).code == 0
    assert "payload: " in kbatch("dump", "-r", "--format", "dumplog", segment).out


@pytest.mark.parametrize("record_type,name,value", [
    (9, "ShareGroupPartitionMetadata",     # as 4.0's GroupCoordinatorRecordHelpers wrote it
     {"topics": [{"topicId": "0a8hLp9fQyKg2T1S2cH2kQ", "topicName": "t", "numPartitions": 2,
                  "partitionMetadata": [{"partition": 0, "racks": ["r1"]}]}]}),
    (18, "StreamsGroupPartitionMetadata",  # as trunk wrote it before 4.1 branched
     {"topics": [{"topicId": "0a8hLp9fQyKg2T1S2cH2kQ", "topicName": "t", "numPartitions": 2}]}),
])
def test_a_removed_record_type_reads_with_the_definition_it_was_written_with(record_type, name, value):
    from kbatch.messages.topics import decode_offsets
    key = FIX.prefixed(name + "Key", record_type, {"groupId": "g"})
    decoded = decode_offsets(key, FIX.prefixed(name + "Value", 0, value))
    assert decoded.problems == []
    assert (decoded.key["name"], decoded.key["data"]) == (name + "Key", {"groupId": "g"})
    assert to_json(decoded.value["data"]) == FIX.expected(name + "Value", 0, value)["data"]


# A ShareSnapshot record a Kafka 4.4.0 broker wrote to __share_group_state (int32 SnapshotEpoch, the
# create and write timestamps: trunk's layout, not 4.0's), and what its --share-group-state-decoder printed.
SHARE_KEY = bytes.fromhex("000000096d73672d7368617265e3fb28d4878641a7b48b525ca47cda4100000000")
SHARE_VALUE = bytes.fromhex("0000000000000000000200000000ffffffffffffffff000001a21aba11bb000001a21aba11bb0100")
SHARE_LINE = (' key: {"type":"0","data":{"groupId":"msg-share","topicId":"4_so1IeGQae0i1JcpHzaQQ","partition":0}} '
              'payload: {"version":"0","data":{"snapshotEpoch":0,"stateEpoch":2,"leaderEpoch":0,"startOffset":-1,'
              '"createTimestamp":1795744731579,"writeTimestamp":1795744731579,"stateBatches":[]}}')


def test_a_share_snapshot_prints_as_kafka_4_4_prints_it():
    from kbatch.messages.topics import decode_share
    from kbatch.render.internal import dumplog_tokens
    decoded = decode_share(SHARE_KEY, SHARE_VALUE)
    assert decoded.problems == [] and dumplog_tokens(decoded, 0) == SHARE_LINE


def test_a_member_subscription_above_the_newest_version_reads_as_the_newest():
    """DumpLogSegments.replaceField reads a "consumer" member's subscription with the generated reader at
    its stored version, which it does not check: a newer client's version reads as the newest known."""
    from kbatch.messages.topics import decode_offsets
    newest = schemas.SCHEMAS["ConsumerProtocolSubscription"].valid_range[1]
    sub = {"topics": ["orders"], "userData": None, "ownedPartitions": [], "generationId": 3, "rackId": None}
    raw = FIX.prefixed("ConsumerProtocolSubscription", newest, sub)
    above = struct_pack(">h", newest + 3) + raw[2:]
    member = {"memberId": "m", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
              "rebalanceTimeout": 1, "sessionTimeout": 1, "subscription": above, "assignment": b""}
    group = {"protocolType": "consumer", "generation": 3, "protocol": "range", "leader": "m",
             "currentStateTimestamp": 0, "members": [member]}
    decoded = decode_offsets(FIX.prefixed("GroupMetadataKey", 2, {"group": "g"}),
                             FIX.prefixed("GroupMetadataValue", 3, group))
    assert decoded.problems == []
    got = decoded.value["data"]["members"][0]["subscription"]
    assert to_json(got) == FIX.expected("ConsumerProtocolSubscription", newest, sub)["data"]


@pytest.mark.parametrize("part", ["a", "b"])
def test_remote_log_metadata_dumplog_is_what_kafka_4_4_printed(part, kbatch):
    """RemoteMetadataLogMessageParser: the toString of what RemoteLogMetadataSerde builds, or the message of
    what its constructors throw; compared with the output of Kafka 4.4.0's tool kept beside the segment."""
    folder = ROOT / "fixtures" / "remote" / part
    segment = "fixtures/remote/" + part + "/__remote_log_metadata-0/00000000000000000000.log"
    kafka = (folder / "kafka-dump-log.txt").read_text().splitlines()
    # a holds a value cut short (Kafka's parser throws on it): damage; b none
    dumped = kbatch("dump", "--format", "dumplog", "--records", segment, expect={"a": 1, "b": 0}[part])
    ours = [line for line in dumped.out.splitlines() if not line.startswith("#")]   # kbatch's own comments on damage
    assert ours == kafka
