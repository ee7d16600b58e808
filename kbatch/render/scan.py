"""The scan report as Rich tables, or as one JSON document."""

from __future__ import annotations

import json

from rich.console import JustifyMethod, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from kbatch.output.values import iso_timestamp
from kbatch.output.visible import shell_word, visible


def render_report(console, result: dict) -> None:
    """The report: a table with a row per topic-partition where it fits the console, else a block each."""
    title = f"kbatch scan: {result['segments']} segments, {result['bytes']} bytes -> {result['out']}"
    table = _table(title, result["partitions"])
    natural = Measurement.get(console, console.options.update_width(1_000_000), table).maximum
    if natural <= console.width:
        console.print(table)
    else:   # 12 columns want ~145: on an 80-column terminal they would fold every cell into slivers
        console.print(Text(title, style="bold"))
        console.print(_blocks(result["partitions"]))
    if result["damaged_segments"]:
        console.print(Text(f"{len(result['damaged_segments'])} damaged segment(s):", style="bold red"))
        for path in result["damaged_segments"]:
            console.print(f"  {visible(path)}  (kbatch verify-crc {shell_word(path)})")
    else:
        console.print(Text("no damage found", style="green"))
    for name in result.get("failed_cross_checks", []):
        console.print(Text(f"{visible(name)}: its indexes, snapshots or checkpoints disagree with its segments "
                           f"(kbatch verify-crc --index-only on its directory)", style="bold red"))
    out = result["out"]
    console.print("tables: " + ", ".join(visible(f"{out}/{name}") for name in result["tables"]))


def _table(title: str, partitions: list[dict]) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("topic-partition", "left"), ("segments", "right"), ("batches", "right"), ("records", "right"),
        ("bytes", "right"), ("ratio", "right"), ("corrupt", "right"), ("gaps", "right"), ("overlaps", "right"),
        ("time range", "left"), ("producers", "right"), ("open txns", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")
    cross_checked = any(row.get("cross_checks") for row in partitions)
    if cross_checked:
        table.add_column("cross-checks", overflow="fold")
    for row in partitions:
        span = "-" if row["first_timestamp"] is None else \
            f"{iso_timestamp(row['first_timestamp'])}\n{iso_timestamp(row['last_timestamp'])}"
        cells: list[RenderableType] = [_name(row), str(row["segments"]), str(row["batches"]), str(row["records"]), str(row["bytes"]),
                 _ratio(row), _corrupt(row), str(len(row["offset_gaps"])), str(len(row["offset_overlaps"])), span,
                 _producers(row), _open_transactions(row)]
        if cross_checked:
            cells.append(_cross_checks(row.get("cross_checks")))
        table.add_row(*cells)
    return table


def _blocks(partitions: list[dict]) -> Table:
    """The same fields, a topic-partition's name beside three lines of them (wrapped at spaces)."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column()
    for row in partitions:
        counts = (f"{row['segments']} segments, {row['batches']} batches, {row['records']} records, "
                  f"{row['bytes']} bytes, ratio {_ratio(row)}")
        checks = Text.assemble("corrupt ", _corrupt(row), f", gaps {len(row['offset_gaps'])}, overlaps "
                               f"{len(row['offset_overlaps'])}, producers ", _producers(row),
                               f", open txns {_open_transactions(row)}")
        if row.get("cross_checks") is not None:
            checks.append_text(Text.assemble(", cross-checks ", _cross_checks(row["cross_checks"])))
        span = "no timestamps" if row["first_timestamp"] is None else \
            f"{iso_timestamp(row['first_timestamp'])} to {iso_timestamp(row['last_timestamp'])}"
        grid.add_row(_name(row), Text("\n").join([Text(counts), checks, Text(span)]))
    return grid


def _name(row: dict) -> str:
    return "-" if row["topic"] is None else f"{row['topic']}-{row['partition']}"


def _ratio(row: dict) -> str:
    return "-" if row["compression_ratio"] is None else f"{row['compression_ratio']:.2f}"


def _corrupt(row: dict) -> Text:
    return Text(str(row["corrupt_batches"]), style="bold red" if row["corrupt_batches"] else "")


def _producers(row: dict) -> Text:
    """How many producers, and how many times they broke a rule of kbatch producers' (it names them)."""
    breaks = sum(row.get("producer_breaks", {}).values())
    return Text.assemble(str(row["producers"]), (f" ({breaks} rule breaks)" if breaks else "", "yellow"))


def _open_transactions(row: dict) -> str:
    # a producer whose last marker is not believed (its CRC fails): neither open nor known to be ended
    unknown = [f"{producer} (outcome unknown)" for producer in row.get("unknown_outcome_transactions", [])]
    return ", ".join([str(p) for p in row["open_transactions"]] + unknown) or "-"


def _cross_checks(checks: dict | None) -> Text:
    if checks is None:
        return Text("-", style="dim")
    codes = ", ".join(f"{count} {code}" for code, count in checks["findings"].items() if code != "zero-tail")
    if checks["errors"]:
        return Text(codes, style="bold red")
    return Text("ok" + (f" ({codes})" if codes else ""), style="green")


def write_scan_json(out, result: dict) -> None:
    """The report as one JSON document (--format json)."""
    out.write(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
