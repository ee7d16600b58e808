"""Kafka's internal topics: the schema table, the generic decoder, and what ``dump`` shows of them.

The fixtures under fixtures/internal were written by fixtures/make_internal_fixtures.py straight from
Kafka's JSON message definitions (fixtures/kafka-messages), without kbatch; their sidecars say what every
key and value holds.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import struct
import sys

import pytest
from hypothesis import given, settings, strategies as st

from kbatch.format.findings import Finding
from kbatch.messages import make_table
from kbatch.messages.decoder import MessageDecoder, MessageError, to_json
from kbatch.messages.schemas import LAYOUTS, SCHEMAS
from kbatch.messages.spec import F, M
from kbatch.messages import TOPIC_DECODERS, decoder_for_path
from kbatch.messages.topics import decode, decode_metadata, decode_offsets

from .helpers import FIXTURES, ROOT

INTERNAL = FIXTURES / "internal"
SEGMENTS = sorted([*INTERNAL.rglob("*.log"), *INTERNAL.rglob("*.checkpoint")])


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def _id(path) -> str:
    return path.relative_to(INTERNAL).as_posix().replace("/", "--")


def _sidecar(path) -> dict:
    return json.loads(path.with_suffix(".json").read_text())


def _records(result) -> list[dict]:
    return [record for line in result.out.splitlines() for record in json.loads(line).get("records", [])]


def test_the_schema_table_is_what_kafkas_definitions_say():
    written = make_table.table(FIXTURES / "kafka-messages")
    assert (ROOT / "kbatch" / "messages" / "schemas.json").read_text() == written


def test_the_fixtures_are_what_their_script_writes():
    spec = importlib.util.spec_from_file_location("make_internal_fixtures",
                                                  FIXTURES / "make_internal_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(FIXTURES))
    try:
        spec.loader.exec_module(module)
        files = module.outputs()
    finally:
        sys.path.remove(str(FIXTURES))
    assert sorted(files) == sorted(path.relative_to(INTERNAL).as_posix() for path in INTERNAL.rglob("*.*"))
    for name, data in files.items():
        assert (INTERNAL / name).read_bytes() == data, name


@pytest.mark.parametrize("path", SEGMENTS, ids=_id)
def test_every_record_decodes_to_what_went_in(path, kbatch):
    result = kbatch("dump", "--records", "--format", "jsonl", _rel(path))
    side = _sidecar(path)
    assert result.code == (1 if side["damaged"] else 0)
    records = {record["offset"]: record for record in _records(result)}
    assert sorted(records) == [record["offset"] for record in side["records"]]
    for want in side["records"]:
        got = records[want["offset"]]
        if "control" in want:
            assert got["control"]["type"] == want["control"] and "decoded" not in got
            assert got["control"]["data"] == want.get("control_data")
            continue
        if "schema_registry" in want:
            assert got.get("schema_registry") == want["schema_registry"]
        if "finding" in want or "key" not in want:    # damaged on purpose, or a data topic's record
            continue
        decoded = got["decoded"]
        assert decoded["key"] == want["key"]
        assert decoded["tombstone"] is want["tombstone"]
        value = dict(decoded["value"]) if decoded["value"] is not None else None
        state = value.pop("state", None) if value is not None else None
        if "state" in want:
            assert state == want["state"]
        # the fixtures are written with trunk's definitions: a message Kafka changed in place reads with
        # the newest layout, and says so
        layout = value.pop("layout", None) if value is not None else None
        assert layout == (LAYOUTS[value["name"]][0].name if value is not None and value["name"] in LAYOUTS else None)
        assert value == want["value"]


@pytest.mark.parametrize("path", SEGMENTS, ids=_id)
def test_damage_is_found_at_the_record_it_was_done_to(path, kbatch):
    result = kbatch("dump", "--records", "--format", "jsonl", _rel(path), expect=1 if _sidecar(path)["damaged"] else 0)
    found = []
    for line in result.out.splitlines():
        entry = json.loads(line)
        if entry["type"] == "batch":
            found += [{"offset": entry["base_offset"], "code": finding["code"]} for finding in entry["findings"]]
    assert found == _sidecar(path)["findings"]


@settings(max_examples=300, deadline=None)
@given(names=st.lists(st.sampled_from(["", ".", "..", "x", "__consumer_offsets-12", "__cluster_metadata-0",
                                       "orders-3", "00000000000000000000.log", "bootstrap.checkpoint"]), max_size=5),
       absolute=st.booleans())
def test_the_decoder_for_a_path_is_what_its_names_as_pathlib_parts_them_say(names, absolute):
    """decoder_for_path splits a path without pathlib (its import is a few ms of every run): the same
    answer as PurePath's name and parent on any mix of empty, ".", ".." and partition names."""
    from pathlib import PurePath

    path = ("/" if absolute else "") + "/".join(names)
    if PurePath(path).name == "bootstrap.checkpoint":
        expected = "metadata"
    else:
        match = re.fullmatch(r"(.+)-(\d+)", PurePath(path).parent.name)
        expected = TOPIC_DECODERS.get(match.group(1)) if match else None
    assert decoder_for_path(path) == expected


