"""``kbatch producers``: each producer of a partition, epoch by epoch, and where it broke a leader's rules."""

from __future__ import annotations

import sys

import click

from kbatch.cli.options import decompressed_limit_option, expand_inputs, no_color_option, replay_status
from kbatch.cli.status import ExitStatus


@click.command(epilog="""\b
Examples:
  kbatch producers /var/lib/kafka/orders-0
  kbatch producers --producer-id 4001 /var/lib/kafka/orders-*
  kbatch producers /var/lib/kafka/orders-0 /var/lib/kafka/__transaction_state-*
  kbatch producers --format jsonl orders-0 | jq 'select(.type == "finding")'
""")
@click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option("--producer-id", "producer_ids", multiple=True, type=int, metavar="N",
              help="Only producer id N (repeatable).")
@click.option("--transactional-id", "transactional_ids", multiple=True, metavar="ID",
              help="Only the producer __transaction_state names for transactional id ID (give its partitions too).")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl"]), default="table",
              show_default=True, help="table for people, jsonl for programs.")
@decompressed_limit_option
@no_color_option
def producers(paths, producer_ids, transactional_ids, output_format, decompressed_limit, no_color):
    """Each producer of each partition, epoch by epoch, held to a leader's rules.

    Per producer id and epoch: first and last sequence and offset, batches
    and records, and its transactional id where __transaction_state
    partitions are given too.  Each batch is held to the checks a
    partition leader makes before it appends a client's batch
    (ProducerAppendInfo): an epoch never goes back (a transaction marker's
    epoch counts: under transactions version 2 it begins the next epoch), a
    new epoch starts at sequence 0, sequences follow one another within an
    epoch, no plain
    batch while the producer's transaction is open.  A break is a warning:
    a broker loading or replicating a log does not check them, so an unclean
    election or a bug leaves them behind.  A sequence gap the log's removed
    offsets account for (compaction) is none.  Duplicates despite
    idempotence: a batch whose records are those of one of the producer's
    last 16 batches, written again under a new epoch or a repeated sequence.
    A DIR means its *.log files, recursively; segments are grouped by their
    partition directory (TOPIC-N).  Where every segment of a partition
    directory is read, its producer .snapshot files are held against the
    log as verify-crc --deep holds them: each field of a producer's entry
    that differs from what the log below the snapshot's offset builds is a
    snapshot-mismatch; a producer only in a snapshot (its batches removed by
    retention or the cleaner) is none, Kafka keeps it.

    Exit status: 0 clean, 1 a producer rule broken (of the producers
    selected), damage found in the logs or their .snapshot files (a
    snapshot-mismatch), 2 usage or I/O error.
    """
    from kbatch.ops.producers import producers_report
    from kbatch.output.visible import visible

    files, status = expand_inputs(paths)
    report = producers_report(files, decompressed_limit, producer_ids, transactional_ids)
    status = replay_status(report.replayed, status)
    if report.unnamed:
        click.echo("kbatch: no __transaction_state record names " + ", ".join(map(visible, transactional_ids))
                   + " (give the __transaction_state partition it lives in: kbatch offsets --transactional-id)",
                   err=True)
    # a rule broken is what the command looks for (warnings all the same), a snapshot's disagreement is damage
    if (report.broken or report.snapshots_damaged) and status is ExitStatus.OK:
        status = ExitStatus.FOUND
    if output_format == "jsonl":
        from kbatch.render.producers import write_producers_jsonl
        write_producers_jsonl(sys.stdout, report.partitions, report.findings)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.producers import print_producers
        print_producers(make_console(sys.stdout, no_color=no_color), report.partitions, report.findings)
    return status
