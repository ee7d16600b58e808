"""Exact values of kbatch.reading's small rules, one function at a time: the offsets a damaged entry lost
(lost.py), what a pass adds up to (summary.py), how a doubted end marker is read and worded (markers.py),
which framing KRaft refuses (kraft.py), which bytes the read-ahead holds (readahead.py), a batch's offsets
against its segment's name (invariants.py), records read a chunk at a time (records.py) and a metadata batch held
to KRaft's framing (internal.py).

Every expected value is written out here, not taken from a run: a mistake in a bound, a word or a sum
changes one of them.
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zlib
from collections import Counter

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kbatch.format.findings import Finding
from kbatch.format.structs import IGNORE_MESSAGE_ATTRIBUTES_MASK
from kbatch.reading import readahead
from kbatch.reading.internal import decode_batch
from kbatch.reading.invariants import OffsetOrder, batch_invariants, outlier_finding, segment_range_checks
from kbatch.reading.kraft import SnapshotRules, _last_byte, record_refusal
from kbatch.reading.lost import LostOffsets, entry_lost_offsets, range_lost_offsets, wrapper_not_opened
from kbatch.reading.markers import EndMarker, describe, end_marker
from kbatch.reading.model import Batch, ControlMarker, Record
from kbatch.reading.reader import ReadOptions, SegmentReader, _position_in, parse_hex
from kbatch.reading.records import (RecordError, RecordStream, chunk_records, decode_control, decode_record,
                                    record_chunks)
from kbatch.reading.summary import FileSummary
from kbatch.reading.v3 import _decode_records

from kbatch.walk.engine import entries

from .handmade import batch, end_marker as handmade_end_marker, record as handmade_record


def _entry(magic=2, codec="none", base=10, last=14, offset_field=None, crc=7, computed=7, count=5, size=100,
           records=None, pos=40, findings=()):
    return Batch(pos, size, magic, size - 12, base if offset_field is None else offset_field, base, last, count, 0,
                 codec, crc, computed, "CreateTime", 0, 0, records=records, findings=list(findings))


# -- lost.py ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("first, last, span", [
    (5, 9, "5–9"), (5, 5, "5"), (6, 5, "none"), (None, 9, "?–9"), (5, None, "5–?"), (None, None, "?–?"),
])
def test_a_span_is_written_from_its_bounds(first, last, span):
    lost = LostOffsets(first, last, "why")
    assert lost.span() == span
    assert lost.text() == f"{span} (why)"
    assert lost.none is (span == "none")


@pytest.mark.parametrize("magic, codec, records, unopened", [
    (0, "gzip", None, True), (1, "snappy", [], True), (1, "gzip", ["inner"], False), (1, "none", None, False),
    (2, "gzip", None, False),
])
def test_only_a_v0_v1_compressed_wrapper_without_records_is_not_opened(magic, codec, records, unopened):
    assert wrapper_not_opened(_entry(magic=magic, codec=codec, records=records)) is unopened


def test_an_unopened_wrappers_offsets_run_from_after_the_entry_before_to_its_own_offset():
    wrapper = _entry(magic=1, codec="gzip", offset_field=20)
    assert entry_lost_offsets(wrapper, 15) == LostOffsets(
        16, 20, "after the entry before, which ends at 15, up to the wrapper's own offset, its last inner record's")
    assert entry_lost_offsets(wrapper, 19) == LostOffsets(
        20, 20, "after the entry before, which ends at 19, up to the wrapper's own offset, its last inner record's")
    assert entry_lost_offsets(wrapper, None) == LostOffsets(
        None, 20, "up to the wrapper's own offset, its last inner record's; no entry before it tells where they start")


def test_an_unopened_wrapper_not_above_the_entry_before_is_bounded_by_its_neighbours():
    wrapper = _entry(magic=0, codec="gzip", offset_field=20)
    assert entry_lost_offsets(wrapper, 20, 30) == LostOffsets(
        21, 29, "the wrapper's own offset 20 is not above the entry before's: after the entry before, which ends "
                "at 20, and before the entry after, which starts at 30")
    assert entry_lost_offsets(wrapper, 25) == LostOffsets(
        26, None, "the wrapper's own offset 20 is not above the entry before's: after the entry before, which "
                  "ends at 25")


UNVERIFIED = "its header, unverified: its CRC fails"


def _contradicted(says: str, around: str) -> str:
    return f"its header says {says}, unverified (its CRC fails) and not between the entries around it: {around}"


@pytest.mark.parametrize("base, last, before, after, lost", [
    (10, 14, 9, 15, LostOffsets(10, 14, UNVERIFIED)),          # between its neighbours: believed
    (10, 10, 9, 11, LostOffsets(10, 10, UNVERIFIED)),          # one offset, between them: believed
    (10, 14, None, None, LostOffsets(10, 14, UNVERIFIED)),     # nothing to hold it to
    (10, 70000, 9, None, LostOffsets(10, 70000, UNVERIFIED)),  # no entry after to contradict it
    (10, 14, 10, 20, LostOffsets(11, 19, _contradicted(
        "10–14", "after the entry before, which ends at 10, and before the entry after, which starts at 20"))),
    (10, 14, 5, 14, LostOffsets(6, 13, _contradicted(
        "10–14", "after the entry before, which ends at 5, and before the entry after, which starts at 14"))),
    (10, 9, None, None, LostOffsets(None, None, _contradicted("10–9", "no intact entry on either side"))),
])
def test_a_damaged_header_is_believed_only_between_its_neighbours(base, last, before, after, lost):
    assert entry_lost_offsets(_entry(magic=2, codec="none", computed=8, base=base, last=last), before, after) == lost


@pytest.mark.parametrize("key, value, marker, problem", [
    (None, None, None, ("a key of version int16 + type int16", "null key bytes")),
    (b"\x00\x00\x00", None, None, ("a key of version int16 + type int16", "3 key bytes")),
    (b"\x00\x00\x00\x00", None, ControlMarker(0, 0, "ABORT"),
     ("a value of version int16 + coordinatorEpoch int32", "null value bytes")),
    (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x07", ControlMarker(0, 1, "COMMIT"),
     ("a value of version int16 + coordinatorEpoch int32", "5 value bytes")),
    (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07", ControlMarker(0, 1, "COMMIT", 0, 7), None),
    (b"\x00\x01\x00\x00", b"\x00\x02\x00\x00\x00\x07\xff", ControlMarker(1, 0, "ABORT", 2, 7), None),
    (b"\xff\xff\x00\x01", None, ControlMarker(-1, 1, "COMMIT"),
     ("a key version >= 0", "-1 (Kafka: invalid version, data corruption)")),
    (b"\x00\x00\x00\x01", b"\xff\xfe\x00\x00\x00\x07", ControlMarker(0, 1, "COMMIT", -2, 7),
     ("an end transaction marker value version >= 0", "-2 (Kafka: invalid version, data corruption)")),
    (b"\x00\x00\x00\x63", None, ControlMarker(0, 99, "UNKNOWN(99)"), None),
], ids=["null-key", "short-key", "abort-null-value", "commit-short-value", "commit", "newer-versions",
        "negative-key-version", "negative-value-version", "unknown-type"])
def test_a_control_records_key_and_value_are_read_as_kafka_reads_them(key, value, marker, problem):
    """ControlRecordType.parse and EndTransactionMarker.deserializeValue on literal bytes."""
    assert decode_control(key, value) == (marker, problem)


@pytest.mark.parametrize("magic, codec, computed, how", [
    (2, "none", 7, "its header"), (2, "zstd", 8, "its header, unverified: its CRC fails"),
    (1, "gzip", 7, "its inner records"), (0, "none", 7, "its offset field"),
    (1, "none", 9, "its offset field, unverified: its CRC fails"),
])
def test_an_entry_that_reads_says_its_own_offsets_and_what_told_them(magic, codec, computed, how):
    records = ["inner"] if codec != "none" and magic < 2 else None
    entry = _entry(magic=magic, codec=codec, computed=computed, records=records, base=10, last=14)
    assert entry_lost_offsets(entry, 3, 99) == LostOffsets(10, 14, how)


def test_a_range_lies_between_the_entries_around_it():
    assert range_lost_offsets(4, 9) == LostOffsets(
        5, 8, "after the entry before, which ends at 4, and before the entry after, which starts at 9")
    assert range_lost_offsets(None, 9) == LostOffsets(None, 8, "before the entry after, which starts at 9")
    assert range_lost_offsets(4, None) == LostOffsets(5, None, "after the entry before, which ends at 4")
    assert range_lost_offsets(None, None) == LostOffsets(None, None, "no intact entry on either side")
    assert range_lost_offsets(None, None, "cut") == LostOffsets(None, None, "cut: no intact entry on either side")
    assert range_lost_offsets(4, 5).span() == "none"


# -- summary.py ---------------------------------------------------------------------------------------------


def _finding(code, pos=0):
    return Finding(code, 0, pos, 1, "f", "e", "a")


def test_a_summary_counts_batches_records_bytes_and_damage():
    summary = FileSummary("seg.log", 500)
    summary.add_batch(_entry(count=5, size=100, findings=[_finding("crc-mismatch"), _finding("zero-tail")]))
    summary.add_batch(_entry(count=-3, size=61))      # a negative recordsCount adds no record
    summary.add_batch(_entry(count=None, size=7))
    assert (summary.batches, summary.records, summary.batch_bytes, summary.errors) == (3, 5, 168, 1)
    assert summary.findings == Counter({"crc-mismatch": 1, "zero-tail": 1})
    assert summary.damaged is True
    assert summary.size_now is None
    assert summary.as_dict() == {"file": "seg.log", "size": 500, "batch_count": 3, "record_count": 5,
                                 "batch_bytes": 168, "findings": {"crc-mismatch": 1, "zero-tail": 1}, "errors": 1,
                                 "damaged": True}


def test_a_summary_without_damage_is_not_damaged_and_a_cut_file_says_where_it_ended():
    summary = FileSummary("seg.log", 500)
    summary.add_finding(_finding("zero-tail"))
    assert (summary.errors, summary.damaged) == (0, False)
    summary.add_finding(_finding("truncated-while-reading", pos=321))
    assert summary.size_now == 321
    assert summary.as_dict()["size_changed"] == {"opened": 500, "ended_at": 321}
    assert summary.as_dict()["damaged"] is True


def test_summaries_of_two_parts_add_up_and_the_first_cut_stands():
    whole = FileSummary("seg.log", 500, batches=1, records=2, batch_bytes=30, findings=Counter(a=1), errors=1)
    part = FileSummary("seg.log", 500, batches=4, records=5, batch_bytes=60, findings=Counter(a=2, b=1), errors=2,
                       size_now=400)
    whole.add_summary(part)
    assert (whole.batches, whole.records, whole.batch_bytes, whole.errors, whole.size_now) == (5, 7, 90, 3, 400)
    assert whole.findings == Counter(a=3, b=1)
    whole.add_summary(FileSummary("seg.log", 500, size_now=300))
    assert whole.size_now == 400
    whole.add_summary(FileSummary("seg.log", 500))
    assert whole.size_now == 400


# -- markers.py ---------------------------------------------------------------------------------------------


def _control(kind, type_id=0, epoch=5, value_version=0):
    return Record(13, 0, b"", b"", [], 0, 1, control=ControlMarker(0, type_id, kind, value_version, epoch))


def _marker_batch(records, crc=11, computed=11):
    return _entry(base=13, last=13, crc=crc, computed=computed, records=records, pos=200)


def test_an_empty_control_batch_with_its_crc_holding_ends_nothing():
    assert end_marker(_marker_batch([])) is None
    doubted = end_marker(_marker_batch([], crc=1, computed=2))
    assert doubted == EndMarker(None, "its CRC fails (stored 1, computed 2): a broker's recovery drops it")


def test_a_believed_marker_says_its_type():
    commit = end_marker(_marker_batch([_control("COMMIT", 1)]))
    assert commit == EndMarker(ControlMarker(0, 1, "COMMIT", 0, 5))
    assert (commit.trusted, commit.outcome, commit.if_believed) == (True, "COMMIT", "COMMIT")


@pytest.mark.parametrize("records, crc, doubt, if_believed", [
    ([_control("ABORT")], 3, "its CRC fails (stored 3, computed 11): a broker's recovery drops it", "ABORT"),
    (None, 11, "its control record does not read", None),
    ([Record(13, 0, b"", b"", [], 0, 1)], 11, "its control record does not read", None),
    ([_control("UNKNOWN(5)", 5)], 11, "an UNKNOWN(5) control record is no end transaction marker (a broker's "
                                      "EndTransactionMarker.deserialize throws on it)", None),
    ([_control("LEADER_CHANGE", 2)], 11, "a LEADER_CHANGE control record is no end transaction marker (a "
                                         "broker's EndTransactionMarker.deserialize throws on it)", None),
    ([_control("COMMIT", 1, epoch=None)], 11, "its COMMIT value does not read", "COMMIT"),
    ([_control("ABORT", 0, value_version=-1)], 11, "its ABORT value does not read", "ABORT"),
])
def test_a_doubted_marker_says_why_and_what_it_would_say(records, crc, doubt, if_believed):
    marker = end_marker(_marker_batch(records, crc=crc))
    assert marker.doubt == doubt
    assert (marker.trusted, marker.outcome, marker.if_believed) == (False, "UNKNOWN", if_believed)


def test_a_marker_of_value_version_zero_or_none_with_an_epoch_is_believed():
    assert end_marker(_marker_batch([_control("ABORT", 0, value_version=None)])).trusted is True
    assert end_marker(_marker_batch([_control("ABORT", 0, value_version=0)])).trusted is True


def test_a_doubted_marker_is_described_with_its_place_and_what_it_would_say():
    batch = _marker_batch([_control("COMMIT", 1)], crc=3)
    assert describe(end_marker(batch), batch) == (
        "the marker at offset 13 (pos 200) is not believed: its CRC fails (stored 3, computed 11): a broker's "
        "recovery drops it; if believed, a COMMIT (coordinator epoch 5)")
    batch = _marker_batch([_control("ABORT")], crc=3)
    assert describe(end_marker(batch), batch).endswith("; if believed, an ABORT (coordinator epoch 5)")
    batch = _marker_batch(None)
    assert describe(end_marker(batch), batch) == (
        "the marker at offset 13 (pos 200) is not believed: its control record does not read; its records do "
        "not decode as its header describes them, so what it would say is not known")
    batch = _marker_batch([_control("LEADER_CHANGE", 2)])
    assert describe(end_marker(batch), batch).endswith("; its record reads LEADER_CHANGE, which ends no transaction")


# -- kraft.py -----------------------------------------------------------------------------------------------


def _kraft(key, value, *, control=False, kind="LEADER_CHANGE", timestamp=1000, headers=(), timestamp_type="CreateTime"):
    batch = _entry(records=None)
    batch.is_control, batch.base_timestamp, batch.timestamp_type = control, 1000, timestamp_type
    record = Record(0, timestamp, key, value, list(headers), 0, 1,
                    control=ControlMarker(0, 2, kind) if control and kind else None)
    return record_refusal(batch, record)


@pytest.mark.parametrize("headers, last", [
    ([], 0), ([(b"h", None)], 1), ([(b"h", b"")], 0), ([(b"h", b"\x7f")], 127), ([(b"h", b"\x80")], -128),
    ([(b"h", b"\x01"), (b"i", b"\xff")], -1),
])
def test_the_last_byte_kraft_takes_for_the_header_count(headers, last):
    assert _last_byte(headers) == last


def test_a_well_framed_kraft_record_is_not_refused():
    assert _kraft(None, b"\x01") is None
    assert _kraft(b"\x00\x00\x00\x02", b"\x00", control=True) is None
    assert _kraft(None, b"\x01", timestamp=5, timestamp_type="LogAppendTime") is None
    assert _kraft(None, b"\x01", timestamp=None) is None
    assert _kraft(None, b"\x01", headers=[(b"h", b"")]) is None


@pytest.mark.parametrize("kwargs, refusal", [
    (dict(key=None, value=b"\x01", timestamp=1003), ("timestampDelta", "0", "3", "Got timestamp delta of 3, but "
                                                     "this is invalid because it is not 0 as expected.")),
    (dict(key=None, value=b"\x01", timestamp=998), ("timestampDelta", "0", "-2", "Got timestamp delta of -2, but "
                                                    "this is invalid because it is not 0 as expected.")),
    (dict(key=b"ab", value=b"\x01"), ("key", "no key", "2 bytes", "Got key in the record when no key was expected")),
    (dict(key=b"", value=b"\x01"), ("key", "no key", "0 bytes", "Got key in the record when no key was expected")),
    (dict(key=None, value=None), ("value", "a metadata record", "null",
                                  "Missing value in the record when a value was expected")),
    (dict(key=None, value=b""), ("value", "a metadata record", "0 bytes",
                                 "Got an unexpected empty value in the record")),
    (dict(key=None, value=b"\x01", control=True), ("key", "a control record key", "null",
                                                   "Missing key in the record when a key was expected")),
    (dict(key=b"", value=b"\x01", control=True), ("key", "a control record key", "0 bytes",
                                                  "Got an unexpected empty key in the record")),
    (dict(key=b"k", value=None, control=True), ("value", "a control record value", "null",
                                                "Missing value in the record when a value was expected")),
    (dict(key=b"k", value=b"", control=True), ("value", "a control record value", "0 bytes",
                                               "Got an unexpected empty value in the record")),
    (dict(key=b"k", value=b"v", control=True, kind="COMMIT"), (
        "key.type", "a KRaft control type (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, "
        "KRAFT_VOTERS)", "COMMIT", "Unknown control record type COMMIT")),
    (dict(key=b"k", value=b"v", control=True, kind=None), (
        "key.type", "a KRaft control type (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, "
        "KRAFT_VOTERS)", "UNKNOWN", "Unknown control record type UNKNOWN")),
    (dict(key=None, value=b"\x01", headers=[(b"h", b"x"), (b"i", None)]), (
        "headers", "no headers (the record's last byte 0)", "2 headers, last byte 1",
        "Got numHeaders of 1, but this is invalid because it is not 0 as expected.")),
])
def test_a_kraft_record_framed_otherwise_is_refused_with_kafkas_words(kwargs, refusal):
    assert _kraft(**kwargs) == refusal


# -- readahead.py -------------------------------------------------------------------------------------------


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 64 bytes with 16 in front: a file of a few hundred bytes crosses several."""
    monkeypatch.setattr(readahead, "CHUNK", 64)
    monkeypatch.setattr(readahead, "RESERVE", 16)
    monkeypatch.setattr(readahead, "_kept", [])


