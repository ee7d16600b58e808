"""verify-crc's findings for CI outside Python: JUnit XML (``--format junit``) and GitHub Actions workflow
commands (``--format github``).

JUnit XML as CI tools read it (Jenkins' junit-10.xsd, which GitLab, GitHub's test reporters and Surefire's
readers follow): one ``testsuite`` for the run, one ``testcase`` per file, a ``failure`` for a damaged file
holding its findings, an ``error`` for a file that could not be read, the warnings and notes of a clean
file in its ``system-out``; each file's name is written as the terminal shows it (kbatch.output.visible).
Nothing in it depends on the clock or the machine: the same bytes give the
same report.

GitHub Actions: ``::error file=F,title=CODE::MESSAGE`` for each finding that is damage, ``::warning`` for a
warning, ``::notice`` for a note, and a notice with the run's totals; data and properties escaped as the
workflow-command rules say (%, CR and LF in both; ``:`` and ``,`` in properties too), after the names and
reasons are made visible (kbatch.output.visible: GitHub's log shows colours and links).  The runner reads
workflow commands on stderr too: there, in this format, no line kbatch writes can be read as one
(:class:`InertLines`).
"""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import TextIO, cast

from kbatch.format.findings import CODES, Finding, Severity
from kbatch.reading.summary import FileSummary
from kbatch.output.values import counted, finding_text
from kbatch.output.inert import inert
from kbatch.output.visible import visible
from kbatch.render.verify import BatchOffsets, finding_marker

SUITE = "kbatch verify-crc"


def _total(summaries: list[FileSummary], unreadable: int) -> str:
    damaged = sum(summary.damaged for summary in summaries)
    parts = [f"{damaged} damaged"] * bool(damaged) + [f"{unreadable} unreadable"] * bool(unreadable)
    return (f"{counted(len(summaries) + unreadable, 'file')}, {counted(sum(s.batches for s in summaries), 'batch')}, "
            f"{counted(sum(s.records for s in summaries), 'record')}: {', '.join(parts) or 'ok'}")


class JunitSink(BatchOffsets):
    """The run as one JUnit XML document, written when it ends (its totals head it)."""

    def __init__(self, out: TextIO):
        self.out = out
        self.cases: list[tuple[str, FileSummary | None, list[str], str | None]] = []   # path, summary, lines, error
        self.pending: list[tuple[str, str]] = []   # the findings since the last file was done: (path, line)

    def finding(self, path: str, finding: Finding) -> None:
        self.pending.append((path, finding_marker(finding) + finding_text(finding, self.batch_of(finding))))

    def file_done(self, summary: FileSummary) -> None:
        """A file's testcase, with the findings told since the one before: a partition's cross-checks report
        each finding with the file it is in (an index, a segment), the case is the partition's."""
        self.forget()
        lines = [line if path == summary.path else f"{visible(path)}: {line}" for path, line in self.pending]
        self.cases.append((summary.path, summary, lines, None))
        self.pending = []

    def unreadable(self, path: str, reason: str) -> None:
        self.cases.append((path, None, [], reason))

    def close(self) -> None:
        from xml.sax.saxutils import escape, quoteattr

        def text(value: str) -> str:
            return escape(_xml_chars(value))

        def attr(value) -> str:
            return quoteattr(_xml_chars(str(value)))

        summaries = [summary for _, summary, _, _ in self.cases if summary is not None]
        failures = sum(summary.damaged for summary in summaries)
        errors = len(self.cases) - len(summaries)
        counts = f"tests={attr(len(self.cases))} failures={attr(failures)} errors={attr(errors)}"
        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               f"<testsuites name={attr(SUITE)} {counts}>",
               f'  <testsuite name={attr(SUITE)} {counts} skipped="0">']
        for path, summary, lines, reason in self.cases:
            # a name as the terminal shows it (a CI page shows it too): exact, and nothing a page acts on
            case = f"    <testcase name={attr(visible(path))} classname={attr(SUITE)}"
            if summary is None:   # an unreadable file: its reason said instead
                out += [case + ">",
                        f"      <error type=\"unreadable\" message={attr('cannot read: ' + visible(cast(str, reason)))}/>",
                        "    </testcase>"]
                continue
            said = (f"{counted(summary.batches, 'batch')}, {counted(summary.records, 'record')}, "
                    f"{counted(summary.size, 'byte')}")
            if summary.damaged:
                codes = ", ".join(f"{count} {code}" for code, count in sorted(summary.findings.items()))
                out += [case + ">",
                        f"      <failure type={attr(_failure_type(summary))} message={attr(f'damaged: {codes}')}>"
                        + text("\n".join([said] + lines)) + "</failure>",
                        "    </testcase>"]
            elif lines:
                out += [case + ">", "      <system-out>" + text("\n".join([said] + lines)) + "</system-out>",
                        "    </testcase>"]
            else:
                out.append(case + "/>")
        out += ["  </testsuite>", "</testsuites>"]
        self.out.write("\n".join(out) + "\n")


