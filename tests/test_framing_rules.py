"""kbatch.format.framing's rules one by one, on literal bytes and values worked from Kafka's layouts.

The reader's tests reach these through whole segments; here each rule's answer is pinned exactly: which bytes
a finding spans, what it names as expected and found.  The sizes are Kafka's: a v0 message's header is 18
bytes up to its key length (offset 8, size 4, crc 4, magic 1, attributes 1; LegacyRecord), a v1 message's
26 (a timestamp of 8 more), a v2 batch's CRC covers from its attributes at byte 21 (DefaultRecordBatch).
"""

from __future__ import annotations

import pytest
from construct import SizeofError

from kbatch.format import framing
from kbatch.format.findings import Finding
from kbatch.format.layouts import Varint
from kbatch.format.structs import MESSAGE_V0_HEADER


def test_a_crc_mismatch_spans_the_bytes_the_crc_covers():
    assert framing.crc_mismatch(100, 300, 2, 5, 6) == \
        Finding("crc-mismatch", 100, 121, 179, "crc", "5 (computed)", "6 (stored)")   # attributes..end
    assert framing.crc_mismatch(100, 300, 1, 7, 8) == \
        Finding("crc-mismatch", 100, 116, 184, "crc", "7 (computed)", "8 (stored)")   # magic..end


def test_a_zero_run_is_zeros_up_to_and_including_the_magic_byte():
    assert framing.starts_zero_run(bytes(17))
    assert framing.starts_zero_run(bytes(17) + b"\x01")   # past the magic byte: not asked
    assert not framing.starts_zero_run(bytes(16) + b"\x02")   # the magic byte
    assert not framing.starts_zero_run(b"\x01" + bytes(16))


def test_the_findings_about_the_end_of_the_input():
    assert framing.zero_tail(40, 100) == \
        Finding("zero-tail", 40, 40, 60, "tail", "a log entry or the end of the file", "60 zero bytes")
    assert framing.truncated_while_reading(1000, 600) == Finding(
        "truncated-while-reading", 600, 600, 0, "file", "1000 bytes (its size when opened)",
        "600 bytes: the file was cut while it was read (a read at byte 600 found its end)")
    assert framing.short_header(50, 9) == Finding(
        "truncated", 50, 50, 9, "entry", "a log entry header of at least 17 bytes", "9 bytes, then the end of the input")


def test_a_proposed_v3_entry_is_framed_by_its_own_least_size():
    # V3_MIN_ENTRY_SIZE 32; an entry takes 12 bytes (offset, size) more than its size field
    assert framing.framed_proposed_v3(0, 32, 1000, 44)
    assert framing.framed_proposed_v3(8, 1000, 1000, 1020)
    assert not framing.framed_proposed_v3(0, 31, 1000, 44)
    assert not framing.framed_proposed_v3(0, 1001, 1000, 2000)
    assert not framing.framed_proposed_v3(0, 32, 1000, 43)


def test_a_legacy_length_is_a_signed_big_endian_int32():
    assert framing.read_length(b"\x00\xff\xff\xff\xff", 1) == -1
    assert framing.read_length(b"\x00\x00\x01\x00", 0) == 256


def _message(magic: int, *fields: bytes) -> tuple[int, callable]:
    """A v0/v1 message's size (offset field included) and its length reader, with ``fields`` after the header."""
    body = bytes(18 if magic == 0 else 26) + b"".join(fields)
    return len(body), lambda at: int.from_bytes(body[at:at + 4], "big", signed=True)


def _length(value: int) -> bytes:
    return value.to_bytes(4, "big", signed=True)


def test_a_legacy_key_and_value_that_fill_the_message():
    size, length_at = _message(0, _length(1), b"k", _length(2), b"vv")
    assert size == 29 and framing.legacy_key_value(500, size, 0, length_at) == ([(22, 1), (27, 2)], [])
    size, length_at = _message(1, _length(-1), _length(1), b"v")   # a null key
    assert framing.legacy_key_value(500, size, 1, length_at) == ([(30, -1), (34, 1)], [])
    size, length_at = _message(0, _length(0), _length(-1))   # an empty key, a null value
    assert framing.legacy_key_value(0, size, 0, length_at) == ([(22, 0), (26, -1)], [])


def test_a_length_below_minus_one_is_read_as_null_and_said():
    size, length_at = _message(0, _length(-2), _length(0))
    assert framing.legacy_key_value(500, size, 0, length_at) == ([(22, -2), (26, 0)], [Finding(
        "negative-length", 500, 518, 4, "key_length", "-1 (null) or a length >= 0", "-2 (Kafka reads it as null)")])


def test_a_value_longer_than_the_message_or_no_room_for_its_length():
    size, length_at = _message(0, _length(1), b"k", _length(5), b"vv")
    assert framing.legacy_key_value(500, size, 0, length_at) == \
        (None, [Finding("bad-length", 500, 523, 4, "value_length", "-1..2", "5")])
    size, length_at = _message(0, _length(1), b"k", b"\x00")
    assert framing.legacy_key_value(500, size, 0, length_at) == \
        (None, [Finding("record-overrun", 500, 523, 1, "value_length", "4 bytes", "1 bytes left")])
    size, length_at = _message(1, b"\x00\x00")
    assert framing.legacy_key_value(0, size, 1, length_at) == \
        (None, [Finding("record-overrun", 0, 26, 2, "key_length", "4 bytes", "2 bytes left")])
    size, length_at = _message(0, _length(4), b"kk")   # the key's length reaches exactly past the end
    assert framing.legacy_key_value(0, size, 0, length_at) == \
        (None, [Finding("bad-length", 0, 18, 4, "key_length", "-1..2", "4")])


