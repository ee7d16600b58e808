"""The compiled record decoder and the same source run as plain Python give the same answers.

kbatch/recordwalk.py is compiled by Cython at install (where a C compiler is found) and imported as
``kbatch.recordwalk``; :func:`tests.helpers.pure_recordwalk` loads the .py file as plain Python.
Every shipped segment, random records built by the construct declaration, and random damage to them
must walk into the same columns, findings and checks both ways, in any chunk size.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

import kbatch.records
import kbatch.recordwalk as compiled
from kbatch import layouts
from kbatch.codecs import CodecError, Decompressor

from .helpers import fixture_id, fixture_paths, pure_recordwalk, read_all, run_kbatch

pure = pure_recordwalk()


def test_the_installed_decoder_is_the_compiled_one():
    """The README's install builds the extension; without it this suite would test the pure twin twice."""
    if os.environ.get("KBATCH_PURE_PYTHON"):
        pytest.skip("KBATCH_PURE_PYTHON: installed without the compiled decoder on purpose")
    assert compiled.is_compiled(), "kbatch.recordwalk is not compiled: did the install build the extension?"
    assert not pure.is_compiled()
    assert compiled.RECORD_COLUMNS == pure.RECORD_COLUMNS


def _walk(module, data, count, base_offset=0, base_timestamp=0, chunk=16384) -> dict:
    """Everything a walk produces, as plain values."""
    walker = module.RecordWalker(data, count, base_offset, base_timestamp)
    columns = module.RecordColumns(chunk, 2)
    rows = {name: [] for name in module.RECORD_COLUMNS}
    headers = {name: [] for name in module.HEADER_COLUMNS}
    while walker.fill(columns):
        first_header = len(headers["key_pos"])
        for name in module.RECORD_COLUMNS:
            values = columns.column(name).tolist()
            rows[name] += [value + first_header for value in values] if name == "first_header" else values
        for name in module.HEADER_COLUMNS:
            headers[name] += columns.header_column(name).tolist()
    return {"rows": rows, "headers": headers, "findings": walker.findings, "decoded": walker.decoded,
            "max_timestamp": walker.max_timestamp, "last_offset_delta": walker.last_offset_delta,
            "order_breaks": walker.order_breaks, "done": walker.done}


def _agree(data, count, base_offset=0, base_timestamp=0) -> dict:
    reference = _walk(compiled, data, count, base_offset, base_timestamp)
    for module in (compiled, pure):
        for chunk in (1, 3, 16384):
            assert _walk(module, data, count, base_offset, base_timestamp, chunk) == reference, (module, chunk)
    return reference


def _v2_record_bytes(path) -> list[tuple[bytes, object]]:
    """(records' bytes, batch) of every v2 batch of a shipped segment, decompressed."""
    data = path.read_bytes()
    batches, _ = read_all(data)
    decompressor = Decompressor()
    out = []
    for batch in batches:
        if batch.magic != 2:
            continue
        payload = data[batch.payload_pos:batch.payload_pos + batch.payload_size]
        try:
            payload = decompressor.decompress(batch.attributes & 7, payload, 2)
        except CodecError:
            continue
        out.append((payload, batch))
    return out


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_compiled_and_pure_walk_every_shipped_batch_alike(path):
    for payload, batch in _v2_record_bytes(path):
        result = _agree(payload, batch.count, batch.base_offset, batch.base_timestamp)
        assert result["decoded"] == batch.count or result["findings"]


_bytes_or_null = st.one_of(st.none(), st.binary(max_size=30))
_record = st.fixed_dictionaries({
    "attributes": st.integers(-128, 127), "timestamp_delta": st.integers(-(2**63), 2**63 - 1),
    "offset_delta": st.integers(-(2**31), 2**31 - 1), "key": _bytes_or_null, "value": _bytes_or_null,
    "headers": st.lists(st.tuples(st.binary(max_size=8), _bytes_or_null), max_size=3)})


