"""``kbatch stats``: where the bytes of Kafka log segments go, field by field."""

from __future__ import annotations

import os
import sys

import click

from kbatch.reading.reader import ReadOptions
from kbatch.cli.options import (decompressed_limit_option, expand_inputs, hex_option, no_color_option,
                                refuse_writing_an_input, report_unreadable)
from kbatch.cli.status import ExitStatus
from kbatch.output.visible import visible


@click.command(epilog="""\b
Examples:
  kbatch stats 00000000000000000000.log
  kbatch stats /var/kafka-logs/orders-0
  kbatch stats --what-if --recompress segment.log
  kbatch stats --what-if --write-layouts /tmp/layouts segment.log && kbatch hexdump-annotate /tmp/layouts/segment.v3.log
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
@click.option("--write-layouts", "layouts_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="With --what-if: also write what each layout holds, as DIR/NAME.v0.log .. NAME.v3.log for "
                   "each input NAME.log (compressed with --recompress), to dump or hexdump-annotate them.")
@hex_option
@decompressed_limit_option
@no_color_option
def stats(paths, output_format, what_if, recompress, layouts_dir, hex_input, decompressed_limit, no_color):
    """Where the bytes of Kafka log segments go: log-entry framing, batch headers, each record
    field, keys, values, headers, compressed records, control batches and damaged bytes.

    The categories add up to the file sizes exactly.  Compressed records are
    also counted field by field as they inflate.  Also: records per batch and
    batch sizes (distributions), compression ratio per codec, bytes per magic
    and per producer.  A DIR means its *.log files, recursively; - reads stdin.

    Exit status: 0 clean, 1 damage found, 2 usage or I/O error.
    """
    from kbatch.ops.stats import SegmentStats, collect_files
    files, status = expand_inputs(paths)
    options = ReadOptions(records=True, record_objects=False, decompressed_limit=decompressed_limit)
    accounting = SegmentStats()
    if (recompress or layouts_dir) and not what_if:
        raise click.UsageError("--recompress and --write-layouts go with --what-if")
    outputs = _layout_outputs(files, layouts_dir) if layouts_dir else {}
    encoder = None
    if what_if:
        from kbatch.ops.reencode import WhatIf
        encoder = WhatIf(recompress=recompress)
    if collect_files(accounting, files, options, hex_input=hex_input, what_if=encoder, outputs=outputs,
                     unreadable=report_unreadable, unwritable=_unwritable):
        status = ExitStatus.TROUBLE
    if not accounting.files:
        return status   # nothing could be read: the errors said why, and there is nothing to add up
    from kbatch.output.jsonout import stats_dict

    report = stats_dict(accounting, encoder)
    if output_format == "json":
        from kbatch.render.stats import write_stats_json
        write_stats_json(sys.stdout, report)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.stats import print_stats
        print_stats(make_console(sys.stdout, no_color=no_color), report)
    if accounting.damaged and status is ExitStatus.OK:
        status = ExitStatus.FOUND
    return status


def _layout_outputs(files: list[str], directory: str) -> dict[str, dict[str, str]]:
    """input -> layout -> the file --write-layouts writes it to; refused when two inputs would share one."""
    from kbatch.ops.reencode import LAYOUTS

    outputs: dict[str, dict[str, str]] = {}
    taken: dict[str, str] = {}   # output name -> the input that claimed it
    for path in files:
        name = "stdin" if path == "-" else os.path.basename(path).removesuffix(".log")
        if name in taken:
            raise click.UsageError(f"--write-layouts: {visible(path)} and {visible(taken[name])} would both write {visible(name)}.v*.log; "
                                   "give inputs with different names")
        taken[name] = path
        outputs[path] = {layout: os.path.join(directory, f"{name}.{layout}.log") for layout in LAYOUTS}
        for output in outputs[path].values():
            refuse_writing_an_input(output, files, " (--write-layouts names its files NAME.v0.log .. NAME.v3.log)")
    return outputs



def _unwritable(path: str, error: OSError) -> None:
    click.echo(f"kbatch: cannot write {visible(path)}: {error.strerror or error}", err=True)
