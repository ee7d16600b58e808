"""The record decoder is held to the construct declaration, compiled and as plain Python alike (the pure build:
tests/test_recordwalk.py runs this file again with KBATCH_PURE_PYTHON=1)."""

from __future__ import annotations

import io

from construct import Container, ListContainer, StreamError
from hypothesis import HealthCheck, example, given, settings, strategies as st

from kbatch.format import layouts
from kbatch.format.codecs import Decompressor
from kbatch.reading.records import FIELD_ORDER, RecordError, decode_record

from .helpers import fixture_paths, read_all


_bytes_or_null = st.one_of(st.none(), st.binary(max_size=40))
_headers = st.lists(st.tuples(st.binary(max_size=10), _bytes_or_null), max_size=4)


def _spec(attributes, timestamp_delta, offset_delta, key, value, headers) -> dict:
    return dict(
        length=0, attributes=attributes, timestamp_delta=timestamp_delta, offset_delta=offset_delta,
        key_length=-1 if key is None else len(key), key=key,
        value_length=-1 if value is None else len(value), value=value,
        headers_count=len(headers),
        headers=[dict(key_length=len(k), key=k, value_length=-1 if v is None else len(v), value=v)
                 for k, v in headers],
    )


def _build(spec: dict) -> bytes:
    """A record built by the declaration, with its length field made true."""
    body = layouts.Record.build(spec)[1:]  # length 0 takes one byte
    return layouts.Varint.build(len(body)) + body


def _plain(value):
    if isinstance(value, (Container, dict)):
        return {k: _plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, (ListContainer, list)):
        return [_plain(v) for v in value]
    return value


def _fast_as_declared(fields: dict) -> dict:
    out = dict(fields)
    out["headers"] = [dict(key_length=len(k), key=k, value_length=-1 if v is None else len(v), value=v)
                      for k, v in fields["headers"]]
    return out


def test_fast_decoder_reads_the_declared_fields_in_order():
    fields, _ = decode_record(_build(_spec(0, 5, 1, b"k", b"v", [])), 0, 100, "r")
    assert tuple(fields) == FIELD_ORDER == tuple(sc.name for sc in layouts.Record.subcons)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attributes=st.integers(-128, 127), timestamp_delta=st.integers(-(2**63), 2**63 - 1),
       offset_delta=st.integers(-(2**31), 2**31 - 1), key=_bytes_or_null, value=_bytes_or_null, headers=_headers)
def test_fast_decoder_agrees_with_construct(attributes, timestamp_delta, offset_delta, key, value, headers):
    data = _build(_spec(attributes, timestamp_delta, offset_delta, key, value, headers))
    fields, end = decode_record(data, 0, len(data), "r")
    assert end == len(data)
    assert _fast_as_declared(fields) == _plain(layouts.Record.parse(data))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=60))
@example(b"\x0e\x00\x00\x00\x00\x00\x02\x01")   # a header key length of -1, then the record's end
def test_on_random_bytes_the_fast_decoder_fails_cleanly_or_agrees(data):
    try:
        fields, end = decode_record(data, 0, len(data), "r")
    except RecordError as error:
        # and the other way: the declaration fails on the same bytes, or reads what Kafka rejects
        assert error.code in {"record-overrun", "varint-overflow", "bad-record-length", "bad-length"}
        stream = io.BytesIO(data)
        try:
            parsed = _plain(layouts.Record.parse_stream(stream))
        except (StreamError, layouts.VarintOverflow):
            # Both reject the bytes.  A negative header key length is named first where Kafka names it
            # (DefaultRecord.readHeaders: "Invalid negative header key size"), even when the bytes then run out.
            assert error.code in {"record-overrun", "varint-overflow", "bad-record-length", "bad-length"}
            return
        read_to = stream.tell()
        stream = io.BytesIO(data)
        layouts.Varint.parse_stream(stream)
        declared_end = stream.tell() + parsed["length"]
        wrong_length = read_to != declared_end   # the fields run past the record's length, or stop short of it
        rejected = {"bad-record-length": wrong_length, "record-overrun": wrong_length,
                    "bad-length": parsed["headers_count"] < 0 or any(header["key_length"] < 0
                                                                      for header in parsed["headers"])}
        assert rejected.get(error.code), (error.code, parsed)
        return
    parsed = _plain(layouts.Record.parse(data))
    assert _fast_as_declared(fields) == parsed
    stream = io.BytesIO(data)
    layouts.Varint.parse_stream(stream)
    assert end == stream.tell() + parsed["length"]  # a record ends where its length says


def test_fast_decoder_agrees_with_construct_on_every_shipped_record():
    """Walk every v2 batch's records with the declaration and compare with the reader's."""
    decompressor = Decompressor()
    compared = 0
    for path in fixture_paths():
        batches, _ = read_all(path.read_bytes(), records=True)
        data = path.read_bytes()
        for batch in batches:
            if batch.magic != 2 or not batch.records or batch.findings:
                continue
            payload = data[batch.payload_pos:batch.payload_pos + batch.payload_size]
            payload = decompressor.decompress(batch.attributes & 7, payload, 2)
            stream = io.BytesIO(payload)
            for record in batch.records:   # every record the reader gave, the declaration reads alike
                parsed = layouts.Record.parse_stream(stream)
                assert record.key == parsed.key and record.value == parsed.value
                assert record.offset == batch.base_offset + parsed.offset_delta
                assert record.headers == [(h.key, h.value) for h in parsed.headers]
                assert record.attributes == parsed.attributes
                if batch.timestamp_type == "CreateTime":
                    assert record.timestamp == batch.base_timestamp + parsed.timestamp_delta
                compared += 1
            assert stream.tell() == len(payload) and len(batch.records) == batch.count   # and nothing else
    assert compared > 50
