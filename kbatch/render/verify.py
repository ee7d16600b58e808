"""How ``kbatch verify-crc`` reports: a line per finding as it is found, then a summary table.

Rich is imported only by the table sink, and only where it draws (a terminal): ``--quiet``, JSON
Lines and a summary off a terminal never pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kbatch.format.findings import Finding
from kbatch.reading.summary import FileSummary
from kbatch.render.plain import bordered_lines, plain_width
from kbatch.output.values import counted, finding_text
from kbatch.output.visible import visible

if TYPE_CHECKING:
    from rich.console import JustifyMethod

    from kbatch.reading.lost import LostOffsets


def finding_marker(finding: Finding) -> str:
    """What opens a finding's line: ✗ for damage, • for the rest, and its severity."""
    return f"{'✗' if finding.is_damage else '•'} {finding.severity.value} "


class _Offsets(NamedTuple):
    """What a finding's line says of the batch it lies in (kbatch.output.values.entry_offsets_text,
    kbatch.output.jsonout.finding_offsets), without a hold on the batch (a view of the reader's window)."""

    pos: int
    base_offset: int
    last_offset: int
    lost_offsets: LostOffsets | None


class BatchOffsets:
    """Remembers the batch being verified, the one before, and the file's first, so each of its findings carries
    the batch's offsets: an offset-gap or offset-outlier is told with the batch after the one it is about, and the
    first batch's offset-outlier with the batch after the second (kbatch.reading.invariants.OffsetOrder), which
    only the batches after show."""

    current: _Offsets | None = None
    previous: _Offsets | None = None
    first: _Offsets | None = None

    def entry(self, batch) -> None:
        offsets = _Offsets(batch.pos, batch.base_offset, batch.last_offset, batch.lost_offsets)
        self.previous, self.current = self.current, offsets
        if self.first is None:
            self.first = offsets

    def forget(self) -> None:
        """A file is done: its batches own none of the next file's findings."""
        self.current = self.previous = self.first = None

    def batch_of(self, finding: Finding) -> _Offsets | None:
        """The offsets of the batch a finding belongs to; None for a damaged range between batches."""
        for batch in (self.current, self.previous, self.first):
            if batch is not None and batch.pos == finding.entry_pos:
                return batch
        return None


