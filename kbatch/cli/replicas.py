"""``kbatch replicas``: one partition across every broker's copy -- where they diverge, what Kafka truncates."""

from __future__ import annotations

import sys

import click

from kbatch.cli.options import no_color_option
from kbatch.cli.status import ExitStatus


@click.command(epilog="""\b
Examples:
  kbatch replicas /data/broker-1/orders-0 /data/broker-2/orders-0 /data/broker-3/orders-0
  kbatch replicas --format jsonl b1/orders-0 b2/orders-0 | jq 'select(.type == "record" and .below_high_watermark)'
""")
@click.argument("paths", nargs=-1, required=True, metavar="DIR DIR...")
@click.option("--partition", metavar="TOPIC-N", help="Only this partition.")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl"]), default="table",
              show_default=True, help="table for people, jsonl for programs.")
@no_color_option
def replicas(paths, partition, output_format, no_color):
    """Compare one partition's copies across brokers: where they diverge and what Kafka will truncate.

    Each DIR is one broker's log directory (or a partition directory
    TOPIC-N, or a copy of one).  Each copy is taken as its broker holds it
    once started, after Kafka's log recovery (LogLoader, LogSegment.recover):
    without .kafka_cleanshutdown in its log directory, a batch that fails
    validation in the segment holding the recovery point or a later one cuts
    the log there, and a line says where and at which file position; damage
    recovery does not reach stays, and a line says so.  For every partition
    present in two or more: each copy's log start (Kafka's: the
    log-start-offset-checkpoint above the first segment's base offset, else
    that base offset; what lies below is deleted, never lost to an election)
    and end offsets, high
    watermark and recovery point (its log directory's checkpoints; "?" where
    one cannot be read: where it is damaged is said, and a high watermark
    not read is unknown, never taken as none), its latest
    leader epoch (the leader-epoch-checkpoint, with the epochs of the batches
    recovery reads, entries at or past the log end dropped, as LogLoader
    loads them); the offset Kafka truncates it to when it follows
    the copy with the newest epoch, round by round as
    AbstractFetcherThread applies OffsetsForLeaderEpoch (a fetch offset then
    below that copy's log start truncates it whole); the first offset
    where its batches differ from that copy's (batches that differ only as
    each broker's log cleaner compacts its own copy do not: a line says
    so; nor does a batch a copy lacks where its own cleaner removed it
    whole: below its cleaner-offset-checkpoint, each record with a later
    record of its key there, and no active producer's last batch, as
    Kafka's Cleaner rules; a line says so, and electing it loses none of
    it).  Then advice: what electing
    each copy loses, records held by some copies only (and whether below a
    recorded high watermark), lost producer sequences, and where a good copy
    of a damaged batch lies (the version of the copy with the newest epoch,
    where copies hold different ones).  --format jsonl writes a "replica"
    object per copy and a "record" object per record not every copy holds
    (the record as dump --records writes it).

    Each copy is read once, as verify-crc reads a file (batch headers and
    CRCs, in constant memory); records are decoded only of the batches not
    every copy holds.  kbatch map --replicas draws the copies as lanes on
    one offset axis.

    Exit status: 0 every copy agrees, 1 the copies diverge or one is damaged
    (its leader-epoch-checkpoint too, or an offset checkpoint of its log
    directory), 2 usage or I/O error.
    """
    from kbatch.ops.replicas import exit_found

    reports = compared_copies(paths, partition)
    if reports is None:
        return ExitStatus.TROUBLE
    if output_format == "jsonl":
        from kbatch.render.replicas import write_replicas_jsonl
        write_replicas_jsonl(sys.stdout, reports)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.replicas import print_replicas
        print_replicas(make_console(sys.stdout, no_color=no_color), reports)
    return ExitStatus.FOUND if exit_found(reports) else ExitStatus.OK


def compared_copies(paths, partition: str | None, said_by: str = "kbatch", option: str = ""):
    """Each partition's copies among ``paths`` compared (kbatch.ops.replicas.compare_all), its notes said on
    stderr by ``said_by``; None when a segment cannot be read (said too).  Fewer than two copies, a path that
    is no copy, or no partition in two of them is a usage error (``option``: the option that named them)."""
    from kbatch.ops.replicas import NotACopy, compare_all
    from kbatch.output.visible import visible

    if len(paths) < 2:
        raise click.UsageError(f"{option}name two or more copies (log directories or partition directories) to compare")
    try:
        reports, notes = compare_all(list(paths), partition)
    except NotACopy as error:
        raise click.UsageError(visible(str(error))) from None
    except OSError as error:   # a segment that cannot be read (permissions, a directory named *.log)
        click.echo(f"{said_by}: error: {visible(str(error))}", err=True)
        return None
    for note in notes:
        click.echo(f"{said_by}: note: {visible(note)}", err=True)
    if not reports:
        raise click.UsageError(f"{option}no partition is present in two or more of the directories named")
    return reports
