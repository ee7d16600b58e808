"""How a kernel module is loaded: its compiled build when that was built from the source beside it, else the source.

Python prefers an extension module to the ``.py`` of the same name, whatever their age: after an edit to a
kernel's source, an editable install or an in-place build would go on running the old compiled module and
say nothing.  So setup.py compiles into each kernel the digest of the source it was built from (after
:data:`MARK`), and :class:`KernelFinder`, which kbatch/kernels/__init__.py puts in front of Python's own
finders, compares it with the source's digest at the first import of a kernel, before any is loaded: where
one is stale, no compiled build is used (the sources are loaded instead: they run compiled all or none) and
kbatch says so once per process, on stderr.  Every import of a kernel goes through it, however written
(``import kbatch.kernels.X``, ``from kbatch.kernels.X import ...``), since the package's ``__init__`` runs
first.

``KBATCH_PURE_PYTHON=1`` in the environment selects the source (plain Python) for every kernel: at build
time setup.py then compiles nothing, at run time the finder loads no compiled build.  :func:`builds` says
which build of each kernel runs, and why; ``kbatch --version`` prints it.

This module imports only the standard library: setup.py loads it by path to compute the digests it
compiles in.
"""

from __future__ import annotations

import mmap
import os
import sys
import zlib
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec, SourceFileLoader
from importlib.util import spec_from_file_location

# How a compiled kernel carries the digest of its source: setup.py compiles ``MARK + digest + b";"`` in as a C
# string, which lies in the built file as it is (Cython packs Python string constants; a C string it leaves):
# found there by a byte search, so the digest is checked before the build is loaded.
MARK = b"kbatch-source-digest:"
# Written by setup.py beside the kernels when it could not compile them (and why); read by builds().
NOT_COMPILED_NOTE = "NOT-COMPILED.txt"
REBUILD = "python setup.py build_ext --inplace"
ALL_OR_NONE = "the others with them: the kernels run compiled all or none"


def pure_python_wanted() -> bool:
    """KBATCH_PURE_PYTHON set (to anything but 0 or nothing): no compiled kernel, at build or at run time."""
    return os.environ.get("KBATCH_PURE_PYTHON", "") not in ("", "0")


def source_files(directory: str, stem: str) -> list[str]:
    """What a kernel is compiled from: its ``.py`` and every ``.pxd`` of the package (the C declarations)."""
    declarations = sorted(name for name in os.listdir(directory) if name.endswith(".pxd"))
    return [os.path.join(directory, f"{stem}.py"), *(os.path.join(directory, name) for name in declarations)]


def source_digest(directory: str, stem: str) -> str:
    """The size and CRC-32 of a kernel's source files: any edit changes it.

    CRC-32 (zlib, loaded by then in any run that reads a compressed batch) over ~70 KB costs ~0.1 ms at
    start-up where hashlib's import alone costs ~3 ms; it guards against a forgotten rebuild, not against
    an adversary.
    """
    size = crc = 0
    for path in source_files(directory, stem):
        with open(path, "rb") as source:
            data = source.read()
        size += len(data)
        crc = zlib.crc32(data, crc)
    return f"{size}-{crc:08x}"


class Build:
    """Which build of one kernel runs: ``compiled`` True or False, and why, when not compiled."""

    def __init__(self, compiled: bool, why: str = ""):
        self.compiled = compiled
        self.why = why

    def __repr__(self) -> str:
        return "compiled" if self.compiled else f"pure Python ({self.why})"


# kernel stem -> its Build: decided for every kernel at once, at the first import of one
_BUILDS: dict[str, Build] = {}


def _compiled_file(directory: str, stem: str) -> str | None:
    for suffix in EXTENSION_SUFFIXES:
        path = os.path.join(directory, stem + suffix)
        if os.path.isfile(path):
            return path
    return None


def _not_compiled_why(directory: str) -> str:
    try:
        with open(os.path.join(directory, NOT_COMPILED_NOTE), encoding="utf-8") as note:
            return note.read().strip() or "not compiled at install"
    except OSError:
        return "not compiled at install"


