"""verify-crc --deep says the same with its fast run over data batches as with the full reader alone.

:class:`kbatch.walk.deep.DeepRun` walks the v2 data batches without an object each and hands every other
entry, and every batch that breaks a rule, to the full reader.  The oracle is verify_stream with the run
taken out: the same findings in the same order, the same counts, on every fixture, every rule, damage
and random header changes.  And the run must take the plain batches (or it would be an empty promise).
Every test runs twice: with the compiled loop (kbatch.kernels.cleanruns.CleanBatches) and with its plain-Python
twin.  The batches are built by kafka-python's builder (an encoder that is not ours).
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

import kbatch.walk.deep
import kbatch.walk.parts
from kbatch.format.checksums import crc32c
from kbatch.walk.deep import DeepRun
from kbatch.format.layouts import BATCH_CRC_START, BATCH_HEADER
from kbatch.reading.window import CHUNK
from kbatch.files.inputs import segment_base_offset
from kbatch.reading.summary import FileSummary
from kbatch.ops.verify import VerifyOptions, verify_file, verify_stream

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


class NoRun(DeepRun):
    """The full reader alone: a run that never walks a batch."""

    def walk(self, window, pos, stop):
        return pos


def verify(data: bytes, name: str = "00000000000000000000.log", *, fast: bool = True, **ranges):
    """(findings as tuples, the summary's counts, batches the run walked) of verify_stream --deep."""
    runs = []

    def make_run(*args):
        runs.append((DeepRun if fast else NoRun)(*args))
        return runs[-1]

    summary = FileSummary(name, len(data))
    with mock.patch.object(kbatch.walk.deep, "DeepRun", make_run):
        findings = [(finding.code, finding.pos, finding.size, finding.field, finding.expected, finding.actual,
                     finding.inner_pos)
                    for finding in verify_stream(io.BytesIO(data), summary, VerifyOptions(deep=True),
                                                 segment_base=segment_base_offset(name), **ranges)]
    return findings, summary.as_dict(), sum(run.walked for run in runs)


def assert_same(data: bytes, name: str = "00000000000000000000.log") -> tuple[list, int]:
    """The run changes nothing; the findings and how many batches it walked."""
    findings, counts, walked = verify(data, name)
    assert (findings, counts) == verify(data, name, fast=False)[:2]
    return findings, walked


# -- what it walks -----------------------------------------------------------------


def test_a_plain_segment_is_walked_but_its_first_batch():
    findings, walked = assert_same(b"".join(segment(5)))
    assert findings == [] and walked == 4   # the first batch of a walk is always the full reader's
    _, counts, _ = verify(b"".join(segment(5)))
    assert (counts["batch_count"], counts["record_count"]) == (5, 3 + 4 + 5 + 6 + 7)


def test_a_rule_added_to_the_full_reader_alone_stops_the_fast_run(monkeypatch):
    """Which rules a v2 batch is held to is written once (kbatch.reading.invariants.V2_BATCH_RULES): a new
    rule the compiled loop does not check turns the run off, so the full reader meets every batch that
    breaks it, rather than the run taking those batches unseen."""
    import kbatch.reading.invariants as invariants
    from kbatch.format.findings import Finding

    def _odd_base_offset(batch):   # a made-up rule
        if batch.base_offset % 2:
            yield Finding("reserved-bits", batch.pos, batch.pos, 8, "base_offset", "even", str(batch.base_offset))

    data = b"".join(segment(5))   # base offsets 0, 3, 7, 12, 18
    assert verify(data)[2] == 4
    monkeypatch.setattr(invariants, "V2_BATCH_RULES", invariants.V2_BATCH_RULES + (_odd_base_offset,))
    findings, counts, walked = verify(data)
    assert walked == 0
    assert [(finding[0], finding[3], finding[5]) for finding in findings] == [("reserved-bits", "base_offset", "3"),
                                                                            ("reserved-bits", "base_offset", "7")]
    assert counts["batch_count"] == 5


def test_a_zero_tail_is_left_to_the_full_reader():
    findings, walked = assert_same(b"".join(segment(3)) + bytes(300))
    assert [finding[0] for finding in findings] == ["zero-tail"] and walked == 2


def test_idempotent_and_transactional_data_batches_are_walked():
    batches = [v2_batch(0, 3, producer=(7, 0, 0)), v2_batch(3, 2, producer=(7, 0, 3)),
               v2_batch(5, 2, producer=(7, 0, 5), transactional=True)]
    assert assert_same(b"".join(batches)) == ([], 2)


def batches_past_two_windows() -> list[bytes]:
    """v2 batches of 40 records of 900-byte values, more than two of the reader's windows of them."""
    batches, offset = [], 0
    while sum(map(len, batches)) < 2 * CHUNK + 100_000:
        batches.append(v2_batch(offset, 40, value_size=900))
        offset += 40
    return batches


def test_batches_across_windows_keep_the_offset_order():
    """More than one window of the reader: the window slides to hold the batch its end cuts, and the run
    walks that one too."""
    batches = batches_past_two_windows()
    findings, walked = assert_same(b"".join(batches))
    assert findings == [] and walked == len(batches) - 1   # all but the first (no offset before it)
    late = len(batches) - 3   # past the first windows: an overlap there is still seen
    overlapping = batches[:late] + [set_field(batches[late], "base_offset", field(batches[late], "base_offset") - 1)]
    findings, _ = assert_same(b"".join(overlapping + batches[late + 1:]))
    assert [finding[0] for finding in findings] == ["offset-overlap", "offset-gap"]   # (its last offset moved)


def test_a_batch_larger_than_a_window_is_the_full_readers():
    """A batch past a chunk's size (the window does not slide for it: a size field of damage could claim a
    gigabyte) is read by the full reader; the run takes the batches after it."""
    batches = [v2_batch(0, 3), v2_batch(3, 1, value_size=CHUNK + 1000), v2_batch(4, 3), v2_batch(7, 3)]
    findings, walked = assert_same(b"".join(batches))
    assert findings == [] and walked == 2


def test_a_range_of_a_file_walks_the_batches_starting_in_it():
    batches = segment(6)
    data = b"".join(batches)
    start, stop = len(batches[0]), len(batches[0]) + len(batches[1]) + 1   # batches 1 and 2 start in it
    findings, counts, walked = verify(data, start=start, stop=stop)
    assert (findings, counts) == verify(data, fast=False, start=start, stop=stop)[:2]
    assert counts["batch_count"] == 2 and walked == 1


# -- what it leaves to the full reader --------------------------------------------------


@pytest.mark.parametrize("change, codes", [
    (("attributes", 0x80), ["reserved-bits"]),
    (("producer_id", 7), ["inconsistent-producer-fields"]),  # a producerId, baseSequence -1: LogValidator refuses it
    (("base_sequence", 0), []),     # producerId -1, epoch -1, sequence 0: how CoordinatorRuntime builds batches
    (("producer_epoch", 0), []),    # producerId -1 and epoch 0 (kafkajs): only producerId decides
    # The batch ends at its base offset + 1, so the next one starts after a gap.
    (("last_offset_delta", 1), ["last-offset-delta-mismatch", "offset-gap"]),
    (("max_timestamp", 1), ["max-timestamp-mismatch"]),
    (("records_count", 99), ["records-count-mismatch"]),
    (("records_count", -1), ["records-count-mismatch", "trailing-bytes"]),   # no record walked: all left over
    (("attributes", 0x10), ["transactional-without-producer"]),
    (("attributes", 0x20), ["bad-control-record"] * 5),     # a control batch: its 5 records are no markers
    (("attributes", 0x08), []),                              # LogAppendTime: maxTimestamp is the broker's
    # Offsets 2..6 after 3..6, then 12 after 6 (not under the CRC).
    (("base_offset", 2), ["offset-overlap", "offset-gap"]),
    # 40..44 between 3..6 and 12..17: it is out of line, once; the gap to it is its doing, and 7..11, missing
    # without it, are as many offsets as it holds: its own.
    (("base_offset", 40), ["offset-outlier"]),
    # 40..43 (its last offset delta one short): 7..11 are one offset more than it holds, a gap told with it.
    (("base_offset", 40, "last_offset_delta", 3), ["last-offset-delta-mismatch", "offset-outlier", "offset-gap"]),
    (("crc", 1), ["crc-mismatch"]),
])
def test_a_batch_that_breaks_a_rule_is_reported_as_the_full_reader_reports_it(change, codes):
    batches = segment(4)
    for name, value in zip(change[::2], change[1::2]):
        batches[2] = set_field(batches[2], name, value, fix_crc=name != "crc")
    findings, walked = assert_same(b"".join(batches))
    assert [finding[0] for finding in findings] == codes
    # Walked: all but the first batch of the walk and the changed one; the batch after the changed one too
    # where the change moved the changed batch's last offset (it then overlaps or leaves a gap).
    moved = bool({"base_offset", "last_offset_delta"} & set(change))
    assert walked == 3 - bool(codes) - moved


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_compressed_batches_are_walked_inflated_and_a_codec_error_goes_to_the_full_reader(codec):
    batches = segment(3, codec=codec)
    assert assert_same(b"".join(batches)) == ([], 2)
    garbled = bytearray(batches[1])
    garbled[BATCH_HEADER.size + 2:] = bytes(len(garbled) - BATCH_HEADER.size - 2)   # inflates to nothing
    findings, walked = assert_same(batches[0] + set_field(bytes(garbled), "crc", 0) + batches[2])
    assert findings and walked == 1


def test_a_compressed_batch_that_inflates_past_the_limit_goes_to_the_full_reader():
    data = b"".join(segment(3, codec=1, value_size=4000))
    options = VerifyOptions(deep=True, decompressed_limit=18_000)   # the third batch's ~20 KB, not the others'
    found = []
    for fast in (True, False):
        with mock.patch.object(kbatch.walk.deep, "DeepRun", DeepRun if fast else NoRun):
            found.append([finding.code for finding in verify_stream(io.BytesIO(data), FileSummary("x", len(data)),
                                                                    options)])
    assert found[0] == found[1] == ["decompress-too-large"]


def test_damaged_records_go_to_the_full_reader():
    batches = segment(3)
    record = bytearray(batches[1])
    record[BATCH_HEADER.size] = 0x7F          # the first record's length varint: far past the batch
    findings, _ = assert_same(batches[0] + set_field(bytes(record), "crc", 0) + batches[2])   # CRC made to match
    assert findings
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for offset_delta in (0, 2, 1, 3):   # records out of order, each decoding fine
        builder.append(offset_delta, timestamp=1, key=b"k", value=b"v", headers=[])
    unordered = set_field(bytes(builder.build()), "base_offset", 3)
    findings, walked = assert_same(batches[0] + unordered + set_field(batches[2], "base_offset", 7))
    assert [finding[0] for finding in findings] == ["offset-delta-order"] and walked == 1
    trailing = set_field(batches[1] + b"\x00\x00", "batch_length", field(batches[1], "batch_length") + 2)
    findings, walked = assert_same(batches[0] + trailing + batches[2])   # every record decodes, bytes are left
    assert [finding[0] for finding in findings] == ["trailing-bytes"] and walked == 1


def test_offsets_outside_the_segment_named_range_go_to_the_full_reader():
    data = b"".join(segment(3, first_offset=10))
    assert assert_same(data, "00000000000000000010.log") == ([], 2)
    findings, walked = assert_same(data, "00000000000000000011.log")          # below the name's base
    assert findings and walked == 2                                             # (only the first batch)
    far = b"".join(segment(3, first_offset=2**31 + 5))
    findings, walked = assert_same(far, "00000000000000000000.log")            # beyond base + 2^31-1
    assert [finding[0] for finding in findings] == ["beyond-segment-range"] * 3 and walked == 0
    assert assert_same(far, "not-a-segment-name.log") == ([], 2)


def random_segments(values: int) -> dict:
    """Strategies for changed_segment's batches and header changes (values in -values..values-1), and a tail."""
    return {"batches": st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40)), min_size=1, max_size=5),
            "changes": st.lists(st.tuples(st.integers(0, 4), st.sampled_from(BATCH_HEADER.names),
                                          st.integers(-values, values - 1), st.booleans()), max_size=3),
            "tail": st.sampled_from([b"", bytes(30), b"\x01" * 20])}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**random_segments(2**31))