class VerifyTableSink(BatchOffsets):
    """A line per finding as it is found, then the summary: a row per file (and a total under many).

    Off a terminal (a pipe, a file) both are plain text at a fixed width, written without Rich: Rich's
    console is made only where it draws (a terminal, or a summary that does not fit the width).
    """

    COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (("file", "left"), ("batches", "right"), ("records", "right"), ("bytes", "right"),
               ("findings by code", "left"), ("verdict", "left"))

    def __init__(self, stream, *, no_color: bool = False):
        self.stream, self.no_color = stream, no_color
        self.width = plain_width(stream)   # None: a terminal, or a width only Rich can tell
        self._console = None
        self.summaries: list[FileSummary] = []
        self.rows: list[FileSummary | tuple[str, str]] = []   # in input order: a summary, or (path, why unreadable)

    @property
    def console(self):
        """kbatch's Rich console for the stream (kbatch.render.console), made when first asked for."""
        if self._console is None:
            from kbatch.render.console import make_console

            self._console = make_console(self.stream, no_color=self.no_color)
        return self._console

    def finding(self, path: str, finding: Finding) -> None:
        marker = finding_marker(finding)
        text = finding_text(finding, self.batch_of(finding))
        if self.width is not None or not self.console.is_terminal:
            # One line per finding, unstyled and unwrapped, for grep: a crafted batch can have 100,000 of them.
            self.stream.write(f"{visible(path)}: {marker}{text}\n")
            return
        from rich.text import Text

        style = "bold red" if finding.is_damage else "yellow"
        self.console.print(Text.assemble(f"{visible(path)}: ", Text(marker, style=style), text), soft_wrap=True)

    def file_done(self, summary: FileSummary) -> None:
        self.forget()
        self.summaries.append(summary)
        self.rows.append(summary)

    def unreadable(self, path: str, reason: str) -> None:
        self.rows.append((path, reason))

    def close(self) -> None:
        if not self.rows:
            return
        if self.width is not None:   # a pipe or a file: the lines Rich would draw, without it (a row a file)
            lines = self.plain_lines(self.width)
        elif self.console.no_color or self.console.color_system is None:   # a terminal without colour: the same
            lines = self.plain_lines(self.console.width)
        else:
            lines = None
        if lines is None:
            self.console.print(self.table(self.console.width))
        else:
            self.stream.write("\n".join(lines) + "\n")

    def plain_lines(self, width: int) -> list[str] | None:
        """The summary's lines as Rich draws them without colour at ``width`` columns, written from its
        cells (kbatch.render.plain.bordered_lines); None where Rich must draw them."""
        rows = [row for row, _ in self.cells(width)]
        section_ends = [False] * len(rows)
        if len(self.rows) > 1:
            section_ends[-2] = True   # the rule above the total
        return bordered_lines("verify-crc", [name for name, _ in self.COLUMNS],
                              [justify == "right" for _, justify in self.COLUMNS], rows, section_ends, width)

    def cells(self, width: int | None = None) -> list[tuple[list[str], str]]:
        """The summary's rows as text, each with its verdict's style: a row per file (or unreadable path), in
        input order, and under many a total (the last row, after a rule); the paths cut to fit ``width``
        (:func:`fitted_paths`)."""
        rows = self._cells()
        if width is not None:
            paths = rows[:len(self.rows)]   # (not the total, under many: no path)
            for row, path in zip(paths, fitted_paths([row for row, _ in rows], width)):
                row[0][0] = path
        return rows

    def _cells(self) -> list[tuple[list[str], str]]:
        rows = []
        for summary in self.rows:
            if isinstance(summary, tuple):
                path, reason = summary
                rows.append(([visible(path), "-", "-", "-", visible(reason), "unreadable"], "bold red"))
                continue
            codes = "\n".join(f"{count} {code}" for code, count in sorted(summary.findings.items())) or "-"
            verdict = ("damaged", "bold red") if summary.damaged else ("ok", "green")
            rows.append(([visible(summary.path), str(summary.batches), str(summary.records), str(summary.size), codes,
                          verdict[0]], verdict[1]))
        if len(self.rows) > 1:
            damaged = sum(summary.damaged for summary in self.summaries)
            unreadable = len(self.rows) - len(self.summaries)
            parts = [f"{damaged} damaged"] * bool(damaged) + [f"{unreadable} unreadable"] * bool(unreadable)
            checks = sum(summary.cross_check for summary in self.summaries)
            files = counted(len(self.rows) - checks, "file") + (f"\n{counted(checks, 'cross-check')}" if checks else "")
            rows.append(([files, str(sum(s.batches for s in self.summaries)),
                          str(sum(s.records for s in self.summaries)), str(sum(s.size for s in self.summaries)),
                          counted(sum(sum(s.findings.values()) for s in self.summaries), "finding"),
                          ", ".join(parts) or "ok"], "bold red" if parts else "green"))
        return rows

    def table(self, width: int | None = None):
        """The summary as a Rich table (:meth:`cells`, the verdicts styled)."""
        from rich.table import Table
        from rich.text import Text

        table = Table(title="verify-crc", title_justify="left", header_style="bold")
        for name, justify in self.COLUMNS:
            table.add_column(name, justify=justify)
        cells = self.cells(width)
        for number, (row, style) in enumerate(cells, 1):
            if number == len(cells) and len(self.rows) > 1:
                table.add_section()
            table.add_row(*row[:-1], Text(row[-1], style=style))
        return table


def fitted_paths(rows: list[list[str]], width: int) -> list[str]:
    """The file column of the summary's ``rows`` fitted (:func:`_fitted_path`) to leave the other columns their
    widest cell in ``width`` (a border and a space either side of each cell), so that the segments of one
    partition still read apart: Rich would cut them at the end, where they differ."""
    from kbatch.render.plain import line_width as cell_len   # without Rich: a summary off a terminal never loads it

    others = [max((cell_len(line) for row in rows for line in row[column].split("\n")), default=0)
              for column in range(1, len(rows[0]))] if rows else []
    headers = [name for name, _ in VerifyTableSink.COLUMNS]
    room = width - (len(headers) + 1) - 2 * len(headers) - sum(max(cell, cell_len(header))
                                                               for cell, header in zip(others, headers[1:]))
    room = max(room, len(headers[0]))
    return [_fitted_path(row[0], room, cell_len) for row in rows]


