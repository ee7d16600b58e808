"""An annotated hex dump: position | bytes | ASCII, each field's bytes in its colour, and a legend.

Without colour, a ruler under each row brackets every field's bytes with its
legend number, so the boundaries stay visible in plain text and snapshots.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.control import strip_control_codes
from rich.text import Span as StyleSpan, Text

from kbatch.format.codecs import CodecError
from kbatch.format.findings import Finding
from kbatch.ops.annotate import Span, decompressed_spans, entry_spans
from kbatch.output.values import counted, finding_text
from kbatch.output.visible import visible

PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta", "bright_green",
           "bright_yellow", "bright_blue")
DAMAGE_STYLE = "bold white on red"
RAW_STYLE = "dim"



def show_entry(console, annotation, file: str, index: int, item, findings, *, width: int, ruler: bool,
               max_bytes: int, decompressed: bool, chosen: bool, internal: dict) -> bool:
    """``hexdump-annotate``'s view of one entry of ``annotation`` (kbatch.ops.annotate.Annotation): a batch
    (its records inflated too with ``decompressed``) or a damaged range, at most ``max_bytes`` of it (0: all),
    then the findings the dump does not mark; whether what is shown holds damage."""
    from kbatch.render.table import finding_line

    view = annotation.view
    low, high = item.pos, item.pos + item.size
    if max_bytes:
        high = min(high, low + max_bytes)
    cut = _cut_note(item.size, high - low)
    if isinstance(item, Finding):
        spans = [Span(item.pos, item.pos + item.size, "damaged range", counted(item.size, "byte"), "raw", finding)
                 for finding in findings[:1]]
        render(console, view[low:high], low, spans, width=width, ruler=ruler, cut=cut,
               title=f"{visible(file)}: damaged range at {item.pos}, {counted(item.size, 'byte')}")
        for finding in findings[1:]:
            console.print(finding_line(finding))
        # a range that is information (an active segment's preallocated zero tail) is no damage
        return any(finding.is_damage for finding in findings)
    spans = _within(entry_spans(item, view[item.pos:item.pos + item.size], index, (low, high), **internal),
                    low, high)
    render(console, view[low:high], low, spans, width=width, ruler=ruler, cut=cut,
           title=f"{visible(file)}: batch[{index}] at {item.pos}, {counted(item.size, 'byte')}, magic {item.magic}, {item.codec}")
    for finding in item.findings:
        console.print(finding_line(finding))
    if decompressed and item.compressed:
        _show_decompressed(console, annotation, item, index, width, ruler, max_bytes, internal)
    elif not chosen:
        console.print("(the first batch: --batch N, --offset O, --position P or --range A:B show others)")
    return item.is_damaged


def show_range(console, annotation, byte_range: tuple[int, int], width: int, ruler: bool, internal: dict) -> bool:
    """Every field that lies in file positions [low, high) of ``annotation``; whether any of it is damaged."""
    low, high = byte_range
    spans, damaged = annotation.range(low, high, internal)
    high = min(high, annotation.size)
    render(console, annotation.view[low:high], low, spans, width=width, ruler=ruler, title=f"positions {low}–{high - 1}")
    return damaged


def _show_decompressed(console, annotation, batch, index: int, width: int, ruler: bool, max_bytes: int,
                       internal: dict) -> None:
    try:
        inflated = annotation.inflated(batch)
    except CodecError as error:
        console.print(f"(the records do not decompress: {error.detail})")
        return
    high = min(len(inflated), max_bytes) if max_bytes else len(inflated)
    console.print()
    spans = _within(decompressed_spans(batch, inflated, index, (0, high), **internal), 0, high)
    render(console, inflated[:high], 0, spans, width=width, ruler=ruler,
           cut=_cut_note(len(inflated), high),
           title=f"batch[{index}] records, decompressed: {counted(len(inflated), 'byte')} "
                 "(positions +N are inside the decompressed data, not the file)")


def _cut_note(size: int, shown: int) -> str:
    if shown >= size:
        return ""
    return f"… {size - shown} more bytes not shown (the first {shown} of {size}; --max-bytes N shows more, 0 all)"


def _within(spans, low: int, high: int) -> list:
    """The spans that lie (in part) in [low, high): an empty one (a field of no bytes) where it stands."""
    return [span for span in spans if span.end > low and span.start < high
            or span.start == span.end and low <= span.start < high]

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


def render(console, data, base: int, spans: list[Span], *, width: int = 16, ruler: bool = True,
           title: str = "", cut: str = "") -> None:
    """Print ``data`` (which starts at position ``base``) annotated with ``spans``, then the legend.

    Rows are printed as they are made, walking the spans alongside the bytes
    (the spans tile, in order), so time and memory follow the bytes shown.
    ``cut``, if given, is printed after the rows: what was left out.
    """
    if title:
        console.print(Text(title, style="bold"))
    _print_lines(console, _rows(data, base, spans, width, ruler))
    if cut:
        console.print(Text(cut, style="yellow"))
    _print_lines(console, legend_lines(console, spans, data, base))


def _rows(data, base: int, spans: list[Span], width: int, ruler: bool):
    owners = _Owners(spans)
    end = base + len(data)
    for row in range(base - base % width, end, width):
        first, last = max(row, base), min(row + width, end)
        row_owners = [owners.at(position) for position in range(first, last)]
        before, after = first - row, row + width - last
        line = Text(f"{row:>10}  " + "   " * before)
        ascii_part = Text(" " * before)
        for position, index in zip(range(first, last), row_owners):
            byte = data[position - base]
            style = _style(index, spans[index]) if index is not None else RAW_STYLE
            line.append(f"{byte:02x}", style=style)
            ascii_part.append(chr(byte) if 32 <= byte < 127 else ".", style=style)
            line.append(" ")
        line.append("   " * after)
        line.append(" |")
        line.append_text(ascii_part)
        line.append(" " * after + "|")
        yield line
        if ruler:
            yield Text(" " * 12 + _ruler([None] * before + row_owners + [None] * after).rstrip())


class _Owners:
    """Which span (by index) owns each position, for positions asked in increasing order."""

    def __init__(self, spans: list[Span]):
        self.spans = spans
        self.next = 0

    def at(self, position: int) -> int | None:
        spans = self.spans
        while self.next < len(spans) and spans[self.next].end <= position:
            self.next += 1
        # Zero-length spans (a null key) own no byte: step past them to the span that holds the position.
        index = self.next
        while index < len(spans) and spans[index].start == spans[index].end:
            index += 1
        if index < len(spans) and spans[index].start <= position < spans[index].end:
            return index
        return None


def _ruler(owners: list[int | None]) -> str:
    cells = []
    column = 0
    while column < len(owners):
        index = owners[column]
        run_end = column + 1
        while index is not None and run_end < len(owners) and owners[run_end] == index:
            run_end += 1
        run_width = 3 * (run_end - column) - 1
        cells.append(_ruler_cell(str(index + 1), run_width) if index is not None else " " * run_width)
        column = run_end
    return " ".join(cells)


_LEGEND_COLUMNS = (("#", "right"), ("field", "left"), ("pos", "right"), ("size", "right"), ("bytes", "left"),
                   ("value", "left"))
_CHUNK_LINES = 512   # lines handed to Rich at a time: one print call per chunk, not per line


def _print_lines(console, lines) -> None:
    """Print Text lines in chunks, each exactly as given (no wrapping or cropping: a row is a row)."""
    chunk, count = Text(), 0
    for line in lines:
        chunk.append_text(line)
        chunk.append("\n")
        count += 1
        if count == _CHUNK_LINES:
            console.print(chunk, no_wrap=True, overflow="ignore", crop=False, end="")
            chunk, count = Text(), 0
    if count:
        console.print(chunk, no_wrap=True, overflow="ignore", crop=False, end="")


def _where(span: Span) -> str:
    where = f"{span.start}–{span.end - 1}" if span.size else f"{span.start} (empty)"
    return "+" + where if span.inner else where


def _legend_cells(index: int, span: Span, data, base: int) -> tuple[list[list[tuple[str, str | None]]], str | None]:
    """A span's legend cells, each a list of lines (text, style), and its finding (None: none), which goes
    under the row across the width rather than into the value's column.  Strings, not Text: a batch of
    tiny records has hundreds of thousands of spans."""
    style = _style(index, span)
    value: list[tuple[str, str | None]] = [(line, None) for line in strip_control_codes(span.value).split("\n")]
    finding = None
    if span.finding is not None and span.kind != "field":
        finding = strip_control_codes(f"✗ {finding_text(span.finding)}")
    raw = data[max(span.start - base, 0):max(span.end - base, 0)]
    raw_hex = raw[:12].hex(" ") + (" …" if len(raw) > 12 else "")
    path: list[tuple[str, str | None]] = [(line, style) for line in strip_control_codes(span.path).split("\n")]
    return [[(str(index + 1), style)], path, [(_where(span), None)], [(str(span.size), None)], [(raw_hex, None)],
            value], finding


def legend_lines(console, spans: list[Span], data, base: int):
    """The legend: one line per span under a header, in columns as wide as their widest cell.

    Laid out by hand rather than as a Rich table: a table is measured whole, and
    a batch of tiny records has hundreds of thousands of spans.  So the cells are
    made twice, as strings: once to measure the columns, once to print each line
    as it comes.  Two spaces part the columns; a cell of two lines (a value and
    its finding) makes two lines, and a value wider than the console leaves is
    folded as Rich folds it.  A finding goes under its row, from the field's column to the console's
    width, so that it is not squeezed into what the value's column has left.
    """
    header = [[(name, "bold")] for name, _ in _LEGEND_COLUMNS]

    def rows():
        yield header, None
        for index, span in enumerate(spans):
            yield _legend_cells(index, span, data, base)

    widths = [0] * len(_LEGEND_COLUMNS)
    for row, _ in rows():
        for column, cell in enumerate(row):
            widths[column] = max(widths[column], max(cell_len(text) for text, _ in cell))
    shown = _legend_columns_shown(widths, console.width)
    indent = widths[0] + 2   # a finding starts under the field's path
    for row, finding in rows():
        row[_BYTES] = [(_cut_hex(text, widths[_BYTES]), style) for text, style in row[_BYTES]]
        row[-1] = [folded for text, style in row[-1] for folded in _folded_value(console, text, style, widths[-1])]
        for line_number in range(max(len(row[column]) for column in shown)):
            parts, styles, at = [], [], 0
            for column in shown:
                (_, justify), cell = _LEGEND_COLUMNS[column], row[column]
                text, style = cell[line_number] if line_number < len(cell) else ("", None)
                pad = " " * (widths[column] - cell_len(text))
                start = at + 2 * bool(column) + len(pad) * (justify == "right")
                parts.append(("  " if column else "") + (pad + text if justify == "right" else text + pad))
                at += len(parts[-1])
                if style and text:
                    styles.append(StyleSpan(start, start + len(text), style))
            yield Text("".join(parts), spans=styles)
        if finding is not None:
            for text, _ in _folded_value(console, finding, "bold red", max(console.width - indent, 20)):
                yield Text(" " * indent + text, spans=[StyleSpan(indent, indent + len(text), "bold red")])


_BYTES = 4            # the legend's bytes column: a copy of what the dump above shows, so it gives way first
VALUE_ROOM = 24       # the room a value keeps before the bytes column gives way (a CRC, a timestamp, a codec)


def _legend_columns_shown(widths: list[int], room: int) -> list[int]:
    """The legend's columns that fit ``room`` cells, ``widths`` set to fit (the value's last).

    The value is what a reader comes for, so it keeps VALUE_ROOM (or its widest, if less): the bytes column
    narrows first (fewer bytes, then "…"), then goes; what is left of the room is the value's.
    """
    columns = list(range(len(widths)))

    def left() -> int:
        return room - sum(widths[column] for column in columns[:-1]) - 2 * (len(columns) - 1)

    wanted = min(widths[-1], VALUE_ROOM)
    if left() < wanted:
        widths[_BYTES] -= min(wanted - left(), widths[_BYTES] - len(_LEGEND_COLUMNS[_BYTES][0]))
    if left() < wanted:
        columns.remove(_BYTES)
    widths[-1] = max(1, min(widths[-1], left()))
    return columns


def _cut_hex(text: str, width: int) -> str:
    """Hex bytes ("00 01 02") cut to ``width`` cells at a byte, with "…" for the rest."""
    if cell_len(text) <= width:
        return text
    whole = max(0, (width - 1) // 3)   # n bytes and " …" take 3n + 1 cells
    return " ".join(text.split(" ")[:whole] + ["…"])


def _folded_value(console, text: str, style: str | None, width: int) -> list[tuple[str, str | None]]:
    """A value line cut into lines of ``width`` cells, as Rich folds it."""
    if cell_len(text) <= width:
        return [(text, style)]
    return [(line.plain, style) for line in Text(text).wrap(console, width, overflow="fold")]
