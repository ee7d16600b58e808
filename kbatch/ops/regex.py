"""grep's regular expressions, matched in time linear in the bytes searched (RE2), whatever the pattern.

Record contents are attacker-controlled and Python's ``re`` backtracks: ``(a+)+$`` on forty ``a`` and a
``b`` would take hours on one value.  RE2 (the ``google-re2`` binding) runs any pattern it accepts in
linear time, so no value can make a search run on.  It reads the bytes as Latin-1, one character a byte:
``.`` is one byte, a non-ASCII character of the pattern stands for its UTF-8 bytes, ``-i`` folds ASCII
letters only — what Python's ``re`` does on bytes.  What it does not take is what needs backtracking (a
backreference, a lookahead or lookbehind, a conditional group, a possessive or atomic repeat) and a few
spellings of Python's (``\\Z``: RE2 writes ``\\z``); such a pattern is refused with RE2's reason.

Where the two differ on a pattern both take: ``$`` matches only at the very end of a key or value (Python's
also before a final newline), and ``\\s`` does not match the vertical tab (0x0B).
"""

from __future__ import annotations

from importlib import import_module

import re2

# Python's own regular expression parser, to name what a refused pattern holds (private modules, which the
# type stubs do not declare: imported by name).
_re_constants = import_module("re._constants")
_re_parser = import_module("re._parser")

# What needs backtracking, by the opcode Python's parser gives it, and how a user calls it.
_BACKTRACKING = {"GROUPREF": "a backreference", "GROUPREF_EXISTS": "a conditional group",
                 "ASSERT": "a lookahead", "ASSERT_NOT": "a lookahead", "POSSESSIVE_REPEAT": "a possessive repeat",
                 "ATOMIC_GROUP": "an atomic group"}


class LinearRegex:
    """A pattern compiled by RE2: :meth:`search` of a key's or value's bytes says where the first match is,
    :meth:`pieces` what every match holds (of its group ``group``: 0, the whole match)."""

    __slots__ = ("pattern", "ignore_case", "group", "_match", "_anchor")

    def __init__(self, pattern: bytes, ignore_case: bool = False, group: int = 0):
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1   # a byte a character, as re on bytes
        options.case_sensitive = not ignore_case
        options.log_errors = False                       # (a refusal is said once, by kbatch)
        options.never_capture = group == 0               # only where the whole match lies: 15% less a call
        try:
            compiled = re2.compile(pattern, options)
        except re2.error as error:
            raise ValueError(refusal(pattern.decode("utf-8", "replace"), str(error))) from None
        self.pattern, self.ignore_case, self.group = pattern, ignore_case, group
        # The binding's own search() builds a match object in Python; the RE2 call alone is what grep asks.
        self._match, self._anchor = compiled._regexp.Match, re2._Anchor.UNANCHORED

    def search(self, data) -> tuple[int, int] | None:
        """The span of the first match in ``data`` (bytes-like), or None."""
        span = self._match(self._anchor, data, 0, len(data))[0]
        return span if span[0] >= 0 else None

    def pieces(self, data) -> list[bytes]:
        """The bytes of ``group`` of each match in ``data``, left to right, none empty, as re.finditer finds
        them; the next search starts where the group ends (a word's right neighbour may be the next word's
        left one)."""
        out, pos, end = [], 0, len(data)
        while pos <= end:
            spans = self._match(self._anchor, data, pos, end)
            if spans[0][0] < 0:
                break
            start, stop = spans[self.group]
            if stop > start:
                out.append(bytes(data[start:stop]))
            pos = stop if stop > start else max(start, spans[0][0]) + 1
        return out

    def __reduce__(self):   # (a search in parts rebuilds it in each process)
        return LinearRegex, (self.pattern, self.ignore_case, self.group)


def shown_text_pattern(pattern: str | None, literal: str | None, ignore_case: bool):
    """The pattern (or the literal text) as RE2 finds it in text as shown (to mark matches in colour), or None
    when RE2 does not take it: its ``sub`` runs in linear time on any value shown."""
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.log_errors = False
    try:
        return re2.compile(pattern if pattern is not None else re2.escape(literal), options)
    except re2.error:
        return None


def refusal(pattern: str, reason: str) -> str:
    """Why a pattern is refused: what in it needs backtracking (as Python's parser reads it), and RE2's words."""
    reason = reason.removeprefix("b'").removesuffix("'").replace("\\\\", "\\")
    named = _backtracking_in(pattern)
    what = f"holds {named}, which" if named else "is one that"
    return (f"the expression {pattern!r} {what} kbatch does not run: its regular expressions are matched in "
            f"linear time (RE2), so that no record can make a search run forever; RE2 says: {reason}")


def _backtracking_in(pattern: str) -> str | None:
    """The first construct of the pattern that needs backtracking, named, or None."""
    try:
        parsed = _re_parser.parse(pattern)
    except Exception:   # (not Python's either: RE2's reason says enough)
        return None
    return _first_named(parsed)


def _first_named(node) -> str | None:
    if isinstance(node, _re_parser.SubPattern):
        node = list(node)
    if not isinstance(node, (list, tuple)):
        return None
    if len(node) == 2 and isinstance(node[0], _re_constants._NamedIntConstant):
        op, argument = node
        if str(op) in _BACKTRACKING:
            lookbehind = str(op).startswith("ASSERT") and argument[0] < 0
            return "a lookbehind" if lookbehind else _BACKTRACKING[str(op)]
        return _first_named(argument)
    return next((name for name in map(_first_named, node) if name), None)
