"""The human view of ``kbatch dump``: Rich tables of batches, records and findings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import NamedTuple, cast

from rich.box import HEAVY_HEAD
from rich.cells import cell_len
from rich.console import Console
from rich.containers import Lines
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from kbatch.format.findings import Finding
from kbatch.reading.model import Batch, Record
from kbatch.reading.summary import FileSummary
from kbatch.render.internal import control_text, key_compact, value_text
from kbatch.render.plain import box_rule, lines_width, plain_table_lines, row_lines
from kbatch.render.user_topic import user_bytes_text
from kbatch.output.values import bytes_text, counted, entry_offsets_cell, finding_text, iso_timestamp
from kbatch.output.visible import visible

VALUE_WIDTH = 48   # characters of a key or value shown unless --full


def _timestamp_cell(ms: int | None) -> Text | str:
    if ms is None:
        return Text("-", style="dim")
    iso = iso_timestamp(ms)
    return f"{ms}\n{iso}" if iso else str(ms)


def _crc_cell(batch: Batch) -> Text:
    if batch.crc_valid:
        return Text(f"✓ {batch.crc}", style="green")
    return Text(f"✗ {batch.crc}\n≠ {batch.computed_crc}", style="bold red")


def _flags(batch: Batch) -> str:
    flags = []
    if batch.is_transactional:
        flags.append("txn")
    if batch.is_control:
        flags.append("control")
    if batch.delete_horizon_ms is not None:
        flags.append(f"deleteHorizon={batch.delete_horizon_ms}")
    return " ".join(flags)


def _producer(batch: Batch) -> str:
    if batch.magic < 2:
        return "-"
    return f"{batch.producer_id}/{batch.producer_epoch}/{batch.base_sequence}"


def _codes(findings: list[Finding]) -> Text:
    text = Text()
    for index, finding in enumerate(findings):
        if index:
            text.append("\n")
        text.append(finding.code, style="bold red" if finding.is_damage else "yellow")
    return text


# The batch table's columns, in the order they are shown.  Which are shown depends on the terminal: the
# ones that say where a batch is and whether it is intact are always there, whole; the others get the
# room that is left, in order of use to someone reading a damaged log (_BY_PRIORITY).
_COLUMNS = ("pos", "offsets", "count", "magic", "codec", "size", "crc", "ts type", "base timestamp",
            "max timestamp", "pid/epoch/seq", "leader epoch", "flags", "findings")
_ALWAYS = ("pos", "offsets", "count", "codec", "crc", "findings")
# "crc value" is not a column of its own: it widens the crc column from the verdict to the stored value.
_BY_PRIORITY = ("magic", "size", "crc value", "flags", "leader epoch", "pid/epoch/seq", "max timestamp", "ts type",
                "base timestamp")
_RIGHT = {"pos", "offsets", "count", "magic", "size", "leader epoch"}


def _table_width(widths: list[int], bordered: bool) -> int:
    """A table's width from its columns': "│ cell " per column and the closing "│", or two spaces between."""
    if bordered:
        return sum(width + 3 for width in widths) + 1
    return sum(widths) + 2 * (len(widths) - 1)


def _cell_width(cell: Text | str) -> int:
    return lines_width(_plain(cell).split("\n"))


def _plain(cell: Text | str) -> str:
    """A cell's characters.  A batch table's cell is a str where it has no style (most are: a Text costs a
    few µs, and a segment has ~70,000 batches a GiB), a Text where it has one."""
    return cell if isinstance(cell, str) else cell.plain


def _text(cell: Text | str) -> Text:
    """A cell as Rich takes it: a str given to Rich would be read as markup."""
    return Text(cell) if isinstance(cell, str) else cell


@dataclass
class _Layout:
    shown: tuple[str, ...]
    crc_value: bool
    bordered: bool = True
    stacked_offsets: bool = False
    empty: tuple[str, ...] = ()
    fits: bool = True   # False: even the essential columns are wider than the terminal, and Rich squeezes them

    def keys(self) -> list[str]:
        """The cell each shown column holds: the offsets stacked, the crc with its value, where chosen."""
        return ["stacked offsets" if name == "offsets" and self.stacked_offsets else
                "crc value" if name == "crc" and self.crc_value else name for name in self.shown]

    def dropped(self) -> list[str]:
        """The columns with something to show that did not fit."""
        return [name for name in _BY_PRIORITY if name not in self.shown and name not in self.empty
                and not (name == "crc value" and self.crc_value)]


class BatchTable:
    """One row per batch; damaged ranges as rows of their own, in file order; laid out for ``width``.

    Rows are kept as cells until the table is printed, so the columns can be chosen for what they hold.
    """

    def __init__(self, title: str, width: int):
        self.title, self.width = title, width
        self.rows: list[tuple[dict[str, Text | str], str | None]] = []
        self.min_widths: dict[str, int] = {}   # room for rows not seen yet (a streamed table's positions)

    def add_batch(self, batch: Batch) -> None:
        self.rows.append(batch_cells(batch))

    def add_region(self, finding: Finding) -> None:
        self.rows.append(region_cells(finding))

    def _widths(self) -> dict[str, int]:
        widths = {name: cell_len(name) for name in (*_COLUMNS, "stacked offsets", "crc value")}
        widths["stacked offsets"] = widths["crc value"] = 3
        widths.update((name, max(widths[name], width)) for name, width in self.min_widths.items())
        for cells, _ in self.rows:
            for name, cell in cells.items():
                widths[name] = max(widths[name], _cell_width(cell))
        return widths

    def layout(self) -> _Layout:
        """The columns that fit: the essential ones, then the others by priority while they fit."""
        widths = self._widths()
        # a column with nothing to say in any row (no flags, no producer below magic 2) takes no room
        empty = {name for name in _BY_PRIORITY if all(_plain(cells.get(name, "")) in ("", "-")
                                                      for cells, _ in self.rows)}

        def total(layout: _Layout) -> int:
            used = [widths["stacked offsets" if name == "offsets" and layout.stacked_offsets else
                           "crc value" if name == "crc" and layout.crc_value else name] for name in layout.shown]
            return _table_width(used, layout.bordered)

        layout = _Layout(_ALWAYS, crc_value=False)
        for narrower in (replace(layout, bordered=False), replace(layout, bordered=False, stacked_offsets=True)):
            if total(layout) <= self.width:
                break
            layout = narrower   # the essential columns do not fit: save room
        for name in _BY_PRIORITY:
            if name in empty:
                continue
            wider = replace(layout, crc_value=True) if name == "crc value" else \
                replace(layout, shown=tuple(column for column in _COLUMNS if column in (*layout.shown, name)))
            if total(wider) <= self.width:
                layout = wider
        layout.empty = tuple(empty)
        layout.fits = total(layout) <= self.width
        return layout

    def renderables(self) -> list[Text | Table]:
        layout = self.layout()
        table = Table(header_style="bold", expand=False, box=HEAVY_HEAD if layout.bordered else None,
                      pad_edge=layout.bordered)
        for name in layout.shown:
            table.add_column(name, justify="right" if name in _RIGHT else "left", no_wrap=name != "findings")
        keys = layout.keys()
        for cells, style in self.rows:
            table.add_row(*(_text(cells.get(key, "")) for key in keys), style=style)
        # the title on a line of its own: a table's title wraps at the table's width, a path should not
        title = Text(self.title, style="italic")
        dropped = layout.dropped()
        if not dropped:
            return [title, table]
        return [title, table, Text(f"(not shown at {self.width} columns: {', '.join(dropped)}; "
                            "--format jsonl has every field)", style="dim")]


def batch_cells(batch: Batch) -> tuple[dict[str, Text | str], str | None]:
    """A batch's cells, by column name (and the row's style)."""
    offsets = entry_offsets_cell(batch)
    verdict = Text("✓", style="green") if batch.crc_valid else Text("✗", style="bold red")
    cells: dict[str, Text | str] = {
        "pos": str(batch.pos), "offsets": offsets, "stacked offsets": _stacked(batch),
        "count": "-" if batch.count is None else str(batch.count), "magic": str(batch.magic),
        "codec": batch.codec, "size": str(batch.size), "crc": verdict, "crc value": _crc_cell(batch),
        "ts type": batch.timestamp_type, "base timestamp": _timestamp_cell(batch.base_timestamp),
        "max timestamp": _timestamp_cell(batch.max_timestamp), "pid/epoch/seq": _producer(batch),
        "leader epoch": "-" if batch.partition_leader_epoch is None else str(batch.partition_leader_epoch),
        "flags": _flags(batch), "findings": _codes(batch.findings) if batch.findings else "",
    }
    return cells, "on grey11" if batch.is_damaged else None


def region_cells(finding: Finding) -> tuple[dict[str, Text | str], str | None]:
    """A damaged range's cells: where it is, how long, and what was found."""
    dash = Text("—", style="dim")
    return {"pos": str(finding.pos), "offsets": dash, "stacked offsets": dash,
            "size": str(finding.size), "findings": _codes([finding])}, None


