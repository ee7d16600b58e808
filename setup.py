"""The optional compiled kernels: each of kbatch/kernels' modules built by Cython (pure-Python mode).

Everything else about the package is in pyproject.toml.  Where there is no C compiler, no Cython, or the
build fails for any reason, kbatch installs without the extensions and the same modules run as plain
Python: slower, never different (tests/test_recordwalk.py proves both agree).  Why it did not compile is
written beside the kernels (kbatch/kernels/NOT-COMPILED.txt), and ``kbatch --version`` says it: pip shows
no build output unless asked (``pip install -v``).  KBATCH_PURE_PYTHON=1 skips the build.

Each kernel is compiled from a copy of its source (under build/kernel-sources) with the digest of that
source added (kbatch/kernels/_load.py): at import, a compiled kernel whose digest is not its source's is
stale, and the sources run instead.
"""

import importlib.util
import os
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNELS = os.path.join("kbatch", "kernels")
# Every module of kbatch/kernels but its private helpers (_load, _cython_shim) is a kernel (a test holds this
# list to them).  The record walker first: the others take its C-level declarations (recordwalk.pxd,
# batchrules.pxd).
COMPILED_MODULES = ["kbatch.kernels.recordwalk", "kbatch.kernels.batchrules", "kbatch.kernels.match",
                    "kbatch.kernels.cleanruns", "kbatch.kernels.jsonl", "kbatch.kernels.plaincapture",
                    "kbatch.kernels.partitions"]
# Warnings on, Cython's and the C compiler's (MSVC takes neither flag); tests/test_tools.py holds them at none.
CYTHON_WARNINGS = {"warn.maybe_uninitialized": True, "warn.unreachable": True, "warn.unused": True}
C_WARNINGS = [] if os.name == "nt" else ["-Wall", "-Wextra"]
# Where the sources, each with its digest added, are compiled from.
STAMPED = os.path.join("build", "kernel-sources")


def _loader():
    """kbatch/kernels/_load.py, loaded by path (importing kbatch here would need its dependencies)."""
    spec = importlib.util.spec_from_file_location("_kbatch_kernel_load", os.path.join(KERNELS, "_load.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class OptionalBuildExt(build_ext):
    """build_ext that writes down why a build failed, and carries on: the .py modules stay the fallback."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # no compiler, no Python headers, ...
            _not_compiled(f"the build failed: {error}", self.build_lib)


def _not_compiled(why: str, *build_lib: str) -> None:
    """Say why the kernels are not compiled: on stderr (which pip shows only with -v) and in the note
    beside them (kbatch/kernels/NOT-COMPILED.txt, installed with them) that ``kbatch --version`` reads."""
    print(f"kbatch: the kernels are not compiled ({why}); their pure-Python source runs instead", file=sys.stderr)
    for root in (".", *build_lib):
        directory = os.path.join(root, KERNELS)
        if os.path.isdir(directory):
            with open(os.path.join(directory, _loader().NOT_COMPILED_NOTE), "w", encoding="utf-8") as note:
                note.write(f"not compiled at install: {why}\n")


def _stamped_sources() -> list[str]:
    """A copy of each kernel's source under build/, with the digest of the original added at the end."""
    load = _loader()
    package = os.path.join(STAMPED, KERNELS)
    os.makedirs(package, exist_ok=True)
    for init in (os.path.join(STAMPED, "kbatch", "__init__.py"), os.path.join(package, "__init__.py")):
        open(init, "w").close()   # a package, so Cython names the modules kbatch.kernels.NAME
    for name in os.listdir(KERNELS):
        if name.endswith(".pxd"):
            shutil.copyfile(os.path.join(KERNELS, name), os.path.join(package, name))
    sources = []
    for module in COMPILED_MODULES:
        stem = module.rpartition(".")[2]
        with open(os.path.join(KERNELS, f"{stem}.py"), encoding="utf-8") as source:
            text = source.read()
        # The digest as a C string (kept in the built file as it is, where _load finds it without loading
        # the module), and a function that returns it (so the compiler keeps the string).
        mark = load.MARK + load.source_digest(KERNELS, stem).encode() + b";"
        text += ("\n\n# Added by setup.py: the digest of the source this module was compiled from.\n"
                 f"_source_digest_mark = cython.declare(cython.p_const_char, {mark!r})\n\n\n"
                 "def _source_digest() -> bytes:\n    return _source_digest_mark\n")
        stamped = os.path.join(package, f"{stem}.py")
        if not os.path.exists(stamped) or open(stamped, encoding="utf-8").read() != text:
            with open(stamped, "w", encoding="utf-8") as out:   # (unchanged, Cython need not translate again)
                out.write(text)
        sources.append(stamped)
    return sources


def _extensions() -> list[Extension]:
    if _loader().pure_python_wanted():
        _not_compiled("KBATCH_PURE_PYTHON was set")
        return []
    try:
        from Cython.Build import cythonize
    except ImportError as error:   # an install without build isolation, in an environment without Cython
        _not_compiled(f"no Cython ({error})")
        return []
    note = os.path.join(KERNELS, _loader().NOT_COMPILED_NOTE)
    if os.path.exists(note):
        os.remove(note)
    try:
        modules = [Extension(name, [source], extra_compile_args=C_WARNINGS)
                   for name, source in zip(COMPILED_MODULES, _stamped_sources())]
        return cythonize(modules, compiler_directives={"language_level": 3, **CYTHON_WARNINGS}, include_path=[STAMPED],
                         quiet=True)
    except Exception as error:   # Cython could not translate them
        _not_compiled(f"Cython failed: {error}")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
