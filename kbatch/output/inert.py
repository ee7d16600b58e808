"""Output no CI runner can take for a command of its own.

A CI runner reads the log of each step for commands: GitHub Actions takes a line that starts with ``::``
after blanks for a workflow command (``::error::``, ``::add-mask::``, ``::stop-commands::``;
actions/runner ``ActionCommand.TryParseV2``, which trims the line first), and ``##[name]`` anywhere in a
line for its older form (``ActionCommand.TryParse``, ``IndexOf("##[")``); Azure Pipelines takes
``##vso[`` anywhere, TeamCity ``##teamcity[``.  A record's key or a transactional id that holds one
would be read as the runner's command wherever kbatch shows it, as a table's first column, a line of
grep or Kafka's dump text.  So in a runner's job (:func:`read_by_a_runner`) every line the ``kbatch``
program writes, on standard output and error and in every format, is made inert:

- a second ``:`` after blanks at a line's start is written ``\\x3a``, as kbatch.output.visible writes a
  character (no JSON line starts that way: JSON escapes line ends inside its strings);
- the ``[`` of ``##`` and a word (``##[``, ``##vso[``) is written ``\\u005b``, which JSON reads as the
  same ``[`` (the two can stand together only inside a JSON string).

A line that holds neither comes back as it is: every line a healthy log gives.  Outside a runner's job
nothing reads such commands, and the output is left as it is, at no cost.
"""

from __future__ import annotations

import functools
import io
import os
import re
from contextlib import contextmanager
from typing import Iterable, Mapping

from kbatch.output.terminal import TerminalBuffer

_KEPT = 64   # of a line not yet ended: enough to hold any runner's prefix (``##teamcity``) and its start


# The variables each runner sets in its jobs: GitHub Actions, Azure Pipelines, TeamCity.
RUNNER_VARIABLES = ("GITHUB_ACTIONS", "TF_BUILD", "TEAMCITY_VERSION")


def read_by_a_runner(environ: Mapping[str, str]) -> bool:
    """Whether a CI runner that takes commands from a step's log reads this process's output."""
    return any(environ.get(name) for name in RUNNER_VARIABLES)


def inert_where_a_runner_reads(lines: Iterable[str]) -> list[str]:
    """``lines`` kbatch hands to another program's output (pytest's report of a failed assert), made inert
    where a CI runner reads it, else as they are."""
    return [inert(line) for line in lines] if read_by_a_runner(os.environ) else list(lines)


def inert(text: str) -> str:
    """``text`` with nothing a CI runner reads as its command (the module says what and how)."""
    if "::" not in text and "##" not in text:
        return text
    at_line_start, prefixed = _patterns()
    return prefixed.sub(r"\1\\u005b", at_line_start.sub(r"\1\\x3a", text))


@functools.cache
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    """(compiled at first use: every run checks whether a runner reads it, few meet a command)"""
    return re.compile(r"(?:^|(?<=[\r\n]))(\s*:):"), re.compile(r"(##\w*)\[")


# After a line end, the bytes that may begin "blanks, then ::": ASCII blanks, the colon, and the first byte of
# each blank beyond ASCII that .NET's TrimStart trims (U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
# U+202F, U+205F, U+3000).
_MAY_START_A_COMMAND = frozenset(b" \t\x0b\x0c:\xc2\xe1\xe2\xe3")


class InertBuffer(TerminalBuffer):
    """The buffer of a text stream, standard output or error of the ``kbatch`` program in a runner's job
    (kbatch.__main__), whose every write is made :func:`inert` on its way in, a prefix begun by one write
    and ended by the next included.

    A write that cannot hold what the rule rewrites passes as it is after a few searches: no ``#``, no
    carriage return, and no line whose first byte could begin a command.  The end of the line not yet
    ended is kept (at most 64 bytes, as written) to see across writes; only the character that completes a
    prefix is rewritten, and it is always in the write at hand.  Bytes that are not text (a segment written
    to standard output) pass :meth:`verbatim`. With ``encoding``, on a terminal, what is written is then
    made safe to show there too (:class:`TerminalBuffer`).
    """

    def __init__(self, raw, buffer_size: int = io.DEFAULT_BUFFER_SIZE, *, encoding: str | None = None):
        super().__init__(raw, buffer_size, encoding=encoding)
        self._line = b""         # the end of the line not yet ended, as written
        self._line_whole = True  # whether _line holds all of that line (so its start is a line's start)

    def write(self, data) -> int:
        if not self.filtering:
            return super().write(data)
        data = data if type(data) is bytes else bytes(data)
        out = self._inert(data) if self._may_hold_a_command(data) else data
        super().write(out)
        self._keep(out)
        return len(data)

    def _inert(self, data: bytes) -> bytes:
        """The rule on the text (bytes that are not UTF-8 kept as they are), seen after the line's kept
        start: a newline stands for a line's start, "x" for the middle of a line."""
        start = b"\n" + self._line if self._line_whole else b"x" + self._line
        return inert((start + data).decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")[len(start):]

    def _may_hold_a_command(self, data: bytes) -> bool:
        if b"#" in data or b"#" in self._line or b"\r" in data:
            return True
        if self._line_whole and data and self._line.strip(b" \t\x0b\x0c") in (b"", b":") \
                and data[0] in _MAY_START_A_COMMAND:
            return True
        last = len(data) - 1
        end = data.find(b"\n")
        while 0 <= end < last:
            if data[end + 1] in _MAY_START_A_COMMAND:
                return True
            end = data.find(b"\n", end + 1)
        return False

    def _keep(self, out: bytes) -> None:
        end = max(out.rfind(b"\n"), out.rfind(b"\r"))
        if end >= 0:
            line, whole = out[end + 1:], True
        else:
            line, whole = self._line + out[-_KEPT:], self._line_whole and len(self._line) + len(out) <= _KEPT
        if len(line) > _KEPT:
            line, whole = line[-_KEPT:], False
        self._line, self._line_whole = line, whole

    @contextmanager
    def verbatim(self):
        try:
            with super().verbatim():
                yield self
        finally:
            self._line, self._line_whole = b"", True   # where the bytes left off is not known: taken as a start


def _inert_buffer(stream) -> InertBuffer | None:
    buffer = getattr(stream, "buffer", None)
    return buffer if isinstance(buffer, InertBuffer) else None


@contextmanager
def verbatim(stream):
    """What the text stream ``stream`` is given while the block runs passes as it is, where it is the
    program's inert output: for commands kbatch means for the runner (``verify-crc --format github``)."""
    buffer = _inert_buffer(stream)
    if buffer is None:
        yield stream
        return
    stream.flush()
    with buffer.verbatim():
        try:
            yield stream
        finally:
            stream.flush()
