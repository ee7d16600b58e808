"""The kernels' plain rules on literal values (compiled or KBATCH_PURE_PYTHON=1 alike): what a batch's last
sequence is, and what a RecordMatch made with nothing but a literal looks for."""

from __future__ import annotations

import pytest

from kbatch.kernels.batchrules import NO_SEQUENCE, framed_v2_batch, last_sequence
from kbatch.kernels.match import RecordMatch


@pytest.mark.parametrize(("base_sequence", "last_offset_delta", "expected"), [
    (None, 3, -1),                # no producer fields read (a v0/v1 entry)
    (-1, 3, -1),                  # NO_SEQUENCE: not idempotent, whatever the records
    (0, 0, 0),
    (5, 3, 8),
    (2_147_483_646, 1, 2_147_483_647),
    (2_147_483_646, 3, 1),        # DefaultRecordBatch.incrementSequence wraps past Integer.MAX_VALUE to 0
    (-2, 3, 1),                   # only -1 means no sequence: another negative one is counted on
])
def test_last_sequence_is_kafkas(base_sequence, last_offset_delta, expected):
    """DefaultRecordBatch.lastSequence (clients/.../record/DefaultRecordBatch.java)."""
    assert NO_SEQUENCE == -1
    assert last_sequence(base_sequence, last_offset_delta) == expected


@pytest.mark.parametrize(("magic", "batch_length", "framed"), [
    (2, 49, True), (2, 100, True),                 # the bounds themselves are in
    (2, 48, False), (2, 101, False), (1, 60, False), (3, 60, False),
])
def test_a_v2_batch_is_framed_with_magic_2_and_a_length_within_the_bounds_given(magic, batch_length, framed):
    assert framed_v2_batch(magic, batch_length, 49, 100) is framed


def test_a_literal_alone_is_looked_for_as_is_in_keys_and_values_for_any_producer():
    match = RecordMatch(literal=b"Order")
    assert match.record(b"an Order", None, []) and match.record(None, b"Order-1", [])
    assert not match.record(b"an order", b"ORDER", [])   # no case folding unless asked
    assert (match.undecided, match.invert, match.producer_id) == (False, False, -2)
    assert match.wants_producer(-1) and match.wants_producer(12345)


def test_a_header_field_reads_where_and_as_the_declaration_says():
    """batchrules.HeaderField, made here (the kernels' own are made at import): base offset at 0, 8 bytes signed;
    magic at 16, one byte; CRC at 17, 4 bytes unsigned -- on a literal v2 batch header's first 21 bytes."""
    from kbatch.format.structs import BATCH_HEADER
    from kbatch.kernels.batchrules import HeaderField

    header = bytes.fromhex("ffffffff ffffffff 0000003d 00000000 02 fedcba98".replace(" ", ""))
    fields = {name: HeaderField(BATCH_HEADER, name) for name in ("base_offset", "magic", "crc")}
    assert [(field.at, field.size, field.signed) for field in fields.values()] == \
        [(0, 8, True), (16, 1, True), (17, 4, False)]
    assert [field.read(header, 0) for field in fields.values()] == [-1, 2, 0xFEDCBA98]
    assert fields["crc"].read(b"\x00" + header, 1) == 0xFEDCBA98


def test_a_folded_literal_matches_in_any_ascii_case():
    match = RecordMatch(literal=b"OrDer", fold=True)
    assert match.record(b"an ORDER", None, []) and match.record(None, b"order-1", [])
    assert not match.record(b"ordre", b"\xc3\x96rder", [])   # only ASCII letters fold


def test_no_literal_and_no_expression_matches_every_record():
    match = RecordMatch()
    assert match.record(b"", None, []) and match.record(None, b"x", []) and match.record(None, None, [])


def test_a_value_must_hold_every_value_literal():
    """``value_literals``: bytes every selected record's value holds (grep --field's prefilter); a null value
    holds none."""
    match = RecordMatch(value_literals=(b'"id"', b"42"))
    assert match.record(None, b'{"id": 42}', []) and match.record(b"k", b'42 "id"', [])
    assert not match.record(None, b'{"id": 7}', []) and not match.record(b'"id" 42', b"", [])
    assert not match.record(b'"id" 42', None, [])


def test_a_header_is_named_exactly_and_its_value_passes_its_own_test():
    """``headers``: (name, test) pairs every selected record carries -- a header of exactly that name (case and
    length), whose value the test (a RecordMatch, or None: any value, null too) finds."""
    any_value = RecordMatch(headers=[(b"trace", None)])
    assert any_value.record(None, None, [(b"x", b""), (b"trace", None)])
    assert not any_value.record(None, None, [(b"tracer", b"1"), (b"Trace", b"1"), (b"trac", b"1")])
    assert not any_value.record(b"trace", b"trace", [])
    ones = RecordMatch(headers=[(b"trace", RecordMatch(literal=b"1")), (b"tenant", None)])
    assert ones.record(None, None, [(b"tenant", b"a"), (b"trace", b"0"), (b"trace", b"x1x")])
    assert not ones.record(None, None, [(b"tenant", b"a"), (b"trace", b"0"), (b"trace", None)])
    assert not ones.record(None, None, [(b"trace", b"1")])   # no tenant


def test_an_expressions_required_bytes_are_looked_for_in_their_own_case_unless_folded():
    """``required``: bytes every match of the expression holds (kbatch.ops.grep works them out), a prefilter."""
    import re

    match = RecordMatch(regex=re.compile(rb"ORDER-\d"), required=(b"ORDER-",))
    assert match.record(b"ORDER-1", None, []) and not match.record(b"order-1", None, [])
    folded = RecordMatch(regex=re.compile(rb"(?i)ORDER-\d"), required=(b"ORDER-",), fold=True)
    assert folded.record(b"order-1", None, []) and folded.record(b"Order-2", None, [])
    anywhere = RecordMatch(regex=re.compile(rb"-\d"))   # no bytes required: the expression alone, never on a null
    assert anywhere.record(None, b"ORDER-1", []) and anywhere.record(b"ORDER-1", None, [])
    assert not anywhere.record(None, None, []) and not anywhere.record(b"-", b"1", [])


