"""The compiled record decoder and the same source run as plain Python give the same answers.

kbatch/kernels/*.py are compiled by Cython at install (where a C compiler is found) and imported as
``kbatch.kernels.*``; :func:`tests.helpers.pure_recordwalk` loads the .py files as plain Python.

Every shipped segment, random records built by the construct declaration, and random damage to them
must walk into the same columns, findings and checks both ways, in any chunk size.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import kbatch.format.findings
import kbatch.reading.records
import kbatch.output.jsonout
from kbatch.format import layouts
from kbatch.format.codecs import Decompressor
from kbatch.format.framing import size_bounds

from kbatch.kernels._load import pure_python_wanted

from .helpers import (ROOT, compiled_kernels, fixture_id, fixture_paths, pure_python_env, pure_recordwalk, read_all,
                      run_kbatch, run_kbatch_pure)

pure = pure_recordwalk()
compiled = compiled_kernels()
# Where the kernels run as plain Python (KBATCH_PURE_PYTHON=1), "compiled" is that same plain Python, which
# writes any integer: the 64-bit limits below are the compiled build's.
NATIVE = compiled.modules["jsonl"].__file__.endswith(".so")


def test_the_installed_decoder_is_the_compiled_one():
    """The README's install builds the extension; without it this suite would test the pure twin twice."""
    if pure_python_wanted():
        pytest.skip("KBATCH_PURE_PYTHON: installed without the compiled decoder on purpose")
    from kbatch.kernels._load import describe

    assert compiled.is_compiled(), f"the kernels run as {describe()}: did the install build them?"
    assert not pure.is_compiled()
    assert compiled.RECORD_COLUMNS == pure.RECORD_COLUMNS


def _walk(module, data, count, base_offset=0, base_timestamp=0, chunk=16384, walker=None, span=()) -> dict:
    """Everything a walk produces, as plain values (``walker``: one that walked something else, reset;
    ``span``: (start, end), the records lie there in ``data``)."""
    if walker is None:
        walker = module.RecordWalker(data, count, base_offset, base_timestamp, *span)
    else:
        walker.reset(data, count, base_offset, base_timestamp, *span)
    columns = module.RecordColumns(chunk, 2)
    rows = {name: [] for name in module.RECORD_COLUMNS}
    headers = {name: [] for name in module.HEADER_COLUMNS}
    starts_with_zero = False
    while walker.fill(columns):
        starts_with_zero |= module.any_key_or_value_starts_with_zero(columns, data)
        first_header = len(headers["key_pos"])
        for name in module.RECORD_COLUMNS:
            values = columns.column(name).tolist()
            rows[name] += [value + first_header for value in values] if name == "first_header" else values
        for name in module.HEADER_COLUMNS:
            headers[name] += columns.header_column(name).tolist()
    # The schema registry's pre-check, against the same question asked of the rows in Python.
    assert starts_with_zero == any(length > 0 and data[pos] == 0 for field in ("key", "value")
                                   for pos, length in zip(rows[f"{field}_pos"], rows[f"{field}_length"]))
    return {"rows": rows, "headers": headers, "findings": walker.findings, "decoded": walker.decoded,
            "max_timestamp": walker.max_timestamp, "last_offset_delta": walker.last_offset_delta,
            "order_breaks": walker.order_breaks, "done": walker.done, "starts_with_zero": starts_with_zero}


