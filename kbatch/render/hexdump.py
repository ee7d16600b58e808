"""An annotated hex dump: position | bytes | ASCII, each field's bytes in its colour, and a legend.

Without colour, a ruler under each row brackets every field's bytes with its
legend number, so the boundaries stay visible in plain text and snapshots.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..annotate import Span
from .values import finding_text

PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta", "bright_green",
           "bright_yellow", "bright_blue")
DAMAGE_STYLE = "bold white on red"
RAW_STYLE = "dim"


def _style(index: int, span: Span) -> str:
    if span.kind == "damage":
        return DAMAGE_STYLE
    if span.kind == "raw":
        return RAW_STYLE
    return PALETTE[index % len(PALETTE)]


def _ruler_cell(label: str, width: int) -> str:
    if width >= len(label) + 2:
        return "[" + label.center(width - 2, "-") + "]"
    return label[:width].ljust(width)


def render(console, data: bytes, base: int, spans: list[Span], *, width: int = 16, ruler: bool = True,
           title: str = "") -> None:
    """Print ``data`` (which starts at position ``base``) annotated with ``spans``, then the legend."""
    owner = {}
    for index, span in enumerate(spans):
        for position in range(max(span.start, base), min(span.end, base + len(data))):
            owner[position] = index
    if title:
        console.print(Text(title, style="bold"))
    first_row = base - base % width
    for row in range(first_row, base + len(data), width):
        line = Text(f"{row:>10}  ")
        ascii_part = Text()
        for column in range(width):
            position = row + column
            if base <= position < base + len(data):
                byte = data[position - base]
                index = owner.get(position)
                style = _style(index, spans[index]) if index is not None else RAW_STYLE
                line.append(f"{byte:02x}", style=style)
                ascii_part.append(chr(byte) if 32 <= byte < 127 else ".", style=style)
            else:
                line.append("  ")
                ascii_part.append(" ")
            line.append(" ")
        line.append(" |")
        line.append_text(ascii_part)
        line.append("|")
        console.print(line)
        if ruler:
            console.print(Text(" " * 12 + _ruler(row, width, base, len(data), owner).rstrip()))
    console.print(legend(spans, data, base))


def _ruler(row: int, width: int, base: int, size: int, owner: dict) -> str:
    cells = []
    column = 0
    while column < width:
        position = row + column
        index = owner.get(position) if base <= position < base + size else None
        run_end = column + 1
        while run_end < width and base <= row + run_end < base + size and owner.get(row + run_end) == index \
                and index is not None:
            run_end += 1
        run_width = 3 * (run_end - column) - 1
        cells.append(_ruler_cell(str(index + 1), run_width) if index is not None else " " * run_width)
        column = run_end
    return " ".join(cells)


def legend(spans: list[Span], data: bytes, base: int) -> Table:
    table = Table(header_style="bold", box=None, padding=(0, 1), pad_edge=False, expand=False)
    for name, justify in (("#", "right"), ("field", "left"), ("pos", "right"), ("size", "right"),
                          ("bytes", "left"), ("value", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    for index, span in enumerate(spans):
        where = f"{span.start}–{span.end - 1}" if span.size else f"{span.start} (empty)"
        if span.inner:
            where = "+" + where
        value = Text(span.value)
        if span.finding is not None and span.kind != "field":
            value = Text.assemble(value, "\n", Text(f"✗ {finding_text(span.finding)}", style="bold red"))
        raw = data[max(span.start - base, 0):max(span.end - base, 0)]
        shown = raw[:12].hex(" ") + (" …" if len(raw) > 12 else "")
        table.add_row(Text(str(index + 1), style=_style(index, span)), Text(span.path, style=_style(index, span)),
                      where, str(span.size), shown, value)
    return table
