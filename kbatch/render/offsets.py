"""``kbatch offsets`` for people (a line per commit, a table per coordinator partition) and programs (JSON Lines)."""

from __future__ import annotations


from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from kbatch.ops.offsets import Commit, OffsetHistory, coordinator_partition, reset_command
from kbatch.output._dicts import commit_dict
from kbatch.output import jsonout
from kbatch.output.values import iso_timestamp, moment_text
from kbatch.output.visible import shell_word, visible
from kbatch.render.table import finding_line

_MOVE_STYLE = {"rewind": "bold yellow", "reset-forward": "bold yellow"}


def _offset(offset: int | None) -> str:
    return "deleted" if offset is None else str(offset)


def commit_line(commit: Commit) -> Text:
    """One commit as a line: when, which group and partition, from what to what, and what is notable."""
    when = iso_timestamp(commit.time) or "(no time)".ljust(24)
    change = _offset(commit.offset) if commit.previous_offset is None else \
        f"{_offset(commit.previous_offset)} → {_offset(commit.offset)}"
    notes = []
    if commit.move:
        notes.append(Text(commit.move, style=_MOVE_STYLE[commit.move]))
    if commit.transaction is not None:
        notes.append(Text(f"txn {commit.transaction}", style="" if commit.counts else "yellow"))
        if commit.superseded_by is not None:
            notes.append(Text(f"(not applied: superseded at log offset {commit.superseded_by})", style="yellow"))
        elif not commit.counts:
            notes.append(Text("(not applied)", style="yellow"))
    if commit.leader_epoch is not None:
        notes.append(Text(f"epoch {commit.leader_epoch}", style="dim"))
    line = Text.assemble(f"{when}  ", Text(visible(commit.group), style="bold"),
                         f"  {visible(commit.topic)}-{commit.partition}  {change}")
    for note in notes:
        line.append("  ")
        line.append_text(note)
    return line


def _group_heading(group, name: str, partitions: int) -> Text:
    parts = []
    if group is not None and group.protocol is not None:
        parts.append(visible(group.protocol or "no protocol type"))
    if group is not None and group.generation is not None:
        parts.append(f"generation {group.generation}")
    if group is not None and group.deleted:
        parts.append("deleted")
    parts.append(f"__consumer_offsets-{coordinator_partition(name, partitions)} of {partitions} coordinates it")
    return Text.assemble(Text(visible(name), style="bold"), f" ({'; '.join(parts)})")


def _positions_table(history: OffsetHistory, group: str, at: int | None) -> Table:
    # 80 columns hold it all: only a partition's name may wrap
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 1, 0, 0), pad_edge=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("partition", "left"), ("offset", "right"), ("commits", "right"), ("last commit", "left"),
        ("rewinds", "right"), ("resets", "right"))
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name != "partition", overflow="fold",
                         min_width=9 if name == "partition" else None)
    if at is not None:
        table.add_column("at TIME", justify="right", no_wrap=True)
    for (name, topic, partition), position in sorted(history.positions.items()):
        if name != group:
            continue
        row = [f"{visible(topic)}-{partition}", _offset(position.commit.offset), str(position.commits),
               iso_timestamp(position.commit.commit_timestamp) or "-", str(position.rewinds), str(position.resets)]
        if at is not None:
            then = history.positions_at.get((name, topic, partition))
            row.append("-" if then is None else _offset(then.offset))
        table.add_row(*row)
    return table


def print_offsets(console, histories: dict[str, OffsetHistory], partitions: int, at: int | None,
                  findings) -> None:
    """Each coordinator partition's groups: where each stands (and stood at ``at``), then the commands that
    put a group back where it stood."""
    for path, history in histories.items():
        groups = sorted({name for name, _, _ in history.positions})
        console.print(Text.assemble(Text(visible(path), style="bold underline"),
                                    f": {len(groups)} group{'s' if len(groups) != 1 else ''} with committed offsets"),
                      soft_wrap=True)
        for name in groups:
            console.print(_group_heading(history.group_state.get(name), name, partitions))
            console.print(_positions_table(history, name, at))
            if at is not None:
                for line in _reset_lines(history, name, at):
                    console.print(line, soft_wrap=True)
        if history.unreadable:
            console.print(Text(f"  {history.unreadable} record(s) did not read: what they said is not counted "
                               "(findings below)", style="yellow"))
        console.print()
    for path, finding in findings:
        console.print(Text(visible(path), style="bold"), soft_wrap=True)
        console.print(finding_line(finding))


def _reset_lines(history: OffsetHistory, group: str, at: int) -> list[Text]:
    commands = [reset_command(name, topic, partition, commit.offset, shell_word)
                for (name, topic, partition), commit in sorted(history.positions_at.items())
                if name == group and commit.offset is not None]
    if not commands:
        return [Text(f"  no offset committed at {moment_text(at)}: the consumer's auto.offset.reset "
                     "decides where it starts", style="yellow")]
    head = Text(f"  at TIME = {moment_text(at)}; to put the group back there (stopped first):")
    # whole: a command Rich wrapped at a space would paste as two (a terminal's own wrap does not)
    return [head] + [Text(f"    {command}", style="cyan", no_wrap=True) for command in commands]


def write_commit_jsonl(out, commit: Commit) -> None:
    out.write(jsonout.json_line(commit_dict(commit)))


def write_offsets_jsonl(out, findings) -> None:
    for path, finding in findings:
        out.write(jsonout.json_line(jsonout.finding_line(path, finding)))
