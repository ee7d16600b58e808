"""Files beside a segment of any size are read a window at a time: memory stays bounded, a file larger than
Kafka can read is a finding on that file, and the rest of the partition is still checked.

The big files are made sparse or generated here; peak memory is what tracemalloc sees of Python's
allocations while one file or one partition is read (the windows' buffers are a fixed few MiB beside it).
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import tracemalloc

import crc32c

from kbatch.files import kinds
from kbatch.partition.crosscheck import PartitionCheck
from kbatch.partition.sidecars import MAX_BINARY_SIZE, Entry, read_sidecar

from .test_partition_files import PARTITION

CLEAN = PARTITION / "orders-0"
MiB = 1 << 20


def _copy(tmp_path):
    copy = tmp_path / "orders-0"
    shutil.copytree(CLEAN, copy)
    return copy


def _peak(run) -> tuple[object, int]:
    """What ``run()`` returns and the most memory Python held while it ran, in bytes."""
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _check(directory) -> list:
    return [(located.path.rsplit("/", 1)[-1], located.finding.code)
            for located in PartitionCheck(str(directory), segments_verified=True).run()]


def test_an_index_larger_than_kafka_maps_is_a_finding_and_the_partition_is_still_checked(tmp_path):
    copy = _copy(tmp_path)
    index = copy / "00000000000000000027.index"
    with open(index, "r+b") as stream:   # sparse: its entries, then a hole to 2 GiB
        stream.truncate(MAX_BINARY_SIZE + 1)
    found, peak = _peak(lambda: _check(copy))
    assert ("00000000000000000027.index", "too-large") in found
    # the other files are held against the log as before
    assert ("00000000000000000053.index", "zero-tail") in found
    assert peak < 16 * MiB, peak


def test_a_large_sparse_index_is_read_in_bounded_memory(tmp_path):
    copy = _copy(tmp_path)
    index = copy / "00000000000000000053.index"
    with open(index, "r+b") as stream:   # the active segment's index preallocated to 256 MiB
        stream.truncate(256 * MiB)
    found, peak = _peak(lambda: _check(copy))
    assert found == [("00000000000000000053.index", "zero-tail"), ("00000000000000000053.timeindex", "zero-tail")]
    assert peak < 16 * MiB, peak


def test_a_long_leader_epoch_checkpoint_is_held_against_the_log_in_bounded_memory(tmp_path):
    copy = _copy(tmp_path)
    lines = 50_000   # the log's epochs 0, 2, 5 and many more after them (epochs of other batches, say)
    body = b"0 0\n2 25\n5 53\n" + b"".join(b"%d %d\n" % (epoch, 100 + epoch) for epoch in range(6, lines + 3))
    (copy / "leader-epoch-checkpoint").write_bytes(b"0\n%d\n" % lines + body)
    found, peak = _peak(lambda: _check(copy))
    assert [code for _, code in found if code != "zero-tail"] == []
    assert peak < 8 * MiB, peak


def test_a_count_line_of_fifty_million_digits_is_read_up_to_its_limit(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_bytes(b"0\n" + b"7" * 50_000_000 + b"\n")

    def read():
        with open(path, "rb") as stream:
            return [finding.code for item in read_sidecar(kinds.OFFSET_CHECKPOINT, stream)
                    for finding in (item.findings if hasattr(item, "findings") else [item])]

    codes, peak = _peak(read)
    assert codes == ["bad-checkpoint"]
    assert peak < 8 * MiB, peak


def test_a_large_producer_snapshot_is_read_in_bounded_memory(tmp_path):
    copy = _copy(tmp_path)
    count = 100_000   # 4.6 MiB of producers the log does not have, with a valid CRC
    body = struct.pack(">i", count) + b"".join(
        struct.pack(">qhiqiqiq", 1000 + n, 0, 5, 10, 0, 1_700_000_000_000, -1, -1) for n in range(count))
    (copy / "00000000000000000053.snapshot").write_bytes(struct.pack(">hI", 1, crc32c.crc32c(body)) + body)
    found, peak = _peak(lambda: _check(copy))
    assert ("00000000000000000053.snapshot", "crc-mismatch") not in found
    assert peak < 8 * MiB, peak


class _Shrinking(io.BytesIO):
    """A file that was larger when opened than it is when read (truncated meanwhile)."""

    def seek(self, pos, whence=0):
        return super().seek(pos, whence) + (100 if whence == 2 else 0)


def test_a_file_that_shrinks_while_read_ends_there():
    entries = struct.pack(">ii", 0, 0) + struct.pack(">ii", 3, 100)
    items = list(read_sidecar(kinds.OFFSET_INDEX, _Shrinking(entries), 0))
    assert [item.fields["position"] for item in items if isinstance(item, Entry)] == [0, 100]
    assert [(item.code, item.pos) for item in items if not isinstance(item, Entry)] == [("truncated", 16)]


def test_verify_crc_deep_reports_the_too_large_file_and_checks_the_rest(tmp_path, kbatch):
    copy = _copy(tmp_path)
    with open(copy / "00000000000000000000.timeindex", "r+b") as stream:
        stream.truncate(MAX_BINARY_SIZE + 1)
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(copy))
    findings = [json.loads(line) for line in result.out.splitlines()]
    codes = [(f["file"].rsplit("/", 1)[-1], f["code"]) for f in findings if f["type"] == "finding"]
    assert result.code == 1
    assert ("00000000000000000000.timeindex", "too-large") in codes
    assert ("00000000000000000053.index", "zero-tail") in codes
