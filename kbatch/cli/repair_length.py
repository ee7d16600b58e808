"""``kbatch repair-length``: mend lying length fields, proven by CRC, without touching the original."""

from __future__ import annotations

import os

import click

from kbatch.files.outputs import is_stdout, keep_copy, write_output
from kbatch.output.values import counted
from kbatch.ops.repair import InputCut, plan_repairs, write_repaired
from kbatch.cli.options import (no_color_option, output_name, refuse_writing_an_input, report_stream,
                                open_segment, report_unreadable, segment_output)
from kbatch.cli.status import ExitStatus


@click.command(epilog="""\b
Examples:
  kbatch repair-length 00000000000000000000.log                        # the plan only
  kbatch repair-length segment.log -o repaired.log --apply
  kbatch repair-length segment.log -o repaired.log --apply --truncate-tail
  kbatch repair-length segment.log --in-place --backup .orig --apply
""")
@click.argument("path", metavar="IN", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", metavar="OUT", type=click.Path(dir_okay=False),
              help="Where the repaired copy goes; - is stdout (the plan then goes to stderr, and the copy is not "
                   "read back: pipe it to kbatch verify-crc -).")
@click.option("--apply", is_flag=True, help="Write the plan (without it, only show it).")
@click.option("--truncate-tail", is_flag=True,
              help="Also cut a partial batch, a zero-filled tail or trailing garbage at the end, as Kafka's log "
                   "recovery would.")
@click.option("--in-place", is_flag=True, help="Replace IN itself (atomically); needs --backup.")
@click.option("--backup", metavar="SUFFIX",
              help="With --in-place: first copy IN to IN+SUFFIX (IN+SUFFIX.1, .2, ... if that exists: a backup "
                   "is never overwritten).")
@no_color_option
def repair_length(path, output, apply, truncate_tail, in_place, backup, no_color):
    """Find every batch (v2) or message (v0/v1) whose length field lies and the true length, proven by the
    stored CRC verifying over exactly that many bytes; show the plan, and with --apply write a copy with only
    those fields changed.

    A length no CRC proves is reported and left alone; a batch whose CRC
    fails at its own length is damaged inside, which a length repair cannot
    mend (kbatch salvage skips it).  After writing, the copy is verified.

    With nothing to fix, --apply says so and writes nothing.

    Exit status: 0 nothing to repair or the repaired copy verifies, 1 damage
    remains, 2 usage or I/O error.
    """
    from kbatch.render.console import make_console
    from kbatch.render.repair import plan_table

    if in_place and not backup:
        raise click.UsageError("--in-place needs --backup SUFFIX: the original is kept beside it")
    if backup and not in_place:
        raise click.UsageError("--backup goes with --in-place")
    if in_place and output:
        raise click.UsageError("choose -o OUT or --in-place, not both")
    if apply and not (output or in_place):
        raise click.UsageError("--apply needs -o OUT (or --in-place --backup SUFFIX)")
    refuse_writing_an_input(output, [path], " (--in-place --backup SUFFIX repairs it, keeping the original)")
    if in_place and not os.path.isfile(path):
        raise click.UsageError("--in-place needs a regular file (a pipe or device cannot be replaced)")
    if apply:
        segment_output(output)
    console = make_console(report_stream(output), no_color=no_color)
    try:
        stream = open_segment(path)
    except (OSError, ValueError) as error:
        report_unreadable(path, error)
        return ExitStatus.TROUBLE
    with stream:
        plan = plan_repairs(stream, truncate_tail=truncate_tail)
        console.print(plan_table(path, plan))
        if not apply:
            if plan.changes:
                console.print("dry run: nothing written (--apply writes the plan)")
            return ExitStatus.FOUND if _damaged(plan) else ExitStatus.OK
        target = path if in_place else output
        if any(action.kind == "file-cut" for action in plan.actions):
            console.print(f"nothing written: {path} was cut while it was read")
            return ExitStatus.FOUND
        if not plan.changes:   # a copy would only repeat the input
            console.print(f"nothing to fix: nothing written, {path} left as it is"
                          + (", no backup made" if in_place else "")
                          + ("; damage remains that no length repair mends" if _damaged(plan) else ""))
            return ExitStatus.FOUND if _damaged(plan) else ExitStatus.OK
        try:
            if in_place:
                kept = keep_copy(path, backup)
                console.print(f"original kept as {kept}")
            written = write_output(target, write_repaired(stream, plan), like=path)
        except InputCut as error:   # nothing written (write_atomically removes its temporary file)
            console.print(f"nothing written: {path} was cut while it was copied: {error}")
            return ExitStatus.FOUND
        except BrokenPipeError:
            raise   # stdout's reader went away: the program ends with 141 (kbatch.__main__)
        except OSError as error:
            click.echo(f"kbatch: cannot write {output_name(target)}: {error.strerror or error}", err=True)
            return ExitStatus.TROUBLE
    console.print(f"wrote {output_name(target)}: {counted(written, 'byte')}, "
                  f"{counted(len(plan.changes), 'change')}")
    if is_stdout(target) or not os.path.isfile(target):
        # nothing to read back (stdout, a FIFO, a device): what the plan leaves is what the copy holds
        return ExitStatus.FOUND if _damaged_after(plan) else ExitStatus.OK
    return _verify_written(target, console)


def _damaged(plan) -> bool:
    return any(action.damage for action in plan.actions)


def _damaged_after(plan) -> bool:
    """Whether damage the plan does not mend stays in the copy."""
    return any(action.damage and not action.applied for action in plan.actions)


def _verify_written(path: str, console) -> int:
    """Re-read what was written and say whether every entry now verifies."""
    from kbatch.ops.repair import verify_written
    from kbatch.render.repair import print_verified

    summary, findings = verify_written(path)
    print_verified(console, path, summary, findings)
    return ExitStatus.FOUND if summary.damaged else ExitStatus.OK
