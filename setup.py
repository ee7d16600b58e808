"""The optional compiled kernels: kbatch/kernels/*.py built by Cython (pure-Python mode).

Everything else about the package is in pyproject.toml.  Where there is no C compiler, or the build
fails for any reason, kbatch installs without the extension and the same module runs as plain
Python: slower, never different (tests/test_recordwalk.py proves both agree).
KBATCH_PURE_PYTHON=1 skips the build.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# The record walker first: the others take its C-level declarations (recordwalk.pxd, batchrules.pxd).
COMPILED_MODULES = ["kbatch.kernels.recordwalk", "kbatch.kernels.batchrules", "kbatch.kernels.cleanruns",
                    "kbatch.kernels.jsonl"]


class OptionalBuildExt(build_ext):
    """build_ext that reports a failed build and carries on: the .py module stays the fallback."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # no compiler, no Python headers, ...
            _skipped(error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            _skipped(error)


def _skipped(error) -> None:
    print(f"kbatch: building the compiled record decoder failed ({error}); the pure-Python one is used",
          file=sys.stderr)


def _extensions():
    if os.environ.get("KBATCH_PURE_PYTHON"):
        return []
    try:
        from Cython.Build import cythonize

        modules = [Extension(name, [name.replace(".", "/") + ".py"]) for name in COMPILED_MODULES]
        return cythonize(modules, compiler_directives={"language_level": 3}, quiet=True)
    except Exception as error:
        _skipped(error)
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
