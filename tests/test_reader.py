"""The reader on damaged bytes: it never raises, it accounts for every byte, it says what it saw."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kbatch.format.findings import CODES

from .helpers import read_all

REGION_CODES = {"resync", "zero-tail", "truncated"}


def v2_batch(base_offset: int, values: list[bytes], codec: int = 0, leader_epoch: int = 4) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for delta, value in enumerate(values):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=b"k%d" % delta, value=value, headers=[])
    data = bytearray(builder.build())
    data[0:8] = base_offset.to_bytes(8, "big")       # not covered by the CRC: the broker assigns it
    data[12:16] = leader_epoch.to_bytes(4, "big")    # nor is the leader epoch
    return bytes(data)


def v1_message(offset: int, value: bytes) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    builder.append(offset, timestamp=1_600_000_000_000, key=None, value=value)
    return bytes(builder.build())


SEGMENT = b"".join(v2_batch(3 * n, [b"value-%d" % n, b"x" * n, b"last"]) for n in range(4))


def assert_tiles(data: bytes, batches, findings) -> None:
    """Batches and damaged ranges cover the input exactly, in order, without overlap."""
    spans = [(batch.pos, batch.size) for batch in batches]
    spans += [(finding.pos, finding.size) for finding in findings
              if finding.code in REGION_CODES and finding.entry_pos == finding.pos and finding.inner_pos is None]
    position = 0
    for start, size in sorted(spans):
        assert start == position, f"gap or overlap at {position}: next span starts at {start}"
        position = start + size
    assert position == len(data)


def test_clean_segment_has_no_findings():
    batches, findings = read_all(SEGMENT, records=True)
    assert findings == []
    assert [batch.base_offset for batch in batches] == [0, 3, 6, 9]
    assert [record.value for record in batches[1].records] == [b"value-1", b"x", b"last"]


def test_every_byte_flip_under_the_crc_is_a_crc_mismatch_and_the_epoch_is_not():
    batch = v2_batch(0, [b"abc", b"defgh"])
    for index in range(len(batch)):
        damaged = bytearray(batch)
        damaged[index] ^= 0x01
        batches, findings = read_all(bytes(damaged) + batch)
        codes = {finding.code for finding in findings}
        if 12 <= index < 16:
            assert codes == set(), f"flip in partitionLeaderEpoch at {index}"
        elif index >= 21:
            assert "crc-mismatch" in codes, f"flip at {index}: {codes}"
        # whatever broke, the intact second batch is found again
        assert batches and batches[-1].pos == len(batch) and batches[-1].crc_valid
        assert_tiles(bytes(damaged) + batch, batches, findings)


def test_a_lying_batch_length_is_recovered_with_evidence():
    first = v2_batch(0, [b"one"])
    middle = bytearray(v2_batch(1, [b"two", b"three"]))
    true_length = int.from_bytes(middle[8:12], "big")
    for wrong in (true_length + 5, true_length - 7, 10**6):
        middle[8:12] = wrong.to_bytes(4, "big")
        data = first + bytes(middle) + v2_batch(3, [b"four"])
        batches, findings = read_all(data, records=True)
        assert [batch.base_offset for batch in batches] == [0, 1, 3]
        bad = [finding for finding in findings if finding.code == "bad-length"]
        assert len(bad) == 1 and bad[0].entry_pos == len(first) and bad[0].pos == len(first) + 8
        assert bad[0].actual == str(wrong) and bad[0].expected.startswith(str(true_length))
        assert [record.value for record in batches[1].records] == [b"two", b"three"]


def test_garbage_between_batches_is_skipped_and_reported():
    garbage = bytes(range(7, 70))
    data = v2_batch(0, [b"a"]) + garbage + v2_batch(1, [b"b"])
    batches, findings = read_all(data)
    assert [batch.base_offset for batch in batches] == [0, 1]
    resync = [finding for finding in findings if finding.code == "resync"]
    assert len(resync) == 1 and resync[0].size == len(garbage)
    assert_tiles(data, batches, findings)


def test_truncated_tail_and_zero_tail():
    batches, findings = read_all(SEGMENT[:-10])
    assert [finding.code for finding in findings] == ["truncated"]
    assert findings[0].entry_pos == batches[-1].pos + batches[-1].size
    batches, findings = read_all(SEGMENT + bytes(4096))
    assert [(finding.code, finding.pos, finding.size) for finding in findings] == \
        [("zero-tail", len(SEGMENT), 4096)]
    assert not any(finding.is_damage for finding in findings)


def test_zero_run_inside_a_segment_is_damage():
    data = v2_batch(0, [b"a"]) + bytes(1000) + v2_batch(1, [b"b"])
    batches, findings = read_all(data)
    assert len(batches) == 2
    first = len(v2_batch(0, [b"a"]))
    (zeros,) = [finding for finding in findings if finding.is_damage]
    assert (zeros.code, zeros.pos, zeros.size) == ("resync", first, 1000)
    assert zeros.actual == (f"1000 bytes that are none, resumed at {first + 1000}; as an entry header: bad-length, "
                            f"message_size at pos {first + 8} is 0, expected 14..1073741824 for magic 0")


@pytest.mark.parametrize("garbage, why", [
    # the 17 bytes read as a header reach 7 bytes into the next batch: its offset's low bytes and its size
    (b"\x07" * 10, "as an entry header (read on into the entry at {end}): bad-length, message_size at pos {size_at} "
                   "is 117899264, expected at most {left} (the bytes left in the input)"),
    (b"\x07" * 40, "as an entry header: unknown-magic, magic at pos {magic_at} is 7, expected 0, 1 or 2"),
])
def test_one_damaged_range_is_one_finding(garbage, why):
    """Bytes between two batches are one range and one finding, whose text says what they read as; the field it
    names may lie inside the batch after them, which is intact (no finding of its own points there)."""
    head, tail = v2_batch(0, [b"a"]), v2_batch(1, [b"b"])
    data = head + garbage + tail
    batches, findings = read_all(data)
    assert [batch.pos for batch in batches] == [0, len(head) + len(garbage)]
    (found,) = findings
    end = len(head) + len(garbage)
    assert (found.code, found.entry_pos, found.pos, found.size, found.field) == \
        ("resync", len(head), len(head), len(garbage), "entry")
    assert found.actual == f"{len(garbage)} bytes that are none, resumed at {end}; " + why.format(
        end=end, size_at=len(head) + 8, magic_at=len(head) + 16, left=len(data) - len(head) - 12)


def test_mixed_magic_in_one_segment():
    data = v1_message(0, b"old") + v1_message(1, b"older") + v2_batch(2, [b"new"])
    batches, findings = read_all(data, records=True)
    assert findings == []
    assert [(batch.magic, batch.base_offset) for batch in batches] == [(1, 0), (1, 1), (2, 2)]


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise_and_are_accounted_for(data):
    batches, findings = read_all(data, records=True)
    assert all(finding.code in CODES for finding in findings)
    assert_tiles(data, batches, findings)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SEGMENT) - 1), st.binary(min_size=1, max_size=40), st.booleans())
def test_a_mangled_segment_never_raises(position, patch, insert):
    data = SEGMENT[:position] + patch + SEGMENT[position + (0 if insert else len(patch)):]
    batches, findings = read_all(data, records=True)
    assert_tiles(data, batches, findings)
    # every batch reported intact really is one of ours, in the bytes its CRC covers
    for batch in batches:
        if batch.crc_valid and not batch.findings:
            assert data[batch.pos + 21:batch.pos + batch.size] in SEGMENT


def test_inner_message_crc_of_a_compressed_wrapper_is_checked():
    """CRC-32 covers every inner message of a wrapper too; damage there is named by its inner position."""
    import gzip
    import struct
    import zlib

    inner = b"".join(v1_message(n, b"inner-%d" % n) for n in range(3))
    damaged_inner = bytearray(inner)
    damaged_inner[len(inner) - 2] ^= 0x20          # a value byte of the last inner message
    value = gzip.compress(bytes(damaged_inner), mtime=0)
    body = struct.pack(">bbq", 1, 1, 1_600_000_000_000) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">qiI", 2, 4 + len(body), zlib.crc32(body)) + body
    batches, findings = read_all(wrapper, records=True)
    assert len(batches) == 1 and batches[0].crc_valid       # the wrapper itself is intact
    assert [record.crc_valid for record in batches[0].records] == [True, True, False]
    (finding,) = findings
    assert (finding.code, finding.field, finding.entry_pos) == ("crc-mismatch", "inner[2].crc", 0)
    assert finding.inner_pos == 2 * len(v1_message(0, b"inner-0")) + 16   # the inner message's magic byte


def test_v1_wrapper_offset_rules():
    """AbstractLegacyRecordBatch: absolute = wrapper - last inner + inner; 0 keeps them; below last is corrupt."""
    import gzip
    import struct
    import zlib

    inner = b"".join(v1_message(n, b"m") for n in range(3))   # relative offsets 0, 1, 2

    def wrapper(offset: int) -> bytes:
        value = gzip.compress(inner, mtime=0)
        body = struct.pack(">bbq", 1, 1, 5) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
        return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body

    for offset, offsets, codes in ((102, [100, 101, 102], []), (0, [0, 1, 2], ["wrapper-offset-zero"]),
                                   (1, [0, 1, 2], ["bad-wrapper-offset"])):
        batches, findings = read_all(wrapper(offset), records=True)
        assert [record.offset for record in batches[0].records] == offsets
        assert [finding.code for finding in findings] == codes


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_every_truncation_of_every_magic_is_a_finding_not_a_crash(magic):
    entry = v2_batch(0, [b"abc"]) if magic == 2 else _legacy(magic)
    for cut in range(1, len(entry)):
        batches, findings = read_all(entry[:cut], records=True)
        codes = [finding.code for finding in findings]
        # the first bytes of an entry at offset 0 are zeros, like a preallocated tail
        assert batches == [] and codes in (["truncated"], ["zero-tail"]), (cut, codes)
        assert codes == ["truncated"] or not any(entry[:cut])


def _legacy(magic: int) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    builder.append(0, timestamp=1_600_000_000_000 if magic else None, key=None, value=b"old")
    return bytes(builder.build())


# -- inputs that are no regular file -----------------------------------------------


def _through_a_fifo(tmp_path, data: bytes):
    """A named pipe with a writer feeding it ``data`` once (as `cat x > fifo &` would)."""
    import os
    import threading

    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as pipe:
            pipe.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return fifo, writer


@pytest.mark.parametrize("command", [["dump"], ["verify-crc"], ["verify-crc", "--deep"], ["hexdump-annotate", "--batch", "1"],
                                     ["repair-length"], ["salvage", "-o", "OUT"]])
def test_a_named_pipe_is_read_as_a_stream(command, kbatch, tmp_path):
    from .helpers import FIXTURES

    data = (FIXTURES / "damaged-bad-length.log").read_bytes()
    fifo, writer = _through_a_fifo(tmp_path, data)
    args = [str(tmp_path / "out.log") if arg == "OUT" else arg for arg in command]
    result = kbatch(*args[:1], str(fifo), *args[1:]) if command[0] == "salvage" else kbatch(*args, str(fifo))
    writer.join(timeout=10)
    # The lying length in the middle of the file is found (salvage mends it), so the pipe was read through.
    assert result.code == (0 if command[0] == "salvage" else 1), result.err
    assert "Illegal seek" not in result.err and "internal error" not in result.err and "out.log" not in result.err
    if command[0] == "salvage":
        assert len((tmp_path / "out.log").read_bytes()) == len(data)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
@pytest.mark.parametrize("command", [["dump"], ["verify-crc"], ["hexdump-annotate"], ["repair-length"],
                                     ["salvage", "-o", "OUT"], ["diff", "fixtures/v2-none.log"]])
def test_a_device_is_refused_clearly(device, command, kbatch, tmp_path):
    args = [str(tmp_path / "out.log") if arg == "OUT" else arg for arg in command]
    result = kbatch(*args[:1], device, *args[1:])
    assert result.code == 2 and f"cannot read {device}: a device, not a segment file" in result.err, result.err
    assert list(tmp_path.iterdir()) == []


# -- resync in bulk ---------------------------------------------------------------------


def _first_verified_by_brute_force(reader, start: int):
    return next((pos for pos in range(start, reader.size) if reader.recovery.verified_entry_at(pos)), None)


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=3000), st.lists(st.integers(0, 3000), max_size=3), st.integers(0, 50),
       st.randoms(use_true_random=False))
def test_resync_finds_the_first_entry_whose_crc_verifies(garbage, cuts, start, noise):
    """The bulk search (magic bytes found by the regex engine, CRCs of spans from one pass) finds exactly
    the position a check of every position would: in garbage, between real batches, with fake headers."""
    import io

    from kbatch.reading.reader import SegmentReader

    data = bytearray(garbage)
    for cut in sorted(cuts, reverse=True):   # real batches spliced in, and headers that only look like one
        batch = v2_batch(cut, [b"x" * (cut % 40)])
        data[cut:cut] = batch if cut % 3 else batch[:17] + noise.randbytes(20)
    reader = SegmentReader(io.BytesIO(bytes(data)))
    assert reader.recovery.resync(start) == _first_verified_by_brute_force(reader, start)


def test_span_crcs_from_prefixes_equal_the_crc_of_the_span():
    import os

    from kbatch.format.checksums import SpanCrc, crc32, crc32c

    data = os.urandom(200_000)
    for function in (crc32, crc32c):
        spans = SpanCrc(function)
        for start, end in ((0, 0), (0, 17), (5, 199_999), (65_536, 131_072), (77, 123_457)):
            assert spans.span(function(data[:start]), function(data[:end]), end - start) == function(data[start:end])


def test_resync_across_many_steps_of_its_crc_pass():
    """Candidates whose spans cross the pass's 64 KiB steps, and a real batch far into the garbage."""
    import io
    import random

    from kbatch.reading.reader import SegmentReader

    noise = random.Random(7)
    garbage = bytearray(noise.randbytes(300_000))
    for pos in range(1_000, 240_000, 9_973):   # fake headers claiming spans of up to ~200 KiB
        garbage[pos:pos + 17] = (b"\x00" * 8 + noise.randrange(26, 200_000).to_bytes(4, "big")
                                 + noise.randbytes(4) + bytes([noise.randrange(3)]))
    data = bytes(garbage[:250_000]) + v2_batch(9, [b"found"]) + bytes(garbage[250_000:])
    reader = SegmentReader(io.BytesIO(data))
    assert reader.recovery.resync(1) == _first_verified_by_brute_force(reader, 1) == 250_000


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6000), st.integers(0, 700)), max_size=6), st.integers(0, 40),
       st.integers(0, 2**32))
