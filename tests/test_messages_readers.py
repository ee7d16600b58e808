"""The straight-line readers (kbatch.messages.readers): what the declarations write, and held to the generic
decoder on every version of every message ``kbatch pcap`` reads with them -- messages of random values written
by the fixture writer (its own reading of Kafka's definitions, no kbatch), then the same bytes with a byte
changed or cut short."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbatch.capture.batches import _records_spans
from kbatch.messages import make_readers, readers
from kbatch.messages.decoder import MessageDecoder, MessageError, uuid_text
from kbatch.messages.schemas import SCHEMAS
from kbatch.messages.spec import F, in_range, version_range
from tests.helpers import fixture_writer

FIX = fixture_writer()
CASES = [(name, version) for name in make_readers.MESSAGES
         for version in range(SCHEMAS[name].valid_range[0], SCHEMAS[name].valid_range[1] + 1)]
RANGES = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _value(draw, field: F, version: int, kind: str, nullable: bool):
    if nullable and draw(st.integers(0, 4)) == 0:
        return None
    if kind in RANGES:
        bits = RANGES[kind]
        return draw(st.integers(-(1 << bits), (1 << bits) - 1))
    if kind in ("uint16", "uint32"):
        return draw(st.integers(0, (1 << (16 if kind == "uint16" else 32)) - 1))
    if kind == "float64":
        return draw(st.floats(allow_nan=False))
    if kind == "bool":
        return draw(st.booleans())
    if kind == "uuid":
        return uuid_text(draw(st.binary(min_size=16, max_size=16)))
    if kind == "string":
        return draw(st.text(alphabet=string.ascii_letters + "-._", max_size=8))
    if kind in ("bytes", "records"):
        return draw(st.binary(max_size=12))
    if kind.startswith("[]"):
        element = kind[2:]
        return [_value(draw, field, version, element, False) for _ in range(draw(st.integers(0, 3)))]
    return _struct(draw, field.fields, version)


def _struct(draw, fields: tuple[F, ...], version: int) -> dict:
    """Random values of a struct's fields at ``version``; a tagged field now and then."""
    out = {}
    for field in fields:
        if not in_range(version, version_range(field.versions)):
            continue
        if in_range(version, version_range(field.tagged)):
            if draw(st.integers(0, 5)) != 0:
                continue   # left at its default: not written
        nullable = in_range(version, version_range(field.nullable))
        out[field.json_name] = _value(draw, field, version, field.type, nullable)
    return out


@st.composite
def messages(draw, name: str, version: int) -> bytes:
    """A message's bytes, now and then with a tag a newer writer added."""
    values = _struct(draw, SCHEMAS[name].fields, version)
    if in_range(version, version_range(SCHEMAS[name].flexible)) and draw(st.integers(0, 5)) == 0:
        values["_unknownTags"] = [(1000, b"\x01\x02")]
    return FIX.Writer(name, version).message(values)


def _generic(name: str, version: int, data: bytes) -> tuple[tuple, bool]:
    """What the generic decoder reads, as a compiled reader gives it, and whether it read any tag."""
    spans: list = []
    fields, end = MessageDecoder(SCHEMAS[name], version, name).decode(data, 0, spans=spans)
    return (fields, end, _records_spans(spans)), any("_tag[" in path for _, _, path, _ in spans)


@pytest.mark.parametrize(("name", "version"), CASES)
@SETTINGS
@given(data=st.data())
def test_a_well_formed_message_reads_as_the_generic_decoder_reads_it(name, version, data):
    raw = data.draw(messages(name, version))
    compiled = readers.read(name, version, raw, 0)
    generic, tagged = _generic(name, version, raw)
    # a message with a tagged field is left to the generic decoder; every other is read by the compiled reader
    assert (compiled is None) == tagged
    if compiled is not None:
        assert compiled == generic


def damage(raw: bytes, data) -> bytes:
    """``raw`` cut short, or with one byte changed, where ``data`` draws."""
    at = data.draw(st.integers(0, max(len(raw) - 1, 0)))
    if data.draw(st.booleans()) or not raw:
        return raw[:at]
    return raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1:]


@pytest.mark.parametrize(("name", "version"), CASES)
@SETTINGS
@given(data=st.data())
def test_damaged_bytes_are_left_to_the_generic_decoder_or_read_as_it_reads_them(name, version, data):
    raw = data.draw(messages(name, version))
    damaged = damage(raw, data)
    compiled = readers.read(name, version, damaged, 0)
    try:
        generic, _ = _generic(name, version, damaged)
    except MessageError:
        assert compiled is None   # what the generic decoder refuses, the compiled reader never reads
        return
    assert compiled is None or compiled == generic


def test_records_are_found_by_path_where_their_bytes_start():
    records = b"\x00" * 70
    raw = FIX.Writer("FetchResponse", 4).message({"responses": [
        {"topic": "a", "partitions": [{"partitionIndex": 0}, {"partitionIndex": 1, "records": records}]}]})
    fields, end, found = readers.read("FetchResponse", 4, raw, 0)
    assert end == len(raw) and found == {"responses[0].partitions[1].records": (len(raw) - 70, records)}
    assert fields["responses"][0]["partitions"][1]["records"] == records


@pytest.mark.parametrize(("name", "version"), [("ProduceRequest", 8), ("FetchResponse", 11), ("FetchResponse", 16)])
def test_a_records_field_is_a_view_of_the_message_not_a_copy(name, version):
    """The batches of a Records field are read where they lie in the message's bytes (a capture's every batch
    copied once more otherwise)."""
    records = bytes(range(70))
    if name == "ProduceRequest":
        values = {"acks": -1, "timeoutMs": 1, "topicData": [{"name": "a", "partitionData": [
            {"index": 0, "records": records}]}]}
    else:
        values = {"responses": [{"topic": "a", "topicId": uuid_text(bytes(range(16))), "partitions": [
            {"partitionIndex": 0, "records": records}]}]}
    raw = FIX.Writer(name, version).message(values)
    _, _, found = readers.read(name, version, raw, 0)
    [(pos, view)] = found.values()
    assert isinstance(view, memoryview) and view.obj is raw and bytes(view) == records == raw[pos:pos + 70]


def test_readers_is_what_the_declarations_write():
    """kbatch/messages/readers.py below its line is what make_readers writes from the schema table: a change to
    the table (or to the writer) without ``python -m kbatch.messages.make_readers`` fails here."""
    text = Path(readers.__file__).read_text()
    assert text.endswith("\n" + make_readers.block()), \
        "kbatch/messages/readers.py is stale: run python -m kbatch.messages.make_readers"
    assert set(readers.READERS) == set(CASES)


def test_fixed_width_runs_are_one_unpack_and_versions_alike_share_a_function():
    text = Path(readers.__file__).read_text()
    assert "(out['index'], out['errorCode'], out['baseOffset'], out['logAppendTimeMs'], out['logStartOffset'],\n" \
           "     out['recordErrors']" not in text   # (an array ends a run)
    assert "(out['index'], out['errorCode'], out['baseOffset'], out['logAppendTimeMs'], out['logStartOffset'],)" \
           " = _ihqqq.unpack_from(data, pos)" in text
    # Produce v3 and v4 differ in nothing a reader sees (v4 only allows a newer error code)
    assert readers.READERS["ProduceRequest", 3] is readers.READERS["ProduceRequest", 4]
