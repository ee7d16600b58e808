"""``kbatch offsets``: where each consumer group stood, commit by commit, from __consumer_offsets."""

from __future__ import annotations

import os
import sys

import click

from kbatch.cli.options import (decompressed_limit_option, expand_inputs, no_color_option, parse_time,
                                replay_status)
from kbatch.cli.status import ExitStatus
from kbatch.ops.offsets import DEFAULT_COORDINATOR_PARTITIONS, OFFSETS_TOPIC, offsets_segments, replay_offsets
from kbatch.output.visible import visible


@click.command(epilog="""\b
Examples:
  kbatch offsets /var/lib/kafka/__consumer_offsets-12
  kbatch offsets --group billing /var/lib/kafka/__consumer_offsets-*
  kbatch offsets --group billing --at 2026-11-27T09:00Z /var/lib/kafka/__consumer_offsets-12
  kbatch offsets --where billing --transactional-id payments-tx
  kbatch offsets --format jsonl __consumer_offsets-12 | jq 'select(.move == "rewind")'
""")
@click.argument("paths", nargs=-1, metavar="[FILE|DIR...]")
@click.option("--group", "groups", multiple=True, metavar="G", help="Only group G (repeatable).")
@click.option("--topic", "topics", multiple=True, metavar="T", help="Only offsets committed for topic T (repeatable).")
@click.option("--at", callback=parse_time, metavar="TIME",
              help="Where each group stood at TIME (epoch ms or ISO 8601), and the commands that put it back there.")
@click.option("--where", "where_groups", multiple=True, metavar="G",
              help="Only say which __consumer_offsets partition coordinates group G (no files needed).")
@click.option("--transactional-id", "transactional_ids", multiple=True, metavar="ID",
              help="Only say which __transaction_state partition coordinates transactional id ID.")
@click.option("--coordinator-partitions", type=click.IntRange(min=1), default=DEFAULT_COORDINATOR_PARTITIONS,
              show_default=True, metavar="N",
              help="The partitions of __consumer_offsets (offsets.topic.num.partitions) and __transaction_state "
                   "(transaction.state.log.num.partitions), for --where and --transactional-id.")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl"]), default="table",
              show_default=True, help="table for people, jsonl for programs (one \"commit\" object per commit).")
@decompressed_limit_option
@no_color_option
def offsets(paths, groups, topics, at, where_groups, transactional_ids, coordinator_partitions, output_format,
            decompressed_limit, no_color):
    """Each consumer group's committed offsets over time, from __consumer_offsets.

    Replays the offset commits of __consumer_offsets segments in log order,
    as the group coordinator does when it loads them: every commit (time,
    offset, leader epoch, metadata, expiry), tombstones (offsets deleted),
    transactional commits applied at their COMMIT marker (unless superseded
    before it) and dropped at an ABORT, each group's generation and (classic groups) the member a
    partition was assigned to.  A rewind (a lower offset than the one
    before) and a reset forward (a higher one committed while the group had
    no members) are marked.  With --group or --topic, every commit is shown
    as a line; then each group's position per partition.  --at TIME adds
    where each group stood then, and the kafka-consumer-groups.sh commands
    that put it back.  A DIR means its *.log files, recursively, read
    oldest first; each __consumer_offsets-N directory is replayed on its own,
    and under a log directory the partitions of other topics are passed over
    (a file or partition directory named is read as asked).

    Exit status: 0 clean, 1 damage found (the replay goes on around it, and
    says how many records it could not read), 2 usage or I/O error.
    """
    if where_groups or transactional_ids:
        from kbatch.render.coordinators import coordinator_lines

        for line in coordinator_lines(where_groups, transactional_ids, coordinator_partitions, output_format):
            click.echo(line)
        if not paths:
            return ExitStatus.OK
    elif not paths:
        raise click.UsageError("give __consumer_offsets files or directories (or --where / --transactional-id)")
    files, status = expand_inputs(paths)
    files, passed_over = offsets_segments(files, paths)
    if passed_over:
        shown = ", ".join(visible(os.path.basename(directory)) for directory in passed_over[:3])
        more = f" and {len(passed_over) - 3} more" if len(passed_over) > 3 else ""
        click.echo(f"kbatch: note: read {OFFSETS_TOPIC} only: passed over {len(passed_over)} partition(s) of other "
                   f"topics ({shown}{more})", err=True)
        if not files:
            click.echo(f"kbatch: no {OFFSETS_TOPIC} partition in {' '.join(map(visible, paths))}", err=True)
            return ExitStatus.TROUBLE
    if output_format == "jsonl":
        from kbatch.render.offsets import write_commit_jsonl
        emit = lambda commit: write_commit_jsonl(sys.stdout, commit)  # noqa: E731
    elif groups or topics:
        from kbatch.render.console import make_console
        from kbatch.render.offsets import commit_line
        console = make_console(sys.stdout, no_color=no_color)
        emit = lambda commit: console.print(commit_line(commit))  # noqa: E731
    else:
        emit = None

    histories, replayed = replay_offsets(files, decompressed_limit, emit, groups=set(groups) or None,
                                         topics=set(topics) or None, at=at)
    status = replay_status(replayed, status)
    findings = replayed.findings
    if output_format == "jsonl":
        from kbatch.render.offsets import write_offsets_jsonl
        write_offsets_jsonl(sys.stdout, findings)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.offsets import print_offsets
        if groups or topics:
            click.echo()
        print_offsets(make_console(sys.stdout, no_color=no_color), histories, coordinator_partitions, at, findings)
    return status

