"""One walk: outside the reader and the walk engine, nothing loops over a segment's entries itself.

Every command reaches a segment's entries through :func:`kbatch.walk.engine.entries` (README's "How it is
built"), so that each frame and batch rule, the fast runs and the end-of-input findings live in one place.
This reads kbatch's source with ``ast`` and finds the loops that go round the reader instead: a ``for``
(or a comprehension, or a ``yield from``) over a ``SegmentReader(...)``, over a name bound to one, or an
``iter()`` of one, and any call of a reader's own ``.walk(...)``.
"""

from __future__ import annotations

import ast

import pytest

from .helpers import ROOT

# The floors allowed to: the reader itself, and the engine and its runs.
OWNERS = ("kbatch/reading/", "kbatch/walk/")


def _is_reader_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        isinstance(node.func, ast.Name) and node.func.id == "SegmentReader"
        or isinstance(node.func, ast.Attribute) and node.func.attr == "SegmentReader")


def _readers(tree: ast.AST) -> set[str]:
    """Names assigned a SegmentReader anywhere in the module (``reader = SegmentReader(...)``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_reader_call(node.value):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
            names |= {target.attr for target in node.targets if isinstance(target, ast.Attribute)}
    return names


def _goes_round_a_reader(node: ast.AST, readers: set[str]) -> bool:
    if _is_reader_call(node):
        return True
    if isinstance(node, ast.Name) and node.id in readers:
        return True
    if isinstance(node, ast.Attribute) and node.attr in readers:
        return True
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "walk":
            return _goes_round_a_reader(func.value, readers)
        if isinstance(func, ast.Name) and func.id == "iter" and node.args:
            return _goes_round_a_reader(node.args[0], readers)
    return False


def loops_over_entries(source: str) -> list[int]:
    """The line of each loop in ``source`` that goes round a reader instead of through the walk."""
    tree = ast.parse(source)
    readers = _readers(tree)
    lines = []
    for node in ast.walk(tree):
        iterables = []
        if isinstance(node, (ast.For, ast.AsyncFor)):
            iterables.append(node.iter)
        elif isinstance(node, ast.comprehension):
            iterables.append(node.iter)
        elif isinstance(node, ast.YieldFrom):
            iterables.append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "iter" and node.args:
            iterables.append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "walk":
            iterables.append(node)   # a reader's walk handed on, to be looped over elsewhere
        lines += [iterable.lineno for iterable in iterables if _goes_round_a_reader(iterable, readers)]
    return sorted(set(lines))


@pytest.mark.parametrize("source, expected", [
    ("for item in SegmentReader(stream):\n    pass\n", [1]),
    ("reader = SegmentReader(stream)\nfor item in reader:\n    pass\n", [2]),
    ("reader = SegmentReader(stream)\nx = [i for i in reader.walk(0, 9)]\n", [2]),
    ("self.items = iter(SegmentReader(stream))\n", [1]),
    ("def f(reader):\n    yield from SegmentReader(s).walk(pos, pos + 1)\n", [2]),
    ("reader = SegmentReader(stream)\nfor item in entries(reader):\n    pass\n", []),
    ("for item in entries(SegmentReader(stream), 0, 10):\n    pass\n", []),
    ("reader = SegmentReader(stream)\nreturn stream, reader, reader.walk(0, 9)\n", [2]),
    ("for packet in reader:\n    pass\n", []),   # a name never bound to a SegmentReader
])
def test_the_checker_finds_loops_round_a_reader(source, expected):
    assert loops_over_entries(source) == expected


def test_nothing_outside_the_reader_and_the_walk_loops_over_a_segment_itself():
    found = []
    for path in sorted((ROOT / "kbatch").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(OWNERS):
            continue
        found += [f"{relative}:{line}" for line in loops_over_entries(path.read_text())]
    assert found == [], "loop through kbatch.walk.engine.entries instead"