def _agree(data, count, base_offset=0, base_timestamp=0) -> dict:
    reference = _walk(compiled, data, count, base_offset, base_timestamp)
    for module in (compiled, pure):
        for chunk in (1, 3, 16384):
            assert _walk(module, data, count, base_offset, base_timestamp, chunk) == reference, (module, chunk)
        # a walker reset after a batch that left findings and order breaks, its walk ended
        used = module.RecordWalker(bytes(_record_bytes(_SMALL)) * 2 + b"\x7f", 5, 10, 0)
        while used.fill(module.RecordColumns(1, 1)):
            pass
        assert used.findings and used.order_breaks and used.done
        assert _walk(module, data, count, base_offset, base_timestamp, walker=used) == reference, module
        # The same records in the middle of a larger buffer, walked in place by a walker that holds that
        # buffer already: the same walk, at the buffer's positions.
        padded = b"\xff" * 5 + bytes(data) + b"\x00" * 3
        holding = module.RecordWalker(padded, 0, 0, 0)
        in_place = _walk(module, padded, count, base_offset, base_timestamp, walker=holding, span=(5, 5 + len(data)))
        assert _moved(in_place, -5) == reference, module
        # and by a walker given that span when it is made
        made_so = _walk(module, padded, count, base_offset, base_timestamp, span=(5, 5 + len(data)))
        assert _moved(made_so, -5) == reference, module
    return reference


def _moved(walk: dict, by: int) -> dict:
    """A walk's results with every position in them moved ``by`` bytes."""
    rows = {name: [value + by for value in values] if name in ("pos", "key_pos", "value_pos") else values
            for name, values in walk["rows"].items()}
    headers = {name: [value + by for value in values] if name.endswith("_pos") else values
               for name, values in walk["headers"].items()}
    return {**walk, "rows": rows, "headers": headers,
            "findings": [(code, pos + by, *rest) for code, pos, *rest in walk["findings"]],
            "order_breaks": [(index, pos + by, *rest) for index, pos, *rest in walk["order_breaks"]]}


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
        out.append((decompressor.decompress(batch.attributes & 7, payload, 2), batch))   # every one decompresses
    return out


def _records_read_independently(data: bytes, batch) -> tuple[list[tuple], bool]:
    """The records kafka-python's reader (another implementation of DefaultRecord.readFrom) reads from a
    batch, as (offset, key, value, headers), up to the first it refuses; and whether it read them all."""
    from kafka.errors import CorruptRecordError
    from kafka.record.default_records import DefaultRecordBatch

    records = []
    try:
        for record in DefaultRecordBatch(data[batch.pos:batch.pos + batch.size]):
            records.append((record.offset, record.key, record.value,
                            [(key.encode(), value) for key, value in record.headers]))
    except CorruptRecordError:
        return records, False
    return records, True


def _records_walked(result: dict, payload: bytes) -> list[tuple]:
    rows, headers = result["rows"], result["headers"]

    def part(pos, length):
        return None if length < 0 else bytes(payload[pos:pos + length])

    return [(rows["offset"][row], part(rows["key_pos"][row], rows["key_length"][row]),
             part(rows["value_pos"][row], rows["value_length"][row]),
             [(part(headers["key_pos"][index], headers["key_length"][index]),
               part(headers["value_pos"][index], headers["value_length"][index]))
              for index in range(rows["first_header"][row], rows["first_header"][row] + rows["headers_count"][row])])
            for row in range(result["decoded"])]


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_compiled_and_pure_walk_every_shipped_batch_alike(path):
    """... and walk each into the records another reader reads from it; a batch that reader refuses is one
    with findings, walked as far as it reads."""
    data = path.read_bytes()
    for payload, batch in _v2_record_bytes(path):
        result = _agree(payload, batch.count, batch.base_offset, batch.base_timestamp)
        records, whole = _records_read_independently(data, batch)
        assert _records_walked(result, payload) == records
        assert (result["decoded"], not result["findings"]) == ((batch.count, True) if whole else (len(records), False))


_bytes_or_null = st.one_of(st.none(), st.binary(max_size=30))
_record = st.fixed_dictionaries({
    "attributes": st.integers(-128, 127), "timestamp_delta": st.integers(-(2**63), 2**63 - 1),
    "offset_delta": st.integers(-(2**31), 2**31 - 1), "key": _bytes_or_null, "value": _bytes_or_null,
    "headers": st.lists(st.tuples(st.binary(max_size=8), _bytes_or_null), max_size=3)})


