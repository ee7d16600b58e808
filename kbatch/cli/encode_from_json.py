"""``kbatch encode-from-json``: Kafka bytes from a JSON description, valid or deliberately broken."""

from __future__ import annotations

import json
import sys

import click

from kbatch.format.codecs import CodecError
from kbatch.ops.encode import SpecError, encode_spec
from kbatch.files.outputs import write_output
from kbatch.cli.options import output_name, refuse_writing_an_input
from kbatch.cli.status import ExitStatus
from kbatch.output.visible import visible


@click.command(epilog="""\b
Examples:
  kbatch dump --format json segment.log | kbatch encode-from-json - -o copy.log   # byte for byte
  kbatch encode-from-json spec.json -o broken.log
  kbatch encode-from-json --batch one-batch.json -o - --hex
  kbatch dump --format json --records a.log > a.json   # edit a.json, then:
  kbatch encode-from-json --rederive a.json -o edited.log
""")
@click.argument("spec", metavar="SPEC.json|-", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", required=True, metavar="OUT|-",
              help="Where the bytes go (written atomically: a temporary file renamed into place); - is stdout.")
@click.option("--batch", "single_batch", is_flag=True, help="SPEC is one batch (or message) object, not a document.")
@click.option("--hex", "hex_output", is_flag=True, help="Write hex text instead of raw bytes.")
@click.option("--rederive", is_flag=True,
              help="Derive every derivable field (CRC, lengths, counts, lastOffsetDelta, maxTimestamp, "
                   "attributes, payload) even where SPEC gives one: for records edited in a dump.")
def encode_from_json(spec, output, single_batch, hex_output, rederive):
    """Write Kafka log bytes (any mix of magic 0, 1 and 2) from JSON; magic 3 writes the v3 proposal
    Kafka never adopted, to look at it.

    The input schema is the output schema of `kbatch dump --format json`
    (kbatch/schema/kbatch-json-v1.schema.json): a field that is present is
    written as given, an absent one is derived.  So a dump encodes back to
    the same bytes, and a spec can hold a wrong CRC, a lying length or count,
    an over-long varint ({"hex": ...} for a varint field), "truncate_to": N,
    or {"raw": {"hex": ...}} entries spliced between batches.

    Keys, values and header values are {"utf8": ...}, {"hex": ...} or
    {"base64": ...}, or null.

    Exit status: 0 written, 2 the JSON does not describe Kafka bytes (nothing
    is written then) or an I/O error.
    """
    refuse_writing_an_input(output, [spec])
    try:
        text = sys.stdin.read() if spec == "-" else open(spec, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as error:
        click.echo(f"kbatch: cannot read {visible(spec)}: {getattr(error, 'strerror', None) or error}", err=True)
        return ExitStatus.TROUBLE
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        # (json's message for a raw control character in a string is "Invalid control character at": the
        # position it ends with is the line and column given first)
        reason = error.msg.removesuffix(" at")
        click.echo(f"kbatch: {visible(spec)} is not JSON: line {error.lineno} column {error.colno}: {reason}", err=True)
        return ExitStatus.TROUBLE
    except RecursionError:
        click.echo(f"kbatch: {visible(spec)}: the JSON nests too deeply (a kbatch document is a few levels deep)", err=True)
        return ExitStatus.TROUBLE
    try:
        data = encode_spec(document, single_batch=single_batch, rederive=rederive)
    except SpecError as error:
        click.echo(f"kbatch: {visible(spec)}: {error}", err=True)
        return ExitStatus.TROUBLE
    except RecursionError:   # a value nested deep where bytes or a number belong
        click.echo(f"kbatch: {visible(spec)}: a value nests too deeply (a kbatch document is a few levels deep)", err=True)
        return ExitStatus.TROUBLE
    except CodecError as error:
        click.echo(f"kbatch: {visible(spec)}: cannot compress: {error.detail}", err=True)
        return ExitStatus.TROUBLE
    if hex_output:
        data = (data.hex() + "\n").encode("ascii")
    try:
        write_output(output, [data])
    except BrokenPipeError:
        raise   # stdout's reader went away: the program ends with 141 (kbatch.__main__)
    except OSError as error:
        click.echo(f"kbatch: cannot write {output_name(output)}: {error.strerror or error}", err=True)
        return ExitStatus.TROUBLE
    return ExitStatus.OK
