"""``kbatch retention``: what Kafka's retention and log cleaner would do with each segment now, and why not."""

from __future__ import annotations

import os
import sys
import time

import click

from kbatch.cli.options import decompressed_limit_option, no_color_option, parse_time, replay_status
from kbatch.cli.status import ExitStatus


def _pairs(ctx, param, values) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}")
        pairs[key.strip()] = text.strip()
    return pairs


@click.command(epilog="""\b
Examples:
  kbatch retention /var/kafka-logs
  kbatch retention --config retention.ms=86400000 /var/lib/kafka/orders-0
  kbatch retention --now 2026-12-01T00:00Z --format jsonl /var/kafka-logs | jq 'select(.verdict == "kept")'
""")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False),
                metavar="DIR...")
@click.option("--config", "configs", multiple=True, callback=_pairs, metavar="KEY=VALUE",
              help="A topic config (retention.ms, retention.bytes, cleanup.policy, min.cleanable.dirty.ratio, "
                   "min.compaction.lag.ms, max.compaction.lag.ms, remote.storage.enable, ...), over every other "
                   "source (repeatable); a key retention does not read is refused.")
@click.option("--metadata", type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="A __cluster_metadata-0 directory whose ConfigRecords give each topic's configs (default: the "
                   "one in the log directory, where there is one).")
@click.option("--now", callback=parse_time, metavar="TIME", help="Judge as at TIME (epoch ms or ISO 8601); default: now.")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl"]), default="table",
              show_default=True, help="table for people, jsonl for programs.")
@decompressed_limit_option
@no_color_option
def retention(paths, configs, metadata, now, output_format, decompressed_limit, no_color):
    """What retention and the log cleaner would do with each segment, and why not.

    For each partition directory (a DIR holding segments, or every TOPIC-N
    of a log directory): each segment's verdict, deletable or kept, by
    UnifiedLog.deleteOldSegments' three passes (the log start offset,
    retention.bytes, retention.ms; each deletes from the oldest and stops
    at the first segment it keeps), and the reasons: the high watermark,
    the active segment, a largest timestamp in the future (named with its
    batch), within retention, tiered storage not yet known to hold it.  For
    a compacted topic, the log cleaner's view (LogCleanerManager): first
    dirty and first uncleanable offset, what holds the latter back (the
    active segment, min.compaction.lag.ms, or the last stable offset: the
    high watermark, or below it the first offset of a transaction open or
    whose marker the high watermark has not passed, named with its
    producer: by its transactional id where a __transaction_state partition is among the directories, as
    in a log directory), the dirty ratio against
    min.cleanable.dirty.ratio, and whether it would clean now.  Configs:
    Kafka's defaults, then the topic's ConfigRecords in __cluster_metadata,
    then --config.

    A damaged offset checkpoint of the log directory (Kafka cannot read it,
    and takes the log directory offline: retention deletes nothing there)
    keeps every segment, its findings told; a ConfigRecord whose value
    Kafka's LogConfig cannot parse, or refuses (out of the range its
    validator declares: retention.ms at least -1, min.cleanable.dirty.ratio
    between 0 and 1, ...), is a finding, its topic's segments judged
    unknown.

    Exit status: 0 clean, 1 damage found in the segments (their batches'
    timestamps may then be unknown), in an offset checkpoint or in a
    ConfigRecord, 2 usage or I/O error (a --config that does not parse, or
    out of its range).
    """
    from kbatch.ops.retention import (ConfigError, TopicConfigs, parse_config, partition_directories,
                                      retention_report, topic_configs, unread_config)
    from kbatch.reading.reader import ReadOptions

    unread = unread_config(configs)
    if unread is not None:
        raise click.BadParameter(unread, param_hint="--config")
    try:   # the user's own: a usage error (a ConfigRecord's is a finding)
        parse_config(configs)
    except ConfigError as error:
        raise click.BadParameter(str(error), param_hint="--config") from None
    options = ReadOptions(records=True, decompressed_limit=decompressed_limit)
    now = int(time.time() * 1000) if now is None else now
    status = ExitStatus.OK
    directories = partition_directories(list(paths))
    if metadata is None:
        found = [os.path.join(path, "__cluster_metadata-0") for path in paths]
        metadata = next((path for path in found if os.path.isdir(path)), None)
    topics = topic_configs(metadata, ReadOptions(records=True)) if metadata else TopicConfigs()
    results, everything = retention_report(directories, configs, topics, options, now)
    status = replay_status(everything, status)
    if output_format == "jsonl":
        from kbatch.render.retention import write_retention_jsonl
        write_retention_jsonl(sys.stdout, results, everything.findings)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.retention import print_retention
        print_retention(make_console(sys.stdout, no_color=no_color), results, everything.findings, now, metadata)
    return status