_SMALL = {"attributes": 0, "timestamp_delta": 0, "offset_delta": 0, "key": None, "value": b"v", "headers": []}


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


_LONG = st.integers(-2**63, 2**63 - 1)
_OFFSET = st.one_of(_LONG, st.integers(-2**65, 2**65), st.sampled_from([-1, 0, 1, 2**31 - 1, 2**31, 2**63 - 1]))


@settings(max_examples=300, deadline=None)
@given(attributes=st.integers(-2**15, 2**15 - 1), flags=st.tuples(st.booleans(), st.booleans()),
       producer=st.tuples(st.sampled_from([-1, 0, 7, 2**63 - 1, -2**63]), st.integers(-2**15, 2**15 - 1),
                          st.integers(-2**31, 2**31 - 1)),
       offsets=st.tuples(_OFFSET, _OFFSET, _OFFSET), timestamps=st.tuples(_LONG, _LONG), create_time=st.booleans(),
       last=st.one_of(st.none(), _OFFSET), batch_length=st.integers(-2**31, 2**31 - 1), magic=st.integers(-128, 127))
def test_compiled_and_pure_ask_a_batchs_rules_alike(attributes, flags, producer, offsets, timestamps, create_time,
                                                    last, batch_length, magic):
    """The rules of a v2 batch (kbatch.reading.invariants words findings from them, --deep's fast pass asks them):
    compiled with C types where a value is one of the header's, they answer as in Python; an offset that
    passes Java's long (a last offset counted exactly) stays a Python int."""
    asked = [lambda module: module.v2_reserved_bits(attributes),
             lambda module: module.producer_fields_problem(*flags, *producer),
             lambda module: module.last_offset_delta_short(*offsets),
             lambda module: module.max_timestamp_differs(create_time, *timestamps),
             lambda module: module.segment_range_problem(*offsets),
             lambda module: module.offset_order_problem(last, offsets[0]),
             lambda module: module.framed_v2_batch(magic, batch_length, *size_bounds(2, 1 << 20))]
    for ask in asked:
        assert ask(compiled) == ask(pure)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=layouts.BATCH_HEADER.size + 3, max_size=layouts.BATCH_HEADER.size + 3),
       start=st.integers(0, 3))
def test_a_header_field_read_where_it_lies_is_what_the_declarations_struct_unpacks(data, start):
    """CleanBatches reads a batch's header fields from the buffer (HeaderField), compiled and pure: every
    field of the declaration, signed or not, is the value its struct unpacks."""
    from kbatch.format.layouts import BATCH_HEADER

    unpacked = dict(zip(BATCH_HEADER.names, BATCH_HEADER.unpack_from(data, start)))
    for module in (compiled, pure):
        assert {name: module.HeaderField(BATCH_HEADER, name).read(data, start) for name in BATCH_HEADER.names} \
            == unpacked, module


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
    with_pure = run_kbatch_pure(args + paths, expect=1)
    assert with_pure == with_compiled
    assert with_compiled.out.count("\n") > 50


@pytest.mark.parametrize("decode", ["auto", "hex", "base64", "utf8"])
def test_jsonl_records_from_the_columns_are_what_record_dict_gives(decode, capsys, monkeypatch):
    """dump --records --format jsonl writes v2 records from the columns; the Record-object path is the
    reference (record_dict + json.dumps), compiled and pure alike."""
    import kbatch.output.jsonout as jsonout

    args = ["dump", "--records", "--format", "jsonl", "--decode", decode] + [str(path) for path in fixture_paths()]
    from_columns = run_kbatch(args, capsys, monkeypatch)
    from_pure_columns = run_kbatch_pure(args, expect=1)
    monkeypatch.setattr(jsonout, "_records_json_matches_record_dict", lambda: False)
    from_objects = run_kbatch(args, capsys, monkeypatch)
    assert from_columns == from_objects == from_pure_columns
    assert from_columns.out.count('"offset": ') > 200