def test_candidate_search_passes_over_zero_runs_exactly(holes, start, seed):
    """The candidate search passes over long zero runs whole; it still finds every position a check of each
    one finds, at a run's edges too (fake headers and real batches touching the zeros)."""
    import io

    import random

    from kbatch.reading.reader import SegmentReader

    noise = random.Random(seed)
    data = bytearray(noise.randbytes(6000))
    for at, size in holes:
        data[at:at + size] = bytes(size)
        end = min(at + size, len(data))
        # A header across the run's end whose size field is its last zeros and one byte after (the last place
        # an entry can start there), or one starting anywhere near the end.
        edge = end - 11 if noise.random() < 0.5 else end - noise.randrange(0, 20)
        header = noise.randbytes(8) + noise.randrange(0, 3000).to_bytes(4, "big") if edge < end - 11 else \
            bytes(11) + bytes([noise.randrange(14, 256)])
        data[edge:edge + 17] = header + noise.randbytes(4) + bytes([noise.randrange(3)])
    data[3000:3000] = v2_batch(5, [b"x"])
    reader = SegmentReader(io.BytesIO(bytes(data)))
    recovery = reader.recovery
    assert list(recovery.plausible_starts(start, reader.size, reader.size)) == \
        [pos for pos in range(start, reader.size) if recovery.plausible_entry_at(pos, zeros_too=False)]


