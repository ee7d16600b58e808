"""The human view of ``kbatch dump``: Rich tables of batches, records and findings."""

from __future__ import annotations

from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..findings import Finding
from ..model import Batch
from .internal import control_text, key_text, value_text
from .user import user_bytes_text
from .values import bytes_text, counted, finding_text, iso_timestamp

VALUE_WIDTH = 48   # characters of a key or value shown unless --full


def _timestamp_cell(ms: int | None) -> Text:
    if ms is None:
        return Text("-", style="dim")
    iso = iso_timestamp(ms)
    return Text(f"{ms}\n{iso}" if iso else str(ms))


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


class BatchTable:
    """One row per batch; damaged ranges as rows of their own, in file order."""

    def __init__(self, title: str):
        self.table = Table(title=title, title_justify="left", header_style="bold", expand=False, show_lines=False)
        for name, justify in (("pos", "right"), ("offsets", "right"), ("count", "right"), ("magic", "right"),
                              ("codec", "left"), ("size", "right"), ("crc", "left"), ("ts type", "left"),
                              ("base timestamp", "left"), ("max timestamp", "left"),
                              ("producer id/epoch/seq", "left"), ("leader epoch", "right"), ("flags", "left"),
                              ("findings", "left")):
            self.table.add_column(name, justify=justify, no_wrap=name != "findings")

    def add_batch(self, batch: Batch) -> None:
        offsets = str(batch.base_offset) if batch.base_offset == batch.last_offset else \
            f"{batch.base_offset}–{batch.last_offset}"
        self.table.add_row(
            str(batch.pos), offsets, "-" if batch.count is None else str(batch.count), str(batch.magic),
            batch.codec, str(batch.size), _crc_cell(batch), batch.timestamp_type,
            _timestamp_cell(batch.base_timestamp), _timestamp_cell(batch.max_timestamp),
            _producer(batch), "-" if batch.partition_leader_epoch is None else str(batch.partition_leader_epoch),
            _flags(batch), _codes(batch.findings),
            style="on grey11" if batch.is_damaged else None,
        )

    def add_region(self, finding: Finding) -> None:
        self.table.add_row(str(finding.pos), Text("—", style="dim"), "", "", "", str(finding.size), "", "", "",
                           "", "", "", "", _codes([finding]))


def records_table(batch: Batch, decode: str, full: bool) -> Table:
    limit = None if full else VALUE_WIDTH
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 1), pad_edge=False)
    for name in ("offset", "timestamp", "key", "value", "headers"):
        table.add_column(name, overflow="fold")
    for record in batch.records or []:
        # an internal topic's bytes that did not read are shown as bytes; a user topic's get its framing named
        shown = bytes_text if record.decoded is not None or record.control is not None else user_bytes_text
        if record.control is not None:
            marker = record.control
            value = Text(control_text(marker), style="magenta")
        elif record.decoded is not None and value_text(record.decoded, limit) is not None:
            value = Text(value_text(record.decoded, limit), style="cyan")
        else:
            value = Text(shown(record.value, decode, limit))
        key = key_text(record.decoded, limit) if record.decoded is not None else None
        key = Text(key, style="cyan") if key is not None else Text(shown(record.key, decode, limit))
        headers = ", ".join(f"{bytes_text(key, 'auto', limit)}={bytes_text(val, decode, limit)}"
                            for key, val in record.headers)
        timestamp = "-" if record.timestamp is None else \
            f"{record.timestamp} {iso_timestamp(record.timestamp)}".rstrip()
        table.add_row(str(record.offset), timestamp, key, value, Text(headers))
    return table


def batch_heading(batch: Batch) -> Text:
    """Two lines: where the batch is and whether it verifies; then its timestamp type, leader epoch,
    producer fields and flags (what the batch table's other columns hold)."""
    state = Text("✓", style="green") if batch.crc_valid else Text("✗ CRC", style="bold red")
    offsets = f"offsets {batch.base_offset}–{batch.last_offset}"
    text = Text.assemble(Text(f"batch @ pos {batch.pos}", style="bold"),
                         f"  {offsets}  count {batch.count if batch.count is not None else '-'}  "
                         f"magic {batch.magic}  {batch.codec}  {counted(batch.size, 'byte')}  crc {batch.crc} ",
                         state)
    details = [batch.timestamp_type]
    if batch.magic >= 2:
        details += [f"leader epoch {batch.partition_leader_epoch}", f"producer id/epoch/seq {_producer(batch)}"]
    flags = _flags(batch)
    if flags:
        details.append(flags)
    text.append("\n  " + "  ".join(details), style="dim")
    return text


def finding_line(finding: Finding) -> Text:
    style = "bold red" if finding.is_damage else "yellow"
    return Text.assemble(Text("  ✗ " if finding.is_damage else "  • ", style=style),
                         finding_text(finding))


class TableSink:
    """``kbatch dump`` as tables: a batch table per file (or, with --records, each batch and its records)."""

    ROWS_PER_TABLE = 1000   # print in slices so a huge segment never sits in memory as one table

    def __init__(self, console, *, records: bool, decode: str, full: bool):
        self.console, self.records, self.decode, self.full = console, records, decode, full

    def begin(self, path: str, size: int) -> None:
        self.title = f"{path} ({counted(size, 'byte')})"
        self.table = None
        self.rows = 0
        self.details: list[Finding] = []
        if self.records:
            self.console.print(Text(self.title, style="bold underline"))

    def _table(self) -> BatchTable:
        if self.table is None:
            self.table = BatchTable(self.title if self.rows == 0 else f"{self.title}, continued")
        return self.table

    def _row_added(self) -> None:
        self.rows += 1
        if self.rows % self.ROWS_PER_TABLE == 0:
            self._flush()

    def _flush(self) -> None:
        if self.table is not None:
            self.console.print(self.table.table)
            self.table = None

    def batch(self, batch: Batch) -> None:
        if self.records:
            self.console.print(batch_heading(batch))
            for finding in batch.findings:
                self.console.print(finding_line(finding))
            if batch.records:
                self.console.print(Padding(records_table(batch, self.decode, self.full), (0, 0, 0, 4), expand=False))
            return
        self._table().add_batch(batch)
        self.details += batch.findings
        self._row_added()

    def region(self, finding: Finding, raw: bytes | None = None) -> None:
        if self.records:
            self.console.print(finding_line(finding))
            return
        self._table().add_region(finding)
        self.details.append(finding)
        self._row_added()

    def end(self, summary) -> None:
        if not self.records:
            self._flush()
            for finding in self.details:
                self.console.print(finding_line(finding))
        verdict = Text("damaged", style="bold red") if summary.damaged else Text("clean", style="green")
        findings = ", ".join(f"{count} {code}" for code, count in sorted(summary.findings.items()))
        self.console.print(Text.assemble(
            f"{summary.path}: {counted(summary.batches, 'batch')}, {counted(summary.records, 'record')}, "
            f"{counted(summary.size, 'byte')}; ",
            verdict, f" ({findings})" if findings else ""))
        self.console.print()
