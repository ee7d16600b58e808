"""The tests themselves: every test that runs the command line checks the exit status it expects.

The exit status is half of what kbatch answers (README's "Exit status": 0 clean, 1 damage found, 2 usage
or I/O error), so a test that runs the CLI and reads only its output would pass on a run that found
damage and said clean.  This reads the tests' source with ``ast``: a test runs the CLI when it calls the
``kbatch`` fixture, ``run_kbatch``, ``run_kbatch_pure``, a click runner's ``invoke``, ``main`` of
kbatch.cli or its click group (imported under any name, or called as ``kbatch.cli.main``), kbatch.__main__'s
``run``, ``runpy`` on kbatch, a process whose command names kbatch, or a helper or fixture of its file that
does one of these; it checks the status when it refers to the result's ``.code``, ``.returncode`` or
``.exit_code`` (``subprocess.run(..., check=True)`` checks for 0), when it passes the status it expects as
``expect=`` (a number, or a parameter of its own every caller must give) to a runner or helper that
asserts it, or when every helper or fixture it runs the CLI through asserts the status itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .helpers import ROOT

EXIT_STATUS = {"code", "returncode", "exit_code"}
RUNNERS = {"kbatch", "run_kbatch", "run_kbatch_pure"}   # the fixture (tests/conftest.py) and tests/helpers.py
EXPECT = "expect"   # the keyword the runners (and helpers built on them) take the status to assert by
# What runs the command line in the caller's process: kbatch.cli's main and its click group (and the group's
# own main), the program's entry point.
ENTRY_POINTS = {"kbatch.cli.main", "kbatch.cli.cli", "kbatch.cli.cli.main", "kbatch.__main__.run"}
PROCESSES = {"run", "Popen", "check_output", "check_call", "call"}   # subprocess's
# a command that runs kbatch: ``python -m kbatch``, the console script, a shell line, a program importing it
_NAMES_KBATCH = re.compile(r"^kbatch$|(^|[\s;|&(`$])kbatch\s|kbatch\.cli\b")


@dataclass
class Function:
    """What one function of a test file does with the CLI."""

    node: ast.FunctionDef
    runs: bool = False          # calls the CLI itself
    refers: bool = False        # refers to an exit status (anywhere)
    asserts: bool = False       # asserts one (in an assert statement, or with check=True)
    calls: set[str] = field(default_factory=set)      # the names it calls
    params: set[str] = field(default_factory=set)     # its parameters (a test's fixtures)

    @property
    def is_test(self) -> bool:
        return self.node.name.startswith("test")


def _assignments(scope: ast.AST) -> dict[str, list[ast.AST]]:
    found: dict[str, list[ast.AST]] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name) and node.value:
            found.setdefault(node.target.id, []).append(node.value)
    return found


def _names_kbatch(expression: ast.AST, names: dict[str, list[ast.AST]], seen: set[str]) -> bool:
    """Whether a process's command line (its names followed to what they were assigned) runs kbatch."""
    for node in ast.walk(expression):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NAMES_KBATCH.search(node.value):
            return True
        if isinstance(node, ast.Name) and node.id not in seen:
            seen.add(node.id)
            if any(_names_kbatch(value, names, seen) for value in names.get(node.id, ())):
                return True
    return False