def test_new_record_columns_hold_no_row_and_room_for_at_least_one():
    from kbatch.kernels.recordwalk import HEADER_COLUMNS, RECORD_COLUMNS, RecordColumns

    columns = RecordColumns(0)
    assert columns.capacity == 1 and len(columns.records["pos"]) == 1 and len(columns.headers["key_pos"]) == 1
    assert (columns.n, columns.n_headers, columns.first_index, columns.fills) == (0, 0, 0, 0)
    assert all(len(columns.column(name)) == 0 for name in RECORD_COLUMNS)
    assert all(len(columns.header_column(name)) == 0 for name in HEADER_COLUMNS)
    # room for headers: as asked, else as many as for records
    assert [len(RecordColumns(3, asked).headers["key_pos"]) for asked in (-1, 0, 1, 5)] == [3, 3, 1, 5]


# -- kernels.jsonl: a clean batch's line from its header's fields ---------------------------------------------

# (base_offset, batch_length, partition_leader_epoch, magic, crc, attributes, last_offset_delta, base_timestamp,
#  max_timestamp, producer_id, producer_epoch, base_sequence, records_count), as the header walk unpacks them
_HEADERS = [
    (0, 61, 0, 2, 1234, 0, 0, 1_700_000_000_000, 1_700_000_000_000, -1, -1, -1, 1),
    (42, 4_000, 7, 2, 4_294_967_295, 0x34, 9, 0, 17, 5, 2, 100, 10),          # zstd, transactional, LogAppendTime
    (2**62, 70, -1, 2, 0, 0x23, 0, -5, -1, 2**62, 32767, 2**31 - 1, 1),       # lz4, control; negative times
    (5, 100, 3, 2, 77, 0x1, -1, 1_600_000_000_000, 1_600_000_000_001, 1, 0, 0, 0),   # gzip, an empty batch
    (9, 90, 1, 2, 5, 0x42, 3, 1_650_000_000_000, 1_650_000_000_009, -1, -1, -1, 4),  # snappy, a delete horizon
    (7, 61, 0, 2, 1234, 0, 0, 86_400_000, 86_400_001, -1, -1, -1, 1),   # day 1 (1970-01-02): no date written before
]


@pytest.mark.parametrize("header", _HEADERS)
@pytest.mark.parametrize("computed_crc", [1234, 77])
def test_a_clean_batchs_line_from_its_header_fields_is_json_dumps_of_its_dict(header, computed_crc, monkeypatch):
    """kbatch.walk.listing writes a clean batch's line from its header's fields, without a Batch: the bytes of
    json.dumps of the dict the output declares for the Batch the reader makes of the same fields (by a writer
    made for the test, not the one an earlier line left)."""
    import json

    from kbatch.kernels import jsonl
    from kbatch.kernels.jsonl import batch_json, fields_json

    if hasattr(jsonl, "_line"):   # the pure build's writer (compiled, a C global)
        monkeypatch.setattr(jsonl, "_line", None)
    from kbatch.output.jsonout import batch_dict
    from kbatch.reading.v2 import batch_fields, batch_of

    fields = batch_fields(1000, header[1] + 12, header, computed_crc)
    batch = batch_of(fields)
    head = b'{"file": "orders-0/00000000000000000000.log", '
    expected = json.dumps({"file": "orders-0/00000000000000000000.log", **batch_dict(batch)}, ensure_ascii=False)
    assert fields_json(fields, head) == batch_json(batch, head) == expected.encode()


def test_a_name_is_written_between_quotes_only_when_its_json_is_that():
    """_plain_name: a name's bytes where json.dumps writes it as itself between quotes, else None (the line is
    then json.dumps' to write); asked again, the same answer; and it keeps at most 64 names' answers."""
    import itertools
    import json

    from kbatch.kernels import jsonl

    fresh = (f"codec-{n}-{id(object())}" for n in itertools.count())   # names no other test asked about
    for make, plain in [(lambda n: n, True), (lambda n: n + '"', False), (lambda n: n + "\\", False),
                        (lambda n: n + "\u00e9", False), (lambda n: n + "\x07", False), (lambda n: n + "\n", False)]:
        name = make(next(fresh))
        expected = name.encode() if plain else None
        assert jsonl._plain_name(name) == expected and jsonl._plain_name(name) == expected
        assert expected is None or json.dumps(name).encode() == b'"' + expected + b'"'
    for _ in range(80):
        assert jsonl._plain_name(next(fresh)) is not None
    assert len(jsonl._plain_names) == 64


# A v2 batch header, clean (a run over a Records field reads no record): base offset 0, batch length 49, magic 2,
# CRC 0x92a76b63, attributes 0, both timestamps 1_700_000_000_000, no producer (-1, -1, -1), a count of 2.
_BATCH_HEADER = bytes.fromhex("0000000000000000 00000031 00000000 02 92a76b63 0000 00000000 0000018bcfe56800"
                              "0000018bcfe56800 ffffffffffffffff ffff ffffffff 00000002".replace(" ", ""))