def _file(tmp_path, size):
    path = tmp_path / "seg.log"
    path.write_bytes(bytes(range(256)) * (size // 256) + bytes(range(size % 256)))
    return path


def test_read_ahead_gives_the_chunk_that_holds_the_bytes_and_carries_a_cut_entrys_start(tmp_path, small_chunks):
    path = _file(tmp_path, 200)   # chunks 0-63, 64-127, 128-191, 192-199
    with open(path, "rb") as stream:
        ahead = readahead.ReadAhead(stream.fileno(), 200)
        try:
            assert bytes(ahead.bytes_at(0, 10)) == bytes(range(64))          # to the end of its chunk
            assert bytes(ahead.bytes_at(60, 4)) == bytes(range(60, 64))
            assert bytes(ahead.bytes_at(60, 10)) == bytes(range(60, 128))    # 4 carried in front of the next
            assert (ahead.start, ahead.end, ahead.first) == (60, 128, 12)
            assert ahead.bytes_at(10, 1) is None                             # behind it: the window reads
            assert bytes(ahead.bytes_at(100, 28)) == bytes(range(100, 128))
            assert ahead.bytes_at(100, 40) is None                           # more than RESERVE carried
            assert bytes(ahead.bytes_at(112, 20)) == bytes(range(112, 192))  # RESERVE carried: still whole
            assert (ahead.start, ahead.end, ahead.first) == (112, 192, 0)
            assert ahead.ended is False
            assert bytes(ahead.bytes_at(190, 5)) == bytes(range(190, 200))
            assert ahead.ended is True                                       # the file's last chunk
            assert ahead.bytes_at(199, 2) is None
        finally:
            ahead.close()


def test_read_ahead_of_a_file_ending_on_a_chunk_ends_there(tmp_path, small_chunks):
    path = _file(tmp_path, 128)
    with open(path, "rb") as stream:
        ahead = readahead.ReadAhead(stream.fileno(), 128)
        try:
            assert bytes(ahead.bytes_at(0, 64)) == bytes(range(64))
            assert ahead.ended is False
            assert bytes(ahead.bytes_at(64, 64)) == bytes(range(64, 128))
            assert ahead.ended is True
        finally:
            ahead.close()
        assert len(readahead._kept) == readahead.BUFFERS_AHEAD


def test_read_ahead_is_only_made_for_a_regular_file_large_enough(tmp_path, monkeypatch):
    import io
    path = _file(tmp_path, 10)
    with open(path, "rb") as stream:
        assert readahead.read_ahead_of(stream, readahead.MIN_SIZE - 1) is None
        assert readahead.read_ahead_of(io.BytesIO(b"x"), readahead.MIN_SIZE) is None
        ahead = readahead.read_ahead_of(stream, readahead.MIN_SIZE)
        assert isinstance(ahead, readahead.ReadAhead)
        ahead.close()
    assert readahead.MIN_SIZE == 16 * 1024 * 1024 and readahead.RESERVE == 256 * 1024


# -- invariants.py: the offsets against the segment's file name ---------------------------------------------


def test_a_batch_below_its_segments_base_offset_is_named_with_its_offset_field():
    assert segment_range_checks(_entry(magic=2, base=99, last=105, pos=64), 100) == [Finding(
        "below-segment-base", 64, 64, 8, "base_offset", "100 or more (the base offset in the segment's file name)",
        "99")]
    assert segment_range_checks(_entry(magic=1, base=90, last=99, offset_field=99, pos=0), 100) == [Finding(
        "below-segment-base", 0, 0, 8, "offset", "100 or more (the base offset in the segment's file name)", "99")]
    assert segment_range_checks(_entry(magic=2, base=100, last=105), 100) == []


def test_a_batch_past_the_relative_offsets_range_is_named_with_its_last_offset():
    assert segment_range_checks(_entry(magic=2, base=100, last=100 + 2**31 - 1), 100) == []
    assert segment_range_checks(_entry(magic=0, base=100 + 2**31, last=100 + 2**31, pos=12), 100) == [Finding(
        "beyond-segment-range", 12, 12, 8, "offset",
        "a last offset at most 2147483747 (the file name's base + 2^31-1)", "2147483748")]


# -- records.py: records walked without objects, a chunk at a time ------------------------------------------


def _walked_without_objects(data):
    return list(SegmentReader(io.BytesIO(data), ReadOptions(records=True, record_objects=False)))


def test_records_walked_without_objects_read_back_whole_however_they_are_chunked():
    data = batch(0, [(b"a", b"1")]) + batch(100, [(None, b"xy"), (b"k", None), (b"kk", b"vv")], timestamp=5)
    first, second = _walked_without_objects(data)
    assert first.records is None and second.records is None
    # chunks of 2: the columns walked with the batch are of another size, so the bytes are walked again
    chunks = [[(r.offset, r.key, r.pos) for r in chunk_records(columns, second)]
              for columns in record_chunks(second, chunk=2)]
    assert chunks == [[(100, None, 131), (101, b"k", 140)], [(102, b"kk", 148)]]
    assert [(r.offset, r.timestamp, r.key, r.value, r.pos, r.size) for r in RecordStream(second)] == [
        (100, 5, None, b"xy", 131, 9), (101, 5, b"k", None, 140, 8), (102, 5, b"kk", b"vv", 148, 11)]
    assert (len(RecordStream(second)), bool(RecordStream(second))) == (3, True)
    assert [(r.offset, r.key) for columns in record_chunks(second, chunk=2)
            for r in chunk_records(columns, second, [1])] == [(101, b"k")]
    assert [(r.offset, r.timestamp, r.key, r.pos) for r in RecordStream(first)] == [(0, 1_700_000_000_000, b"a", 61)]


def test_a_compressed_batchs_records_walked_without_objects_lie_in_its_decompressed_bytes():
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=DefaultRecordBatchBuilder.CODEC_GZIP,
                                        is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 20)
    builder.append(0, timestamp=7, key=b"a", value=b"1" * 40, headers=[])
    builder.append(1, timestamp=9, key=None, value=b"2" * 40, headers=[("h", b"x")])
    (walked,) = _walked_without_objects(bytes(builder.build()))
    assert walked.codec == "gzip"
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers, r.pos, r.size) for r in RecordStream(walked)] == [
        (0, 7, b"a", b"1" * 40, [], 0, 48), (1, 9, None, b"2" * 40, [(b"h", b"x")], 48, 51)]
    assert [(r.offset, r.pos) for columns in record_chunks(walked, chunk=1)
            for r in chunk_records(columns, walked)] == [(0, 0), (1, 48)]