class StreamedBatchTable:
    """A batch table too long to hold: laid out once from its first rows, then written a row at a time.

    The lines are the ones Rich's Table draws for the same rows and widths (the HEAVY_HEAD box, or two
    spaces between columns without one; ``tests/test_terminal.py`` holds the two to the same text), but
    written straight from the cells: Rich lays out each cell again for every table, about a millisecond a
    row, which made a 100,000-batch segment a minute and a half of table.  A later row that does not fit
    a column's width ends the table and starts a wider one.
    """

    _LINES_PER_PRINT = 512

    def __init__(self, held: BatchTable, console: Console):
        self.console, self.title = console, held.title
        self.plain = console.no_color or console.color_system is None
        self.pending: list[tuple[str | list[Text | str], str | None]] = []   # a rule, or a row's pieces
        self.filled: set[str] = set()    # columns left out as empty that a later row has something in
        self.dropped: list[str] = []     # columns left out for room, in any of the tables
        console.print(Text(self.title, style="italic"))
        self._lay_out(held)
        for cells, style in held.rows:
            self.add(cells, style)

    def _lay_out(self, table: BatchTable) -> None:
        self.layout = table.layout()
        self.keys = self.layout.keys()
        widths = table._widths()
        self.widths = [widths[key] for key in self.keys]
        self.right = [name in _RIGHT for name in self.layout.shown]
        self.dropped += [name for name in self.layout.dropped() if name not in self.dropped]
        self._open()

    # -- the box: Rich's box.HEAVY_HEAD, or none ------------------------------------------------------------
    def _rule(self, left: str, fill: str, middle: str, right: str) -> str:
        return box_rule(self.widths, left, fill, middle, right)

    def _open(self) -> None:
        names = [Text(name) for name in self.layout.shown]
        if self.layout.bordered:
            self._emit(self._rule("┏", "━", "┳", "┓"))
        self._row(names, "bold", heavy=True)
        if self.layout.bordered:
            self._emit(self._rule("┡", "━", "╇", "┩"))

    def close(self) -> None:
        if self.layout.bordered:
            self._emit(self._rule("└", "─", "┴", "┘"))
        self._print()
        dropped = self.dropped + sorted(self.filled - set(self.dropped))
        if dropped:
            self.console.print(Text(f"(not shown at {self.console.width} columns: {', '.join(dropped)}; "
                                    "--format jsonl has every field)", style="dim"))

    # -- rows ----------------------------------------------------------------------------------------------
    def add(self, cells: dict[str, Text | str], style: str | None) -> None:
        for name in self.layout.empty:
            if name not in self.filled and _plain(cells.get(name, "")) not in ("", "-"):
                self.filled.add(name)
        texts = [cells.get(key) or "" for key in self.keys]
        lines = [_plain(text).split("\n") for text in texts]
        if any(lines_width(cell) > width for cell, width in zip(lines, self.widths)):
            # a wider table from here on, laid out again for the terminal with the room earlier rows took
            if self.layout.bordered:
                self._emit(self._rule("└", "─", "┴", "┘"))
            self._print()
            self.console.print(Text(f"{self.title}, continued", style="italic"))   # wrapped, as Rich wraps text
            widths = [max(width, lines_width(cell)) for cell, width in zip(lines, self.widths)]
            if _table_width(widths, self.layout.bordered) <= self.console.width:   # the same columns, wider
                self.widths = widths
                self._open()
            else:                                            # columns chosen again, for what fits now
                wider = BatchTable(self.title, self.console.width)
                wider.rows.append((cells, style))
                wider.min_widths = dict(zip(self.keys, self.widths))
                self._lay_out(wider)
                texts = [cells.get(key) or "" for key in self.keys]
                lines = [_plain(text).split("\n") for text in texts]
        self._row(texts, style, lines)

    def _row(self, texts: Sequence[Text | str], style: str | None, lines: list[list[str]] | None = None,
             heavy: bool = False) -> None:
        """A row of cells (``lines``: each cell's plain lines, where the caller has them)."""
        edge = "┃" if heavy else "│"
        if self.plain:   # no colour: the lines as strings, the common case (a pipe, a file)
            self._plain_row(lines or [_plain(text).split("\n") for text in texts], edge)
            return
        styled = [_text(text) for text in texts]
        cells: list[Lines | list[Text]] = [text.split("\n") if "\n" in text.plain else [text] for text in styled]
        for index in range(max(len(cell) for cell in cells)):
            pieces: list[Text | str] = []
            for column, cell in enumerate(cells):
                part = cell[index] if index < len(cell) else Text("")
                padding = " " * (self.widths[column] - cell_len(part.plain))
                if self.layout.bordered:
                    pieces.append(edge + " ")
                elif column:
                    pieces.append("  ")
                if self.right[column]:
                    pieces.append(padding)
                pieces.append(part if part.spans or part.style or style else part.plain)
                if not self.right[column]:
                    pieces.append(padding)
                if self.layout.bordered:
                    pieces.append(" ")
            if self.layout.bordered:
                pieces.append(edge)
            self._emit(pieces, style)

    def _plain_row(self, cells: list[list[str]], edge: str) -> None:
        for line in row_lines(cells, self.widths, self.right, edge if self.layout.bordered else None):
            self._emit(line)

    def _emit(self, line: str | list[Text | str], style: str | None = None) -> None:
        self.pending.append((line, style))
        if len(self.pending) >= self._LINES_PER_PRINT:
            self._print()

    def _print(self) -> None:
        if not self.pending:
            return
        if self.plain:   # every line a string
            lines = cast("list[tuple[str, None]]", self.pending)
            self.console.file.write("\n".join(line for line, _ in lines) + "\n")
        else:            # rules as strings, rows as pieces to style
            text = Text()
            for line, style in self.pending:
                text.append_text(Text.assemble(*line, style=style or "") if isinstance(line, list) else Text(line))
                text.append("\n")
            self.console.print(text, no_wrap=True, overflow="ignore", crop=False, end="")
        self.pending = []


