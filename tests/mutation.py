"""Mutation testing, one package at a time: how many deliberate mistakes the tests catch.

    python tests/mutation.py format            # or verify, walk, kernels, reading (pyproject.toml)

The tree is copied to .mutation/NAME/ with a pyproject.toml whose [tool.mutmut] names only that package's
files and its fast tests; mutmut runs there at nice 19 with two children and pure-Python kernels
(KBATCH_PURE_PYTHON=1: a mutant of a kernel's source must run), then prints its results.
"""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _toml_list(values):
    return "[" + ", ".join(f'"{value}"' for value in values) + "]"


def prepare(name):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package = project["tool"]["kbatch-mutation"][name]
    common = project["tool"]["mutmut"]
    work = ROOT / ".mutation" / name
    for part in ("kbatch", "tests", "fixtures"):
        if not (work / part).exists():
            shutil.copytree(ROOT / part, work / part, ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    # The project's own file (pytest's settings) with [tool.mutmut] narrowed to this package.
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.mutmut]\n")
    end = text.index("\n[", start + 1)
    narrowed = ("[tool.mutmut]\n"
                'source_paths = ["kbatch"]\n'
                'also_copy = ["fixtures"]\n'
                f"only_mutate = {_toml_list(package['mutate'])}\n"
                f"pytest_add_cli_args = {_toml_list(common['pytest_add_cli_args'])}\n"
                f"pytest_add_cli_args_test_selection = {_toml_list(package['tests'])}\n")
    (work / "pyproject.toml").write_text(text[:start] + narrowed + text[end:])
    return work


def main(argv):
    name = argv[1]
    work = prepare(name)
    env = dict(os.environ, KBATCH_PURE_PYTHON="1")
    env.pop("PYTHONPATH", None)
    mutmut = Path(sys.executable).with_name("mutmut")
    subprocess.run(["nice", "-n", "19", str(mutmut), "run", "--max-children", "2"], cwd=work, env=env)
    return subprocess.run([str(mutmut), "results"], cwd=work, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
