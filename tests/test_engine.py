"""The one walk engine (kbatch.walk.engine): the CRC, deep and listing runs are three uses of it.

Each command's walk goes through :class:`kbatch.walk.engine.Walk` with its own run, and the CRC run
(``verify-crc`` over what the whole-file pass leaves: a damaged file, a range, a stream) says exactly what
the full reader alone says.
"""

from __future__ import annotations

import io
import random

import pytest

import kbatch.walk.crcrun
import kbatch.walk.engine as engine
from kbatch.ops.verify import VerifyOptions, verify_stream
from kbatch.reading.summary import FileSummary
from kbatch.walk.crcrun import CrcRun
from kbatch.walk.deep import DeepRun
from kbatch.kernels.recordwalk import is_compiled
from kbatch.walk.listing import ListRun

from .helpers import fixture_id, fixture_paths, run_kbatch
from .test_fastdeep import segment

BATCHES = segment(6)
DATA = b"".join(BATCHES)


@pytest.fixture
def walks(monkeypatch):
    """Every Walk that runs, as (its run's class, batches it took)."""
    seen = []
    items = engine.Walk.items

    def counted(walk, start, stop, after_run=None):
        yield from items(walk, start, stop, after_run)
        seen.append(type(walk.run))

    monkeypatch.setattr(engine.Walk, "items", counted)
    return seen


def test_each_command_walks_with_its_run_through_the_one_engine(tmp_path, capsys, monkeypatch, walks):
    damaged = bytearray(DATA)
    damaged[len(BATCHES[0]) + 30] ^= 0xFF   # the second batch's CRC fails: the whole-file pass hands over
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(damaged))
    for args, run in ((["verify-crc"], CrcRun), (["verify-crc", "--deep"], DeepRun),
                      # the listing run writes with the compiled writer: the pure build lists through the reader
                      (["dump", "--format", "jsonl"], ListRun if is_compiled() else type(None))):
        walks.clear()
        run_kbatch([*args, "--jobs", "1", str(path)], capsys, monkeypatch, expect=1)
        assert walks == [run], args


class NoRun(CrcRun):
    """The full reader alone: a run that never takes a batch."""

    def walk(self, window, pos, stop):
        return pos


def verify(data: bytes, run, **ranges):
    """(findings, counts, batches the run took) of verify_stream without --deep, with ``run``."""
    runs = []

    def make_run(*args):
        runs.append(run(*args))
        return runs[-1]

    summary = FileSummary("00000000000000000000.log", len(data))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kbatch.walk.crcrun, "CrcRun", make_run)
        findings = [finding.as_dict() for finding in verify_stream(io.BytesIO(data), summary, VerifyOptions(),
                                                                   **ranges)]
    return findings, (summary.batches, summary.records, summary.batch_bytes, summary.errors), runs[0].taken


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_the_crc_run_says_what_the_full_reader_says_on_every_fixture(path):
    data = path.read_bytes()
    assert verify(data, CrcRun)[:2] == verify(data, NoRun)[:2]


def test_the_crc_run_takes_the_fixtures_clean_v2_batches():
    assert sum(verify(path.read_bytes(), CrcRun)[2] for path in fixture_paths() if "v2" in path.name) > 0


def test_the_crc_run_takes_the_clean_batches_and_hands_over_the_damaged_one():
    damaged = bytearray(DATA)
    damaged[len(BATCHES[0]) + 30] ^= 0xFF
    findings, counts, taken = verify(bytes(damaged), CrcRun)
    assert (findings, counts) == verify(bytes(damaged), NoRun)[:2]
    assert [finding["code"] for finding in findings] == ["crc-mismatch"]
    assert taken == len(BATCHES) - 1   # every batch but the damaged one, which the full reader read