def _around_a_zero_hole(hole: int) -> tuple[bytes, int]:
    before = v2_batch(0, [b"before", b"the", b"hole"])
    return before + bytes(hole) + v2_batch(3, [b"after"]) + v2_batch(4, [b"it"]), len(before)


@pytest.mark.parametrize("hole", [
    5 * 1024 * 1024 + 7,                # several windows of the search and of the CRC pass
    2 * 1024 * 1024 - 1,                # the batch after it starting at the first search window's edge ...
    2 * 1024 * 1024,                    # ... one past it
    2 * 1024 * 1024 - 9,                # ... and its header across the edge
])
def test_a_zero_hole_spanning_windows_is_one_damaged_range(hole):
    """Recovery reads a hole a window at a time; what it finds is the same as for a small hole: one range
    that is no entry, up to the next batch, and why its first bytes are none."""
    data, at = _around_a_zero_hole(hole)
    batches, findings = read_all(data)
    assert [batch.base_offset for batch in batches] == [0, 3, 4]
    assert [(f.code, f.entry_pos, f.pos, f.size, f.field, f.expected, f.actual) for f in findings] == [
        ("resync", at, at, hole, "entry", "a valid log entry",
         f"{hole} bytes that are none, resumed at {at + hole}; as an entry header: bad-length, message_size at pos "
         f"{at + 8} is 0, expected 14..1073741824 for magic 0")]
    assert_tiles(data, batches, findings)