# Printable ASCII long enough to be looked at eight bytes at a time, with one byte put anywhere in it: each
# of the bytes that decide between text, escaped text and other (and their neighbours) in every lane.
_long_text = st.tuples(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=7,
                               max_size=40).map(str.encode),
                       st.integers(0, 40),
                       st.sampled_from([b'"', b"\\", b"\x7f", b"\x7e", b"\x1f", b"\x20", b"\x00", b"\x80", b"\xff",
                                        b"\x21", b"\x23", b"\x5b", b"\x5d", b"\xc3\xa9"])
                       ).map(lambda parts: parts[0][:parts[1]] + parts[2] + parts[0][parts[1]:])
_text = st.one_of(st.none(), st.binary(max_size=12), st.text(max_size=8).map(str.encode), _long_text,
                  st.sampled_from([b'a"b', b"back\\slash", b"\x7f", b"tab\tin", b"caf\xc3\xa9"]))


# Deltas from the test batch's baseTimestamp (1,000): before 1970 (no ISO form), the decades around now,
# the days around leap days and the last millisecond Python can show (253402300799999), and far beyond.
_LAST_ISO_MS = 253_402_300_799_999
_timestamp_delta = st.one_of(
    st.integers(-(2**40), 2**40),
    st.sampled_from([951_782_400_000, 951_868_800_000, 4_107_542_400_000, 4_107_456_000_000])
    .flatmap(lambda midnight: st.integers(midnight - 86_400_000, midnight + 86_400_000)).map(lambda ms: ms - 1_000),
    st.integers(_LAST_ISO_MS - 2**12, _LAST_ISO_MS + 2**12).map(lambda ms: ms - 1_000),
    st.integers(0, 2**62))


@settings(max_examples=200, deadline=None)
@given(records=st.lists(st.fixed_dictionaries({
    "attributes": st.just(0), "timestamp_delta": _timestamp_delta,
    "offset_delta": st.integers(0, 2**31 - 1), "key": _text, "value": _text,
    "headers": st.lists(st.tuples(st.binary(max_size=6), _text), max_size=2)}), min_size=1, max_size=4),
       decode=st.sampled_from(["auto", "hex", "base64", "utf8", "json"]),
       base_sequence=st.sampled_from([-1, 0, 2**31 - 2]), compressed=st.booleans(), log_append_time=st.booleans())
def test_records_json_is_json_dumps_of_record_dict(records, decode, base_sequence, compressed, log_append_time):
    import json

    from kbatch.reading.model import Batch
    from kbatch.output.jsonout import records_json_text

    data = b"".join(_record_bytes(spec) for spec in records)
    batch = Batch(pos=0, size=0, magic=2, length_field=0, offset_field=7, base_offset=7, last_offset=7,
                  count=len(records), attributes=(1 if compressed else 0) | (8 if log_append_time else 0),
                  codec="gzip" if compressed else "none", crc=0, computed_crc=0,
                  timestamp_type="LogAppendTime" if log_append_time else "CreateTime",
                  base_timestamp=1_000, max_timestamp=5_000, base_sequence=base_sequence, payload_pos=61)
    kbatch.reading.records.walk_batch_records(batch, data, 61, 61, len(data))
    expected = ", ".join(json.dumps(kbatch.output.jsonout.record_dict(record, batch, decode), ensure_ascii=False)
                         for record in batch.records)
    kbatch.reading.records.walk_batch_records(batch, data, 61, 61, len(data), objects=False)
    assert records_json_text(batch, decode) == expected   # (the pure build's too: PURE_RUN below)


def test_the_json_writer_and_the_python_side_show_timestamps_to_the_same_last_millisecond():
    from kbatch.output.values import ISO_MAX_MS, iso_timestamp

    assert pure._ISO_MAX_MS == ISO_MAX_MS
    assert iso_timestamp(ISO_MAX_MS) == "9999-12-31T23:59:59.999Z" and iso_timestamp(ISO_MAX_MS + 1) == ""


