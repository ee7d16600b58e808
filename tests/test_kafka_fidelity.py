"""Where kbatch's judgement follows a rule of Kafka's own reader, cited by file.

The bytes here are made by hand with struct, zlib and crc32c (and
kafka-python's batch builder), never by kbatch's encoder.
"""

from __future__ import annotations

import gzip
import io
import shutil
import struct
import zlib

import crc32c
import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kbatch.ops.annotate import entry_spans
from kbatch.format.findings import Severity
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.reading.summary import FileSummary
from kbatch.ops.verify import VerifyOptions, verify_file
from kbatch.reading.reader import DEFAULT_MAX_ENTRY_SIZE
from kbatch.reading.window import Window
from kbatch.walk.crcrun import CrcRun

from .helpers import FIXTURES, read_all

GZIP = 1


def legacy_message(magic: int, offset: int, key: bytes | None, value: bytes | None, *, attributes: int = 0,
                   timestamp: int = 1_600_000_000_000, after_value: bytes = b"") -> bytes:
    """A v0/v1 message as LegacyRecord lays it out, its CRC-32 over magic..end (``after_value``: extra bytes)."""
    def sized(data):
        return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data

    body = struct.pack(">bb", magic, attributes) + (struct.pack(">q", timestamp) if magic == 1 else b"")
    body += sized(key) + sized(value) + after_value
    crc = zlib.crc32(body) & 0xFFFFFFFF
    return struct.pack(">qiI", offset, 4 + len(body), crc) + body


def v2_batch(base_offset: int, values: list[bytes]) -> bytearray:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for delta, value in enumerate(values):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=None, value=value, headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base_offset)
    return data


def fix_v2_crc(data: bytearray) -> bytes:
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


def verified(path, **options) -> tuple[FileSummary, list]:
    """verify-crc's library call on a file: the CRC run and the reader, in one walk."""
    with open(path, "rb") as stream:
        summary = FileSummary(str(path), path.stat().st_size)
        findings = list(verify_file(str(path), stream, summary, VerifyOptions(**options)))
    return summary, findings


# -- 1. a compressed wrapper with no inner message --------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
def test_a_compressed_wrapper_holding_no_message_is_damage(magic):
    # AbstractLegacyRecordBatch.DeepRecordsIterator: "Found invalid compressed record set with no inner records"
    wrapper = legacy_message(magic, 7, None, gzip.compress(b"", mtime=0), attributes=GZIP)
    batches, findings = read_all(wrapper + legacy_message(magic, 8, b"k", b"v"), records=True)
    empty = [finding for finding in findings if finding.code == "empty-wrapper"]
    assert len(empty) == 1 and empty[0].severity is Severity.ERROR
    value_pos = len(wrapper) - len(gzip.compress(b"", mtime=0))
    assert (empty[0].entry_pos, empty[0].pos) == (0, value_pos)
    assert batches[0].count == 0 and batches[0].records == []
    assert [finding.code for finding in findings] == ["empty-wrapper"]   # and the message after it is fine


def test_a_wrapper_holding_messages_is_not_empty():
    inner = legacy_message(1, 0, b"k", b"v")
    wrapper = legacy_message(1, 0, None, gzip.compress(inner, mtime=0), attributes=GZIP)
    _, findings = read_all(wrapper, records=True)
    assert findings == []


# -- 3. bytes after a v0/v1 message's value ------------------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
def test_bytes_after_a_legacy_value_are_a_warning_and_the_message_is_read(tmp_path, magic):
    # LegacyRecord.isValid checks only sizeInBytes() >= RECORD_OVERHEAD_V0 and the CRC; value() reads
    # valueSize bytes, so Kafka reads this message and never looks at the two bytes after its value.
    message = legacy_message(magic, 3, b"key", b"value", after_value=b"!!")
    batches, findings = read_all(message, records=True)
    assert [(finding.code, finding.severity, finding.pos, finding.size) for finding in findings] == \
        [("message-trailing-bytes", Severity.WARNING, len(message) - 2, 2)]
    assert [(record.key, record.value) for record in batches[0].records] == [(b"key", b"value")]
    path = tmp_path / "segment.log"
    path.write_bytes(message)
    summary, found = verified(path)
    assert not summary.damaged                          # verify-crc exits 0: Kafka reads it
    assert [(finding.code, finding.entry_pos, finding.actual) for finding in found] == \
        [("message-trailing-bytes", 0, "2 more bytes (Kafka ignores them)")]   # but the reader warns


# -- 5. a negative recordsCount: the CRC run and the reader give one answer ----------------------------------


def _negative_count_segment() -> bytes:
    batch = v2_batch(0, [b"a", b"b"])
    struct.pack_into(">i", batch, 57, -1)     # recordsCount
    return fix_v2_crc(batch) + fix_v2_crc(v2_batch(2, [b"c"]))


