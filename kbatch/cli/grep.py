"""``kbatch grep``: the records of segments that match, as grep(1) shows lines."""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import click

from kbatch.format.findings import Finding
from kbatch.ops.grep import Found, Note, Query, Search, Tally, parse_field, search_in_parts
from kbatch.messages import DECODERS, decoder_for_path
from kbatch.partition.seek import Window
from kbatch.walk.parts import usable_cpus, worth_parts
from kbatch.reading.reader import input_kind
from kbatch.output.values import bytes_text, finding_text
from kbatch.output.visible import visible
from kbatch.cli.options import (ConsumerViews, decode_option, decompressed_limit_option, expand_inputs,
                                isolation_option, kafka_version_option, parse_offset_range, parse_time, report_unreadable)
from kbatch.cli.status import ExitStatus

MATCH, NONE, TROUBLE = 0, 1, 2   # grep's exit status: a record selected, none, an error


@click.command(epilog="""\b
Examples:
  kbatch grep order-42 /var/lib/kafka/orders-0
  kbatch grep --key '^order-4[0-9]$' segment.log
  kbatch grep --field customer.id=42 --format jsonl /var/lib/kafka/orders-*
  kbatch grep --header traceparent=00-4bf92f3577b3 orders-0
  kbatch grep -c --isolation read_committed '' orders-0       # records a read_committed consumer is given
  kbatch grep --field key.data.group=billing /var/lib/kafka/__consumer_offsets-*
  kbatch grep -q order-42 orders-0 && echo found              # silent: the exit status says
  kbatch grep -w -o 'order-[0-9]+' orders-0                     # the whole words matched, one a line
  kbatch grep -L order-42 /var/lib/kafka/orders-0               # the segments holding none
  kbatch grep -B 2 -A 1 --key order-42 orders-0                 # 2 records before each match, 1 after
""")
@click.argument("args", nargs=-1, required=True, metavar="PATTERN PATH...")
@click.option("-e", "--regexp", "pattern_option", metavar="PATTERN",
              help="The pattern (one starting with -); then every argument is a PATH.")
@click.option("--key", "in_key", is_flag=True, help="Look for PATTERN in keys only.")
@click.option("--value", "in_value", is_flag=True, help="Look for PATTERN in values only (default: either).")
@click.option("-F", "--fixed", is_flag=True, help="PATTERN is literal text, not a regular expression.")
@click.option("--bytes", "hex_bytes", metavar="HEX",
              help="Look for these bytes (hex), in place of PATTERN; then every argument is a PATH.")
@click.option("--header", "headers", multiple=True, metavar="NAME[=PATTERN]",
              help="Only records carrying a header NAME (whose value matches PATTERN). Repeatable; with it "
                   "PATTERN may be left out.")
@click.option("--field", "fields", multiple=True, metavar="PATH=VALUE",
              help="Only records whose value, read as JSON, has VALUE at PATH (dots between names and list "
                   "indexes: customer.id=42); for an internal topic, its decoded record as dump --format jsonl "
                   "shows it under decoded (value.data.offset=1200). Repeatable; with it PATTERN may be left out.")
@click.option("--producer-id", type=int, metavar="ID", help="Only records of this producer's batches.")
@click.option("--offset-range", callback=parse_offset_range, metavar="A:B",
              help="Only records at offsets A..B (inclusive); batches outside are stepped over at their headers, "
                   "from where the .index says.")
@click.option("--since", callback=parse_time, metavar="TIME", help="Only records stamped at or after TIME.")
@click.option("--until", callback=parse_time, metavar="TIME", help="Only records stamped at or before TIME.")
@click.option("-v", "--invert-match", "invert", is_flag=True,
              help="Select the records that do not match (PATTERN, --header, --field).")
@click.option("-i", "--ignore-case", is_flag=True, help="ASCII letters of either case match.")
@click.option("-w", "--word-regexp", "word", is_flag=True,
              help="PATTERN matches only where no word character (ASCII letter, digit, _) comes right before or after "
                   "it.")
