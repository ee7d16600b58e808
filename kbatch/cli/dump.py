"""``kbatch dump``: every batch of a segment, and every damaged range, in file order."""

from __future__ import annotations

import os
import sys

import click

from kbatch.files.kinds import (BATCH_KINDS, KINDS, RENAMED_PARTITION_STATES, is_partial_snapshot, kind_of,
                                renamed_partition)
from kbatch.partition.seek import Window
from kbatch.partition.sniff import NotALogSegment, looks_like_other_kind
from kbatch.messages import DECODERS, decoder_for_path
from kbatch.ops.listing import list_file
from kbatch.ops.visibility import UncommittedView, log_start_within, partition_of, unread_log_start
from kbatch.walk.parts import usable_cpus
from kbatch.reading.reader import ReadOptions, input_kind
from kbatch.files.inputs import PARTITION_FILES
from kbatch.output.jsonout import JsonlSink
from kbatch.reading.summary import FileSummary
from kbatch.output.visible import visible
from kbatch.cli.status import ExitStatus
from kbatch.cli.options import (consumer_views, decode_option, decompressed_limit_option, files_argument,
                                for_each_input, hex_option, isolation_option, kafka_version_option, no_color_option,
                                parse_offset_range, parse_time)

FORMATS = ("table", "jsonl", "json", "dumplog")


@click.command(epilog="""\b
Examples:
  kbatch dump 00000000000000000000.log
  kbatch dump --records --offset-range 100:200 segment.log
  kbatch dump --records --since 2024-05-01T12:00Z --until 2024-05-01T12:05Z segment.log
  kbatch dump --format jsonl segment.log | jq 'select(.type == "batch" and (.crc_valid | not))'
  kbatch dump --format dumplog --records segment.log   # as kafka-dump-log.sh --deep-iteration --print-data-log
  xxd -p capture.bin | kbatch dump --hex -                 # hex, as pasted from a capture
  kbatch dump -r /var/lib/kafka/__consumer_offsets-12/00000000000000000000.log
""")
@files_argument
@click.option("--records", "-r", is_flag=True, help="Decode and show the records of every batch (and check them).")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for people, jsonl/json for programs, dumplog for the lines of Kafka 4.4.0's "
                   "kafka-dump-log.sh (org.apache.kafka.tools.DumpLogSegments; keys and payloads as its "
                   "StringDecoder shows them, unless --decode hex|base64|json).")
@decode_option
@click.option("--decoder", type=click.Choice(("auto",) + DECODERS), default="auto", show_default=True,
              help="How records of Kafka's internal topics are read (with --records): auto picks it from the "
                   "partition directory (__consumer_offsets-N: offsets, __transaction_state-N: transactions, "
                   "__cluster_metadata-N: metadata, __share_group_state-N: share, __remote_log_metadata-N: "
                   "remote); none shows bytes.")
@kafka_version_option
@click.option("--full", is_flag=True, help="Show keys and values whole instead of cut to the terminal.")
@click.option("--limit", type=click.IntRange(min=0), metavar="N", help="Stop after N batches per file.")
@click.option("--kind", type=click.Choice(KINDS), metavar="KIND",
              help="Read every FILE as this kind instead of the one its name says: "
                   + ", ".join(KINDS) + ".")
@click.option("--offset-range", callback=parse_offset_range, metavar="A:B",
              help="Only batches holding record offsets A..B (inclusive; A: and :B are open).")
@click.option("--since", callback=parse_time, metavar="TIME",
              help="Only batches with records stamped at or after TIME (ISO 8601, or epoch ms).")
@click.option("--until", callback=parse_time, metavar="TIME",
              help="Only batches with records stamped at or before TIME (ISO 8601, or epoch ms).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --format jsonl: processes to list a large file (64 MiB or more) with, a part each, at "
                   "once (up to 1 GiB of each part's lines wait in a temporary file). "
                   "[default: the CPUs kbatch may use]")
