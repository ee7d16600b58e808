"""``kbatch pcap`` on a connection whose ports are no broker's (not 9092, no --port) and whose capture begins
mid-connection with the broker's response: the frames tell which side is the client (a request of a known API
key and version on one side, answered -- its correlation id -- by the other), said as a guess; where nothing
tells, the connection is said not to be read."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("dpkt")

from tests import handmade  # noqa: E402
from tests.capture_builder import Capture, produce, produce_response, request, response  # noqa: E402

TWO = handmade.batch(0, [(b"k1", b"v1"), (b"k2", b"v2")], producer_id=7, producer_epoch=0, base_sequence=0)
CLIENT, BROKER = "127.0.0.1:40000 -> 127.0.0.1:19092", "127.0.0.1:19092 -> 127.0.0.1:40000"


def _mid_connection(version: int, first: int, *, flexible: bool, rest: bool = True) -> Capture:
    """Begun after the handshake (SYN and SYN-ACK left out) with the broker's response ``first`` to a request sent
    before; then a Produce request (correlation id ``first`` + 1) and its response."""
    capture = Capture(port=19092)
    capture.answer(response(first, produce_response(version, {"orders": {0: (0, 498)}}), flexible=flexible))
    if rest:
        capture.send(request("Produce", version, first + 1, produce(version, {"orders": {0: TWO}}), flexible=flexible))
        capture.answer(response(first + 1, produce_response(version, {"orders": {0: (0, 500)}}), flexible=flexible))
    return capture.drop(0).drop(0)


def _lines(kbatch, tmp_path, capture: Capture, expect: int) -> list[dict]:
    path = tmp_path / "traffic.pcap"
    path.write_bytes(capture.pcap())
    return [json.loads(line) for line in kbatch("pcap", "--format", "jsonl", str(path), expect=expect).out.splitlines()]


def _findings(lines: list[dict]) -> list[tuple]:
    return [(line["code"], line["packet"], line["connection"], line["actual"]) for line in lines
            if line["type"] == "finding"]


def _guessed(first: int) -> str:
    return ("which side is the client was guessed: neither port is a broker's (--port) and the connection's SYN was "
            f"not captured; {CLIENT} is taken for the client's (its request with correlation id {first + 1} was "
            "answered: the other side's frame begins with that id)")


@pytest.mark.parametrize("version, first, flexible", [(9, 10, True), (8, 3, False)])
def test_a_connection_begun_with_a_response_is_read_the_right_way_round(tmp_path, kbatch, version, first, flexible):
    """Before: the flexible one was dropped unsaid (its response's bytes read as no request header: 0 batches,
    exit 0); the other (a v8 response of correlation id 3 reads as a Produce v3 request header) was read the wrong
    way round -- the response a request (bad-kafka-message), the request a response, exit 1, no batch."""
    lines = _lines(kbatch, tmp_path, _mid_connection(version, first, flexible=flexible), 0)
    assert _findings(lines) == [
        ("capture-problem", 1, BROKER, _guessed(first)),
        ("capture-problem", 1, BROKER, f"a response with correlation id {first}, whose request was not captured")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["connection"], batch["packet"], batch["correlation_id"], batch["client_id"], batch["crc_valid"],
            batch["assigned_offset"]) == (CLIENT, 2, first + 1, "producer-1", True, 500)
    assert (lines[-1]["batch_count"], lines[-1]["produced"], lines[-1]["errors"]) == (1, 1, 0)


def test_a_response_with_nothing_from_the_other_side_is_said_not_read(tmp_path, kbatch):
    """Nothing in the bytes tells (the other side sent nothing captured): not read, as before, but said with its
    connection, where before it was dropped without a word."""
    lines = _lines(kbatch, tmp_path, _mid_connection(9, 10, flexible=True, rest=False), 0)
    assert _findings(lines) == [(
        "capture-problem", 1, BROKER,
        "this connection is not read: neither port is a broker's (--port), its first bytes begin a Kafka frame but "
        "read as no request header, and its other side sent nothing captured")]
    assert lines[-1]["batch_count"] == 0