def _fitted_path(path: str, room: int, cell_len) -> str:
    """``path`` in ``room`` cells, its name's end (a segment's offset, the file's kind) always kept, "…" where
    whole directories are left out: on one line, the name under the directories nearest it that fit
    (``…/orders-0/00000000000000000027.log``); else on two, the directory (``…/orders-0/``) over the name,
    whose leading zeros give way first (``…27.log``), then its middle."""
    if cell_len(path) <= room:
        return path
    directory, _, name = path.rpartition("/")
    if not directory:
        return _name_fitted(name, room, cell_len)
    line = _directories_fitted(directory, room - cell_len(name) - 1, cell_len)
    if line is not None:
        return f"{line}/{name}"
    head = _directories_fitted(directory, room - 1, cell_len)
    if head is None:   # not even the nearest directory fits: its middle gives way
        parent = directory.rpartition("/")[2]
        head = "…/" + _middle_cut(parent, room - 3, cell_len) if room >= 8 else _middle_cut(parent, room - 1, cell_len)
    return f"{head}/\n{_name_fitted(name, room, cell_len)}"


def _directories_fitted(directory: str, room: int, cell_len) -> str | None:
    """As many of ``directory``'s last components as fit in ``room`` cells, whole, after "…/" where some are
    left out; None where not even the last one fits."""
    parts = directory.split("/")
    for keep in range(len(parts), 0, -1):
        text = ("…/" if keep < len(parts) else "") + "/".join(parts[-keep:])
        if cell_len(text) <= room:
            return text
    return None


def _name_fitted(name: str, room: int, cell_len) -> str:
    """A file name in ``room`` cells: whole; else without a segment name's leading zeros (``…27.log``,
    ``…0.log`` for offset 0), then its end alone; a label of words (`` (cross-checks)``) wrapped between
    them; else cut in the middle, its end kept."""
    if cell_len(name) <= room:
        return name
    if " " in name:
        import textwrap

        lines = textwrap.wrap(name.strip(), max(room, 1), break_long_words=False)
        if all(cell_len(line) <= room for line in lines):
            return "\n".join(lines)
    significant = name.lstrip("0")
    if significant != name:
        significant = ("0" if significant.startswith(".") else "") + significant
        return "…" + (significant if cell_len(significant) < room else significant[-max(room - 1, 1):])
    return _middle_cut(name, room, cell_len)


def _middle_cut(text: str, room: int, cell_len) -> str:
    """``text`` in ``room`` cells with its middle left out ("…"): a third of the room for its start, the rest
    for its end."""
    room = max(room, 2)
    start, end = room // 3, room - 1 - room // 3
    cut = text[:start] + "…" + text[len(text) - end:]
    while cell_len(cut) > room and (start or end):   # wide characters take two cells
        start, end = (start - 1, end) if start > end // 2 else (start, end - 1)
        cut = text[:start] + "…" + (text[len(text) - end:] if end else "")
    return cut


class VerifyJsonlSink(BatchOffsets):
    """One finding per line (with its batch's base_offset and last_offset, null between batches), then one
    summary line per file."""

    def __init__(self, out):
        # (imported here: the table's run never loads the JSON writers)
        from kbatch.output import jsonout

        self.out, self.json = out, jsonout

    def finding(self, path: str, finding: Finding) -> None:
        offsets = self.json.finding_offsets(finding, self.batch_of(finding))
        self.out.write(self.json.json_line(self.json.file_first({**self.json.finding_line(path, finding), **offsets})))

    def file_done(self, summary: FileSummary) -> None:
        self.forget()
        self.out.write(self.json.json_line(self.json.summary_line(summary)))

    def unreadable(self, path: str, reason: str) -> None:
        self.out.write(self.json.json_line(self.json.file_first(self.json.error_line(path, reason))))

    def close(self) -> None:
        pass
