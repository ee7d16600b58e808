"""``kbatch pcap``: record batches out of packet captures, each held to the rules a segment's batch is."""

from __future__ import annotations

import sys

import click

from kbatch.cli.options import no_color_option
from kbatch.cli.status import ExitStatus


@click.command(epilog="""\b
Examples:
  tcpdump -i any -w kafka.pcap port 9092      # while the trouble happens
  kbatch pcap kafka.pcap
  kbatch pcap --port 19092 --records --format jsonl kafka.pcapng | jq 'select(.type == "batch" and .crc_valid == false)'
""")
@click.argument("captures", nargs=-1, required=True, metavar="CAPTURE...")
@click.option("--port", "ports", type=click.IntRange(1, 65535), multiple=True, metavar="N",
              help="A broker port to read (repeat for more). [default: 9092; any other connection whose first "
                   "bytes read as a Kafka request is read too]")
@click.option("--records", is_flag=True, help="List each batch's records (jsonl, json).")
@click.option("--format", "output_format", type=click.Choice(["table", "jsonl", "json"]), default="table",
              show_default=True, help="table for people, jsonl or json for programs.")
@no_color_option
def pcap(captures, ports, records, output_format, no_color):
    """Read the record batches out of pcap or pcapng captures of Kafka traffic.

    Each TCP connection is reassembled in both directions (out-of-order
    segments, retransmissions, gaps) and cut into Kafka's requests and
    responses, read with Kafka's own message definitions: every record batch
    in a Produce request (every version Kafka trunk defines, topics by name
    or by id), in a Fetch response and in a ShareFetch response goes through
    the reader a segment's bytes do: its CRC, the invariants of verify-crc
    --deep, its records with --records.  Each is shown with its topic (or
    topic id), partition, direction, API version, correlation id, client id,
    packet and connection; a Produce response's error code and the offset the
    broker gave the batch are joined to it.  ApiVersions responses say which
    versions a broker takes.  A cut capture, a TCP gap, traffic that is no
    Kafka (TLS, SASL) and absurd sizes are findings with their packet number
    and connection; the rest of the capture is still read.

    Exit status: 0 every batch is intact, 1 damage found, 2 usage or I/O
    error.
    """
    from kbatch.output.visible import visible
    from kbatch.ops.pcap import DEFAULT_PORTS, CaptureSummary, read_capture

    try:
        import dpkt  # noqa: F401
    except ImportError:
        click.echo("kbatch: error: reading captures needs dpkt: pip install 'kbatch[pcap]'", err=True)
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
    for path in captures:
        try:
            stream = open(path, "rb")
        except OSError as error:
            click.echo(f"kbatch: error: {visible(path)}: cannot read: {visible(error.strerror or str(error))}",
                       err=True)
            status = ExitStatus.TROUBLE
            continue
        summary = CaptureSummary(path)
        with stream:
            for item in read_capture(path, stream, summary, ports=ports or DEFAULT_PORTS, records=records):
                sink.item(path, item)
        sink.done(summary)
        if summary.unreadable is not None:
            click.echo(f"kbatch: error: {visible(path)}: {visible(summary.unreadable)}", err=True)
            status = ExitStatus.TROUBLE
        elif summary.damaged and status is ExitStatus.OK:
            status = ExitStatus.FOUND
    sink.close()
    return status