def _stacked(batch: Batch) -> str:
    if batch.lost_offsets is not None or batch.base_offset == batch.last_offset:
        return entry_offsets_cell(batch)
    return f"{batch.base_offset}\n–{batch.last_offset}"


_RECORD_COLUMNS = ("offset", "timestamp", "key", "value", "headers")


def records_frame(show_header: bool = True, whole: tuple[str, ...] = (),
                  columns: tuple[str, ...] = _RECORD_COLUMNS) -> Table:
    """The records table with no rows: its columns, and how Rich lays them out (what plain_table_lines models).
    The columns named in ``whole`` are never wrapped (Rich narrows the others to make room)."""
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 1), pad_edge=False,
                  show_header=show_header)
    for name in columns:
        table.add_column(name, overflow="fold", no_wrap=name in whole)
    return table


class _RecordRow(NamedTuple):
    """A record's cells, in _RECORD_COLUMNS' order."""
    offset: Text | str
    timestamp: str        # its epoch milliseconds, a space, its ISO time (stacked where the room is short)
    key: Text
    value: Text
    headers: Text


@dataclass
class _RecordsLayout:
    columns: tuple[str, ...] = _RECORD_COLUMNS
    stacked: bool = False           # each timestamp as its epoch milliseconds above its ISO time
    whole: tuple[str, ...] = ()     # the columns never wrapped