@isolation_option
@hex_option
@decompressed_limit_option
@no_color_option
def dump(files, records, output_format, decode, decoder, kafka_version, full, limit, kind, offset_range, since, until, jobs,
         isolation, hex_input, decompressed_limit, no_color):
    """List the batches of Kafka log segments (v0, v1 and v2, any codec), with their damage.

    One row per batch: position, offsets, count, magic, codec, size, CRC
    (stored, checked), timestamps, producer fields, leader epoch and flags.
    On a narrow terminal position, offsets, count, codec, the CRC verdict
    and the findings are always shown whole; the other columns get the room
    left, in that order of priority, and a line names those left out.
    Damaged byte ranges appear where they lie, with what was expected and what
    was found; the batches after them are still listed.

    The files beside a segment dump too, each on its own, by the kind their
    name says (--kind overrides): .index, .timeindex, .txnindex, .snapshot,
    leader-epoch-checkpoint, partition.metadata, the log directory's offset
    checkpoints and meta.properties, quorum-state, and a KRaft snapshot
    (.checkpoint, read as record batches; .checkpoint.part, one being
    written, too). A partition directory renamed -delete, -future or -stray
    is said to be so and read as its partition.
    Each is read as Kafka reads it, a window at a time (bounded memory at any
    size). A directory dumps every such file in it, segment by segment.

    With --records --isolation, only what a consumer of that isolation is
    given is listed: nothing below the partition's log start offset (from
    its log directory's log-start-offset-checkpoint), no control batches;
    under read_committed no batches of aborted transactions and none at or
    past the last stable offset either (every segment of the partition
    directory is read first for the transactions' outcomes). Without
    --isolation every record is listed, those below the log start offset
    marked.  A log-start-offset-checkpoint that cannot be read is said (where
    it is damaged), and the records below the log start are then shown.

    Exit status: 0 clean, 1 damage found (a damaged log-start-offset-checkpoint
    too), 2 usage or I/O error (and a file
    that is no log segment but looks like another kind).
    """
    if isolation is not None and not records:
        raise click.UsageError(f"--isolation {isolation} selects records: give --records too")
    views = consumer_views(decompressed_limit, isolation)
    # The json document carries what encode-from-json needs to rebuild the input byte for byte.
    # The records of a v2 batch are walked into columns, never held as a list of objects: jsonl writes
    # them straight from the columns; the other formats (and a selection by offset or time) read them as
    # Record objects made a chunk at a time (records.RecordStream).
    options = ReadOptions(records=records, decompressed_limit=decompressed_limit,
                          keep_body=output_format == "json", record_objects=False)
    # Each format's renderer is imported when it is asked for: JSON Lines never load Rich.
    out = sys.stdout
    window = Window(*(offset_range or (None, None)), since, until)
    if output_format == "table":
        from kbatch.render.console import make_console
        from kbatch.render.table import TableSink

        sink = TableSink(make_console(out, no_color=no_color), records=records, decode=decode, full=full,
                         selection=str(window) if window.selects else "")
    elif output_format == "jsonl":
        sink = JsonlSink(out, records=records, decode=decode)
    elif output_format == "json":
        from kbatch.output.jsonout import JsonSink

        sink = JsonSink(out, records=records, decode=decode)
    else:
        from kbatch.render.dumplog import DumplogSink

        sink = DumplogSink(out, records=records, decode=decode)

    noted: set[str] = set()
    told_log_start: set[str] = set()
    log_start_unread: list[str] = []   # the segments whose partition's log-start-offset-checkpoint does not read

    def note(path) -> None:
        """Say once what a renamed partition directory is, and that a .checkpoint.part is a partial snapshot."""
        directory = os.path.dirname(path)
        renamed = renamed_partition(directory)
        if renamed and directory not in noted:
            noted.add(directory)
            click.echo(f"kbatch: {visible(directory)}: {RENAMED_PARTITION_STATES[renamed[1]]}; read as partition "
                       f"{visible(renamed[0])}", err=True)
        if is_partial_snapshot(path):
            click.echo(f"kbatch: {visible(path)}: a KRaft snapshot being written (.checkpoint.part), partial: read as the "
                       "snapshot it would be; Kafka deletes it at start-up (KafkaRaftLog.recoverSnapshots)", err=True)

    named_files = set(files)
    beside_stepped_over = []

    def dump_one(path, stream):
        if not hex_input:
            note(path)
        named = kind or (None if hex_input else kind_of(path))
        if named is not None and named not in BATCH_KINDS:
            if window.selects and path not in named_files:   # a selection selects records: none in here
                beside_stepped_over.append(path)
                return FileSummary(path, 0)
            from kbatch.render.partition import dump_file as dump_sidecar

            return dump_sidecar(path, stream, named, sink)
        if kind is None:
            other = looks_like_other_kind(stream)
            if other is not None:
                outcome = NotALogSegment(path, other)
                click.echo(outcome.message, err=True)
                return outcome
        committed, log_start, selected = None, None, window
        if views is not None:   # what a consumer is given: from the log start offset on
            committed = views.of(path) or UncommittedView()
            selected = views.window(path, window)
        elif records and not hex_input:   # every record, those below the log start offset marked
            log_start = log_start_within(path)
            if partition_of(path) not in told_log_start:
                told_log_start.add(partition_of(path))
                for line in unread_log_start(path):
                    click.echo(line, err=True)
                    log_start_unread.append(path)
                if log_start is not None:
                    click.echo(f"kbatch: {visible(partition_of(path))}: its log start offset is {log_start} "
                               "(log-start-offset-checkpoint): the records below it are marked, no consumer is "
                               "given them (--isolation lists what one is)", err=True)
        selects = selected.selects or committed is not None or log_start is not None
        columns = isinstance(sink, JsonlSink) and sink.from_columns and not selects
        # Lines stand alone in JSON Lines: a large file's parts can be listed at once and put end to end.
        in_parts = (isinstance(sink, JsonlSink) and sink.writes_utf8 and limit is None and not selects
                    and not hex_input and path != "-" and input_kind(path) == "file")
        return list_file(path, stream, options, sink, internal=decoder_for_path(path) if decoder == "auto" else decoder,
                         columns=columns, window=selected, limit=limit, committed=committed, log_start=log_start,
                         kafka_version=kafka_version, jobs=(jobs or usable_cpus()) if in_parts else 1,
                         note=lambda text: click.echo(text, err=True))

    # A directory dumps every file Kafka keeps in it, each segment's together, segments by base offset.
    status = for_each_input(files, hex_input, dump_one, pattern=PARTITION_FILES, sink=sink)
    if (log_start_unread or (views is not None and views.damaged)) and status is ExitStatus.OK:
        status = ExitStatus.FOUND   # a log directory's checkpoint is damaged (told on stderr)
    if output_format in ("json", "dumplog"):   # their documents end after the last file
        sink.close()
    if output_format == "table":
        sink.stepped_over(len(beside_stepped_over))
    elif beside_stepped_over:
        click.echo(f"kbatch: note: stepped over {len(beside_stepped_over)} files beside the segments, outside "
                   f"{window} (they hold no records)", err=True)
    return status
