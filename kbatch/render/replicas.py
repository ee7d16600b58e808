"""``kbatch replicas`` for people (a table per partition and advice) and programs (JSON Lines)."""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

from kbatch.output._dicts import record_dict, replica_dict, replica_record_head
from kbatch.output.visible import visible
from kbatch.render.console import print_wrapped
from kbatch.ops.replicas import advice, high_watermarks, records_held_by_some
from kbatch.partition.replicas import HIGH_WATERMARK_CHECKPOINT, RECOVERY_POINT_CHECKPOINT


def _cell(value, unread: bool = False) -> str:
    """A value; "-" for none, "?" for one whose checkpoint cannot be read (the advice says where it is damaged)."""
    return "?" if unread else "-" if value is None else str(value)


def _copies_table(report) -> Table:
    # 80 columns: eight narrow columns, the copy's name the one that folds
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 1, 0, 0), pad_edge=False)
    for name in ("copy", "start", "end", "hw", "recovery", "epoch", "diverges", "truncate"):
        table.add_column(name, justify="left" if name == "copy" else "right", no_wrap=name != "copy",
                         overflow="fold")
    for index, copy in enumerate(report.copies):
        name = visible(copy.name) + (" *" if index == report.leader else "")
        table.add_row(name, _cell(copy.log_start_offset), str(copy.log_end_offset),
                      _cell(copy.high_watermark, bool(copy.checkpoint_findings(HIGH_WATERMARK_CHECKPOINT))),
                      _cell(copy.recovery_point, bool(copy.checkpoint_findings(RECOVERY_POINT_CHECKPOINT))),
                      _cell(copy.latest_epoch), _cell(copy.diverges_at),
                      _cell(copy.truncate_to))
    return table


def print_replicas(console, reports) -> None:
    for report in reports:
        console.print(Text.assemble(Text(visible(f"{report.topic}-{report.partition}"), style="bold underline"),
                                    f": {len(report.copies)} copies"), soft_wrap=True)
        for problem in report.problems:
            console.print(Text(f"  {visible(problem)}", style="red"))
        console.print(_copies_table(report))
        if report.leader is not None:
            console.print(Text("  * the copy with the newest leader epoch: the others follow it", style="dim"))
        for copy in report.copies:
            for line in copy.rounds:
                print_wrapped(console, f"{visible(copy.name)}: {line}", "dim")
        console.print()
        for line in advice(report):
            print_wrapped(console, visible(line))
        console.print()


def write_replicas_jsonl(out, reports, decode: str = "auto") -> None:
    def write(line: dict) -> None:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")

    for report in reports:
        for copy in report.copies:
            write(replica_dict(report, copy))
        for divergence, batch in records_held_by_some(report):
            marked = high_watermarks(report, divergence.holders)
            for record in batch.records or ():
                write({**replica_record_head(report, divergence, record, marked), **record_dict(record, batch, decode)})
