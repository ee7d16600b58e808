"""``kbatch hexdump-annotate``: a hex dump in which every byte is tied to its field."""

from __future__ import annotations

import sys

import click

from kbatch.ops.annotate import Annotation
from kbatch.output.visible import visible
from kbatch.cli.options import (decompressed_limit_option, hex_option, kafka_version_option, no_color_option,
                                open_segment, report_unreadable)
from kbatch.cli.status import ExitStatus


DEFAULT_MAX_BYTES = 64 * 1024   # 4096 rows of 16: more than anyone reads, little enough to print in a moment


def _parse_range(ctx, param, value):
    if value is None:
        return None
    low, sep, high = value.partition(":")
    try:
        bounds = int(low), int(high)
    except ValueError:
        raise click.BadParameter(f"expected A:B with integer positions, got {value!r}") from None
    if not sep or bounds[0] < 0 or bounds[0] >= bounds[1]:
        raise click.BadParameter(f"expected A:B with 0 <= A < B, got {value!r}")
    return bounds


@click.command(epilog="""\b
Examples:
  kbatch hexdump-annotate segment.log                  # the first batch
  kbatch hexdump-annotate --offset 905 segment.log     # the batch holding offset 905
  kbatch hexdump-annotate --position 2351 segment.log  # whatever lies at byte 2351, damage included
  kbatch hexdump-annotate --batch 2 --decompressed segment.log
  kbatch hexdump-annotate --range 0:128 --width 32 segment.log
""")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--batch", "batch_index", type=click.IntRange(min=0), metavar="N", help="The Nth batch (from 0).")
@click.option("--offset", "record_offset", type=int, metavar="O", help="The batch holding record offset O.")
@click.option("--position", type=click.IntRange(min=0), metavar="P",
              help="The batch (or damaged range) holding file position P.")
@click.option("--range", "byte_range", callback=_parse_range, metavar="A:B",
              help="File positions A up to B, with every field that lies in them.")
@click.option("--width", type=click.Choice(["16", "32"]), default="16", show_default=True,
              help="Bytes per row.")
@click.option("--decompressed", is_flag=True,
              help="Also annotate the inflated records of a compressed batch (positions inside them, +N).")
@click.option("--max-bytes", type=click.IntRange(min=0), default=DEFAULT_MAX_BYTES, show_default=True, metavar="N",
              help="Show at most N bytes of a batch (and of its inflated records); the output says what it left "
                   "out.  0 shows everything.")
@kafka_version_option
@hex_option
@decompressed_limit_option
@no_color_option
def hexdump_annotate(file, batch_index, record_offset, position, byte_range, width, decompressed, max_bytes,
                     kafka_version, hex_input, decompressed_limit, no_color):
    """Show the bytes of a batch with each field's bytes marked: field path, position range, size, raw
    hex and decoded value, from the same declarations the reader parses with.

    Where a field does not read, the dump marks it with the finding (code,
    expected, found) and shows the rest as unparsed raw bytes.  Without
    colour a ruler under each row brackets each field with its legend number.

    Without a choice, the first entry of the file is shown: its first batch,
    or the damaged range it starts with.  Rows are printed as they are made:
    time and memory follow the bytes shown (--max-bytes), not the batch size.

    Exit status: 0 the shown bytes are intact, 1 they hold damage, 2 usage or I/O error.
    """
    from kbatch.render.console import make_console
    from kbatch.render.hexdump import show_entry, show_range
    from kbatch.messages import decoder_for_path

    # an internal topic: keys and values split into their messages' fields
    internal = {"internal": decoder_for_path(file), "kafka_version": kafka_version}

    chosen = [name for name, value in (("--batch", batch_index), ("--offset", record_offset),
                                       ("--position", position), ("--range", byte_range)) if value is not None]
    if len(chosen) > 1:
        raise click.UsageError(f"choose one of {', '.join(chosen)}")
    try:
        stream = open_segment(file, hex_text=hex_input)
    except (OSError, ValueError) as error:
        report_unreadable(file, error)
        return ExitStatus.TROUBLE
    console = make_console(sys.stdout, no_color=no_color)
    ruler = no_color or console.no_color or console.color_system is None
    width = int(width)
    with stream:
        annotation = Annotation(stream, decompressed_limit)
        if byte_range is not None:
            return ExitStatus.FOUND if show_range(console, annotation, byte_range, width, ruler, internal) else ExitStatus.OK
        if not chosen:
            position = 0   # the first entry, damaged or not
        shown, note = annotation.entry(file, batch_index, record_offset, position)
        if note:
            click.echo(note, err=True)
        if shown is None:
            click.echo(f"kbatch: {visible(file)} has no such batch", err=True)
            return ExitStatus.TROUBLE
        index, item, findings = shown
        damaged = show_entry(console, annotation, file, index, item, findings, width=width, ruler=ruler,
                             max_bytes=max_bytes, decompressed=decompressed, chosen=bool(chosen), internal=internal)
        return ExitStatus.FOUND if damaged else ExitStatus.OK
