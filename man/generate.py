"""Write the man pages in man/ from the Click definitions of kbatch's commands.

    python man/generate.py          # rewrite man/*.1
    python man/generate.py --check  # exit 1 when a committed page is stale
    python man/generate.py --svg    # redraw man/hexdump-annotate.svg, the picture README shows

The pages are committed, so `man ./man/kbatch-dump.1` works from a clone; a
test (tests/test_docs.py) fails when a page is missing or stale.
"""

from __future__ import annotations

import inspect
import re
import sys
import textwrap
from pathlib import Path

import click

from kbatch import __version__
from kbatch.cli import cli, commands

MAN_DIR = Path(__file__).resolve().parent

EXIT_STATUS = """.SH EXIT STATUS
.TP
.B 0
Clean: nothing found.
.TP
.B 1
Damage (or, for diff and snapshot check, a difference) found.
.TP
.B 2
Usage error, unreadable input, or an internal error.
.TP
.B 141
The reader of the output went away before the end (\\fB| head\\fR): kbatch stops quietly, with the status
of any Unix filter killed by SIGPIPE (128 + 13); the run vouches for nothing.
"""

# grep's status is grep(1)'s: whether a record was selected, not whether damage was found.
GREP_EXIT_STATUS = """.SH EXIT STATUS
.TP
.B 0
A record was selected (with \\fB-L\\fR: a file was named).
.TP
.B 1
No record was selected (with \\fB-L\\fR: no file was named).
.TP
.B 2
Usage error, unreadable input, or an internal error (with \\fB--strict\\fR, damage found too); with
\\fB-q\\fR as well: a match in one file vouches for nothing about another that cannot be read.
.TP
.B 141
The reader of the output went away before the end (\\fB| head\\fR).
"""


def _roff(text: str) -> str:
    """Escape text for roff: backslashes, and lines starting with a dot or quote."""
    lines = []
    for line in text.replace("\\", "\\e").splitlines():
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def _paragraphs(text: str) -> str:
    """Click help text to roff: \\b blocks stay as typed (.nf), other paragraphs flow."""
    out = []
    for block in inspect.cleandoc(text).split("\n\n") if text else []:
        if block.startswith("\b\n") or block.startswith("\b"):
            body = block.lstrip("\b").strip("\n")
            out.append(".PP\n.nf\n" + _roff(body) + "\n.fi")
        else:
            out.append(".PP\n" + _roff(" ".join(block.split())))
    return "\n".join(out)


def _option(param: click.Parameter, ctx: click.Context) -> str:
    record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
    if record is None:
        return ""
    names, help_text = record
    return f".TP\n\\fB{_roff(names)}\\fR\n{_roff(help_text)}\n"


def page(name: str, command: click.Command, parent: click.Context | None = None) -> str:
    full_name = f"kbatch-{name}" if parent else "kbatch"
    # The group's context settings (e.g. -h for help) reach subcommands through the parent context.
    settings = {} if parent else command.context_settings
    ctx = click.Context(command, info_name=name if parent else "kbatch", parent=parent, **settings)
    usage = " ".join(command.collect_usage_pieces(ctx))
    summary = command.get_short_help_str(limit=200)
    out = [
        f'.TH {full_name.upper()} 1 "" "kbatch {__version__}" "kbatch manual"',
        ".SH NAME",
        f"{full_name} \\- {_roff(summary)}",
        ".SH SYNOPSIS",
        f"\\fB{'kbatch ' + name if parent else 'kbatch'}\\fR {_roff(usage)}",
        ".SH DESCRIPTION",
        _paragraphs(command.help or ""),
    ]
    options = "".join(_option(param, ctx) for param in command.get_params(ctx))
    if options:
        out += [".SH OPTIONS", options.rstrip("\n")]
    if isinstance(command, click.Group):
        out.append(".SH COMMANDS")
        for sub_name, sub in sorted(commands().items()):
            out.append(f".TP\n\\fBkbatch {sub_name}\\fR\n{_roff(sub.get_short_help_str(limit=200))}\n"
                       f"See \\fBkbatch-{sub_name}\\fR(1).")
    if command.epilog:
        # the section heading says "EXAMPLES" already: drop the help text's own "Examples:" line
        epilog = re.sub(r"^(\s*\x08?\n?)\s*Examples:\n", r"\1", inspect.cleandoc(command.epilog))
        out += [".SH EXAMPLES", _paragraphs(textwrap.dedent(epilog))]
    out.append((GREP_EXIT_STATUS if name == "grep" and parent else EXIT_STATUS).rstrip("\n"))
    see_also = ["kbatch(1)"] if parent else [f"kbatch-{sub}(1)" for sub in sorted(commands())]
    out += [".SH SEE ALSO", ", ".join(f"\\fB{ref.split('(')[0]}\\fR({ref.split('(')[1]}" for ref in see_also)]
    return "\n".join(out) + "\n"


def pages() -> dict[str, str]:
    """File name -> text of every page: kbatch.1 and one per subcommand."""
    root = click.Context(cli, info_name="kbatch", **cli.context_settings)
    out = {"kbatch.1": page("kbatch", cli)}
    for name, command in sorted(commands().items()):
        out[f"kbatch-{name}.1"] = page(name, command, root)
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    if "--svg" in argv:
        hexdump_svg()
        return 0
    stale = []
    for file_name, text in pages().items():
        path = MAN_DIR / file_name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(file_name)
        else:
            path.write_text(text)
    if stale:
        print("stale or missing man pages: " + ", ".join(stale) + " (run: python man/generate.py)")
        return 1
    return 0



def hexdump_svg(path: Path = MAN_DIR / "hexdump-annotate.svg") -> None:
    """The colour rendering of one annotated batch that README shows (Rich's SVG export)."""
    import io

    from rich.console import Console

    from kbatch.ops.annotate import entry_spans
    from kbatch.format.findings import Finding
    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.render.hexdump import render

    data = (MAN_DIR.parent / "fixtures" / "v2-txn-commit.log").read_bytes()
    batches = [item for item in SegmentReader(io.BytesIO(data), ReadOptions(records=True))
               if not isinstance(item, Finding)]
    control = batches[3]
    console = Console(record=True, width=118, force_terminal=True, color_system="truecolor", file=io.StringIO())
    render(console, data[control.pos:control.pos + control.size], control.pos,
           entry_spans(control, data[control.pos:control.pos + control.size], 3), ruler=False,
           title="kbatch hexdump-annotate --offset 905 fixtures/v2-txn-commit.log")
    console.save_svg(str(path), title="kbatch hexdump-annotate")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
