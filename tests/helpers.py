"""Helpers the tests share: where the fixtures are, their sidecars, reading bytes whole."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
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
    """kbatch/kernels/recordwalk.py run as plain Python, beside the build the package imports.

    Loaded from the .py file itself under another name, so one test run exercises both builds of the
    same source.  ``import cython`` is made to fail while it loads, so it runs on kbatch's own stand-in
    for Cython's pure-Python names, as it does where Cython is not installed (a user's machine, CI).
    """
    import kbatch.kernels
    from kbatch.kernels._load import source_spec

    name = "kbatch._recordwalk_pure"
    if name not in sys.modules:
        spec = source_spec(name, str(Path(kbatch.kernels.__file__).parent / "recordwalk.py"))
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


def pure_python_env() -> dict:
    """The environment of a process in which every kernel runs as plain Python (kbatch.kernels._load)."""
    return {**os.environ, "KBATCH_PURE_PYTHON": "1"}


def run_kbatch_pure(args: list[str]) -> Result:
    """kbatch on ``args`` in a process of its own, every kernel as plain Python: the pure build's answer."""
    done = subprocess.run([sys.executable, "-m", "kbatch", *args], cwd=ROOT, env=pure_python_env(),
                          capture_output=True, text=True)
    return Result(done.returncode, done.stdout, done.stderr)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a Spark server a test starts)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
