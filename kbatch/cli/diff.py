"""``kbatch diff``: where two segments or batches disagree, field by field."""

from __future__ import annotations

import sys

import click

from kbatch.ops.diff import DiffSummary, diff_streams, resolve_ignore
from kbatch.reading.reader import open_input
from kbatch.cli.options import decompressed_limit_option, hex_option, no_color_option, report_unreadable
from kbatch.cli.status import ExitStatus


@click.command(epilog="""\b
Examples:
  kbatch diff leader/00000000000000000000.log follower/00000000000000000000.log
  kbatch diff --ignore crc,partitionLeaderEpoch,compression a.log b.log
  kbatch diff --records-only original.log compacted.log
  kbatch diff --format jsonl a.log b.log | jq 'select(.type == "difference")'
""")
@click.argument("path_a", metavar="A", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("path_b", metavar="B", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--ignore", "ignore_names", metavar="FIELD,...", default="",
              help="Fields not to compare, e.g. crc,partitionLeaderEpoch,compression (compression also ignores "
                   "the sizes and the attributes' codec bits).")
@click.option("--records-only", is_flag=True,
              help="Compare records by offset whatever their batching, compression and batch headers.")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl"]), default="table",
              show_default=True, help="table for people, jsonl for programs.")
@hex_option
@decompressed_limit_option
@no_color_option
def diff(path_a, path_b, ignore_names, records_only, output_format, hex_input, decompressed_limit, no_color):
    """Compare two Kafka log segments (or batches): aligned by record offset, every header field and record
    field that differs, batches and records on one side only, damaged ranges on each side, and the first
    differing byte.

    A leader's and a follower's copy after an unclean election, a segment
    before and after compaction, what two clients encoded for the same
    records, a repaired file against its original.

    Exit status, like diff(1): 0 same, 1 different, 2 usage or I/O error.
    """
    try:
        ignore = resolve_ignore([name.strip() for name in ignore_names.split(",") if name.strip()])
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--ignore") from None
    if path_a == "-" and path_b == "-" and not hex_input:
        raise click.UsageError("only one of A and B can be stdin")
    streams = []
    for path in (path_a, path_b):
        try:
            streams.append(open_input(path, hex_text=hex_input))
        except (OSError, ValueError) as error:
            report_unreadable(path, error)
            return ExitStatus.TROUBLE
    summary = DiffSummary()
    stream_a, stream_b = streams
    with stream_a, stream_b:
        differences = diff_streams(stream_a, stream_b, summary, ignore=ignore, records_only=records_only,
                                   decompressed_limit=decompressed_limit)
        if output_format == "jsonl":
            from kbatch.render.diff import write_diff_jsonl
            write_diff_jsonl(sys.stdout, differences, summary, path_a, path_b)
        else:
            from kbatch.render.console import make_console
            from kbatch.render.diff import print_diff
            print_diff(make_console(sys.stdout, no_color=no_color), differences, summary, path_a, path_b,
                       records_only)
    return ExitStatus.OK if summary.same else ExitStatus.FOUND

