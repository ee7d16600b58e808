"""``kbatch retention`` for people (a table per partition) and programs (JSON Lines)."""

from __future__ import annotations

import json

from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from kbatch.output._dicts import cleaning_dict, segment_verdict_dict
from kbatch.output.jsonout import finding_dict
from kbatch.output.values import iso_timestamp, moment_text
from kbatch.output.visible import json_name, visible
from kbatch.render.table import finding_line

_VERDICT_STYLE = {"deletable": "green", "kept": "", "unknown": "yellow"}


def _size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def _segments_table(partition) -> Table:
    # 80 columns: the reasons are the one column that wraps
    table = Table(header_style="bold", expand=False, box=None, padding=(0, 1, 0, 0), pad_edge=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("base offset", "right"), ("size", "right"), ("largest timestamp", "left"), ("verdict", "left"),
        ("why", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name != "why", overflow="fold")
    for segment in partition.segments:
        stamp = iso_timestamp(segment.largest_timestamp) or str(segment.largest_timestamp)
        if segment.largest_record_timestamp is None:
            stamp += " (mtime)"
        table.add_row(str(segment.base_offset), _size(segment.size), stamp,
                      Text(segment.verdict, style=_VERDICT_STYLE[segment.verdict]), "; ".join(segment.reasons))
    return table


def _config_line(config: dict) -> str:
    keys = ("cleanup.policy", "retention.ms", "retention.bytes")
    return ", ".join(f"{key}={config[key]}" for key in keys)


def print_retention(console, results, findings, now: int, metadata: str | None) -> None:
    source = f"configs from {visible(metadata)}'s ConfigRecords, then --config" if metadata else \
        "configs: Kafka's defaults, then --config"
    console.print(Text(f"as at {moment_text(now)}; {source}", style="dim"), soft_wrap=True)
    console.print()
    for partition, config in results:
        deletable = sum(segment.verdict == "deletable" for segment in partition.segments)
        hw = "cannot be read" if partition.unread("replication-offset-checkpoint") else \
            "unknown (taken as the log end)" if partition.high_watermark is None else str(partition.high_watermark)
        verdict = "its topic's config cannot be read: no verdict" if partition.config_unread is not None else \
            f"{deletable} of {len(partition.segments)} segments deletable"
        console.print(Text.assemble(Text(visible(partition.path), style="bold underline"), f": {verdict}"),
                      soft_wrap=True)
        log_start = f"{partition.log_start_offset}" + (
            " (its checkpoint cannot be read: the first segment's base offset, as Kafka resets it)"
            if partition.unread("log-start-offset-checkpoint") else "")
        said = "config cannot be read" if partition.config_unread is not None else _config_line(config)
        console.print(Text(f"  {said}; log start {log_start}, high watermark "
                           f"{hw}, log end {partition.log_end_offset}"))
        if partition.segments:
            console.print(_segments_table(partition))
        cleaning = partition.cleaning
        if cleaning is not None:
            verdict = "would clean now" if cleaning.will_clean else "would not clean now"
            console.print(Text(
                f"  cleaner: dirty {cleaning.first_dirty_offset}..{cleaning.first_uncleanable_offset} "
                f"({_size(cleaning.cleanable_bytes)}, ratio {cleaning.ratio:.2f} against "
                f"min.cleanable.dirty.ratio {config['min.cleanable.dirty.ratio']}"
                f"{'; max.compaction.lag.ms passed' if cleaning.due else ''}): {verdict}; "
                f"stops at {visible(', '.join(cleaning.blocked_by))}",   # (a transactional id is the client's)
                style="" if cleaning.will_clean else "yellow"))
        console.print()
    for path, finding in findings:
        console.print(Text(visible(path), style="bold"), soft_wrap=True)
        console.print(finding_line(finding))


def write_retention_jsonl(out, results, findings) -> None:
    def write(line: dict) -> None:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")

    for partition, _ in results:
        for segment in partition.segments:
            line = segment_verdict_dict(segment)
            line["path"] = json_name(line["path"])
            write(line)
        if partition.cleaning is not None:
            line = cleaning_dict(partition, partition.cleaning)
            line["partition"] = json_name(line["partition"])
            write(line)
    for path, finding in findings:
        write({"type": "finding", "file": json_name(path), **finding_dict(finding)})