def test_the_decoder_comes_from_the_partition_directory_or_the_option(kbatch):
    assert decoder_for_path("/var/lib/kafka/__consumer_offsets-12/00000000000000000000.log") == "offsets"
    assert decoder_for_path("__transaction_state-0/00000000000000000000.log") == "transactions"
    assert decoder_for_path("__cluster_metadata-0/00000000000000000000.checkpoint") == "metadata"
    assert decoder_for_path("/kraft/bootstrap.checkpoint") == "metadata"
    assert decoder_for_path("orders-3/00000000000000000000.log") is None
    assert decoder_for_path("__consumer_offsets/00000000000000000000.log") is None
    path = _rel(INTERNAL / "__consumer_offsets-12" / "00000000000000000000.log")
    raw = _records(kbatch("dump", "-r", "--format", "jsonl", "--decoder", "none", path))
    assert all("decoded" not in record for record in raw)
    # the same bytes read as the wrong topic are findings, never a crash or a guess
    wrong = kbatch("dump", "-r", "--format", "jsonl", "--decoder", "metadata", path)
    assert wrong.code == 1 and "Traceback" not in wrong.out + wrong.err
    assert all(record["decoded"]["value"] is None for record in _records(wrong) if "decoded" in record)


def test_unknown_tags_are_kept_raw_and_absent_tags_take_their_defaults():
    key = struct.pack(">h", 0) + struct.pack(">h", 2) + b"tx"
    # TransactionLogValue v1 (flexible): no tag 0/1/2 written, one unknown tag 5 of 3 bytes
    body = struct.pack(">qhib", 9, 1, 1000, 0) + b"\x01" + struct.pack(">qq", 1, 2) + b"\x01" + b"\x05\x03abc"
    decoded = decode("transactions", key, struct.pack(">h", 1) + body)
    assert decoded.problems == []
    data = decoded.value["data"]
    assert (data["previousProducerId"], data["nextProducerId"], data["clientTransactionVersion"]) == (-1, -1, 0)
    assert data["transactionPartitions"] == [] and data["_unknownTaggedFields"] == [{"tag": 5, "hex": "616263"}]
    assert decoded.value["state"] == "Empty"


def test_compact_lengths_nulls_and_nested_tags():
    schema = M("data", "0-1", "1+", fields=(
        F("Name", "string", "0+", nullable="1+"),
        F("Items", "[]Item", "0+", fields=(F("Id", "uuid", "0+"), F("Note", "string", "1+", tagged="1+", tag=0,
                                                                          nullable="1+", default=None))),
    ))
    zero_uuid = bytes(16)
    flexible = b"\x00" + b"\x02" + zero_uuid + b"\x01\x00\x03\x03hi" + b"\x00"
    value, used = MessageDecoder(schema, 1).decode(flexible)
    assert used == len(flexible)
    assert value == {"name": None, "items": [{"id": "AAAAAAAAAAAAAAAAAAAAAA", "note": "hi"}]}
    with pytest.raises(MessageError, match="non-nullable"):
        MessageDecoder(schema, 0).decode(struct.pack(">h", -1) + struct.pack(">i", 0))
    with pytest.raises(MessageError, match="allocate"):
        MessageDecoder(schema, 0).decode(struct.pack(">h", 0) + struct.pack(">i", 1000))


def test_bytes_are_base64_as_kafkas_json_writes_them():
    assert to_json({"a": [b"\x00\x01"], "b": b""}) == {"a": ["AAE="], "b": ""}


_MESSAGES = sorted(SCHEMAS)


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(_MESSAGES), version=st.integers(0, 5), data=st.binary(max_size=80))
def test_garbage_never_crashes_the_decoder(name, version, data):
    try:
        MessageDecoder(SCHEMAS[name], version, name).decode(data)
    except MessageError as error:
        assert error.field and error.expected and error.actual


