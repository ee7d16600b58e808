"""How a kernel module is loaded: its compiled build when that was built from the source beside it, else the source.

Python prefers an extension module to the ``.py`` of the same name, whatever their age: after an edit to a
kernel's source, an editable install or an in-place build would go on running the old compiled module and
say nothing.  So setup.py compiles into each kernel the digest of the source it was built from
(:data:`DIGEST_NAME`), and :class:`KernelFinder`, which kbatch/kernels/__init__.py puts in front of Python's
own finders, compares it with the source's digest on import: a stale build is not used (the source is
loaded instead) and kbatch says so once per process, on stderr.  Every import of a kernel goes through it,
however written (``import kbatch.kernels.X``, ``from kbatch.kernels.X import ...``), since the package's
``__init__`` runs first.

``KBATCH_PURE_PYTHON=1`` in the environment selects the source (plain Python) for every kernel: at build
time setup.py then compiles nothing, at run time the finder loads no compiled build.  :func:`builds` says
which build of each kernel runs, and why; ``kbatch --version`` prints it.

This module imports only the standard library: setup.py loads it by path to compute the digests it
compiles in.
"""

from __future__ import annotations

import os
import sys
import zlib
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, SourceFileLoader
from importlib.util import module_from_spec, spec_from_file_location

# The module-level name under which a compiled kernel carries the digest of its source.
DIGEST_NAME = "__source_digest__"
# Written by setup.py beside the kernels when it could not compile them (and why); read by builds().
NOT_COMPILED_NOTE = "NOT-COMPILED.txt"
REBUILD = "python setup.py build_ext --inplace"


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


# kernel stem -> its Build, for every kernel imported in this process
_BUILDS: dict[str, Build] = {}
_warned = False


def _say_once(message: str) -> None:
    """A warning on stderr, once per process (a forked part inherits the flag, so a run says it once)."""
    global _warned
    if not _warned:
        _warned = True
        print(f"kbatch: {message}", file=sys.stderr)


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


def source_spec(name: str, path: str) -> ModuleSpec:
    """The spec that loads a kernel's ``.py`` as plain Python (through the bytecode cache, as any module)."""
    return spec_from_file_location(name, path, loader=SourceFileLoader(name, path))


class _Loaded:
    """A loader handing over a module already executed (the compiled kernel, loaded to read its digest)."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        pass


class KernelFinder:
    """Finds ``kbatch.kernels.NAME`` (NAME not starting with ``_``): the compiled build when its digest is
    the source's, else the source; leaves every other import to Python's own finders."""

    package = __name__.rpartition(".")[0]

    @classmethod
    def find_spec(cls, name: str, path=None, target=None):
        package, _, stem = name.rpartition(".")
        if package != cls.package or stem.startswith("_") or not path:
            return None
        directory = path[0]
        source = os.path.join(directory, f"{stem}.py")
        compiled = _compiled_file(directory, stem)
        if compiled is None or not os.path.isfile(source):
            # Not compiled (or compiled with no source to check it against, or in a zip): Python's own
            # finders load what is there.
            _BUILDS[stem] = Build(True) if compiled else Build(False, _not_compiled_why(directory))
            return None
        if pure_python_wanted():
            _BUILDS[stem] = Build(False, "KBATCH_PURE_PYTHON is set")
            return source_spec(name, source)
        spec = ModuleSpec(name, ExtensionFileLoader(name, compiled), origin=compiled)
        try:
            module = module_from_spec(spec)
            spec.loader.exec_module(module)
        except ImportError as error:
            sys.modules.pop(name, None)
            why = f"its compiled build does not load ({error}); rebuild: {REBUILD}"
        else:
            # A Cython module puts itself in sys.modules as it runs: out again, so the import takes the spec
            # returned here (Python's import prefers a module already there to the finder's answer).
            sys.modules.pop(name, None)
            built_from = getattr(module, DIGEST_NAME, None)
            if built_from == source_digest(directory, stem):
                _BUILDS[stem] = Build(True)
                return ModuleSpec(name, _Loaded(module), origin=compiled)
            why = (f"{os.path.basename(compiled)} was built from another {stem}.py than the one beside it, "
                   f"edited since; rebuild: {REBUILD}")
        _BUILDS[stem] = Build(False, why)
        _say_once(f"kbatch.kernels.{stem} runs as pure Python, slower: {why}")
        return source_spec(name, source)


def kernel_names(directory: str) -> list[str]:
    """Every kernel module of the package: its ``.py`` files not starting with ``_``."""
    try:
        return sorted(name[:-3] for name in os.listdir(directory) if name.endswith(".py") and not name.startswith("_"))
    except OSError:   # not a directory (a zip on Spark's --py-files): the kernels imported so far
        return sorted(_BUILDS)


def builds() -> dict[str, Build]:
    """Which build of every kernel runs in this process (importing the kernels not imported yet)."""
    import importlib

    names = kernel_names(os.path.dirname(__file__))
    for stem in names:
        importlib.import_module(f"{KernelFinder.package}.{stem}")
    return {stem: _BUILDS.get(stem, Build(False, "not compiled")) for stem in names}


def describe() -> str:
    """What ``kbatch --version`` says of the kernels: "compiled", or "pure Python" and why, kernel by kernel."""
    every = builds()
    if all(build.compiled for build in every.values()):
        return "compiled"
    whys = "; ".join(f"{stem}: {build!r}" for stem, build in every.items())
    if not any(build.compiled for build in every.values()):
        whys = "; ".join(f"{stem}: {build.why}" for stem, build in every.items())
        return f"pure Python ({whys})"
    return f"partly compiled ({whys})"
