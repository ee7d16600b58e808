"""Coverage-guided fuzzing of kbatch's readers (atheris, a dev-only dependency).

Each target feeds arbitrary bytes to one part of kbatch and checks what must
hold for any input: nothing raises, every finding lies inside the input, the
reader's batches and damaged ranges tile the input, spans tile what they
annotate.  A failure is a crash for the fuzzer, which saves the input; such
an input becomes a regression: saved as ``tests/fuzz/regressions/TARGET--NAME``,
which ``tests/test_fuzz_targets.py`` runs (and a fixture where it shows a new
kind of damage).

    python tests/fuzz/fuzz_kbatch.py TARGET [libFuzzer options] [CORPUS_DIR ...]
    python tests/fuzz/fuzz_kbatch.py reader -max_total_time=1800 /tmp/corpus-reader
    python tests/fuzz/fuzz_kbatch.py --seed-corpus DIR   # the fixtures (and their dump JSON) as seeds

Targets: reader, verify-deep, repair, salvage, hexdump, encode-json.  Each
execution is kept cheap: a 1 MiB decompression cap (a bomb is found as well at
1 MiB as at 256 MiB) and inputs of at most 64 KiB.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["kbatch"]):
    from kbatch.annotate import Span, decompressed_spans, entry_spans
    from kbatch.codecs import CodecError, Decompressor
    from kbatch.encode import SpecError, encode_document
    from kbatch.findings import Finding
    from kbatch.reader import ReadOptions, SegmentReader
    from kbatch.repair import SalvageReport, plan_repairs, salvage, write_repaired
    from kbatch.summary import FileSummary
    from kbatch.verify import VerifyOptions, verify_stream

LIMIT = 1 << 20          # decompression cap per batch: cheap executions, bombs still caught
MAX_INPUT = 64 * 1024
ROOT = Path(__file__).resolve().parents[2]


def _check_finding(finding: Finding, size: int) -> None:
    assert 0 <= finding.pos and finding.pos + finding.size <= size, finding
    assert 0 <= finding.entry_pos <= size, finding


def reader(data: bytes) -> None:
    """Every entry with records decoded (and inflated): batches and damaged ranges tile the input."""
    position = 0
    for item in SegmentReader(io.BytesIO(data), ReadOptions(records=True, decompressed_limit=LIMIT)):
        if isinstance(item, Finding):
            _check_finding(item, len(data))
            if item.owns_bytes:
                assert item.pos == position, (item, position)
                position = item.pos + item.size
            continue
        assert item.pos == position, (item.pos, position)
        position = item.pos + item.size
        for finding in item.findings:
            _check_finding(finding, len(data))
    assert position == len(data), (position, len(data))


def verify_deep(data: bytes) -> None:
    summary = FileSummary("fuzz", len(data))
    for finding in verify_stream(io.BytesIO(data), summary, VerifyOptions(deep=True, decompressed_limit=LIMIT)):
        _check_finding(finding, len(data))


def repair(data: bytes) -> None:
    """A plan, and the repaired copy it writes: never longer than the input, and patched only where planned."""
    stream = io.BytesIO(data)
    plan = plan_repairs(stream, truncate_tail=True)
    written = b"".join(write_repaired(stream, plan))
    assert len(written) <= len(data)
    changed = {action.pos for action in plan.changes if action.kind == "fix-length"}
    for position in (i for i in range(len(written)) if written[i] != data[i]):
        assert any(start <= position < start + 4 for start in changed), position


def salvage_target(data: bytes) -> None:
    report = SalvageReport(len(data))
    kept = b"".join(salvage(io.BytesIO(data), report))
    assert len(kept) <= len(data)
    for skipped in report.skipped:
        assert 0 <= skipped.pos and skipped.pos + skipped.size <= len(data)


def hexdump(data: bytes) -> None:
    """hexdump-annotate's spans tile every entry, and every entry's inflated records."""
    for index, item in enumerate(SegmentReader(io.BytesIO(data), ReadOptions(records=True, decompressed_limit=LIMIT))):
        if isinstance(item, Finding):
            continue
        spans = entry_spans(item, data[item.pos:item.pos + item.size], index)
        _tiles(spans, item.pos, item.pos + item.size)
        if item.compressed:
            payload = data[item.payload_pos:item.payload_pos + item.payload_size]
            try:
                inflated = Decompressor(LIMIT).decompress(item.attributes & 7, payload, item.magic)
            except CodecError:
                continue
            decompressed_spans(item, inflated, index)


def _tiles(spans, start: int, end: int) -> None:
    position = start
    for span in spans:
        assert span.start == position and span.end >= span.start, (span, position)
        position = span.end
    assert position == end, (position, end)


def encode_json(data: bytes) -> None:
    """encode-from-json's parser: a spec encodes or is refused with a SpecError, nothing else."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return
    try:
        encode_document(document, require_version=True)
    except (SpecError, CodecError):
        pass


TARGETS = {"reader": reader, "verify-deep": verify_deep, "repair": repair, "salvage": salvage_target,
           "hexdump": hexdump, "encode-json": encode_json}


def seed_corpus(directory: str) -> None:
    """The fixtures and real-broker vectors as seeds, and for encode-json their dump documents."""
    import subprocess

    out = Path(directory)
    (out / "bytes").mkdir(parents=True, exist_ok=True)
    (out / "json").mkdir(parents=True, exist_ok=True)
    paths = sorted((ROOT / "fixtures").glob("*.log")) + sorted((ROOT / "fixtures" / "vectors").glob("*.bin"))
    for path in paths:
        data = path.read_bytes()
        if len(data) <= MAX_INPUT:
            (out / "bytes" / path.name).write_bytes(data)
            dumped = subprocess.run([sys.executable, "-m", "kbatch", "dump", "--format", "json", "--records",
                                     str(path)], capture_output=True, cwd=ROOT)
            (out / "json" / (path.name + ".json")).write_bytes(dumped.stdout)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--seed-corpus":
        seed_corpus(sys.argv[2])
        return
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer options] [CORPUS_DIR ...]")
    target = TARGETS[sys.argv[1]]

    def one_input(data: bytes) -> None:
        if len(data) <= MAX_INPUT:
            target(data)

    atheris.Setup([sys.argv[0], *sys.argv[2:]], one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
