"""``kbatch txn`` for people (Rich tables) and programs (JSON Lines)."""

from __future__ import annotations


from rich.console import JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from kbatch.render.table import finding_line, held_against_line
from kbatch.output.values import iso_timestamp
from kbatch.output.visible import shell_word, visible

_OUTCOME_STYLE = {"COMMIT": "green", "ABORT": "yellow", "OPEN": "bold red", "UNKNOWN": "bold red"}


def _name(view) -> str:
    return visible(view.directory or (view.topic if view.partition is None else f"{view.topic}-{view.partition}"))


def _counts(view) -> str:
    txns = view.transactions
    parts = [f"{sum(t.outcome == 'COMMIT' for t in txns)} committed",
             f"{sum(t.outcome == 'ABORT' for t in txns)} aborted", f"{sum(t.empty for t in txns)} empty",
             f"{sum(t.outcome == 'OPEN' for t in txns)} open"]
    unknown = sum(t.outcome == "UNKNOWN" for t in txns)
    if unknown:
        parts.append(f"{unknown} of unknown outcome")
    return f"{len(txns)} transaction{'s' if len(txns) != 1 else ''} ({', '.join(parts)})"


def _offsets(txn) -> str:
    if txn.empty:
        return "-"
    if txn.first_offset == txn.last_offset:
        return str(txn.first_offset)
    return f"{txn.first_offset}–{txn.last_offset}"


# Narrow enough for an 80-column terminal; what must never wrap is kept whole.
_COLUMNS: tuple[tuple[str, JustifyMethod, bool], ...] = (
    ("producer", "left", True), ("offsets", "left", True), ("records", "right", True),
    ("outcome", "left", True), ("marker", "right", True), ("c.epoch", "right", True))
_JOINED_COLUMNS: tuple[tuple[str, JustifyMethod, bool], ...] = (
    ("txn id", "left", False), ("coordinator", "left", True))


def _transactions_table(view, joined: bool) -> Table:
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 1, 0, 0), pad_edge=False)
    for name, justify, whole in _COLUMNS + (_JOINED_COLUMNS if joined else ()):
        table.add_column(name, justify=justify, no_wrap=whole, overflow="fold")
    for txn in view.transactions:
        outcome = Text(txn.outcome + (" (empty)" if txn.empty else "") + (" hanging" if txn.hanging else ""),
                       style=_OUTCOME_STYLE[txn.outcome])
        row: list[RenderableType] = [f"{txn.producer_id}/{txn.producer_epoch}", _offsets(txn), str(txn.records), outcome,
               "-" if txn.marker_offset is None else str(txn.marker_offset),
               "-" if txn.coordinator_epoch is None else str(txn.coordinator_epoch)]
        if joined:
            row += [visible(txn.transactional_id or "-"), txn.coordinator_state or "-"]
        table.add_row(*row)
    return table


def _open_lines(view) -> list[Text]:
    """What holds the last stable offset back, and what an operator types to release it."""
    lines = [_stable_line(view)]
    if not view.open:
        return lines
    lines.append(Text("  open transactions:", style="bold red"))
    for txn in sorted(view.open.values(), key=lambda t: t.first_offset):
        started = f" ({iso_timestamp(txn.first_timestamp)})" if txn.first_timestamp is not None else ""
        lines.append(Text(f"    producer {txn.producer_id}/{txn.producer_epoch} from offset {txn.first_offset}"
                          f"{started}"))
        if txn.transactional_id:
            lines.append(Text(f"      {visible(txn.transactional_id)}: the coordinator says {txn.coordinator_state}"))
        if txn.hanging:
            lines.append(Text("      HANGING: the coordinator has finished with it; no marker will come",
                              style="bold red"))
        if view.partition is not None:
            command = (f"      kafka-transactions.sh --bootstrap-server BROKER abort --topic {shell_word(view.topic)} \\\n"
                       f"        --partition {view.partition} --start-offset {txn.first_offset}")
            # whole: a line Rich wrapped at a space would paste as two commands (a terminal's own wrap does not)
            lines.append(Text(command, style="cyan", no_wrap=True))
    return lines


