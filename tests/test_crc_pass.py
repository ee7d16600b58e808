"""verify-crc's pass over a whole local file: the CRC run, its window read ahead, says what the full reader says.

A whole local file checked without --deep is walked in one process
(kbatch.ops.verify.verify_file): the CRC run (kbatch.walk.crcrun) takes the v2
batches whose frame and CRC hold, the full reader reads every other entry, and
a large file's window is read a chunk ahead on a second thread
(kbatch.reading.readahead).  So the oracle here is the full SegmentReader
alone: the pass reports exactly its findings and counts its batches and
records, whatever the chunking, the read-ahead and the damage.
"""

from __future__ import annotations

import io
import os
import struct
import threading
import zlib
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kbatch.format.layouts import BATCH_CRC_START, BATCH_HEADER, MESSAGE_CRC_START, MESSAGE_V1_HEADER
from kbatch.ops import verify
from kbatch.ops.verify import VerifyOptions, verify_file, verify_stream
from kbatch.reading import readahead, window
from kbatch.reading.summary import FileSummary

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


def what(findings) -> list[tuple]:
    return [(finding.code, finding.entry_pos, finding.pos, finding.size, finding.actual) for finding in findings]


def crc_pass(tmp_path: Path, data: bytes, jobs: int = 1) -> tuple[FileSummary, list]:
    """verify-crc's pass over ``data`` as a whole local file: (its summary, its findings)."""
    path = tmp_path / "segment.log"
    path.write_bytes(data)
    summary = FileSummary(str(path), len(data))
    with open(path, "rb", buffering=0) as stream:
        findings = list(verify_file(str(path), stream, summary, VerifyOptions(jobs=jobs)))
    return summary, findings


def assert_agrees(tmp_path: Path, data: bytes) -> tuple[FileSummary, list]:
    """The pass reports the full reader's findings, in its order, and counts its batches and records."""
    summary, findings = crc_pass(tmp_path, data)
    batches, expected = read_all(data)
    assert sorted(what(findings)) == sorted(what(expected))
    assert (summary.batches, summary.records) == (len(batches), sum(max(batch.count or 0, 0) for batch in batches))
    return summary, findings


@contextmanager
def read_ahead(chunk: int = 4096, reserve: int = 1024):
    """Every file read ahead (whatever its size), in small chunks: entries straddle them."""
    saved = window.CHUNK, readahead.CHUNK, readahead.RESERVE, readahead.MIN_SIZE
    window.CHUNK, readahead.CHUNK, readahead.RESERVE, readahead.MIN_SIZE = chunk, chunk, reserve, 0
    try:
        yield
    finally:
        window.CHUNK, readahead.CHUNK, readahead.RESERVE, readahead.MIN_SIZE = saved


def no_read_ahead_left() -> bool:
    return not any(thread.name == "kbatch-read-ahead" for thread in threading.enumerate())


# -- the shipped fixtures ------------------------------------------------------


@pytest.mark.parametrize("ahead", [False, True])
@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_agrees_with_the_reader_on_every_fixture(tmp_path: Path, path: Path, ahead: bool):
    if ahead:
        with read_ahead(chunk=512, reserve=128):
            assert_agrees(tmp_path, path.read_bytes())
    else:
        assert_agrees(tmp_path, path.read_bytes())
    assert no_read_ahead_left()


# -- single byte flips ---------------------------------------------------------


def test_every_byte_flip_is_caught_except_in_the_fields_outside_the_crc(tmp_path: Path):
    for index in range(len(SEGMENT)):
        entry = max(boundary for boundary in BOUNDARIES if boundary <= index)
        within = index - entry
        for mask in (0x01, 0x80, 0xFF):
            damaged = bytearray(SEGMENT)
            damaged[index] ^= mask
            with read_ahead(chunk=256, reserve=128):
                summary, findings = assert_agrees(tmp_path, bytes(damaged))
            if within in EPOCH_SPAN or within in BASE_OFFSET_SPAN:
                assert not findings and summary.batches == len(BATCHES), (index, mask)
            else:
                assert summary.damaged, f"flip {mask:#x} at {index} (byte {within} of a batch) passed"
            if within >= BATCH_CRC_START:
                assert ("crc-mismatch", entry) in {(finding.code, finding.entry_pos) for finding in findings}


def test_a_flip_in_a_v1_message_is_caught(tmp_path: Path):
    data = v1_message(0, b"old") + v1_message(1, b"older") + BATCHES[0]
    assert not crc_pass(tmp_path, data)[1]
    for index in range(MESSAGE_CRC_START, len(v1_message(0, b"old"))):
        damaged = bytearray(data)
        damaged[index] ^= 0x04
        with read_ahead(chunk=64, reserve=32):
            summary, _ = assert_agrees(tmp_path, bytes(damaged))
        assert summary.damaged


