"""Bombs and garbage: peak memory and time of every command on hostile inputs.

    python benchmarks/bench_bombs.py                 # all inputs, all commands
    python benchmarks/bench_bombs.py --only wrapper  # inputs whose name holds "wrapper"

Inputs (built in a temporary directory, a few hundred KB each but the random bytes):

* wrapper-v0 / wrapper-v1: one gzip wrapper message holding a million minimal inner messages (~26 MB
  inflated from ~100 KB);
* records-v2: one gzip v2 batch of 2 million 7-byte records (14 MB inflated) whose count is true;
* random-64m: 64 MiB of random bytes (resync through garbage).

Each command runs as a whole process; peak RSS is the child's ru_maxrss.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kbatch.ops.encode import encode_document  # noqa: E402

COMMANDS = [["dump"], ["dump", "--records", "--format", "jsonl"], ["verify-crc"], ["verify-crc", "--deep"],
            ["repair-length"], ["salvage", "-o", "{tmp}/salvaged.log"], ["hexdump-annotate", "--decompressed"],
            ["diff", "{input}"]]


def wrapper_bomb(magic: int, messages: int) -> bytes:
    body = bytes([magic, 0]) + (struct.pack(">q", 1_700_000_000_000) if magic else b"") + b"\xff\xff\xff\xff" * 2
    crc = zlib.crc32(body)
    message = struct.pack(">qiI", 0, 4 + len(body), crc) + body
    inner = b"".join(struct.pack(">q", offset) + message[8:] for offset in range(messages))
    value = gzip.compress(inner, compresslevel=9, mtime=0)
    payload = "ffffffff" + len(value).to_bytes(4, "big").hex() + value.hex()
    return encode_document({"entries": [{"magic": magic, "codec": "gzip", "stored_offset": messages - 1,
                                         "max_timestamp": 1_700_000_000_000, "payload": {"hex": payload}}]})


def record_count_bomb(records: int) -> bytes:
    # DefaultRecord: length 6, attributes 0, timestampDelta 0, offsetDelta (1 byte while < 64), key -1,
    # value -1, no headers: 7 bytes; offsetDelta 0 for all keeps every record 7 bytes (a finding, not a crash).
    record = bytes([12, 0, 0, 0, 1, 1, 0])
    value = gzip.compress(record * records, compresslevel=9, mtime=0)
    return encode_document({"entries": [{"codec": "gzip", "count": records, "last_offset_delta": records - 1,
                                         "payload": {"hex": value.hex()}}]})


def inputs(directory: Path) -> dict[str, Path]:
    made = {
        "wrapper-v0": wrapper_bomb(0, 1_000_000),
        "wrapper-v1": wrapper_bomb(1, 1_000_000),
        "records-v2": record_count_bomb(2_000_000),
        "random-64m": os.urandom(64 * 1024 * 1024),
    }
    paths = {}
    for name, data in made.items():
        paths[name] = directory / f"{name}.log"
        paths[name].write_bytes(data)
    return paths


def run(command: list[str]) -> tuple[float, float, int, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kbatch", *command], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="only inputs whose name holds this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = inputs(Path(tmp))
        print(f"{'input':<12} {'size':>10}  {'command':<34} {'wall s':>7} {'cpu s':>6} {'peak MB':>8} exit")
        for name, path in paths.items():
            if args.only not in name:
                continue
            for command in COMMANDS:
                argv = [part.format(tmp=tmp, input=path) for part in command] + [str(path)]
                # ru_maxrss of children is the largest so far: measure each in a fresh parent.
                wall, cpu, peak, code = _isolated(argv)
                print(f"{name:<12} {path.stat().st_size:>10}  {' '.join(command[:3]):<34} {wall:>7.2f} {cpu:>6.2f} "
                      f"{peak / 1024:>8.0f} {code}", flush=True)


def _isolated(argv: list[str]):
    """run() in a child Python, so ru_maxrss is this command's alone."""
    code = ("import sys, json; sys.path.insert(0, %r); from bench_bombs import run; print(json.dumps(run(%r)))"
            % (str(Path(__file__).resolve().parent), argv))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    import json
    return json.loads(out)


if __name__ == "__main__":
    main()
