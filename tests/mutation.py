"""Mutation testing, one package at a time: how many deliberate mistakes the tests catch.

    python tests/mutation.py format            # or verify, walk, kernels, plaincapture, partitions, reading

The tree is copied to .mutation/NAME/ with a pyproject.toml whose [tool.mutmut] names only that package's
files and its fast tests; mutmut runs there at nice 19 with two children, then prints its results.  Each
package's table in pyproject.toml ([tool.kbatch-mutation.NAME]) says:

* ``mutate``, ``tests``: the files mutated, the tests run on each mutant (mutmut runs only those that reach
  the mutated function);
* ``pure``: run with pure-Python kernels (KBATCH_PURE_PYTHON=1: a mutant of a kernel's source must run);
  the other packages run with the compiled kernels, as kbatch runs (the listing run, for one, is only used
  with the compiled writer).  The copy's kernels lose their ``@cython.`` decorators (each line left empty):
  mutmut mutates no decorated function, which in a kernel is nearly every one (``cfunc``, ``ccall``,
  ``exceptval``, ``boundscheck``, ...), and run as Python those decorators return what they are given
  (Cython's pure-mode shadow, or kbatch/kernels/_cython_shim.py), so the copy behaves as the source does;
* ``deselect``: tests that cannot pass under mutmut whatever the mutant (what mutmut's own import loads);
* ``not_mutated``: patterns of lines left alone, each for a reason given beside it (a mutant of a line that
  forks or signals processes can fork thousands or signal mutmut's own process group).
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CYTHON_DECORATOR = re.compile(r"^[ \t]*@cython\..*$", re.MULTILINE)   # one line each (with any comment after it)


def _toml_list(values):
    return "[" + ", ".join(f"'{value}'" for value in values) + "]"   # literal strings: a pattern keeps its backslashes


def prepare(name):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package = project["tool"]["kbatch-mutation"][name]
    common = project["tool"]["mutmut"]
    work = ROOT / ".mutation" / name
    deselected = [f"--deselect={test}" for test in package.get("deselect", [])]
    shutil.rmtree(work, ignore_errors=True)   # a fresh copy: mutmut's results of an earlier tree would stand
    for part in ("kbatch", "tests", "fixtures"):
        shutil.copytree(ROOT / part, work / part, ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    if package.get("pure"):   # (why: the docstring's ``pure``)
        for kernel in (work / "kbatch" / "kernels").glob("*.py"):
            kernel.write_text(CYTHON_DECORATOR.sub("", kernel.read_text()))
    # The project's own file (pytest's settings) with [tool.mutmut] narrowed to this package.
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.mutmut]\n")
    end = text.index("\n[", start + 1)
    narrowed = ("[tool.mutmut]\n"
                'source_paths = ["kbatch"]\n'
                'also_copy = ["fixtures"]\n'
                f"only_mutate = {_toml_list(package['mutate'])}\n"
                f"do_not_mutate_patterns = {_toml_list(package.get('not_mutated', []))}\n"
                f"pytest_add_cli_args = {_toml_list(common['pytest_add_cli_args'] + deselected)}\n"
                f"pytest_add_cli_args_test_selection = {_toml_list(package['tests'])}\n")
    (work / "pyproject.toml").write_text(text[:start] + narrowed + text[end:])
    return work


def main(argv):
    name = argv[1]
    work = prepare(name)
    package = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["kbatch-mutation"][name]
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "KBATCH_PURE_PYTHON")}
    if package.get("pure"):
        env["KBATCH_PURE_PYTHON"] = "1"
    mutmut = Path(sys.executable).with_name("mutmut")
    subprocess.run(["nice", "-n", "19", str(mutmut), "run", "--max-children", "2"], cwd=work, env=env)
    return subprocess.run([str(mutmut), "results"], cwd=work, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