def test_the_same_as_the_full_reader_on_random_batches_and_header_changes(batches, changes, tail):
    assert_same(changed_segment(batches, changes) + tail)


def changed_segment(batches: list[tuple[int, int]], changes: list[tuple[int, str, int, bool]]) -> bytes:
    """v2 batches of (count, value size), then header changes (batch index, field, value wrapped into the
    field's range, whether the CRC is fixed after it); a batch_length change is a few bytes off."""
    built, offset = [], 0
    for count, value_size in batches:
        built.append(v2_batch(offset, count, value_size=value_size))
        offset += count
    for index, name, value, fix_crc in changes:
        index %= len(built)
        bits = 8 * struct.calcsize(FORMAT[name])
        half = 2**(bits - 1) if FORMAT[name][-1].islower() else 0    # signed fields: -half .. half-1
        value = (value + half) % 2**bits - half                          # wrapped into the field's range
        if name == "batch_length":
            value = field(built[index], name) + value % 5 - 2             # a few bytes off: a length that lies
        built[index] = set_field(built[index], name, value, fix_crc=fix_crc)
    return b"".join(built)


@pytest.mark.parametrize("path", sorted(set(fixture_paths()) | set(FIXTURES.rglob("*.log"))), ids=fixture_id)
def test_the_same_as_the_full_reader_on_every_fixture(path: Path):
    name = path.name if path.suffix == ".log" else "vector.log"
    assert_same(path.read_bytes(), str(path.parent / name))