def test_a_length_that_lies_about_an_entry_larger_than_a_window():
    """The true end of an entry of several windows is proved by a CRC carried a window at a time."""
    value = bytes(range(256)) * 12_000   # about 3 MiB
    big = bytearray(v2_batch(0, [value]))
    true_length = int.from_bytes(big[8:12], "big")
    big[8:12] = (true_length - 1000).to_bytes(4, "big")
    data = bytes(big) + v2_batch(2, [b"next"])
    batches, findings = read_all(data, records=True)
    assert [batch.base_offset for batch in batches] == [0, 2]
    assert [record.value for record in batches[0].records] == [value]
    assert [(f.code, f.pos, f.expected, f.actual) for f in findings] == \
        [("bad-length", 8, f"{true_length} (the CRC verifies with it)", str(true_length - 1000))]


def test_an_entry_larger_than_a_window_verifies_only_with_all_its_bytes():
    import io

    from kbatch.reading.reader import SegmentReader

    big = bytearray(v2_batch(0, [bytes(range(256)) * 12_000]))
    reader = SegmentReader(io.BytesIO(bytes(big)))
    assert reader.recovery.verified_entry_at(0)
    big[-1] ^= 1   # the last byte, in the last window the CRC reads
    reader = SegmentReader(io.BytesIO(bytes(big)))
    assert not reader.recovery.verified_entry_at(0)


