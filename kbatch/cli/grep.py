"""``kbatch grep``: the records of segments that match, as grep(1) shows lines."""

from __future__ import annotations

import os
import sys

import click

from kbatch.ops.grep import GrepJob, Query, parse_field
from kbatch.messages import DECODERS
from kbatch.partition.seek import Window
from kbatch.walk.parts import usable_cpus
from kbatch.cli.options import (consumer_views, decode_option, decompressed_limit_option, expand_inputs,
                                isolation_option, kafka_version_option, parse_offset_range, parse_time, report_unreadable)
from kbatch.cli.status import ExitStatus
from kbatch.render.grep import Output, Shown

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
                  report_unreadable, kafka_version)
    if spark:
        from kbatch.spark.grep import spark_grep

        matched, damaged, trouble = spark_grep(job, files, master)
    else:
        matched, damaged, trouble = job.run(files, consumer_views(decompressed_limit, isolation))
    if trouble or status is ExitStatus.TROUBLE or (strict and damaged):
        return TROUBLE
    return MATCH if matched else NONE


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