def _records_layout(rows: list[_RecordRow], width: int | None) -> _RecordsLayout:
    """How a records table is laid out for a terminal ``width`` columns wide (inside dump's four spaces;
    None: as Rich lays it out).

    Where every cell fits on its line, nothing changes.  Where not, Rich would narrow the widest columns
    first and cut an ISO time anywhere; so the timestamp stacks and is kept whole (an ISO time is never
    split), as is the offset, and the key where it takes at most half the room left (a decoded key reads
    as group/topic/partition); headers, where no record has any, take no room; the value gets the width
    left, wrapped between its words and fields."""
    if width is None:
        return _RecordsLayout()
    widths = [max([len(name)] + [_cell_width(row[column]) for row in rows])
              for column, name in enumerate(_RECORD_COLUMNS)]

    def room(columns: tuple[str, ...]) -> int:
        return width - 4 - 2 * (len(columns) - 1)

    if sum(widths) <= room(_RECORD_COLUMNS):
        return _RecordsLayout()
    columns = _RECORD_COLUMNS if any(row.headers.plain for row in rows) else _RECORD_COLUMNS[:4]
    timestamp = max([len("timestamp")] + [lines_width(row.timestamp.split(" ")) for row in rows])
    left = room(columns) - widths[0] - timestamp - (widths[4] if len(columns) == 5 else 0)
    whole = ("offset", "timestamp", "key") if widths[2] <= left // 2 else ("offset", "timestamp")
    return _RecordsLayout(columns, stacked=True, whole=whole)


