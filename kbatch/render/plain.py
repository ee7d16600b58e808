"""Rich tables written from their cells' text: the lines Rich draws without colour, without Rich.

Rich lays out every cell of a table again each time it draws it, most of a millisecond a row, which is
what a long table off a terminal costs (a pipe, a file: no colour, a fixed width).  Where the lines are
plain to model, kbatch writes them here from the cells instead; where they are not (a cell that must be
wrapped in a way not modelled, characters that are not printable), these return None and Rich draws.
``tests/test_terminal.py`` holds every function here to Rich's own lines.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

# Rich is imported where it is asked: verify-crc's summary off a terminal is written without loading it.

PIPE_WIDTH = 200   # the columns of text off a terminal with none to go by (kbatch.render.console)


def pipe_width() -> int:
    """The columns of text written into a pipe or a file, where COLUMNS says nothing: the width of the terminal
    the command was started from -- its standard error's, else its standard input's: still the terminal in
    ``kbatch dump | less`` or ``2>/dev/null | head``, where a person reads the lines -- else
    :data:`PIPE_WIDTH` (a cron job, a CI log: no terminal)."""
    for stream in (sys.stderr, sys.stdin):
        try:
            if stream is not None and stream.isatty():
                return os.get_terminal_size(stream.fileno()).columns or PIPE_WIDTH
        except (OSError, ValueError, AttributeError):   # a stand-in stream with no descriptor
            continue
    return PIPE_WIDTH


def plain_width(stream) -> int | None:
    """The width kbatch's console for ``stream`` (kbatch.render.console.make_console) draws at where it
    draws plain -- off a terminal by Rich's own test, so without colour or control codes -- told without
    making it; None where only Rich can tell (a terminal, a COLUMNS that is not a number, an environment
    that makes Rich act as on a terminal).  tests/test_terminal.py holds it to the console's own."""
    if sys.platform == "win32" or "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ or stream.isatty():
        return None
    columns = os.environ.get("COLUMNS")
    if not columns:
        return pipe_width()
    return int(columns) if columns.isdigit() else None


def cell_len(text: str) -> int:
    """Rich's rich.cells.cell_len: the terminal cells ``text`` takes."""
    from rich.cells import cell_len as rich_cell_len

    return rich_cell_len(text)


def lines_width(lines: list[str]) -> int:
    """The terminal cells the widest of a cell's lines takes (a wide character two; ASCII one each, and most
    cells are ASCII: asked first, it spares Rich's per-character look-up)."""
    return max(len(line) if line.isascii() else cell_len(line) for line in lines)


def box_rule(widths: list[int], left: str, fill: str, middle: str, right: str) -> str:
    """A line of a box across columns ``widths`` wide (each with a space of padding either side)."""
    return left + middle.join(fill * (width + 2) for width in widths) + right


def row_lines(cells: list[list[str]], widths: list[int], right: list[bool], edge: str | None) -> list[str]:
    """The lines of a row of cells (each its lines, none wider than its column), as Rich draws them without
    colour: each line padded to its column, right-justified where ``right``, between ``edge`` characters
    (None: no box, two spaces between columns); a cell with fewer lines than the row is blank below."""
    inner = f" {edge} " if edge else "  "
    out = []
    for index in range(max(len(lines) for lines in cells)):
        parts = []
        for column, lines in enumerate(cells):
            part = lines[index] if index < len(lines) else ""
            width = widths[column]
            if not part.isascii():
                width += len(part) - cell_len(part)   # a wide character takes two cells
            parts.append(part.rjust(width) if right[column] else part.ljust(width))
        line = inner.join(parts)
        out.append(f"{edge} {line} {edge}" if edge else line)
    return out


def line_width(line: str) -> int:
    """The terminal cells a printable line takes (Rich's cell_len, without its per-character look-ups
    for ASCII)."""
    return len(line) if line.isascii() else cell_len(line)


_WORD = re.compile(r"\s*\S+\s*")   # a word and the spaces around it, as Rich's wrapping reads words


def _fold(line: str, width: int, console) -> list[str]:
    """One line of a cell as Rich lays it out in a column ``width`` cells wide, each piece padded to the
    width: the pieces of rich.text.Text.wrap (justify left, overflow fold).

    Where every character takes one cell, Rich's rule is written out here (rich._wrap.divide_line): a
    word that fits the line's rest stays on it; one that fits a line starts the next; a longer one is
    cut into pieces of the width; then each piece sheds the spaces past the width.  Otherwise Rich does it.
    """
    length = line_width(line)
    if length <= width:
        return [line + " " * (width - length)]
    if length != len(line) or not all(cell_len(char) == 1 for char in set(line) if not char.isascii()):
        from rich.text import Text

        return [piece.plain for piece in Text(line).wrap(console, width, justify="left", overflow="fold")]
    breaks, used = [], 0
    for word in _WORD.finditer(line):
        start, text = word.start(), word.group()
        needed = len(text.rstrip())
        if width - used >= needed:
            used += len(text)
        elif needed > width:   # folded into pieces of the width
            for at in range(start, word.end(), width):
                if at:
                    breaks.append(at)
                used = min(width, word.end() - at)
        elif used and start:
            breaks.append(start)
            used = len(text)
    pieces = []
    for start, end in zip([0, *breaks], [*breaks, len(line)]):
        piece = line[start:end]
        if len(piece) > width:   # trailing spaces past the width go (as many as are past it)
            piece = piece[:len(piece) - min(len(piece) - len(piece.rstrip()), len(piece) - width)]
        pieces.append(piece[:width].ljust(width))
    return pieces


