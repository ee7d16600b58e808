#!/usr/bin/env python3
"""Generate large (or many tiny) v2 Kafka log segments for the benchmarks, fast.

The batches are NOT encoded by kbatch: a handful of template batches are built
with kafka-python's ``DefaultRecordBatchBuilder`` (the independent encoder the
fixtures use too), and the segment is made of copies of them.  In each copy
only ``baseOffset`` (bytes 0..8, int64 big-endian) is patched so that offsets
run on without gaps: baseOffset(n+1) = baseOffset(n) + lastOffsetDelta(n) + 1,
where lastOffsetDelta is the int32 at byte 23.  baseOffset is outside the
CRC-32C (which covers bytes 21..end), so every copy still verifies.  The
patching is one ``struct.pack_into`` per batch into a large reused buffer,
written out in 32 MiB pieces: a 1 GiB segment takes seconds.

Examples::

    python benchmarks/make_segment.py                       # 1 GiB, uncompressed
    python benchmarks/make_segment.py --size 256M --out benchmarks/data/256m.log
    python benchmarks/make_segment.py --size 1G --codec gzip --out benchmarks/data/gzip.log
    python benchmarks/make_segment.py --tiny-files 10000 --out-dir benchmarks/data/tiny

Sizes: the segment holds whole batches only, so it ends up to one batch short
of ``--size`` (never longer).  ``--batch-bytes`` is the limit on a batch's
uncompressed size, as kafka-python's (and Kafka's) ``batch.size`` is; with
``--codec gzip`` the batches on disk are smaller than that.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import struct
import sys
import time
from dataclasses import dataclass

from kafka.record.default_records import DefaultRecordBatchBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "data", "00000000000000000000.log")

CODECS = {"none": DefaultRecordBatchBuilder.CODEC_NONE, "gzip": DefaultRecordBatchBuilder.CODEC_GZIP,
          "snappy": DefaultRecordBatchBuilder.CODEC_SNAPPY, "lz4": DefaultRecordBatchBuilder.CODEC_LZ4,
          "zstd": DefaultRecordBatchBuilder.CODEC_ZSTD}

_BASE_OFFSET = struct.Struct(">q")      # bytes 0..8: baseOffset (not covered by the CRC)
_LAST_OFFSET_DELTA = struct.Struct(">i")  # bytes 23..27: lastOffsetDelta
_RECORDS_COUNT = struct.Struct(">i")    # bytes 57..61: recordsCount
_LAST_OFFSET_DELTA_POS = 23
_RECORDS_COUNT_POS = 57
_WRITE_CHUNK = 32 * 1024 * 1024

_WORDS = ("order", "payment", "customer", "shipment", "invoice", "cart", "session", "click", "view", "refund",
          "account", "device", "region", "eu-west-1", "us-east-2", "status", "pending", "accepted", "failed",
          "amount", "currency", "EUR", "USD", "sku", "quantity", "price", "user_agent", "Mozilla/5.0")


def parse_size(text: str) -> int:
    """``1G``, ``256M``, ``512k``, ``1GiB``, ``4096``: binary multiples."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 1G, 256M, 64K or a byte count)")
    number, unit = match.groups()
    return int(float(number) * 1024 ** " kmgt".index(unit.lower() or " "))


@dataclass(frozen=True)
class Template:
    data: bytes             # the whole batch, baseOffset 0
    records: int            # recordsCount
    offsets: int            # lastOffsetDelta + 1: how far the next batch's baseOffset moves on


def _key(rng: random.Random) -> bytes | None:
    roll = rng.random()
    if roll < 0.1:
        return None                                            # keyless records happen
    if roll < 0.6:
        return f"user-{rng.randrange(10**8):08d}".encode()     # short ids
    return (f"{rng.choice(_WORDS)}:{rng.getrandbits(128):032x}:"  # uuid-ish composite keys, 42-63 bytes
            f"{rng.choice(_WORDS)}-{rng.randrange(10**6)}").encode()