def test_a_stream_of_no_records_is_false():
    (empty,) = _walked_without_objects(batch(7, []))
    assert (len(RecordStream(empty)), bool(RecordStream(empty)), list(RecordStream(empty))) == (0, False, [])


# -- internal.py: KRaft's framing rules applied to a __cluster_metadata batch -------------------------------


def _metadata_batch(records, control):
    batch = _entry(records=records, pos=40)
    batch.is_control, batch.base_timestamp = control, 0
    return batch


def test_a_metadata_control_record_framed_otherwise_is_reported_where_it_lies():
    good = Record(0, 0, b"\x00\x00\x00\x02", b"\x00", [], 101, 20, control=ControlMarker(0, 2, "LEADER_CHANGE"))
    empty_key = Record(1, 0, b"", b"\x00", [], 121, 12, control=ControlMarker(0, 2, "LEADER_CHANGE"))
    empty_value = Record(2, 0, b"\x00\x00\x00\x02", b"", [], 133, 14, control=ControlMarker(0, 2, "LEADER_CHANGE"))
    batch = _metadata_batch([good, empty_key, empty_value], control=True)
    decode_batch(batch, "metadata")
    assert batch.findings == [
        Finding("bad-kraft-record", 40, 121, 12, "records[1].key", "a control record key",
                "0 bytes (Got an unexpected empty key in the record)"),
        Finding("bad-kraft-record", 40, 133, 14, "records[2].value", "a control record value",
                "0 bytes (Got an unexpected empty value in the record)")]