def built_from(path: str) -> str | None:
    """The digest of the source a compiled kernel was built from (None: built without one)."""
    with open(path, "rb") as built, mmap.mmap(built.fileno(), 0, access=mmap.ACCESS_READ) as data:
        start = data.find(MARK)
        if start < 0:
            return None
        start += len(MARK)
        end = data.find(b";", start, start + 64)
        return data[start:end].decode("ascii", "replace") if end > 0 else None


def _decide(directory: str) -> dict[str, Build]:
    """Which build every kernel runs.  All compiled or none: a compiled kernel takes the C declarations of
    the compiled ones it imports (kbatch/kernels/*.pxd), so one that cannot run compiled makes them all
    run as Python."""
    names = kernel_names(directory)
    if pure_python_wanted():
        return {stem: Build(False, "KBATCH_PURE_PYTHON is set") for stem in names}
    whys, stale = {}, False
    for stem in names:
        compiled = _compiled_file(directory, stem)
        if compiled is None:
            whys[stem] = _not_compiled_why(directory)
            continue
        digest = built_from(compiled)
        if digest != source_digest(directory, stem):
            stale = True
            whys[stem] = (f"{os.path.basename(compiled)} was built from another {stem}.py than the one beside it, "
                          f"edited since; rebuild: {REBUILD}" if digest else
                          f"{os.path.basename(compiled)} carries no digest of its source; rebuild: {REBUILD}")
    if not whys:
        return {stem: Build(True) for stem in names}
    if stale:
        first = next(iter(whys))
        print(f"kbatch: the kernels run as pure Python, slower: {first}: {whys[first]}", file=sys.stderr)
    return {stem: Build(False, whys.get(stem) or ALL_OR_NONE) for stem in names}


def source_spec(name: str, path: str) -> ModuleSpec | None:
    """The spec that loads a kernel's ``.py`` as plain Python (through the bytecode cache, as any module)."""
    return spec_from_file_location(name, path, loader=SourceFileLoader(name, path))


class KernelFinder:
    """Finds ``kbatch.kernels.NAME`` (NAME not starting with ``_``): leaves it to Python's own finders (which
    take the compiled build where there is one) when every kernel runs compiled, else finds its source."""

    package = __name__.rpartition(".")[0]

    @classmethod
    def find_spec(cls, name: str, path=None, target=None):
        package, _, stem = name.rpartition(".")
        if package != cls.package or stem.startswith("_") or not path or not os.path.isdir(path[0]):
            return None   # (not a kernel, or in a zip, as on Spark's --py-files: no compiled module there)
        if not _BUILDS:
            _BUILDS.update(_decide(path[0]))   # once per process: a forked part inherits it, so says it once
        build = _BUILDS.get(stem)
        source = os.path.join(path[0], f"{stem}.py")
        if build is None or build.compiled or not os.path.isfile(source):
            return None
        return source_spec(name, source)


def kernel_names(directory: str) -> list[str]:
    """Every kernel module of the package: its ``.py`` files not starting with ``_``."""
    try:
        return sorted(name[:-3] for name in os.listdir(directory) if name.endswith(".py") and not name.startswith("_"))
    except OSError:   # not a directory (a zip on Spark's --py-files): the kernels imported so far
        return sorted(_BUILDS)


def builds() -> dict[str, Build]:
    """Which build every kernel runs in this process."""
    directory = os.path.dirname(__file__)
    if not os.path.isdir(directory):
        return {"kernels": Build(False, "loaded from a zip archive, where Python loads no compiled module")}
    if not _BUILDS:
        _BUILDS.update(_decide(directory))
    return dict(_BUILDS)


def describe() -> str:
    """What ``kbatch --version`` says of the kernels: "compiled", or "pure Python" and why."""
    every = builds()
    if every and all(build.compiled for build in every.values()):
        return "compiled"
    own = {stem: build.why for stem, build in every.items() if build.why != ALL_OR_NONE}
    if len(own) == len(every) and len(set(own.values())) == 1:
        return f"pure Python ({next(iter(own.values()))})"
    whys = [f"{stem}: {why}" for stem, why in own.items()]
    return f"pure Python ({'; '.join(whys + ([ALL_OR_NONE] if len(own) < len(every) else []))})"
