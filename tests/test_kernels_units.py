"""The kernels' plain rules on literal values (compiled or KBATCH_PURE_PYTHON=1 alike): what a batch's last
sequence is, and what a RecordMatch made with nothing but a literal looks for."""

from __future__ import annotations

import pytest

from kbatch.kernels.batchrules import NO_SEQUENCE, last_sequence
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


def test_a_literal_alone_is_looked_for_as_is_in_keys_and_values_for_any_producer():
    match = RecordMatch(literal=b"Order")
    assert match.record(b"an Order", None, []) and match.record(None, b"Order-1", [])
    assert not match.record(b"an order", b"ORDER", [])   # no case folding unless asked
    assert (match.undecided, match.invert, match.producer_id) == (False, False, -2)
    assert match.wants_producer(-1) and match.wants_producer(12345)


def test_a_header_field_reads_where_and_as_the_declaration_says():
    """cleanruns.HeaderField, made here (the kernel's own are made at import): base offset at 0, 8 bytes signed;
    magic at 16, one byte; CRC at 17, 4 bytes unsigned -- on a literal v2 batch header's first 21 bytes."""
    from kbatch.kernels.cleanruns import BATCH_HEADER, HeaderField

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


def test_an_expressions_required_bytes_are_looked_for_in_their_own_case_unless_folded():
    """``required``: bytes every match of the expression holds (kbatch.ops.grep works them out), a prefilter."""
    import re

    match = RecordMatch(regex=re.compile(rb"ORDER-\d"), required=(b"ORDER-",))
    assert match.record(b"ORDER-1", None, []) and not match.record(b"order-1", None, [])
    folded = RecordMatch(regex=re.compile(rb"(?i)ORDER-\d"), required=(b"ORDER-",), fold=True)
    assert folded.record(b"order-1", None, []) and folded.record(b"Order-2", None, [])


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