def test_a_metadata_data_records_missing_value_is_left_to_the_decoder_and_a_key_is_refused():
    keyed = Record(0, 0, b"k", b"\x01\x02\x00\x00", [], 101, 20)
    no_value = Record(1, 0, None, None, [], 121, 12)
    batch = _metadata_batch([keyed, no_value], control=False)
    decode_batch(batch, "metadata")
    kraft = [finding for finding in batch.findings if finding.code == "bad-kraft-record"]
    assert kraft == [Finding("bad-kraft-record", 40, 101, 20, "records[0].key", "no key",
                             "1 bytes (Got key in the record when no key was expected)")]
    assert any(finding.field.startswith("records[1].") for finding in batch.findings)


def test_only_the_metadata_decoder_holds_records_to_kraft_framing():
    batch = _metadata_batch([Record(0, 0, b"", b"", [], 101, 12, control=ControlMarker(0, 2, "COMMIT"))], True)
    decode_batch(batch, "offsets")
    decode_batch(batch, None)
    assert batch.findings == []


# -- invariants.py: v0/v1 entries and the order across batches ------------------------------------------------


def _message(offset, timestamp, pos):
    return Record(offset, timestamp, None, b"v", [], pos, 34, magic=1)


@pytest.mark.parametrize("magic, attributes, allowed", [(0, 0x08, "0x07"), (1, 0x41, "0x0f"), (1, 0x80, "0x0f")])
def test_a_legacy_entrys_undefined_attribute_bits_are_reserved_bits_at_its_attributes_byte(magic, attributes,
                                                                                            allowed):
    entry = _entry(magic=magic, pos=40)
    entry.attributes = attributes
    # the attributes byte follows offset (8), size (4), crc (4) and magic (1)
    assert batch_invariants(entry) == [Finding("reserved-bits", 40, 57, 1, "attributes", f"only bits {allowed}",
                                               f"0x{attributes:02x}")]


@pytest.mark.parametrize("magic", [0, 1])
def test_a_legacy_entrys_defined_attribute_bits_are_no_finding(magic):
    entry = _entry(magic=magic, codec="gzip", pos=40)
    entry.attributes = 0x0F if magic == 1 else 0x07
    assert batch_invariants(entry) == []


def test_a_wrappers_inner_offsets_must_go_up_and_are_told_inside_its_value():
    inner = [_message(3, 100, 0), _message(5, 100, 34), _message(5, 100, 68), _message(4, 100, 102)]
    wrapper = _entry(magic=1, codec="gzip", base=3, last=5, records=inner, pos=40)
    wrapper.base_timestamp = wrapper.max_timestamp = 100
    wrapper.payload_pos, wrapper.payload_size = 74, 66
    assert batch_invariants(wrapper) == [
        Finding("offset-delta-order", 40, 74, 66, "records[2].offset", "more than 5", "5", inner_pos=68),
        Finding("offset-delta-order", 40, 74, 66, "records[3].offset", "more than 5", "4", inner_pos=102),
    ]


def test_an_uncompressed_entrys_single_message_is_not_held_to_inner_order():
    entry = _entry(magic=1, codec="none", base=3, last=3, records=[_message(3, 100, 40), _message(2, 100, 40)])
    assert batch_invariants(entry) == []


@pytest.mark.parametrize("timestamp_type, magic, found", [
    ("CreateTime", 1, [Finding("max-timestamp-mismatch", 40, 58, 8, "timestamp", "300 (the largest inner timestamp)",
                               "250")]),
    ("LogAppendTime", 1, []),   # the broker's time replaces every inner one
    ("CreateTime", 0, []),      # magic 0 has no timestamps
])
def test_a_v1_wrappers_timestamp_is_its_largest_inner_one(timestamp_type, magic, found):
    inner = [_message(3, 100, 0), _message(4, 300, 34), _message(5, 200, 68)]
    wrapper = _entry(magic=magic, codec="gzip", base=3, last=5, records=inner, pos=40)
    wrapper.timestamp_type, wrapper.max_timestamp = timestamp_type, 250
    assert batch_invariants(wrapper) == found


def test_a_gap_is_held_for_its_batch_and_handed_on_with_the_order():
    order = OffsetOrder()
    assert order.check(_entry(base=0, last=4, pos=0)) == []
    jumper = _entry(base=10, last=14, pos=100)
    assert order.check(jumper) == []
    assert order.holds_gap_of(jumper)
    assert not order.holds_gap_of(_entry(base=10, last=14, pos=0))
    later = OffsetOrder()
    assert not later.holds_gap_of(jumper)
    later.continue_from(order)
    assert (later.last_offset, later.last_pos, later.last_base, later.damage) == (14, 100, 10, None)
    assert later.holds_gap_of(jumper)
    assert later.end() == [Finding("offset-gap", 100, 100, 8, "base_offset", "5", "10 (5 offsets absent)")]
    assert later.end() == []


def test_a_damaged_range_is_handed_on_with_the_order():
    order = OffsetOrder()
    order.check(_entry(base=0, last=4, pos=0))
    order.damaged_range(Finding("resync", 100, 100, 40, "entry", "a valid log entry", "40 bytes"))
    later = OffsetOrder()
    later.continue_from(order)
    assert later.damage == (100, 40)
    assert later.check(_entry(base=9, last=9, pos=140)) == []
    assert later.end() == [Finding("offset-gap", 140, 140, 8, "base_offset", "5",
                                   "9 (offsets 5..8 fall in the damaged range at pos 100 (40 bytes))")]


# -- kraft.py: a snapshot's first and last batch ----------------------------------------------------------------


def _snapshot_batch(kinds, pos, control=True):
    records = [Record(0, 0, b"k", b"v", [], pos + 61 + 20 * index, 20,
                      control=ControlMarker(0, 0, kind, 0, None) if control else None)
               for index, kind in enumerate(kinds)]
    entry = _entry(base=0, last=len(kinds) - 1, records=records, pos=pos, size=61 + 20 * len(kinds))
    entry.is_control = control
    return entry