# -- bombs --------------------------------------------------------------------------------


def _wrapper_bomb(messages: int, magic: int = 1) -> bytes:
    """One gzip wrapper holding ``messages`` minimal inner messages (offsets 0..n-1, each CRC valid)."""
    import gzip
    import struct
    import zlib

    from kbatch.ops.encode import encode_document

    body = bytes([magic, 0]) + (struct.pack(">q", 1_700_000_000_000) if magic else b"") + b"\xff\xff\xff\xff" * 2
    crc = zlib.crc32(body)
    inner = b"".join(struct.pack(">qiI", offset, 4 + len(body), crc) + body for offset in range(messages))
    value = gzip.compress(inner, mtime=0)
    payload = "ffffffff" + len(value).to_bytes(4, "big").hex() + value.hex()
    return encode_document({"entries": [{"magic": magic, "codec": "gzip", "stored_offset": 1000 + messages - 1,
                                         "max_timestamp": 1_700_000_000_000, "payload": {"hex": payload}}]})


def test_a_wrapper_bomb_keeps_a_bounded_number_of_records_and_says_so(monkeypatch):
    from kbatch.reading import legacy

    monkeypatch.setattr(legacy, "MAX_HELD", 1000)
    batches, findings = read_all(_wrapper_bomb(3000), records=True)
    (batch,) = batches
    assert batch.count == 3000 and len(batch.records) == 1000
    # Offsets stay exact: the wrapper's offset is its last inner message's.
    assert (batch.base_offset, batch.last_offset) == (1000, 3999)
    assert [record.offset for record in batch.records[:2]] == [1000, 1001]
    kept = [finding for finding in batch.findings if finding.code == "not-all-kept"]
    assert len(kept) == 1 and "3000 inner messages" in kept[0].actual and not batch.is_damaged


