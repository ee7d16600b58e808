"""``kbatch pcap``: record batches out of packet captures, each held to the rules a segment's batch is."""

from __future__ import annotations

import importlib.util
import sys

import click

from kbatch.cli.options import no_color_option
from kbatch.cli.status import ExitStatus


# mallopt's parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _keep_freed_memory() -> None:
    """Have glibc keep up to 8 MiB freed at the top of its heap, and take blocks of up to 4 MiB from the heap,
    rather than give memory back to the system as soon as it is freed.  A capture is read a message at a time,
    each gathered from its segments (a Fetch response: a MiB or so) and freed once its batches are written; given
    back, its pages are faulted in and zeroed again for the next (18,500 page faults on the 128 MiB benchmark
    capture, 5,000 with this; start-up alone takes 4,200).  Elsewhere (another C library, no ctypes) nothing
    changes."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(_M_TRIM_THRESHOLD, 8 << 20)
        libc.mallopt(_M_MMAP_THRESHOLD, 4 << 20)
    except (ImportError, OSError, AttributeError):   # no ctypes, or a C library without mallopt
        pass


@click.command(epilog="""\b
Examples:
  tcpdump -i any -w kafka.pcap port 9092      # while the trouble happens
  kbatch pcap kafka.pcap
  kbatch pcap --extract captured kafka.pcap && kbatch verify-crc --deep captured
  kbatch pcap --against /var/kafka-logs --format jsonl kafka.pcap | jq 'select(.type == "match")'
  kbatch pcap --port 19092 --records --format jsonl kafka.pcapng | jq 'select(.type == "batch" and .crc_valid == false)'
