"""The ``kbatch`` command line: a Click group, one module per subcommand.

Exit status, like diff(1): 0 clean, 1 damage found, 2 usage or I/O trouble; 141 (128 + SIGPIPE, like any
Unix filter) when the reader of the output went away before the end; 130 (128 + SIGINT) on Ctrl-C.
No traceback reaches a user: an unexpected error is reported in one line
(``KBATCH_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from kbatch import __version__
from kbatch.cli.status import ExitStatus

# Subcommand -> (module defining it, the line `kbatch --help` lists it by).  Modules load when their command
# runs, so `kbatch verify-crc` does not pay for importing Rich tables or codecs it never uses, and the list
# needs none of them (loading all ten took half of `kbatch --help`).
SUBCOMMANDS = {
    "diff": ("kbatch.cli.diff", "Where two segments (or batches) differ, field by field"),
    "dump": ("kbatch.cli.dump", "Every batch (and record) of segments, and their damage"),
    "encode-from-json": ("kbatch.cli.encode_from_json", "Write Kafka log bytes of any magic from JSON"),
    "grep": ("kbatch.cli.grep", "The records that match a pattern, as grep shows lines"),
    "hexdump-annotate": ("kbatch.cli.hexdump_annotate", "Show a batch's bytes, each marked with its field"),
    "map": ("kbatch.cli.map", "Draw segments, partitions and a log directory as one page"),
    "offsets": ("kbatch.cli.offsets", "Where each consumer group stood, commit by commit"),
    "pcap": ("kbatch.cli.pcap", "Record batches out of packet captures, each CRC and rule checked"),
    "producers": ("kbatch.cli.producers", "Each producer, epoch by epoch, held to a leader's rules"),
    "repair-length": ("kbatch.cli.repair_length", "Find length fields that lie; write a mended copy"),
    "replicas": ("kbatch.cli.replicas", "One partition across brokers' copies: divergence, truncation, loss"),
    "retention": ("kbatch.cli.retention", "What retention and the cleaner would do with each segment"),
    "salvage": ("kbatch.cli.salvage", "Copy every batch whose CRC verifies to a new file"),
    "scan": ("kbatch.cli.scan", "Sweep many segments on Spark into Parquet tables"),
    "snapshot": ("kbatch.cli.snapshot", "Keep a reviewable golden text of Kafka bytes; check against it"),
    "stats": ("kbatch.cli.stats", "Where a segment's bytes go; what other layouts cost"),
    "txn": ("kbatch.cli.txn", "Every transaction of every producer, from the log"),
    "verify-crc": ("kbatch.cli.verify_crc", "Check every CRC (with --deep, every record and index too)"),
}


class OutputClosed(Exception):
    """The reader of our output went away (``| head``): not something Click may handle.

    Click turns an EPIPE into exit status 1, which a caller reads as "damage found"; so a closed pipe is
    carried past Click as this exception instead, to end quietly with status 141.
    """


class LazyGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as error:
            raise OutputClosed from error

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in SUBCOMMANDS:
            return None
        module, summary = SUBCOMMANDS[name]
        command = getattr(importlib.import_module(module), name.replace("-", "_"))
        command.short_help = summary   # its line in the list, and its man page's NAME
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of commands, without loading them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUBCOMMANDS[name][1]) for name in self.list_commands(ctx)])


def _show_version(ctx: click.Context, _param, wanted: bool) -> None:
    """``kbatch --version``: the version, and which build of the kernels runs (kbatch.kernels._load)."""
    if not wanted or ctx.resilient_parsing:
        return
    from kbatch.kernels._load import describe

    click.echo(f"kbatch, version {__version__}\nkernels: {describe()}")
    ctx.exit()


def commands() -> dict[str, click.Command]:
    """Every subcommand by name (loads them all: for docs and tests, not for a run)."""
    ctx = click.Context(cli)
    found = {}
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None, name   # list_commands lists SUBCOMMANDS, each of which get_command loads
        found[name] = command
    return found


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog="""\b
Examples:
  kbatch dump 00000000000000000000.log
  kbatch dump --records --format jsonl segment.log | jq .
  kbatch verify-crc --deep /var/kafka-logs
""")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Show the version, and whether the kernels run compiled or as pure Python (and why); exit.")
def cli() -> None:
    """Forensic inspector for Apache Kafka log segments and record batches.

    Reads v0/v1 message sets and v2 record batches, mixed in one file, with
    every codec; reports every damaged byte range with its file position.
    """


def main(argv: list[str] | None = None) -> None:
    """kbatch on ``argv`` (sys.argv's arguments when None), in the caller's process: ends in SystemExit with
    the exit status.  The program itself is kbatch.__main__.run."""
    try:
        status = cli.main(args=argv, prog_name="kbatch", standalone_mode=False)
        sys.stdout.flush()   # what is still buffered may meet a closed pipe too
    except click.exceptions.Exit as done:
        status = done.exit_code
    except click.ClickException as error:
        # A usage error may quote the command line, which a shell's glob fills with file names ("Got unexpected
        # extra arguments (...)"): its message is shown as any name is.  (Click's own quoting, repr's, is text.)
        if not error.message.isprintable():
            from kbatch.output.visible import visible

            setattr(error, "message", visible(error.message))  # noqa: B010 - Final to type checkers; what show() words
        error.show()
        status = ExitStatus.TROUBLE
    except click.Abort as error:
        if isinstance(error.__cause__, KeyboardInterrupt):   # Click's word for Ctrl-C (it printed the newline)
            status = ExitStatus.INTERRUPTED
        else:
            click.echo("Aborted.", err=True)
            status = ExitStatus.TROUBLE
    except KeyboardInterrupt:   # Ctrl-C outside Click's call (the last flush)
        status = ExitStatus.INTERRUPTED
    except (OutputClosed, BrokenPipeError):
        # The reader of our output went away (| head): end quietly, as a filter killed by SIGPIPE does, with
        # its status (not 0: the run was cut short, so it vouches for nothing).  Whatever is still buffered
        # goes to /dev/null, so the interpreter's last flush does not fail (exit 120) either.
        from kbatch.files.outputs import discard_stdout

        discard_stdout()
        status = ExitStatus.OUTPUT_CLOSED
    except OSError as error:
        # An I/O error no command handled: a full disk or a file too large under stdout (ENOSPC, EFBIG), a
        # file that could not be read or written.  The user's to fix, not a bug: one line, the file and the
        # system's words, and status 2.  What is still buffered for stdout is dropped, so that the last flush
        # does not fail a second time.
        from kbatch.files.outputs import STDOUT, discard_stdout

        if os.environ.get("KBATCH_DEBUG"):
            raise
        from kbatch.output.visible import visible

        if error.filename == STDOUT:
            discard_stdout()
            where = f"cannot write {STDOUT}: "
        else:
            where = f"{visible(os.fsdecode(error.filename))}: " if error.filename else ""
        click.echo(f"kbatch: {where}{error.strerror or error}", err=True)
        status = ExitStatus.TROUBLE
    except Exception as error:  # noqa: BLE001 - the last line of defence: no traceback for users
        if os.environ.get("KBATCH_DEBUG"):
            raise
        from kbatch.output.visible import visible

        # (what the error says may quote the input: a name, a record's bytes)
        click.echo(f"kbatch: internal error: {type(error).__name__}: {visible(str(error))}\n"
                   "This is a bug in kbatch; please report it with the input. "
                   "KBATCH_DEBUG=1 shows the traceback.", err=True)
        status = ExitStatus.TROUBLE
    sys.exit(int(status or 0))