@pytest.mark.parametrize(("codec", "timestamp_type", "taken"), [
    ("c" * 64, "t" * 64, True),     # the line's room holds two names of 64 bytes
    ("c" * 65, "CreateTime", False),
    ("none", "t" * 65, False),
    ('"zstd"', "CreateTime", False),   # a name whose JSON is not itself between quotes (_plain_name: None)
    ("none", "Create\\Time", False),
])
def test_a_runs_line_holds_names_of_up_to_64_bytes_and_leaves_longer_ones_to_json_dumps(codec, timestamp_type, taken,
                                                                                       monkeypatch):
    """clean_batch_lines writes a codec's and a timestamp type's name of up to 64 bytes itself; a longer one, or
    one JSON escapes, stops the run before the batch (its line is then json.dumps' to write).  By a writer made
    for the test."""
    from kbatch.format.framing import CHECKSUMS
    from kbatch.kernels import jsonl
    from kbatch.kernels.jsonl import clean_batch_lines

    if hasattr(jsonl, "_line"):   # the pure build's writer (compiled, a C global)
        monkeypatch.setattr(jsonl, "_line", None)

    names = (codec,) * 8 + (timestamp_type, "LogAppendTime")
    lines: list = []
    spans: list = []
    stopped = clean_batch_lines(_BATCH_HEADER, 0, 61, 1000, 49, 1 << 30, CHECKSUMS[2], names, lines, spans)
    again: list = []   # (by the writer the first call made)
    assert clean_batch_lines(_BATCH_HEADER, 0, 61, 1000, 49, 1 << 30, CHECKSUMS[2], names, again, []) == stopped
    assert again == lines
    if not taken:
        assert (stopped, lines, spans) == ((0, -1, 0), [], [])
        return
    assert stopped == (61, 1000, 2) and spans == [1]   # (where it stopped, the last batch's position, records)
    assert lines == [(', "pos": 1000, "size": 61, "magic": 2, "base_offset": 0, "last_offset": 0, "stored_offset": 0, '
                      '"count": 2, "batch_length": 49, "partition_leader_epoch": 0, "crc": 2460445539, '
                      '"crc_computed": 2460445539, "crc_valid": true, "attributes": 0, '
                      f'"codec": "{codec}", "timestamp_type": "{timestamp_type}", '
                      '"is_transactional": false, "is_control": false, "last_offset_delta": 0, '
                      '"base_timestamp": 1700000000000, "base_timestamp_iso": "2023-11-14T22:13:20.000Z", '
                      '"max_timestamp": 1700000000000, "max_timestamp_iso": "2023-11-14T22:13:20.000Z", '
                      '"delete_horizon_ms": null, "producer_id": -1, "producer_epoch": -1, "base_sequence": -1, '
                      '"last_sequence": -1, "payload_pos": 1061, "payload_size": 0, "decompressed_size": null, '
                      '"findings": []}\n').encode()]


# One v2 record (attributes 0, timestamp and offset deltas 0): key b"a b", value b"x ~", no headers.
_RECORD = bytes.fromhex("18 00 00 00 06 612062 06 78207e 00".replace(" ", ""))


def _records_json(base_timestamp: int, mode: int) -> bytes:
    from kbatch.kernels.jsonl import records_json
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    columns = RecordColumns(4)
    assert RecordWalker(_RECORD, 1, 5, base_timestamp).fill(columns) == 1
    return bytes(records_json(columns, _RECORD, 100, False, -1, False, 0, mode, lambda value: b'"OTHER"'))


def test_a_records_json_holds_printable_ascii_space_and_tilde_included_as_text():
    from kbatch.kernels.jsonl import JSON_TEXT

    assert _records_json(1_700_000_000_000, JSON_TEXT) == (
        b'{"offset": 5, "timestamp": 1700000000000, "timestamp_iso": "2023-11-14T22:13:20.000Z", '
        b'"key": {"utf8": "a b"}, "value": {"utf8": "x ~"}, "headers": [], "pos": 100, "inner_pos": null, '
        b'"size": 13, "attributes": 0, "sequence": -1, "crc": null, "crc_valid": null, "control": null}')


@pytest.mark.parametrize(("ms", "iso"), [
    (0, b'"1970-01-01T00:00:00.000Z"'),
    (1_000, b'"1970-01-01T00:00:01.000Z"'),   # each unit at its turn: a second, a minute, an hour
    (60_000, b'"1970-01-01T00:01:00.000Z"'),
    (3_600_000, b'"1970-01-01T01:00:00.000Z"'),
    (86_399_999, b'"1970-01-01T23:59:59.999Z"'),
    (4_107_542_399_999, b'"2100-02-28T23:59:59.999Z"'),   # a century's turn: no 29 February in 2100
    (4_107_542_400_000, b'"2100-03-01T00:00:00.000Z"'),
    (7_263_216_000_000, b'"2200-03-01T00:00:00.000Z"'),
    (10_418_889_600_000, b'"2300-03-01T00:00:00.000Z"'),
    (13_574_563_200_000, b'"2400-02-29T00:00:00.000Z"'),  # 400 years: a 29 February
    (13_574_649_600_000, b'"2400-03-01T00:00:00.000Z"'),
    (253_402_300_799_999, b'"9999-12-31T23:59:59.999Z"'),  # the last with a four-digit year
    (253_402_300_800_000, b"null"),
    (-1, b"null"),
])
def test_a_records_timestamp_iso_is_its_utc_date_and_time_or_null_outside_four_digit_years(ms, iso):
    from kbatch.kernels.jsonl import JSON_HEX

    assert b'"timestamp_iso": ' + iso + b', ' in _records_json(ms, JSON_HEX)


_CUT = "a complete varint", "1 byte(s) then the end of the record"


@pytest.mark.parametrize(("record", "finding"), [
    # each of a record's varints in turn: a continuation bit, then the record's end
    ("04 00 80", ("record-overrun", 2, 1, "records[0].timestamp_delta", *_CUT)),
    ("06 00 00 80", ("record-overrun", 3, 1, "records[0].offset_delta", *_CUT)),
    ("08 00 00 00 80", ("record-overrun", 4, 1, "records[0].key_length", *_CUT)),
    ("0a 00 00 00 01 80", ("record-overrun", 5, 1, "records[0].value_length", *_CUT)),
    ("0c 00 00 00 01 01 80", ("record-overrun", 6, 1, "records[0].headers_count", *_CUT)),
    # a value of 3 bytes with 1 left in the record; a record 1 byte longer than its fields
    ("0c 00 00 00 01 06 61", ("record-overrun", 5, 2, "records[0].value", "3 bytes", "1 bytes left in the record")),
    ("0e 00 00 00 01 01 00 ff",
     ("bad-record-length", 0, 8, "records[0].length", "6 bytes (what the fields use)", "7")),
    # a header's key length: a continuation bit, then the record's end
    ("0e 00 00 00 01 01 02 80",
     ("record-overrun", 7, 1, "records[0].headers[0].key_length", "a complete varint",
      "1 byte(s) then the end of the record")),
    # a header's key length -1: a header key is never null
    ("0e 00 00 00 01 01 02 01",
     ("bad-length", 7, 1, "records[0].headers[0].key_length", "a length >= 0 (header keys are never null)", "-1")),
    # a header's value length missing after its key b"a"
    ("10 00 00 00 01 01 02 02 61",
     ("record-overrun", 9, 0, "records[0].headers[0].value_length", "a complete varint",
      "0 byte(s) then the end of the record")),
    # a header's key length of more than 5 varint bytes
    ("1a 00 00 00 01 01 02 ffffffffff01 00",
     ("varint-overflow", 7, 5, "records[0].headers[0].key_length", "at most 5 varint bytes",
      "a continuation bit on byte 5")),
])
def test_a_length_that_does_not_decode_names_the_record_and_the_header(record, finding):
    """A record cut inside a varint, or of null key and value (-1) and one header (count 1) whose lengths do not
    decode: the finding names the record by its index and a header by its own."""
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    walker = RecordWalker(bytes.fromhex(record.replace(" ", "")), 1, 5, 0)
    assert walker.fill(RecordColumns(4)) == 0
    assert walker.findings == [finding] and walker.done


