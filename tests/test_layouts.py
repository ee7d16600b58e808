"""The construct declarations against bytes worked by hand from Kafka's source."""

from __future__ import annotations

import os
import struct

import pytest
from construct import StreamError

from kbatch.format import layouts
from kbatch.format.checksums import crc32, crc32c


def test_v2_header_offsets_are_kafkas():
    # DefaultRecordBatch.java: BASE_OFFSET_OFFSET = 0, LENGTH_OFFSET = 8, PARTITION_LEADER_EPOCH_OFFSET = 12,
    # MAGIC_OFFSET = 16, CRC_OFFSET = 17, ATTRIBUTES_OFFSET = 21, LAST_OFFSET_DELTA_OFFSET = 23,
    # BASE_TIMESTAMP_OFFSET = 27, MAX_TIMESTAMP_OFFSET = 35, PRODUCER_ID_OFFSET = 43,
    # PRODUCER_EPOCH_OFFSET = 51, BASE_SEQUENCE_OFFSET = 53, RECORDS_COUNT_OFFSET = 57, RECORDS_OFFSET = 61.
    assert layouts.BATCH_HEADER.offsets == {
        "base_offset": 0, "batch_length": 8, "partition_leader_epoch": 12, "magic": 16, "crc": 17,
        "attributes": 21, "last_offset_delta": 23, "base_timestamp": 27, "max_timestamp": 35,
        "producer_id": 43, "producer_epoch": 51, "base_sequence": 53, "records_count": 57,
    }
    assert layouts.RECORD_BATCH_OVERHEAD == 61
    assert layouts.BATCH_CRC_START == 21


def test_legacy_sizes_are_kafkas():
    # LegacyRecord.java: RECORD_OVERHEAD_V0 = 14, RECORD_OVERHEAD_V1 = 22 (counted from the crc);
    # Records.java: LOG_OVERHEAD = 12, HEADER_SIZE_UP_TO_MAGIC = 17.
    assert layouts.MIN_ENTRY_SIZE == {0: 14, 1: 22, 2: 49}
    assert layouts.LOG_OVERHEAD == 12 and layouts.HEADER_SIZE_UP_TO_MAGIC == 17
    assert layouts.MESSAGE_V1_HEADER.offsets["timestamp"] == 18


