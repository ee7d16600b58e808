#!/usr/bin/env python3
"""Generate a partition directory whose producer state snapshot holds many producers (KIP-936's problem).

The directory holds a segment of make_segment.py's batches (kafka-python's encoder) and, named after the
segment's next offset, a ``.snapshot`` of ``--producers`` entries laid out as ProducerStateManager.writeSnapshot
writes them (version 1: version int16, CRC-32C uint32 of everything after it, count int32, then 46 bytes an
entry), written here with struct, not with kbatch.  A million producers make a 46 MB snapshot.

Examples::

    python benchmarks/make_snapshot.py --producers 1000000 --out /tmp/bigsnap/orders-0
"""

from __future__ import annotations

import argparse
import os
import struct
import sys

import crc32c

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_segment import build_templates, parse_size, write_segment  # noqa: E402

_HEADER = struct.Struct(">hIi")                 # version, crc, producer_entries_count
_ENTRY = struct.Struct(">qhiqiqiq")             # producer_id, epoch, last_sequence, last_offset, offset_delta,
                                                # timestamp, coordinator_epoch, current_txn_first_offset


def write_snapshot(path: str, producers: int, below_offset: int) -> int:
    """``producers`` entries (producer ids 1000...), each last written below ``below_offset``; the file's size."""
    body = bytearray(producers * _ENTRY.size)
    for n in range(producers):
        _ENTRY.pack_into(body, n * _ENTRY.size, 1000 + n, 0, n % 1000, n % max(below_offset, 1), 0,
                         1_763_800_000_000 + n, -1, -1)
    count = struct.pack(">i", producers)
    crc = crc32c.crc32c(body, crc32c.crc32c(count))
    with open(path, "wb") as out:
        out.write(_HEADER.pack(1, crc, producers))
        out.write(body)
    return _HEADER.size + len(body)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--producers", type=int, default=1_000_000, help="snapshot entries (default 1000000)")
    parser.add_argument("--segment", type=parse_size, default=parse_size("1M"), help="segment size (default 1M)")
    parser.add_argument("--out", required=True, help="the partition directory to write (e.g. .../orders-0)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    segment = write_segment(os.path.join(args.out, f"{0:020d}.log"), args.segment,
                            build_templates(1, "none", 16 * 1024, 16), 1)
    snapshot = os.path.join(args.out, f"{segment['next_offset']:020d}.snapshot")
    size = write_snapshot(snapshot, args.producers, segment["next_offset"])
    print(f"wrote {args.out}: a segment of {segment['bytes']} bytes and {snapshot}: {args.producers} producers, "
          f"{size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