@settings(max_examples=300, deadline=None)
@given(decoder=st.sampled_from(["offsets", "transactions", "metadata", "share"]),
       key=st.one_of(st.none(), st.binary(max_size=30)), value=st.one_of(st.none(), st.binary(max_size=60)))
def test_garbage_records_are_problems_never_exceptions(decoder, key, value):
    """Each part a record of the topic has (a metadata record's key is not read) is read (a tombstone's value
    is null), or not: a part with a problem is one not read, and the first part not read has one (a value is
    not read when its key was not)."""
    decoded = decode(decoder, key, value)
    parts = ("value",) if decoder == "metadata" else ("key", "value")
    unread = [part for part in parts if getattr(decoded, part) is None and not (part == "value" and decoded.tombstone)]
    with_problems = {problem.part for problem in decoded.problems}
    assert with_problems <= set(unread), decoded
    assert (unread[0] in with_problems) if unread else not with_problems, decoded
    for problem in decoded.problems:
        data = key if problem.part == "key" else value
        assert 0 <= problem.pos <= len(data or b""), problem


@pytest.mark.parametrize("fmt", ["table", "dumplog"])
@pytest.mark.parametrize("path", SEGMENTS, ids=_id)
def test_dump_internal_text_snapshot(path, fmt, kbatch, text_snapshot):
    shown = []
    for extra in ([], ["--records"]):
        args = ["dump", "--format", fmt, *extra, _rel(path)]
        result = kbatch(*args)
        assert result.err == ""
        shown.append(f"$ kbatch {' '.join(args)}\n{result.out}(exit {result.code})\n")
    assert "\n".join(shown) == text_snapshot


@pytest.mark.parametrize("path", SEGMENTS, ids=_id)
def test_dump_internal_jsonl_snapshot(path, kbatch, jsonl_snapshot):
    result = kbatch("dump", "--format", "jsonl", "--records", _rel(path), expect=1 if _sidecar(path)["damaged"] else 0)
    assert result.out == jsonl_snapshot


def test_verify_crc_deep_reads_internal_topics_with_their_schemas(kbatch):
    damaged = _rel(INTERNAL / "damaged" / "__consumer_offsets-0" / "00000000000000000000.log")
    assert kbatch("verify-crc", damaged).code == 0          # framing and checksums are intact
    deep = kbatch("verify-crc", "--deep", "--format", "jsonl", damaged)
    codes = [json.loads(line).get("code") for line in deep.out.splitlines()]
    assert deep.code == 1 and codes.count("bad-internal-record") == 2 and codes.count("unknown-record-version") == 2
    clean = kbatch("verify-crc", "--deep", _rel(INTERNAL / "__consumer_offsets-12" / "00000000000000000000.log"))
    assert clean.code == 0


# -- Kafka's own exception messages, as kafka-dump-log.sh prints them after "skipping." ------------------------

@pytest.mark.parametrize("data,java", [
    (b"", "null"),                                               # BufferUnderflowException: no message
    (b"\xff\xff\xff\xff\x8f", "Varint is too long, the most significant bit in the 5th byte is set, "
                              "converted value: ffffffff"),
    (b"\x80\x80\x80\x80\x81", "Varint is too long, the most significant bit in the 5th byte is set, "
                              "converted value: 10000000"),
])
def test_unsigned_varint_errors_carry_byteutils_text(data, java):
    from kbatch.messages.decoder import _Reader
    with pytest.raises(MessageError) as caught:
        _Reader(data, 0, len(data)).unsigned_varint("x")
    assert caught.value.java == java


def test_coordinator_record_errors_carry_kafkas_text():
    """CoordinatorRecordSerde.readMessage wraps the generated reader's exception in its own sentence."""
    key = struct.pack(">hh", 1, 1) + b"g" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 0)   # OffsetCommitKey v1
    short = decode_offsets(key, struct.pack(">hq", 3, 5))                            # cut before leaderEpoch
    assert short.problems[0].kafka == "Could not read record with version 3 from value's buffer due to: null."
    long_string = decode_offsets(key, struct.pack(">hqih", 3, 5, 0, 3) + b"ab")      # metadata: 3 bytes, 2 there
    assert long_string.problems[0].kafka == ("Could not read record with version 3 from value's buffer due to: "
                                              "Error reading byte array of 3 byte(s): only 2 byte(s) available.")
    assert decode_offsets(key, b"\x00").problems[0].kafka == "Could not read version from value's buffer."