def records_table(batch: Batch, decode: str, full: bool, records: list[Record] | None = None,
                  show_header: bool = True, width: int | None = None) -> Table:
    """The records of ``batch`` (or the slice ``records`` of them) as a table, laid out for a terminal
    ``width`` columns wide (None: left to Rich)."""
    limit = None if full else VALUE_WIDTH
    rows: list[_RecordRow] = []
    for record in batch.records or [] if records is None else records:
        # an internal topic's bytes that did not read are shown as bytes; a user topic's get its framing named
        shown = bytes_text if record.decoded is not None or record.control is not None else user_bytes_text
        if record.control is not None:
            value = Text(control_text(record.control), style="magenta")
        elif record.decoded is not None and (decoded_value := value_text(record.decoded, limit)) is not None:
            value = Text(decoded_value, style="cyan")
        else:
            value = _bytes_cell(record.value, decode, limit, shown)
        compact = key_compact(record.decoded, limit) if record.decoded is not None else None
        key = Text(compact, style="cyan") if compact is not None else _bytes_cell(record.key, decode, limit, shown)
        headers = Text()
        for index, (name, val) in enumerate(record.headers):
            headers.append_text(Text.assemble(", " if index else "", _bytes_cell(name, "auto", limit), "=",
                                              _bytes_cell(val, decode, limit)))
        timestamp = "-" if record.timestamp is None else \
            f"{record.timestamp} {iso_timestamp(record.timestamp)}".rstrip()
        below = batch.log_start_offset is not None and record.offset < batch.log_start_offset
        rows.append(_RecordRow(Text(str(record.offset), style="dim strike") if below else str(record.offset),
                               timestamp, key, value, headers))
    layout = _records_layout(rows, width)
    table = records_frame(show_header, layout.whole, layout.columns)
    for row in rows:
        if layout.stacked:
            row = row._replace(timestamp=row.timestamp.replace(" ", "\n"))
        table.add_row(*row[:len(layout.columns)])
    return table


NULL = "(null)"   # not "null": that is what a four-letter string value looks like


def _bytes_cell(data: bytes | None, decode: str, limit: int | None, shown=bytes_text) -> Text:
    """A key, value or header as text (``shown``: how its bytes read); a null is styled apart from "null"."""
    if data is None:
        return Text(NULL, style="dim italic")
    return Text(shown(data, decode, limit))


