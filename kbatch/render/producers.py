"""``kbatch producers`` for people (a table per partition) and programs (JSON Lines)."""

from __future__ import annotations


from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from kbatch.output._dicts import producer_dict
from kbatch.output import jsonout
from kbatch.output.visible import visible
from kbatch.render.table import finding_line, held_against_line


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}–{last}"


def _epochs_table(view) -> Table:
    # 80 columns hold it: a transactional id is the one column that wraps
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 1, 0, 0), pad_edge=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("producer", "left"), ("sequences", "left"), ("offsets", "left"), ("batches", "right"),
        ("records", "right"), ("txn id", "left"), ("breaks", "right"))
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name != "txn id", overflow="fold")
    for epoch in view.epochs:
        kind = "" if not epoch.transactional else " T"
        table.add_row(f"{epoch.producer_id}/{epoch.producer_epoch}{kind}",
                      _span(epoch.first_sequence, epoch.last_sequence), _span(epoch.first_offset, epoch.last_offset),
                      str(epoch.batches), str(epoch.records), visible(epoch.transactional_id or "-"),
                      Text(str(epoch.breaks), style="bold yellow" if epoch.breaks else ""))
    return table


def print_producers(console, views, findings) -> None:
    for view in views:
        producers = len({epoch.producer_id for epoch in view.epochs})
        console.print(Text.assemble(Text(visible(view.partition), style="bold underline"),
                                    f": {producers} producer{'s' if producers != 1 else ''}, "
                                    f"{len(view.epochs)} epoch{'s' if len(view.epochs) != 1 else ''} "
                                    "(T: transactional)"), soft_wrap=True)
        if view.epochs:
            console.print(_epochs_table(view))
        if view.snapshots:
            console.print(held_against_line(view.snapshots, len(view.snapshot_findings)))
        console.print()
    for path, finding in findings:
        console.print(Text(visible(path), style="bold"), soft_wrap=True)
        console.print(finding_line(finding))


def write_producers_jsonl(out, views, findings) -> None:
    for view in views:
        for epoch in view.epochs:
            out.write(jsonout.json_line(producer_dict(epoch)))
    for path, finding in findings:
        out.write(jsonout.json_line(jsonout.finding_line(path, finding)))