@pytest.mark.parametrize(("data", "stop", "stopped", "taken"), [
    (_BATCH_HEADER * 2, 61, (61, 1000, 2), 1),       # the second batch starts at stop: not taken
    (_BATCH_HEADER * 2, 62, (122, 1061, 4), 2),
    (_BATCH_HEADER + _BATCH_HEADER[:60], 122, (61, 1000, 2), 1),   # no whole header after the first
    # the same header with a count of -1 (and its CRC, 0xc404afac): never taken
    (bytes.fromhex("0000000000000000 00000031 00000000 02 c404afac 0000 00000000 0000018bcfe56800"
                   "0000018bcfe56800 ffffffffffffffff ffff ffffffff ffffffff".replace(" ", "")), 61, (0, -1, 0), 0),
])
def test_a_run_takes_the_batches_that_start_before_its_stop_and_lie_whole_in_the_data(data, stop, stopped, taken):
    from kbatch.format.framing import CHECKSUMS
    from kbatch.kernels.jsonl import clean_batch_lines

    names = ("none",) * 8 + ("CreateTime", "LogAppendTime")
    lines: list = []
    spans: list = []
    assert clean_batch_lines(data, 0, stop, 1000, 49, 1 << 30, CHECKSUMS[2], names, lines, spans) == stopped
    assert len(lines) == len(spans) == taken


def test_a_records_headers_whose_json_is_made_elsewhere_fit_the_buffer_sized_for_them():
    """records_json sizes its buffer before writing: a record of 20 headers whose keys and values are not text
    (their JSON made by ``other``, here 4 bytes each) is written whole, each piece where it goes."""
    from kbatch.kernels.jsonl import JSON_TEXT, records_json
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    # length 86, attributes 0, deltas 0, null key and value, 20 headers: key b"\x00", value b"\x01"
    record = bytes.fromhex("ac01 00 00 00 01 01 28".replace(" ", "")) + bytes.fromhex("02000201") * 20
    columns = RecordColumns(4)
    assert RecordWalker(record, 1, 5, 0).fill(columns) == 1 and columns.n_headers == 20
    line = bytes(records_json(columns, record, 0, False, -1, False, 0, JSON_TEXT, lambda value: b'"%s"' % value.hex().encode()))
    assert line == (b'{"offset": 5, "timestamp": 0, "timestamp_iso": "1970-01-01T00:00:00.000Z", "key": null, '
                    b'"value": null, "headers": [' + b", ".join([b'{"key": "00", "value": "01"}'] * 20) +
                    b'], "pos": 0, "inner_pos": null, "size": 88, "attributes": 0, "sequence": -1, "crc": null, '
                    b'"crc_valid": null, "control": null}')


def test_a_header_test_selects_from_walked_columns_only_rows_that_match_and_carry_the_header():
    """RecordMatch.rows/any_row on a walk's columns: a row is selected when its key or value holds the literal
    and it carries the header; the columns count each fill (a reader reuses columns only when none came since)."""
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    # offset deltas 0 and 1, each: key b"k", value b"v0" / b"v1", one header b"h": b"x"
    records = bytes.fromhex("1a 00 00 00 02 6b 04 7630 02 02 68 02 78"
                            "1a 00 00 02 02 6b 04 7631 02 02 68 02 78".replace(" ", ""))
    columns = RecordColumns(4)
    assert RecordWalker(records, 2, 0, 0).fill(columns) == 2 and columns.fills == 1
    assert RecordMatch(literal=b"v1", headers=[(b"h", None)]).rows(columns, records) == [1]
    assert RecordMatch(literal=b"v", headers=[(b"h", None)]).rows(columns, records) == [0, 1]
    assert RecordMatch(literal=b"v1", headers=[(b"g", None)]).rows(columns, records) == []
    assert not RecordMatch(literal=b"v2", headers=[(b"h", None)]).any_row(columns, records)
    assert RecordMatch(literal=b"v2", headers=[(b"h", None)], invert=True).rows(columns, records) == [0, 1]
    assert RecordWalker(records, 1, 0, 0).fill(columns) == 1 and columns.fills == 2


def test_a_header_test_looks_at_each_of_a_records_headers_and_every_test_must_hold():
    """RecordMatch on walked columns of records with several headers: a header is found wherever it stands
    among them (last, first), with its value's own test, and each header asked for must be there."""
    pytest.importorskip("kafka")
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kbatch.format.structs import BATCH_HEADER
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=0, key=b"k", value=b"v", headers=[("a", b"1"), ("b", b"2"), ("h", b"x")])
    builder.append(1, timestamp=0, key=b"k", value=b"v", headers=[("h", b"y"), ("a", b"1")])
    builder.append(2, timestamp=0, key=b"k", value=b"v", headers=[("a", b"1"), ("a", b"2")])
    data = bytes(builder.build())
    columns = RecordColumns(4, 16)   # (room for every header: one more than a row each asks a walk again)
    assert RecordWalker(data, 3, 0, 0, BATCH_HEADER.size, len(data)).fill(columns) == 3
    assert RecordMatch(literal=b"v", headers=[(b"h", None)]).rows(columns, data) == [0, 1]
    assert RecordMatch(literal=b"v", headers=[(b"h", RecordMatch(literal=b"x"))]).rows(columns, data) == [0]
    assert RecordMatch(literal=b"v", headers=[(b"a", RecordMatch(literal=b"2"))]).rows(columns, data) == [2]
    assert RecordMatch(literal=b"v", headers=[(b"a", None), (b"b", None)]).rows(columns, data) == [0]
    assert RecordMatch(literal=b"v", headers=[(b"b", None), (b"h", None)]).rows(columns, data) == [0]
    assert RecordMatch(literal=b"v", headers=[(b"a", None), (b"c", None)]).rows(columns, data) == []


