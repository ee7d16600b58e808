"""``kbatch txn``: the transactions a partition's log holds, and how each ended."""

from __future__ import annotations

import sys

import click

from kbatch.ops.txn import transactions
from kbatch.cli.options import decompressed_limit_option, expand_inputs, no_color_option, replay_status
from kbatch.cli.status import ExitStatus


@click.command(epilog="""\b
Examples:
  kbatch txn /var/lib/kafka/orders-0
  kbatch txn /var/lib/kafka/orders-* /var/lib/kafka/__transaction_state-*
  kbatch txn --format jsonl orders-0 | jq 'select(.type == "transaction" and .outcome == "OPEN")'
""")
@click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl"]), default="table",
              show_default=True, help="table for people, jsonl for programs.")
@decompressed_limit_option
@no_color_option
def txn(paths, output_format, decompressed_limit, no_color):
    """Transaction forensics from the log: every transaction of every producer in each partition.

    Per producer id and epoch: first and last offset, records, batches, and
    how it ended (COMMIT or ABORT with the marker's offset and coordinator
    epoch, or still OPEN; UNKNOWN when its marker is not believed: its CRC
    fails or its record is no ABORT or COMMIT); empty transactions (a marker with no data before
    it); the aborted ranges consumers skip; the last stable offset as the
    broker has it (UnifiedLog.lastStableOffset: never above the high
    watermark, raised to the log start offset, held by a transaction open
    or whose marker the high watermark has not passed), where the log
    directory's replication-offset-checkpoint records the high watermark
    and every segment of the partition directory is read, else unknown and
    why; and the open transactions, with what kafka-transactions.sh needs
    to abort them.  Given __transaction_state partitions too, each
    transaction is joined with the coordinator's state of its producer, and
    a transaction open in a partition that the coordinator has finished
    with is called hanging.  A DIR means its *.log files, recursively;
    segments are grouped by their partition directory (TOPIC-N).  Where
    every segment of a partition directory is read, its .txnindex and
    producer .snapshot files are held against the log, and each
    disagreement is a finding.

    Exit status: 0 clean, 1 damage found in the logs (or their .txnindex
    and .snapshot files), 2 usage or I/O error.
    """
    files, status = expand_inputs(paths)
    report = transactions(files, decompressed_limit)
    status = replay_status(report.replayed, status)
    if report.damaged and status is ExitStatus.OK:
        status = ExitStatus.FOUND
    if output_format == "jsonl":
        from kbatch.render.txn import write_txn_jsonl
        write_txn_jsonl(sys.stdout, report.partitions, report.coordinator, report.findings)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.txn import print_txn
        print_txn(make_console(sys.stdout, no_color=no_color), report.partitions, report.coordinator,
                  report.findings)
    return status
