"""``kbatch verify-crc``: prove every checksum, and with --deep every invariant Kafka relies on."""

from __future__ import annotations

import os
import sys

import click

from kbatch.reading.summary import FileSummary
from kbatch.cli.options import (decompressed_limit_option, expand_inputs, for_each_input, hex_option,
                                kafka_version_option, no_color_option)
from kbatch.cli.status import ExitStatus
from kbatch.output.visible import visible

PROGRESS_ABOVE = 64 * 1024 * 1024   # show a progress bar for inputs larger than this (on a terminal)


@click.command(epilog="""\b
Examples:
  kbatch verify-crc 00000000000000000000.log
  kbatch verify-crc --deep /var/kafka-logs
  kbatch verify-crc --format jsonl segment.log | jq -r 'select(.type == "finding") | .code'
  kbatch verify-crc --quiet segment.log && echo intact
  kbatch verify-crc --deep --format junit testdata/*.bin > kbatch-junit.xml
  kbatch verify-crc --deep --format github testdata/*.bin   # in a GitHub Actions step
""")
@click.argument("paths", nargs=-1, required=True, metavar="FILE...")
@click.option("--deep", is_flag=True,
              help="Also decode every record and check every invariant: lengths, counts, offset order, "
                   "lastOffsetDelta, maxTimestamp, producer fields, control records, reserved bits.")
@click.option("--index-only", is_flag=True,
              help="Only hold each partition directory's indexes, snapshots and checkpoints against its logs "
                   "(the quick check after an unclean shutdown): batch headers are read, records are not.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes to read a large file (64 MiB or more) with, a part each, at once. "
                   "[default: the CPUs kbatch may use]")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl", "junit", "github"]), default="table",
              show_default=True,
              help="table for people (a line per finding and a summary), jsonl for programs, junit for CI test "
                   "reports (JUnit XML: a testcase per file, a failure per damaged one), github for GitHub "
                   "Actions (a ::error, ::warning or ::notice annotation per finding).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; only the exit status tells.")
@kafka_version_option
@hex_option
@decompressed_limit_option
@no_color_option
def verify_crc(paths, deep, index_only, jobs, output_format, quiet, kafka_version, hex_input, decompressed_limit, no_color):
    """Check every CRC of Kafka log segments: each v2 batch (CRC-32C), each v0/v1 message (CRC-32),
    inner messages of compressed wrappers included.

    Every mismatch is reported with its position, its batch's offsets, and
    the stored and computed CRC.  FILE may be a glob (quoted, for more files than a shell takes) or a
    directory (its *.log files, recursively); - reads stdin.

    With --deep (or --index-only), a partition directory (or each one under a
    log directory, or one all of whose segments are named) is also
    cross-checked: .index and .timeindex entries
    against the batches, .txnindex against the ABORT markers, producer
    snapshots against the producers' batches, leader-epoch-checkpoint against
    the batches' leader epochs, segment names against their first batches.
    Each file the cross-checks read is also checked on its own, as dump
    does: a partition's .index, .timeindex, .txnindex, .snapshot,
    leader-epoch-checkpoint, partition.metadata and quorum-state, and a log
    directory's recovery-point-offset-checkpoint,
    replication-offset-checkpoint, log-start-offset-checkpoint,
    cleaner-offset-checkpoint and meta.properties.
    When only some segments of a partition are named, none can be, and it
    says so; --index-only with no partition to check is a usage error.

    Exit status: 0 every check passed, 1 damage found, 2 usage or I/O error.
    """
    arguments = (paths, deep, index_only, jobs, output_format, quiet, kafka_version, hex_input, decompressed_limit,
                 no_color)
    if output_format != "github":
        return _verify_crc(*arguments)
    from kbatch.output.inert import verbatim
    from kbatch.render.ci import inert_stderr

    # stdout: the workflow commands kbatch means, each escaped as the runner's rules say; stderr: none
    with inert_stderr(), verbatim(sys.stdout):
        return _verify_crc(*arguments)