def test_the_crc_run_over_random_damage_and_ranges_says_what_the_full_reader_says():
    rng = random.Random(33)
    for _ in range(60):
        damaged = bytearray(DATA)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.3:
            damaged = damaged[:rng.randrange(len(damaged))]
        start = 0 if rng.random() < 0.5 else len(BATCHES[0])
        stop = rng.choice([None, len(DATA) // 2])
        assert verify(bytes(damaged), CrcRun, start=start, stop=stop)[:2] == \
            verify(bytes(damaged), NoRun, start=start, stop=stop)[:2]


def _findings_and_counts(walk) -> tuple:
    summary, findings = walk()
    return ([finding.as_dict() for finding in findings],
            (summary.batches, summary.records, summary.batch_bytes, summary.errors, dict(summary.findings)))


def _verify_file(path, jobs=1):
    summary = FileSummary(str(path), path.stat().st_size)
    with open(path, "rb", buffering=0) as stream:
        return summary, list(kbatch.ops.verify.verify_file(str(path), stream, summary, VerifyOptions(jobs=jobs)))


def _from_the_start(path):
    summary = FileSummary(str(path), path.stat().st_size)
    with open(path, "rb", buffering=0) as stream:
        return summary, list(verify_stream(stream, summary, VerifyOptions()))


def test_the_whole_file_pass_hands_the_rest_to_parts_past_damage(tmp_path, monkeypatch):
    """verify-crc's walk over a whole file goes on in its own process up to damage, then hands the rest to
    parts from where the CRC run went on past it; what comes out is what one walk from the start says."""
    import kbatch.reading.window as window
    import kbatch.walk.parts as parts

    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    monkeypatch.setattr(window, "CHUNK", 600)   # a window of two or three batches: the run goes on a few at a time
    damaged = bytearray(DATA)
    damaged[len(BATCHES[0]) + 30] ^= 0xFF   # the second batch
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(damaged))
    starts = []
    in_parts = kbatch.ops.verify.verify_in_parts
    monkeypatch.setattr(kbatch.ops.verify, "verify_in_parts",
                        lambda *args, **options: starts.append(options["start"]) or in_parts(*args, **options))
    assert _findings_and_counts(lambda: _verify_file(path, jobs=3)) == \
        _findings_and_counts(lambda: _from_the_start(path))
    assert starts == [sum(map(len, BATCHES[:3]))]   # the run took the third batch (all the window held): parts


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_the_hand_over_says_what_one_walk_says_on_every_fixture(path, tmp_path):
    rng = random.Random(path.name)
    data = path.read_bytes()
    for attempt in range(4):
        damaged = bytearray(data)
        if attempt and damaged:
            for _ in range(attempt):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        copy = tmp_path / f"{attempt}-{path.name}"
        copy.write_bytes(bytes(damaged))
        assert _findings_and_counts(lambda copy=copy: _verify_file(copy)) == \
            _findings_and_counts(lambda copy=copy: _from_the_start(copy)), attempt


def test_the_hand_over_in_parts_says_what_one_walk_says(tmp_path, monkeypatch):
    import kbatch.walk.parts as parts

    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    damaged = bytearray(DATA)
    damaged[len(BATCHES[0]) + 30] ^= 0xFF
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(damaged))
    assert _findings_and_counts(lambda: _verify_file(path, jobs=3)) == \
        _findings_and_counts(lambda: _from_the_start(path))


def test_entries_and_each_hand_on_every_entry_of_the_range_once():
    """entries(): the reader's items for [start, stop), a run taking what it has nothing to say about; each():
    a batch to one hand, a damaged range to the other, and the first true answer ends it."""
    from kbatch.reading.reader import SegmentReader
    from kbatch.reading.summary import FileSummary

    second, third = len(BATCHES[0]), len(BATCHES[0]) + len(BATCHES[1])   # offsets 0, 3, 7, 12, 18, 25
    data = DATA + b"\x01" * 20   # 20 bytes that are no entry: one damaged range at the end
    seen = []

    def on_batch(batch):
        seen.append(("batch", batch.base_offset))

    def on_region(finding):
        seen.append((finding.code, finding.pos))

    reader = SegmentReader(io.BytesIO(data))
    assert engine.each(engine.entries(reader), on_batch, on_region) is None
    assert seen[:6] == [("batch", offset) for offset in (0, 3, 7, 12, 18, 25)]
    assert seen[6:] and all(pos >= len(DATA) for _, pos in seen[6:])

    seen.clear()
    reader = SegmentReader(io.BytesIO(data))
    assert engine.each(engine.entries(reader, second, third + 1), on_batch, on_region) is None
    assert seen == [("batch", 3), ("batch", 7)]   # the entries starting in [start, stop)

    seen.clear()
    run = CrcRun(FileSummary("x.log", len(DATA)), 1 << 20)
    reader = SegmentReader(io.BytesIO(DATA))
    assert engine.each(engine.entries(reader, run=run), on_batch, on_region) is None
    assert seen == [] and run.taken == 6   # the run took them all: nothing for the reader to hand out

    reader = SegmentReader(io.BytesIO(DATA))
    answer = engine.each(engine.entries(reader), lambda batch: batch.base_offset == 7 and "stop at 7", on_region)
    assert answer == "stop at 7"