def batch_heading(batch: Batch, width: int | None = None) -> Text:
    """Two lines: where the batch is and whether it verifies; then its timestamp type, leader epoch,
    producer fields and flags (what the batch table's other columns hold).  Narrower than a line needs
    (``width`` columns), each wraps between its fields, never inside one."""
    state = Text("✓", style="green") if batch.crc_valid else Text("✗ CRC", style="bold red")
    offsets = f"offsets {batch.base_offset}–{batch.last_offset}" if batch.lost_offsets is None else \
        f"offsets {batch.lost_offsets.span()}"
    fields = [Text(f"batch @ pos {batch.pos}", style="bold"), Text(offsets),
              Text(f"count {batch.count if batch.count is not None else '-'}"), Text(f"magic {batch.magic}"),
              Text(batch.codec), Text(counted(batch.size, "byte")), Text.assemble(f"crc {batch.crc} ", state)]
    details = [batch.timestamp_type]
    if batch.magic >= 2:
        details += [f"leader epoch {batch.partition_leader_epoch}", f"producer id/epoch/seq {_producer(batch)}"]
    flags = _flags(batch)
    if flags:
        details.append(flags)
    text = _fields_wrapped(fields, width, "", "  ")
    text.append("\n")
    text.append_text(_fields_wrapped([Text(detail, style="dim") for detail in details], width, "  ", "    "))
    return text


def _fields_wrapped(fields: list[Text], width: int | None, indent: str, more: str) -> Text:
    """``fields`` two spaces apart after ``indent``, a line of at most ``width`` cells each (without one, a
    single line); a field that does not fit on a line starts the next, after ``more``."""
    out = Text(indent)
    used = len(indent)
    for number, field in enumerate(fields):
        size = field.cell_len
        if number and width is not None and used + 2 + size > width:
            out.append("\n" + more)
            used = len(more)
        elif number:
            out.append("  ")
            used += 2
        out.append_text(field)
        used += size
    return out


def below_log_start_line(batch: Batch, log_start: int) -> Text:
    """The line under a batch some of whose records lie below the partition's log start offset ``log_start``."""
    last = min(batch.last_offset, log_start - 1)
    offsets = f"offset {last}" if last == batch.base_offset else f"offsets {batch.base_offset}–{last}"
    return Text(f"  ↓ {offsets} below the log start offset {log_start}: deleted, no consumer is "
                "given them", style="yellow")


def finding_line(finding: Finding) -> Text:
    style = "bold red" if finding.is_damage else "yellow"
    return Text.assemble(Text("  ✗ " if finding.is_damage else "  • ", style=style),
                         finding_text(finding))


