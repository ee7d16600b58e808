"""``kbatch snapshot``: reviewable golden files of Kafka bytes, for a project in any language."""

from __future__ import annotations

import itertools
import os

import click

from kbatch.cli.options import refuse_writing_an_input, report_unreadable
from kbatch.cli.status import ExitStatus
from kbatch.output.visible import shell_word, visible


@click.command(epilog="""\b
Examples:
  kbatch snapshot write testdata/produce-v9.bin testdata/fetch-v12.bin
  kbatch snapshot check testdata/*.bin
  git diff testdata/produce-v9.bin.kbatch-snapshot      # review what an encoder change did
""")
@click.argument("action", type=click.Choice(["write", "check"]), metavar="write|check")
@click.argument("paths", nargs=-1, required=True, metavar="FILE...", type=click.Path(dir_okay=False))
@click.option("--hex", "hex_input", is_flag=True,
              help="Each FILE is hex text (as a test keeps a capture), not the bytes themselves.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; only the exit status tells.")
def snapshot(action, paths, hex_input, quiet):
    """Keep a golden text of Kafka bytes beside each FILE (FILE.kbatch-snapshot), and check FILE against it.

    The text holds every batch and record with its fields (as dump
    --records names them), the findings in verify-crc's words, then the
    exact bytes in hex: reviewable in a pull request, and enough to rebuild
    FILE.  It does not depend on the terminal.  FILE is a segment, a record
    set, one batch, or the records of a produce or fetch request, as a test
    keeps them.

    write writes (or rewrites) FILE.kbatch-snapshot, atomically.  check
    compares FILE's bytes with the snapshot's; where they differ it says
    which field of which batch and record (by offset) changed, at which
    byte, and which fields changed only as a consequence (the CRC, the
    lengths), as kbatch diff does.

    Exit status: write 0 when every snapshot was written; check 0 when
    every FILE matches its snapshot, 1 when one differs; 2 usage or I/O
    error (a missing or unreadable snapshot too).
    """
    if "-" in paths:
        raise click.UsageError("a snapshot lies beside its file: name the file (- has no place to put one)")
    if action == "write":
        from kbatch.render.snapshot import EXTENSION

        for path in paths:   # a snapshot's name may link back to its file, or to another one named
            refuse_writing_an_input(path + EXTENSION, paths)
    status = ExitStatus.OK
    for path in paths:
        status = max(status, (_write if action == "write" else _check)(path, hex_input, quiet))
    return status


def _open(path: str, hex_input: bool):
    """The input as a seekable stream, or None (said on stderr) when it cannot be read."""
    from kbatch.reading.reader import open_input

    try:
        return open_input(path, hex_text=hex_input)
    except (OSError, ValueError) as error:
        report_unreadable(path, error)
        return None


def _write(path: str, hex_input: bool, quiet: bool) -> ExitStatus:
    from kbatch.files.outputs import write_output
    from kbatch.render.snapshot import EXTENSION, snapshot_text

    stream = _open(path, hex_input)
    if stream is None:
        return ExitStatus.TROUBLE
    with stream:
        text = snapshot_text(stream)   # written as it is made: the input is never all in memory
        try:
            head = next(text)   # (the walk over the input: its read errors are the input's)
        except OSError as error:
            report_unreadable(path, error)
            return ExitStatus.TROUBLE
        try:
            write_output(path + EXTENSION, (piece.encode("utf-8") for piece in itertools.chain([head], text)),
                         like=path)
        except OSError as error:
            click.echo(f"kbatch: cannot write {visible(path + EXTENSION)}: {error.strerror or error}", err=True)
            return ExitStatus.TROUBLE
    if not quiet:
        click.echo(f"wrote {visible(path + EXTENSION)}: {head.splitlines()[1]}")
    return ExitStatus.OK


def _check(path: str, hex_input: bool, quiet: bool) -> ExitStatus:
    from kbatch.files.inputs import passed_over
    from kbatch.render.snapshot import EXTENSION, compare_snapshot, explain

    golden = path + EXTENSION
    if os.path.lexists(golden) and (why := passed_over(golden)) is not None:   # a FIFO there would never open
        report_unreadable(golden, f"{why}: passed over unopened")
        return ExitStatus.TROUBLE
    try:
        kept_text = open(golden, encoding="utf-8")   # (text mode: a snapshot reads the same with any newline)
    except FileNotFoundError:
        click.echo(f"kbatch: {visible(path)} has no snapshot ({visible(golden)}): kbatch snapshot write {shell_word(path)} makes one",
                   err=True)
        return ExitStatus.TROUBLE
    except OSError as error:
        report_unreadable(golden, error)
        return ExitStatus.TROUBLE
    with kept_text:
        data = _open(path, hex_input)
        if data is None:
            return ExitStatus.TROUBLE
        with data:
            try:
                stale, differs = compare_snapshot(kept_text, data)
            except UnicodeDecodeError as error:
                report_unreadable(golden, error)
                return ExitStatus.TROUBLE
            except ValueError as error:
                click.echo(f"kbatch: {visible(golden)}: {visible(str(error))}", err=True)
                return ExitStatus.TROUBLE
    if differs is None:
        if not quiet:
            click.echo(f"{visible(path)}: matches {visible(golden)}" +
                       (" (its text is an older kbatch's: kbatch snapshot write refreshes it)" if stale else ""))
        return ExitStatus.OK
    if not quiet:
        click.echo(f"{visible(path)}: differs from {visible(golden)}")
        for line in explain(*differs, "the snapshot", path):
            click.echo(f"  {visible(line)}")
    return ExitStatus.FOUND

