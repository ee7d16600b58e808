"""Every command has its help example, its README example and an up-to-date man page."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import click
import pytest

from kbatch.cli import commands

from .helpers import ROOT

COMMANDS = sorted(commands())


def _man_generator():
    spec = importlib.util.spec_from_file_location("man_generate", ROOT / "man" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readme_code() -> str:
    return "\n".join(re.findall(r"```[a-z]*\n(.*?)```", (ROOT / "README.md").read_text(), re.S))


@pytest.mark.parametrize("name", COMMANDS)
def test_command_help_has_an_example(name):
    command = commands()[name]
    assert command.help and command.epilog and "Examples:" in command.epilog
    assert f"kbatch {name} " in command.epilog


@pytest.mark.parametrize("name", COMMANDS)
def test_readme_shows_the_command(name):
    assert re.search(rf"^\s*(\S+/)?kbatch {name}\b", _readme_code(), re.M)


def test_man_pages_exist_and_are_current():
    pages = _man_generator().pages()
    assert set(pages) == {"kbatch.1", *(f"kbatch-{name}.1" for name in COMMANDS)}
    for file_name, text in pages.items():
        path = ROOT / "man" / file_name
        assert path.exists(), f"man/{file_name} is missing: run python man/generate.py"
        assert path.read_text() == text, f"man/{file_name} is stale: run python man/generate.py"


def test_readme_opens_with_the_two_commands_ci_runs():
    first_block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1).splitlines()
    assert len(first_block) == 2
    demo, tests = first_block
    assert "kbatch dump" in demo and "fixtures/" in demo
    # the first installs only what dump needs; the second the dev extra, and it is CI's one command
    assert "pip install -q -e . &&" in demo and "[dev]" not in demo and "'.[dev]'" in tests
    ci_commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
                   if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert ci_commands == [tests]
    assert (ROOT / demo.split("kbatch dump", 1)[1].split()[-1]).exists()


DEV_ONLY = ("pyspark", "pandas", "pyarrow", "kafka", "hypothesis", "pytest", "syrupy", "snappy", "lz4",
            "zstandard", "xxhash", "jsonschema")


def test_the_first_command_needs_no_dev_package():
    """What README's first command runs works with the runtime dependencies alone: every dev-only package is
    made unimportable and the demo must still run, clean."""
    demo = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1).splitlines()[0]
    args = demo.split(".venv/bin/kbatch ", 1)[1].split()
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {DEV_ONLY!r}: raise ImportError('dev-only: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from kbatch.cli import main\n"
        f"main({args!r})\n")
    result = subprocess.run([sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "mixed-v0-v1-v2.log: 7 batches, 11 records" in result.stdout


def test_every_option_has_help():
    for name in COMMANDS:
        for param in commands()[name].params:
            if isinstance(param, click.Option):
                assert param.help, f"kbatch {name} {param.opts[0]} has no help"


def test_readme_json_example_encodes():
    from kbatch.ops.encode import encode_document

    (example,) = re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    import json
    assert encode_document(json.loads(example))


def test_benchmarks_readme_lists_every_script():
    text = (ROOT / "benchmarks" / "README.md").read_text()
    table = re.search(r"\| script \| what it does \|\n(.*?)\n\n", text, re.S).group(1)
    listed = set(re.findall(r"^\| `([\w.]+\.py)` \|", table, re.M))
    assert listed == {path.name for path in (ROOT / "benchmarks").glob("*.py")}


def test_readmes_scan_timing_is_the_measured_one():
    """README's scan-against-verify-crc figures are the ones benchmarks/README.md's results table holds."""
    bench = (ROOT / "benchmarks" / "README.md").read_text()
    scan = float(re.search(r"^\| `kbatch scan DIR` \| ([\d.]+) \|", bench, re.M).group(1))
    verify = float(re.search(r"^\| `kbatch verify-crc --quiet DIR` \| ([\d.]+) \|", bench, re.M).group(1))
    said = re.search(r"checked in ([\d.]+) s against ([\d.]+) s for a\s+local\[2\] scan", (ROOT / "README.md").read_text())
    assert (float(said.group(1)), float(said.group(2))) == (round(verify, 1), round(scan))


def test_man_pages_are_installed_and_have_one_examples_heading():
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    installed = {path.name for pattern in declared["share/man/man1"] for path in ROOT.glob(pattern)}
    assert installed == set(_man_generator().pages())
    for name, text in _man_generator().pages().items():
        assert "Examples:" not in text.split(".SH EXAMPLES", 1)[-1], name
        assert text.count(".SH EXAMPLES") <= 1


def test_shell_completion_works_as_the_readme_says():
    readme = (ROOT / "README.md").read_text()
    assert '_KBATCH_COMPLETE=bash_source kbatch' in readme
    kbatch = [sys.executable, "-m", "kbatch"]
    script = subprocess.run(kbatch, env={**os.environ, "_KBATCH_COMPLETE": "bash_source"}, capture_output=True,
                            text=True)
    assert "complete " in script.stdout and script.returncode == 0
    words = subprocess.run(kbatch, env={**os.environ, "_KBATCH_COMPLETE": "bash_complete", "COMP_WORDS": "kbatch ve",
                                        "COMP_CWORD": "1"}, capture_output=True, text=True)
    assert words.stdout.split() == ["plain,verify-crc"]


def test_jq_examples_on_crc_valid_select_batches_only():
    """`select(.crc_valid | not)` matched every finding and summary line too (they have no crc_valid)."""
    texts = [_readme_code()] + [command.epilog or "" for command in commands().values()]
    filters = [line for text in texts for line in text.splitlines() if "crc_valid" in line and "jq" in line]
    assert filters and all('.type == "batch"' in line for line in filters), filters


def test_the_py_files_recipe_ships_a_pure_wheel():
    """A plain `pip wheel` builds the compiled record walker for its own platform (not py3-none-any), and
    Python imports no compiled module from a --py-files zip: the recipe builds the pure wheel."""
    code = _readme_code()
    wheel = next(line for line in code.splitlines() if line.lstrip().startswith(("pip wheel", "KBATCH_PURE")))
    assert wheel.startswith("KBATCH_PURE_PYTHON=1 pip wheel") and "py3-none-any" in wheel
    assert "platform" in (ROOT / "README.md").read_text().split("--py-files")[1][:1500]