def _stable_line(view) -> Text:
    """The last stable offset as the broker has it (kbatch.ops.txn.stable_offset), and what sets it."""
    stable, end = view.stable, "-" if view.last_offset is None else str(view.last_offset + 1)
    if stable.offset is None:
        return Text(f"  last stable offset: unknown, {stable.unknown} (log end {end})",
                    style="bold red" if view.open else "yellow")
    marks = f"high watermark {stable.high_watermark}, log end {end}"
    holder = stable.held_by
    if holder is None:
        return Text(f"  last stable offset {stable.offset}: the high watermark, nothing unstable below it ({marks})",
                    style="bold red" if view.open else "green")
    if holder.marker_offset is None:
        whose = f"producer {holder.producer_id}'s open transaction"
    else:
        whose = (f"producer {holder.producer_id}'s transaction, whose {holder.outcome} marker at "
                 f"{holder.marker_offset} the high watermark has not passed")
    start = "" if stable.offset == holder.first_offset else " (the log start offset)"
    return Text(f"  last stable offset held at {stable.offset}{start} by {whose} ({marks})", style="bold red")


def _coordinator_table(coordinator) -> Table:
    table = Table(title="__transaction_state: the coordinator's last word on each transactional id",
                  title_justify="left", header_style="bold", expand=False, box=None, padding=(0, 1, 0, 0),
                  pad_edge=False)
    for name in ("txn id", "producer", "state", "partitions", "timeout ms", "last update"):
        # whole: a producer, a state, an ISO time (never split across lines); the ids and partitions wrap
        table.add_column(name, no_wrap=name in ("producer", "state", "last update"), overflow="fold")
    for state in sorted(coordinator.ids.values(), key=lambda s: s.transactional_id):
        table.add_row(visible(state.transactional_id), f"{state.producer_id}/{state.producer_epoch}", state.state,
                      ", ".join(map(visible, state.partitions)) or "-", str(state.timeout_ms),
                      iso_timestamp(state.last_update_timestamp) or str(state.last_update_timestamp))
    return table


def print_txn(console, views, coordinator, findings) -> None:
    for view in views:
        console.print(Text.assemble(Text(_name(view), style="bold underline"), f": {_counts(view)}"))
        if view.transactions:
            console.print(_transactions_table(view, coordinator is not None))
        aborted = [txn for txn in view.transactions if txn.outcome == "ABORT" and not txn.empty]
        if aborted:
            # as the .txnindex records them (AbortedTxn: first offset .. the marker's offset)
            ranges = ", ".join(f"{txn.first_offset}–{txn.marker_offset} (producer {txn.producer_id})"
                               for txn in aborted)
            console.print(Text(f"  aborted (consumers skip the producer's records): {ranges}"))
        for txn in view.transactions:
            if txn.outcome == "UNKNOWN":
                console.print(Text(f"  producer {txn.producer_id}/{txn.producer_epoch} "
                                   f"{'(empty)' if txn.empty else _offsets(txn)}: outcome unknown, "
                                   f"{txn.marker_doubt}", style="bold red"))
        for line in _open_lines(view):
            console.print(line, soft_wrap=bool(line.no_wrap))
        if view.cross_checked:
            console.print(held_against_line(view.cross_checked, view.cross_check_findings))
        console.print()
    if coordinator is not None:
        console.print(_coordinator_table(coordinator))
        if coordinator.unreadable:
            console.print(Text(f"  {coordinator.unreadable} record(s) did not read: what they said is not the "
                               "coordinator's state (findings below)", style="yellow"))
    for path, finding in findings:
        console.print(Text(visible(path), style="bold"))
        console.print(finding_line(finding))


def write_txn_jsonl(out, views, coordinator, findings) -> None:
    from kbatch.output.jsonout import (coordinator_dict, finding_line, json_line, transaction_dict,
                                       txn_partition_dict)

    for view in views:
        for txn in view.transactions:
            out.write(json_line(transaction_dict(txn)))
        out.write(json_line(txn_partition_dict(view)))
    if coordinator is not None:
        for state in sorted(coordinator.ids.values(), key=lambda s: s.transactional_id):
            out.write(json_line(coordinator_dict(state)))
    for path, finding in findings:
        out.write(json_line(finding_line(path, finding)))
