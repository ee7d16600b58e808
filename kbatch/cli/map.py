"""``kbatch map``: segments, partitions and a log directory drawn as one self-contained page (or an SVG)."""

from __future__ import annotations

import os

import click

from kbatch.cli.options import (decompressed_limit_option, expand_inputs, output_name, refuse_writing_an_input,
                                report_unreadable)
from kbatch.cli.status import ExitStatus
from kbatch.map.gather import COLOR_CHOICES, files_beside, gather

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
  kbatch map --replicas /data/broker-1 /data/broker-2 /data/broker-3 --partition orders-0 -o copies.html
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
@click.option("--replicas", is_flag=True,
              help="The DIRs are copies of partitions on several brokers (as kbatch replicas takes them): each "
                   "partition's copies drawn as lanes on one offset axis, where they diverge and where Kafka "
                   "truncates each marked, then each copy as a partition.")
@click.option("--partition", metavar="TOPIC-N", help="With --replicas: only this partition.")
@decompressed_limit_option
def map(paths, output, output_format, color_by, replicas, partition, decompressed_limit):   # noqa: A001
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

    With --replicas each DIR is one broker's log directory (or a partition
    directory TOPIC-N, or a copy of one), as kbatch replicas takes them:
    for every partition present in two or more, one picture with a lane
    per copy, offsets aligned: the offsets it holds, the batches not every
    copy holds (held by the copy with the newest leader epoch too, or not:
    those it loses when it truncates) and its damaged ones, and ticks where
    it diverges from that copy, where Kafka truncates it and at its high
    watermark.  Each copy is then drawn as a partition of its own.

    Drawing needs the map extra (pip install '.[map]' in kbatch's checkout: vl-convert-python,
    which bundles Vega-Lite into the page and renders SVG without a
    browser); --format json does not.

    The format is the output file's extension's (.svg, .html or .htm,
    .json) unless --format says; a --format that contradicts the extension
    is a usage error.

    Exit status: 0 clean, 1 damage found (with --replicas: or the copies
    diverge), 2 usage or I/O error (or the map extra missing).
    """
    output_format = _format_for(output, output_format)
    if output_format != "json":
        try:
            import vl_convert  # noqa: F401 - only asked whether it is there
        except ImportError:
            click.echo(f"kbatch map: drawing needs the map extra: {INSTALL_HINT} (vl-convert-python); "
                       "--format json writes the model without it", err=True)
            return ExitStatus.TROUBLE
    if partition is not None and not replicas:
        raise click.UsageError("--partition names the partition whose copies --replicas draws: give --replicas")
    reports = names = None
    if replicas:
        copies = _copies(paths, partition)
        if copies is None:
            return ExitStatus.TROUBLE
        reports, files, names = copies
        status = ExitStatus.OK
    else:
        files, status = expand_inputs(paths)
    refuse_writing_an_input(output, files + files_beside(files))   # (none of which -o may name)
    gathered = gather(files, decompressed_limit, names)
    if reports is not None:
        from kbatch.map.gather import replica_lanes
        from kbatch.ops.replicas import exit_found

        gathered.replicas = [replica_lanes(report, f"r{n}") for n, report in enumerate(reports)]
        if exit_found(reports) and status is ExitStatus.OK:
            status = ExitStatus.FOUND
    for path, reason in gathered.unreadable:
        report_unreadable(path, reason)
        status = ExitStatus.TROUBLE
    model = gathered.model()
    if not model["partitions"]:
        return ExitStatus.TROUBLE
    if output_format == "json":
        from kbatch.map.draw import json_document

        text = json_document(model)
    else:
        from kbatch.map.draw import html_page, svg

        text = html_page(model, color_by) if output_format == "html" else svg(model, color_by)
    from kbatch.files.outputs import is_stdout, write_output

    try:
        written = write_output(output, [text.encode("utf-8")], like=files[0])
    except BrokenPipeError:
        raise   # the reader of stdout went away: status 141, as for every command
    except OSError as error:
        click.echo(f"kbatch map: cannot write {output_name(output)}: {error.strerror or error}", err=True)
        return ExitStatus.TROUBLE
    partitions = model["partitions"]
    to_stdout = is_stdout(output)
    click.echo(f"kbatch map: wrote {output_name(output)} ({written} bytes): "
               f"{len(partitions)} partition(s), {sum(p['segment_count'] for p in partitions)} segment(s), "
               f"{model['errors']} damage finding(s)", err=to_stdout)
    if model["errors"] and status is ExitStatus.OK:
        status = ExitStatus.FOUND
    return status


def _copies(paths, partition: str | None):
    """kbatch map --replicas: each partition's copies compared (kbatch.ops.replicas), the segments of every copy,
    and the name each copy's partition is shown by; None when a segment cannot be read (said on stderr)."""
    from kbatch.cli.replicas import compared_copies
    from kbatch.map.gather import replica_segments

    reports = compared_copies(paths, partition, said_by="kbatch map", option="--replicas: ")
    if reports is None:
        return None
    return (reports, *replica_segments(reports))


def _format_for(output: str, asked: str | None) -> str:
    """The format asked for, else the one the output's extension names, else html; a contradiction between
    them is a usage error (a picture must not be written as a page into a file named .svg)."""
    extension = os.path.splitext(output)[1].lower() if output != "-" else ""
    named = EXTENSIONS.get(extension)
    if asked is not None and named is not None and asked != named:
        raise click.UsageError(f"--format {asked} contradicts the output's name {output!r} ({named}): "
                               "give one or the other")
    return asked or named or "html"
