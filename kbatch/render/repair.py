"""How repair-length shows its plan and salvage its report."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from kbatch.ops.repair import RepairPlan, SalvageReport
from kbatch.output.values import counted
from kbatch.output.visible import visible

_KIND = {"fix-length": "fix length", "cut-tail": "cut tail", "crc-damage": "cannot help", "unproven": "left alone",
         "file-cut": "cannot write"}


def plan_table(path: str, plan: RepairPlan) -> Table:
    table = Table(title=f"repair plan for {visible(path)} ({counted(plan.size, 'byte')})", title_justify="left", header_style="bold")
    for name in ("pos", "action", "field", "old", "new", "evidence", "will write"):
        table.add_column(name, overflow="fold", justify="right" if name == "pos" else "left")
    for action in plan.actions:
        will = Text("yes", style="green") if action.applied else Text("no", style="yellow")
        table.add_row(str(action.pos), _KIND[action.kind], action.field, action.old, action.new, action.evidence,
                      will)
    if not plan.actions:
        table.add_row("-", "nothing to repair", "", "", "", "every length agrees with its CRC", "")
    return table


def salvage_table(path: str, report: SalvageReport) -> Table:
    table = Table(title=f"skipped from {visible(path)}", title_justify="left", header_style="bold")
    for name in ("pos", "size", "why", "offsets lost"):
        table.add_column(name, overflow="fold", justify="right" if name in ("pos", "size") else "left")
    for skipped in report.skipped:
        table.add_row(str(skipped.pos), str(skipped.size), skipped.reason, skipped.offsets)
    return table


def print_verified(console, path: str, summary, findings) -> None:
    """What reading a written copy back found (kbatch.ops.repair.verify_written): each finding, then a verdict."""
    from kbatch.output.values import finding_text

    for finding in findings:
        console.print(("✗ " if finding.is_damage else "• ") + finding_text(finding))
    verdict = "damage remains" if summary.damaged else "every entry verifies"
    console.print(f"verify-crc {path}: {counted(summary.batches, 'batch')}, {counted(summary.records, 'record')}; {verdict}")


def salvage_summary(report: SalvageReport, written: int, output: str) -> str:
    """The line salvage ends with: what was kept in ``output`` (as the report names it), what was skipped, and
    what was mended or dropped on the way."""
    notes = []
    if report.lengths_fixed:
        notes.append(f"{counted(report.lengths_fixed, 'length field')} corrected")
    if report.dropped_zero_tail:
        notes.append(f"a zero tail of {counted(report.dropped_zero_tail, 'byte')} dropped")
    return (f"kept {counted(report.kept, 'batch')} ({counted(report.kept_records, 'record')}, {written} of "
            f"{counted(report.size, 'byte')}) in {output}; skipped {counted(len(report.skipped), 'damaged range')}"
            + (f"; {', '.join(notes)}" if notes else ""))