# -- truncation and zero tails -------------------------------------------------


@pytest.mark.parametrize("prefix", [b"", v1_message(0, b"old")])
def test_truncation_at_every_length(tmp_path: Path, prefix: bytes):
    data = prefix + SEGMENT
    for length in range(len(data) + 1):
        with read_ahead(chunk=128, reserve=64):
            assert_agrees(tmp_path, data[:length])


@pytest.mark.parametrize("zeros", [1, 5, 16, 17, 61, 100, 5000])
def test_a_zero_tail_says_where_it_starts(tmp_path: Path, zeros: int):
    with read_ahead():
        summary, findings = assert_agrees(tmp_path, SEGMENT + bytes(zeros))
    assert what(findings) == [("zero-tail", len(SEGMENT), len(SEGMENT), zeros, f"{zeros} zero bytes")]
    assert (summary.batches, summary.damaged) == (len(BATCHES), False)


def test_a_file_of_zeros_is_a_zero_tail(tmp_path: Path):
    with read_ahead():
        summary, findings = assert_agrees(tmp_path, bytes(2 * 4096 + 5))
    assert [finding.code for finding in findings] == ["zero-tail"] and summary.batches == 0


def test_zeros_that_do_not_run_to_the_end_are_damage(tmp_path: Path):
    for data in (SEGMENT + bytes(100) + BATCHES[0], SEGMENT + bytes(100) + b"\x01"):
        with read_ahead(chunk=64, reserve=32):
            summary, _ = assert_agrees(tmp_path, data)
        assert summary.damaged


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
        _, findings = assert_agrees(tmp_path, damaged + BATCHES[0])
        assert code in {finding.code for finding in findings}


# -- chunks, carried entries, large entries, the read-ahead thread -------------


@pytest.mark.parametrize("chunk,reserve", [(4096, 1024), (4096, 61), (1000, 300), (65536, 8192), (7777, 6000)])
def test_any_chunking_agrees_with_the_reader(tmp_path: Path, chunk: int, reserve: int):
    for data in (MIXED, MIXED + bytes(9000), MIXED + bytes(10)):
        with read_ahead(chunk, reserve):
            summary, _ = assert_agrees(tmp_path, data)
        assert summary.batches == 600 + 3 and not summary.damaged
    assert no_read_ahead_left()


@pytest.mark.parametrize("chunk,reserve", [(4096, 1024), (1000, 300)])
def test_any_chunking_finds_the_same_damage(tmp_path: Path, chunk: int, reserve: int):
    for index in range(3, len(MIXED), 997):                    # a prime: lands everywhere in the entries
        damaged = bytearray(MIXED)
        damaged[index] ^= 0x21
        with read_ahead(chunk, reserve):
            assert_agrees(tmp_path, bytes(damaged))
    for cut in range(0, len(MIXED), 1013):
        with read_ahead(chunk, reserve):
            assert_agrees(tmp_path, MIXED[:cut])


@pytest.mark.parametrize("which", [1, 7, 99, 100, 101, 299, 300, 599])
def test_a_mismatch_is_reported_whatever_chunk_it_is_in(tmp_path: Path, which: int):
    damaged = bytearray(MANY)
    damaged[MANY_POSITIONS[which] + 70] ^= 0x10
    with read_ahead():
        summary, findings = assert_agrees(tmp_path, bytes(damaged))
    assert [(finding.code, finding.entry_pos) for finding in findings] == [("crc-mismatch", MANY_POSITIONS[which])]
    assert summary.batches == len(MANY_POSITIONS)


def test_a_flip_in_an_entry_larger_than_a_chunk(tmp_path: Path):
    """An entry longer than the room in front of a chunk: the window reads it whole itself, then the read-ahead
    goes on past it."""
    for entry in (v2_batch(0, [bytes(range(256)) * 200]), v1_message(0, bytes(range(256)) * 200)):
        assert len(entry) > 4 * 4096
        with read_ahead():
            assert not crc_pass(tmp_path, SEGMENT + entry + SEGMENT)[1]
        for where in (30, 4096, len(entry) - 3):
            damaged = bytearray(entry)
            damaged[where] ^= 0x01
            with read_ahead():
                _, findings = assert_agrees(tmp_path, SEGMENT + bytes(damaged) + SEGMENT)
            assert ("crc-mismatch", len(SEGMENT)) in {(finding.code, finding.entry_pos) for finding in findings}