@isolation_option
@click.option("-H", "--with-filename", is_flag=True, help="Print the file name with each match.")
@click.option("--no-filename", is_flag=True, help="Never print file names.")
@click.option("-c", "--count", is_flag=True, help="Print how many records match in each file.")
@click.option("-l", "--files-with-matches", is_flag=True, help="Print only the names of files with a match.")
@click.option("-L", "--files-without-match", is_flag=True,
              help="Print only the names of files without a match (exit status 0 when one is printed).")
@click.option("-q", "--quiet", "--silent", "quiet", is_flag=True,
              help="Print nothing (findings still go to stderr); stop each file at its first match; the exit status "
                   "says whether a record was selected.")
@click.option("-o", "--only-matching", is_flag=True,
              help="Print only the parts of keys and values PATTERN matches, each as FILE:OFFSET:PART (text only).")
@click.option("-m", "--max-count", type=click.IntRange(min=0), metavar="N", help="Stop a file after N matches.")
@click.option("-A", "--after-context", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show N records after each match (in the order of the file).")
@click.option("-B", "--before-context", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show N records before each match.")
@click.option("-C", "--context", type=click.IntRange(min=0), default=0, metavar="N",
              help="Show N records before and after each match (-A and -B say each side).")
@click.option("--format", "output_format", type=click.Choice(["text", "jsonl"]), default="text", show_default=True,
              help="text: FILE:OFFSET:KEY<tab>VALUE lines; jsonl: each match as dump --records --format jsonl "
                   "writes a record, with its file and batch.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour file names, offsets and matches (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--decoder", type=click.Choice(("auto",) + DECODERS), default="auto", show_default=True,
              help="How records of Kafka's internal topics are read, for --field (as dump's --decoder).")
@kafka_version_option
@decode_option
@click.option("--strict", is_flag=True, help="Damage met on the way makes the exit status 2.")
@click.option("--spark", is_flag=True, help="Run the search as a Spark job (the kbatch data source).")
@click.option("--master", metavar="URL", help="With --spark: the Spark master [default: local[*]].")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes to search a large file (64 MiB or more) with, a part each, at once (their lines wait "
                   "in a temporary file). [default: the CPUs kbatch may use]")
@decompressed_limit_option
def grep(args, pattern_option, in_key, in_value, fixed, hex_bytes, headers, fields, producer_id, offset_range, since,
         until, invert, ignore_case, word, isolation, with_filename, no_filename, count, files_with_matches,
         files_without_match, quiet, only_matching, max_count, after_context, before_context, context, output_format,
         color, decoder, kafka_version, decode, strict, spark, master, jobs, decompressed_limit):
    """Print the records of segments that match PATTERN, as grep prints lines.

    PATTERN is a regular expression (Python's syntax, matched in linear
    time by RE2: no backreference or lookaround) on the bytes of a record's
    key or value read as UTF-8 (-F: literal text; --bytes: literal bytes).
    PATHs are segments, partition directories and log directories, as for
    the other commands. Each match prints as FILE:OFFSET:KEY<tab>VALUE (the
    file name when more than one file is searched, or -H); --format jsonl
    writes each as dump --records --format jsonl writes a record, with its
    file and its batch. Control records are never data: they never match.

    The search runs inside the compiled record walk: a batch with no match
    is walked on its bytes without an object per record; a batch with one
    is read in full and its records tested one by one with the same test,
    so grep gives the records dump --records gives.

    With --isolation, records are those a consumer of that isolation is
    given: none below the partition's log start offset (its log directory's
    log-start-offset-checkpoint). Under read_committed, not those of aborted
    transactions either, nor those at or past the last stable offset (an
    open transaction holds it). Every
    segment of the partition directory is read first for the outcomes. A
    transaction whose marker is damaged has an unknown outcome: its records
    are shown, marked so, and stderr says why.

    A record a consumer is refused as corrupt -- its v2 batch's CRC fails,
    its v0/v1 message's own CRC fails, its batch's length field is wrong,
    bytes follow it past the records its batch counts -- is shown marked
    "(untrusted: WHY)" ("untrusted": WHY in JSON), and stderr says how many
    matches were; with --isolation (what a consumer is given) such records
    are left out, and stderr says how many matched.

    Damage met on the way is reported on stderr as a finding.

    Exit status, as grep: 0 a record selected (-L: a file printed), 1 none,
    2 an error (with --strict, damage too), also with -q: a match in one
    file vouches for nothing about another that cannot be read.
    """
    if pattern_option is not None or hex_bytes is not None or ((headers or fields) and not _looks_like_pattern(args)):
        pattern, paths = pattern_option, list(args)
    else:
        pattern, paths = args[0], list(args[1:])
    if not paths:
        raise click.UsageError("no PATH given (PATTERN PATH...)")
    if only_matching and output_format != "text":
        raise click.UsageError("-o prints the matched parts as text; --format jsonl writes whole records")
    literal = None
    try:
        if hex_bytes is not None:
            literal = bytes.fromhex(hex_bytes)
        elif fixed and pattern is not None:
            literal = pattern.encode()
        query = Query(pattern=None if literal is not None else pattern, literal=literal,
                      where="key" if in_key and not in_value else "value" if in_value and not in_key else "either",
                      headers=tuple(_header(text) for text in headers), fields=tuple(parse_field(f) for f in fields),
                      ignore_case=ignore_case, invert=invert, producer_id=producer_id, word=word)
        query.match()   # a pattern that is no regular expression is a usage error, before any file is read
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    window = Window(*(offset_range or (None, None)), since, until)
    files, status = expand_inputs(paths)
    show_names = with_filename or (not no_filename and (len(files) > 1 or any(os.path.isdir(p) for p in paths)))
    shown = Shown(max_count, context if before_context is None else before_context,
                  context if after_context is None else after_context, count,
                  "with" if files_with_matches else "without" if files_without_match else None,
                  quiet, only_matching, strict)
    job = GrepJob(query, Output(sys.stdout, output_format, show_names, _colour(color), decode, query, shown),
                  window if window.selects else None, isolation, decoder, decompressed_limit, jobs or usable_cpus(),
                  kafka_version)
    if spark:
        from kbatch.cli.grep_spark import spark_grep

        matched, damaged, trouble = spark_grep(job, files, master)
    else:
        matched, damaged, trouble = job.run(files)
    if trouble or status is ExitStatus.TROUBLE or (strict and damaged):
        return TROUBLE
    return MATCH if matched else NONE


@dataclasses.dataclass(frozen=True)
class Shown:
    """What grep prints of each file's matches."""

    max_count: int | None = None   # -m: stop a file after this many
    before: int = 0                # -B: records shown before each match
    after: int = 0                 # -A: and after
    count: bool = False            # -c: only how many
    names: str | None = None       # -l ("with") and -L ("without"): only the names of files with or without one
    quiet: bool = False            # -q: nothing
    only_matching: bool = False    # -o: the matched parts of keys and values
    read_to_end: bool = False      # --strict: -l, -L and -q still read each file to its end, for its damage

    @property
    def lines_only(self) -> bool:
        """Whether every line of every match is printed and nothing else (a file may be searched in parts)."""
        return not (self.count or self.names or self.quiet or self.max_count is not None or self.before or self.after)

    @property
    def stops_at_first(self) -> bool:
        return (self.names is not None or self.quiet) and not self.read_to_end


@dataclasses.dataclass
class GrepJob:
    """One grep over files, as the command line asked it (the same here and in a Spark task)."""

    query: Query
    out: "Output"
    window: Window | None
    isolation: str | None   # None: every record the bytes hold; else the records a consumer of it is given
    decoder: str
    decompressed_limit: int
    jobs: int
    kafka_version: str | None = None

    def run(self, files: list[str]) -> tuple[bool, bool, bool]:
        """Search every file: (a record selected -- with -L, a file printed --, damage met, an input unreadable)."""
        matched = damaged = trouble = False
        views = ConsumerViews(self.decompressed_limit, self.isolation) if self.isolation is not None else None
        for path in files:
            found, hurt, unreadable = self.one(path, views)
            matched, damaged, trouble = matched or found > 0, damaged or hurt, trouble or unreadable
        damaged |= views is not None and views.damaged
        return matched, damaged, trouble

    def one(self, path: str, views: ConsumerViews | None, shown: str | None = None) -> tuple[int, bool, bool]:
        """Search one file (named ``shown`` in the lines, if given): (records selected -- with -L, 1 when the file
        was printed --, damage met, unreadable)."""
        from kbatch.reading.reader import open_input

        committed = views.of(path) if views is not None else None
        try:
            stream = open_input(path)
        except (OSError, ValueError) as error:
            report_unreadable(path, error)
            return 0, False, True
        internal = decoder_for_path(path) if self.decoder == "auto" else self.decoder
        settings = self.out.shown
        window = views.window(path, self.window) if views is not None else self.window
        search = Search(self.query, decoder=internal, kafka_version=self.kafka_version, window=window,
                        committed=committed, every_record=bool(settings.before or settings.after),
                        consumer_view=self.isolation is not None, decompressed_limit=self.decompressed_limit)
        with stream:
            # A large file is searched in parts at once (kbatch.walk.parts) when its lines are all there is to print.
            if settings.lines_only and not search.window and path != "-" and input_kind(path) == "file" \
                    and worth_parts(os.fstat(stream.fileno()).st_size, self.jobs):
                tally = search_in_parts(path, stream, search, self.out, self.jobs)
            else:
                tally = self.out.file(shown or path, search.run(path, stream))
                tally.left_out = search.left_out
        self.out.untrusted(shown or path, tally)
        if settings.names == "without":
            return int(tally.matched == 0), tally.damaged, False
        return tally.matched, tally.damaged, False


def _looks_like_pattern(args) -> bool:
    """With --header or --field, whether the first argument is still a PATTERN: it names no file."""
    return len(args) > 1 and not os.path.exists(args[0])


def _header(text: str) -> tuple[str, str | None]:
    name, equals, pattern = text.partition("=")
    return name, (pattern if equals else None)


def _colour(choice: str) -> bool:
    if choice == "auto":
        return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return choice == "always"


@dataclasses.dataclass
class Output:
    """What grep prints, file by file."""

    out: object
    format: str
    show_names: bool
    colour: bool
    decode: str
    query: Query
    shown: Shown = Shown()
    groups: int = 0   # groups of context lines shown
    highlight: object = dataclasses.field(init=False, default=None)   # the pattern as marked in colour

    def __post_init__(self):
        query = self.query
        if not self.colour or query.invert or (query.pattern is None and query.literal is None):
            return
        from kbatch.ops.regex import shown_text_pattern   # (RE2: a hostile value cannot make marking it run on)

        self.highlight = shown_text_pattern(
            query.pattern, None if query.literal is None else query.literal.decode("utf-8", "replace"),
            query.ignore_case)

    def file(self, path: str, items) -> Tally:
        """Show what the search of one file hands out, as ``self.shown`` says."""
        shown = self.shown
        tally = Tally()
        before: list[Found] = []      # the last records before a match, not shown yet (-B)
        after = 0                     # records still to show after the last match (-A)
        index, last_shown = 0, None   # which record of the file this is; which was shown last
        lines = not (shown.count or shown.names or shown.quiet)
        for item in items:
            if isinstance(item, Note):
                click.echo(f"kbatch: {visible(path)}: {item.text}", err=True)
                continue
            if isinstance(item, Finding):
                click.echo(f"kbatch: {visible(path)}: {finding_text(item)}", err=True)
                tally.damaged |= item.is_damage
                continue
            index += 1
            if not item.selected:
                if after:
                    self._line(path, item, "-")
                    last_shown, after = index, after - 1
                elif shown.before:
                    before = (before + [item])[-shown.before:]
                continue
            if shown.max_count is not None and tally.matched >= shown.max_count:
                break
            tally.matched += 1
            tally.marked += item.refused is not None
            if tally.matched == 1 and shown.stops_at_first:
                break
            if not lines:
                continue
            if shown.before or shown.after:
                first = index - len(before)
                if self.groups and last_shown is not None and first > last_shown + 1:
                    self.out.write("--\n")
                for context in before:
                    self._line(path, context, "-")
                before = []
                self.groups += 1
            self._line(path, item, ":")
            last_shown, after = index, shown.after
        if shown.count:
            self.out.write(f"{self._name(path) + ':' if self.show_names else ''}{tally.matched}\n")
        elif shown.names == ("with" if tally.matched else "without") and not shown.quiet:
            self.out.write(self._name(path) + "\n")
        return tally

    def untrusted(self, path: str, tally: Tally) -> None:
        """Under a file's matches (on stderr): how many of them a consumer is refused (kbatch.ops.visibility.refused),
        shown marked or left out."""
        why = "matching records a consumer refuses as corrupt (their batch or message fails its check)"
        if tally.marked:
            click.echo(f"kbatch: {visible(path)}: {why}: {tally.marked}, marked untrusted (--isolation leaves them out)",
                       err=True)
        if tally.left_out:
            click.echo(f"kbatch: {visible(path)}: {why}: {tally.left_out}, left out (without --isolation they are shown, "
                       f"marked untrusted)", err=True)

    def _name(self, path: str) -> str:
        path = visible(path)
        return click.style(path, fg="magenta") if self.colour else path

    def _line(self, path: str, found: Found, separator: str) -> None:
        if self.format == "jsonl":
            from kbatch.output.jsonout import match_dict

            self.out.write(json.dumps(match_dict(path, found, self.decode)) + "\n")
            return
        record = found.record
        sep = click.style(separator, fg="cyan") if self.colour else separator
        offset = click.style(str(record.offset), fg="green") if self.colour else str(record.offset)
        head = f"{self._name(path)}{sep}" if self.show_names else ""
        unknown = "\t(read_committed: unknown outcome)" if found.seen is not None and found.seen.visible is None \
            else ""
        untrusted = f"\t(untrusted: {found.refused})" if found.refused is not None else ""
        if untrusted and self.colour:
            untrusted = click.style(untrusted, fg="yellow", bold=True)
        if self.shown.only_matching:
            if separator == ":":   # (a context record matched nothing to show)
                for part in self._parts(record):
                    self.out.write(f"{head}{offset}{sep}{part}{unknown}{untrusted}\n")
            return
        key, value = bytes_text(record.key, self.decode), bytes_text(record.value, self.decode)   # (one line each)
        highlight = self.highlight
        if highlight is not None and separator == ":":
            key, value = _marked(highlight, key), _marked(highlight, value)
        self.out.write(f"{head}{offset}{sep}{key}\t{value}{unknown}{untrusted}\n")

    def _parts(self, record) -> list[str]:
        """-o: the matched parts of the key, then of the value (where the query looks), as text."""
        where = self.query.where
        parts = (self.query.parts(record.key) if where != "value" else []) + \
            (self.query.parts(record.value) if where != "key" else [])
        if self.query.invert:
            return []   # (grep -o -v prints nothing: a record selected for not matching has no matched part)
        return [bytes_text(part, self.decode) for part in parts]


def _marked(highlight, text: str) -> str:
    return highlight.sub(lambda m: click.style(m.group(0), fg="red", bold=True) if m.group(0) else "", text)
