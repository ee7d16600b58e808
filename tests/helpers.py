"""Helpers the tests share: where the fixtures are, their sidecars, reading bytes whole."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from kbatch.format.findings import Finding
from kbatch.reading.reader import ReadOptions, SegmentReader

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def fixture_paths() -> list[Path]:
    """Every input we ship: our fixtures (*.log) and the real-broker vectors (vectors/*.bin)."""
    return sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "vectors").glob("*.bin"))


# The inputs whose rendered output (tables, dumplog, hexdumps) is pinned by snapshots, for a person to read:
# a clean v2 segment, one of all three magics, a compressed one, a transactional one with its control
# batches, and two damaged ones (a resync over garbage, a record under a broken CRC).  On every other input
# the tests assert exact values instead (from the sidecars: what the independent encoder was given).
REPRESENTATIVE = [FIXTURES / name for name in (
    "v2-none.log", "mixed-v0-v1-v2.log", "v2-gzip.log", "v2-txn-commit.log", "damaged-garbage-between.log",
    "damaged-bitflip-record.log")]


@functools.cache
def schema_validator(definition: str | None = None):
    """A validator of kbatch's JSON Schema (kbatch/schema/kbatch-json-v1.schema.json), of the whole or of its
    ``$defs`` entry ``definition``; made once (``jsonschema.validate`` checks the schema itself on every call,
    0.15 s each)."""
    import jsonschema

    from kbatch.output import docs

    schema = json.loads(docs.SCHEMA_PATH.read_text())
    if definition is not None:
        schema = {**schema["$defs"][definition], "$defs": schema["$defs"]}
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def fixture_id(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix().replace("/", "--")


def sidecar(path: Path) -> dict:
    return json.loads(path.with_suffix(".json").read_text())


def damaged(path: Path, records: bool = True, offsets: bool = False) -> bool:
    """Whether an input we ship holds damage, as its sidecar says: ours say it in ``damaged``; a vector's is
    damaged when its status says corrupt, a CRC of it fails, or bytes follow its last whole entry.  Without
    ``records`` (a listing, which decodes no payload), damage that lies only in records whose CRC holds is not
    seen: the vector whose status says "CRC valid", and the damaged internal topics' records (made so that
    their framing and checksums are intact).  With ``offsets`` (each batch held to the one before it, as
    ``verify-crc --deep`` does), a vector whose batches' offsets run back is damaged too: a capture of
    batches written apart."""
    meta = sidecar(path)
    if "vector_expected" in meta:
        vector = meta["vector_expected"]
        framing = bool(vector["trailing_bytes"]) or not all(batch["crc_valid"] for batch in vector["batches"])
        v2 = [(batch["baseOffset"], batch["baseOffset"] + batch["lastOffsetDelta"]) for batch in vector["batches"]
              if "lastOffsetDelta" in batch]
        back = any(base <= last for (_, last), (base, _) in zip(v2, v2[1:]))
        return framing or records and meta["status"].startswith("corrupt") or offsets and back
    if path.is_relative_to(FIXTURES / "internal"):
        return records and meta["damaged"]
    return meta["damaged"]


def expected_status(path: Path, records: bool = True, offsets: bool = False) -> int:
    """The exit status (README's "Exit status": 1 damage, 0 clean) of a command that reads ``path`` on its
    own: by default one that decodes every record, as ``dump --records`` does (and ``stats`` on
    fixture_paths()); ``records=False`` a listing, as ``dump`` and plain ``verify-crc``; ``offsets=True`` as
    ``verify-crc --deep`` on fixture_paths() (see damaged)."""
    return 1 if damaged(path, records, offsets) else 0


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


def run_kbatch(args: list[str], capsys, monkeypatch, stdin: bytes | None = None, expect: int | None = None) -> Result:
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
    return _expected(Result(code, out, err), args, expect)


def _expected(result: Result, args: list[str], expect: int | None) -> Result:
    """``result``, once its exit status is ``expect`` (when one is given)."""
    assert expect is None or result.code == expect, \
        f"kbatch {' '.join(map(str, args))}: exit status {result.code}, expected {expect}\n{result.err}"
    return result


KERNELS = ("recordwalk", "batchrules", "match", "cleanruns", "jsonl")   # in the order they import each other
_PURE_KERNELS = None


def kernels_namespace(modules) -> SimpleNamespace:
    """Every name of the kernel modules in one namespace (the kernels define no name twice); the modules
    themselves by their short names in ``modules`` (to patch a module's global)."""
    names, by_name = {}, {}
    for module in modules:
        names.update({name: value for name, value in vars(module).items() if not name.startswith("__")})
        by_name[module.__name__.rpartition("_")[2] if "_pure_" in module.__name__ else module.__name__.rpartition(".")[2]] = module
    return SimpleNamespace(**names, modules=by_name)


def compiled_kernels() -> SimpleNamespace:
    """The kernel modules the package imports (compiled where the install built them), as one namespace."""
    import importlib

    return kernels_namespace(importlib.import_module(f"kbatch.kernels.{name}") for name in KERNELS)


def pure_recordwalk() -> SimpleNamespace:
    """kbatch/kernels/*.py run as plain Python, beside the compiled modules the package imports, as one namespace.

    Each is loaded from its .py file under another name, so one test run exercises both builds of the same
    source; while they load, ``import cython`` fails (so they run on kbatch's own stand-in for Cython's
    pure-Python names, as where Cython is not installed) and each sees its plain-Python siblings, not the
    compiled ones.
    """
    import kbatch

    global _PURE_KERNELS
    if _PURE_KERNELS is None:
        siblings = {f"kbatch.kernels.{name}": sys.modules.get(f"kbatch.kernels.{name}") for name in KERNELS}
        cython = sys.modules.get("cython")
        sys.modules["cython"] = None  # makes ``import cython`` raise ImportError
        modules = []
        try:
            for name in KERNELS:
                path = Path(kbatch.__file__).parent / "kernels" / f"{name}.py"
                spec = importlib.util.spec_from_file_location(f"kbatch._kernels_pure_{name}", path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[f"kbatch.kernels.{name}"] = module   # what the next kernel imports while it loads
                spec.loader.exec_module(module)
                assert module.cython.__name__ == "kbatch.kernels._cython_shim", module.cython
                modules.append(module)
        finally:
            for name, module in siblings.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module
            if cython is None:
                del sys.modules["cython"]
            else:
                sys.modules["cython"] = cython
        _PURE_KERNELS = kernels_namespace(modules)
    return _PURE_KERNELS


def pure_python_env() -> dict:
    """The environment of a process in which every kernel runs as plain Python (kbatch.kernels._load)."""
    return {**os.environ, "KBATCH_PURE_PYTHON": "1"}


def run_kbatch_pure(args: list[str], expect: int | None = None) -> Result:
    """kbatch on ``args`` in a process of its own, every kernel as plain Python: the pure build's answer."""
    done = subprocess.run([sys.executable, "-m", "kbatch", *args], cwd=ROOT, env=pure_python_env(),
                          capture_output=True, text=True)
    return _expected(Result(done.returncode, done.stdout, done.stderr), args, expect)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a Spark server a test starts)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def say(request, text: str) -> None:
    """A line on the terminal as a slow service starts, so that a quiet minute is not taken for a hang: through
    pytest's terminal reporter, or from a pytest-xdist worker (which has none) on its standard error, which
    is the terminal's; past the output capture either way."""
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        if reporter is not None and not hasattr(request.config, "workerinput"):
            reporter.write_line(text)
        else:
            sys.stderr.write(f"\n{text}\n")
            sys.stderr.flush()


def fixture_writer():
    """fixtures/make_internal_fixtures.py as a module: the writer of Kafka's messages from their definitions,
    independent of kbatch's reader (the internal topics' fixtures, captured Kafka traffic)."""
    spec = importlib.util.spec_from_file_location("make_internal_fixtures", ROOT / "fixtures" / "make_internal_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "fixtures"))
    return module


def copy_unless_gone(source: str, target: str) -> str:
    """shutil.copy2, but a file gone between the directory's listing and its copy is not copied: a running broker
    writes each checkpoint to NAME.tmp and renames it into place (Utils.atomicMoveWithFallback), every few seconds,
    and deletes segments, so a copy of its live log directory (as an operator's cp -r or rsync takes it) meets
    files that vanish."""
    try:
        return shutil.copy2(source, target)
    except FileNotFoundError:
        return target