# -- a batch's line ---------------------------------------------------------------------------------------

def _batch_line_reference(batch, path: str) -> str:
    import json

    return json.dumps({"file": path, **kbatch.output.jsonout.batch_dict(batch)}, ensure_ascii=False)


def _head(path: str) -> bytes:
    import json

    return f'{{"file": {json.dumps(path, ensure_ascii=False)}, '.encode()


def test_batch_json_writes_batch_dicts_keys_in_its_order():
    assert kbatch.output.jsonout._batch_json_matches_batch_dict()
    assert compiled.BATCH_JSON_KEYS == pure.BATCH_JSON_KEYS


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_batch_json_is_json_dumps_of_batch_dict_for_every_shipped_batch(path):
    """Every entry of every fixture (v0, v1, v2, wrappers, damaged ones), compiled and plain Python alike:
    the same line as json.dumps, or None where it has findings or a payload (json.dumps writes those)."""
    batches, _ = read_all(path.read_bytes())
    written = 0
    for batch in batches:
        expected = _batch_line_reference(batch, str(path))
        for module in (compiled, pure):
            line = module.batch_json(batch, _head(str(path)))
            if batch.findings:
                assert line is None
            else:
                assert line.decode() == expected
                written += 1
    assert written or all(batch.findings for batch in batches)


_nullable = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))


@settings(max_examples=300, deadline=None)
@given(numbers=st.lists(_nullable, min_size=11, max_size=11),
       offsets=st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**31), 2**31 - 1)),
       timestamps=st.tuples(st.one_of(_nullable, st.sampled_from([-1, 0, _LAST_ISO_MS, _LAST_ISO_MS + 1])),
                            _timestamp_delta.map(lambda delta: delta + 1_000)),
       magic=st.sampled_from([0, 1, 2]), flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
       codec=st.sampled_from(["none", "gzip", "zstd", "unknown(7)", 'a"b', "back\\slash", "café", "tab\t"]),
       path=st.sampled_from(["x.log", 'we"ird\\ñame.log', "\x01.log"]))
def test_batch_json_is_json_dumps_of_batch_dict_on_random_headers(numbers, offsets, timestamps, magic, flags,
                                                                  codec, path):
    """Any values a header can give (and an offset sum past 64 bits): the same bytes as json.dumps, or
    None compiled where json.dumps must write them."""
    from kbatch.reading.model import Batch

    base_offset, delta = offsets
    batch = Batch(pos=numbers[0] or 0, size=numbers[1] or 0, magic=magic, length_field=numbers[2] or 0,
                  offset_field=base_offset, base_offset=base_offset, last_offset=base_offset + delta,
                  count=numbers[3], attributes=numbers[4] or 0, codec=codec, crc=numbers[5] or 0,
                  computed_crc=numbers[5] or 0 if flags[0] else 1,
                  timestamp_type="LogAppendTime" if flags[1] else "CreateTime",
                  base_timestamp=timestamps[0], max_timestamp=timestamps[1], partition_leader_epoch=numbers[6],
                  last_offset_delta=delta, producer_id=numbers[7], producer_epoch=numbers[8],
                  # an int32, as the header holds it: lastSequence counts on from it as Java's ints do
                  base_sequence=None if numbers[9] is None else (numbers[9] + 2**31) % 2**32 - 2**31,
                  is_transactional=flags[2], is_control=flags[1] and flags[2],
                  delete_horizon_ms=numbers[10], payload_pos=numbers[0] or 0, payload_size=numbers[1] or 0,
                  decompressed_size=numbers[10])
    expected = _batch_line_reference(batch, path).encode()
    plain_name = codec in ("none", "gzip", "zstd", "unknown(7)")   # the others json.dumps escapes
    # Plain Python writes any integer, as json.dumps does; compiled, an offset past 64 bits is left to it.
    assert pure.batch_json(batch, _head(path)) == (expected if plain_name else None)
    in_64_bits = -(2**63) <= base_offset + delta < 2**63 or not NATIVE
    assert compiled.batch_json(batch, _head(path)) == (expected if plain_name and in_64_bits else None)
    batch.findings.append(kbatch.format.findings.Finding("reserved-bits", 0, 0, 1, "attributes", "0", "1"))
    assert compiled.batch_json(batch, _head(path)) is None and pure.batch_json(batch, _head(path)) is None


