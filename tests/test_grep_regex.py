"""grep's regular expressions run in linear time (RE2): a hostile value cannot make a search run forever, a
pattern that would need backtracking is refused with the reason, and the rest match as Python's re on bytes."""

from __future__ import annotations

import re

import pytest

from kbatch.ops.regex import LinearRegex

from .handmade import batch

NESTED = "(a+)+$"                  # exponential in Python's re on "a" * n + "b"
HOSTILE = b"a" * 40 + b"b"


@pytest.fixture
def hostile_segment(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(batch(0, [(b"k-0", b"aaa"), (b"k-1", HOSTILE), (b"k-2", b"b" + b"a" * 40)]))
    return str(path)


def test_a_nested_quantifier_on_a_hostile_value_ends(kbatch, hostile_segment):
    """Python's re would take hours on the second record; RE2 answers at once, as re would in the end."""
    result = kbatch("grep", "-c", "--value", NESTED, hostile_segment)
    assert (result.code, result.out) == (0, "2\n"), result.err   # "aaa" and "b" + 40 "a"
    result = kbatch("grep", "--value", "(a+)+b$", hostile_segment)
    assert result.code == 0 and result.out.splitlines() == ["1:k-1\t" + HOSTILE.decode()]
    result = kbatch("grep", "--value", "(a+)+c$", hostile_segment)
    assert (result.code, result.out) == (1, "")


def test_marking_a_match_in_colour_runs_in_linear_time_too(kbatch, hostile_segment):
    result = kbatch("grep", "--color", "always", "(a+)+$|k", hostile_segment)
    assert result.code == 0 and len(result.out.splitlines()) == 3 and "\x1b[" in result.out


@pytest.mark.parametrize("pattern, what", [
    (r"(a)\1", "a backreference"),
    (r"(?P<x>a)(?P=x)", "a backreference"),
    (r"a(?=b)", "a lookahead"),
    (r"a(?!b)", "a lookahead"),
    (r"(?<=a)b", "a lookbehind"),
    (r"(?<!a)b", "a lookbehind"),
    (r"(a)?(?(1)b|c)", "a conditional group"),
    (r"a*+", "a possessive repeat"),
    (r"(?>a)", "an atomic group"),
])
def test_a_pattern_that_needs_backtracking_is_refused_with_the_reason(kbatch, hostile_segment, pattern, what):
    result = kbatch("grep", "--value", pattern, hostile_segment)
    assert result.code == 2 and result.out == ""
    assert f"Error: the expression {pattern!r} holds {what}, which kbatch does not run: its regular " \
           "expressions are matched in linear time (RE2)" in " ".join(result.err.split()), result.err
    assert "Traceback" not in result.err and "re2.cc" not in result.err


def test_a_spelling_re2_lacks_is_refused_in_its_words(kbatch, hostile_segment):
    result = kbatch("grep", "--value", r"a\Z", hostile_segment)
    assert result.code == 2 and "the expression 'a\\\\Z' is one that kbatch does not run" in result.err
    assert "RE2 says: invalid escape sequence: \\Z" in result.err


VALUES = [b"", b"a", b"a\n", b"order-42", b"ORDER-42\n", b"x\x00y", b"caf\xc3\xa9", b"CAF\xc3\x89", b"\xe3\xa9",
          b"\xff\xfe\x80", b"line1\nline2", b"tab\there", b"a b", b"_w0rd-", b"\xc3\xa9t\xc3\xa9", HOSTILE[:12]]
SAME_AS_RE = [("order-4[0-9]", 0), ("^order", 0), ("^ORDER", re.IGNORECASE), ("caf\u00e9", 0),
              ("caf\u00e9", re.IGNORECASE), ("\u00e9", re.IGNORECASE), ("^.{3}$", 0), ("a.b", 0), ("a.b", re.DOTALL),
              (r"\x00", 0), ("[\x80-\xff]", 0), (r"\w+-", 0), (r"\bw", 0), (r"\d\d\b", 0), ("^line2", re.MULTILINE),
              ("(?i)order", 0), ("(?s)1.l", 0), ("[^a-z]", 0), ("a{2,}", 0), ("(a|b)*c?", 0), (r"\S\s\S", 0),
              ("", 0)]


@pytest.mark.parametrize("pattern, flags", SAME_AS_RE)
def test_patterns_match_as_pythons_re_on_bytes(pattern, flags):
    """A byte a character: '.' is one byte, a non-ASCII character stands for its UTF-8 bytes, -i folds ASCII
    letters only (É's bytes are not é's)."""
    source = pattern.encode()
    linear = LinearRegex(source if not flags & ~re.IGNORECASE else _inline(flags) + source,
                         ignore_case=bool(flags & re.IGNORECASE))
    for value in VALUES:
        assert (linear.search(value) is not None) == (re.search(source, value, flags) is not None), (pattern, value)
        found = re.search(source, value, flags)
        assert linear.search(memoryview(b"<" + value + b">")[1:-1]) == (found.span() if found else None)


def _inline(flags: int) -> bytes:
    return b"(?" + (b"s" if flags & re.DOTALL else b"") + (b"m" if flags & re.MULTILINE else b"") + b")"


def test_where_re2_differs_from_re_as_the_readme_says():
    assert re.search(b"a$", b"a\n") and LinearRegex(b"a$").search(b"a\n") is None
    assert LinearRegex(b"a$").search(b"a") == (0, 1)
    assert re.search(rb"\s", b"\x0b") and LinearRegex(rb"\s").search(b"\x0b") is None
