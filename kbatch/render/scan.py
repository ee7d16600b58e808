"""The scan report as Rich tables."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .values import iso_timestamp


def render_report(console, result: dict) -> None:
    table = Table(title=f"kbatch scan: {result['segments']} segments, {result['bytes']} bytes -> {result['out']}",
                  title_justify="left", header_style="bold")
    for name, justify in (("topic-partition", "left"), ("segments", "right"), ("batches", "right"),
                          ("records", "right"), ("bytes", "right"), ("ratio", "right"), ("corrupt", "right"),
                          ("gaps", "right"), ("overlaps", "right"), ("time range", "left"),
                          ("producers", "right"), ("open txns", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    cross_checked = any(row.get("cross_checks") for row in result["partitions"])
    if cross_checked:
        table.add_column("cross-checks", overflow="fold")
    for row in result["partitions"]:
        name = "-" if row["topic"] is None else f"{row['topic']}-{row['partition']}"
        span = "-" if row["first_timestamp"] is None else \
            f"{iso_timestamp(row['first_timestamp'])}\n{iso_timestamp(row['last_timestamp'])}"
        corrupt = Text(str(row["corrupt_batches"]), style="bold red" if row["corrupt_batches"] else None)
        cells = [name, str(row["segments"]), str(row["batches"]), str(row["records"]), str(row["bytes"]),
                 "-" if row["compression_ratio"] is None else f"{row['compression_ratio']:.2f}", corrupt,
                 str(len(row["offset_gaps"])), str(len(row["offset_overlaps"])), span, str(row["producers"]),
                 ", ".join(str(p) for p in row["open_transactions"]) or "-"]
        if cross_checked:
            cells.append(_cross_checks(row.get("cross_checks")))
        table.add_row(*cells)
    console.print(table)
    if result["damaged_segments"]:
        console.print(Text(f"{len(result['damaged_segments'])} damaged segment(s):", style="bold red"))
        for path in result["damaged_segments"]:
            console.print(f"  {path}  (kbatch verify-crc {path})")
    else:
        console.print(Text("no damage found", style="green"))
    for name in result.get("failed_cross_checks", []):
        console.print(Text(f"{name}: its indexes, snapshots or checkpoints disagree with its segments "
                           f"(kbatch verify-crc --index-only on its directory)", style="bold red"))
    out = result["out"]
    console.print("tables: " + ", ".join(f"{out}/{name}" for name in result["tables"]))


def _cross_checks(checks: dict | None) -> Text:
    if checks is None:
        return Text("-", style="dim")
    codes = ", ".join(f"{count} {code}" for code, count in checks["findings"].items() if code != "zero-tail")
    if checks["errors"]:
        return Text(codes, style="bold red")
    return Text("ok" + (f" ({codes})" if codes else ""), style="green")