def test_a_negative_records_count_is_damage_for_the_crc_run_and_the_reader(tmp_path):
    # DefaultRecordBatch.RecordIterator: "Found invalid record count " + numRecords (InvalidRecordException)
    data = _negative_count_segment()
    path = tmp_path / "segment.log"
    path.write_bytes(data)
    summary = FileSummary(str(path), len(data))
    assert CrcRun(summary, DEFAULT_MAX_ENTRY_SIZE).walk(Window(io.BytesIO(data), len(data)), 0, len(data)) == 0
    summary, findings = verified(path)
    assert summary.damaged and summary.records == 1 and summary.batches == 2
    assert [(finding.code, finding.pos, finding.actual) for finding in findings] == \
        [("records-count-mismatch", 57, "-1")]
    # decoding the records says it once, not twice
    _, decoded = read_all(data, records=True)
    assert [finding.code for finding in decoded].count("records-count-mismatch") == 1


def test_the_count_of_a_batch_larger_than_the_read_ahead_room_is_checked(tmp_path, monkeypatch):
    """A batch cut by a chunk's end and longer than the room in front of the next: the window reads it itself."""
    from kbatch.reading import readahead, window

    monkeypatch.setattr(readahead, "MIN_SIZE", 0)
    monkeypatch.setattr(readahead, "CHUNK", 256)
    monkeypatch.setattr(readahead, "RESERVE", 128)
    monkeypatch.setattr(window, "CHUNK", 256)
    batch = v2_batch(0, [b"x" * 1000])
    struct.pack_into(">i", batch, 57, -5)
    path = tmp_path / "segment.log"
    path.write_bytes(fix_v2_crc(v2_batch(0, [b"a"])) + fix_v2_crc(batch))
    summary, findings = verified(path)
    assert [(finding.code, finding.actual) for finding in findings] == [("records-count-mismatch", "-5")]


# -- 6. one name for the size field ---------------------------------------------------------------------------


def test_a_lying_v2_length_is_named_batch_length_wherever_it_is_reported():
    first = bytearray(fix_v2_crc(v2_batch(0, [b"one"])))
    struct.pack_into(">i", first, 8, 10_000)        # past the end of the input, though a valid batch follows,
    first[-1] ^= 0xFF                               # and no end proves another length: the size field lies
    data = bytes(first) + fix_v2_crc(v2_batch(1, [b"two"]))
    _, findings = read_all(data)   # (no entry there: one range, whose finding says what its header read as)
    assert [(finding.code, finding.actual.split("; as an entry header: ")[1]) for finding in findings] == [
        ("resync", "bad-length, batch_length at pos 8 is 10000, expected at most 130 (the bytes left in the input)")]


def test_a_lying_legacy_size_is_named_as_its_layout_and_annotated():
    message = bytearray(legacy_message(1, 0, b"k", b"value"))
    struct.pack_into(">i", message, 8, len(message) - 12 + 3)    # the size lies; the CRC still verifies
    data = bytes(message) + legacy_message(1, 1, b"k", b"next")
    reader = SegmentReader(io.BytesIO(data), ReadOptions(records=True))
    batch = next(iter(reader))
    assert [(finding.code, finding.field) for finding in batch.findings] == [("bad-length", "message_size")]
    damage = [span for span in entry_spans(batch, data[:batch.size], 0) if span.kind == "damage"]
    assert [span.path for span in damage] == ["batch[0].message_size"]


# -- 8. verify-crc --deep: offsets against the base offset in the file name ---------------------------------


def _segment(tmp_path, name: str, source: str = "v2-none.log"):
    path = tmp_path / name
    shutil.copy(FIXTURES / source, path)
    return path


def test_deep_holds_every_batch_against_the_base_offset_in_the_file_name(tmp_path, kbatch):
    # LogSegment.recover -> ensureOffsetInRange(batch.lastOffset()) -> AbstractIndex.toRelative:
    # 0 <= offset - baseOffset <= Integer.MAX_VALUE; a segment holds offsets from the one it is named by.
    right = _segment(tmp_path, "00000000000000000000.log")
    summary, findings = verified(right, deep=True)
    assert not summary.damaged
    wrong = _segment(tmp_path, "00000000000000000005.log")
    summary, findings = verified(wrong, deep=True)
    below = [finding for finding in findings if finding.code == "below-segment-base"]
    with open(wrong, "rb") as stream:
        batches = [item for item in SegmentReader(stream) if not hasattr(item, "code")]
    assert [finding.entry_pos for finding in below] == [batch.pos for batch in batches if batch.base_offset < 5]
    assert below and below[0].field == "base_offset" and below[0].actual == "0"
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(wrong))
    assert result.code == 1 and '"below-segment-base"' in result.out
    assert kbatch("verify-crc", "--deep", str(right)).code == 0


def test_a_last_offset_beyond_what_the_index_can_hold(tmp_path):
    far = fix_v2_crc(v2_batch(2**31, [b"far"]))       # base 0: relative offset 2^31 does not fit an int32
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(fix_v2_crc(v2_batch(0, [b"near"])) + far)
    _, findings = verified(path, deep=True)
    assert [(finding.code, finding.actual) for finding in findings if finding.is_damage] == \
        [("beyond-segment-range", str(2**31))]


def test_a_file_not_named_by_an_offset_is_not_held_to_one(tmp_path):
    summary, _ = verified(_segment(tmp_path, "copy-of-segment.log"), deep=True)
    assert not summary.damaged
