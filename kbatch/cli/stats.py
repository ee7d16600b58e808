"""``kbatch stats``: where the bytes of Kafka log segments go, field by field."""

from __future__ import annotations

import sys

import click

from ..reader import ReadOptions
from .options import decompressed_limit_option, expand_inputs, hex_option, no_color_option, report_unreadable
from .status import ExitStatus


@click.command(epilog="""\b
Examples:
  kbatch stats 00000000000000000000.log
  kbatch stats /var/kafka-logs/orders-0
  kbatch stats --what-if --recompress segment.log
  kbatch stats --format json segment.log | jq '.stored[] | {category, share}'
""")
@click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="table for people (with bars), json for programs.")
@click.option("--what-if", "what_if", is_flag=True,
              help="Also encode the same records as v0, v1, v2 and the proposed v3 (batch boundaries and "
                   "codecs kept) and report each layout's size.")
@click.option("--recompress", is_flag=True,
              help="With --what-if: also compress each layout with its batch's codec (slower).")
@hex_option
@decompressed_limit_option
@no_color_option
def stats(paths, output_format, what_if, recompress, hex_input, decompressed_limit, no_color):
    """Where the bytes of Kafka log segments go: log-entry framing, batch headers, each record
    field, keys, values, headers, compressed records, control batches and damaged bytes.

    The categories add up to the file sizes exactly.  Compressed records are
    also counted field by field as they inflate.  Also: records per batch and
    batch sizes (distributions), compression ratio per codec, bytes per magic
    and per producer.  A DIR means its *.log files, recursively; - reads stdin.

    Exit status: 0 clean, 1 damage found, 2 usage or I/O error.
    """
    from ..reader import open_input
    from ..stats import SegmentStats, collect
    files, status = expand_inputs(paths)
    options = ReadOptions(records=True, decompressed_limit=decompressed_limit)
    accounting = SegmentStats()
    if recompress and not what_if:
        raise click.UsageError("--recompress goes with --what-if")
    encoder = None
    if what_if:
        from ..whatif import WhatIf
        encoder = WhatIf(recompress=recompress)
    for path in files:
        try:
            stream = open_input(path, hex_text=hex_input)
        except (OSError, ValueError) as error:
            report_unreadable(path, error)
            status = ExitStatus.TROUBLE
            continue
        with stream:
            collect(accounting, path, stream, options, what_if=encoder)
    if not accounting.files:
        return status   # nothing could be read: the errors said why, and there is nothing to add up
    report = accounting.as_dict()
    if encoder is not None:
        report["what_if"] = encoder.as_dict()
    if output_format == "json":
        from ..render.stats import write_stats_json
        write_stats_json(sys.stdout, report)
    else:
        from ..render.console import make_console
        from ..render.stats import print_stats
        print_stats(make_console(sys.stdout, no_color=no_color), report)
    if accounting.damaged and status is ExitStatus.OK:
        status = ExitStatus.FOUND
    return status
