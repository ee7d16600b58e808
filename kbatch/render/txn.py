"""``kbatch txn`` for people (Rich tables) and programs (JSON Lines)."""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

from .jsonout import finding_dict
from .table import finding_line
from .values import iso_timestamp

_OUTCOME_STYLE = {"COMMIT": "green", "ABORT": "yellow", "OPEN": "bold red"}


def _name(view) -> str:
    return view.topic if view.partition is None else f"{view.topic}-{view.partition}"


def _counts(view) -> str:
    txns = view.transactions
    parts = [f"{sum(t.outcome == 'COMMIT' for t in txns)} committed",
             f"{sum(t.outcome == 'ABORT' for t in txns)} aborted", f"{sum(t.empty for t in txns)} empty",
             f"{sum(t.outcome == 'OPEN' for t in txns)} open"]
    return f"{len(txns)} transaction{'s' if len(txns) != 1 else ''} ({', '.join(parts)})"


def _offsets(txn) -> str:
    if txn.empty:
        return "-"
    return str(txn.first_offset) if txn.first_offset == txn.last_offset else f"{txn.first_offset}–{txn.last_offset}"


def _transactions_table(view, joined: bool) -> Table:
    table = Table(header_style="bold", expand=False)
    columns = ["producer id/epoch", "offsets", "records", "batches", "outcome", "marker", "coord. epoch"]
    if joined:
        columns += ["transactional id", "coordinator"]
    for name in columns:
        table.add_column(name, justify="right" if name in ("records", "batches", "marker", "coord. epoch")
                         else "left", no_wrap=name in ("offsets", "producer id/epoch"))
    for txn in view.transactions:
        outcome = Text(txn.outcome + (" (empty)" if txn.empty else "") + (" hanging" if txn.hanging else ""),
                       style=_OUTCOME_STYLE[txn.outcome])
        row = [f"{txn.producer_id}/{txn.producer_epoch}", _offsets(txn), str(txn.records), str(txn.batches),
               outcome,
               "-" if txn.marker_offset is None else str(txn.marker_offset),
               "-" if txn.coordinator_epoch is None else str(txn.coordinator_epoch)]
        if joined:
            row += [txn.transactional_id or "-", txn.coordinator_state or "-"]
        table.add_row(*row)
    return table


def _open_lines(view) -> list[Text]:
    """What holds the last stable offset back, and what an operator types to release it."""
    lines = []
    lso = view.last_stable_offset
    if lso is None:
        return [Text("  last stable offset: not held back (no open transaction)", style="green")]
    lines.append(Text(f"  last stable offset held at {lso} (log end: {view.last_offset + 1}); open transactions:",
                      style="bold red"))
    for txn in sorted(view.open.values(), key=lambda t: t.first_offset):
        started = f", first batch at {txn.first_timestamp} {iso_timestamp(txn.first_timestamp)}".rstrip() \
            if txn.first_timestamp is not None else ""
        who = f" ({txn.transactional_id}, coordinator: {txn.coordinator_state})" if txn.transactional_id else ""
        hanging = " — HANGING: the coordinator will not end it" if txn.hanging else ""
        lines.append(Text(f"    producer {txn.producer_id} epoch {txn.producer_epoch} from offset "
                          f"{txn.first_offset}{started}{who}{hanging}"))
        if view.partition is not None:
            lines.append(Text(f"      kafka-transactions.sh --bootstrap-server BROKER abort --topic {view.topic} "
                              f"--partition {view.partition} --start-offset {txn.first_offset}", style="cyan"))
    return lines


def _coordinator_table(coordinator) -> Table:
    table = Table(title="__transaction_state: the coordinator's last word on each transactional id",
                  title_justify="left", header_style="bold", expand=False)
    for name in ("transactional id", "producer id/epoch", "state", "partitions", "timeout ms", "last update"):
        table.add_column(name)
    for state in sorted(coordinator.ids.values(), key=lambda s: s.transactional_id):
        table.add_row(state.transactional_id, f"{state.producer_id}/{state.producer_epoch}", state.state,
                      ", ".join(state.partitions) or "-", str(state.timeout_ms),
                      f"{state.last_update_timestamp} {iso_timestamp(state.last_update_timestamp)}".rstrip())
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
            console.print(Text(f"  aborted ranges (consumers skip this producer's records in them): {ranges}"))
        for line in _open_lines(view):
            console.print(line)
        console.print()
    if coordinator is not None:
        console.print(_coordinator_table(coordinator))
    for path, finding in findings:
        console.print(Text(path, style="bold"))
        console.print(finding_line(finding))


def write_txn_jsonl(out, views, coordinator, findings) -> None:
    def write(obj):
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")

    for view in views:
        for txn in view.transactions:
            write(txn.as_dict())
        write({"type": "partition", "topic": view.topic, "partition": view.partition,
               "transactions": len(view.transactions),
               "committed": sum(t.outcome == "COMMIT" for t in view.transactions),
               "aborted": sum(t.outcome == "ABORT" for t in view.transactions),
               "empty": sum(t.empty for t in view.transactions), "open": len(view.open),
               "last_stable_offset": view.last_stable_offset,
               "log_end_offset": None if view.last_offset is None else view.last_offset + 1})
    if coordinator is not None:
        for state in sorted(coordinator.ids.values(), key=lambda s: s.transactional_id):
            write(state.as_dict())
    for path, finding in findings:
        write({"type": "finding", "file": path, **finding_dict(finding)})
