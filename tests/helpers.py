"""Helpers the tests share: where the fixtures are, their sidecars, reading bytes whole."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from kbatch.format.findings import Finding
from kbatch.reading.reader import ReadOptions, SegmentReader

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def fixture_paths() -> list[Path]:
    """Every input we ship: our fixtures (*.log) and the real-broker vectors (vectors/*.bin)."""
    return sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "vectors").glob("*.bin"))


def fixture_id(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix().replace("/", "--")


def sidecar(path: Path) -> dict:
    return json.loads(path.with_suffix(".json").read_text())


def read_all(data: bytes, **options) -> tuple[list, list[Finding]]:
    """Every batch and every finding (region findings and batch findings) of some bytes."""
    items = list(SegmentReader(io.BytesIO(data), ReadOptions(**options)))
    batches = [item for item in items if not isinstance(item, Finding)]
    findings = [item for item in items if isinstance(item, Finding)]
    findings += [finding for batch in batches for finding in batch.findings]
    return batches, findings


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_kbatch(args: list[str], capsys, monkeypatch, stdin: bytes | None = None) -> Result:
    from kbatch.cli import main

    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    capsys.readouterr()
    try:
        main(args)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 2
    out, err = capsys.readouterr()
    return Result(code, out, err)


def pure_recordwalk():
    """kbatch/kernels/recordwalk.py run as plain Python, beside the compiled module the package imports.

    Loaded from the .py file itself under another name, so one test run exercises both builds of the
    same source.  ``import cython`` is made to fail while it loads, so it runs on kbatch's own stand-in
    for Cython's pure-Python names, as it does where Cython is not installed (a user's machine, CI).
    """
    import importlib.util

    import kbatch

    name = "kbatch._recordwalk_pure"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(kbatch.__file__).parent / "kernels" / "recordwalk.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        cython = sys.modules.get("cython")
        sys.modules["cython"] = None  # makes ``import cython`` raise ImportError
        try:
            spec.loader.exec_module(module)
        finally:
            if cython is None:
                del sys.modules["cython"]
            else:
                sys.modules["cython"] = cython
        assert module.cython.__name__ == "kbatch.kernels._cython_shim", module.cython
    return sys.modules[name]


def use_pure_decoder(monkeypatch) -> None:
    """From here on kbatch decodes records with the plain-Python twin of its compiled decoder."""
    import kbatch.walk.deep
    import kbatch.walk.listing
    import kbatch.reading.records
    import kbatch.output.jsonout

    pure = pure_recordwalk()
    monkeypatch.setattr(kbatch.walk.deep, "CleanBatches", pure.CleanBatches)
    monkeypatch.setattr(kbatch.reading.records, "RecordWalker", pure.RecordWalker)
    monkeypatch.setattr(kbatch.reading.records, "RecordColumns", pure.RecordColumns)
    monkeypatch.setattr(kbatch.reading.records, "_COLUMNS", {})
    monkeypatch.setattr(kbatch.output.jsonout, "records_json", pure.records_json)
    monkeypatch.setattr(kbatch.output.jsonout, "batch_json", pure.batch_json)
    monkeypatch.setattr(kbatch.walk.listing, "fields_json", pure.fields_json)
    monkeypatch.setattr(kbatch.output.jsonout, "any_key_or_value_starts_with_zero",
                        pure.any_key_or_value_starts_with_zero)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a Spark server a test starts)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