@settings(max_examples=300, deadline=None)
@given(header=st.tuples(*(st.integers(-(2**(8 * size - 1)), 2**(8 * size - 1) - 1)
                          for size in layouts.BATCH_HEADER.sizes.values())),
       pos=st.integers(0, 2**40), size=st.integers(61, 2**31), computed_crc=st.integers(0, 2**32 - 1))
def test_a_v2_headers_fields_give_the_line_of_the_batch_read_from_it(header, pos, size, computed_crc):
    """kbatch.walk.listing writes a clean batch's line from its header's fields (batch_fields) without a Batch:
    the same bytes as batch_json of the Batch read_batch makes of them, compiled and plain Python alike."""
    from kbatch.reading.v2 import batch_fields, batch_of

    fields = batch_fields(pos, size, header, computed_crc)
    batch = batch_of(fields)
    expected = _batch_line_reference(batch, "x.log").encode()
    assert pure.fields_json(fields, _head("x.log")) == expected
    # Compiled, a last offset past 64 bits (baseOffset + lastOffsetDelta) is left to json.dumps.
    in_64_bits = -(2**63) <= batch.last_offset < 2**63 or not NATIVE
    assert compiled.fields_json(fields, _head("x.log")) == compiled.batch_json(batch, _head("x.log")) \
        == (expected if in_64_bits else None)


def test_the_listing_is_the_same_with_json_dumps_and_with_the_pure_build(capsys, monkeypatch):
    args = ["dump", "--format", "jsonl"] + [str(path) for path in fixture_paths()]
    written = run_kbatch(args, capsys, monkeypatch)
    with_pure = run_kbatch_pure(args, expect=1)
    monkeypatch.setattr(kbatch.output.jsonout, "_batch_json_matches_batch_dict", lambda: False)
    with_json_dumps = run_kbatch(args, capsys, monkeypatch)
    assert written == with_pure == with_json_dumps
    assert written.out.count('"type": "batch"') > 100


# -- the pure build of the whole library --------------------------------------------------------------

# Tests of the reader that run on the build loaded: run again here on the pure build, in a process of its
# own (KBATCH_PURE_PYTHON=1: kbatch.kernels._load then loads every kernel from its source).
PURE_RUN = ["tests/test_records.py", "tests/test_fastdeep.py", "tests/test_outlier.py",
            "tests/test_stats.py::test_columns_and_record_objects_give_the_same_accounting",
            "tests/test_reader.py::test_a_record_count_bomb_keeps_a_bounded_number_of_findings_and_says_so",
            "tests/test_recordwalk.py::test_records_json_is_json_dumps_of_record_dict"]


def test_the_reader_tests_pass_on_the_pure_build():
    if pure_python_wanted():
        pytest.skip("this run is on the pure build already")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *PURE_RUN], cwd=ROOT,
                          env=pure_python_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:]
    assert " passed" in done.stdout.splitlines()[-1] and "skipped" not in done.stdout.splitlines()[-1]


@settings(max_examples=300, deadline=None)
@given(headers=st.lists(st.tuples(*(st.integers(-(2**(8 * size - 1)), 2**(8 * size - 1) - 1)
                                    for size in layouts.BATCH_HEADER.sizes.values())), min_size=1, max_size=4),
       clean=st.integers(0, 4), base=st.integers(0, 2**40))