def _verify_crc(paths, deep, index_only, jobs, output_format, quiet, kafka_version, hex_input, decompressed_limit,
                no_color):
    # What runs is imported when it runs: a clean file on the fast pass never loads the full reader,
    # and --quiet, jsonl output or a summary off a terminal never loads Rich.
    if quiet:
        from kbatch.ops.verify import QuietSink
        sink = QuietSink()
    elif output_format == "jsonl":
        from kbatch.render.verify import VerifyJsonlSink
        sink = VerifyJsonlSink(sys.stdout)
    elif output_format == "junit":
        from kbatch.render.ci import JunitSink
        sink = JunitSink(sys.stdout)
    elif output_format == "github":
        from kbatch.render.ci import GithubSink
        sink = GithubSink(sys.stdout)
    else:
        from kbatch.render.verify import VerifyTableSink
        sink = VerifyTableSink(sys.stdout, no_color=no_color)
    status = ExitStatus.OK
    show_progress = not quiet and sys.stderr.isatty()

    walked = None   # the cross-checks the walks verifying the logs feed (each log read once)

    def verify_one(path, stream) -> FileSummary:
        return _verify_file(path, stream, sink, deep=deep, decompressed_limit=decompressed_limit, jobs=jobs,
                            stream_is_file=not hex_input and os.path.isfile(path),   # a named pipe is spooled
                            show_progress=show_progress, kafka_version=kafka_version, walked=walked)

    partitions = []
    if (deep or index_only) and not hex_input:
        from kbatch.files.inputs import complete_and_partial_partitions

        partitions, partial = complete_and_partial_partitions(paths)
        if not partitions and index_only:
            raise click.UsageError("--index-only cross-checks whole partitions: " + _why_none(paths, partial))
        if not partitions and partial and not quiet:   # segments of a partition named, and not all of them
            click.echo("kbatch: note: no partition cross-checked: " + _why_none(paths, partial), err=True)
    if index_only:
        _, status = expand_inputs(paths)   # the logs are read by the cross-checks; report paths naming none
    else:
        if partitions:
            from kbatch.partition.verify import WalkedLogs

            walked = WalkedLogs(partitions, decompressed_limit)
        status = for_each_input(paths, hex_input, verify_one, status, sink=sink)
    if partitions:
        from kbatch.partition.verify import verify_partitions

        checked = verify_partitions(paths, sink, index_only=index_only, decompressed_limit=decompressed_limit,
                                    walked=walked)
        if any(summary.damaged for summary in checked) and status is ExitStatus.OK:
            status = ExitStatus.FOUND
    sink.close()
    return status


def _why_none(paths, partial) -> str:
    """Why no partition can be cross-checked: the directories only some of whose segments are named."""
    if not partial:
        return f"{' '.join(map(visible, paths))} names no partition directory and no segment in one"
    shown = "; ".join(f"{visible(directory)}: {named} of its {total} segments" for directory, named, total in partial[:3])
    more = f" (and {len(partial) - 3} more directories)" if len(partial) > 3 else ""
    return (f"the segments named are not all of their directory's ({shown}{more}); name the partition directory "
            "(or all its segments) to cross-check it")


def _verify_file(path, stream, sink, *, deep: bool, decompressed_limit: int, jobs: int | None,
                 stream_is_file: bool, show_progress: bool, kafka_version: str | None = None,
                 walked=None) -> FileSummary:
    from kbatch.walk.parts import usable_cpus
    from kbatch.ops.verify import VerifyOptions, verify_file

    size = stream.seek(0, os.SEEK_END)
    stream.seek(0)
    summary = FileSummary(path, size)
    # A log of a partition being cross-checked hands its batches' headers to the check as it is walked.
    headers = walked.headers_for(path) if walked is not None and stream_is_file else None
    options = VerifyOptions(deep=deep, decompressed_limit=decompressed_limit, jobs=jobs or usable_cpus(),
                            kafka_version=kafka_version)
    if show_progress and size > PROGRESS_ABOVE:
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

        from kbatch.render.console import error_console

        # Progress's own description column reads markup: a name's "[link=…]" would be a link and its ESC
        # reach the terminal.  The name is shown as everywhere else, and read as nothing but text.
        columns = (TextColumn("{task.description}", style="progress.description", markup=False), BarColumn(),
                   TaskProgressColumn(), TimeRemainingColumn())
        with Progress(*columns, console=error_console(), transient=True) as progress:
            task = progress.add_task(f"verifying {visible(path)}", total=size)
            for finding in verify_file(path, stream, summary, options, stream_is_file=stream_is_file,
                                       on_batch=sink.entry, headers=headers,
                                       progress=lambda pos: progress.update(task, completed=pos)):
                sink.finding(path, finding)
    else:
        for finding in verify_file(path, stream, summary, options, stream_is_file=stream_is_file,
                                   on_batch=sink.entry, headers=headers):
            sink.finding(path, finding)
    if headers is not None:
        walked.walked(path, summary.size if summary.size_now is None else summary.size_now)
    sink.file_done(summary)
    return summary
