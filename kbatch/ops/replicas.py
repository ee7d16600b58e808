"""``kbatch replicas`` as a library: each partition's copies compared (kbatch.partition.replicas), and the
advice a person reads: which copy holds the most acknowledged data, what electing each would lose, where a
good copy of a damaged batch lies."""

from __future__ import annotations

from kbatch.partition.replicas import (NotACopy, Report, compare, find_copies, epoch_disagreements,
                                       highest_high_watermark, lost_sequences, records_held_by_some)

__all__ = ["NotACopy", "Report", "advice", "compare", "compare_all", "exit_found", "highest_high_watermark",
           "records_held_by_some"]


def compare_all(paths: list[str], partition: str | None = None) -> tuple[list[Report], list[str]]:
    """A report for every partition present in two or more of ``paths``, and notes on those in only one."""
    found = find_copies(paths, partition)
    reports, notes = [], []
    for (topic, number), directories in sorted(found.items()):
        if len(directories) < 2:
            notes.append(f"{topic}-{number}: only one copy ({directories[0]}): nothing to compare")
            continue
        reports.append(compare(directories))
    return reports, notes


def exit_found(reports: list[Report]) -> bool:
    """Whether any partition's copies diverge, or a copy is damaged (exit status 1)."""
    return any(not report.agree or report.problems for report in reports)


def _ranges(offsets: list[tuple[int, int]]) -> str:
    return ", ".join(f"{first}" if first == last else f"{first}..{last}" for first, last in offsets[:5]) + \
        (f" and {len(offsets) - 5} more" if len(offsets) > 5 else "")


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Offset ranges merged where they overlap or touch."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def advice(report: Report) -> list[str]:
    """Plain lines: what each copy holds that the others do not, what electing each loses, where good copies lie."""
    lines = []
    copies = report.copies
    if report.agree and not report.problems:
        return ["every copy holds the same batches: nothing to repair"]
    marked = highest_high_watermark(report)
    if marked is not None:
        lines.append(f"highest high watermark recorded: {marked} (a checkpoint can trail what was acknowledged)")
    for each in report.divergences:
        if each.damaged and each.holders:
            holders = ", ".join(copies[index].name for index in each.holders)
            for index in each.damaged:
                lines.append(f"a good copy of the damaged batch at offset {each.base_offset} of "
                             f"{copies[index].name} is on {holders}")
        elif each.damaged:
            lines.append(f"the batch at offset {each.base_offset} is damaged on every copy holding it")
    for copy in copies:
        for told in epoch_disagreements(copy):
            lines.append(f"{copy.name}: {told}")
    # what electing each copy loses: the offsets others hold and it does not (variants of one offset once)
    losses = []
    for index, copy in enumerate(copies):
        missing = [each for each in report.divergences if index not in each.holders and each.holders]
        spans = _union([(each.base_offset, each.last_offset) for each in missing])
        records = sum(last - first + 1 for first, last in spans)
        # acknowledged: below a high watermark recorded by a copy that holds the record
        acked = sum(last - first + 1 for first, last in _union(
            [(each.base_offset, min(each.last_offset, mark - 1)) for each in missing
             for mark in [highest_high_watermark(report, each.holders)] if mark is not None and each.base_offset < mark]))
        losses.append((acked, records, index))
        if spans:
            lines.append(f"electing {copy.name} loses {records} records ({_ranges(spans)}), {acked} of them below "
                         "a high watermark")
        else:
            lines.append(f"electing {copy.name} loses nothing another copy holds")
    acked, records, best = min(losses)
    if acked:
        lines.append(f"{copies[best].name} holds the most acknowledged data: electing it loses {acked} records "
                     "below a high watermark, the fewest")
    else:
        lines.append(f"electing {copies[best].name} loses no record below a high watermark and the fewest records")
    if report.leader is not None:
        for index, copy in enumerate(copies):
            for producer, sequences in sorted(lost_sequences(report, index).items()):
                lines.append(f"{copy.name} follows {copies[report.leader].name}: producer {producer} loses "
                             f"sequences {_ranges(sequences)}")
    return lines