def test_metadata_record_errors_carry_kafkas_text():
    """AbstractApiMessageSerde.read's own messages."""
    assert decode_metadata(None, b"\x02\x02\x00").problems[0].kafka == (
        "Could not deserialize metadata record due to unknown frame version 2(only frame version 1 is supported)")
    assert decode_metadata(None, b"\x01\xff\xff\x03").problems[0].kafka == "Value for type was too large."
    assert decode_metadata(None, b"\x01").problems[0].kafka == "Error while reading type"


# -- hexdump-annotate: keys and values split into their messages' fields --------------------------------------

def _internal_logs(root):
    return sorted(path for path in root.rglob("*") if path.suffix in (".log", ".checkpoint")
                  and decoder_for_path(str(path)) is not None)


@pytest.mark.parametrize("path", _internal_logs(INTERNAL / "__consumer_offsets-12").__add__(
    _internal_logs(INTERNAL / "__transaction_state-3") + _internal_logs(INTERNAL / "__cluster_metadata-0")
    + _internal_logs(INTERNAL / "__share_group_state-0")), ids=lambda path: path.parent.name)
def test_hexdump_spans_cover_every_key_and_value_byte_with_message_fields(path):
    from kbatch.ops.annotate import entry_spans
    from kbatch.reading.reader import ReadOptions, SegmentReader

    data = path.read_bytes()
    decoder = decoder_for_path(str(path))
    split = 0
    for index, batch in enumerate(item for item in SegmentReader(io.BytesIO(data), ReadOptions(records=True))
                                  if not isinstance(item, Finding)):
        spans = entry_spans(batch, memoryview(data)[batch.pos:batch.pos + batch.size], index, internal=decoder)
        assert [span.start for span in spans[1:]] == [span.end for span in spans[:-1]]   # they tile the entry
        assert spans[0].start == batch.pos and spans[-1].end == batch.pos + batch.size
        assert not [span for span in spans if span.kind != "field"]
        if batch.compressed:
            continue
        for span in spans:
            part = span.path.split(".")[2] if span.path.count(".") >= 2 else ""
            if part in ("key", "value"):
                assert span.path.count(".") >= 3 or span.size == 0, span   # a message field, not the whole part
                split += 1
    assert split


def test_hexdump_shows_an_offset_commits_fields(kbatch):
    result = kbatch("hexdump-annotate", "--no-color", "fixtures/internal/__consumer_offsets-12/00000000000000000000.log")
    assert result.code == 0
    for field, value in (("records[0].key.type", "1 (OffsetCommitKey)"), ("records[0].key.group", "'billing'"),
                         ("records[0].value.offset", "1200")):
        assert any(f"batch[0].{field}" in line and value in line for line in result.out.splitlines()), field


def test_hexdump_shows_bytes_and_uuids_as_kafkas_json_prints_them(kbatch):
    """A bytes field in base64 (Kafka's JSON converters), a uuid as Uuid.toString: as dump's JSON has them."""
    path = "fixtures/internal/__consumer_offsets-12/00000000000000000000.log"
    shown = kbatch("hexdump-annotate", "--no-color", "--batch", "1", path, expect=0).out
    line = next(line for line in shown.splitlines() if "members[0].subscription " in line)
    assert "  AAEAAAACAAZvcmRlcnMACHBheW1lbnRz" in line and "0x0001" not in line
    share = "fixtures/internal/__share_group_state-0/00000000000000000000.log"
    line = next(line for line in kbatch("hexdump-annotate", "--no-color", share, expect=0).out.splitlines()
                if "records[0].key.topicId" in line)
    assert "0a8hLp9fQyKg2T1S2cH2kQ" in line


def test_hexdump_of_a_value_cut_short_keeps_the_rest_raw(kbatch):
    result = kbatch("hexdump-annotate", "--no-color", "fixtures/internal/damaged/__consumer_offsets-0/"
                    "00000000000000000000.log", expect=0)
    assert "Traceback" not in result.out + result.err
    assert "records[0].value.metadata" in result.out and "records[0].value (unparsed)" in result.out


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_the_table_shows_an_offset_commit_key_as_group_topic_partition(kbatch, monkeypatch, columns):
    """The key cell read `OffsetCommitKey v1 {"group":"billing","topic":"o…`, never the topic and partition."""
    monkeypatch.setenv("COLUMNS", str(columns))
    out = kbatch("dump", "-r", "fixtures/internal/__consumer_offsets-12/00000000000000000000.log", expect=0).out
    assert "billing/orders/0" in out and "audit/orders/0" in out and '{"group"' not in out
