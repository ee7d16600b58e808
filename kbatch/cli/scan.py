"""``kbatch scan``: sweep many segments on Spark into Parquet tables and a report per topic-partition."""

from __future__ import annotations

import os
import sys
import tempfile

import click

from kbatch.cli.status import ExitStatus
from kbatch.output.visible import visible


@click.command(epilog="""\b
Examples:
  kbatch scan /var/kafka-logs --out /tmp/scan
  kbatch scan '/data/*/0000*.log' --out /tmp/scan --records --deep
  kbatch scan s3://bucket/tiered/ --out /tmp/scan --master spark://head:7077
  kbatch scan fixtures/ --out /tmp/x --format json | jq '.partitions[] | select(.corrupt_batches > 0)'
""")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--out", "out_dir", required=True, metavar="DIR", type=click.Path(file_okay=False),
              help="Where the Parquet tables go: DIR/batches, DIR/findings (and DIR/records); a "
                   "directory, or a URI Spark writes (hdfs://, s3a://, ...).")
@click.option("--records", is_flag=True, help="Also write one row per record (DIR/records).")
@click.option("--deep", is_flag=True, help="Findings as verify-crc --deep finds them, with each partition "
                                             "directory's indexes, snapshots and checkpoints held against its "
                                             "segments (rows of DIR/findings, a column of the report).")
@click.option("--master", metavar="URL", help="Spark master (default local[*], or the session spark-submit or "
                                               "SPARK_REMOTE provides).")
@click.option("--split-bytes", type=click.IntRange(min=0), default=0, metavar="N",
              help="Split segments larger than N bytes into ranges read in parallel (0: never).")
@click.option("--pattern", default="*.log", show_default=True, help="Which files in a directory are segments.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="The report as tables or as one JSON document.")
@click.option("--verbose", is_flag=True, help="Let Spark's own logging through to stderr.")
@click.option("--no-color", is_flag=True, help="No colour even on a terminal (NO_COLOR too).")
def scan(paths, out_dir, records, deep, master, split_bytes, pattern, output_format, verbose, no_color):
    """Read Kafka log segments on Spark (local mode by default; the same job runs on a cluster) and write
    Parquet tables of their batches, findings and (--records) records, partitioned by topic; then report per
    topic-partition: segments, batches, records, bytes, compression ratio, corrupt batches, offset gaps and
    overlaps between consecutive segments, time range, distinct producers and how many times they broke a rule
    of kbatch producers (sequences and epochs), open transactions.

    Needs the spark extra (pip install '.[spark]' in kbatch's checkout) and Java 17.

    Exit status: 0 no damage, 1 damage found, 2 usage or I/O error.
    """
    try:
        from kbatch.spark.scan import run_scan
    except ImportError as error:
        click.echo(f"kbatch: scan needs PySpark: pip install '.[spark]' in kbatch's checkout ({error})", err=True)
        return ExitStatus.TROUBLE
    from kbatch.files.inputs import is_remote
    from kbatch.spark.scan import scan_segments

    unread: list[tuple[str, str | None]] = []
    segments = scan_segments(list(paths), pattern, unread)
    for path, why in unread:   # said, and the status is 2, but the rest is scanned
        click.echo(f"kbatch: no file matches {visible(path)}" if why is None else
                   f"kbatch: cannot read {visible(path)}: {visible(why)}", err=True)
    if not segments:
        if not unread:
            click.echo(f"kbatch: no segment matches {' '.join(map(visible, paths))}", err=True)
        return ExitStatus.TROUBLE
    if is_remote(out_dir):   # (hdfs://, s3a://, ...: the tables go there; Spark's log stays on this machine)
        log_dir = tempfile.mkdtemp(prefix="kbatch-scan-")
    else:
        log_dir = out_dir.removeprefix("file://")
        os.makedirs(log_dir, exist_ok=True)

    def progress(message: str) -> None:
        click.echo(f"kbatch scan: {message}", err=True)

    try:
        result = run_scan(segments, out_dir, records=records, deep=deep, master=master, split_bytes=split_bytes,
                          quiet=not verbose, progress=progress, pattern=pattern, log_dir=log_dir)
    except Exception as error:
        from kbatch.spark.scan import spark_error_line

        line = spark_error_line(error)
        if line is None:
            raise
        click.echo(f"kbatch: scan failed on Spark: {line} (spark.log in {visible(log_dir)} has the rest)", err=True)
        return ExitStatus.TROUBLE
    if output_format == "json":
        from kbatch.render.scan import write_scan_json
        write_scan_json(sys.stdout, result)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.scan import render_report
        render_report(make_console(sys.stdout, no_color=no_color), result)
    if unread:
        return ExitStatus.TROUBLE
    return ExitStatus.FOUND if result["damaged_segments"] or result["failed_cross_checks"] else ExitStatus.OK
