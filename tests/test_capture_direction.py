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


# -- which side is the client ---------------------------------------------------------------------------------

def _flipped(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0x01
    return bytes(out)


BAD = _flipped(TWO, len(TWO) - 3)   # a record's byte changed: the batch's CRC fails


def _begun_mid_connection(capture: Capture) -> Capture:
    """The capture begun after the connection's handshake, with a response to a request sent before it: then a
    Produce request whose batch's CRC fails, and its response."""
    capture.answer(response(10, produce_response(9, {"orders": {0: (0, 498)}}), flexible=True))
    capture.send(request("Produce", 9, 11, produce(9, {"orders": {0: BAD}}), flexible=True))
    capture.answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
    return capture.drop(0).drop(0)


def test_a_capture_begun_with_a_brokers_response_is_read_the_right_way_round(tmp_path, kbatch):
    """The broker's port says which side the client is: a broker reads a request header from every receive on a
    connection it accepted (SocketServer's processCompletedReceives), whoever the capture heard first.  Read the
    other way round, the response was a request with "the ClientId's length 29284", the request a response
    "whose request was not captured", and the damaged batch was never read: 0 batches, exit 0."""
    path = _write(tmp_path, _begun_mid_connection(Capture()))
    lines = _lines(kbatch, path, 1)
    assert _findings(lines) == [
        ("capture-problem", "warning", 1, "a response with correlation id 10, whose request was not captured")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["connection"], batch["packet"], batch["correlation_id"], batch["crc_valid"], batch["error_code"],
            batch["assigned_offset"]) == ("127.0.0.1:40000 -> 127.0.0.1:9092", 2, 11, False, 0, 500)
    assert [finding["code"] for finding in batch["findings"]] == ["crc-mismatch"]
    assert (lines[-1]["batch_count"], lines[-1]["produced"]) == (1, 1)


def test_the_side_that_sent_the_syn_is_the_client_where_both_ports_are_brokers(tmp_path, kbatch):
    """Both ends on a broker port given: the handshake says which side opened the connection (RFC 9293 3.5), and
    the client's first request lost from the capture does not make the broker's response the first request."""
    capture = Capture(client_port=9093)
    capture.send(request("Produce", 9, 10, produce(9, {"orders": {0: TWO}}), flexible=True))
    capture.answer(response(10, produce_response(9, {"orders": {0: (0, 498)}}), flexible=True))
    capture.send(request("Produce", 9, 11, produce(9, {"orders": {0: BAD}}), flexible=True))
    capture.answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
    path = _write(tmp_path, capture.drop(2))
    lines = _lines(kbatch, path, 1, "--port", "9092", "--port", "9093")
    assert _findings(lines) == [
        ("capture-problem", "warning", 3, "a response with correlation id 10, whose request was not captured"),
        ("capture-problem", "warning", 5, "132 bytes of the stream never captured (the other side acknowledged them)")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["connection"], batch["packet"], batch["crc_valid"], batch["assigned_offset"]) == (
        "127.0.0.1:9093 -> 127.0.0.1:9092", 4, False, 500)
    assert "guessed" not in json.dumps(lines)


def test_with_neither_port_nor_syn_to_tell_the_first_speaker_is_the_client_and_that_is_said(tmp_path, kbatch):
    capture = Capture(client_port=9093)
    capture.send(request("Produce", 9, 11, produce(9, {"orders": {0: BAD}}), flexible=True))
    capture.answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
    path = _write(tmp_path, capture.drop(0).drop(0))
    lines = _lines(kbatch, path, 1, "--port", "9092", "--port", "9093")
    assert _findings(lines) == [("capture-problem", "warning", 1,
                                 "which side is the client was guessed: neither port is a broker's (--port) and the "
                                 "connection's SYN was not captured; 127.0.0.1:9093 -> 127.0.0.1:9092 is taken for "
                                 "the client's (the side that spoke first)")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["packet"], batch["crc_valid"], batch["assigned_offset"]) == (1, False, 500)


def test_a_guessed_first_speaker_whose_first_frame_is_no_request_is_taken_for_the_broker(tmp_path, kbatch):
    path = _write(tmp_path, _begun_mid_connection(Capture(client_port=9093)))
    lines = _lines(kbatch, path, 1, "--port", "9092", "--port", "9093")
    assert _findings(lines) == [
        ("capture-problem", "warning", 1,
         "which side is the client was guessed: neither port is a broker's (--port) and the connection's SYN was "
         "not captured; 127.0.0.1:9093 -> 127.0.0.1:9092 is taken for the client's (the other side: the first to "
         "speak sent no request header)"),
        ("capture-problem", "warning", 1, "a response with correlation id 10, whose request was not captured")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["packet"], batch["crc_valid"], batch["assigned_offset"]) == (2, False, 500)
