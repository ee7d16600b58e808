"""How ``kbatch diff`` reports: the summary first, then the differences (old → new), then a verdict."""

from __future__ import annotations

import json
import tempfile

from rich.table import Table
from rich.text import Text

from kbatch.output.values import counted
from kbatch.output.visible import visible
from kbatch.ops.diff import Difference, DiffSummary


def summary_table(summary: DiffSummary, records_only: bool) -> Table:
    table = Table(header_style="bold", box=None, padding=(0, 2), pad_edge=False)
    for name in ("", "same", "changed", "only in A", "only in B"):
        table.add_column(name, justify="right" if name else "left")
    rows = (("records", summary.records),) if records_only else (("batches", summary.batches),
                                                                 ("records", summary.records))
    for label, counts in rows:
        table.add_row(label, str(counts["same"]), str(counts["changed"]), str(counts["only_a"]),
                      str(counts["only_b"]))
    return table


def details_table(differences: list[Difference]) -> Table:
    table = Table(header_style="bold", show_lines=False)
    for name in ("offset", "what", "field", "A", "B", "pos A", "pos B"):
        # A kind (batch-changed) is one word: never broken (the other columns fold).
        table.add_column(name, overflow="fold", no_wrap=name == "what")
    for difference in differences:
        style = "red" if difference.kind.startswith("damage") else ""   # ("": no style)
        table.add_row("-" if difference.offset is None else str(difference.offset), difference.kind,
                      difference.field or "-", Text(difference.a or "—", style=style),
                      Text(difference.b or "—", style=style),
                      "-" if difference.a_pos is None else str(difference.a_pos),
                      "-" if difference.b_pos is None else str(difference.b_pos))
    return table


def verdict(summary: DiffSummary) -> Text:
    if summary.same:
        if summary.identical:
            alike = summary.damaged["a"]
            if alike:   # (not a difference; verify-crc says where and what)
                return Text(f"same: the inputs are byte-identical, and so both hold the same damage "
                            f"({counted(alike, 'finding')} of damage in each; kbatch verify-crc says where)",
                            style="yellow")
            return Text("same: the inputs are byte-identical", style="green")
        return Text(f"same content, different bytes (from byte {summary.first_different_byte})", style="green")
    parts = []
    for label, counts in (("batch", summary.batches), ("record", summary.records)):
        for key, word in (("changed", "changed"), ("only_a", "only in A"), ("only_b", "only in B")):
            if counts[key]:
                plural = "es" if label == "batch" else "s"
                parts.append(f"{counts[key]} {label}{plural if counts[key] != 1 else ''} {word}")
    regrouped = summary.regrouped
    if regrouped["spans"]:
        parts.append(f"{regrouped['spans']} span{'s' if regrouped['spans'] != 1 else ''} of offsets batched "
                     f"differently ({regrouped['a']} batches in A, {regrouped['b']} in B)")
    for side in ("a", "b"):
        if summary.damaged[side]:
            parts.append(f"{summary.damaged[side]} damaged in {side.upper()}")
    return Text("different: " + ", ".join(parts), style="bold red")


def jsonl_difference(difference: Difference) -> str:
    from kbatch.output.jsonout import difference_dict   # (the table's run never loads the JSON writers)

    return json.dumps(difference_dict(difference), ensure_ascii=False)


def jsonl_summary(summary: DiffSummary, path_a: str, path_b: str) -> str:
    from kbatch.output.jsonout import diff_summary_dict

    return json.dumps(diff_summary_dict(summary, path_a, path_b), ensure_ascii=False)


def write_diff_jsonl(out, differences, summary: DiffSummary, path_a: str, path_b: str) -> None:
    """A "difference" line per difference as it comes, then the "summary" line."""
    for difference in differences:
        out.write(jsonl_difference(difference) + "\n")
    out.write(jsonl_summary(summary, path_a, path_b) + "\n")


def print_diff(console, differences, summary: DiffSummary, path_a: str, path_b: str, records_only: bool) -> None:
    """Summary first: the differences are spooled to a temporary file (constant memory) while counting."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for difference in differences:
            spool.write(json.dumps(difference.__dict__) + "\n")
        console.print(f"A: {visible(path_a)} ({counted(summary.size_a, 'byte')})\n"
                      f"B: {visible(path_b)} ({counted(summary.size_b, 'byte')})")
        first = summary.first_different_byte
        console.print("byte-identical" if first is None else f"first differing byte: {first}")
        console.print(summary_table(summary, records_only))
        spool.seek(0)
        chunk: list[Difference] = []
        for line in spool:
            chunk.append(Difference(**json.loads(line)))
            if len(chunk) == 1000:
                console.print(details_table(chunk))
                chunk = []
        if chunk:
            console.print(details_table(chunk))
    console.print(verdict(summary))