def test_a_snapshot_from_header_to_footer_keeps_kraft_s_rules():
    rules = SnapshotRules()
    assert rules.batch(_snapshot_batch(["SNAPSHOT_HEADER"], 0)) == []
    assert rules.batch(_snapshot_batch(["a", "b"], 81, control=False)) == []
    assert rules.batch(_snapshot_batch(["SNAPSHOT_FOOTER"], 182)) == []
    assert rules.end() == []


def test_a_snapshot_whose_first_batch_holds_data_is_refused_as_kafka_refuses_it():
    rules = SnapshotRules()
    assert rules.batch(_snapshot_batch(["a"], 0, control=False)) == [Finding(
        "bad-snapshot", 0, 0, 81, "batch", "a control batch with a SNAPSHOT_HEADER first",
        "a data batch (First batch is not a control batch with at least one record)")]
    assert rules.batch(_snapshot_batch(["a"], 81, control=False)) == []   # only the first batch is held to it


def test_a_snapshot_whose_first_control_record_is_no_header_is_refused_at_that_record():
    rules = SnapshotRules()
    assert rules.batch(_snapshot_batch(["LEADER_CHANGE", "SNAPSHOT_HEADER"], 0)) == [Finding(
        "bad-snapshot", 0, 61, 20, "records[0].key.type", "SNAPSHOT_HEADER",
        "LEADER_CHANGE (First control record is not a snapshot header (LEADER_CHANGE))")]


def test_an_empty_first_control_batch_is_no_snapshot_header():
    rules = SnapshotRules()
    assert [finding.code for finding in rules.batch(_snapshot_batch([], 0))] == ["bad-snapshot"]


@pytest.mark.parametrize("last", [["SNAPSHOT_HEADER"], ["SNAPSHOT_FOOTER", "SNAPSHOT_HEADER"]])
def test_a_snapshot_not_ending_on_a_footer_may_be_cut_short(last):
    rules = SnapshotRules()
    rules.batch(_snapshot_batch(["SNAPSHOT_HEADER"], 0))
    rules.batch(_snapshot_batch(last, 81))
    assert rules.end() == [Finding("snapshot-without-footer", 81, 81, 61 + 20 * len(last), "batch",
                                   "a SNAPSHOT_FOOTER control record last (RecordsSnapshotWriter.freeze)",
                                   "none: the snapshot may be cut short")]


def test_a_footer_in_a_data_batch_ends_no_snapshot_and_no_batch_at_all_is_no_finding():
    rules = SnapshotRules()
    assert rules.end() == []
    rules.batch(_snapshot_batch(["SNAPSHOT_HEADER"], 0))
    rules.batch(_snapshot_batch(["SNAPSHOT_FOOTER"], 81, control=False))
    assert [finding.code for finding in rules.end()] == ["snapshot-without-footer"]


# -- reader.py: pasted hex, and where the next intact entry starts ---------------------------------------------


def test_pasted_hex_reads_through_spaces_colons_commas_bars_dashes_and_0x():
    assert parse_hex(b"0x00 01:02,03|04-05\n\t0A0b") == bytes([0, 1, 2, 3, 4, 5, 10, 11])
    assert parse_hex(b"") == b""


@pytest.mark.parametrize("text, said", [
    (b"00 11\nzz", "not hex: 'z' on line 2"),
    (b"00\n11\n0x22 :33 g4", "not hex: 'g' on line 3"),
    (b"0x0g", "not hex: 'g' on line 1"),
    (b"001", r"not hex: an odd number of hex digits \(3\): half a byte at the end"),
])
def test_pasted_hex_that_is_not_says_what_and_on_which_line(text, said):
    with pytest.raises(ValueError, match=f"^{said}$"):
        parse_hex(text)


def _two_batches_after(garbage: bytes):
    first, second = batch(0, [(None, b"a")]), batch(1, [(None, b"bc")])
    data = garbage + first + b"\x00" * 7 + second
    return SegmentReader(io.BytesIO(data)), len(garbage), len(garbage) + len(first) + 7


def test_the_next_intact_entry_is_where_a_crc_verifies():
    reader, first, second = _two_batches_after(b"\x01" * 13)
    assert reader.next_entry_at_or_after(first) == first
    assert reader.next_entry_at_or_after(0) == first
    assert reader.next_entry_at_or_after(first + 1) == second
    assert reader.next_entry_at_or_after(second + 1) is None


@pytest.mark.parametrize("step", [1, 5, 64 * 1024])
def test_an_intact_entry_is_looked_for_only_within_the_bounds_given(step):
    reader, first, second = _two_batches_after(b"\x01" * 13)
    assert reader.verified_entry_within(0, second + 1, 1000, step) == first
    assert reader.verified_entry_within(first + 1, second + 1, 1000, step) == second
    assert reader.verified_entry_within(first + 1, second, 1000, step) is None     # stop excludes its own position
    assert reader.verified_entry_within(first, second + 1, 10, step) is None       # no entry that small


# -- v2.py: the generated header reader is rewritten only when it changed ---------------------------------------


def test_batch_fields_is_rewritten_only_when_its_declaration_changed(tmp_path, monkeypatch):
    from kbatch.reading import v2

    written = tmp_path / "_batch_fields.py"
    written.write_text("stale\n")
    monkeypatch.setattr(v2, "BATCH_FIELDS_PATH", written)
    assert v2.write_batch_fields() is True
    assert written.read_text() == v2.batch_fields_module()
    assert v2.write_batch_fields() is False
    assert written.read_text() == v2.batch_fields_module()


# -- v3.py: the proposal's records, each held to its length -----------------------------------------------------


def _v3_batch(count, *, codec="none", control=False, ignore_attributes=False, base_sequence=-1,
              timestamp_type="CreateTime"):
    entry = _entry(magic=3, codec=codec, base=100, last=100 + count - 1, count=count, pos=1000)
    entry.attributes = IGNORE_MESSAGE_ATTRIBUTES_MASK if ignore_attributes else 0
    entry.payload_pos, entry.payload_size = 1040, 70
    entry.base_timestamp, entry.max_timestamp, entry.timestamp_type = 5000, 5009, timestamp_type
    entry.base_sequence, entry.is_control = base_sequence, control
    return entry


def test_v3_records_are_read_at_their_offsets_times_places_and_sequences():
    first, second = handmade_record(0, b"k", b"v", timestamp_delta=3), handmade_record(1, None, b"ww", 9)
    entry = _v3_batch(2, base_sequence=7)
    assert _decode_records(entry, first + second, entry.count) == []
    assert entry.records == [Record(100, 5003, b"k", b"v", [], 1040, len(first), sequence=7),
                             Record(101, 5009, None, b"ww", [], 1040 + len(first), len(second), sequence=8)]


def test_v3_records_under_log_append_time_take_the_batchs_time_and_without_a_sequence_none():
    entry = _v3_batch(1, timestamp_type="LogAppendTime")
    assert _decode_records(entry, handmade_record(0, None, b"v", timestamp_delta=3), entry.count) == []
    assert (entry.records[0].timestamp, entry.records[0].sequence) == (5009, -1)


def test_v3_records_without_their_attributes_byte_when_the_batch_says_so():
    with_byte = handmade_record(0, b"k", b"v", timestamp_delta=2)
    body = with_byte[2:]   # (the length, one byte here, then the attributes byte)
    entry = _v3_batch(1, ignore_attributes=True)
    assert _decode_records(entry, bytes([len(body) * 2]) + body, entry.count) == []
    assert entry.records == [Record(100, 5002, b"k", b"v", [], 1040, 1 + len(body))]


def test_fewer_v3_records_than_counted_end_the_batch_early():
    one = handmade_record(0, None, b"v")
    entry = _v3_batch(3)
    assert _decode_records(entry, one, entry.count) == [Finding(
        "records-count-mismatch", 1000, 1040 + len(one), 0, "records_count", "3 records",
        "1 records, then the end of the batch")]
    assert len(entry.records) == 1


def test_bytes_after_the_counted_v3_records_are_trailing():
    one, two = handmade_record(0, None, b"v"), handmade_record(1, None, b"vv")
    entry = _v3_batch(1)
    assert _decode_records(entry, one + two, entry.count) == [Finding(
        "trailing-bytes", 1000, 1040 + len(one), len(two), "records[1:]", "1 records and nothing after them",
        f"{len(two)} more bytes")]


