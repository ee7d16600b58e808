"""The fast CRC pass never calls damaged bytes clean, and agrees with the full reader.

``fast_scan`` is the hot path of verify-crc: when it says clean, nobody reads
the file again.  So the oracle here is the full SegmentReader: the fast scan
is clean exactly when the reader reports nothing but a zero tail and the file
holds no compressed v0/v1 wrapper (whose inner CRCs only the reader checks).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kbatch.walk import crc as fastscan
from kbatch.walk.crc import FastScan, fast_scan
from kbatch.format.findings import Severity
from kbatch.format.layouts import (
    BATCH_CRC_START,
    BATCH_HEADER,
    LEGACY_CODEC_MASK,
    MESSAGE_CRC_START,
    MESSAGE_V1_HEADER,
)
from kbatch.reading.reader import DEFAULT_MAX_ENTRY_SIZE

from .helpers import fixture_id, fixture_paths, read_all

EPOCH = BATCH_HEADER.offsets["partition_leader_epoch"]
EPOCH_SPAN = range(EPOCH, EPOCH + BATCH_HEADER.sizes["partition_leader_epoch"])
BASE_OFFSET_SPAN = range(BATCH_HEADER.sizes["base_offset"])


def v2_batch(base_offset: int, values: list[bytes], codec: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 26)
    for delta, value in enumerate(values):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=b"k%d" % delta, value=value, headers=[])
    data = bytearray(builder.build())
    data[BASE_OFFSET_SPAN.start:BASE_OFFSET_SPAN.stop] = base_offset.to_bytes(len(BASE_OFFSET_SPAN), "big")
    data[EPOCH_SPAN.start:EPOCH_SPAN.stop] = (7).to_bytes(len(EPOCH_SPAN), "big")   # neither is under the CRC
    return bytes(data)


def v1_message(offset: int, value: bytes | None, key: bytes | None = None) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    builder.append(offset, timestamp=1_600_000_000_000, key=key, value=value)
    return bytes(builder.build())


BATCHES = [v2_batch(3 * n, [b"value-%d" % n, b"x" * n, b"last"]) for n in range(3)]
SEGMENT = b"".join(BATCHES)
BOUNDARIES = [sum(map(len, BATCHES[:n])) for n in range(len(BATCHES) + 1)]


def scan_bytes(tmp_path: Path, data: bytes, name: str = "segment.log", **options) -> FastScan:
    path = tmp_path / name
    path.write_bytes(data)
    return fast_scan(str(path), **options)


def reader_verdict(data: bytes, **options) -> tuple[bool, list, list]:
    """(clean as the reader sees it, batches, findings): nothing but a zero tail, no compressed wrapper."""
    batches, findings = read_all(data, **options)
    wrapper = any(batch.magic < 2 and batch.attributes & LEGACY_CODEC_MASK for batch in batches)
    return not wrapper and all(f.severity is Severity.INFO for f in findings), batches, findings


def assert_agrees(scan: FastScan, data: bytes, **options) -> None:
    clean, batches, findings = reader_verdict(data, **options)
    assert scan.clean == clean, (scan, [(f.code, f.pos) for f in findings])
    assert scan.size == len(data)
    if clean:
        assert scan.reason is None
        assert scan.entries == len(batches)
        assert scan.records == sum(batch.count for batch in batches)
        tails = [finding.pos for finding in findings if finding.code == "zero-tail"]
        assert scan.zero_tail_pos == (tails[0] if tails else None)
    else:
        assert scan.reason


# -- the shipped fixtures ------------------------------------------------------


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_agrees_with_the_reader_on_every_fixture(path: Path):
    data = path.read_bytes()
    scan = fast_scan(str(path))
    assert_agrees(scan, data)
    batches, findings = read_all(data)
    # and, more plainly: clean <=> no error and no compressed legacy wrapper
    wrapper = any(batch.magic < 2 and batch.codec != "none" for batch in batches)
    assert scan.clean == (not wrapper and not any(finding.is_damage for finding in findings))


def test_a_compressed_wrapper_is_left_to_the_reader():
    scan = fast_scan(str(fixture_paths()[0].parent / "v1-gzip.log"))
    assert not scan.clean and "compressed v0/v1 wrapper at 0" in scan.reason


# -- single byte flips ---------------------------------------------------------


def test_every_byte_flip_is_caught_except_in_the_fields_outside_the_crc(tmp_path: Path):
    for index in range(len(SEGMENT)):
        entry = max(boundary for boundary in BOUNDARIES if boundary <= index)
        within = index - entry
        for mask in (0x01, 0x80, 0xFF):
            damaged = bytearray(SEGMENT)
            damaged[index] ^= mask
            scan = scan_bytes(tmp_path, bytes(damaged))
            if within in EPOCH_SPAN or within in BASE_OFFSET_SPAN:
                assert scan.clean, f"flip {mask:#x} at {index} (byte {within} of a batch): {scan.reason}"
                assert scan.entries == len(BATCHES)
            else:
                assert not scan.clean, f"flip {mask:#x} at {index} (byte {within} of a batch) passed"
            if within >= BATCH_CRC_START:
                assert scan.reason.startswith(f"crc-mismatch at {entry}: crc ")   # the reader's finding
            assert_agrees(scan, bytes(damaged))


def test_a_flip_in_a_v1_message_is_caught(tmp_path: Path):
    data = v1_message(0, b"old") + v1_message(1, b"older") + BATCHES[0]
    assert scan_bytes(tmp_path, data).clean
    for index in range(MESSAGE_CRC_START, len(v1_message(0, b"old"))):
        damaged = bytearray(data)
        damaged[index] ^= 0x04
        scan = scan_bytes(tmp_path, bytes(damaged))
        assert not scan.clean
        assert_agrees(scan, bytes(damaged))


# -- truncation and zero tails -------------------------------------------------


def _clean_after_cut(data: bytes, boundaries, length: int) -> bool:
    """A cut is clean on an entry boundary, or when all that is left of the entry it cuts is
    zero bytes (the high bytes of its base offset): those read as a zero tail."""
    entry = max(boundary for boundary in boundaries if boundary <= length)
    return length == entry or not any(data[entry:length])


def test_truncation_at_every_length(tmp_path: Path):
    for length in range(len(SEGMENT) + 1):
        scan = scan_bytes(tmp_path, SEGMENT[:length])
        assert scan.clean == _clean_after_cut(SEGMENT, BOUNDARIES, length), (length, scan)
        assert_agrees(scan, SEGMENT[:length])


def test_truncation_at_every_length_with_a_v1_message_first(tmp_path: Path):
    data = v1_message(0, b"old") + SEGMENT
    boundaries = {0, len(data)} | {len(v1_message(0, b"old")) + boundary for boundary in BOUNDARIES}
    for length in range(len(data) + 1):
        scan = scan_bytes(tmp_path, data[:length])
        entry = max(boundary for boundary in boundaries if boundary <= length)
        assert scan.clean == _clean_after_cut(data, boundaries, length), (length, scan)
        assert scan.zero_tail_pos == (entry if length != entry and scan.clean else None)


def test_empty_file_is_clean(tmp_path: Path):
    assert scan_bytes(tmp_path, b"") == FastScan(str(tmp_path / "segment.log"), 0, 0, 0, True, None, None)


@pytest.mark.parametrize("zeros", [1, 5, 16, 17, 61, 100, 5000])
def test_a_zero_tail_is_clean_and_says_where_it_starts(tmp_path: Path, zeros: int):
    scan = scan_bytes(tmp_path, SEGMENT + bytes(zeros))
    assert scan.clean and scan.zero_tail_pos == len(SEGMENT) and scan.entries == len(BATCHES)
    assert_agrees(scan, SEGMENT + bytes(zeros))


def test_a_file_of_zeros_is_a_zero_tail(tmp_path: Path):
    scan = scan_bytes(tmp_path, bytes(2 * fastscan.CHUNK + 5))   # in chunks, not read whole
    assert (scan.clean, scan.zero_tail_pos, scan.entries) == (True, 0, 0)


def test_zeros_that_do_not_run_to_the_end_are_damage(tmp_path: Path):
    for data in (SEGMENT + bytes(100) + BATCHES[0], SEGMENT + bytes(100) + b"\x01"):
        scan = scan_bytes(tmp_path, data)
        assert not scan.clean
        assert_agrees(scan, data)


# -- v0/v1 framing the CRC does not judge --------------------------------------


def _recrc(message: bytearray) -> bytes:
    struct.pack_into(">I", message, MESSAGE_V1_HEADER.offsets["crc"], zlib.crc32(message[MESSAGE_CRC_START:]))
    return bytes(message)


def test_v1_key_and_value_must_fill_the_message(tmp_path: Path):
    message = bytearray(v1_message(0, b"value"))
    trailing = message + b"!"
    struct.pack_into(">i", trailing, 8, len(trailing) - 12)
    negative = bytearray(message)
    struct.pack_into(">i", negative, MESSAGE_V1_HEADER.size, -2)   # a null key, written as -2
    short = bytearray(message)
    struct.pack_into(">i", short, len(short) - len(b"value") - 4, 6)  # value length one past the end
    for damaged, code in ((_recrc(trailing), "message-trailing-bytes"), (_recrc(negative), "negative-length"),
                          (_recrc(short), "bad-length")):
        data = damaged + BATCHES[0]
        scan = scan_bytes(tmp_path, data)
        assert not scan.clean and scan.reason.startswith(f"{code} at 0:")   # the reader's finding, first
        clean, _, findings = reader_verdict(data)
        assert not clean and code in {finding.code for finding in findings}


def test_max_entry_size_is_the_readers(tmp_path: Path):
    assert fastscan.MAX_ENTRY_SIZE == DEFAULT_MAX_ENTRY_SIZE
    limit = len(BATCHES[2]) - 13
    scan = scan_bytes(tmp_path, SEGMENT, max_entry_size=limit)
    assert not scan.clean and scan.reason.startswith(f"bad-length at {BOUNDARIES[2]}: batch_length "
                                                     f"{len(BATCHES[2]) - 12}, expected 49..{limit}")
    assert_agrees(scan, SEGMENT, max_entry_size=limit)


def test_not_a_regular_file(tmp_path: Path):
    scan = fast_scan(str(tmp_path))
    assert not scan.clean and "not a regular file" in scan.reason


# -- chunks, carried entries, large entries, the read-ahead thread -------------


@contextmanager
def small_chunks(chunk: int = 4096, reserve: int = 1024, parallel_min: int = 0):
    """Read every file in small chunks (so entries straddle them), with the read-ahead thread for any size."""
    names = ("CHUNK", "RESERVE", "PARALLEL_MIN_SIZE", "SMALL_FILE_SIZE")
    saved = [getattr(fastscan, name) for name in names]
    for name, value in zip(names, (chunk, reserve, parallel_min, 0)):
        setattr(fastscan, name, value)
    try:
        yield
    finally:
        for name, value in zip(names, saved):
            setattr(fastscan, name, value)


def _many_batches(count: int) -> tuple[bytes, list[int]]:
    parts, positions, pos = [], [], 0
    for n in range(count):
        batch = v2_batch(n * 3, [b"v%d" % n, b"y" * (n % 50), b"z"])
        parts.append(batch)
        positions.append(pos)
        pos += len(batch)
    return b"".join(parts), positions


MANY, MANY_POSITIONS = _many_batches(600)
BIG = v2_batch(1800, [b"B" * 30_000])                         # longer than several small chunks
MIXED = MANY[:MANY_POSITIONS[100]] + v1_message(300, b"legacy") + BIG + v1_message(1801, b"L" * 5000) \
    + MANY[MANY_POSITIONS[100]:]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("chunk,reserve", [(4096, 1024), (4096, 61), (1000, 300), (65536, 8192), (7777, 6000)])
def test_any_chunking_agrees_with_the_reader(tmp_path: Path, threads: int, chunk: int, reserve: int):
    for data in (MIXED, MIXED + bytes(9000), MIXED + bytes(10)):
        with small_chunks(chunk, reserve):
            scan = scan_bytes(tmp_path, data, threads=threads)
        assert scan.clean and scan.entries == 600 + 3
        assert_agrees(scan, data)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("chunk,reserve", [(4096, 1024), (1000, 300)])
def test_any_chunking_finds_the_same_first_problem(tmp_path: Path, threads: int, chunk: int, reserve: int):
    step = 997                                                   # a prime: lands everywhere in the entries
    for index in range(3, len(MIXED), step):
        damaged = bytearray(MIXED)
        damaged[index] ^= 0x21
        whole = scan_bytes(tmp_path, bytes(damaged))
        with small_chunks(chunk, reserve):
            chunked = scan_bytes(tmp_path, bytes(damaged), threads=threads)
        assert chunked.clean == whole.clean and chunked.reason == whole.reason, index
    for cut in range(0, len(MIXED), 1013):
        whole = scan_bytes(tmp_path, MIXED[:cut])
        with small_chunks(chunk, reserve):
            chunked = scan_bytes(tmp_path, MIXED[:cut], threads=threads)
        assert (chunked.clean, chunked.reason, chunked.entries) == (whole.clean, whole.reason, whole.entries), cut


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("which", [1, 7, 99, 100, 101, 299, 300, 599])
def test_the_first_mismatch_is_reported_whatever_chunk_it_is_in(tmp_path: Path, threads: int, which: int):
    damaged = bytearray(MANY)
    damaged[MANY_POSITIONS[which] + 70] ^= 0x10
    if which != len(MANY_POSITIONS) - 1:
        damaged[MANY_POSITIONS[-1] + 70] ^= 0x10                 # a later mismatch must not win
    with small_chunks():
        scan = scan_bytes(tmp_path, bytes(damaged), threads=threads)
    assert not scan.clean and scan.reason.startswith(f"crc-mismatch at {MANY_POSITIONS[which]}: crc ")
    assert scan.entries == which


@pytest.mark.parametrize("threads", [1, 2])
def test_a_flip_in_an_entry_larger_than_a_chunk(tmp_path: Path, threads: int):
    with small_chunks():
        for entry in (v2_batch(0, [bytes(range(256)) * 200]), v1_message(0, bytes(range(256)) * 200)):
            assert len(entry) > 4 * fastscan.CHUNK
            assert scan_bytes(tmp_path, SEGMENT + entry + SEGMENT, threads=threads).clean
            for where in (30, fastscan.CHUNK, len(entry) - 3):
                damaged = bytearray(entry)
                damaged[where] ^= 0x01
                scan = scan_bytes(tmp_path, SEGMENT + bytes(damaged) + SEGMENT, threads=threads)
                assert scan.reason.startswith(f"crc-mismatch at {len(SEGMENT)}: crc "), where


def test_a_large_v1_message_must_still_be_filled_by_its_key_and_value(tmp_path: Path):
    message = bytearray(v1_message(0, b"w" * 20_000))
    struct.pack_into(">i", message, MESSAGE_V1_HEADER.size, -3)    # key length -3: Kafka reads null
    data = SEGMENT + _recrc(message)
    with small_chunks():
        scan = scan_bytes(tmp_path, data)
    assert not scan.clean and scan.reason.startswith(f"negative-length at {len(SEGMENT)}: key_length -3")
    assert_agrees(scan, data)


def test_a_batch_larger_than_the_default_chunk(tmp_path: Path):
    big = v2_batch(0, [b"q" * (fastscan.CHUNK + 12345)])
    for threads in (1, 2):
        assert scan_bytes(tmp_path, SEGMENT + big + SEGMENT, threads=threads).clean
    damaged = bytearray(big)
    damaged[fastscan.CHUNK + 100] ^= 0x01
    scan = scan_bytes(tmp_path, SEGMENT + bytes(damaged))
    assert scan.reason.startswith(f"crc-mismatch at {len(SEGMENT)}: crc ")


def test_the_read_ahead_thread_on_a_large_file(tmp_path: Path):
    copies = fastscan.PARALLEL_MIN_SIZE // len(MANY) + 1
    data = bytearray(MANY * copies)
    path = tmp_path / "large.log"
    path.write_bytes(data)
    one, two = fast_scan(str(path), threads=1), fast_scan(str(path), threads=2)
    assert one == two and one.clean and one.entries == 600 * copies
    where = len(MANY) * (copies - 2) + MANY_POSITIONS[123]
    data[where + 100] ^= 0x40
    path.write_bytes(data)
    for threads in (1, 2):
        assert fast_scan(str(path), threads=threads).reason.startswith(f"crc-mismatch at {where}: crc ")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", [len(SEGMENT), 3 * len(MANY)])
def test_a_file_that_shrinks_while_read_is_not_clean(tmp_path: Path, monkeypatch, threads: int, size: int):
    path = tmp_path / "segment.log"
    path.write_bytes((MANY * 3)[:size])
    real_fstat = os.fstat

    def fstat_before_truncation(fd):   # the size the scan starts from; then the file is cut short
        info = real_fstat(fd)
        os.truncate(path, size // 2)
        return os.stat_result((*info[:6], size, *info[7:]))

    monkeypatch.setattr(fastscan.os, "fstat", fstat_before_truncation)
    with small_chunks(65536, 8192):
        scan = fast_scan(str(path), threads=threads)
    assert not scan.clean and "shrank" in scan.reason


def test_the_command_line_prints_one_line(tmp_path: Path):
    path = tmp_path / "segment.log"
    path.write_bytes(SEGMENT)
    done = subprocess.run([sys.executable, "-m", "kbatch.walk.crc", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.count("\n") == 1 and "clean=True" in done.stdout and "entries=3" in done.stdout
    path.write_bytes(SEGMENT[:-1])
    done = subprocess.run([sys.executable, "-m", "kbatch.walk.crc", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "clean=False" in done.stdout


# -- random bytes --------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_random_bytes_never_raise_and_agree_with_the_reader(tmp_path: Path, data: bytes):
    assert_agrees(scan_bytes(tmp_path, data), data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(SEGMENT) - 1), st.binary(min_size=1, max_size=40), st.booleans())
def test_a_mangled_segment_never_passes_unless_the_reader_agrees(tmp_path: Path, position, patch, insert):
    data = SEGMENT[:position] + patch + SEGMENT[position + (0 if insert else len(patch)):]
    assert_agrees(scan_bytes(tmp_path, data), data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(MIXED) - 1), st.binary(min_size=1, max_size=40), st.booleans(), st.sampled_from([1, 2]))
def test_chunked_and_whole_agree_on_a_mangled_segment(tmp_path: Path, position, patch, insert, threads):
    data = MIXED[:position] + patch + MIXED[position + (0 if insert else len(patch)):]
    with small_chunks(chunk=300, reserve=100):
        chunked = scan_bytes(tmp_path, data, threads=threads)
    with small_chunks(chunk=1 << 20, reserve=1 << 16):
        whole = scan_bytes(tmp_path, data)
    assert chunked == whole