def test_a_large_v1_message_must_still_be_filled_by_its_key_and_value(tmp_path: Path):
    message = bytearray(v1_message(0, b"w" * 20_000))
    struct.pack_into(">i", message, MESSAGE_V1_HEADER.size, -3)    # key length -3: Kafka reads null
    with read_ahead():
        _, findings = assert_agrees(tmp_path, SEGMENT + _recrc(message))
    assert ("negative-length", len(SEGMENT)) in {(finding.code, finding.entry_pos) for finding in findings}


def test_the_read_ahead_on_a_large_file(tmp_path: Path):
    """At its own sizes, on a file large enough for it: the same findings as the reader alone, every thread
    stopped after."""
    copies = readahead.MIN_SIZE // len(MANY) + 1
    data = bytearray(MANY * copies)
    big = v2_batch(0, [b"q" * (window.CHUNK + 12345)])          # larger than a chunk: read by the window
    data[len(MANY):len(MANY)] = big
    where = len(MANY) * (copies - 2) + len(big) + MANY_POSITIONS[123]
    data[where + 100] ^= 0x40
    summary, findings = crc_pass(tmp_path, bytes(data))
    assert [(finding.code, finding.entry_pos) for finding in findings] == [("crc-mismatch", where)]
    assert summary.batches == 600 * copies + 1
    plain = FileSummary("x", len(data))
    assert what(verify_stream(io.BytesIO(bytes(data)), plain, VerifyOptions())) == what(findings)
    assert (plain.batches, plain.records) == (summary.batches, summary.records)
    assert no_read_ahead_left()


def test_a_file_cut_while_it_is_read_ahead(tmp_path: Path):
    path = tmp_path / "segment.log"
    path.write_bytes(MANY * 3)
    summary = FileSummary(str(path), len(MANY) * 3)
    with read_ahead(65536, 8192), open(path, "rb", buffering=0) as stream:
        os.truncate(path, len(MANY) + 50)   # inside a batch, after its size was taken: the reads come up short
        findings = list(verify_file(str(path), stream, summary, VerifyOptions(jobs=1)))
    assert [finding.code for finding in findings][-1] == "truncated-while-reading"
    assert summary.size_now == len(MANY) + 50 and summary.batches == len(MANY_POSITIONS)
    assert no_read_ahead_left()


def test_past_damage_the_rest_goes_to_parts_the_read_ahead_stopped(tmp_path: Path, monkeypatch):
    """Parts are forked processes: the thread reading ahead stops before the first."""
    monkeypatch.setattr(verify, "worth_parts", lambda size, jobs: size > 0)
    monkeypatch.setattr(verify, "verify_in_parts", lambda *args, **options: iter(
        [] if no_read_ahead_left() else ["a read-ahead thread still running"]))   # (as a finding: seen below)
    damaged = bytearray(MANY)
    damaged[MANY_POSITIONS[5] + 70] ^= 0x10
    with read_ahead():
        summary, findings = crc_pass(tmp_path, bytes(damaged), jobs=2)
    assert [(finding.code, finding.entry_pos) for finding in findings] == [("crc-mismatch", MANY_POSITIONS[5])]
    assert 5 < summary.batches < len(MANY_POSITIONS)   # the rest was the parts'


# -- random bytes --------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_random_bytes_never_raise_and_agree_with_the_reader(tmp_path: Path, data: bytes):
    with read_ahead(chunk=64, reserve=32):
        assert_agrees(tmp_path, data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(MIXED) - 1), st.binary(min_size=1, max_size=40), st.booleans(),
       st.sampled_from([(300, 100), (4096, 1024), (1 << 20, 1 << 16)]))
def test_a_mangled_segment_agrees_with_the_reader_whatever_the_chunks(tmp_path: Path, position, patch, insert,
                                                                      chunking):
    data = MIXED[:position] + patch + MIXED[position + (0 if insert else len(patch)):]
    with read_ahead(*chunking):
        assert_agrees(tmp_path, data)


def test_a_read_that_fails_on_the_thread_is_raised_and_ends_the_read_ahead(tmp_path: Path, monkeypatch):
    """The walking thread gets the error; asked again, the read-ahead leaves the bytes to the window's own read
    rather than wait for a chunk its stopped thread never reads."""
    path = tmp_path / "segment.log"
    path.write_bytes(MANY)

    def failing(fd, buffers, offset):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(readahead.os, "preadv", failing)
    with read_ahead(), open(path, "rb", buffering=0) as stream:
        ahead = readahead.ReadAhead(stream.fileno(), len(MANY))
        with pytest.raises(OSError, match="Input/output"):
            ahead.bytes_at(0, 100)
        answers = []
        asking = threading.Thread(target=lambda: answers.append(ahead.bytes_at(0, 100)), daemon=True)
        asking.start()
        asking.join(timeout=10)
        assert answers == [None]
        ahead.close()
    assert no_read_ahead_left()
