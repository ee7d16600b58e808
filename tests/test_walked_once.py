"""``verify-crc --deep`` reads a partition's logs once: the walk verifying each log hands its batches' headers to
the cross-checks (kbatch.walk.headers, kbatch.partition.verify.WalkedLogs), which do not read the log again."""

from __future__ import annotations

import json
import shutil
import struct

import pytest

from kbatch.ops import verify
from kbatch.partition.crosscheck import PartitionCheck, SegmentFiles
from kbatch.partition.verify import WalkedLogs
from kbatch.reading import reader as reader_module
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.reading.summary import FileSummary
from kbatch.walk import parts
from kbatch.walk.headers import BatchHeader, Headers, header_of

from . import handmade
from .helpers import FIXTURES, fixture_id, fixture_paths
from .test_partition_crosscheck import BUILDER, CLEAN

LOGDIR = FIXTURES / "logdir"


@pytest.fixture
def readers_of(monkeypatch):
    """How many readers were made of each file, by its name."""
    made: dict[str, int] = {}
    init = SegmentReader.__init__

    def counted(self, stream, *args, **kwargs):
        name = getattr(stream, "name", None)
        if isinstance(name, str):
            made[name] = made.get(name, 0) + 1
        init(self, stream, *args, **kwargs)

    monkeypatch.setattr(reader_module.SegmentReader, "__init__", counted)
    return made


@pytest.mark.parametrize("directory", [CLEAN, LOGDIR], ids=["partition", "logdir"])
def test_verify_deep_reads_each_log_once(kbatch, readers_of, directory):
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", str(directory))
    assert result.code in (0, 1), result.err
    logs = sorted(str(path) for path in directory.rglob("*.log"))
    assert len(logs) >= 3
    assert {name: count for name, count in readers_of.items() if name.endswith(".log")} == dict.fromkeys(logs, 1)
    assert any(json.loads(line).get("file", "").endswith("(cross-checks)") for line in result.out.splitlines())


def test_the_broken_partitions_are_read_once_and_their_findings_stand(kbatch, readers_of, tmp_path, monkeypatch):
    broken = BUILDER.build_broken(CLEAN, tmp_path)
    for directory in sorted(item["directory"] for item in broken.values()):
        readers_of.clear()
        fed = kbatch("verify-crc", "--deep", "--format", "jsonl", directory)
        assert fed.code in (0, 1), fed.err
        assert max(count for name, count in readers_of.items() if name.endswith(".log")) == 1
        # the same run with no walk feeding the checks: each reads its logs itself
        readers_of.clear()
        with monkeypatch.context() as patched:
            patched.setattr(WalkedLogs, "findings", lambda self, directory: None)
            alone = kbatch("verify-crc", "--deep", "--format", "jsonl", directory)
        assert max(count for name, count in readers_of.items() if name.endswith(".log")) == 2
        assert (fed.code, fed.out) == (alone.code, alone.out)


def _own_headers(path) -> list[BatchHeader]:
    """The headers the cross-checks read of a log themselves (PartitionCheck.run)."""
    check = PartitionCheck(str(path.parent))
    with open(path, "rb") as stream:
        return list(check._headers(SegmentFiles(0, str(path)), SegmentReader(stream, ReadOptions())))


def _walked_headers(path, jobs: int = 1) -> list[BatchHeader]:
    headers = Headers()
    summary = FileSummary(str(path), path.stat().st_size)
    with open(path, "rb", buffering=0) as stream:
        for _ in verify.verify_file(str(path), stream, summary, verify.VerifyOptions(deep=True, jobs=jobs),
                                    headers=headers):
            pass
    return headers.taken


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_the_walk_hands_over_the_headers_the_check_reads(path):
    assert _walked_headers(path) == _own_headers(path)


@pytest.mark.parametrize("path", [path for path in fixture_paths() if path.stat().st_size >= 256], ids=fixture_id)
def test_the_walk_in_parts_hands_over_the_headers_the_check_reads(monkeypatch, path):
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    assert _walked_headers(path, jobs=3) == _own_headers(path)


TIME = 1_700_000_000_000