def test_a_record_with_more_headers_than_room_doubles_the_room_and_is_read_again():
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    record = bytes.fromhex(("24 00 00 00 01 01 08" + " 02 61 01" * 4).replace(" ", ""))   # 4 headers: key b"a", null value
    columns = RecordColumns(2, 3)
    walker = RecordWalker(record, 1, 0, 0)
    assert walker.fill(columns) == 1 and columns.n_headers == 4 and walker.findings == []
    assert len(columns.headers["key_pos"]) == 6   # twice the 3 asked for (the record needs 4)
    assert list(columns.header_column("key_pos")) == [8, 11, 14, 17]


def test_a_key_or_value_length_below_minus_one_is_found_and_read_as_null():
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    walker = RecordWalker(bytes.fromhex("0c 00 00 00 03 05 00".replace(" ", "")), 1, 0, 0)   # lengths -2, -3
    assert walker.fill(RecordColumns(2)) == 1
    assert walker.findings == [
        ("negative-length", 0, 7, "records[0].key_length", "-1 (null) or a length >= 0", "-2 (Kafka reads it as null)"),
        ("negative-length", 0, 7, "records[0].value_length", "-1 (null) or a length >= 0",
         "-3 (Kafka reads it as null)")]


@pytest.mark.parametrize(("record", "starts_with_zero"), [
    ("10 00 00 00 02 00 02 78 00", True),         # key b"\x00", value b"x"
    ("10 00 00 00 02 78 02 00 00", True),         # key b"x", value b"\x00"
    ("14 00 00 00 04 7800 04 7900 00", False),    # a zero byte, but not first
    ("0c 00 00 00 00 00 00", False),              # empty key and value
    ("0c 00 00 00 01 01 00", False),              # null key and value
])
def test_a_key_or_value_starting_with_a_zero_byte_is_told(record, starts_with_zero):
    """any_key_or_value_starts_with_zero: the schema registry's magic byte first in a key or value."""
    from kbatch.kernels.recordwalk import any_key_or_value_starts_with_zero
    from kbatch.kernels.recordwalk import RecordColumns, RecordWalker

    data = bytes.fromhex(record.replace(" ", ""))
    columns = RecordColumns(2)
    assert RecordWalker(data, 1, 0, 0).fill(columns) == 1
    assert any_key_or_value_starts_with_zero(columns, data) is starts_with_zero


def test_a_runs_last_offset_past_64_bits_is_written_by_plain_python_and_stops_the_compiled_run():
    """base offset 2**63 - 1 and lastOffsetDelta 1 (CRC 0xb361fd40): plain Python writes the last offset 2**63;
    compiled, whose numbers are C long longs, the run stops before the batch (json.dumps then writes its line)."""
    from kbatch.format.framing import CHECKSUMS
    from kbatch.kernels.jsonl import clean_batch_lines
    from kbatch.kernels.recordwalk import is_compiled

    header = bytes.fromhex("7fffffffffffffff 00000031 00000000 02 b361fd40 0000 00000001 0000018bcfe56800"
                           "0000018bcfe56800 ffffffffffffffff ffff ffffffff 00000002".replace(" ", ""))
    names = ("none",) * 8 + ("CreateTime", "LogAppendTime")
    lines: list = []
    stopped = clean_batch_lines(header, 0, 61, 0, 49, 1 << 30, CHECKSUMS[2], names, lines, [])
    if is_compiled():
        assert (stopped, lines) == ((0, -1, 0), [])
    else:
        assert stopped == (61, 0, 2) and b'"last_offset": 9223372036854775808, ' in lines[0]


def test_runs_lines_gathered_are_the_head_the_offset_and_the_line_of_each():
    """RunLines gathers what kbatch pcap's writer joins in Python: each line after its run's head and the offset
    the broker gave its batch, each offset the one before plus the offsets that batch takes, or null where none
    was given -- random heads, lines and spans, offsets up to the 64-bit edge, runs after runs past the first
    buffer's size; nothing gathered (the caller writes them) where the first offset is not a long long, or
    compiled where a later one would not be."""
    import random

    from kbatch.kernels.jsonl import RunLines, object_keys
    from kbatch.kernels.recordwalk import is_compiled

    def joined(head: bytes, lines: list, spans: list, assigned: int | None) -> bytes:
        parts = []
        for line, span in zip(lines, spans):
            parts += (head, b"null" if assigned is None else str(assigned).encode(), line)
            assigned = None if assigned is None else assigned + span
        return b"".join(parts)

    rng = random.Random(47)
    gathered, expected = RunLines(64), b""
    for _ in range(200):
        n = rng.randrange(0, 6)
        head = bytes(rng.randrange(32, 127) for _ in range(rng.randrange(0, 80)))
        lines = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200))) + b"\n" for _ in range(n)]
        spans = [rng.randrange(1, 2 ** 31) for _ in range(n)]
        assigned = rng.choice((None, 0, 7, rng.randrange(2 ** 62), 2 ** 63 - 1 - sum(spans[:-1])))
        assert gathered.add(head, lines, spans, assigned)
        expected += joined(head, lines, spans, assigned)
        assert gathered.size == len(expected)
        if rng.random() < 0.2:
            assert bytes(gathered.taken()) == expected and gathered.size == 0
            expected = b""
    assert bytes(gathered.taken()) == expected
    assert not gathered.add(b"h", [b"a\n"], [1], 2 ** 63) and not gathered.add(b"h", [b"a\n"], [1], -2 ** 63 - 1)
    assert gathered.size == 0
    for edge in (2 ** 63 - 1, -2 ** 63):   # the first offset at either end of a long is written
        assert gathered.add(b"h", [b"a\n"], [1], edge) and bytes(gathered.taken()) == b"h%da\n" % edge
    gathered.add(b"x", [b"y\n"], [1], None)
    over = gathered.add(b"h", [b"a\n", b"b\n"], [2, 1], 2 ** 63 - 2)   # the second offset past 64 bits
    expected = b"xnully\n" + (b"" if is_compiled() else joined(b"h", [b"a\n", b"b\n"], [2, 1], 2 ** 63 - 2))
    assert over is not is_compiled() and bytes(gathered.taken()) == expected   # (compiled: the run left out whole)
    # with the head object_keys writes: the same lines; none gathered where it writes no head (a bool value)
    names, values = (b'{"a": ', b', "b": '), ("t\u00e9", 7)
    assert gathered.add_keyed(names[0][:1], names, values, b", ", [b"x\n", b"y\n"], [3, 1], 5)
    head = object_keys(names[0][:1], names, values, b", ")
    assert bytes(gathered.taken()) == joined(head, [b"x\n", b"y\n"], [3, 1], 5)
    assert not gathered.add_keyed(b"{", names, ("t", True), b", ", [b"x\n"], [1], None) and gathered.size == 0