def test_a_v3_record_whose_length_is_not_what_its_fields_use():
    good = handmade_record(0, None, b"v")
    lying = bytes([(good[0] // 2 + 1) * 2]) + good[1:]   # one more than its fields use
    entry = _v3_batch(1)
    assert _decode_records(entry, lying, entry.count) == [Finding(
        "bad-record-length", 1000, 1040, len(good), "records[0].length", f"{len(good) - 1} bytes (what the fields use)",
        str(len(good)))]
    assert entry.records == []


def test_a_cut_v3_record_overruns_and_is_said_inside_a_compressed_batch():
    first, cut = handmade_record(0, None, b"v"), handmade_record(1, b"key", b"value")[:-4]
    entry = _v3_batch(2, codec="gzip")
    (found,) = _decode_records(entry, first + cut, entry.count)
    assert (found.code, found.entry_pos, found.pos, found.size, found.field, found.expected, found.inner_pos) == \
        ("record-overrun", 1000, 1040, 70, "records[1]", "a record that reads", len(first))
    assert found.actual
    assert entry.records == [Record(100, 5000, None, b"v", [], 0, len(first))]   # (inside the decompressed bytes)


def test_a_v3_control_batchs_records_are_markers_and_a_bad_one_is_said():
    key, value = handmade_end_marker("COMMIT", 4)
    good, bad = handmade_record(0, key, value), handmade_record(1, b"\x00", value)
    entry = _v3_batch(2, control=True)
    assert _decode_records(entry, good + bad, entry.count) == [Finding(
        "bad-control-record", 1000, 1040 + len(good), len(bad), "records[1]", "a key of version int16 + type int16",
        "1 key bytes")]
    assert entry.records[0].control == ControlMarker(0, 1, "COMMIT", 0, 4)
    assert entry.records[1].control is None


# -- what the first mutation run of reading/ left alive ---------------------------------------------------------


@pytest.mark.parametrize("text, digit, at", [(b"ab cd", 1, 1), (b"ab cd", 2, 3), (b"ab cd", 3, 4),
                                             (b"0x00 11\n zz", 4, 9), (b" \n\n1", 0, 3)])
def test_a_digits_place_in_pasted_text_counts_the_noise_before_it(text, digit, at):
    assert _position_in(text, digit) == at


def test_a_bad_hex_digits_line_counts_only_the_lines_before_it():
    with pytest.raises(ValueError, match="^not hex: 'z' on line 2$"):
        parse_hex(b"00\nzz\n11\n22")


def test_the_next_intact_entry_may_start_at_the_very_next_byte():
    reader, first, _ = _two_batches_after(b"\x01" * 13)
    assert reader.next_entry_at_or_after(first - 1) == first


def test_an_order_broken_at_the_second_record_is_said_there():
    inner = [_message(5, 100, 0), _message(4, 100, 34), _message(6, 100, 68)]
    wrapper = _entry(magic=1, codec="gzip", base=4, last=6, records=inner, pos=40)
    wrapper.base_timestamp = wrapper.max_timestamp = 100
    wrapper.payload_pos, wrapper.payload_size = 74, 66
    assert batch_invariants(wrapper) == [
        Finding("offset-delta-order", 40, 74, 66, "records[1].offset", "more than 5", "4", inner_pos=34)]


def test_a_snapshot_header_missing_is_said_at_the_first_records_own_bytes():
    entry = _snapshot_batch(["LEADER_CHANGE", "SNAPSHOT_HEADER"], 0)
    entry.records[1].size = 99
    (found,) = SnapshotRules().batch(entry)
    assert (found.pos, found.size) == (61, 20)


def test_buffers_of_the_chunk_size_are_taken_from_those_kept_first(small_chunks):
    right, wrong = bytearray(16 + 64), bytearray(8)
    readahead._kept[:] = [wrong, right]
    taken = readahead._new_buffers(2)
    assert len(taken) == 2 and taken[0] is right and len(taken[1]) == 16 + 64
    assert readahead._kept == [wrong] and readahead._kept[0] is wrong


def test_chunks_read_and_not_yet_taken_are_kept_for_the_next_file(tmp_path, small_chunks):
    path = _file(tmp_path, 192)   # exactly the three buffers' worth: the thread reads them all and ends
    with open(path, "rb") as stream:
        ahead = readahead.ReadAhead(stream.fileno(), 192)
        ahead.thread.join()
        ahead.close()
    assert len(readahead._kept) == readahead.BUFFERS_AHEAD


def test_a_chunk_still_viewed_is_not_kept_and_the_thread_gets_a_new_buffer_meanwhile(tmp_path, small_chunks):
    path = _file(tmp_path, 64 * 6)
    with open(path, "rb") as stream:
        ahead = readahead.ReadAhead(stream.fileno(), 64 * 6)
        try:   # every chunk held by a view: without new buffers the thread would wait for ever
            views = [ahead.bytes_at(64 * index, 64) for index in range(6)]
            assert [bytes(view) for view in views] == [bytes(range(64 * index % 256, 64 * index % 256 + 64))
                                                       for index in range(6)]
        finally:
            ahead.close()
    assert readahead._kept == []   # each one is still viewed
    del views


def test_a_file_shorter_than_said_ends_the_read_ahead_at_its_end(tmp_path, small_chunks):
    path = _file(tmp_path, 100)
    with open(path, "rb") as stream:
        ahead = readahead.ReadAhead(stream.fileno(), 300)   # (cut after it was measured)
        try:
            assert bytes(ahead.bytes_at(0, 64)) == bytes(range(64))
            assert bytes(ahead.bytes_at(64, 10)) == bytes(range(64, 100))
            assert ahead.ended is True
            assert ahead.bytes_at(100, 1) is None
        finally:
            ahead.close()


def test_a_read_that_fails_on_the_thread_is_raised_on_the_walks(tmp_path, small_chunks):
    descriptor = os.open(tmp_path, os.O_RDONLY)   # a directory: every read fails
    try:
        ahead = readahead.ReadAhead(descriptor, 128)
        with pytest.raises(IsADirectoryError):
            ahead.bytes_at(0, 1)
        assert ahead.ended is True
        assert ahead.bytes_at(0, 1) is None   # the window reads on itself
        ahead.close()
    finally:
        os.close(descriptor)


def test_the_generated_header_reader_reads_as_the_one_checked_in():
    """What batch_fields_module writes, run, gives what kbatch/reading/_batch_fields.py gives (its drift test
    holds the text to it; this holds the code, where the drift test cannot run)."""
    from kbatch.format.structs import BATCH_HEADER
    from kbatch.reading import v2
    from kbatch.reading._batch_fields import batch_fields

    generated: dict = {}
    exec(compile(v2.batch_fields_module(), "_batch_fields.py", "exec"), generated)   # noqa: S102 (a test)
    raw = batch(40, [(None, b"v"), (b"k", None)], producer_id=9, producer_epoch=2, base_sequence=5)
    at = BATCH_HEADER.names.index("attributes")
    for attributes in (0, 0x01, 0x13, 0x2c, 0x4b):
        header = BATCH_HEADER.unpack_from(raw)
        header = header[:at] + (attributes,) + header[at + 1:]
        assert generated["batch_fields"](7, len(raw), header, 1234) == batch_fields(7, len(raw), header, 1234)


def test_a_cut_v3_record_in_the_file_is_said_from_its_start_to_the_end_with_constructs_words():
    first, cut = handmade_record(0, None, b"v"), handmade_record(1, b"key", b"value")[:-4]
    entry = _v3_batch(2)
    assert _decode_records(entry, first + cut, entry.count) == [Finding(
        "record-overrun", 1000, 1040 + len(first), len(cut), "records[1]", "a record that reads",
        "stream read less than specified amount, expected 5, found 2")]


def test_a_second_v3_record_whose_length_lies_is_said_at_its_own_bytes():
    first, good = handmade_record(0, None, b"v"), handmade_record(1, None, b"vv")
    lying = bytes([(good[0] // 2 + 1) * 2]) + good[1:]
    entry = _v3_batch(2, base_sequence=0)
    assert _decode_records(entry, first + lying, entry.count) == [Finding(
        "bad-record-length", 1000, 1040 + len(first), len(good), "records[1].length",
        f"{len(good) - 1} bytes (what the fields use)", str(len(good)))]
    assert [record.sequence for record in entry.records] == [0]   # a base sequence of 0 counts from 0


# -- legacy.py: what a v0/v1 wrapper's value may fail with --------------------------------------------------


def _message_v1(offset, attributes, value, timestamp=1000):
    """A magic-1 message worked by hand (LegacyRecord): crc, magic, attributes, timestamp, null key, value."""
    body = struct.pack(">bbq", 1, attributes, timestamp) + b"\xff\xff\xff\xff" + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


# offset and size (12), crc, magic, attributes and timestamp (14), the key's and the value's lengths (8)
_V1_VALUE_AT = 34


def _read_one(data):
    (entry,) = entries(SegmentReader(io.BytesIO(data), ReadOptions(records=True)))
    return entry


def test_a_compressed_message_inside_a_compressed_message_set_is_nested_compression():
    plain = _message_v1(0, 0, b"a") + _message_v1(1, 0, b"b")
    data = _message_v1(1, 1, gzip.compress(_message_v1(1, 1, gzip.compress(plain, mtime=0)), mtime=0))
    wrapper = _read_one(data)
    assert wrapper.findings == [Finding("nested-compression", 0, _V1_VALUE_AT, len(data) - _V1_VALUE_AT,
                                        "inner[0].attributes", "an uncompressed inner message",
                                        "gzip inside a compressed message set", _V1_VALUE_AT)]
    assert (wrapper.count, wrapper.records) == (1, [])


def _message_v0(offset: int, value: bytes) -> bytes:
    body = struct.pack(">bb", 0, 0) + b"\xff\xff\xff\xff" + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


# A v1 gzip wrapper of three v0 messages of 27 bytes each (12 + crc 4, magic, attributes, key -1, value 4 + 1):
# its value, 60 bytes of gzip, from byte 34; the inner messages at 0, 27 and 54 of the inflated bytes.
_MISMATCHED = _message_v1(2, 1, gzip.compress(_message_v0(0, b"a") + _message_v0(1, b"b") + _message_v0(2, b"c"),
                                              mtime=0))


def test_an_inner_message_of_another_magic_is_said_where_it_lies_inside_the_wrapper():
    assert _read_one(_MISMATCHED).findings == [
        Finding("inner-magic-mismatch", 0, _V1_VALUE_AT, 60, f"inner[{index}].magic", "1", "0", inner_pos)
        for index, inner_pos in enumerate([0, 27, 54])]


def test_a_wrapper_past_what_is_held_keeps_the_first_findings_and_records_and_says_how_many(monkeypatch):
    from kbatch.reading import legacy

    monkeypatch.setattr(legacy, "MAX_HELD", 2)
    wrapper = _read_one(_MISMATCHED)
    assert wrapper.findings == [
        Finding("inner-magic-mismatch", 0, _V1_VALUE_AT, 60, "inner[0].magic", "1", "0", 0),
        Finding("inner-magic-mismatch", 0, _V1_VALUE_AT, 60, "inner[1].magic", "1", "0", 27),
        Finding("not-all-kept", 0, _V1_VALUE_AT, 60, "inner", "at most 2 findings kept per wrapper",
                "3 findings; the rest are counted, not listed"),
        Finding("not-all-kept", 0, _V1_VALUE_AT, 60, "inner", "at most 2 records kept per wrapper",
                "3 inner messages; records after the first 2 are checked, not kept")]
    assert wrapper.count == 3 and len(wrapper.records) == 2


def test_an_empty_wrapper_is_said_at_its_value():
    data = _message_v1(2, 1, gzip.compress(b"", mtime=0))
    assert _read_one(data).findings == [Finding("empty-wrapper", 0, _V1_VALUE_AT, 20, "value",
                                                "at least one message in the gzip message set",
                                                "0 decompressed bytes holding none")]


def test_a_wrappers_value_that_does_not_decompress_is_said_at_the_value_and_counts_nothing():
    data = _message_v1(1, 1, b"not gzip at all")
    wrapper = _read_one(data)
    assert wrapper.findings == [Finding("decompress-failed", 0, _V1_VALUE_AT, 15, "value", "gzip data",
                                        "gzip: invalid gzip header")]
    assert (wrapper.count, wrapper.records) == (None, None)


# -- invariants.py: an outlier's words, and a transaction marker that does not stand alone ----------------------


@pytest.mark.parametrize("magic, field", [(2, "base_offset"), (1, "offset"), (0, "offset")])
def test_an_outlier_says_where_the_sequence_runs_and_that_base_offset_is_outside_the_crc(magic, field):
    assert outlier_finding(100, magic, 50, (10, 14), 15) == Finding(
        "offset-outlier", 100, 100, 8, field, "15 (after 10..14; the batch after it starts at 15)",
        "50: baseOffset 50 breaks the sequence 10..14 → 15 (baseOffset lies outside the CRC)")


def _control_batch_read(records):
    data = batch(7, records, control=True, transactional=True, producer_id=3, producer_epoch=1)
    (read,) = entries(SegmentReader(io.BytesIO(bytes(40) + data), ReadOptions(records=True)), 40)
    return read


def test_a_transaction_marker_stands_alone_in_its_batch():
    marker = handmade_end_marker("COMMIT", 4)
    assert batch_invariants(_control_batch_read([marker])) == []
    # records_count lies at 57 in a v2 header: the batch starts at 40
    assert batch_invariants(_control_batch_read([marker, handmade_end_marker("ABORT", 4)])) == [Finding(
        "bad-control-record", 40, 97, 4, "records_count", "1 control record (a transaction marker stands alone)", "2")]


# -- records.py: what a batch's records walk keeps, and where it says what it did not -------------------------


def _read_one(data, **options):
    (entry,) = SegmentReader(io.BytesIO(data), ReadOptions(records=True, **options))
    return entry


def test_records_past_those_kept_are_walked_and_said_at_the_records_start(monkeypatch):
    from kbatch.reading import records

    monkeypatch.setattr(records, "MAX_HELD", 2)
    entry = _read_one(batch(0, [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]))
    assert [record.offset for record in entry.records] == [0, 1]
    assert entry.findings == [Finding("not-all-kept", 0, 61, 0, "records", "at most 2 records kept per batch",
                                      "3 records; those after the first 2 are checked, not kept "
                                      "(--format jsonl lists them all)")]
    checks = entry.record_checks
    assert (checks.decoded, checks.last_offset_delta, checks.last_offset) == (3, 2, 2)


def test_records_past_those_kept_in_a_compressed_batch_are_said_at_its_payload_and_inside_it(monkeypatch):
    from kbatch.reading import records

    monkeypatch.setattr(records, "MAX_HELD", 2)
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=DefaultRecordBatchBuilder.CODEC_GZIP,
                                        is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 20)
    for offset in range(3):
        builder.append(offset, timestamp=7, key=b"k", value=b"v" * 40, headers=[])
    entry = _read_one(bytes(builder.build()))
    assert (entry.codec, [record.offset for record in entry.records]) == ("gzip", [0, 1])
    assert entry.findings == [Finding("not-all-kept", 0, 61, 39, "records", "at most 2 records kept per batch",
                                      "3 records; those after the first 2 are checked, not kept "
                                      "(--format jsonl lists them all)", inner_pos=0)]


def test_a_control_batch_of_producer_zero_that_ends_no_transaction_is_said_at_its_record():
    # A snapshot header (type 3: version 0, lastContainedLogTimestamp 0, no tagged fields) from producer 0:
    # the broker's producer-state rebuild reads it as an end marker and fails.  Without a producer, nothing.
    snapshot_header = (struct.pack(">hh", 0, 3), struct.pack(">hqb", 0, 0, 0))
    produced = _read_one(batch(3, [snapshot_header], control=True, transactional=True, producer_id=0,
                               producer_epoch=0))
    assert produced.findings == [Finding(
        "control-not-end-marker", 0, 61, 22, "records[0].type",
        "ABORT or COMMIT (a control batch of a producer ends its transaction)",
        "SNAPSHOT_HEADER (producer 0: a broker rebuilding its producer state fails on it)")]
    assert produced.records[0].control.type == "SNAPSHOT_HEADER"
    assert _read_one(batch(3, [snapshot_header], control=True, producer_id=-1)).findings == []


# -- legacy.py: a magic 0/1 message read field by field ------------------------------------------------------


def _legacy_set(magic, compression_type=0, messages=((5, b"key", b"value"), (6, None, b""), (7, b"", None))):
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=compression_type, batch_size=1 << 20)
    for offset, key, value in messages:
        builder.append(offset, timestamp=1229 + offset if magic else None, key=key, value=value)
    return bytes(builder.build())


def _entry_fields(entry):
    return (entry.pos, entry.size, entry.magic, entry.length_field, entry.offset_field, entry.base_offset,
            entry.last_offset, entry.count, entry.attributes, entry.codec, entry.crc == entry.computed_crc,
            entry.timestamp_type, entry.base_timestamp, entry.max_timestamp, entry.payload_pos, entry.payload_size)


@pytest.mark.parametrize("magic, fields, times", [
    (0, [(0, 34, 0, 22, 5, 5, 5, 1, 0, "none", True, "NoTimestampType", None, None, 29, 5),
         (34, 26, 0, 14, 6, 6, 6, 1, 0, "none", True, "NoTimestampType", None, None, 60, 0),
         (60, 26, 0, 14, 7, 7, 7, 1, 0, "none", True, "NoTimestampType", None, None, 86, 0)],
     [None, None, None]),
    (1, [(0, 42, 1, 30, 5, 5, 5, 1, 0, "none", True, "CreateTime", 1234, 1234, 37, 5),
         (42, 34, 1, 22, 6, 6, 6, 1, 0, "none", True, "CreateTime", 1235, 1235, 76, 0),
         (76, 34, 1, 22, 7, 7, 7, 1, 0, "none", True, "CreateTime", 1236, 1236, 110, 0)],
     [1234, 1235, 1236]),
])
def test_legacy_messages_are_read_field_by_field(magic, fields, times):
    entries = list(SegmentReader(io.BytesIO(_legacy_set(magic)), ReadOptions(records=True)))
    assert [_entry_fields(entry) for entry in entries] == fields
    assert [entry.findings for entry in entries] == [[], [], []]
    assert [[(r.offset, r.timestamp, r.key, r.value, r.pos, r.size, r.magic, r.crc == entry.crc, r.crc_valid)
             for r in entry.records] for entry in entries] == [
        [(5, times[0], b"key", b"value", 0, fields[0][1], magic, True, True)],
        [(6, times[1], None, b"", fields[1][0], fields[1][1], magic, True, True)],
        [(7, times[2], b"", None, fields[2][0], fields[2][1], magic, True, True)]]


@pytest.mark.parametrize("magic, timestamp_type, timestamp", [(1, "LogAppendTime", 1234), (0, "NoTimestampType", None)])
def test_only_a_v1_message_takes_the_log_append_time_bit(magic, timestamp_type, timestamp):
    entry = bytearray(_legacy_set(magic, messages=((5, b"key", b"value"),)))
    entry[17] |= 0x08   # attributes (after offset 8, length 4, crc 4, magic 1); the CRC covers magic onwards
    entry[12:16] = struct.pack(">I", zlib.crc32(entry[16:]))
    (read,) = SegmentReader(io.BytesIO(bytes(entry)), ReadOptions(records=True))
    assert (read.timestamp_type, read.base_timestamp, read.records[0].timestamp) == (timestamp_type, timestamp,
                                                                                   timestamp)


def test_a_v1_wrapper_at_offset_zero_is_said_and_its_inner_offsets_taken_as_they_are():
    (wrapper,) = SegmentReader(io.BytesIO(_legacy_set(1, 1, ((0, b"k", b"v" * 30), (1, None, b"w" * 30)))),
                               ReadOptions(records=True))
    assert (wrapper.base_offset, wrapper.last_offset, wrapper.count) == (0, 1, 2)
    assert [(r.offset, r.timestamp) for r in wrapper.records] == [(0, 1229), (1, 1230)]
    assert wrapper.findings == [Finding("wrapper-offset-zero", 0, 0, 8, "offset", "the offset of the last inner message",
                                        "0, so the inner offsets 0..1 are taken as they are")]


def test_records_walked_a_few_at_a_time_are_kept_up_to_the_bound_and_read_back_from_every_chunk(monkeypatch):
    from kbatch.reading import records

    monkeypatch.setattr(records, "MAX_HELD", 3)
    data = batch(20, [(bytes([65 + index]), b"v") for index in range(5)])
    entry = _read_one(data, record_objects=False)
    payload = data[entry.payload_pos:]
    assert records.walk_batch_records(entry, payload, entry.payload_pos, entry.payload_pos, entry.payload_size,
                                      objects=True, chunk=2)[0].actual.startswith("5 records; those after the first 3")
    assert [(record.offset, record.key) for record in entry.records] == [(20, b"A"), (21, b"B"), (22, b"C")]
    # Without objects, over three chunks of 2: no columns are handed on, every chunk is walked again.
    assert records.walk_batch_records(entry, payload, entry.payload_pos, entry.payload_pos, entry.payload_size,
                                      objects=False, chunk=2) == []
    assert entry.records is None and entry.walked_columns is None
    assert [[record.offset for record in chunk_records(columns, entry)]
            for columns in record_chunks(entry, chunk=2)] == [[20, 21], [22, 23], [24]]
    # In one chunk the walk's columns are handed on and read as they are.
    records.walk_batch_records(entry, payload, entry.payload_pos, entry.payload_pos, entry.payload_size,
                               objects=False, chunk=8)
    (walked,) = record_chunks(entry, chunk=8)
    assert walked is entry.walked_columns[0]
    assert [record.offset for record in chunk_records(walked, entry)] == [20, 21, 22, 23, 24]


def _record_error(data, pos, end):
    with pytest.raises(RecordError) as raised:
        decode_record(data, pos, end, "records[7]")
    error = raised.value
    return error.code, error.pos, error.size, error.field, error.expected, error.actual


def test_one_record_is_decoded_where_it_lies_and_ends_where_its_length_says():
    one = handmade_record(3, b"k", b"vv", timestamp_delta=2)   # 10 bytes: its length varint says 9
    data = b"\xff" * 5 + one + b"\x00\x01"
    assert decode_record(data, 5, len(data), "records[7]") == (
        {"length": 9, "attributes": 0, "timestamp_delta": 2, "offset_delta": 3, "key_length": 1, "key": b"k",
         "value_length": 2, "value": b"vv", "headers_count": 0, "headers": []}, 15)
    # No bytes at all: a length varint cut short, named with the path given, at the record's place.
    assert _record_error(data, 15, 15) == ("record-overrun", 15, 0, "records[7].length", "a complete varint",
                                           "0 byte(s) then the end of the record")
    assert _record_error(b"\x00" * 5 + one[:6], 5, 11) == (
        "bad-record-length", 5, 1, "records[7].length", "0..5 (bytes left in the batch)", "9")


@pytest.mark.parametrize("wrapper_offset, inner, offsets, findings", [
    (10, 3, [8, 9, 10], []),   # relative inner offsets 0..2 end at the wrapper's own
    (1, 3, [0, 1, 2], [Finding("bad-wrapper-offset", 0, 0, 8, "offset", "at least the last inner offset 2", "1")]),
    (0, 1, [0], []),           # offset 0 holding one message at 0: nothing to say
])
def test_a_v1_wrappers_inner_offsets_are_made_absolute_from_its_own(wrapper_offset, inner, offsets, findings):
    data = bytearray(_legacy_set(1, 1, tuple((index, b"k", b"v" * 30) for index in range(inner))))
    data[:8] = struct.pack(">q", wrapper_offset)   # the offset field is outside the CRC
    (wrapper,) = SegmentReader(io.BytesIO(bytes(data)), ReadOptions(records=True))
    assert ([record.offset for record in wrapper.records], wrapper.base_offset, wrapper.last_offset) == (
        offsets, offsets[0], offsets[-1])
    assert wrapper.findings == findings