def test_headers_of_the_batches_a_run_took():
    first = handmade.batch(5, [(b"k", b"v"), (None, b"w")], transactional=True, producer_id=7, producer_epoch=1,
                           base_sequence=3, leader_epoch=4)
    second = handmade.batch(7, [(None, b"x")])
    data = b"\xff" * 10 + first + second + b"\xff"
    headers = Headers()
    headers.run(memoryview(data), 10, 10 + len(first) + len(second), 1000)
    assert headers.taken == [
        BatchHeader(1010, len(first), 2, 5, 6, 2, TIME, 4, 7, 1, 3, 1, False, True),
        BatchHeader(1010 + len(first), len(second), 2, 7, 7, 1, TIME, 0, -1, -1, -1, 0, False, False)]
    assert headers.taken[0].last_sequence == 4
    assert headers.taken[1].last_sequence == -1
    # a part's process sends them back as plain tuples; the parent makes them BatchHeaders again
    plain = Headers(plain=True)
    plain.run(memoryview(data), 10, 10 + len(first) + len(second), 1000)
    assert [type(header) for header in plain.taken] == [tuple, tuple]
    again = Headers()
    again.extend(plain.taken)
    assert again.taken == headers.taken
    assert [type(header) for header in again.taken] == [BatchHeader, BatchHeader]
    handed: list = []
    passed_on = Headers(handed.append)
    passed_on.run(memoryview(data), 10, 10 + len(first) + len(second), 1000)
    passed_on.extend(plain.taken[:1])
    assert (passed_on.taken, handed) == ([], headers.taken + headers.taken[:1])


def _read_one(data: bytes, options: ReadOptions):
    import io

    return next(item for item in SegmentReader(io.BytesIO(data), options).walk(0, len(data)))


@pytest.mark.parametrize("records", [True, False], ids=["decoded", "loaded"])
def test_the_header_of_a_producers_control_batch_holds_its_marker(records):
    data = handmade.batch(9, [handmade.end_marker("ABORT", 3)], control=True, transactional=True, producer_id=7,
                          producer_epoch=2, timestamp=TIME + 5)
    batch = _read_one(data, ReadOptions(records=records))
    loaded = []

    def load(batch):
        loaded.append(batch.pos)
        from kbatch.reading.v2 import load_records
        load_records(batch, memoryview(data)[batch.payload_pos:batch.payload_pos + batch.payload_size],
                     reader_module.Decompressor())

    header = header_of(batch, load)
    assert loaded == ([] if records else [0])
    assert header[:14] == (0, len(data), 2, 9, 9, 1, TIME + 5, 0, 7, 2, -1, 0, True, True)
    assert (header.marker.outcome, header.marker.marker.coordinator_epoch) == ("ABORT", 3)
    assert header.marker_timestamp == TIME + 5


def test_a_control_batch_of_no_producer_has_no_marker():
    data = handmade.batch(9, [handmade.end_marker("COMMIT", 1)], control=True)
    header = header_of(_read_one(data, ReadOptions(records=True)))
    assert (header.is_control, header.marker, header.marker_timestamp) == (True, None, None)


def test_a_log_walked_out_of_turn_is_checked_alone(tmp_path):
    partition = tmp_path / "orders-0"
    shutil.copytree(CLEAN, partition)
    logs = sorted(partition.glob("*.log"))
    walked = WalkedLogs([str(partition)], 0)
    assert walked.headers_for(str(logs[1])) is None     # the second before the first
    assert walked.headers_for(str(logs[0])) is None     # and then none is fed
    assert walked.findings(str(partition)) is None
    assert walked.headers_for(str(tmp_path / "other.log")) is None


def test_logs_walked_in_turn_give_the_checks_findings(tmp_path):
    partition = tmp_path / "orders-0"
    shutil.copytree(CLEAN, partition)
    index = partition / "00000000000000000027.index"
    data = bytearray(index.read_bytes())
    data[4:8] = struct.pack(">i", 5)   # the first entry's position inside a batch
    index.write_bytes(bytes(data))
    walked = WalkedLogs([str(partition)], 64 * 1024 * 1024)
    for number, log in enumerate(sorted(partition.glob("*.log"))):
        headers = walked.headers_for(str(log))
        assert headers is not None
        for header in _walked_headers(log):
            headers.take(header)
        assert headers.taken == []   # each went to the check as it came
        walked.walked(str(log), log.stat().st_size)
        assert walked.fed[str(partition)] == number + 1
    found = walked.findings(str(partition))
    alone = list(PartitionCheck(str(partition), segments_verified=True).run())
    assert found == alone
    assert [(located.path.rsplit("/", 1)[-1], located.finding.code) for located in found
            if located.finding.is_damage] == [("00000000000000000027.index", "index-not-batch-start")]
