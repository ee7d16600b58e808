#!/usr/bin/env python3
"""Generate a v2 segment with a run of zero bytes between two of its batches: a damaged range to recover from.

The batches are make_segment.py's (kafka-python's encoder, offsets running on); ``--hole`` zero bytes
stand between the first ``--before`` bytes of batches and the rest.  The hole is written as a sparse
range (a seek past it), so a 2 GiB hole costs no disk, and reads back as zeros all the same.  Kafka
leaves such a range where a preallocated segment was not filled before a crash and the log went on
after it (a copy taken of a disk the broker had not flushed), which is what recovery resyncs over.

Examples::

    python benchmarks/make_hole.py --hole 256M --out /tmp/hole.log
    python benchmarks/make_hole.py --hole 2G --before 1M --after 1M --out /tmp/hole2g.log
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_segment import build_templates, parse_size, write_segment  # noqa: E402


def write_hole_segment(path: str, before: int, hole: int, after: int, seed: int = 1) -> dict:
    """Batches (``before`` bytes at most), ``hole`` zero bytes, batches (``after`` bytes at most)."""
    templates = build_templates(seed, "none", 16 * 1024, 16)
    head = write_segment(path, before, templates, seed)
    tail_path = path + ".tail"
    tail = write_segment(tail_path, after, templates, seed + 1, base_offset=head["next_offset"])
    with open(path, "r+b") as out, open(tail_path, "rb") as rest:
        out.seek(head["bytes"] + hole)
        while piece := rest.read(32 * 1024 * 1024):
            out.write(piece)
    os.remove(tail_path)
    return {"path": path, "hole_pos": head["bytes"], "hole_size": hole, "resumes_at": head["bytes"] + hole,
            "bytes": head["bytes"] + hole + tail["bytes"], "batches": head["batches"] + tail["batches"]}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hole", type=parse_size, default=parse_size("256M"), help="zero bytes (default 256M)")
    parser.add_argument("--before", type=parse_size, default=parse_size("1M"), help="batches before (default 1M)")
    parser.add_argument("--after", type=parse_size, default=parse_size("1M"), help="batches after (default 1M)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    result = write_hole_segment(args.out, args.before, args.hole, args.after, args.seed)
    print(f"wrote {result['path']}: {result['bytes']} bytes, {result['batches']} batches, "
          f"{result['hole_size']} zero bytes at {result['hole_pos']}", file=sys.stderr)
    return result


if __name__ == "__main__":
    main()
