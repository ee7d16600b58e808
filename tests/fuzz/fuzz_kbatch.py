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

Targets: reader, verify-deep, repair, salvage, hexdump, encode-json, capture (a
packet capture, as ``kbatch pcap`` reads it), partition (the files beside a
segment) and internal (internal topics' keys and values, KRaft control values).
The last two take their choice of kind or decoder from the first byte, so one
corpus covers them all; side-KIND (side-index, side-snapshot, ...) holds the
partition target to one kind of side file.  Each execution is kept cheap: a 1 MiB
decompression cap (a bomb is found as well at 1 MiB as at 256 MiB) and inputs of at most 64 KiB.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import sys
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[2]


class _PlainKernels(importlib.abc.MetaPathFinder):
    """Imports kbatch/kernels/*.py as Python, not their compiled builds: compiled code is not instrumented,
    and the record walk is where a batch's bytes become records.  ``tests/test_recordwalk.py`` holds the
    two builds to the same columns, so what the fuzzer finds in one holds for both."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("kbatch.kernels.") or name == "kbatch.kernels._cython_shim":
            return None
        source = ROOT / "kbatch" / "kernels" / (name.rpartition(".")[2] + ".py")
        return importlib.util.spec_from_loader(name, importlib.machinery.SourceFileLoader(name, str(source)))


if __name__ == "__main__":  # fuzzing, not the test suite that imports the targets
    sys.meta_path.insert(0, _PlainKernels())
    sys.modules["cython"] = None  # ``import cython`` fails: the walker runs on kbatch's stand-in, as without Cython

with atheris.instrument_imports(include=["kbatch"]):
    from kbatch.ops.annotate import Span, decompressed_spans, entry_spans  # noqa: F401 (Span: tests/test_fuzz_targets.py)
    from kbatch.format.codecs import CodecError, Decompressor
    from kbatch.ops.encode import SpecError, encode_document
    from kbatch.format.findings import Finding
    from kbatch.messages.control import KRAFT_CONTROL_MESSAGES, decode_kraft_control, kraft_control_spans
    from kbatch.messages.topics import decode as decode_internal
    from kbatch.messages.topics import field_spans
    from kbatch.partition.sidecars import SIDECAR_KINDS, Entry, Header, looks_like, read_sidecar
    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.ops.repair import SalvageReport, plan_repairs, salvage, write_repaired
    from kbatch.reading.summary import FileSummary
    from kbatch.ops.verify import VerifyOptions, verify_stream
    from kbatch.capture.packets import not_a_capture
    from kbatch.kernels.recordwalk import is_compiled
    from kbatch.ops.pcap import CaptureFinding, CapturedRun, CaptureSummary, read_capture

LIMIT = 1 << 20          # decompression cap per batch: cheap executions, bombs still caught
MAX_INPUT = 64 * 1024


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


def capture(data: bytes) -> None:
    """``kbatch pcap``'s reading of a packet capture, records and the deep rules on: nothing raises, and every
    finding names a packet the capture holds (0: its file header; one past those read whole: the packet it
    ends inside).  Where the kernels run compiled, the clean runs the JSON Lines writer takes whole (``runs``)
    add up to the batches the reader hands out one by one."""
    stream = io.BytesIO(data)
    if not_a_capture(stream) is not None:
        return
    summary = CaptureSummary("fuzz")
    findings = [item for item in read_capture("fuzz", stream, summary, records=True, deep=True)
                if isinstance(item, CaptureFinding)]
    assert all(0 <= finding.packet <= summary.packets + 1 for finding in findings), (findings, summary.packets)
    if is_compiled():
        one_by_one, in_runs = CaptureSummary("fuzz"), CaptureSummary("fuzz")
        for summed, runs in ((one_by_one, False), (in_runs, True)):
            stream.seek(0)
            for item in read_capture("fuzz", stream, summed, runs=runs):
                assert runs or not isinstance(item, CapturedRun)
        assert (in_runs.batches, in_runs.records, in_runs.produced, in_runs.findings) == \
            (one_by_one.batches, one_by_one.records, one_by_one.produced, one_by_one.findings)


def partition(data: bytes) -> None:
    """A file beside a segment, of the kind the first byte picks: entries and findings lie in the file,
    entries in file order without overlap; the sniff names a kind that reads cleanly, or none."""
    if not data:
        return
    kind = SIDECAR_KINDS[data[0] % len(SIDECAR_KINDS)]
    body = data[1:]
    base_offset = None if data[0] & 0x80 else 1 << 40
    end = 0
    for item in read_sidecar(kind, body, base_offset):
        findings = [item] if isinstance(item, Finding) else item.findings
        for finding in findings:
            _check_finding(finding, len(body))
        if isinstance(item, Entry):
            assert item.pos >= end and item.pos + item.size <= len(body), (item, end)
            end = item.pos + item.size
        else:
            assert isinstance(item, (Header, Finding)), item
    sniffed = looks_like(body)
    assert sniffed is None or sniffed in SIDECAR_KINDS, sniffed


INTERNAL_DECODERS = ("offsets", "transactions", "metadata", "share", "remote")
CONTROL_TYPES = tuple(KRAFT_CONTROL_MESSAGES)


def internal(data: bytes) -> None:
    """An internal topic's key and value (or a KRaft control value): decoded or refused with problems that
    lie inside the bytes; spans in order inside them; the JSON form always writes."""
    if len(data) < 3:
        return
    choice, split = data[0], int.from_bytes(data[1:3], "big")
    rest = data[3:]
    if choice >= 0xF0:
        control_type = CONTROL_TYPES[choice % len(CONTROL_TYPES)]
        fields, problem = decode_kraft_control(control_type, rest)
        assert (fields is None) != (problem is None)
        spans, _ = kraft_control_spans(control_type, rest)
        _in_order(spans, len(rest))
        return
    decoder = INTERNAL_DECODERS[choice % len(INTERNAL_DECODERS)]
    # The top bits of the split say whether the key or the value is null.
    key = None if split & 0x8000 else rest[:split & 0x3FFF]
    value = None if split & 0x4000 else rest[split & 0x3FFF:]
    decoded = decode_internal(decoder, key, value)
    for problem in decoded.problems:
        part = key if problem.part == "key" else value
        assert 0 <= problem.pos <= len(part or b""), (problem, part)   # a null part: its problem is at 0
    json.dumps(decoded.as_dict())
    for part_name, (spans, _) in field_spans(decoder, key, value).items():
        part = key if part_name == "key" else value
        _in_order(spans, len(part or b""))


def _in_order(spans, size: int) -> None:
    position = 0
    for start, end, *_ in spans:
        assert position <= start <= end <= size, (start, end, position, size)
        position = end


def side_file_kind(kind: str):
    """The partition target held to one kind of side file, so that each kind gets a run of its own."""
    number = SIDECAR_KINDS.index(kind)

    def target(data: bytes) -> None:
        if data:
            top = data[0] & 0x80   # still picks the base offset; the byte's remainder picks the kind
            partition(bytes([top + (number - top) % len(SIDECAR_KINDS)]) + data[1:])
    return target


TARGETS = {"reader": reader, "verify-deep": verify_deep, "repair": repair, "salvage": salvage_target,
           "hexdump": hexdump, "encode-json": encode_json, "partition": partition, "internal": internal,
           "capture": capture,
           **{f"side-{kind}": side_file_kind(kind) for kind in SIDECAR_KINDS}}


def seed_corpus(directory: str) -> None:
    """The fixtures and real-broker vectors as seeds, for encode-json their dump documents, for partition
    the files beside the fixtures' segments (kind byte first), for internal the fixtures' internal records."""
    import subprocess

    out = Path(directory)
    for sub in ("bytes", "json", "partition", "internal", "capture"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for number, data in enumerate(capture_seeds()):
        (out / "capture" / f"exchange-{number}.pcap").write_bytes(data)
    for name, data in partition_seeds():
        (out / "partition" / name).write_bytes(data)
    for name, data in internal_seeds():
        (out / "internal" / name).write_bytes(data)
    paths = sorted((ROOT / "fixtures").glob("*.log")) + sorted((ROOT / "fixtures" / "vectors").glob("*.bin"))
    for path in paths:
        data = path.read_bytes()
        if len(data) <= MAX_INPUT:
            (out / "bytes" / path.name).write_bytes(data)
            dumped = subprocess.run([sys.executable, "-m", "kbatch", "dump", "--format", "json", "--records",
                                     str(path)], capture_output=True, cwd=ROOT)
            (out / "json" / (path.name + ".json")).write_bytes(dumped.stdout)


def capture_seeds() -> list[bytes]:
    """Captures of a Produce and a Fetch exchange, clean and damaged, from tests/test_pcap.py's builders."""
    sys.path.insert(0, str(ROOT))
    from tests.test_pcap import clean_capture, damaged_capture

    return [clean_capture().pcap(), damaged_capture().pcap()]


def partition_seeds():
    """(name, input) for every file beside a segment among the fixtures, as the partition target reads it."""
    from kbatch.files.kinds import kind_of

    for path in sorted((ROOT / "fixtures").rglob("*")):
        kind = kind_of(path.name)
        if path.is_file() and kind in SIDECAR_KINDS and path.stat().st_size < MAX_INPUT:
            name = "-".join(path.relative_to(ROOT / "fixtures").parts)
            yield name, bytes([SIDECAR_KINDS.index(kind)]) + path.read_bytes()


def internal_seeds():
    """(name, input) for every record of the fixtures' internal-topic segments, as the internal target reads it."""
    from kbatch.messages import decoder_for_path

    for path in sorted((ROOT / "fixtures").rglob("*")):
        decoder = decoder_for_path(str(path))
        if not (path.is_file() and decoder in INTERNAL_DECODERS and path.suffix in (".log", ".checkpoint")):
            continue
        reader = SegmentReader(io.BytesIO(path.read_bytes()), ReadOptions(records=True, decompressed_limit=LIMIT))
        for item in reader:
            for number, record in enumerate(getattr(item, "records", None) or []):
                if record.control is not None:
                    continue
                key, value = record.key, record.value
                split = (len(key) if key is not None else 0x8000) | (0x4000 if value is None else 0)
                data = (bytes([INTERNAL_DECODERS.index(decoder), split >> 8, split & 0xFF]) + (key or b"")
                        + (value or b""))
                if len(data) < MAX_INPUT:
                    name = "-".join(path.relative_to(ROOT / "fixtures").parts)
                    yield f"{name}-{item.pos}-{number}", data


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