def test_a_runs_lines_are_the_lines_of_its_batches_fields(headers, clean, base):
    """``kbatch pcap --format jsonl`` writes the lines of a Records field's clean batches as it takes them
    (clean_batch_lines), from their headers' bytes: each the keys after "type" fields_json writes of the fields
    batch_fields makes of the header, compiled and plain Python alike.  It takes the batches clean_v2_batches
    hands out whose header the header rules say nothing of, and stops at the first other one (or, compiled, a
    last offset past 64 bits)."""
    from kbatch.capture.batches import _LINE_NAMES
    from kbatch.format.framing import CHECKSUMS, size_bounds
    from kbatch.kernels.batchrules import producer_fields_problem, v2_reserved_bits
    from kbatch.reading.model import HEADER_FIELDS
    from kbatch.reading.reader import BufferStream, ReadOptions, SegmentReader
    from kbatch.reading.v2 import batch_fields
    from kbatch.walk.engine import clean_v2_batches

    records = b"".join(_header_batch(header, fixed=k < clean) for k, header in enumerate(headers))
    least, most = size_bounds(2, 1 << 30)
    expected, spans, taken_end, last = [], [], 0, -1
    window = SegmentReader(BufferStream(records, unchanging=True), ReadOptions(), size=len(records)).window
    for batch_pos, view, i, end, _, computed in clean_v2_batches(window, 0, len(records), 1 << 30):
        fields = batch_fields(base + batch_pos, end - i, layouts.BATCH_HEADER.unpack_from(view, i), computed)
        named = dict(zip(HEADER_FIELDS, fields))
        if v2_reserved_bits(named["attributes"]) or producer_fields_problem(
                named["is_transactional"], named["is_control"], named["producer_id"], named["producer_epoch"],
                named["base_sequence"]) is not None:
            break
        expected.append(pure.fields_json(fields, b"")[len(b'"type": "batch"'):] + b"\n")
        spans.append(named["last_offset_delta"] + 1)
        taken_end, last = end, base + batch_pos
    for module in (pure, compiled):
        lines, got_spans = [], []
        end, got_last, _ = module.clean_batch_lines(records, 0, len(records), base, least, most, CHECKSUMS[2],
                                                   _LINE_NAMES, lines, got_spans)
        if module is compiled and len(lines) < len(expected):   # a last offset past 64 bits stops it
            assert not -(2**63) <= headers[len(lines)][0] + headers[len(lines)][6] < 2**63
            assert lines == expected[:len(lines)]
            continue
        assert (lines, got_spans, end, got_last) == (expected, spans, taken_end, last)


@settings(max_examples=300, deadline=None)
@given(headers=st.lists(st.tuples(*(st.integers(-(2**(8 * size - 1)), 2**(8 * size - 1) - 1)
                                    for size in layouts.BATCH_HEADER.sizes.values())), min_size=1, max_size=4),
       clean=st.integers(0, 4), plain=st.booleans(), last_offset=st.one_of(st.none(), st.integers(-(2**64), 2**64)))
def test_a_views_run_takes_the_clean_batches_neither_transactional_nor_control(headers, clean, plain, last_offset):
    """A partition's read_committed view walks the batches clean_v2_batches hands out that are neither
    transactional nor control in one loop (untransacted_batches), which counts their greatest last offset
    (Batch.last_offset) and stops at the first other one, or at a last offset past a Java long (one counted
    before it: the full reader's), compiled and plain Python alike."""
    from kbatch.format.framing import CHECKSUMS
    from kbatch.format.structs import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK
    from kbatch.reading.reader import BufferStream, ReadOptions, SegmentReader
    from kbatch.walk.engine import clean_v2_batches

    if plain:   # (else transactional and control batches among the clean ones, which stop the walk)
        headers = [header[:5] + (header[5] & ~(TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK),) + header[6:]
                   for header in headers]
    data = b"".join(_header_batch(header, fixed=k < clean) for k, header in enumerate(headers))
    least, most = size_bounds(2, 1 << 30)
    window = SegmentReader(BufferStream(data, unchanging=True), ReadOptions(), size=len(data)).window

    def long(offset) -> bool:   # within a Java long (None: no offset counted yet)
        return offset is None or -(2**63) <= offset < 2**63

    greatest, stopped, taken = last_offset, 0, -1
    for batch_pos, view, i, end, _, _ in clean_v2_batches(window, 0, len(data), 1 << 30):
        base_offset, attributes, delta = (layouts.BATCH_HEADER.unpack_from(view, i)[k] for k in (0, 5, 6))
        if attributes & (TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK) or not long(last_offset) \
                or not long(base_offset + delta):
            break
        greatest = base_offset + delta if greatest is None else max(greatest, base_offset + delta)
        stopped, taken = end, batch_pos
    for module in (pure, compiled):
        got = module.untransacted_batches(memoryview(data), 0, len(data), least, most, CHECKSUMS[2], last_offset)
        assert got == (stopped, greatest, taken)