def test_bytes_after_the_value_are_said_and_ignored():
    size, length_at = _message(0, _length(1), b"k", _length(2), b"vv", b"xyz")
    assert framing.legacy_key_value(500, size, 0, length_at) == ([(22, 1), (27, 2)], [Finding(
        "message-trailing-bytes", 500, 529, 3, "value", "the message to end after its value",
        "3 more bytes (Kafka ignores them)")])


def test_a_finding_as_a_dict_names_its_severity():
    assert Finding("crc-mismatch", 1, 2, 3, "crc", "4", "5").as_dict() == {
        "code": "crc-mismatch", "entry_pos": 1, "pos": 2, "size": 3, "field": "crc", "expected": "4", "actual": "5",
        "inner_pos": None, "severity": "error"}


def test_a_varint_has_no_fixed_size_and_a_fixed_layout_says_its_fields():
    with pytest.raises(SizeofError, match="a varint has no fixed size"):
        Varint.sizeof()
    assert repr(MESSAGE_V0_HEADER) == \
        "FixedLayout(('offset', 'q'), ('message_size', 'l'), ('crc', 'L'), ('magic', 'b'), ('attributes', 'b'))"


def test_the_generated_block_is_rewritten_only_when_it_differs(tmp_path, monkeypatch):
    import kbatch.format.layouts as layouts
    from pathlib import Path

    current = Path(layouts.__file__).with_name("structs.py").read_text()
    copy = tmp_path / "structs.py"
    monkeypatch.setattr(layouts, "__file__", str(tmp_path / "layouts.py"))
    copy.write_text(current)
    assert layouts.write_structs() is False and copy.read_text() == current
    mark = current.index(layouts._STRUCTS_MARK) + len(layouts._STRUCTS_MARK)
    copy.write_text(current[:mark] + "\nan old block\n")
    assert layouts.write_structs() is True and copy.read_text() == current


# Kafka frames an entry by its size field: least v0 14 (RECORD_OVERHEAD_V0), v1 22, v2 49 (RECORD_BATCH_OVERHEAD
# 61 less the 12 bytes of offset and size), at most the reader's max_entry_size; all of it within the input.

def test_size_bounds_and_fitting():
    assert [framing.size_bounds(magic, 5000) for magic in (0, 1, 2, 3)] == [(14, 5000), (22, 5000), (49, 5000),
                                                                         (32, 5000)]
    assert framing.fits(10, 49, 71) and not framing.fits(10, 49, 70)


@pytest.mark.parametrize("magic, size, input_size, framed", [
    (2, 49, 61, True), (2, 48, 61, False), (2, 1000, 1012, True), (2, 1001, 2000, False), (2, 49, 60, False),
    (0, 14, 26, True), (0, 13, 26, False), (1, 22, 34, True), (1, 21, 34, False), (3, 32, 44, False), (-1, 49, 61, False),
])
def test_framed_is_a_magic_kafka_reads_a_size_within_bounds_and_all_of_it_there(magic, size, input_size, framed):
    assert framing.framed(0, magic, size, 1000, input_size) is framed
    assert (framing.frame_problem(0, magic, size, 1000, input_size) is None) is framed


def test_what_is_wrong_with_a_frame():
    assert framing.frame_problem(100, 7, 49, 1000, 10**6) == \
        Finding("unknown-magic", 100, 116, 1, "magic", "0, 1 or 2", "7")
    assert framing.frame_problem(100, 2, 48, 1000, 10**6) == \
        Finding("bad-length", 100, 108, 4, "batch_length", "49..1000 for magic 2", "48")
    assert framing.frame_problem(100, 0, 1001, 1000, 10**6) == \
        Finding("bad-length", 100, 108, 4, "message_size", "14..1000 for magic 0", "1001")
    assert framing.frame_problem(100, 1, 22, 1000, 133) == \
        Finding("truncated", 100, 100, 33, "entry", "34 bytes (size field 22)", "33 bytes, then the end of the input")
    assert framing.frame_problem(100, 1, 22, 1000, 134) is None


def test_a_negative_record_count_is_the_only_count_refused():
    # DefaultRecordBatch.RecordIterator: "Found invalid record count"; the count is 4 bytes at byte 57
    assert framing.records_count_problem(100, -1) == \
        Finding("records-count-mismatch", 100, 157, 4, "records_count", "a count >= 0", "-1")
    assert framing.records_count_problem(100, 0) is None and framing.records_count_problem(100, 2**31 - 1) is None


def test_the_stored_crc_of_each_magic():
    batch = bytes(17) + b"\x12\x34\x56\x78" + bytes(40)   # a v2 batch's CRC: 4 bytes at byte 17
    message = bytes(12) + b"\x9a\xbc\xde\xf0" + bytes(10)   # a v0/v1 message's: 4 bytes at byte 12
    assert framing.CHECKSUMS[2].stored(batch) == 0x12345678
    assert framing.CHECKSUMS[2].stored(b"\x00\x00" + batch, 2) == 0x12345678
    assert framing.CHECKSUMS[0].stored(message) == framing.CHECKSUMS[1].stored(message) == 0x9ABCDEF0
    assert framing.CHECKSUMS[2].compute(batch) == framing.CHECKSUMS[2].function(batch[21:])