def _failure_type(summary: FileSummary) -> str:
    """The failure's type: the code of the damage found most often (kbatch's finding codes)."""
    damage = [(count, code) for code, count in summary.findings.items() if CODES[code][0] is Severity.ERROR]
    return max(damage)[1] if damage else "damaged"


def _xml_chars(value: str) -> str:
    """Text XML 1.0 can hold: a control character other than tab, LF and CR, a lone surrogate (a path's
    bytes that are not UTF-8) or U+FFFE/U+FFFF is written as U+FFFD."""
    return _NOT_XML.sub("\ufffd", value)


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# -- GitHub Actions ---------------------------------------------------------------------------------------------

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(value: str) -> str:
    """A workflow command's message: %, CR and LF escaped (actions/toolkit's escapeData)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A workflow command's property value: as data, and : and , too (actions/toolkit's escapeProperty)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, message: str, **properties: str) -> str:
    shown = ",".join(f"{name}={escape_property(value)}" for name, value in properties.items())
    return f"::{command}{' ' + shown if shown else ''}::{escape_data(message)}"


class GithubSink(BatchOffsets):
    """A workflow command per finding as it is found (GitHub shows each as an annotation on its file), and
    a notice with the run's totals."""

    def __init__(self, out: TextIO):
        self.out = out
        self.summaries: list[FileSummary] = []
        self.unreadable_count = 0

    def finding(self, path: str, finding: Finding) -> None:
        command = COMMANDS[finding.severity]
        self.out.write(workflow_command(command, finding_text(finding, self.batch_of(finding)), file=visible(path),
                                        title=f"kbatch {finding.code}") + "\n")

    def file_done(self, summary: FileSummary) -> None:
        self.forget()
        self.summaries.append(summary)

    def unreadable(self, path: str, reason: str) -> None:
        self.unreadable_count += 1
        self.out.write(workflow_command("error", f"cannot read: {visible(reason)}", file=visible(path),
                                        title="kbatch unreadable") + "\n")

    def close(self) -> None:
        if self.summaries or self.unreadable_count:
            self.out.write(workflow_command("notice", _total(self.summaries, self.unreadable_count),
                                            title=SUITE) + "\n")


class InertLines:
    """A text stream, stderr under ``--format github``, that writes each line inert (kbatch.output.inert):
    a line is written when it ends (or when the stream is closed), so no command is built across writes.
    (In a runner's job the ``kbatch`` program's streams are inert already; this format asks for it anywhere,
    and of any caller of kbatch.cli.main.)"""

    def __init__(self, stream):
        self.stream, self.pending = stream, ""
        self.encoding, self.errors = stream.encoding, getattr(stream, "errors", "strict")

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            self.stream.write(inert(line) + "\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        """The rest of a last line that has no end; the stream itself stays open (it is its owner's)."""
        if self.pending:
            self.stream.write(inert(self.pending))
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()


@contextmanager
def inert_stderr():
    """sys.stderr as :class:`InertLines` while the block runs."""
    stderr = sys.stderr
    sys.stderr = InertLines(stderr)
    try:
        yield
    finally:
        sys.stderr.close()
        sys.stderr = stderr
