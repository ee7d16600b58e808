"""The fuzz targets (tests/fuzz/fuzz_kbatch.py) hold on every fixture, on mutations of them, and on every
input the fuzzer once crashed with (tests/fuzz/regressions/)."""

from __future__ import annotations

import importlib.util
import random

import pytest

from .helpers import ROOT, fixture_id, fixture_paths

pytest.importorskip("atheris")
_spec = importlib.util.spec_from_file_location("fuzz_kbatch", ROOT / "tests" / "fuzz" / "fuzz_kbatch.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

BYTE_TARGETS = [name for name in fuzz.TARGETS if name != "encode-json" and not name.startswith("side-")]
REGRESSIONS = sorted((ROOT / "tests" / "fuzz" / "regressions").glob("*--*"))


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_every_target_holds_on_a_fixture_and_its_mutations(path):
    data = path.read_bytes()
    noise = random.Random(path.name)
    inputs = [data]
    for _ in range(4):
        mutated = bytearray(data)
        for _ in range(3):
            mutated[noise.randrange(len(mutated))] = noise.randrange(256)
        inputs.append(bytes(mutated[:noise.randrange(len(mutated) + 1)]))
    for name in BYTE_TARGETS:
        for case in inputs:
            fuzz.TARGETS[name](case)


def test_a_target_check_can_fail():
    """The checks are real: a reader whose damaged range misses bytes fails the tiling check."""
    with pytest.raises(AssertionError):
        fuzz._tiles([fuzz.Span(0, 3, "a", ""), fuzz.Span(4, 6, "b", "")], 0, 6)


@pytest.mark.parametrize("path", REGRESSIONS, ids=[path.name for path in REGRESSIONS])
def test_inputs_that_once_crashed_a_target(path):
    target = path.name.split("--")[0]
    fuzz.TARGETS[target](path.read_bytes())


@pytest.mark.parametrize("target, seeds", [("partition", fuzz.partition_seeds), ("internal", fuzz.internal_seeds)])
def test_the_partition_and_internal_targets_hold_on_their_seeds_and_mutations(target, seeds):
    cases = list(seeds())
    assert len(cases) >= 10, "the fixtures give seeds"
    noise = random.Random(target)
    for _, data in cases:
        fuzz.TARGETS[target](data)
        for _ in range(3):
            mutated = bytearray(data)
            for _ in range(2):
                mutated[noise.randrange(1, len(mutated))] = noise.randrange(256)
            fuzz.TARGETS[target](bytes(mutated[:noise.randrange(1, len(mutated) + 1)]))


def test_the_capture_target_holds_on_captures_and_their_mutations():
    """Captures of a Produce and a Fetch exchange, clean and damaged (tests/test_pcap.py's), then bytes
    flipped, runs of them overwritten and the file cut: each read whole, clean runs on and off."""
    seeds = fuzz.capture_seeds()
    noise = random.Random("capture")
    for data in seeds:
        fuzz.capture(data)
        for _ in range(40):
            mutated = bytearray(data)
            for _ in range(noise.choice([1, 2, 4])):
                at = noise.randrange(24, len(mutated))   # (past the file header: a capture still)
                mutated[at:at + noise.choice([1, 4])] = noise.choice([b"\xff\xff\xff\xff", b"\x00", b"\x7f"])
            fuzz.capture(bytes(mutated[:noise.randrange(24, len(mutated) + 1)]))


def test_the_capture_target_checks_findings_name_packets_the_capture_holds(monkeypatch):
    """The check is real: a reader that names a packet past the capture's fails it."""
    real = fuzz.read_capture

    def far(*args, **kwargs):
        for item in real(*args, **kwargs):
            yield fuzz.CaptureFinding(item.finding, 10**6, None) if isinstance(item, fuzz.CaptureFinding) else item

    monkeypatch.setattr(fuzz, "read_capture", far)
    data = fuzz.capture_seeds()[1]   # (the damaged one: it has findings)
    with pytest.raises(AssertionError):
        fuzz.capture(data[:-7])


def test_the_partition_target_checks_entries_lie_in_the_file(monkeypatch):
    """The check is real: a reader that puts an entry past the end fails it."""
    from kbatch.partition.sidecars import Entry

    monkeypatch.setattr(fuzz, "read_sidecar", lambda kind, body, base: iter([Entry(kind, 0, 0, len(body) + 1, {})]))
    with pytest.raises(AssertionError):
        fuzz.partition(b"\x00" + b"\x01" * 8)


def test_a_side_file_target_reads_only_its_kind(monkeypatch):
    """side-KIND hands the partition target its kind whatever the first byte says, and keeps the top bit."""
    seen = []
    monkeypatch.setattr(fuzz, "read_sidecar", lambda kind, body, base: seen.append((kind, body, base)) or iter(()))
    fuzz.TARGETS["side-snapshot"](b"\x00abc")
    fuzz.TARGETS["side-snapshot"](b"\x85abc")
    assert seen == [("snapshot", b"abc", 1 << 40), ("snapshot", b"abc", None)]