# ByteUtilsTest.testVarintSerde / testVarlongSerde (zig-zag, little-endian groups of 7 bits).
VARINTS = [
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"),
    (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"), (-8193, "818001"),
    (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f"),
]


@pytest.mark.parametrize("value,hex_bytes", VARINTS)
def test_varint_matches_kafka(value, hex_bytes):
    assert layouts.Varint.parse(bytes.fromhex(hex_bytes)) == value
    assert layouts.Varint.build(value).hex() == hex_bytes


def test_varlong_extremes():
    assert layouts.Varlong.build(2**63 - 1).hex() == "feffffffffffffffff01"
    assert layouts.Varlong.parse(bytes.fromhex("ffffffffffffffffff01")) == -(2**63)


def test_varint_longer_than_kafka_allows_is_rejected():
    # ByteUtilsTest.testInvalidVarint: a sixth byte is never read.
    with pytest.raises(layouts.VarintOverflow):
        layouts.Varint.parse(bytes.fromhex("ffffffffff01"))
    with pytest.raises(layouts.VarintOverflow):
        layouts.Varlong.parse(bytes.fromhex("ffffffffffffffffffff01"))


# A v2 batch worked by hand: two records "hello" and "world", no key, CreateTime, not idempotent.
# After its length, each record holds attributes 00, timestampDelta 0 (00), offsetDelta 0|1 (00|02),
# keyLength -1 (01), valueLength 5 (0a), the 5 value bytes and headersCount 0 (00): 11 bytes, so the
# length is zig-zag 11 = 0x16 and a record takes 12 bytes.  (A widely copied worked example gives the
# length as 0x0c, "6 bytes": that leaves the value outside its record.)
RECORD_HELLO = bytes.fromhex("16" "00" "00" "00" "01" "0a" "68656c6c6f" "00")
RECORD_WORLD = bytes.fromhex("16" "00" "00" "02" "01" "0a" "776f726c64" "00")


def _hand_batch() -> bytes:
    records = RECORD_HELLO + RECORD_WORLD
    after_crc = struct.pack(">hiqqqhii", 0, 1, 1714000000000, 1714000000000, -1, -1, -1, 2) + records
    crc = crc32c(after_crc)
    batch_length = 4 + 1 + 4 + len(after_crc)
    return struct.pack(">qiibI", 0, batch_length, -1, 2, crc) + after_crc


def test_record_length_counts_the_bytes_after_it():
    parsed = layouts.Record.parse(RECORD_HELLO)
    assert parsed.length == 11 == len(RECORD_HELLO) - 1
    assert (parsed.key, parsed.value, parsed.headers) == (None, b"hello", [])


def test_hand_batch_parses_with_the_declaration():
    batch = _hand_batch()
    header = layouts.RecordBatchHeader.parse(batch)
    assert len(batch) == 12 + header.batch_length == 61 + 2 * 12 == 85
    assert header.records_count == 2 and header.last_offset_delta == 1
    assert header.crc == crc32c(batch[21:])
    # the derived struct format reads the same fields
    assert layouts.BATCH_HEADER.unpack_from(batch) == tuple(header[name] for name in layouts.BATCH_HEADER.names)


def test_legacy_message_worked_by_hand():
    # kafkajs' v0 fixture: offset 0, key "key-0", value "some-value-0", crc 120234579.
    body = bytes([0, 0]) + struct.pack(">i", 5) + b"key-0" + struct.pack(">i", 12) + b"some-value-0"
    message = struct.pack(">qiI", 0, 4 + len(body), crc32(body)) + body
    parsed = layouts.MessageV0.parse(message)
    assert parsed.crc == 120234579
    assert (parsed.key, parsed.value) == (b"key-0", b"some-value-0")


def test_control_record_layouts():
    assert layouts.ControlRecordKey.parse(bytes.fromhex("00000001")).type == 1
    value = layouts.EndTransactionMarkerValue.parse(bytes.fromhex("0000" "00000005"))
    assert (value.version, value.coordinator_epoch) == (0, 5)


def test_layouts_report_short_input_rather_than_guess():
    with pytest.raises(StreamError):
        layouts.Record.parse(RECORD_HELLO[:-3])


def test_field_spans_of_the_v2_header_are_kafkas_offsets():
    spans, error = layouts.field_spans(layouts.RecordBatchHeader, _hand_batch(), base=1000)
    assert error is None
    assert {span.path: span.start - 1000 for span in spans} == layouts.BATCH_HEADER.offsets
    assert spans[-1].end - 1000 == 61


def test_field_spans_tile_a_record_with_headers():
    record = layouts.Record.build(dict(
        length=0, attributes=0, timestamp_delta=300, offset_delta=2, key_length=1, key=b"k", value_length=-1,
        value=None, headers_count=2, headers=[dict(key_length=2, key=b"h1", value_length=1, value=b"v"),
                                              dict(key_length=2, key=b"h2", value_length=-1, value=None)]))
    spans, error = layouts.field_spans(layouts.Record, record, base=61, path="records[0]")
    assert error is None
    position = 61
    for span in spans:
        assert span.start == position
        position = span.end
    assert position == 61 + len(record)
    paths = [span.path for span in spans]
    assert paths[:3] == ["records[0].length", "records[0].attributes", "records[0].timestamp_delta"]
    assert "records[0].headers[1].value" in paths
    value_span = next(span for span in spans if span.path == "records[0].value")
    assert value_span.start == value_span.end and value_span.value is None


def test_field_spans_stop_at_the_damage_and_keep_what_came_before():
    spans, error = layouts.field_spans(layouts.Record, RECORD_HELLO[:8], base=10)
    assert error is not None and error.path == "value"
    assert [span.path for span in spans] == ["length", "attributes", "timestamp_delta", "offset_delta",
                                             "key_length", "key", "value_length"]
    assert error.start == 10 + 6
    # the value length 0x0a is zig-zag 5; bytes 6 and 7 are all that is left: construct's own words
    assert error.message == "stream read less than specified amount, expected 5, found 2"


def test_structs_is_what_the_declarations_derive():
    """kbatch/format/structs.py (what a run reads entries with, no construct loaded) is the declarations' own
    derivation, written out: regenerate it with `python -m kbatch.format.layouts` after changing a declaration."""
    from pathlib import Path

    from kbatch.format import structs

    text = Path(structs.__file__).read_text()
    assert text.endswith("\n" + layouts.structs_block()), "kbatch/format/structs.py is stale: run python -m kbatch.format.layouts"
    for name, value in layouts.derived_values().items():
        assert getattr(structs, name) == value, name
    assert structs.ENTRY_HEADERS[2] is structs.BATCH_HEADER


def test_a_run_that_reads_entries_loads_no_construct():
    """The reader, --deep and the listing take every layout from kbatch.format.structs: construct (and the
    declarations) load only where a declaration is walked (hexdump-annotate, encode, stats)."""
    import subprocess
    import sys

    code = ("import sys, kbatch.cli.verify_crc, kbatch.cli.dump, kbatch.reading.reader, kbatch.ops.verify, kbatch.walk.deep, "
            "kbatch.walk.listing, kbatch.walk.crcrun, kbatch.reading.readahead, kbatch.partition.verify; "
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'construct' "
            "or name in ('kbatch.format.layouts', 'kbatch.partition.layouts')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_a_picker_reads_what_the_whole_header_gives_for_the_fields_it_names():
    from kbatch.format.structs import BATCH_HEADER

    header = os.urandom(BATCH_HEADER.size)
    whole = dict(zip(BATCH_HEADER.names, BATCH_HEADER.unpack_from(header)))
    for wanted in (("batch_length", "magic", "crc", "records_count"), ("magic",), ("base_offset", "crc")):
        picker = BATCH_HEADER.picker(*wanted)
        assert picker.unpack_from(header) == tuple(whole[name] for name in wanted)
        last = wanted[-1]
        assert picker.size == BATCH_HEADER.offsets[last] + BATCH_HEADER.sizes[last]


# -- what the declarations are made into, made here (at import they are made before any test can watch) -----------


def test_a_fixed_layout_places_its_fields_one_after_another():
    from kbatch.format.structs import FixedLayout

    layout = FixedLayout(("offset", "q"), ("size", "i"), ("epoch", "h"), ("magic", "b"))
    assert layout.fields == (("offset", "q"), ("size", "i"), ("epoch", "h"), ("magic", "b"))
    assert layout.names == ("offset", "size", "epoch", "magic")
    assert layout.offsets == {"offset": 0, "size": 8, "epoch": 12, "magic": 14}
    assert layout.sizes == {"offset": 8, "size": 4, "epoch": 2, "magic": 1}
    assert (layout.size, layout.codec.format) == (15, ">qihb")
    data = bytes.fromhex("00000000000000ff" "fffffffe" "0102" "80")   # big-endian, signed
    assert layout.unpack_from(data) == (255, -2, 258, -128)
    assert layout.unpack_from(b"\x07" + data, 1) == (255, -2, 258, -128)
    assert layout.build({"magic": -128, "epoch": 258, "size": -2, "offset": 255}) == data
    assert (layout.field("epoch").format, layout.field("epoch").unpack_from(data, 12)) == (">h", (258,))
    again = FixedLayout(*layout.fields)
    assert again == layout and hash(again) == hash(layout) and len({again, layout}) == 1
    assert layout != FixedLayout(("offset", "q")) and layout != layout.fields
    assert repr(FixedLayout(("a", "q"), ("b", "I"))) == "FixedLayout(('a', 'q'), ('b', 'I'))"


def test_a_declaration_made_here_gives_its_struct_codecs():
    from construct import Int8sb, Int32ub, Int64sb, Struct

    from kbatch.format.structs import FixedLayout

    declaration = Struct("a" / Int64sb * "doc", "b" / Int32ub, "c" / Int8sb)
    assert layouts.fixed_layout(declaration) == FixedLayout(("a", "q"), ("b", "L"), ("c", "b"))   # construct's Int32ub: ">L"
    assert layouts.field_struct(declaration, "b").format == ">L"
    assert layouts.field_struct(declaration, "a").format == ">q"   # through the doc's Renamed
    assert layouts.field_struct(layouts.MessageV1, "value_length").format == ">l"


@pytest.mark.parametrize("data, length, value", [
    ("00000002" "6162", 2, b"ab"), ("00000000", 0, b""), ("ffffffff", -1, None), ("fffffffe", -2, None),
])
def test_a_nullable_field_made_here_reads_nothing_for_a_negative_length(data, length, value):
    from construct import Int32sb, Struct

    declaration = Struct("n" / Int32sb, "data" / layouts._nullable_bytes("n"))
    parsed = declaration.parse(bytes.fromhex(data))
    assert (parsed.n, parsed.data) == (length, value)
    assert declaration.build({"n": length, "data": value}) == bytes.fromhex(data)


def test_a_varint_made_here_holds_its_own_bound_and_width():
    from construct import StreamError as Short

    short = layouts.ZigZagVarint(max_bytes=2, bits=16)
    assert short.parse(b"\x7f") == -64 and short.parse(b"\xff\x01") == -128
    assert short.build(-128) == b"\xff\x01" and short.to_bytes(63) == b"\x7e"
    with pytest.raises(layouts.VarintOverflow, match="varint longer than 2 bytes"):
        short.parse(b"\x80\x80\x01")
    # raw 0x1fffe: 16 bits keep 0xfffe (as Java's int drops the bits above 32), zig-zag 32767
    assert layouts.ZigZagVarint(max_bytes=3, bits=16).parse(b"\xfe\xff\x07") == 32767
    with pytest.raises(Short):
        short.parse(b"\x80")


def test_field_spans_walk_a_nested_struct_and_a_fixed_array_with_their_values():
    """No declaration of Kafka's nests a Struct outside an Array: one made here, whose inner field's size is its
    parent's field (construct's ``this._``), and an Array of a fixed count."""
    from construct import Array, Bytes, Int8sb, Int16sb, Struct, this

    declaration = Struct("n" / Int8sb, "inner" / Struct("a" / Int16sb, "b" / Bytes(this._.n)),
                         "pair" / Array(2, Struct("c" / Int8sb)), "tail" / Int8sb)
    spans, error = layouts.field_spans(declaration, bytes.fromhex("02" "0102" "6869" "fe" "07" "09"), base=100)
    assert error is None
    assert [(span.path, span.start, span.end, span.value) for span in spans] == [
        ("n", 100, 101, 2), ("inner.a", 101, 103, 258), ("inner.b", 103, 105, b"hi"),
        ("pair[0].c", 105, 106, -2), ("pair[1].c", 106, 107, 7), ("tail", 107, 108, 9)]
    spans, error = layouts.field_spans(declaration, bytes.fromhex("02" "0102" "68"), base=100, path="x")
    assert [span.path for span in spans] == ["x.n", "x.inner.a"]
    assert error == layouts.SpanError("x.inner.b", 103, "stream read less than specified amount, expected 2, found 1")
