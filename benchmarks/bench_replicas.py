"""kbatch replicas on three copies of one partition against verify-crc on one copy: time and peak memory.

    python benchmarks/bench_replicas.py              # 256 MiB copies
    python benchmarks/bench_replicas.py --mib 1024   # the issue's 1 GiB

The copies are one segment of uncompressed v2 batches (100 records of 100 bytes each, tests/handmade.py's
bytes, not kbatch's encoder); the third copy's last 64 batches are rewritten in a later leader epoch, so the
copies diverge at its end and replicas decodes those records only.  Each command runs as a whole process;
peak RSS is the child's ru_maxrss.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.handmade import batch  # noqa: E402

RECORDS = [(b"key-%05d" % i, bytes(100)) for i in range(100)]


def build(root: Path, mib: int) -> list[Path]:
    one = batch(0, RECORDS)
    count = mib * 1024 * 1024 // len(one)
    copies = []
    for broker in (1, 2, 3):
        directory = root / f"broker-{broker}" / "bench-0"
        directory.mkdir(parents=True)
        with open(directory / "00000000000000000000.log", "wb") as out:
            for n in range(count):
                diverged = broker == 3 and n >= count - 64
                out.write(batch(n * 100, RECORDS if not diverged else RECORDS[:99] + [(b"other", b"x")],
                                leader_epoch=1 if diverged else 0))
        epochs = "0 0\n" + (f"1 {(count - 64) * 100}\n" if broker == 3 else "")
        (directory / "leader-epoch-checkpoint").write_text(f"0\n{epochs.count(chr(10))}\n{epochs}")
        copies.append(directory)
    return copies


def timed(args: list[str]) -> tuple[float, int, int]:
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([sys.executable, "-m", "kbatch", *args], stdout=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    elapsed = time.perf_counter() - start
    return elapsed, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), done.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=256)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        copies = build(Path(scratch), options.mib)
        segment = str(copies[0] / "00000000000000000000.log")
        for label, args in (("verify-crc, one copy", ["verify-crc", "-j", "1", segment]),
                            ("replicas, three copies", ["replicas", *map(str, copies)]),
                            ("replicas --format jsonl", ["replicas", "--format", "jsonl", *map(str, copies)])):
            elapsed, rss, status = timed(args)
            print(f"{label:26} {elapsed:7.2f} s  peak RSS {rss / 1024:6.0f} MiB  exit {status}")


if __name__ == "__main__":
    main()
