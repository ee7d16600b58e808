"""kbatch replicas reads each copy as verify-crc does: the CRC run takes the clean v2 batches' headers, the full
reader reads the rest.  The oracle is the full SegmentReader alone: the Heads are what its Batches say, in file
order, whatever the chunking, the read-ahead and the damage; and the run, not the reader, takes the clean ones."""

from __future__ import annotations

import os

import pytest

from kbatch.format.findings import Finding
from kbatch.partition import replicas
from kbatch.partition.replicas import Head, Region, compare, load_copy, walk_copy
from kbatch.reading.reader import ReadOptions, SegmentReader
from tests.handmade import batch

from .test_crc_pass import read_ahead, v1_message
from .test_replicas import _records, make_copy

INT_MAX = 2**31 - 1


def _segment() -> tuple[bytes, int]:
    """Clean v2 batches (producers, a sequence wrapping past Integer.MAX_VALUE, epochs) around entries the run
    leaves to the full reader: v1 messages, a batch whose CRC fails, bytes that are no entry; and how many such
    entries the reader reads (the garbage is a range, not an entry)."""
    clean = [batch(0, _records(0, 3, "a"), leader_epoch=0),
             batch(3, _records(3, 4, "b"), leader_epoch=1, producer_id=7, producer_epoch=0,
                   base_sequence=INT_MAX - 1)]
    damaged = bytearray(batch(9, _records(9, 2, "c"), leader_epoch=1))
    damaged[-1] ^= 0x01   # under the CRC
    tail = [batch(11 + 5 * n, _records(11 + 5 * n, 5, "d" * n), leader_epoch=2 + n // 40) for n in range(200)]
    data = b"".join(clean) + v1_message(7, b"legacy") + v1_message(8, b"legacy too") + bytes(damaged) + \
        tail[0] + b"\x00garbage!" * 3 + b"".join(tail[1:])
    return data, 3   # two v1 messages and the damaged batch


def _copy(tmp_path, data: bytes, broker: str = "broker-1") -> replicas.Copy:
    log_dir = os.path.join(tmp_path, broker, "orders-0")
    os.makedirs(log_dir)
    with open(os.path.join(log_dir, "00000000000000000000.log"), "wb") as out:
        out.write(data)
    return load_copy(log_dir)


def _full_readers(copy: replicas.Copy) -> tuple[list[Head | Region], int]:
    path, = replicas.segments(copy.path)
    out: list[Head | Region] = []
    damaged = 0
    with open(path, "rb") as stream:
        for item in SegmentReader(stream, ReadOptions(records=False)):
            if isinstance(item, Finding):
                out.append(Region(path, item))
                damaged += 1
            else:
                out.append(Head.of_batch(path, item))
                damaged += out[-1].damaged
    return out, damaged


@pytest.mark.parametrize("chunk", [None, 4096, 1024])
def test_heads_are_the_full_readers(tmp_path, chunk):
    data, _ = _segment()
    copy = _copy(tmp_path, data)
    expected, damaged = _full_readers(copy)
    if chunk is None:
        got = list(walk_copy(copy))
    else:
        with read_ahead(chunk, chunk // 4):
            got = list(walk_copy(copy))
    assert got == expected
    assert copy.damaged == damaged == 2   # the damaged batch and the garbage range
    assert [(item.pos, item.invalid) for item in got if isinstance(item, Head) and item.invalid] == \
        [(next(head.pos for head in got if isinstance(head, Head) and head.base_offset == 9), "its CRC fails")]
    wrapped = next(head for head in got if isinstance(head, Head) and head.producer_id == 7)
    assert (wrapped.base_sequence, wrapped.last_sequence) == (INT_MAX - 1, 1)   # MAX-1, MAX, 0, 1: DefaultRecordBatch.lastSequence


def test_the_run_takes_the_clean_batches(tmp_path, monkeypatch):
    data, left_to_the_reader = _segment()
    copy = _copy(tmp_path, data)
    read = []
    of_batch = Head.of_batch
    monkeypatch.setattr(Head, "of_batch", classmethod(lambda cls, segment, item: read.append(item.pos) or
                                                      of_batch(segment, item)))
    got = [item for item in walk_copy(copy) if isinstance(item, Head)]
    assert len(read) == left_to_the_reader
    assert len(got) == 202 + left_to_the_reader


@pytest.mark.parametrize("recovered", [False, True])
def test_a_report_is_the_same_whatever_the_chunking(tmp_path, recovered):
    # recovered: Kafka's log recovery cuts broker-1 at its damaged batch at 9 (the v1 messages at 7 and 8 before
    # it verify), the rest of its walk only counted; else a clean shutdown leaves every entry to compare
    data, _ = _segment()
    one = make_copy(tmp_path, "broker-1", [data], epochs=[(0, 0)], indexed=not recovered,
                    clean_shutdown=not recovered)
    two = make_copy(tmp_path, "broker-2", [batch(0, _records(0, 3, "a"), leader_epoch=0)] +
                    [batch(11 + 5 * n, _records(11 + 5 * n, 5, "d" * n), leader_epoch=2 + n // 40)
                     for n in range(120)], epochs=[(0, 0)])
    directories = [os.path.join(one, "orders-0"), os.path.join(two, "orders-0")]

    def summary(report):
        return ([(each.base_offset, each.last_offset, each.holders, each.damaged, each.where[1:] if each.where else None)
                 for each in report.divergences],
                [(copy.log_start_offset, copy.log_end_offset, copy.damaged, copy.batch_epochs, copy.truncate_to)
                 for copy in report.copies])

    whole = summary(compare(directories))
    with read_ahead(2048, 512):
        assert summary(compare(directories)) == whole
    divergences, copies = whole
    if recovered:
        assert [first for first, *_ in divergences][:5] == [3, 7, 8, 11, 16]
        assert copies[0][:3] == (0, 9, 2) and copies[1][:3] == (0, 611, 0)
    else:
        assert [first for first, *_ in divergences][:5] == [3, 7, 8, 9, 611]
        assert copies[0][:3] == (0, 1011, 2) and copies[1][:3] == (0, 611, 0)
