"""The human view of ``kbatch stats``: where the bytes go, as Rich tables with bars, and with ``--what-if``
each layout's size against what is stored."""

from __future__ import annotations

import json

from rich import box
from rich.columns import Columns
from rich.console import Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

BAR_WIDTH = 16


def bar(share: float, width: int = BAR_WIDTH) -> Text:
    """A horizontal bar of ``share`` (0..1) of ``width`` cells, in eighths of a cell."""
    eighths = round(max(0.0, min(share, 1.0)) * width * 8)
    full, rest = divmod(eighths, 8)
    return Text("█" * full + (" ▏▎▍▌▋▊▉"[rest] if rest else ""), style="cyan")


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return f"{value:,}"


def _share(value: float) -> str:
    return f"{value * 100:.1f}%"


def _table(title: str, columns: list[tuple[str, JustifyMethod]]) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold", expand=False)
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name != "category")
    return table


def category_table(title: str, rows: list[dict], total: int, records: int) -> Table:
    table = _table(title, [("category", "left"), ("bytes", "right"), ("per record", "right"),
                           ("share", "right"), ("", "left")])
    for row in rows:
        table.add_row(row["label"], _number(row["bytes"]), _number(row["per_record"]), _share(row["share"]),
                      bar(row["share"]))
    table.add_row(Text("total", style="bold"), Text(_number(total), style="bold"),
                  _number(round(total / records, 3) if records else None), "100.0%", "")
    return table


def distribution_table(title: str, unit: str, rows: list[dict]) -> Table:
    table = _table(title, [(unit, "right"), ("batches", "right"), ("", "left")])
    most = max((row["batches"] for row in rows), default=0)
    for row in rows:
        table.add_row(row["bucket"], _number(row["batches"]), bar(row["batches"] / most if most else 0))
    return table


def group_table(title: str, key: str, rows: list[dict], *, codec: bool = False) -> Table:
    columns: list[tuple[str, JustifyMethod]] = [(key, "left"), ("batches", "right"), ("records", "right"),
                                                ("bytes", "right")]
    if codec:
        columns += [("stored records", "right"), ("inflated", "right"), ("ratio", "right")]
    table = _table(title, columns)
    for row in rows:
        cells = [str(row[key]), _number(row["batches"]), _number(row["records"]), _number(row["bytes"])]
        if codec:
            cells += [_number(row["stored_records_bytes"]), _number(row["inflated_records_bytes"]),
                      "-" if row["ratio"] is None else f"{row['ratio']:.2f}x"]
        table.add_row(*cells)
    return table


PRODUCERS_SHOWN = 20


def stats_renderables(report: dict) -> list:
    records = report["record_count"]
    files = report["files"]
    heading = Text.assemble(
        (f"{len(files)} file(s), {report['total_bytes']:,} bytes", "bold"),
        f": {report['batch_count']:,} entries, {records:,} records, "
        f"{report['control_batch_count']:,} control batches")
    out = [heading,
           category_table("Bytes in the files", report["stored"], report["total_bytes"], records)]
    if report["inflated"]:
        out.append(category_table("Inside compressed batches (inflated)", report["inflated"],
                                  report["inflated_bytes"], records))
    overhead = report["record_overhead"]
    if records:
        out.append(Text(f"Per-record overhead (stored and inflated): {overhead['bytes']:,} bytes, "
                        f"{overhead['per_record']:,.2f} per record"))
    # Small tables side by side where the terminal is wide enough (one under the other where not).
    out.append(Columns([distribution_table("Records per batch", "records", report["records_per_batch"]),
                        distribution_table("Batch sizes", "bytes", report["batch_sizes"])]))
    producers = report["by_producer"]
    out.append(Columns([group_table("By magic", "magic", report["by_magic"]),
                        group_table("By producer", "producer_id", producers[:PRODUCERS_SHOWN])]))
    if report["by_codec"]:
        out.append(group_table("Compression by codec", "codec", report["by_codec"], codec=True))
    if len(producers) > PRODUCERS_SHOWN:
        out.append(Text(f"... and {len(producers) - PRODUCERS_SHOWN} more producers (--format json lists all)",
                        style="dim"))
    if report.get("what_if"):
        out += what_if_renderables(report["what_if"])
    if report["findings"]:
        out.append(Text("Findings: " + ", ".join(f"{code} ×{n}" for code, n in report["findings"].items()),
                        style="bold red" if report["damaged"] else "yellow"))
    return out