def test_findings_inside_a_wrapper_are_bounded_too(monkeypatch):
    from kbatch.reading import legacy

    monkeypatch.setattr(legacy, "MAX_HELD", 100)
    # Wrapper magic 1, inner messages magic 0: every one of them is an inner-magic-mismatch.
    mixed = read_all(_mismatched_wrapper(500), records=True)[0][0]
    mismatches = [finding for finding in mixed.findings if finding.code == "inner-magic-mismatch"]
    kept = [finding for finding in mixed.findings if finding.code == "not-all-kept"]
    assert len(mismatches) == 100 and any("500 findings" in finding.actual for finding in kept)


def _mismatched_wrapper(messages: int) -> bytes:
    """A magic-1 wrapper whose inner messages are magic 0."""
    import gzip
    import struct
    import zlib

    from kbatch.ops.encode import encode_document

    body = bytes([0, 0]) + b"\xff\xff\xff\xff" * 2
    crc = zlib.crc32(body)
    inner = b"".join(struct.pack(">qiI", offset, 4 + len(body), crc) + body for offset in range(messages))
    value = gzip.compress(inner, mtime=0)
    payload = "ffffffff" + len(value).to_bytes(4, "big").hex() + value.hex()
    return encode_document({"entries": [{"magic": 1, "codec": "gzip", "stored_offset": messages - 1,
                                         "max_timestamp": 1_700_000_000_000, "payload": {"hex": payload}}]})


def _record_count_bomb(records: int, key_length: int = -1) -> bytes:
    """One gzip v2 batch of ``records`` minimal 7-byte records, all with offsetDelta 0 (a true count)."""
    import gzip

    from kbatch.ops.encode import encode_document

    # length 6 (zigzag 12), attributes, timestampDelta 0, offsetDelta 0, key length (null), value null, 0 headers
    record = bytes([12, 0, 0, 0, (-2 * key_length - 1) & 0xFF, 1, 0])
    value = gzip.compress(record * records, mtime=0)
    return encode_document({"entries": [{"codec": "gzip", "count": records, "last_offset_delta": records - 1,
                                         "payload": {"hex": value.hex()}}]})


def test_a_record_count_bomb_keeps_a_bounded_number_of_findings_and_says_so(tmp_path, capsys, monkeypatch):
    """(And with the pure build: tests/test_recordwalk.py runs this again with KBATCH_PURE_PYTHON=1.)"""
    import json

    import kbatch.reading.invariants
    import kbatch.reading.records
    import kbatch.kernels.recordwalk

    from .helpers import run_kbatch

    monkeypatch.setattr(kbatch.kernels.recordwalk, "MAX_HELD", 100)
    monkeypatch.setattr(kbatch.reading.records, "MAX_HELD", 100)
    monkeypatch.setattr(kbatch.reading.invariants, "MAX_HELD", 100)
    path = tmp_path / "bomb.log"
    path.write_bytes(_record_count_bomb(3000, key_length=-2))
    result = run_kbatch(["verify-crc", "--deep", "--format", "jsonl", str(path)], capsys, monkeypatch)
    lines = [json.loads(line) for line in result.out.splitlines()]
    codes = [line["code"] for line in lines if line.get("type") != "summary" and "code" in line]
    # Every record is checked (2,999 offsets that do not increase, 3,000 key lengths of -2), the first 100
    # of each are listed, and one warning each counts the rest.
    assert codes.count("offset-delta-order") == 100 and codes.count("negative-length") == 100
    kept = sorted(line["actual"] for line in lines if line.get("code") == "not-all-kept")
    assert kept == ["2899 more; checked and counted, not listed", "2900 more; checked and counted, not listed"]
    (summary,) = [line for line in lines if line.get("type") == "summary"]
    assert summary["record_count"] == 3000 and result.code == 1