class TableSink:
    """``kbatch dump`` as tables: a batch table per file (or, with --records, each batch and its records)."""

    ROWS_PER_TABLE = 1000   # print in slices so a huge segment never sits in memory as one table

    def __init__(self, console: Console, *, records: bool, decode: str, full: bool, selection: str = ""):
        self.console, self.records, self.decode, self.full = console, records, decode, full
        # With a selection (--offset-range, --since, --until: its words), only what it selects is shown: a
        # segment without a batch in it is stepped over, and counted for the line that says so at the end.
        self.selection = selection
        self.segments_stepped_over = 0

    def begin(self, path: str, size: int) -> None:
        self.title = f"{visible(path)} ({counted(size, 'byte')})"
        self.table: BatchTable | None = None
        self.streamed: StreamedBatchTable | None = None
        self.pos_width = len(str(size))   # no entry starts past the file's end
        self.details: list[Finding] = []
        self.titled = False
        if self.records and not self.selection:
            self._title()

    def _title(self) -> None:
        """With --records, the file's name above its batches (under a selection, once one is shown)."""
        if self.records and not self.titled:
            self.console.print(Text(self.title, style="bold underline"))
            self.titled = True

    def _add_row(self, row: tuple[dict[str, Text | str], str | None]) -> None:
        """Up to ROWS_PER_TABLE rows are held and printed as one Rich table; a longer table is streamed."""
        if self.streamed is not None:
            self.streamed.add(*row)
            return
        if self.table is None:
            self.table = BatchTable(self.title, self.console.width)
        self.table.rows.append(row)
        if len(self.table.rows) > self.ROWS_PER_TABLE:
            self.table.min_widths = {"pos": self.pos_width}
            if self.table.layout().fits:
                self.streamed = StreamedBatchTable(self.table, self.console)
            else:   # a terminal too narrow for even the essential columns: Rich squeezes them, a slice at a time
                for renderable in self.table.renderables():
                    self.console.print(renderable)
                self.title = self.title.removesuffix(", continued") + ", continued"
            self.table = None

    def _flush(self) -> None:
        if self.streamed is not None:
            self.streamed.close()
        elif self.table is not None and self._plain and self.table.layout().fits:
            # Without colour the streamed writer draws Rich's lines (tests/test_terminal.py), ~10x sooner:
            # Rich took ~1.5 s for a 1000-batch table.  (In colour it shades a damaged row's borders too.)
            StreamedBatchTable(self.table, self.console).close()
        elif self.table is not None:
            for renderable in self.table.renderables():
                self.console.print(renderable)
        self.table = self.streamed = None

    @property
    def _plain(self) -> bool:
        return self.console.no_color or self.console.color_system is None

    def batch(self, batch: Batch) -> None:
        if self.records:
            self._title()
            self.console.print(batch_heading(batch, self.console.width))
            if batch.log_start_offset is not None and batch.base_offset < batch.log_start_offset:
                self.console.print(below_log_start_line(batch, batch.log_start_offset))
            for finding in batch.findings:
                self.console.print(finding_line(finding))
            # In slices, as the batch table: a batch of millions of records never sits in memory as one table.
            records, first = iter(batch.records or []), True
            plain = self._plain
            while chunk := list(islice(records, self.ROWS_PER_TABLE)):
                table = records_table(batch, self.decode, self.full, chunk, first, self.console.width)
                lines = plain_table_lines(table, self.console) if plain else None
                if lines is not None:
                    self.console.file.write("".join(f"{line}\n" for line in lines))
                else:
                    self.console.print(Padding(table, (0, 0, 0, 4), expand=False))
                first = False
            return
        self._add_row(batch_cells(batch))
        self.details += batch.findings

    def region(self, finding: Finding, raw: bytes | None = None) -> None:
        if self.records:
            self._title()
            self.console.print(finding_line(finding))
            return
        self._add_row(region_cells(finding))
        self.details.append(finding)

    def unreadable(self, path: str, reason: str) -> None:
        self.console.print(Text.assemble(f"{visible(path)}: ", Text("cannot read", style="bold red"), f" ({visible(reason)})"))
        self.console.print()

    def end(self, summary: FileSummary) -> None:
        if self.selection and not summary.batches and not summary.findings:
            self.segments_stepped_over += 1   # nothing selected in it: "0 batches" would read as empty
            return
        if not self.records:
            self._flush()
            for finding in self.details:
                self.console.print(finding_line(finding))
        verdict = Text("damaged", style="bold red") if summary.damaged else Text("clean", style="green")
        findings = ", ".join(f"{count} {code}" for code, count in sorted(summary.findings.items()))
        counts = f"{counted(summary.batches, 'batch')}, {counted(summary.records, 'record')}, "
        if self.selection:   # the records of the batches shown, not only those the selection keeps
            counts = f"{counted(summary.batches, 'batch')} selected ({counted(summary.records, 'record')}) of "
        self.console.print(Text.assemble(
            f"{visible(summary.path)}: {counts}{counted(summary.size, 'byte')}; ",
            verdict, f" ({findings})" if findings else ""))
        self.console.print()

    def stepped_over(self, beside: int) -> None:
        """The last line under a selection: what was stepped over, so that what is shown is not taken for
        all there is (``beside``: the files beside the segments a directory brought, which hold no records)."""
        parts = []
        if self.segments_stepped_over:
            parts.append(counted(self.segments_stepped_over, "segment"))
        if beside:
            parts.append(f"{counted(beside, 'file')} beside segments")
        if self.selection and parts:
            self.console.print(f"Stepped over, outside {self.selection}: {', '.join(parts)}.")


def held_against_line(paths: list[str], disagree: int) -> Text:
    """"  held against 2 .txnindex and 1 .snapshot files: they agree with the log": what a partition's files beside
    its log were held to it by the cross-checks (kbatch.partition.crosscheck.held_against_log), and how it went."""
    counts = [f"{sum(path.endswith(suffix) for path in paths)} {suffix}" for suffix in (".txnindex", ".snapshot")]
    files = f"{' and '.join(count for count in counts if not count.startswith('0 '))} file{'s' if len(paths) != 1 else ''}"
    return Text(f"  held against {files}: " + (f"{disagree} finding{'s' if disagree != 1 else ''} (below)" if disagree
                                              else "they agree with the log"), style="yellow" if disagree else "green")
