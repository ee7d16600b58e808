"""verify-crc --deep's fast pass calls a file clean exactly when the full reader, deep, reports nothing.

``fast_scan(path, deep=True)`` (kbatch.fastdeep) walks plain v2 batches without making objects of them;
when it says clean nobody reads the file again.  So the oracle is verify_stream with ``deep``: the fast
pass is clean exactly when the full walk reports nothing but a zero tail and every entry is a batch it
walks (v2, uncompressed, not a control batch, and if larger than fastscan.RESERVE not across two chunks);
any other file it hands to the full reader.  The batches are built by kafka-python's builder (an encoder that is not ours).
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kbatch import fastscan
from kbatch.checksums import crc32c
from kbatch.fastscan import fast_scan
from kbatch.layouts import BATCH_CRC_START, BATCH_HEADER, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK
from kbatch.segments import segment_base_offset
from kbatch.summary import FileSummary
from kbatch.verify import VerifyOptions, verify_stream

from .helpers import FIXTURES, fixture_id, fixture_paths

AT = BATCH_HEADER.offsets
FORMAT = {name: ">" + char for name, char in zip(BATCH_HEADER.names, BATCH_HEADER.codec.format.lstrip("<>!=@"))}


def v2_batch(base_offset: int, count: int, *, value_size: int = 20, producer=(-1, -1, -1),
             transactional: bool = False, codec: int = 0) -> bytes:
    producer_id, producer_epoch, base_sequence = producer
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=base_sequence, batch_size=1 << 26)
    for delta in range(count):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=b"k%d" % delta,
                       value=bytes([65 + delta % 26]) * value_size, headers=[("h", b"v")] if delta % 3 else [])
    return set_field(bytes(builder.build()), "base_offset", base_offset)


def set_field(batch: bytes, name: str, value: int, *, fix_crc: bool = True) -> bytes:
    """The batch with one header field rewritten (and its CRC made to match again, unless asked not to)."""
    data = bytearray(batch)
    struct.pack_into(FORMAT[name], data, AT[name], value)
    if fix_crc:
        struct.pack_into(FORMAT["crc"], data, AT["crc"], crc32c(bytes(data[BATCH_CRC_START:])))
    return bytes(data)


def field(batch: bytes, name: str) -> int:
    return struct.unpack_from(FORMAT[name], batch, AT[name])[0]


def segment(count: int = 4, first_offset: int = 0, **options) -> list[bytes]:
    batches, offset = [], first_offset
    for n in range(count):
        batches.append(v2_batch(offset, 3 + n, **options))
        offset += 3 + n
    return batches


def full_deep_findings(data: bytes, segment_base: int | None) -> list:
    stream = io.BytesIO(data)
    return list(verify_stream(stream, FileSummary("x", len(data)), VerifyOptions(deep=True),
                              segment_base=segment_base))


def plain_batches_only(data: bytes) -> bool:
    """Every entry is a v2 batch the fast pass walks: uncompressed, no control batch."""
    pos = 0
    while pos < len(data) and any(data[pos:]):   # (up to a zero tail)
        if pos + BATCH_HEADER.size > len(data):
            return False
        attributes = field(data[pos:], "attributes")
        if data[pos + AT["magic"]] != 2 or attributes & (COMPRESSION_CODEC_MASK | CONTROL_FLAG_MASK):
            return False
        pos += 12 + field(data[pos:], "batch_length")
    return True


def assert_agrees(tmp_path: Path, data: bytes, name: str = "00000000000000000000.log") -> object:
    path = tmp_path / name
    path.write_bytes(data)
    segment_base = segment_base_offset(str(path))
    scan = fast_scan(str(path), deep=True, segment_base=segment_base)
    findings = full_deep_findings(data, segment_base)
    reported = [(finding.code, finding.pos) for finding in findings if finding.code != "zero-tail"]
    expected = not reported and plain_batches_only(data)
    # A batch larger than RESERVE that crosses from one chunk into the next is left to the full reader too.
    assert scan.clean == expected or "more than the fast pass walks records in" in scan.reason, \
        (scan.reason, reported)
    if scan.clean:
        assert scan.reason is None
        summary = FileSummary("x", len(data))
        list(verify_stream(io.BytesIO(data), summary, VerifyOptions(deep=True), segment_base=segment_base))
        assert (scan.entries, scan.records) == (summary.batches, summary.records)
    else:
        assert scan.reason
    return scan


# -- what it walks -----------------------------------------------------------------


def test_a_plain_segment_is_clean_with_the_counts_of_the_full_walk(tmp_path: Path):
    scan = assert_agrees(tmp_path, b"".join(segment(5)))
    assert scan.clean and scan.entries == 5 and scan.records == 3 + 4 + 5 + 6 + 7


def test_a_zero_tail_is_the_only_thing_a_clean_file_reports(tmp_path: Path):
    scan = assert_agrees(tmp_path, b"".join(segment(2)) + bytes(300))
    assert scan.clean and scan.findings()[0].code == "zero-tail"


def test_idempotent_and_transactional_data_batches_are_walked(tmp_path: Path):
    batches = [v2_batch(0, 3, producer=(7, 0, 0)), v2_batch(3, 2, producer=(7, 0, 3), transactional=True)]
    assert assert_agrees(tmp_path, b"".join(batches)).clean


def test_batches_across_many_buffers_keep_the_offset_order(tmp_path: Path):
    """A file of several chunks: batches are carried from buffer to buffer, the order check goes on."""
    batches, offset = [], 0
    while sum(map(len, batches)) < 2 * fastscan.CHUNK + fastscan.RESERVE:
        batches.append(v2_batch(offset, 40, value_size=900))
        offset += 40
    scan = assert_agrees(tmp_path, b"".join(batches))
    assert scan.clean and scan.entries == len(batches)
    late = len(batches) - 3   # past the first chunks: an overlap there is still seen
    overlapping = batches[:late] + [set_field(batches[late], "base_offset", field(batches[late], "base_offset") - 1)]
    assert not assert_agrees(tmp_path, b"".join(overlapping + batches[late + 1:])).clean


# -- what it leaves to the full reader --------------------------------------------------


@pytest.mark.parametrize("change", [
    ("attributes", 0x80),                            # a reserved bit
    ("producer_epoch", 0),                           # producer fields half set
    ("last_offset_delta", 1),                        # below the last record's offsetDelta
    ("max_timestamp", 1),                            # not the largest record timestamp
    ("records_count", 99),                           # more records than the bytes hold
    ("records_count", -1),
    ("attributes", 0x10),                            # transactional without a producer
    ("attributes", 0x20),                            # a control batch
    ("attributes", 0x08),                            # LogAppendTime: maxTimestamp is the broker's, no finding
    ("base_offset", 2),                              # overlaps the batch before (not under the CRC)
    ("base_offset", 40),                             # a gap (information, but a finding)
])
def test_every_rule_is_asked_and_a_batch_that_breaks_one_is_left_to_the_full_reader(tmp_path: Path, change):
    batches = segment(3)
    name, value = change
    batches[1] = set_field(batches[1], name, value)
    assert_agrees(tmp_path, b"".join(batches))


def test_a_wrong_crc_a_compressed_batch_and_a_damaged_record_are_left_to_the_full_reader(tmp_path: Path):
    batches = segment(3)
    assert not assert_agrees(tmp_path, b"".join([batches[0], set_field(batches[1], "crc", 1, fix_crc=False),
                                                 batches[2]])).clean
    gzip = v2_batch(3, 4, codec=1)
    assert not assert_agrees(tmp_path, batches[0] + gzip).clean
    record = bytearray(batches[1])
    record[BATCH_HEADER.size] = 0x7F          # the first record's length varint: far past the batch
    assert not assert_agrees(tmp_path, set_field(bytes(record), "crc", 0)).clean   # CRC made to match


def test_offsets_outside_the_segment_named_range_are_left_to_the_full_reader(tmp_path: Path):
    data = b"".join(segment(2, first_offset=10))
    assert assert_agrees(tmp_path, data, "00000000000000000010.log").clean
    assert not assert_agrees(tmp_path, data, "00000000000000000011.log").clean   # below the name's base
    far = b"".join(segment(2, first_offset=2**31 + 5))
    assert not assert_agrees(tmp_path, far, "00000000000000000000.log").clean     # beyond base + 2^31-1
    assert assert_agrees(tmp_path, far, "not-a-segment-name.log").clean


def test_a_batch_larger_than_a_buffer_holds_is_left_to_the_full_reader(tmp_path: Path):
    big = v2_batch(0, 3, value_size=fastscan.RESERVE // 2)
    assert assert_agrees(tmp_path, big + bytes(fastscan.CHUNK)).clean   # whole in the first chunk
    before, offset = [], 0
    while sum(map(len, before)) < fastscan.CHUNK - len(big) // 2:      # ... and across two chunks
        before.append(v2_batch(offset, 40, value_size=900))
        offset += 40
    scan = assert_agrees(tmp_path, b"".join(before) + set_field(big, "base_offset", offset))
    assert not scan.clean and "more than the fast pass walks records in" in scan.reason


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40)), min_size=1, max_size=5),
       changes=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(BATCH_HEADER.names[:-1] + ("records_count",)),
                                  st.integers(-2**31, 2**31 - 1), st.booleans()), max_size=2))
def test_agrees_with_the_full_reader_on_random_batches_and_header_changes(tmp_path: Path, batches, changes):
    built, offset = [], 0
    for count, value_size in batches:
        built.append(v2_batch(offset, count, value_size=value_size))
        offset += count
    for index, name, value, fix_crc in changes:
        index %= len(built)
        if name in ("magic", "batch_length"):
            continue   # framing: the fast CRC pass's own tests (tests/test_fastscan.py)
        bits = 8 * struct.calcsize(FORMAT[name])
        half = 2**(bits - 1) if FORMAT[name][-1].islower() else 0    # signed fields: -half .. half-1
        value = (value + half) % 2**bits - half                          # wrapped into the field's range
        built[index] = set_field(built[index], name, value, fix_crc=fix_crc)
    assert_agrees(tmp_path, b"".join(built))


@pytest.mark.parametrize("path", sorted(set(fixture_paths()) | set(FIXTURES.rglob("*.log"))), ids=fixture_id)
def test_agrees_with_the_full_reader_on_every_fixture(path: Path):
    segment_base = segment_base_offset(str(path))
    scan = fast_scan(str(path), deep=True, segment_base=segment_base)
    data = path.read_bytes()
    reported = [finding for finding in full_deep_findings(data, segment_base) if finding.code != "zero-tail"]
    if scan.clean:
        assert not reported, [(finding.code, finding.pos) for finding in reported]
    else:
        assert reported or not plain_batches_only(data), scan.reason


def test_some_fixtures_take_the_fast_pass():
    """The agreement above is no empty promise: shipped segments are walked by it."""
    clean = [path for path in sorted(FIXTURES.rglob("*.log"))
             if fast_scan(str(path), deep=True, segment_base=segment_base_offset(str(path))).clean]
    assert len(clean) >= 5, clean