def test_a_wrapper_bomb_is_written_record_by_record_as_one_json_would_write_it(tmp_path):
    """dump --records writes a wrapper's records one at a time, and the line is json.dumps's, byte for byte."""
    import json

    from click.testing import CliRunner

    from kbatch.cli import cli
    from kbatch.output.jsonout import batch_dict

    path = tmp_path / "bomb.log"
    path.write_bytes(_wrapper_bomb(3000))
    (batch,), _ = read_all(path.read_bytes(), records=True)
    for output_format in ("jsonl", "json"):
        result = CliRunner().invoke(cli, ["dump", "--records", "--format", output_format, str(path)])
        assert result.exit_code == 0, result.output   # no damage: a bomb is Kafka's to refuse, not a broken file
        out = result.output
        whole = batch_dict(batch, "auto", with_records=True)
        if output_format == "jsonl":
            assert out.splitlines()[0] == json.dumps({"file": str(path), **whole}, ensure_ascii=False)
        else:
            entry = json.loads(out)["files"][0]["entries"][0]
            assert list(entry)[-2:] == ["records", "payload"]   # the json form keeps the bytes, after the records
            assert {key: value for key, value in entry.items() if key != "payload"} == whole
    assert len(whole["records"]) == 3000


def test_a_wrapper_hands_back_its_inflated_pages_once_read():
    """The inner set is read from the decompressor's buffer, which is released right after (not at the next batch)."""
    from kbatch.format.codecs import Decompressor

    released = []

    class Watching(Decompressor):
        def release(self):
            released.append(True)
            super().release()

    import io

    from kbatch.reading.reader import ReadOptions, SegmentReader

    reader = SegmentReader(io.BytesIO(_wrapper_bomb(10)), ReadOptions(records=True), decompressor=Watching())
    (batch,) = list(reader)
    assert batch.count == 10 and released == [True]


@pytest.mark.parametrize("output_format", ["json", "jsonl"])
def test_a_record_count_bomb_is_dumped_in_bounded_memory(output_format, tmp_path, capsys, monkeypatch):
    """Every record is listed, with no warning: JSON Lines from the columns a chunk at a time, json (as table
    and dumplog) from Record objects made a chunk at a time (tests/test_record_stream.py)."""
    import json

    import kbatch.reading.records

    from .helpers import run_kbatch

    monkeypatch.setattr(kbatch.reading.records, "MAX_HELD", 100)
    path = tmp_path / "bomb.log"
    path.write_bytes(_record_count_bomb(3000))
    result = run_kbatch(["dump", "--records", "--format", output_format, str(path)], capsys, monkeypatch)
    if output_format == "jsonl":
        (batch,) = [json.loads(line) for line in result.out.splitlines() if '"type": "batch"' in line]
    else:
        (batch,) = json.loads(result.out)["files"][0]["entries"]
    kept = [finding for finding in batch["findings"] if finding["code"] == "not-all-kept"]
    assert len(batch["records"]) == 3000 and not kept
    assert result.code == 0


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(SEGMENT) - 1), st.binary(min_size=1, max_size=40))
def test_every_finding_of_a_deep_verify_lies_in_the_input(position, patch):
    import io

    from kbatch.reading.summary import FileSummary
    from kbatch.ops.verify import VerifyOptions, verify_stream

    data = SEGMENT[:position] + patch + SEGMENT[position + len(patch):]
    for finding in verify_stream(io.BytesIO(data), FileSummary("x", len(data)), VerifyOptions(deep=True)):
        assert finding.code in CODES
        assert 0 <= finding.pos <= finding.pos + finding.size <= len(data), finding
        assert 0 <= finding.entry_pos <= len(data), finding
