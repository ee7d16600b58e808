"""The human view of ``kbatch stats --what-if``: each layout's size against what is stored."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from .stats import bar


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
    out = [table]
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