def test_object_keys_are_json_dumps_of_the_values_or_none_where_it_writes_them_not():
    """object_keys writes each key and value as json.dumps (ensure_ascii=False) writes a dict's, UTF-8 with lone
    surrogates as their bytes: None, ints to the 64-bit edges, finite floats, hostile and non-ASCII strings, the
    same string again (kept), more strings than are kept; None where a value is a bool, an int past 64 bits, a
    float not finite or another kind, or the names and values differ in number."""
    import json
    import random

    from kbatch.kernels.jsonl import object_keys

    rng = random.Random(47)
    strings = ["orders", "", 'q"\\ \n\t\x00\x1f\x7f', "caf\u00e9 \u2603 \U0001f600", "\udcff\udc80 bytes",
               "10.0.0.1:51000 -> 10.0.0.2:9092", "x" * 5000]
    names = ("topic", "partition", "client_id", "packet_time", "records_pos")
    for n in range(6000):
        values = (rng.choice(strings + [f"topic-{n}", None]), rng.choice((0, -1, 2 ** 63 - 1, -2 ** 63, n)),
                  rng.choice((None, "\u2603", f"client-{n % 7}")), rng.choice((1763800000.000851 + n / 7, -0.0, 1e300, 5.0)),
                  n * 61)
        spelt = tuple(f', "{name}": '.encode() for name in names)
        written = object_keys(b"{" + b'"type": "batch"', spelt, values, b"}")
        expected = json.dumps({"type": "batch", **dict(zip(names, values))}, ensure_ascii=False)
        assert written == expected.encode("utf-8", "surrogateescape")
    one = (b', "v": ',)
    for odd in (True, False, 2 ** 63, -2 ** 63 - 1, float("nan"), float("inf"), float("-inf"), b"bytes", [1], 1.5j):
        assert object_keys(b"{", one, (odd,), b"}") is None
    assert object_keys(b"{", one, (1, 2), b"}") is None and object_keys(b"{", (), (), b"}") == b"{}"


# -- kernels.recordwalk.RecordRows: the records table's rows, gathered ---------------------------------------------

