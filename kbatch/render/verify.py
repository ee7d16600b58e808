"""How ``kbatch verify-crc`` reports: a line per finding as it is found, then a summary table.

Rich is imported only by the table sink, when it prints: ``--quiet`` and JSON
Lines runs never pay for it.
"""

from __future__ import annotations

import json

from ..findings import Finding
from ..summary import FileSummary
from .jsonout import finding_dict
from .values import counted, finding_text


def finding_offsets(finding: Finding, batch) -> dict:
    """The base and last offset of the batch a finding belongs to (null for a damaged range between batches)."""
    inside = batch is not None and batch.pos == finding.entry_pos
    return {"base_offset": batch.base_offset if inside else None, "last_offset": batch.last_offset if inside else None}


class _BatchOffsets:
    """Remembers the batch being verified, so each of its findings carries the batch's offsets."""

    current = None

    def entry(self, batch) -> None:
        self.current = batch

    def batch_of(self, finding: Finding):
        """The batch a finding belongs to; None for a damaged range between batches."""
        batch = self.current
        return batch if batch is not None and batch.pos == finding.entry_pos else None


class VerifyTableSink(_BatchOffsets):
    def __init__(self, console):
        self.console = console
        self.summaries: list[FileSummary] = []
        self.rows: list[FileSummary | tuple[str, str]] = []   # in input order: a summary, or (path, why unreadable)

    def finding(self, path: str, finding: Finding) -> None:
        marker = f"{'✗' if finding.is_damage else '•'} {finding.severity.value} "
        text = finding_text(finding, self.batch_of(finding))
        if not self.console.is_terminal:
            # One line per finding, unstyled and unwrapped, for grep: a crafted batch can have 100,000 of them.
            self.console.file.write(f"{path}: {marker}{text}\n")
            return
        from rich.text import Text

        style = "bold red" if finding.is_damage else "yellow"
        self.console.print(Text.assemble(f"{path}: ", Text(marker, style=style), text), soft_wrap=True)

    def file_done(self, summary: FileSummary) -> None:
        self.current = None
        self.summaries.append(summary)
        self.rows.append(summary)

    def unreadable(self, path: str, reason: str) -> None:
        self.rows.append((path, reason))

    def close(self) -> None:
        from .plain import plain_bordered_lines

        if not self.rows:
            return
        table = self.table()
        plain = self.console.no_color or self.console.color_system is None
        lines = plain_bordered_lines(table, self.console) if plain else None
        if lines is None:
            self.console.print(table)
        else:   # a pipe or a file: the same lines, without Rich laying out every cell (a row a file)
            self.console.file.write("\n".join(lines) + "\n")

    def table(self):
        """The summary: a row per file (or unreadable path), in input order, and a total under many."""
        from rich.table import Table
        from rich.text import Text

        table = Table(title="verify-crc", title_justify="left", header_style="bold")
        for name, justify in (("file", "left"), ("batches", "right"), ("records", "right"), ("bytes", "right"),
                              ("findings by code", "left"), ("verdict", "left")):
            table.add_column(name, justify=justify)
        for summary in self.rows:
            if isinstance(summary, tuple):
                path, reason = summary
                table.add_row(path, "-", "-", "-", reason, Text("unreadable", style="bold red"))
                continue
            codes = "\n".join(f"{count} {code}" for code, count in sorted(summary.findings.items())) or "-"
            verdict = Text("damaged", style="bold red") if summary.damaged else Text("ok", style="green")
            table.add_row(summary.path, str(summary.batches), str(summary.records), str(summary.size), codes, verdict)
        if len(self.rows) > 1:
            damaged = sum(summary.damaged for summary in self.summaries)
            table.add_section()
            table.add_row(counted(len(self.rows), "file"), str(sum(s.batches for s in self.summaries)),
                          str(sum(s.records for s in self.summaries)), str(sum(s.size for s in self.summaries)),
                          counted(sum(sum(s.findings.values()) for s in self.summaries), "finding"),
                          _total_verdict(damaged, len(self.rows) - len(self.summaries)))
        return table


def _total_verdict(damaged: int, unreadable: int):
    from rich.text import Text

    parts = [f"{damaged} damaged"] * bool(damaged) + [f"{unreadable} unreadable"] * bool(unreadable)
    return Text(", ".join(parts), style="bold red") if parts else Text("ok", style="green")


class VerifyJsonlSink(_BatchOffsets):
    """One finding per line (with its batch's base_offset and last_offset, null between batches), then one
    summary line per file."""

    def __init__(self, out):
        self.out = out

    def finding(self, path: str, finding: Finding) -> None:
        offsets = finding_offsets(finding, self.current)
        self.out.write(json.dumps({"file": path, "type": "finding", **finding_dict(finding), **offsets},
                                  ensure_ascii=False) + "\n")

    def file_done(self, summary: FileSummary) -> None:
        self.current = None
        self.out.write(json.dumps({"type": "summary", **summary.as_dict()}, ensure_ascii=False) + "\n")

    def unreadable(self, path: str, reason: str) -> None:
        self.out.write(json.dumps({"file": path, "type": "error", "error": f"cannot read: {reason}"},
                                  ensure_ascii=False) + "\n")

    def close(self) -> None:
        pass


class QuietSink:
    def entry(self, batch) -> None:
        pass

    def unreadable(self, path: str, reason: str) -> None:
        pass

    def finding(self, path: str, finding: Finding) -> None:
        pass

    def file_done(self, summary: FileSummary) -> None:
        pass

    def close(self) -> None:
        pass