def print_stats(console, report: dict) -> None:
    console.print(Group(*stats_renderables(report)))


def write_stats_json(stream, report: dict) -> None:
    json.dump(report, stream, indent=2)
    stream.write("\n")


# -- stats --what-if: each layout's size against what is stored --


def _versus(value: int, stored: int) -> Text:
    """A difference against the stored bytes, as a share of them."""
    text = f"{value / stored * 100:+.1f}%" if stored else f"{value:+,}"
    return Text(text, style="green" if value < 0 else "red" if value > 0 else "")


def what_if_renderables(report: dict) -> list:
    stored = report["stored"]["bytes"]
    recompress = report["recompress"]
    table = Table(title=f"What if: the same {report['stored']['records']:,} records in each layout "
                        f"(stored: {stored:,} bytes in {report['stored']['entries']:,} entries)",
                  title_justify="left", header_style="bold", expand=False, box=box.SIMPLE_HEAD)
    columns = ["layout", "entries", "bytes", "overhead", "vs stored"]
    if recompress:
        columns += ["recompressed", "vs stored"]
    for name in columns:
        table.add_column(name, justify="left" if name == "layout" else "right", no_wrap=True)
    if not recompress:
        table.add_column("", no_wrap=True)
    largest = max((row["recompressed_bytes" if recompress else "bytes"] for row in report["layouts"]), default=0)
    for row in report["layouts"]:
        shown = row["recompressed_bytes" if recompress else "bytes"]
        cells = [row["layout"], f"{row['entries']:,}", f"{row['bytes']:,}",
                 "-" if row["per_record_overhead"] is None else f"{row['per_record_overhead']:,.2f}",
                 _versus(row["difference"], stored)]
        if recompress:
            cells += [f"{row['recompressed_bytes']:,}", _versus(row["recompressed_difference"], stored)]
        else:
            cells.append(bar(shown / largest if largest else 0, 16))
        table.add_row(*cells)
    out: list[RenderableType] = [table]
    notes = ["overhead: bytes per record beyond its key, value and header bytes, batch headers included"]
    for row in report["layouts"]:
        if row.get("headers_dropped"):
            notes.append(f"{row['layout']} cannot carry record headers: {row['headers_dropped']:,} header(s) "
                         f"({row['header_bytes_dropped']:,} bytes) dropped")
        if row.get("control_batches_dropped"):
            notes.append(f"{row['layout']} has no control batches: {row['control_batches_dropped']:,} batch(es) dropped "
                         "(as Kafka's down-conversion does)")
        if recompress and row.get("zstd_left_uncompressed"):
            notes.append(f"{row['layout']} has no zstd: {row['zstd_left_uncompressed']:,} batches left uncompressed")
    left_out = report["left_out"]
    if left_out["bytes"]:
        notes.append(f"left out: {left_out['damaged_batches']:,} damaged batches and damaged ranges, "
                     f"{left_out['bytes']:,} bytes")
    first = report["headers_first"]
    if first["compressed_batches"]:
        share = first["prefix"] / first["inflated_today"] * 100 if first["inflated_today"] else 0
        notes.append(f"headers first (as v2): to validate {first['compressed_batches']:,} compressed batches a "
                     f"broker inflates {first['inflated_today']:,} bytes today; with every record's metadata "
                     f"before all keys and values, a prefix of {first['prefix']:,} ({share:.1f}%)")
    out += [Text(f"  {note}", style="dim") for note in notes]
    return out
