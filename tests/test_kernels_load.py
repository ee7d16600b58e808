"""Which build of the kernels runs (kbatch/kernels/_load.py): the compiled one only when it was built from the
source beside it; the source where it is stale, not compiled, or KBATCH_PURE_PYTHON=1 asks for it; and
``kbatch --version`` says which."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import kbatch
from kbatch.kernels._load import NOT_COMPILED_NOTE, kernel_names, pure_python_wanted

from .helpers import ROOT, pure_python_env

KERNELS = ROOT / "kbatch" / "kernels"
NAMES = kernel_names(str(KERNELS))
COMPILED = [path for name in NAMES for suffix in EXTENSION_SUFFIXES if (path := KERNELS / (name + suffix)).exists()]
needs_compiled = pytest.mark.skipif(pure_python_wanted() or len(COMPILED) != len(NAMES),
                                    reason="the kernels are not compiled here")


def _kbatch(args: list[str], pythonpath=ROOT, env=None, *, expect: int) -> subprocess.CompletedProcess:
    """kbatch on ``args`` in a process of its own, from the package at ``pythonpath``; its exit status ``expect``."""
    env = {**(env or pure_python_env()), "PYTHONPATH": str(pythonpath)}
    if env.get("KBATCH_PURE_PYTHON") == "":
        del env["KBATCH_PURE_PYTHON"]
    done = subprocess.run([sys.executable, "-m", "kbatch", *args], cwd=pythonpath, env=env, capture_output=True,
                          text=True)   # (run where the package is: the current folder comes first on sys.path)
    assert done.returncode == expect, done.stderr
    return done


def _unswitched() -> dict:
    return {**pure_python_env(), "KBATCH_PURE_PYTHON": ""}


def _copy_of_the_package(tmp_path):
    """kbatch as installed here (its compiled kernels too), in a folder of its own to be changed."""
    shutil.copytree(ROOT / "kbatch", tmp_path / "kbatch", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_setup_compiles_every_kernel():
    """setup.py lists the kernels in the order they are built; the loader takes every public module of
    kbatch/kernels for one: the same modules."""
    import ast

    tree = ast.parse((ROOT / "setup.py").read_text())
    (listed,) = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                 and any(getattr(target, "id", None) == "COMPILED_MODULES" for target in node.targets)]
    assert sorted(listed) == [f"kbatch.kernels.{name}" for name in NAMES]


def test_the_switch_runs_every_kernel_from_its_source():
    done = _kbatch(["--version"], expect=0)
    assert done.stdout == f"kbatch, version {kbatch.__version__}\nkernels: pure Python (KBATCH_PURE_PYTHON is set)\n"
    assert done.stderr == "" and done.returncode == 0
    program = "\n".join([f"import kbatch.kernels.{name}" for name in NAMES] + [
        f"print(kbatch.kernels.{name}.__file__.endswith('{name}.py'), kbatch.kernels.{name}.cython.compiled)"
        for name in NAMES])
    imported = subprocess.run([sys.executable, "-c", program], cwd=ROOT, env=pure_python_env(), capture_output=True,
                              text=True)
    assert imported.stdout == "True False\n" * len(NAMES)


@needs_compiled
def test_the_version_says_the_kernels_are_compiled():
    done = _kbatch(["--version"], env=_unswitched(), expect=0)
    assert done.stdout == f"kbatch, version {kbatch.__version__}\nkernels: compiled\n" and done.stderr == ""


@needs_compiled
def test_a_copy_of_a_compiled_kernel_and_its_source_is_still_compiled(tmp_path):
    """Only the source's bytes count, not its file's time or place."""
    done = _kbatch(["--version"], _copy_of_the_package(tmp_path), _unswitched(), expect=0)
    assert done.stdout.endswith("kernels: compiled\n")


@needs_compiled
def test_a_kernel_edited_after_its_build_runs_from_its_source_and_kbatch_says_so_once(tmp_path):
    """One kernel edited: none runs compiled (a compiled kernel takes the compiled types of those it imports)."""
    copy = _copy_of_the_package(tmp_path)
    edited = NAMES[-1]
    with open(copy / "kbatch" / "kernels" / f"{edited}.py", "a") as source:
        source.write("\n# an edit after the build\n")
    why = (f"{edited}: {COMPILED[-1].name} was built from another {edited}.py than the one beside it, edited since; "
           "rebuild: python setup.py build_ext --inplace")
    segments = [str(ROOT / "fixtures" / name) for name in ("v2-gzip.log", "v2-lz4.log")]
    done = _kbatch(["stats", "--format", "json", *segments], copy, _unswitched(), expect=0)
    assert json.loads(done.stdout)["record_count"] > 0   # stdout: the report alone
    assert done.stderr.splitlines() == [f"kbatch: the kernels run as pure Python, slower: {why}"]
    version = _kbatch(["--version"], copy, _unswitched(), expect=0).stdout
    assert version.endswith(f"kernels: pure Python ({why}; the others with them: the kernels run compiled all or none)\n")
    program = "\n".join([f"import kbatch.kernels.{name}" for name in NAMES] + [
        f"print(kbatch.kernels.{name}.__file__.endswith('{name}.py'), kbatch.kernels.{name}.cython.compiled)"
        for name in NAMES])
    imported = subprocess.run([sys.executable, "-c", program], cwd=tmp_path,
                              env={**_unswitched(), "PYTHONPATH": str(copy)}, capture_output=True, text=True)
    assert imported.stdout == "True False\n" * len(NAMES)


def test_a_kernel_not_compiled_at_install_says_why(tmp_path):
    copy = _copy_of_the_package(tmp_path)
    for path in (copy / "kbatch" / "kernels").iterdir():
        if path.suffix in (".so", ".pyd"):
            path.unlink()
    (copy / "kbatch" / "kernels" / NOT_COMPILED_NOTE).write_text("not compiled at install: no Cython\n")
    done = _kbatch(["--version"], copy, _unswitched(), expect=0)
    assert done.stdout.endswith("kernels: pure Python (not compiled at install: no Cython)\n") and done.stderr == ""


def test_every_file_a_kernel_is_checked_against_is_installed():
    """The digest covers a kernel's .py and the package's .pxd files: an install without the .pxd files would
    take every compiled kernel for a stale one."""
    import fnmatch
    import tomllib

    from kbatch.kernels._load import source_files

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kbatch"]
    for name in NAMES:
        for path in source_files(str(KERNELS), name):
            relative = str(Path(path).relative_to(ROOT / "kbatch"))
            assert relative.endswith(".py") or any(fnmatch.fnmatch(relative, pattern) for pattern in data), relative