def _value(rng: random.Random, size: int | None = None) -> bytes:
    """JSON-ish text of 56-202 bytes (or about ``size``): compresses about as well as real event payloads do."""
    fields = [f'"id":"{rng.getrandbits(64):016x}"', f'"ts":{1_700_000_000_000 + rng.randrange(10**9)}']
    low, high = (50, 180) if size is None else (max(1, size * 4 // 5), size * 6 // 5 + 1)
    while sum(map(len, fields)) < rng.randrange(low, high):
        name = rng.choice(_WORDS)
        fields.append(f'"{name}":' + (f'{rng.randrange(10**6)}' if rng.random() < 0.5
                                      else f'"{rng.choice(_WORDS)}"'))
    return ("{" + ",".join(fields) + "}").encode()


def _headers(rng: random.Random) -> list[tuple[str, bytes]]:
    if rng.random() < 0.7:
        return []
    headers = [("traceparent", f"00-{rng.getrandbits(128):032x}-{rng.getrandbits(64):016x}-01".encode())]
    if rng.random() < 0.3:
        headers.append(("content-type", b"application/json"))
    return headers


def build_template(rng: random.Random, codec: int, batch_bytes: int, max_records: int | None,
                   first_timestamp: int, value_bytes: int | None = None) -> Template:
    """One batch as a Java or Python producer would send it (the broker's fields left as produced)."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=batch_bytes)
    timestamp = first_timestamp
    offset = 0
    while max_records is None or offset < max_records:
        if builder.append(offset, timestamp, _key(rng), _value(rng, value_bytes), _headers(rng)) is None:
            break
        offset += 1
        timestamp += rng.randrange(0, 3)
    data = bytes(builder.build())
    (last_offset_delta,) = _LAST_OFFSET_DELTA.unpack_from(data, _LAST_OFFSET_DELTA_POS)
    (records,) = _RECORDS_COUNT.unpack_from(data, _RECORDS_COUNT_POS)
    return Template(data, records, last_offset_delta + 1)


def build_templates(seed: int, codec: str, batch_bytes: int, count: int, compressed_fraction: float = 1.0,
                    max_records: int | None = None, value_bytes: int | None = None) -> list[Template]:
    """``count`` template batches; codec "mixed" takes every codec in turn (none, gzip, snappy, lz4, zstd)."""
    rng = random.Random(seed)
    templates = []
    for index in range(count):
        if codec == "mixed":
            codec_id = list(CODECS.values())[index % len(CODECS)]
        else:
            compressed = codec != "none" and index < round(count * compressed_fraction)
            codec_id = CODECS[codec] if compressed else CODECS["none"]
        templates.append(build_template(rng, codec_id, batch_bytes, max_records, 1_763_800_000_000 + index * 1000,
                                        value_bytes))
    return templates


def write_segment(path: str, size: int, templates: list[Template], seed: int, base_offset: int = 0) -> dict:
    """Copies of the templates, in a seeded random order, offsets running on; at most ``size`` bytes."""
    rng = random.Random(seed ^ 0x5EED)
    order = [rng.randrange(len(templates)) for _ in range(4096)]   # a fixed-length cycle: cheap and varied
    pack = _BASE_OFFSET.pack_into
    buf = bytearray(_WRITE_CHUNK + max(len(t.data) for t in templates))
    fill = written = batches = records = 0
    offset = base_offset
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb", buffering=0) as out:
        while True:
            template = templates[order[batches % len(order)]]
            length = len(template.data)
            if written + fill + length > size:
                break
            buf[fill:fill + length] = template.data
            pack(buf, fill, offset)
            fill += length
            offset += template.offsets
            batches += 1
            records += template.records
            if fill >= _WRITE_CHUNK:
                out.write(memoryview(buf)[:fill])
                written += fill
                fill = 0
        out.write(memoryview(buf)[:fill])
        written += fill
    return {"path": path, "bytes": written, "batches": batches, "records": records,
            "next_offset": offset}


def write_tiny_files(out_dir: str, files: int, batches_per_file: int, templates: list[Template],
                     seed: int) -> dict:
    """``files`` small segments, each named after its base offset as Kafka names them."""
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed ^ 0x7171)
    offset = total_bytes = batches = records = 0
    for _ in range(files):
        parts = []
        name = os.path.join(out_dir, f"{offset:020d}.log")
        for _ in range(batches_per_file):
            template = templates[rng.randrange(len(templates))]
            data = bytearray(template.data)
            _BASE_OFFSET.pack_into(data, 0, offset)
            parts.append(data)
            offset += template.offsets
            batches += 1
            records += template.records
        blob = b"".join(parts)
        with open(name, "wb") as out:
            out.write(blob)
        total_bytes += len(blob)
    return {"path": out_dir, "files": files, "bytes": total_bytes, "batches": batches, "records": records,
            "next_offset": offset}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("1G"),
                        help="segment size (1G, 256M, 64K, bytes); default 1G")
    parser.add_argument("--out", default=DEFAULT_OUT, help=f"segment path (default {DEFAULT_OUT})")
    parser.add_argument("--batch-bytes", type=parse_size, default=16 * 1024,
                        help="uncompressed size limit of a batch, as batch.size (default 16K: ~100 records)")
    parser.add_argument("--codec", choices=sorted(CODECS) + ["mixed"], default="none",
                        help="compression (default none; mixed: every codec in turn)")
    parser.add_argument("--value-bytes", type=int, metavar="N",
                        help="values of about N bytes (default: JSON-ish text of 56-202 bytes)")
    parser.add_argument("--compressed-fraction", type=float, default=1.0, metavar="F",
                        help="with --codec gzip: share of the template batches compressed (default 1.0)")
    parser.add_argument("--templates", type=int, default=16, help="distinct template batches (default 16)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (same seed, same bytes)")
    parser.add_argument("--tiny-files", type=int, metavar="N",
                        help="instead of one segment, write N tiny segments into --out-dir")
    parser.add_argument("--out-dir", help="directory for --tiny-files")
    parser.add_argument("--tiny-batches", type=int, default=1, metavar="B",
                        help="batches per tiny segment (default 1)")
    parser.add_argument("--tiny-records", type=int, default=5, metavar="R",
                        help="records per tiny batch at most (default 5)")
    parser.add_argument("--quiet", "-q", action="store_true")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    if args.tiny_files is not None:
        if not args.out_dir:
            parser.error("--tiny-files needs --out-dir")
        templates = build_templates(args.seed, args.codec, args.batch_bytes, args.templates,
                                    args.compressed_fraction, max_records=args.tiny_records)
        result = write_tiny_files(args.out_dir, args.tiny_files, args.tiny_batches, templates, args.seed)
    else:
        templates = build_templates(args.seed, args.codec, args.batch_bytes, args.templates,
                                    args.compressed_fraction, value_bytes=args.value_bytes)
        if args.size < min(len(t.data) for t in templates):
            parser.error(f"--size {args.size} is smaller than one batch")
        result = write_segment(args.out, args.size, templates, args.seed)
    result["seconds"] = round(time.perf_counter() - started, 3)
    if not args.quiet:
        sizes = sorted(len(t.data) for t in templates)
        print(f"wrote {result['path']}: {result['bytes']} bytes, {result.get('files', 1)} file(s), "
              f"{result['batches']} batches, {result['records']} records "
              f"(batches {sizes[0]}..{sizes[-1]} bytes, codec {args.codec}) in {result['seconds']} s",
              file=sys.stderr)
    return result


if __name__ == "__main__":
    main()