def _called_name(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else \
        call.func.attr if isinstance(call.func, ast.Attribute) else None


def _is_process(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in PROCESSES \
        and isinstance(call.func.value, ast.Name) and call.func.value.id == "subprocess"


def _imported(tree: ast.AST) -> dict[str, str]:
    """The dotted name each name bound by an import of a file stands for (imports inside functions too)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:   # ``import kbatch.cli`` binds kbatch
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _dotted(expression: ast.AST) -> str | None:
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        base = _dotted(expression.value)
        return base and f"{base}.{expression.attr}"
    return None


def _runs_in_process(call: ast.Call, imported: dict[str, str]) -> bool:
    """Whether a call runs kbatch's command line in this process: an entry point, a click runner's invoke,
    or runpy on the package."""
    dotted = _dotted(call.func)
    if dotted is None:
        return isinstance(call.func, ast.Attribute) and call.func.attr == "invoke"   # CliRunner().invoke
    first, _, rest = dotted.partition(".")
    resolved = ".".join(filter(None, (imported.get(first, first), rest)))
    if resolved in ENTRY_POINTS or dotted.endswith(".invoke") or dotted == "invoke":
        return True
    return resolved in ("runpy.run_module", "runpy.run_path") and bool(call.args) \
        and isinstance(call.args[0], ast.Constant) and str(call.args[0].value).split(".")[0] == "kbatch"


def _a_status(value: ast.AST, node: ast.FunctionDef, names: dict[str, list[ast.AST]]) -> bool:
    """Whether ``expect=value`` names an exit status: a number, either of two (``1 if damaged else 0``), what a
    function or table of the test's input says (``expected_status(path)``, ``STATUS[name]``), a parameter of
    ``node`` with no default (so that every caller gives one), or a name only ever given one of these."""
    if isinstance(value, ast.Constant):
        return type(value.value) is int
    if isinstance(value, ast.IfExp):
        return _a_status(value.body, node, names) and _a_status(value.orelse, node, names)
    if isinstance(value, (ast.Call, ast.Subscript)):   # ``expected_status(path)``, ``STATUS[name]``
        return True
    if isinstance(value, ast.Name):
        arguments = node.args
        positional = arguments.posonlyargs + arguments.args
        required = positional[:len(positional) - len(arguments.defaults)] + [
            arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
        given = names.pop(value.id, None)   # (taken out while it is looked at: ``expect = expect + 0``)
        try:
            return value.id in {arg.arg for arg in required} \
                or bool(given) and all(_a_status(one, node, names) for one in given)
        finally:
            if given is not None:
                names[value.id] = given
    return False


def _expects(call: ast.Call, node: ast.FunctionDef, names: dict[str, list[ast.AST]]) -> bool:
    return any(keyword.arg == EXPECT and _a_status(keyword.value, node, names) for keyword in call.keywords)


def _function(node: ast.FunctionDef, module_names: dict[str, list[ast.AST]], imported: dict[str, str],
              local: set[str]) -> Function:
    names = {**module_names, **_assignments(node)}
    function = Function(node, params={arg.arg for arg in node.args.args + node.args.kwonlyargs})
    asserted = {id(inner) for statement in ast.walk(node) if isinstance(statement, ast.Assert)
                for inner in ast.walk(statement)}
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr in EXIT_STATUS:
            function.refers = True
            function.asserts |= id(inner) in asserted
        if not isinstance(inner, ast.Call):
            continue
        if isinstance(inner.func, ast.Attribute) and inner.func.attr == "wait" and id(inner) in asserted:
            function.refers = function.asserts = True   # ``assert process.wait() == 141``: a Popen's status
        called = _called_name(inner)
        function.calls.add(called or "")
        if (called in RUNNERS or called in local) and _expects(inner, node, names):
            function.refers = function.asserts = True
        if isinstance(inner.func, ast.Name) and called in RUNNERS or called == "run_kbatch_pure" \
                or _runs_in_process(inner, imported):
            function.runs = True
        elif _is_process(inner) and inner.args and _names_kbatch(inner.args[0], names, set()):
            function.runs = True
            if any(keyword.arg == "check" and isinstance(keyword.value, ast.Constant) and keyword.value.value
                   for keyword in inner.keywords):
                function.refers = function.asserts = True
    return function


def _is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)


@dataclass
class CliTest:
    file: str
    name: str
    line: int
    checked: bool


def cli_tests(path: Path) -> list[CliTest]:
    """The tests of one file that run the CLI, and whether each checks the exit status."""
    tree = ast.parse(path.read_text(), str(path))
    module_names = {name: values for name, values in _assignments(tree).items()}
    imported = _imported(tree)
    nodes = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    local = {node.name for node in nodes if not node.name.startswith("test")}
    functions = [_function(node, module_names, imported, local) for node in nodes]
    helpers = {function.node.name: function for function in functions if not function.is_test}
    fixtures = {name for name, helper in helpers.items() if _is_fixture(helper.node)}
    # A helper runs the CLI when it calls one that does; it vouches for the status when each one it runs the
    # CLI through asserts it.
    runs = {name for name, helper in helpers.items() if helper.runs}
    vouches = {name for name in runs if helpers[name].asserts}
    while True:
        more = {name for name, helper in helpers.items() if name not in runs and helper.calls & runs}
        if not more:
            break
        runs |= more
        vouches |= {name for name in more if helpers[name].asserts
                    or all(callee in vouches for callee in helpers[name].calls & runs)}
    found = []
    for function in functions:
        if not function.is_test:
            continue
        through = (function.calls | (function.params & fixtures)) & runs
        if not function.runs and not through:
            continue
        checked = function.refers or (not function.runs and through <= vouches)
        found.append(CliTest(path.name, function.node.name, function.node.lineno, checked))
    return found


def every_cli_test() -> list[CliTest]:
    return [test for path in sorted((ROOT / "tests").glob("test_*.py")) for test in cli_tests(path)]


def test_every_cli_test_checks_the_exit_status():
    unchecked = [test for test in every_cli_test() if not test.checked]
    assert not unchecked, "these tests run kbatch and never check its exit status:\n" + "\n".join(
        f"{test.file}:{test.line} {test.name}" for test in unchecked)


# Each way the suite runs the command line, unchecked and checked, and code that runs no kbatch: a test file of
# one test, ``test_it``, and whether the checker finds that it runs the CLI (None: it does not) and checks it.
SAMPLES = {
    # the kbatch fixture, and helpers of the file over it
    "fixture, output only": ("def test_it(kbatch):\n    assert 'x' in kbatch('dump', 'x.log').out\n", False),
    "fixture, its .code": ("def test_it(kbatch):\n    assert kbatch('verify-crc', 'x.log').code == 1\n", True),
    "fixture, expect=": ("def test_it(kbatch):\n    assert kbatch('dump', 'x.log', expect=0).out\n", True),
    "fixture, expect= either": ("def test_it(kbatch, bad):\n    kbatch('dump', 'x.log', expect=1 if bad else 0)\n",
                                True),
    "fixture, expect= of the input": ("def test_it(kbatch, path):\n    kbatch('dump', path, expect=expected_status(path))\n",
                                      True),
    "fixture, expect= from a table": ("def test_it(kbatch, name):\n    kbatch('map', name, expect=STATUS[name])\n",
                                      True),
    "fixture, expect= a name given a status": ("def test_it(kbatch, path):\n    expect = expected_status(path)\n"
                                                "    kbatch('dump', path, expect=expect)\n", True),
    "fixture, expect= a name given None": ("def test_it(kbatch, path):\n    expect = None\n"
                                           "    kbatch('dump', path, expect=expect)\n", False),
    "fixture, expect=True": ("def test_it(kbatch):\n    kbatch('dump', 'x.log', expect=True)\n", False),
    "fixture, expect=None": ("def test_it(kbatch):\n    kbatch('dump', 'x.log', expect=None)\n", False),
    "a helper": ("def _run(kbatch):\n    return kbatch('dump', 'x.log')\n\n"
                 "def test_it(kbatch):\n    assert 'x' in _run(kbatch).out\n", False),
    "a helper that asserts": ("def _run(kbatch):\n    result = kbatch('dump', 'x.log')\n    assert result.code == 0\n"
                              "    return result\n\ndef test_it(kbatch):\n    assert 'x' in _run(kbatch).out\n", True),
    "a helper passing expect on": ("def _run(kbatch, expect):\n    return kbatch('dump', 'x.log', expect=expect)\n\n"
                                   "def test_it(kbatch):\n    assert 'x' in _run(kbatch, 0).out\n", True),
    "a helper passing an optional expect on": (
        "def _run(kbatch, expect=None):\n    return kbatch('dump', 'x.log', expect=expect)\n\n"
        "def test_it(kbatch):\n    assert 'x' in _run(kbatch).out\n", False),
    "a helper given expect=": ("def _run(kbatch, expect=None):\n    return kbatch('dump', 'x.log', expect=expect)\n\n"
                               "def test_it(kbatch):\n    assert 'x' in _run(kbatch, expect=1).out\n", True),
    "run_kbatch_pure": ("def test_it():\n    assert run_kbatch_pure(['dump', 'x.log']).out\n", False),
    # kbatch.cli's main, in this process
    "kbatch.cli.main": ("import kbatch.cli\n\ndef test_it():\n    try:\n        kbatch.cli.main(['dump', 'x.log'])\n"
                        "    except SystemExit:\n        pass\n", False),
    "kbatch.cli.main, its status": ("import kbatch.cli\nimport pytest\n\ndef test_it():\n"
                                    "    with pytest.raises(SystemExit) as done:\n        kbatch.cli.main(['dump', 'x.log'])\n"
                                    "    assert done.value.code == 0\n", True),
    "main imported in the test": ("def test_it():\n    from kbatch.cli import main\n    main(['dump', 'x.log'])\n", False),
    "main imported under a name": ("from kbatch.cli import main as kbatch_main\n\ndef test_it():\n"
                                   "    kbatch_main(['dump'])\n", False),
    "the click group's main": ("from kbatch.cli import cli\n\ndef test_it():\n"
                               "    cli.main(['dump'], standalone_mode=False)\n", False),
    "the module's main": ("from kbatch import cli\n\ndef test_it():\n    cli.main(['dump'])\n", False),
    "the program's entry point": ("def test_it():\n    from kbatch.__main__ import run\n    run()\n", False),
    "runpy": ("import runpy\n\ndef test_it():\n    runpy.run_module('kbatch', run_name='__main__')\n", False),
    # click's runner
    "CliRunner().invoke": ("from click.testing import CliRunner\nfrom kbatch.cli import cli\n\ndef test_it():\n"
                           "    assert CliRunner().invoke(cli, ['dump', 'x.log']).output\n", False),
    "CliRunner().invoke, its exit_code": ("from click.testing import CliRunner\nfrom kbatch.cli import cli\n\n"
                                          "def test_it():\n    assert CliRunner().invoke(cli, ['dump']).exit_code == 2\n", True),
    # a process
    "python -m kbatch": ("import subprocess, sys\n\ndef test_it():\n"
                         "    assert subprocess.run([sys.executable, '-m', 'kbatch', 'dump']).stdout\n", False),
    "python -m kbatch, check=True": ("import subprocess, sys\n\ndef test_it():\n"
                                     "    subprocess.run([sys.executable, '-m', 'kbatch', 'dump'], check=True)\n", True),
    "a process waited for": ("import subprocess, sys\n\ndef test_it():\n"
                             "    child = subprocess.Popen([sys.executable, '-m', 'kbatch', 'dump'])\n"
                             "    child.wait()\n", False),
    "a process's status waited for": ("import subprocess, sys\n\ndef test_it():\n"
                                      "    child = subprocess.Popen([sys.executable, '-m', 'kbatch', 'dump'])\n"
                                      "    assert child.wait(timeout=60) == 141\n", True),
    "a shell line": ("import subprocess\n\ndef test_it():\n"
                     "    subprocess.run(['bash', '-c', 'kbatch dump x.log | head'])\n", False),
    "a shell line, its returncode": ("import subprocess\n\ndef test_it():\n"
                                     "    assert subprocess.run(['bash', '-c', 'kbatch dump x.log']).returncode == 0\n", True),
    "a program importing kbatch.cli": ("import subprocess, sys\nPROGRAM = 'from kbatch.cli import main; main()'\n\n"
                                       "def test_it():\n    subprocess.run([sys.executable, '-c', PROGRAM])\n", False),
    # no kbatch
    "nothing": ("def test_it():\n    assert 1\n", None),
    "another program": ("import subprocess\n\ndef test_it():\n    subprocess.run(['ls'])\n", None),
    "another main": ("def main(args):\n    return args\n\ndef test_it():\n    assert main([1])\n", None),
    "another invoke-less call": ("from kbatch.cli import commands\n\ndef test_it():\n    assert commands()\n", None),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_the_checker_tells_a_cli_test_that_checks_the_status_from_one_that_does_not(name, tmp_path):
    source, checked = SAMPLES[name]
    path = tmp_path / "test_sample.py"
    path.write_text(source)
    assert [(test.name, test.checked) for test in cli_tests(path)] == ([] if checked is None else [("test_it", checked)])
