"""``kbatch salvage``: copy every intact batch of a damaged segment, skipping what is damaged."""

from __future__ import annotations


import click

from kbatch.files.inputs import segment_base_offset
from kbatch.files.outputs import write_output
from kbatch.ops.repair import SalvageReport, salvage as salvage_batches
from kbatch.cli.options import (no_color_option, output_name, refuse_writing_an_input, report_stream,
                                open_segment, report_unreadable, segment_output)
from kbatch.cli.status import ExitStatus


@click.command(epilog="""\b
Examples:
  kbatch salvage 00000000000000000000.log -o salvaged.log
  kbatch salvage corrupt.log -o good.log && kbatch verify-crc good.log
  kbatch salvage corrupt.log -o - | kbatch verify-crc --deep -
""")
@click.argument("path", metavar="IN", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", metavar="OUT", required=True, type=click.Path(dir_okay=False),
              help="Where the intact batches go (written atomically; never IN); - is stdout (the report then "
                   "goes to stderr).")
@no_color_option
def salvage(path, output, no_color):
    """Copy every batch (or message) whose CRC verifies, in order, to OUT, skipping damaged ranges, so the
    good data is usable again; report what was skipped (positions, sizes, offsets lost) and what was kept.

    Offsets are preserved, never renumbered; a batch whose only fault is a
    lying length field is kept with the length corrected; a zero-filled
    tail is dropped.  baseOffset lies outside the CRC, so a batch is also
    dropped and listed for its offsets, the first like any other: one
    with an offset below IN's base offset or a last offset more than
    2^31-1 past it (when IN is named 00000000000000001234.log), one
    whose baseOffset breaks the sequence
    its neighbours agree on (for the first batch: the two batches after
    it), and one at or below an offset kept.  So the copy is a segment
    Kafka loads as it stands and verifies with verify-crc --deep.

    Exit status: 0 nothing had to be skipped, 1 something was skipped, 2 usage or I/O error.
    """
    from kbatch.render.console import make_console
    from kbatch.render.repair import salvage_summary, salvage_table

    refuse_writing_an_input(output, [path])
    segment_output(output)
    console = make_console(report_stream(output), no_color=no_color)
    report = SalvageReport(0)
    try:
        stream = open_segment(path)
    except (OSError, ValueError) as error:
        report_unreadable(path, error)
        return ExitStatus.TROUBLE
    with stream:
        try:
            written = write_output(output, salvage_batches(stream, report, segment_base_offset(path)), like=path)
        except BrokenPipeError:
            raise   # stdout's reader went away: the program ends with 141 (kbatch.__main__)
        except OSError as error:
            click.echo(f"kbatch: cannot write {output_name(output)}: {error.strerror or error}", err=True)
            return ExitStatus.TROUBLE
    if report.skipped:
        console.print(salvage_table(path, report))
    console.print(salvage_summary(report, written, output_name(output)))
    return ExitStatus.FOUND if report.skipped else ExitStatus.OK
