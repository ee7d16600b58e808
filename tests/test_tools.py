"""The linter, the type checker and the compilers' warnings, held at none (configured in pyproject.toml and
setup.py): CI runs only the test suite, so they run from here."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kbatch" / "kernels"


def _run(*command: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=None if env is None else {**os.environ, **env})


def _clean(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, f"{' '.join(result.args)} exited {result.returncode}:\n{result.stdout}{result.stderr}"


def test_ruff_finds_nothing():
    _clean(_run(sys.executable, "-m", "ruff", "check", "--no-cache", "kbatch", "tests"))


def test_mypy_finds_nothing():
    # Its cache beside the Kafka jars' (tests/real_kafka.py), not in the checkout: a fresh clone then checks what
    # changed, not every module of the standard library and the dependencies again (15 s against 4 s). mypy
    # checks each cached module against its source, wherever that lies.
    cache = Path(os.environ.get("KBATCH_KAFKA_CACHE") or Path.home() / ".cache" / "kbatch") / "mypy"
    _clean(_run(sys.executable, "-m", "mypy", env={"MYPY_CACHE_DIR": str(cache)}))   # files, options: pyproject.toml


def test_the_package_says_it_is_typed():
    assert (ROOT / "kbatch" / "py.typed").is_file()


def _setup_constant(name: str):
    """A warning setting of setup.py's, read from its text (running setup.py would build)."""
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == name for target in node.targets):
            value = node.value
            return ast.literal_eval(value.orelse if isinstance(value, ast.IfExp) else value)   # (the non-MSVC arm)
    raise AssertionError(f"setup.py has no {name}")


# One kernel (the smallest): all five take minutes on a busy machine; each was checked the same way by hand.
@pytest.mark.parametrize("kernel", ["batchrules"])
def test_a_kernel_compiles_without_a_warning(kernel, tmp_path):
    """Cython with setup.py's warnings as errors, then the C compiler with setup.py's flags and -Werror."""
    pytest.importorskip("Cython")
    compiler = (sysconfig.get_config_var("CC") or "cc").split()
    if not shutil.which(compiler[0]):
        pytest.skip("no C compiler")
    package = tmp_path / "kbatch" / "kernels"
    package.mkdir(parents=True)
    for init in (tmp_path / "kbatch" / "__init__.py", package / "__init__.py"):
        init.write_text("")
    for source in [*KERNELS.glob("*.pxd"), KERNELS / f"{kernel}.py"]:
        shutil.copyfile(source, package / source.name)
    directives = [f"-X{name}={value}" for name, value in _setup_constant("CYTHON_WARNINGS").items()]
    _clean(_run(sys.executable, "-c", "from Cython.Compiler.Main import setuptools_main; setuptools_main()",
                "-3", "--warning-errors", *directives, f"kbatch/kernels/{kernel}.py", cwd=tmp_path))
    _clean(_run(*compiler, "-c", "-O2", "-fPIC", *_setup_constant("C_WARNINGS"), "-Werror",
                f"-I{sysconfig.get_paths()['include']}", str(package / f"{kernel}.c"), "-o", str(tmp_path / "k.o")))