def test_the_fixtures_plain_batches_are_walked():
    """The agreement above is no empty promise: the shipped segments' clean batches take the run."""
    walked = sum(verify(path.read_bytes(), str(path))[2] for path in sorted(FIXTURES.rglob("*.log")))
    assert walked >= 50, walked


def test_a_large_file_read_in_parts_says_the_same(tmp_path: Path, monkeypatch):
    """verify_in_parts: each child's part starts with a full-reader batch, checked where the parts meet."""
    monkeypatch.setattr(kbatch.walk.parts, "PART_MIN_SIZE", 1 << 20)
    batches, offset = [], 0
    while sum(map(len, batches)) < 3 << 20:
        batches.append(v2_batch(offset, 40, value_size=900))
        offset += 40
    size = sum(map(len, batches))
    starts = [sum(map(len, batches[:index])) for index in range(len(batches))]
    second = next(index for index, start in enumerate(starts) if start >= size // 3)   # the second part's first
    for index in range(second, len(batches)):   # overlapping the batch before it, where the parts meet
        batches[index] = set_field(batches[index], "base_offset", field(batches[index], "base_offset") - 5)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    results = []
    for jobs in (1, 3):
        summary = FileSummary(str(path), path.stat().st_size)
        with open(path, "rb") as stream:
            results.append(([(finding.code, finding.pos) for finding in
                             verify_file(str(path), stream, summary, VerifyOptions(deep=True, jobs=jobs))],
                            summary.as_dict()))
    assert results[0] == results[1]
    assert [code for code, _ in results[0][0]] == ["offset-overlap"]