def _record_bytes(spec: dict) -> bytes:
    key, value, headers = spec["key"], spec["value"], spec["headers"]
    body = layouts.Record.build(dict(
        length=0, attributes=spec["attributes"], timestamp_delta=spec["timestamp_delta"],
        offset_delta=spec["offset_delta"], key_length=-1 if key is None else len(key), key=key,
        value_length=-1 if value is None else len(value), value=value, headers_count=len(headers),
        headers=[dict(key_length=len(k), key=k, value_length=-1 if v is None else len(v), value=v)
                 for k, v in headers]))[1:]
    return layouts.Varint.build(len(body)) + body


@settings(max_examples=300, deadline=None)
@given(records=st.lists(_record, max_size=6), extra_count=st.integers(-2, 2),
       base_offset=st.sampled_from([0, 5, 2**63 - 10, -(2**63)]),
       base_timestamp=st.sampled_from([0, 1_700_000_000_000, 2**63 - 1, -(2**63)]),
       damage=st.one_of(st.none(), st.tuples(st.integers(0, 10**6), st.integers(0, 255))),
       tail=st.binary(max_size=4))
def test_compiled_and_pure_agree_on_random_records_and_damage(records, extra_count, base_offset, base_timestamp,
                                                               damage, tail):
    data = bytearray(b"".join(_record_bytes(spec) for spec in records) + tail)
    if damage is not None and data:
        data[damage[0] % len(data)] = damage[1]
    result = _agree(bytes(data), len(records) + extra_count, base_offset, base_timestamp)
    if damage is None and not tail and extra_count == 0:
        assert result["decoded"] == len(records)
        assert result["rows"]["offset_delta"] == [spec["offset_delta"] for spec in records]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=80), count=st.integers(-1, 12))
def test_compiled_and_pure_agree_on_random_bytes(data, count):
    _agree(data, count)


def test_offsets_and_timestamps_wrap_as_java_longs_do():
    """DefaultRecord.readFrom: baseOffset + offsetDelta and baseTimestamp + timestampDelta are Java longs."""
    data = _record_bytes(dict(attributes=0, timestamp_delta=2, offset_delta=3, key=None, value=b"v", headers=[]))
    for module in (compiled, pure):
        walker = module.RecordWalker(data, 1, 2**63 - 2, 2**63 - 1)
        columns = module.RecordColumns()
        assert walker.fill(columns) == 1
        assert columns.column("offset").tolist() == [-(2**63) + 1]
        assert columns.column("timestamp").tolist() == [-(2**63) + 1]
        assert [(finding[0], finding[3]) for finding in walker.findings] == [
            ("long-overflow", "records[0].offset_delta"), ("long-overflow", "records[0].timestamp_delta")]
        assert "which Java wraps to -9223372036854775807" in walker.findings[0][5]


def test_a_huge_records_count_allocates_nothing_for_records_that_are_not_there():
    """recordsCount 2**31-1 over 9 bytes of records: one record, a finding, and columns the size asked."""
    data = _record_bytes(dict(attributes=0, timestamp_delta=0, offset_delta=0, key=None, value=b"v", headers=[]))
    for module in (compiled, pure):
        walker = module.RecordWalker(data, 2**31 - 1, 0, 0)
        columns = module.RecordColumns(4)
        assert walker.fill(columns) == 1 and walker.fill(columns) == 0
        assert [finding[0] for finding in walker.findings] == ["records-count-mismatch"]
        assert len(columns.records["pos"]) == 4


@pytest.mark.parametrize("args", [["verify-crc", "--deep", "--format", "jsonl"],
                                  ["dump", "--records", "--format", "jsonl"]], ids=["verify-deep", "dump-records"])
def test_every_command_prints_the_same_with_the_pure_decoder(args, capsys, monkeypatch):
    paths = [str(path) for path in fixture_paths()]
    with_compiled = run_kbatch(args + paths, capsys, monkeypatch)
    monkeypatch.setattr(kbatch.records, "RecordWalker", pure.RecordWalker)
    monkeypatch.setattr(kbatch.records, "RecordColumns", pure.RecordColumns)
    monkeypatch.setattr(kbatch.records, "_COLUMNS", {})
    with_pure = run_kbatch(args + paths, capsys, monkeypatch)
    assert with_pure == with_compiled
    assert with_compiled.out.count("\n") > 50
