"""``kbatch map``: segments, partitions and a log directory drawn as one self-contained page (or an SVG)."""

from __future__ import annotations

import json
import os

import click

from kbatch.cli.options import (decompressed_limit_option, expand_inputs, output_name, refuse_writing_an_input,
                                report_unreadable)
from kbatch.cli.status import ExitStatus
from kbatch.output.visible import visible
from kbatch.map.gather import COLOR_CHOICES, gather

FORMATS = ("html", "svg", "json")
# What an output file's name says it holds (the format when --format is not given).
EXTENSIONS = {".html": "html", ".htm": "html", ".svg": "svg", ".json": "json"}
INSTALL_HINT = "pip install '.[map]' in kbatch's checkout"   # (the "kbatch" on PyPI is another project)


@click.command(epilog="""\b
Examples:
  kbatch map /var/lib/kafka/orders-0 -o orders-0.html
  kbatch map damaged.log -o damaged.html --color-by damage
  kbatch map /var/kafka-logs -o logdir.html
  kbatch map /var/lib/kafka/orders-0 -o orders-0.svg
  kbatch map --format json segment.log -o - | jq '.partitions[].segments[].regions'
""")
@click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option("--output", "-o", required=True, metavar="FILE",
              help="Where the map goes (written atomically: a temporary file renamed into place); - is stdout.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
              help="html: one page with every script and style inline (zoom, hover, click to copy); svg: a "
                   "static picture for a report; json: the model drawn (no drawing library needed).  "
                   "[default: from the output's name (.html, .htm, .svg, .json), else html]")
@click.option("--color-by", type=click.Choice(COLOR_CHOICES), default="codec", show_default=True,
              help="What a block's colour says first (the page can switch): its codec, magic, producer id, "
                   "kind (plain, idempotent, transactional, control) or damage.")
@decompressed_limit_option
def map(paths, output, output_format, color_by, decompressed_limit):   # noqa: A001 - the subcommand's name
    """Draw segments, partitions and a log directory: where the bytes, offsets and damage lie.

    For each partition directory (TOPIC-N) or lone segment: a byte map
    (each segment's file positions left to right, each batch a block sized
    by its bytes and coloured by codec, magic, producer, kind or damage;
    damaged ranges, resync points and a preallocated zero tail where they
    lie; the .index and .timeindex entries as ticks at the positions they
    point at); a timeline (offsets against timestamps, segment starts, gaps
    and overlaps between segments, leader epochs from the batches and from
    leader-epoch-checkpoint); and the transactions as spans per producer,
    coloured by outcome (COMMIT, ABORT, OPEN, UNKNOWN).  Given several
    partitions (a log directory), a table of them all, each linked to its
    view.  The findings are listed beside the picture (a partition's files
    held against its log too, as verify-crc --deep does), each linked to
    where it lies.

    A segment of more than 1500 batches is drawn as 1500 bins of its bytes
    (a bin's tooltip says what its batches add up to), so a 1 GiB segment
    draws in seconds and the page stays small; past 40 segments, they share
    60,000 blocks (at least 16 each).  Hovering a block shows its
    fields (named as in dump --format jsonl); clicking it copies the kbatch
    dump or hexdump-annotate command that opens it.

    Drawing needs the map extra (pip install '.[map]' in kbatch's checkout: vl-convert-python,
    which bundles Vega-Lite into the page and renders SVG without a
    browser); --format json does not.

    The format is the output file's extension's (.svg, .html or .htm,
    .json) unless --format says; a --format that contradicts the extension
    is a usage error.

    Exit status: 0 clean, 1 damage found, 2 usage or I/O error (or the map
    extra missing).
    """
    output_format = _format_for(output, output_format)
    if output_format != "json":
        try:
            import vl_convert  # noqa: F401 - only asked whether it is there
        except ImportError:
            click.echo(f"kbatch map: drawing needs the map extra: {INSTALL_HINT} (vl-convert-python); "
                       "--format json writes the model without it", err=True)
            return ExitStatus.TROUBLE
    files, status = expand_inputs(paths)
    refuse_writing_an_input(output, files + _read_beside(files))
    gathered = gather(files, decompressed_limit)
    for path, reason in gathered.unreadable:
        report_unreadable(path, reason)
        status = ExitStatus.TROUBLE
    model = gathered.model()
    if not model["partitions"]:
        return ExitStatus.TROUBLE
    if output_format == "json":
        from kbatch.map.draw import utf8_model

        text = json.dumps(utf8_model(model), indent=1) + "\n"
    else:
        from kbatch.map.draw import html_page, svg

        text = html_page(model, color_by) if output_format == "html" else svg(model, color_by)
    from kbatch.files.outputs import is_stdout, write_output

    try:
        written = write_output(output, [text.encode("utf-8")], like=files[0])
    except BrokenPipeError:
        raise   # the reader of stdout went away: status 141, as for every command
    except OSError as error:
        click.echo(f"kbatch map: cannot write {visible(output_name(output))}: {error.strerror or error}", err=True)
        return ExitStatus.TROUBLE
    partitions = model["partitions"]
    to_stdout = is_stdout(output)
    click.echo(f"kbatch map: wrote {visible(output_name(output))} ({written} bytes): "
               f"{len(partitions)} partition(s), {sum(p['segment_count'] for p in partitions)} segment(s), "
               f"{model['errors']} damage finding(s)", err=to_stdout)
    if model["errors"] and status is ExitStatus.OK:
        status = ExitStatus.FOUND
    return status


def _format_for(output: str, asked: str | None) -> str:
    """The format asked for, else the one the output's extension names, else html; a contradiction between
    them is a usage error (a picture must not be written as a page into a file named .svg)."""
    extension = os.path.splitext(output)[1].lower() if output != "-" else ""
    named = EXTENSIONS.get(extension)
    if asked is not None and named is not None and asked != named:
        raise click.UsageError(f"--format {asked} contradicts the output's name {output!r} ({named}): "
                               "give one or the other")
    return asked or named or "html"


def _read_beside(files: list[str]) -> list[str]:
    """The files a map reads besides the segments: every file of each partition directory (its indexes,
    snapshots and checkpoints), none of which -o may name."""
    from kbatch.files.inputs import topic_partition

    directories = sorted({os.path.dirname(path) or "." for path in files if topic_partition(path)[0] is not None})
    beside = []
    for directory in directories:
        try:
            beside += [os.path.join(directory, name) for name in os.listdir(directory)]
        except OSError:
            continue   # the segments' own errors say why
    return beside