""")
@click.argument("captures", nargs=-1, required=True, metavar="CAPTURE...")
@click.option("--port", "ports", type=click.IntRange(1, 65535), multiple=True, metavar="N",
              help="A broker port to read (repeat for more): the side talking to it is the client, whoever the "
                   "capture heard first. [default: 9092; given, the ports given only; any other connection whose first "
                   "bytes read as a Kafka request is read too]")
@click.option("--records", is_flag=True, help="List each batch's records (jsonl, json).")
@click.option("--deep", is_flag=True, help="Walk every batch's records (decompressed) and hold them to the rules "
                                           "of verify-crc --deep; without it each batch's CRC and header are checked.")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl", "json"]), default="table",
              show_default=True, help="table for people, jsonl or json for programs.")
@click.option("--extract", "extract_to", type=click.Path(file_okay=False), metavar="DIR",
              help="Also write the batches as segment files, for every other command: DIR/produce/TOPIC-N/ (at the "
                   "offsets the Produce responses gave), DIR/fetch/TOPIC-N/ (as fetched), DIR/unassigned/TOPIC-N/ "
                   "(Produce batches the broker refused or never answered).")
@click.option("--against", "against", type=click.Path(exists=True, file_okay=False), metavar="LOGDIR",
              help="Hold each batch against the one the broker wrote in LOGDIR (a log directory): which hop "
                   "changed it -- the client, the broker's disk, or the Fetch response.")
@no_color_option
def pcap(captures, ports, records, deep, output_format, extract_to, against, no_color):
    """Read the record batches out of pcap or pcapng captures of Kafka traffic.

    Each TCP connection is reassembled in both directions (out-of-order
    segments, retransmissions, gaps) and cut into Kafka's requests and
    responses, read with Kafka's own message definitions: every record batch
    in a Produce request (every version Kafka trunk defines, topics by name
    or by id), in a Fetch response and in a ShareFetch response goes through
    the reader a segment's bytes do: its CRC and header, the invariants of
    verify-crc --deep with --deep, its records with --records.  Each is shown with its topic (or
    topic id), partition, direction, API version, correlation id, client id,
    packet and connection; a Produce response's error code and the offset the
    broker gave the batch are joined to it.  ApiVersions responses say which
    versions a broker takes.  A cut capture, a TCP gap, traffic that is no
    Kafka (TLS, SASL) and absurd sizes are findings with their packet number
    and connection; the rest of the capture is still read.  A topic name
    Kafka refuses (Topic.validate) in a Produce request, or over records in
    a Fetch response, is damage: a topic-refused finding at the name's
    bytes.  With --extract
    the batches are written as segment files, so that dump, verify-crc,
    diff and the rest read them.  With --against LOGDIR each batch is held
    against the broker's: a produced one at the offset its response gave
    (else by producer id, epoch and sequence), a fetched one at its offset;
    the bytes compared but for baseOffset and partitionLeaderEpoch and, of a
    produced batch, the timestamp type and maxTimestamp the broker sets; the
    records compared where the broker rebuilt the batch (another
    compression.type, inner offsets not 0, 1, 2, ...) or the log cleaner
    compacted it since; and the hop that changed it said: client, broker,
    fetch, or none.  A topic name Kafka refuses is never looked up in
    LOGDIR: its batch is not compared, and says so.

    Exit status: 0 every batch is intact (and with --against agrees with the
    disk where the disk holds it: a batch retention or compaction took, or
    of a partition not in LOGDIR, is counted unmatched), 1 damage found (a
    topic name Kafka refuses among it), or with --against a hop, 2 usage or
    I/O error.
    """
    _keep_freed_memory()
    from kbatch.output.values import counted
    from kbatch.output.visible import visible
    from kbatch.ops.pcap import DEFAULT_PORTS, Extraction, NotACapture, inspect_capture

    if importlib.util.find_spec("dpkt") is None:   # (imported where it reads: a plain capture needs it not)
        # (from the checkout: the kbatch on PyPI is another project, and 'kbatch[pcap]' would install that one)
        click.echo("kbatch: error: reading captures needs the pcap extra: pip install '.[pcap]' in kbatch's "
                   "checkout (dpkt)", err=True)
        return ExitStatus.TROUBLE
    if output_format == "jsonl":
        from kbatch.render.pcap import JsonlSink
        sink = JsonlSink(sys.stdout, records)
    elif output_format == "json":
        from kbatch.render.pcap import JsonSink
        sink = JsonSink(sys.stdout, records)
    else:
        from kbatch.render.console import make_console
        from kbatch.render.pcap import TableSink
        sink = TableSink(make_console(sys.stdout, no_color=no_color))
    status = ExitStatus.OK
    extraction = Extraction(extract_to) if extract_to is not None else None
    logdir = None
    if against is not None:
        from kbatch.ops.against import LogDir
        logdir = LogDir(against)
    for path in captures:
        try:
            stream = open(path, "rb")
        except OSError as error:
            click.echo(f"kbatch: error: {visible(path)}: cannot read: {visible(error.strerror or str(error))}",
                       err=True)
            status = ExitStatus.TROUBLE
            continue
        with stream:
            try:
                summary = inspect_capture(path, stream, sink, ports=ports or DEFAULT_PORTS, records=records,
                                          deep=deep, extraction=extraction, logdir=logdir)
            except NotACapture as problem:   # said once, as for any input that cannot be read: no table of nothing
                click.echo(f"kbatch: error: {visible(path)}: {visible(str(problem))}", err=True)
                status = ExitStatus.TROUBLE
                continue
        if summary.unreadable is not None:
            click.echo(f"kbatch: error: {visible(path)}: {visible(summary.unreadable)}", err=True)
            status = ExitStatus.TROUBLE
        elif summary.damaged and status is ExitStatus.OK:
            status = ExitStatus.FOUND
    sink.close()
    if extraction is not None:
        from kbatch.cli.options import writing_an_input

        for segment, _ in extraction.segments():   # (known only now: refused before any is written)
            if (why := writing_an_input(segment, captures)) is not None:
                click.echo(f"kbatch: error: --extract {visible(extract_to)}: {why}", err=True)
                extraction.close()
                return ExitStatus.TROUBLE
        try:
            written, failed = extraction.write()
        except OSError as error:
            click.echo(f"kbatch: error: --extract {visible(extract_to)}: {visible(str(error))}", err=True)
            return ExitStatus.TROUBLE
        for segment, failure in failed:   # (each partition's own: the others were written)
            click.echo(f"kbatch: error: --extract {visible(extract_to)}: cannot write {visible(segment)}: "
                       f"{visible(failure.strerror or str(failure))}", err=True)
            status = ExitStatus.TROUBLE
        click.echo(f"kbatch: note: {counted(len(written), 'segment file')} written under {visible(extract_to)}",
                   err=True)
        if extraction.differing:
            click.echo(f"kbatch: note: {counted(extraction.differing, 'batch')} left out, each different from one "
                       "at the same offset of its partition: the first one is written", err=True)
    return status
