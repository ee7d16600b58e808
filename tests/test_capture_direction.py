"""``kbatch pcap`` on what a capture's TCP does not say outright: which side of a connection is the client, which
of two differing copies of the same bytes the receiver took, and what zero bytes ending a message's records are."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("dpkt")

from tests import handmade  # noqa: E402
from tests.capture_builder import (Capture, fetch_response, produce, produce_response, request,  # noqa: E402
                                   response)

TWO = handmade.batch(0, [(b"k1", b"v1"), (b"k2", b"v2")], producer_id=7, producer_epoch=0, base_sequence=0)


def _write(tmp_path, capture: Capture, name: str = "traffic.pcap") -> str:
    path = tmp_path / name
    path.write_bytes(capture.pcap())
    return str(path)


def _lines(kbatch, path: str, expect: int, *options: str) -> list[dict]:
    return [json.loads(line) for line in kbatch("pcap", "--format", "jsonl", *options, path, expect=expect).out
            .splitlines()]


def _findings(lines: list[dict]) -> list[tuple]:
    return [(line["code"], line["severity"], line["packet"], line["actual"]) for line in lines
            if line["type"] == "finding"]


# -- zero bytes ending a captured Records field -------------------------------------------------------------

def _fetched(records: bytes) -> Capture:
    return (Capture().send(request("Fetch", 12, 12, b"", flexible=True))
            .answer(response(12, fetch_response(12, {"orders": {0: records}}), flexible=True)))


@pytest.mark.parametrize("cut", [3, 5, 11])
def test_a_fetch_cut_inside_a_batchs_leading_zero_bytes_is_a_partial_batch(tmp_path, kbatch, cut):
    """The next batch's base offset starts with zero bytes: cut there, the Records field ends in zeros.  A message
    holds what its sender framed, no preallocated segment's unused end: the consumer's reader stops at a size field
    not yet whole (ByteBufferLogInputStream.nextBatchSize: fewer than LOG_OVERHEAD bytes).  It was zero-tail."""
    path = _write(tmp_path, _fetched(TWO + bytes(cut)))
    lines = _lines(kbatch, path, 0)
    assert _findings(lines) == [
        ("partial-batch", "info", 4, f"{cut} bytes, then the end of the input (the fetch's size limit cut it)")]
    assert [line["pos"] for line in lines if line["type"] == "finding"] == [len(TWO)] == [83]
    assert lines[-1]["batch_count"] == 1


def test_twelve_zero_bytes_ending_a_fetch_are_a_size_of_0_kafka_rejects(tmp_path, kbatch):
    """With the size field whole, a size below LegacyRecord.RECORD_OVERHEAD_V0 (14) is a CorruptRecordException
    in the consumer's reader: damage, not a batch the fetch's limit cut."""
    lines = _lines(kbatch, _write(tmp_path, _fetched(TWO + bytes(12))), 1)
    assert _findings(lines) == [("bad-length", "error", 4, "0 (12 zero bytes end the records)")]
    [finding] = [line for line in lines if line["type"] == "finding"]
    assert (finding["pos"], finding["size"], finding["field"], finding["expected"]) == (
        83 + 8, 4, "size", "at least 14 (LegacyRecord.RECORD_OVERHEAD_V0)")


def test_zero_bytes_ending_a_produce_request_are_a_batch_cut_short(tmp_path, kbatch):
    """A Produce request's batch cut short is damage (no size limit cuts it), zeros or not."""
    capture = (Capture().send(request("Produce", 9, 11, produce(9, {"orders": {0: TWO + bytes(3)}}), flexible=True))
               .answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True)))
    lines = _lines(kbatch, _write(tmp_path, capture), 1)
    assert _findings(lines) == [("truncated", "error", 3, "3 bytes, then the end of the input")]


def test_a_segments_zero_tail_is_still_one(tmp_path, kbatch):
    """On disk zeros ending a segment are what a broker's preallocation leaves (log.preallocate): unchanged."""
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(TWO + bytes(3))
    out = kbatch("verify-crc", "--format", "jsonl", str(segment), expect=0).out
    assert [(line["code"], line["size"]) for line in map(json.loads, out.splitlines())
            if line.get("type") == "finding"] == [("zero-tail", 3)]