def plain_table_lines(table: Table, console) -> list[str] | None:
    """The lines Rich draws for ``table`` (as :func:`records_table` makes it) inside four spaces of
    indent, without colour: written from the cells' text rather than laid out again by Rich.

    Rich measures every cell twice and wraps it once for each table, most of a millisecond a record;
    here each column is measured once, as Rich measures it (its widest line, padding included), the
    columns' widths come from Rich itself, laid out for one row of cells that wide, and a line wider
    than its column is wrapped as Rich wraps it (:func:`_fold`).  None where the cells hold what this
    does not model (markup in a plain string, characters that are not printable): Rich draws those.
    ``tests/test_terminal.py`` holds the lines to Rich's own at many widths.
    """
    from rich.table import Table
    from rich.text import Text

    columns = table.columns
    rows: list[Sequence[RenderableType]] = [[column.header for column in columns]] if table.show_header else []
    rows += zip(*(column.cells for column in columns))
    texts = []
    for given in rows:
        cells: list[list[str]] = []
        for cell in given:
            text = cell.plain if isinstance(cell, Text) else cell
            if not isinstance(text, str) or (not isinstance(cell, Text) and "[" in text):
                return None   # a str cell is read as markup by Rich
            lines = text.split("\n")
            if not all(line.isprintable() for line in lines):
                return None
            cells.append(lines)
        texts.append(cells)
    available = console.width - 4
    padding = [(index > 0) + (index < len(columns) - 1) for index in range(len(columns))]
    natural = [min(max((line_width(line) for row in texts for line in row[index]), default=0), available - pad) + pad
               for index, pad in enumerate(padding)]
    proxy = Table(box=None, padding=(0, 1), pad_edge=False, show_header=False, expand=False)
    for column in columns:
        proxy.add_column(overflow="fold", no_wrap=column.no_wrap)
    proxy.add_row(*("x" * (width - pad) for width, pad in zip(natural, padding)))
    widths = [width - pad for width, pad in
              zip(proxy._calculate_column_widths(console, console.options.update_width(available)), padding)]
    if min(widths) < 1:
        return None
    for row in texts:
        for column, width, lines in zip(columns, widths, row):
            if column.no_wrap and lines_width(lines) > width:
                return None   # a column kept whole that Rich had to narrow anyway: Rich crops it, not modelled
    out = []
    for number, row in enumerate(texts):
        cells = [[folded for line in lines for folded in _fold(line, width, console)]
                 for lines, width in zip(row, widths)]
        height = max(len(lines) for lines in cells)
        if number == 0 and table.show_header:   # Rich sets a header at the bottom of its row
            cells = [[" " * width] * (height - len(lines)) + lines for lines, width in zip(cells, widths)]
        for index in range(height):
            out.append("    " + "  ".join(lines[index] if index < len(lines) else " " * width
                                          for lines, width in zip(cells, widths)))
    return out


def bordered_lines(title: str | None, headers: list[str], right: list[bool], rows: list[list[str]],
                   section_ends: list[bool], width: int) -> list[str] | None:
    """A table under a title, with a heavy head and sections -- verify-crc's summary, a row per file --
    as Rich draws it without colour at ``width`` columns (rich.box.HEAVY_HEAD, a space of padding either
    side of each cell), written from its cells' text: each cell a str, its lines split at "\n";
    ``right`` the right-justified columns, ``section_ends`` the rows a rule follows (not the last).

    Rich lays out every cell of a table again to draw it, about 0.65 ms a row of six: a log directory of
    2,000 segments spent 1.5 s drawing its summary.  Written here only where the lines are plain to
    model: the table fits ``width`` with every column at its widest cell (so Rich wraps nothing), the
    title fits on one line above it, and every cell and header is printable text; None otherwise, and Rich
    draws it.  ``tests/test_terminal.py`` holds the lines to Rich's own.
    """
    texts = []   # each row's cells, each cell its lines: the header row first
    for row in [headers, *rows]:
        cells = [text.split("\n") for text in row]
        if not all(line.isprintable() for lines in cells for line in lines):
            return None
        texts.append(cells)
    if any(len(lines) > 1 for lines in texts[0]):
        return None   # a header of two lines sits at the bottom of its row: not modelled
    widths = [max(lines_width(row[index]) for row in texts) for index in range(len(headers))]
    table_width = sum(widths) + 3 * len(widths) + 1
    if table_width > width or (title is not None and (not title.isprintable() or line_width(title) > table_width)):
        return None
    lines = [] if title is None else [title + " " * (table_width - line_width(title))]
    lines.append(box_rule(widths, "┏", "━", "┳", "┓"))
    lines += row_lines(texts[0], widths, right, "┃")
    lines.append(box_rule(widths, "┡", "━", "╇", "┩"))
    for number, (cells, section_end) in enumerate(zip(texts[1:], section_ends), 1):
        lines += row_lines(cells, widths, right, "│")
        if section_end and number < len(rows):
            lines.append(box_rule(widths, "├", "─", "┼", "┤"))
    lines.append(box_rule(widths, "└", "─", "┴", "┘"))
    return lines
