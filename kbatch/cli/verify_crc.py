"""``kbatch verify-crc``: prove every checksum, and with --deep every invariant Kafka relies on."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

import click

from ..summary import FileSummary
from ..verify import VerifyOptions, verify_stream
from .options import decompressed_limit_option, for_each_input, hex_option, no_color_option
from .status import ExitStatus

PROGRESS_ABOVE = 64 * 1024 * 1024   # show a progress bar for inputs larger than this (on a terminal)


@click.command(epilog="""\b
Examples:
  kbatch verify-crc 00000000000000000000.log
  kbatch verify-crc --deep '/var/kafka-logs/*/*.log'
  kbatch verify-crc --format jsonl segment.log | jq -r 'select(.type == "finding") | .code'
  kbatch verify-crc --quiet segment.log && echo intact
""")
@click.argument("paths", nargs=-1, required=True, metavar="FILE...")
@click.option("--deep", is_flag=True,
              help="Also decode every record and check every invariant: lengths, counts, offset order, "
                   "lastOffsetDelta, maxTimestamp, producer fields, control records, reserved bits.")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl"]), default="table",
              show_default=True, help="table for people (a line per finding and a summary), jsonl for programs.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; only the exit status tells.")
@hex_option
@decompressed_limit_option
@no_color_option
def verify_crc(paths, deep, output_format, quiet, hex_input, decompressed_limit, no_color):
    """Check every CRC of Kafka log segments: each v2 batch (CRC-32C), each v0/v1 message (CRC-32),
    inner messages of compressed wrappers included.

    Every mismatch is reported with its position, offset, stored and computed
    CRC.  FILE may be a glob (quoted, for more files than a shell takes) or a
    directory (its *.log files, recursively); - reads stdin.

    Exit status: 0 every check passed, 1 damage found, 2 usage or I/O error.
    """
    from ..render.console import error_console, make_console

    if quiet:
        from ..render.verify import QuietSink
        sink = QuietSink()
    elif output_format == "jsonl":
        from ..render.verify import VerifyJsonlSink
        sink = VerifyJsonlSink(sys.stdout)
    else:
        from ..render.verify import VerifyTableSink
        sink = VerifyTableSink(make_console(sys.stdout, no_color=no_color))
    options = VerifyOptions(deep=deep, decompressed_limit=decompressed_limit)
    status = ExitStatus.OK
    files, missing = expand_paths(paths)
    for pattern in missing:
        click.echo(f"kbatch: no file matches {pattern}", err=True)
        status = ExitStatus.TROUBLE
    stderr = error_console() if not quiet else None
    status = for_each_input(files, hex_input, lambda path, stream: _verify_file(path, stream, options, sink, stderr),
                            status)
    sink.close()
    return status


def _verify_file(path, stream, options, sink, stderr) -> FileSummary:
    size = stream.seek(0, os.SEEK_END)
    stream.seek(0)
    summary = FileSummary(path, size)
    if stderr is not None and stderr.is_terminal and size > PROGRESS_ABOVE:
        from rich.progress import Progress

        with Progress(console=stderr, transient=True) as progress:
            task = progress.add_task(f"verifying {path}", total=size)
            for finding in verify_stream(stream, summary, options,
                                         progress=lambda pos: progress.update(task, completed=pos)):
                sink.finding(path, finding)
    else:
        for finding in verify_stream(stream, summary, options):
            sink.finding(path, finding)
    sink.file_done(summary)
    return summary


def expand_paths(paths) -> tuple[list[str], list[str]]:
    """Files named, globs expanded (sorted), directories searched for *.log; and patterns matching nothing."""
    files, missing = [], []
    for path in paths:
        if path == "-" or os.path.isfile(path):
            files.append(path)
        elif os.path.isdir(path):
            found = sorted(str(p) for p in Path(path).rglob("*.log") if p.is_file())
            files += found
            if not found:
                missing.append(f"{path} (no *.log files in it)")
        elif glob.has_magic(path):
            found = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
            files += found
            if not found:
                missing.append(path)
        else:
            files.append(path)   # reported as unreadable when opened
    return files, missing
