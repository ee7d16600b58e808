"""Options several subcommands share, declared once."""

from __future__ import annotations

import sys

import click

from kbatch.format.codecs import DEFAULT_DECOMPRESSED_LIMIT
from kbatch.output.values import DECODE_MODES
from kbatch.cli.status import ExitStatus
from kbatch.output.visible import visible

# Files, directories (their *.log files, recursively) and globs: see expand_inputs.
files_argument = click.argument("files", nargs=-1, required=True, metavar="FILE...",
                                type=click.Path(allow_dash=True))

hex_option = click.option("--hex", "hex_input", is_flag=True,
                          help="Inputs are hex text (as pasted from a capture or a test); - reads stdin.")

decompressed_limit_option = click.option(
    "--max-decompressed-bytes", "decompressed_limit", type=click.IntRange(min=1),
    default=DEFAULT_DECOMPRESSED_LIMIT, show_default=True, metavar="N",
    help="Report a batch whose records inflate past N bytes instead of inflating it.")

decode_option = click.option("--decode", type=click.Choice(DECODE_MODES), default="auto", show_default=True,
                             help="How keys, values and header values are shown "
                                  "(auto: text when printable UTF-8, else hex).")

no_color_option = click.option("--no-color", is_flag=True, help="No colour even on a terminal (NO_COLOR too).")

isolation_option = click.option(
    "--isolation", type=click.Choice(("read_uncommitted", "read_committed")), default="read_uncommitted",
    show_default=True, help="The records a consumer of this isolation is given (with records): read_committed leaves "
                            "out those of aborted transactions and those at or past the last stable offset, read "
                            "from every segment of the partition directory.")


class CommittedViews:
    """The read_committed view of each partition a command reads (kbatch.ops.visibility), made once a partition;
    what making it met is told on stderr: damage, .txnindex files that disagree with the log, and each
    transaction whose outcome is unknown."""

    def __init__(self, decompressed_limit: int | None = None):
        self.decompressed_limit = decompressed_limit
        self.views: dict[str, object] = {}
        self.damaged = False

    def of(self, path: str):
        from kbatch.output.values import finding_text
        from kbatch.ops.visibility import committed_view, partition_of

        key = partition_of(path)
        if key not in self.views:
            view, findings = committed_view(path, self.decompressed_limit)
            for where, finding in findings:
                click.echo(f"kbatch: {visible(where)}: {finding_text(finding)}", err=True)
                self.damaged |= finding.is_damage
            for txn in view.transactions.transactions:
                if txn.outcome == "UNKNOWN" and not txn.empty:
                    click.echo(f"kbatch: {visible(txn.path)}: producer {txn.producer_id}'s transaction from offset "
                               f"{txn.first_offset} has an unknown outcome, and so whether read_committed gives its "
                               f"records: {txn.marker_doubt}", err=True)
            self.views[key] = view
        return self.views[key]


def parse_offset_range(ctx, param, value: str | None) -> tuple[int | None, int | None] | None:
    """``A:B``, ``A:`` or ``:B`` (inclusive record offsets)."""
    if value is None:
        return None
    low, sep, high = value.partition(":")
    try:
        if not sep:
            raise ValueError
        bounds = (int(low) if low else None, int(high) if high else None)
    except ValueError:
        raise click.BadParameter(f"expected A:B, A: or :B with integer offsets, got {value!r}") from None
    if any(bound is not None and bound < 0 for bound in bounds):
        # not Python's "from the end": a record offset is never negative, so such a range is a mistake
        raise click.BadParameter(f"record offsets are never negative, got {value!r} "
                                 "(A: is 'from offset A on'; there is no 'the last N')")
    if bounds[0] is not None and bounds[1] is not None and bounds[0] > bounds[1]:
        raise click.BadParameter(f"the range {value!r} is empty (A > B)")
    return bounds


def parse_time(ctx, param, value: str | None) -> int | None:
    """A timestamp as Kafka keeps them (epoch ms): an integer, or ISO 8601 (UTC unless it says otherwise)."""
    if value is None:
        return None
    if value.lstrip("-").isdigit():
        return int(value)
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"expected epoch milliseconds or an ISO 8601 time, got {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return round(moment.timestamp() * 1000)


def unreadable_reason(error: Exception) -> str:
    return str(getattr(error, "strerror", None) or error)


def report_unreadable(path: str, error: Exception) -> None:
    click.echo(f"kbatch: cannot read {visible(path)}: {visible(unreadable_reason(error))}", err=True)


def expand_inputs(paths, pattern="*.log") -> tuple[list[str], ExitStatus]:
    """The files the command-line paths name (kbatch.files.inputs.expand_paths: the same rules for every
    command); a path that names none is reported and makes the status TROUBLE."""
    from kbatch.files.inputs import expand_paths

    files, missing = expand_paths(paths, pattern)
    for pattern in missing:
        click.echo(f"kbatch: no file matches {visible(pattern)}", err=True)
    return files, ExitStatus.TROUBLE if missing else ExitStatus.OK


def for_each_input(paths, hex_input: bool, handle, status: ExitStatus = ExitStatus.OK,
                   pattern="*.log", sink=None) -> ExitStatus:
    """Run ``handle(path, stream)`` (which returns a FileSummary) on every file the paths name
    (:func:`expand_inputs`); the exit status they add up to.

    An unreadable input is reported (on stderr, and to ``sink.unreadable(path, reason)`` so the output
    has it too) and makes the status TROUBLE; the others are still handled.
    """
    from kbatch.reading.reader import open_input

    files, expanded = expand_inputs(paths, pattern)
    status = max(status, expanded)   # TROUBLE outranks FOUND outranks OK
    for path in files:
        try:
            stream = open_input(path, hex_text=hex_input)
        except (OSError, ValueError) as error:
            report_unreadable(path, error)
            if sink is not None:
                sink.unreadable(path, unreadable_reason(error))
            status = ExitStatus.TROUBLE
            continue
        with stream:
            summary = handle(path, stream)
        if getattr(summary, "unreadable", False):   # read, but not as what was asked (a dump's --kind)
            status = ExitStatus.TROUBLE
        elif summary.damaged and status is ExitStatus.OK:
            status = ExitStatus.FOUND
    return status


def segment_output(output: str | None) -> None:
    """``-o -`` writes the segment to stdout (the report then goes to stderr); refused on a terminal, where
    binary bytes serve nobody."""
    if output == "-" and sys.stdout.isatty():
        raise click.UsageError("-o - writes the segment's bytes to stdout: redirect it to a file or a pipe")


def report_stream(output: str | None):
    """Where a command that writes a segment prints its report: stderr when the segment goes to stdout."""
    return sys.stderr if output == "-" else sys.stdout
