"""The one place kbatch makes its Rich consoles.

Data goes to stdout, diagnostics to stderr.  Colour only on a terminal, and
never with NO_COLOR or --no-color; strings are never read as markup.  Off a terminal (a pipe, a file) the
width is COLUMNS, else the width of the terminal the command was started from (``kbatch dump | less`` reads
as on the terminal), else 200 columns (kbatch.render.plain.pipe_width): the tests, whose standard error and
input are pytest's stand-ins and whose COLUMNS is dropped, pin the lines at 200.
"""

from __future__ import annotations

import os
import sys

from rich.console import Console

from kbatch.render.plain import pipe_width


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # Rich's own handling exits with status 1 ("damage found"); the command line's one handler decides.
        self.quiet = True
        raise BrokenPipeError


def make_console(stream=None, *, no_color: bool = False) -> Console:
    stream = stream or sys.stdout
    terminal = stream.isatty()
    # NO_COLOR (https://no-color.org), when set and not empty, is --no-color: Rich alone would drop the
    # colours but still write bold, italic and underline.
    no_color = no_color or bool(os.environ.get("NO_COLOR"))
    width = None if terminal or os.environ.get("COLUMNS") else pipe_width()
    # No markup: kbatch styles with Text, and a str it prints (a file name, a transactional id) is shown as
    # it is, where Rich would read "[bold]" in it as a style and drop it.
    return _Console(file=stream, width=width, no_color=no_color or None, highlight=False,
                   color_system="auto" if terminal and not no_color else None,
                   emoji=False, markup=False, soft_wrap=False)


def error_console() -> Console:
    return make_console(sys.stderr)


def print_wrapped(console, line: str, style: str = "") -> None:
    """A line of words, wrapped to the console's width, indented (a wrapped line's rest a little more)."""
    import textwrap

    from rich.text import Text

    text = textwrap.fill(line, width=max(console.width, 40), initial_indent="  ", subsequent_indent="    ",
                         break_long_words=False, break_on_hyphens=False)
    console.print(Text(text, style=style), soft_wrap=True)