@settings(max_examples=300, deadline=None)
@given(headers=st.lists(st.tuples(*(st.integers(-(2**(8 * size - 1)), 2**(8 * size - 1) - 1)
                                    for size in layouts.BATCH_HEADER.sizes.values())), min_size=1, max_size=4),
       clean=st.integers(0, 4), start=st.integers(0, 3), stop=st.integers(0, 2000))
def test_the_crc_runs_loop_counts_the_batches_clean_v2_batches_hands_out(headers, clean, start, stop):
    """verify-crc's CRC run counts the batches clean_v2_batches hands out in one loop (counted_batches): the same
    batches, their records, where it stopped and the last one taken, from any entry start and up to any stop,
    compiled and plain Python alike."""
    from kbatch.format.framing import CHECKSUMS
    from kbatch.reading.reader import BufferStream, ReadOptions, SegmentReader
    from kbatch.walk.engine import clean_v2_batches

    batches = [_header_batch(header, fixed=k < clean) for k, header in enumerate(headers)]
    data = b"".join(batches)
    pos = sum(map(len, batches[:min(start, len(batches) - 1)]))   # (an entry start)
    least, most = size_bounds(2, 1 << 30)
    window = SegmentReader(BufferStream(data, unchanging=True), ReadOptions(), size=len(data)).window
    stopped, taken, records, last = pos, 0, 0, -1
    for batch_pos, _, i, end, count, _ in clean_v2_batches(window, pos, stop, 1 << 30):
        stopped, taken, records, last = batch_pos + end - i, taken + 1, records + count, batch_pos
    for module in (pure, compiled):   # (over the whole data: its indexes are file positions)
        assert module.counted_batches(memoryview(data), pos, stop, least, most, CHECKSUMS[2]) == \
            (stopped, taken, records, last)


def _header_batch(header: tuple, fixed: bool) -> bytes:
    """A v2 batch of ``header``'s fields with no records: with ``fixed`` framed as a batch of its size, magic 2,
    a count of 0 and its CRC holding (else as the fields say, the CRC too)."""
    import struct

    from kbatch.format.framing import CHECKSUMS
    from kbatch.format.structs import BATCH_HEADER, LOG_OVERHEAD

    fields = [value % (1 << 8 * BATCH_HEADER.sizes[name]) if char.isupper() else value   # (crc: unsigned)
              for value, (name, char) in zip(header, BATCH_HEADER.fields)]
    if fixed:
        fields[1], fields[3], fields[12] = BATCH_HEADER.size - LOG_OVERHEAD, 2, 0   # batch_length, magic, count
        fields[5] &= 0x7F   # attributes: no reserved bit
    data = bytearray(struct.pack(">" + "".join(char for _, char in BATCH_HEADER.fields), *fields))
    if fixed:
        start = CHECKSUMS[2].start
        crc_at = BATCH_HEADER.offsets["crc"]
        data[crc_at:crc_at + 4] = CHECKSUMS[2].function(bytes(data[start:])).to_bytes(4, "big")
    return bytes(data)