def test_record_rows_grow_to_hold_every_chunk_given_and_keep_each_rows_bytes():
    """Rows begun with room for one, given a chunk of 30 records (null and empty keys and values, headers with
    and without a value) three times: every row's key, value, headers, offset, timestamp and sequence, and its
    batch's fields, as kafka-python reads the batch."""
    pytest.importorskip("kafka")
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

    from kbatch.format.structs import BATCH_HEADER
    from kbatch.kernels.recordwalk import RecordColumns, RecordRows, RecordWalker

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=9,
                                        producer_epoch=0, base_sequence=2**31 - 10, batch_size=1 << 20)
    for delta in range(30):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=[None, b"", b"k%d" % delta][delta % 3],
                       value=None if delta % 5 == 0 else b"v" * delta,
                       headers=[("h", None), ("i", b"%d" % delta)][:delta % 3])
    data = bytes(builder.build())
    expected = list(DefaultRecordBatch(data))
    walker = RecordWalker(data, 30, 100, 1_700_000_000_000, BATCH_HEADER.size, len(data))
    columns = RecordColumns(64)
    assert walker.fill(columns) == 30 and walker.done
    rows = RecordRows(1)
    for file in range(3):
        rows.add(columns, data, 7, 100, 0, False, 0, 2**31 - 10, 9, False, file - 1, file)
    assert (rows.n, rows.n_headers) == (90, 3 * 30)
    column, header, held = rows.columns, rows.header_columns, rows.bytes

    def spans(data, offsets, nulls, count):
        return [None if nulls is not None and nulls[k] else bytes(data[offsets[k]:offsets[k + 1]])
                for k in range(count)]

    keys = spans(held["key"], column["key_offsets"], column["key_null"], 90)
    values = spans(held["value"], column["value_offsets"], column["value_null"], 90)
    header_keys = spans(held["header_key"], header["key_offsets"], None, 90)
    header_values = spans(held["header_value"], header["value_offsets"], header["value_null"], 90)
    for row in range(90):
        record = expected[row % 30]
        first, last = column["headers_offsets"][row], column["headers_offsets"][row + 1]
        assert (keys[row], values[row]) == (record.key, record.value)
        assert list(zip(header_keys[first:last], header_values[first:last])) == \
            [(key.encode(), value) for key, value in record.headers]
        assert (column["offset"][row], column["timestamp"][row]) == (100 + record.offset, record.timestamp)
        # baseSequence + offsetDelta, wrapping past Integer.MAX_VALUE to 0 (DefaultRecordBatch.incrementSequence)
        assert column["sequence"][row] == (2**31 - 10 + row % 30 if row % 30 < 10 else row % 30 - 10)
        assert (column["batch_pos"][row], column["batch_base_offset"][row], column["producer_id"][row],
                column["visible"][row], column["file"][row]) == (7, 100, 9, row // 30 - 1, row // 30)
    assert rows.data_bytes == sum(len(part or b"") for part in keys + values + header_keys + header_values)


def test_record_rows_repeat_each_batchs_own_fields_on_its_rows():
    """Two chunks of one record each, of batches that differ in every field a row repeats: a gzip batch whose
    timestamps are LogAppendTime (each row then has maxTimestamp, as Kafka's Record.timestamp gives it), with no
    baseSequence, transactional and not visible, then a plain one; a header without a value is null."""
    pytest.importorskip("kafka")
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kbatch.format.structs import BATCH_HEADER
    from kbatch.kernels.recordwalk import RecordColumns, RecordRows, RecordWalker

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=1_000, key=b"key", value=None, headers=[("h", None), ("i", b"yes")])
    data = bytes(builder.build())
    rows = RecordRows(1)
    for fields in ((11, 40, 1, True, 5_000, -1, 3, True, 0, 2), (12, 50, 0, False, 6_000, 7, -1, False, 1, 3)):
        walker = RecordWalker(data, 1, fields[1], 900, BATCH_HEADER.size, len(data))
        columns = RecordColumns(4)
        assert walker.fill(columns) == 1
        rows.add(columns, data, *fields)
    column = rows.columns
    assert [(column["batch_pos"][row], column["batch_base_offset"][row], column["codec"][row],
             column["log_append_time"][row], column["timestamp"][row], column["sequence"][row],
             column["producer_id"][row], column["is_transactional"][row], column["visible"][row],
             column["file"][row], column["offset"][row]) for row in range(2)] == \
        [(11, 40, 1, 1, 5_000, -1, 3, 1, 0, 2, 40), (12, 50, 0, 0, 900, 7, -1, 0, 1, 3, 50)]
    assert (list(column["key_null"][:2]), list(column["value_null"][:2])) == ([0, 0], [1, 1])
    assert list(column["key_offsets"][:3]) == [0, 3, 6] and list(column["value_offsets"][:3]) == [0, 0, 0]
    assert list(column["headers_offsets"][:3]) == [0, 2, 4]
    header = rows.header_columns
    assert list(header["value_null"][:4]) == [1, 0, 1, 0] and list(header["value_offsets"][:5]) == [0, 0, 3, 3, 6]
    assert rows.room == (6, 0, 4, 6) and rows.data_bytes == 16
    assert bytes(rows.bytes["key"][:6]) == b"keykey" and bytes(rows.bytes["header_value"][:6]) == b"yesyes"

    # An empty value and an empty header value are empty, not null; baseSequence 0 is a sequence
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=1,
                                        producer_epoch=0, base_sequence=0, batch_size=1 << 20)
    builder.append(0, timestamp=1_000, key=None, value=b"", headers=[("e", b"")])
    builder.append(1, timestamp=1_001, key=None, value=b"", headers=[])
    empty = bytes(builder.build())
    walker, columns = RecordWalker(empty, 2, 60, 1_000, BATCH_HEADER.size, len(empty)), RecordColumns(4)
    assert walker.fill(columns) == 2
    rows.add(columns, empty, 13, 60, 0, False, 1_001, 0, 1, False, 1, 0)
    column, header = rows.columns, rows.header_columns   # (grown: new arrays)
    assert (list(column["key_null"][2:4]), list(column["value_null"][2:4])) == ([1, 1], [0, 0])
    assert list(column["sequence"][2:4]) == [0, 1] and list(header["value_null"][4:5]) == [0]
    assert rows.room == (6, 0, 5, 6)


def test_a_batch_is_taken_into_rows_or_told_why_not():
    """kernels.cleanruns.batch_into_rows on literal batches (kafka-python's): what it answers for each kind of
    batch and state of the rows, and the rows it adds."""
    pytest.importorskip("kafka")
    import gzip

    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kbatch.format.structs import BATCH_HEADER
    from kbatch.kernels.cleanruns import (ASK_EACH, ASK_VISIBILITY, COMPRESSED, FULL, NO_ROOM, NOT_TAKEN, TAKEN,
                                          VISIBLE_UNLESS_TRANSACTIONAL, batch_into_rows)
    from kbatch.kernels.recordwalk import RecordColumns, RecordRows, RecordWalker

    def batch(*, codec=0, transactional=False, control=False, keys=(b"a", b"b"), base_offset=100, pad=b""):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                            producer_id=5, producer_epoch=0, base_sequence=20, batch_size=1 << 20)
        for delta, key in enumerate(keys):
            builder.append(delta, timestamp=2_000 + delta, key=key, value=b"v" + key + pad, headers=[])
        data = bytearray(builder.build())
        data[0:8] = base_offset.to_bytes(8, "big")
        if control:   # the control bit (0x20) set after the CRC was taken: the rows never look at the CRC
            data[22] |= 0x20
        return bytes(data)

    def into(rows, data, *, records=None, visible=-1, max_rows=100, max_bytes=1 << 20, capacity=16, file=4):
        walker, columns = RecordWalker(b"", 0, 0, 0), RecordColumns(capacity)
        return batch_into_rows(rows, walker, columns, data, 0, len(data), 2, 64, records, visible, file, max_rows,
                               max_bytes)

    rows = RecordRows(4)
    plain = batch()
    assert into(rows, plain) == TAKEN and rows.n == 2
    assert into(rows, batch(control=True)) == NOT_TAKEN
    assert into(rows, batch(transactional=True), visible=VISIBLE_UNLESS_TRANSACTIONAL) == ASK_VISIBILITY
    assert into(rows, plain, visible=ASK_EACH) == ASK_VISIBILITY
    assert into(rows, batch(keys=(b"a", b"\x00b")), visible=1) == NOT_TAKEN   # the schema registry's framing?
    assert into(rows, plain, capacity=1) == NOT_TAKEN                         # its walk did not end
    assert into(rows, plain, max_rows=3) == NO_ROOM
    zipped = batch(codec=1, transactional=True, base_offset=200, pad=b"z" * 200)   # (long enough to be gzipped)
    assert into(rows, zipped) == COMPRESSED
    inflated = gzip.decompress(zipped[BATCH_HEADER.size:])
    assert into(rows, zipped, records=inflated, visible=0) == TAKEN
    assert into(rows, plain, visible=VISIBLE_UNLESS_TRANSACTIONAL) == TAKEN
    assert rows.n == 6
    assert into(rows, plain, max_rows=6) == FULL and into(rows, plain, max_bytes=12) == FULL
    column = rows.columns
    assert [(column["offset"][row], column["batch_base_offset"][row], column["codec"][row],
             column["is_transactional"][row], column["visible"][row], column["timestamp"][row],
             column["sequence"][row], column["producer_id"][row], column["batch_pos"][row], column["file"][row])
            for row in range(6)] == [
        (100, 100, 0, 0, -1, 2_000, 20, 5, 64, 4), (101, 100, 0, 0, -1, 2_001, 21, 5, 64, 4),
        (200, 200, 1, 1, 0, 2_000, 20, 5, 64, 4), (201, 200, 1, 1, 0, 2_001, 21, 5, 64, 4),
        (100, 100, 0, 0, 1, 2_000, 20, 5, 64, 4), (101, 100, 0, 0, 1, 2_001, 21, 5, 64, 4)]
    assert bytes(rows.bytes["value"][:rows.room[1]]) == b"vavb" + b"va%svb%s" % (b"z" * 200, b"z" * 200) + b"vavb"
    rows = RecordRows(4)
    assert into(RecordRows(4), plain, max_rows=2) == TAKEN   # the records fill the rows exactly
    assert into(rows, plain, max_bytes=0) == TAKEN and rows.n == 2   # rows that hold none are never full


