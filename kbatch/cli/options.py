"""Options several subcommands share, declared once."""

from __future__ import annotations

import re
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

# Without it a command shows every record the bytes hold; with it, the records a consumer is given.
isolation_option = click.option(
    "--isolation", type=click.Choice(("read_uncommitted", "read_committed")), default=None,
    help="The records a consumer of this isolation is given (with records): none below the partition's log start "
         "offset (its log directory's log-start-offset-checkpoint), no control records; read_committed leaves out "
         "those of aborted transactions and those at or past the last stable offset too, read from every segment "
         "of the partition directory. Without it: every record in the file.")


def parse_kafka_version(ctx, param, value: str | None) -> str | None:
    """``X.Y`` or ``X.Y.Z``: a Kafka release."""
    if value is not None and not re.fullmatch(r"\d+\.\d+(\.\d+)?", value):
        raise click.BadParameter(f"expected a Kafka release such as 4.0 or 4.0.2, got {value!r}")
    return value


kafka_version_option = click.option(
    "--kafka-version", callback=parse_kafka_version, metavar="X.Y[.Z]",
    help="The Kafka release that wrote the internal topic's records: values Kafka changed in place since (the "
         "share groups' records of 4.0) are read with its layout only. [default: the layout the bytes fit, the "
         "newest when more than one does]")


def consumer_views(decompressed_limit: int | None, isolation: str | None):
    """What a consumer of ``isolation`` is given of each partition (kbatch.ops.visibility.ConsumerViews), told on
    stderr; None without --isolation."""
    from kbatch.ops.visibility import ConsumerViews

    return None if isolation is None else ConsumerViews(decompressed_limit, isolation, tell=tell)


def tell(line: str) -> None:
    """A line for the person at the terminal, on stderr (diagnostics never go to stdout)."""
    click.echo(line, err=True)


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
    if re.fullmatch(r"-?[0-9]+", value):   # (ASCII digits: str.isdigit takes any script's, int() too)
        # Kafka's timestamps are Java longs (19 digits at most: no int() of thousands of digits made first)
        if len(value.lstrip("-")) > 19 or not -(1 << 63) <= int(value) < 1 << 63:
            shown = value if len(value) <= 40 else f"a number of {len(value.lstrip('-'))} digits"
            raise click.BadParameter(f"expected epoch milliseconds a Java long holds, got {shown}")
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


def open_segment(path: str, **options):
    """The input of a command that reads one log segment (salvage, repair-length, hexdump-annotate), opened by
    open_input; ValueError when Kafka's name for the file says it is another kind (a producer snapshot, an
    index, a checkpoint), whose bytes would all read as damage (``kbatch dump`` reads every kind)."""
    from kbatch.files.inputs import not_a_segment
    from kbatch.reading.reader import open_input

    why = not_a_segment(path, "*.log")
    if why is not None:
        raise ValueError(why)
    return open_input(path, **options)


def report_unreadable(path: str, error: Exception | str) -> None:
    """The line every command prints for an input it cannot read (``error``: what went wrong, or why)."""
    reason = error if isinstance(error, str) else unreadable_reason(error)
    click.echo(f"kbatch: cannot read {visible(path)}: {visible(reason)}", err=True)


def expand_inputs(paths, pattern="*.log", sink=None) -> tuple[list[str], ExitStatus]:
    """The files the command-line paths name (kbatch.files.inputs.expand_paths: the same rules for every
    command); a path that names none, and a file found that is not a regular one (a FIFO, a device, a
    socket, a broken link: passed over unopened), are reported (the latter to ``sink.unreadable`` too) and
    make the status TROUBLE: the run did not read everything it was pointed at."""
    from kbatch.files.inputs import expand_paths

    files, missing, passed = expand_paths(paths, pattern)
    for pattern in missing:
        click.echo(f"kbatch: no file matches {visible(pattern)}", err=True)
    for path, why in passed:
        reason = f"{why}: passed over unopened"
        report_unreadable(path, reason)
        if sink is not None:
            sink.unreadable(path, reason)
    return files, ExitStatus.TROUBLE if missing or passed else ExitStatus.OK


def replay_status(replayed, status: ExitStatus) -> ExitStatus:
    """The exit status after a replay of partitions' logs (kbatch.ops.logs.replay): each file it could not
    open reported (TROUBLE), damage met FOUND."""
    for path, error in replayed.unreadable:
        report_unreadable(path, error)
        status = ExitStatus.TROUBLE
    return ExitStatus.FOUND if replayed.damaged and status is ExitStatus.OK else status


def for_each_input(paths, hex_input: bool, handle, status: ExitStatus = ExitStatus.OK,
                   pattern="*.log", sink=None) -> ExitStatus:
    """Run ``handle(path, stream)`` (which returns a FileSummary) on every file the paths name
    (:func:`expand_inputs`); the exit status they add up to.

    An unreadable input is reported (on stderr, and to ``sink.unreadable(path, reason)`` so the output
    has it too) and makes the status TROUBLE; the others are still handled.
    """
    from kbatch.reading.reader import open_input

    files, expanded = expand_inputs(paths, pattern, sink)
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
    """``-o -`` (or ``-o /dev/stdout``) writes the segment to stdout (the report then goes to stderr);
    refused on a terminal, where binary bytes serve nobody."""
    from kbatch.files.outputs import is_stdout

    if is_stdout(output) and sys.stdout.isatty():
        raise click.UsageError("-o - writes the segment's bytes to stdout: redirect it to a file or a pipe")


def report_stream(output: str | None):
    """Where a command that writes a segment prints its report: stderr when the segment goes to stdout."""
    from kbatch.files.outputs import is_stdout

    return sys.stderr if is_stdout(output) else sys.stdout


def output_name(output: str) -> str:
    """How a report names where the output went, escaped (kbatch.output.visible): a name made from a hostile
    input's (``-o "$f.salvaged"``) reaches a terminal."""
    from kbatch.files.outputs import is_stdout

    return "stdout" if is_stdout(output) else visible(output)


def refuse_writing_an_input(output: str | None, inputs, hint: str = "") -> None:
    """Every writer's first check: ``output`` is none of ``inputs`` (through links too), or the run is
    refused before anything is read (kbatch never modifies an input: :func:`kbatch.files.outputs.input_written`)."""
    why = writing_an_input(output, inputs, hint)
    if why is not None:
        raise click.UsageError(why)


def writing_an_input(output: str | None, inputs, hint: str = "") -> str | None:
    """Why ``output`` is not written, in a line naming it (escaped): it is one of ``inputs``, through links and
    hard links too (:func:`kbatch.files.outputs.input_written`); None when it is none.  For a writer whose
    outputs are known only once its inputs are read (``pcap --extract``); the others refuse_writing_an_input."""
    from kbatch.files.outputs import input_written

    if output is None:
        return None
    source = input_written(output, inputs)
    if source is None:
        return None
    where = "stdout" if output == "-" else output
    same = "an input" if where == source else f"the input {source} (the same file)"
    return f"{visible(where)} is {visible(same)}: kbatch never writes over its input" + hint