def test_each_v2_header_field_is_read_where_the_declaration_puts_it():
    """kernels.batchrules.V2Header, made here (the kernels' own is made at import): each of the thirteen fields
    on a literal header whose fields all differ, as kafka-python reads them."""
    pytest.importorskip("kafka")
    from kafka.record.default_records import DefaultRecordBatch

    from kbatch.kernels.batchrules import V2Header

    header = bytes.fromhex("0000000000000100" "00000038" "00000007" "02" "8badf00d" "0015" "00000003"
                           "0000018bcfe56800" "0000018bcfe56bb8" "0000000000000009" "0004" "00000011" "0000000c")
    fields = V2Header()
    read = {name: getattr(fields, name).read(header, 0) for name in (
        "base_offset", "batch_length", "partition_leader_epoch", "magic", "crc", "attributes", "last_offset_delta",
        "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence", "records_count")}
    batch = DefaultRecordBatch(header + bytes(8))
    assert read == {"base_offset": batch.base_offset, "batch_length": 0x38, "partition_leader_epoch": 7,
                    "magic": batch.magic, "crc": batch.crc, "attributes": 0x15,
                    "last_offset_delta": batch.last_offset_delta, "base_timestamp": batch.first_timestamp,
                    "max_timestamp": batch.max_timestamp, "producer_id": batch.producer_id,
                    "producer_epoch": batch.producer_epoch, "base_sequence": batch.base_sequence,
                    "records_count": 12}
    assert len(set(read.values())) == 13


def _v2_batch(base_offset: int, values: list[bytes], producer_id: int = -1) -> bytes:
    """A v2 batch of ``values`` by kafka-python's builder, its base offset set after (outside the CRC)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    idempotent = producer_id >= 0
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=producer_id,
                                        producer_epoch=0 if idempotent else -1,
                                        base_sequence=0 if idempotent else -1, batch_size=1 << 20)
    for delta, value in enumerate(values):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=None, value=value, headers=[])
    return base_offset.to_bytes(8, "big", signed=True) + bytes(builder.build())[8:]


def _deep_pass(data: bytes, stop: int, match: RecordMatch | None = None) -> tuple[int, int, int, int]:
    """CleanBatches.walk over ``data`` from its start to ``stop``: where it stopped, and the batches, records
    and bytes it took."""
    from kbatch.format.framing import CHECKSUMS
    from kbatch.kernels.cleanruns import CleanBatches

    run = CleanBatches(match=match)
    run.last_offset = -1
    stopped = run.walk(data, 0, stop, 0, 49, 1 << 30, None, None, CHECKSUMS[2])
    return stopped, run.batches, run.records, run.batch_bytes


def test_the_deep_pass_takes_the_batches_that_start_before_its_stop_and_lie_whole_in_the_data():
    """Two batches of two records, then an empty one (a count of 0, a header and nothing else, as compaction
    leaves): each is taken when it starts before the stop and ends within the data, the empty one too."""
    pytest.importorskip("kafka")
    first, second, empty = _v2_batch(0, [b"a", b"b"]), _v2_batch(2, [b"c", b"d"]), _v2_batch(4, [])
    data = first + second + empty
    assert len(empty) == 61
    assert _deep_pass(data, len(first)) == (len(first), 1, 2, len(first))        # the second starts at the stop
    assert _deep_pass(data, len(first) + 1) == (len(first + second), 2, 4, len(first + second))
    assert _deep_pass(data, len(data)) == (len(data), 3, 4, len(data))            # the empty one ends the data
    assert _deep_pass(data[:-1], len(data)) == (len(first + second), 2, 4, len(first + second))


def test_the_deep_pass_leaves_to_the_full_reader_a_batch_in_which_grep_may_select_a_record():
    """grep --producer-id: only the chosen producer's batches can hold a selected record; a batch of another
    producer is taken by the fast pass even where its records match."""
    pytest.importorskip("kafka")
    batch = _v2_batch(0, [b"x1", b"y"], producer_id=7)
    assert _deep_pass(batch, len(batch), RecordMatch(literal=b"x", producer_id=7))[:2] == (0, 0)
    assert _deep_pass(batch, len(batch), RecordMatch(literal=b"x", producer_id=8))[:2] == (len(batch), 1)
    assert _deep_pass(batch, len(batch), RecordMatch(literal=b"z", producer_id=7))[:2] == (len(batch), 1)
