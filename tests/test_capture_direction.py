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


def test_with_no_port_nor_syn_to_tell_the_answered_side_is_the_client_and_that_is_said(tmp_path, kbatch):
    """Both ends on ports given as brokers' (--port): the ports tell nothing, and the warning says which way."""
    capture = Capture(client_port=9093)
    capture.send(request("Produce", 9, 11, produce(9, {"orders": {0: BAD}}), flexible=True))
    capture.answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
    path = _write(tmp_path, capture.drop(0).drop(0))
    lines = _lines(kbatch, path, 1, "--port", "9092", "--port", "9093")
    assert _findings(lines) == [("capture-problem", "warning", 1,
                                 "which side is the client was guessed: both ports are brokers' (--port) and the "
                                 "connection's SYN was not captured; 127.0.0.1:9093 -> 127.0.0.1:9092 is taken for "
                                 "the client's (its request with correlation id 11 was answered: the other side's "
                                 "frame begins with that id)")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["packet"], batch["crc_valid"], batch["assigned_offset"]) == (1, False, 500)


def test_a_guessed_first_speaker_whose_first_frame_is_no_request_is_taken_for_the_broker(tmp_path, kbatch):
    path = _write(tmp_path, _begun_mid_connection(Capture(client_port=9093)))
    lines = _lines(kbatch, path, 1, "--port", "9092", "--port", "9093")
    assert _findings(lines) == [
        ("capture-problem", "warning", 1,
         "which side is the client was guessed: both ports are brokers' (--port) and the connection's SYN was "
         "not captured; 127.0.0.1:9093 -> 127.0.0.1:9092 is taken for the client's (its request with correlation "
         "id 11 was answered: the other side's frame begins with that id)"),
        ("capture-problem", "warning", 1, "a response with correlation id 10, whose request was not captured")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["packet"], batch["crc_valid"], batch["assigned_offset"]) == (2, False, 500)


# -- two copies of the same bytes -------------------------------------------------------------------------------

PRODUCE = request("Produce", 9, 11, produce(9, {"orders": {0: TWO}}), flexible=True)
ANSWER = response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True)
AT = len(PRODUCE) - 5   # a byte of the batch's last record (under its CRC) in the request's bytes


def _checksummed(capture: Capture, failing=()) -> Capture:
    """The capture's TCP checksums filled in as a sender's stack fills them (no offloading), but those of the
    packets at the indices ``failing``, made wrong."""
    import dpkt

    packets = []
    for index, raw in enumerate(capture.packets):
        frame = dpkt.ethernet.Ethernet(raw)
        frame.data.data.sum = frame.data.sum = 0
        frame = dpkt.ethernet.Ethernet(bytes(frame))   # (dpkt computes both checksums when it packs them)
        if index in failing:
            frame.data.data.sum ^= 0x0101
        packets.append(bytes(frame))
    capture.packets = packets
    return capture


def _corrupted_then_retransmitted() -> Capture:
    """The request's segment with a bit flipped on the wire, its checksum failing, then the sender's
    retransmission of it at the same sequence number, intact; the broker's answer."""
    capture = Capture()
    capture._packet("client", _flipped(PRODUCE, AT), seq=capture.seq["client"])
    return capture.send(PRODUCE).answer(ANSWER)


def _logdir(tmp_path) -> str:
    directory = tmp_path / "logs" / "orders-0"
    directory.mkdir(parents=True)
    as_written = (500).to_bytes(8, "big") + TWO[8:12] + (5).to_bytes(4, "big") + TWO[16:]
    (directory / "00000000000000000000.log").write_bytes(as_written)
    return str(tmp_path / "logs")


def test_a_copy_whose_checksum_fails_gives_way_to_its_retransmission_whose_holds(tmp_path, kbatch):
    """The receiver discarded the corrupted copy (RFC 9293 3.1) and took the retransmission: the batch the
    broker got is intact, as on its disk.  Read was the first copy: crc BAD, 'hop client', exit 1."""
    path = _write(tmp_path, _checksummed(_corrupted_then_retransmitted(), failing={2}))
    lines = _lines(kbatch, path, 0, "--against", _logdir(tmp_path))
    assert _findings(lines) == [(
        "capture-problem", "warning", 4,
        f"packet 3 and packet 4 carry bytes 0..{len(PRODUCE) - 1} of this direction (sequence number 1000 on) "
        f"differently: in 1 byte, the first at byte {AT}; packet 4's were read, its TCP checksum holding "
        f"and packet 3's failing: a receiving TCP discards a segment whose checksum fails (RFC 9293 3.1)")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["packet"], batch["crc_valid"], batch["assigned_offset"]) == (4, True, 500)
    [match] = [line for line in lines if line["type"] == "match"]
    assert match["hop"] == "none"


def test_a_copy_held_for_its_failing_checksum_is_read_once_the_receiver_acknowledges_it(tmp_path, kbatch):
    """A checksum that fails with no other copy to take (a capture's receive offload can leave one so): held
    until the broker's ACK says it took those bytes, then read -- nothing lost, nothing said."""
    path = _write(tmp_path, _checksummed(Capture().send(PRODUCE).answer(ANSWER), failing={2}))
    lines = _lines(kbatch, path, 0)
    assert _findings(lines) == []
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["packet"], batch["crc_valid"], batch["assigned_offset"]) == (3, True, 500)


def test_a_held_copy_is_read_at_the_capture_end_when_nothing_else_comes(tmp_path, kbatch):
    path = _write(tmp_path, _checksummed(Capture().send(PRODUCE), failing={2}))
    lines = _lines(kbatch, path, 0)
    assert _findings(lines) == []
    assert [(line["packet"], line["crc_valid"], line["error_code"]) for line in lines if line["type"] == "batch"] == [
        (3, True, None)]


def test_where_no_checksum_is_believed_a_differing_retransmission_is_said_and_the_first_kept(tmp_path, kbatch):
    """Checksums unfilled, as a sender's offloading leaves them in a capture on its host: none proves anything, the
    receiver kept the bytes it accepted first (RFC 9293 3.10.7.4).  Before, the second copy was dropped unsaid."""
    path = _write(tmp_path, _corrupted_then_retransmitted())
    lines = _lines(kbatch, path, 1)
    assert _findings(lines) == [(
        "capture-problem", "warning", 4,
        f"packet 3 and packet 4 carry bytes 0..{len(PRODUCE) - 1} of this direction (sequence number 1000 on) "
        f"differently: in 1 byte, the first at byte {AT}; packet 3's were read: a receiving TCP keeps the "
        f"bytes it accepted and trims a later segment to its new ones (RFC 9293 3.10.7.4)")]
    [batch] = [line for line in lines if line["type"] == "batch"]
    assert (batch["packet"], batch["crc_valid"]) == (3, False)


def test_an_identical_retransmission_is_said_nothing_of(tmp_path, kbatch):
    capture = Capture()
    capture._packet("client", PRODUCE, seq=capture.seq["client"])
    path = _write(tmp_path, capture.send(PRODUCE).answer(ANSWER))
    lines = _lines(kbatch, path, 0)
    assert _findings(lines) == []
    assert [line["packet"] for line in lines if line["type"] == "batch"] == [3]


def test_of_two_waiting_copies_that_differ_the_one_whose_checksum_holds_is_taken(tmp_path, kbatch):
    """The request's second half comes first, twice (corrupted with its checksum failing, then intact), then its
    first half: of the two copies waiting, the one the receiver kept."""
    capture = Capture()
    start, half = capture.seq["client"], len(PRODUCE) // 2
    capture._packet("client", _flipped(PRODUCE, AT)[half:], seq=start + half)
    capture._packet("client", PRODUCE[half:], seq=start + half)
    capture._packet("client", PRODUCE[:half], seq=start)
    capture.seq["client"] += len(PRODUCE)
    path = _write(tmp_path, _checksummed(capture.answer(ANSWER), failing={2}))
    lines = _lines(kbatch, path, 0)
    assert _findings(lines) == [(
        "capture-problem", "warning", 4,
        f"packet 3 and packet 4 carry bytes {half}..{len(PRODUCE) - 1} of this direction (sequence number "
        f"{1000 + half} on) differently: in 1 byte, the first at byte {AT}; packet 4's were read, its TCP "
        f"checksum holding and packet 3's failing: a receiving TCP discards a segment whose checksum fails "
        f"(RFC 9293 3.1)")]
    assert [(line["packet"], line["crc_valid"]) for line in lines if line["type"] == "batch"] == [(5, True)]


def test_the_last_bytes_read_are_held_to_a_retransmission_after_megabytes_of_the_other_direction(tmp_path, kbatch):
    """The compiled loop reads the file 4 MiB at a time: a direction's last segment read before its buffer moved
    on is kept for the retransmission that comes after (and held to the generators, as every capture is)."""
    fetch = request("Fetch", 12, 12, b"", flexible=True)
    capture = Capture().send(fetch)
    capture.answer(response(12, fetch_response(12, {"orders": {0: TWO * 60000}}), flexible=True), mss=65483)
    capture._packet("client", _flipped(fetch, len(fetch) - 1), seq=capture.seq["client"] - len(fetch))
    data = capture.pcap()
    assert len(data) > 4 << 20
    lines = _lines(kbatch, _write(tmp_path, capture), 0)
    assert _findings(lines) == [(
        "capture-problem", "warning", len(capture.packets),
        f"packet 3 and packet {len(capture.packets)} carry bytes 0..{len(fetch) - 1} of this direction (sequence "
        f"number 1000 on) differently: in 1 byte, the first at byte {len(fetch) - 1}; packet 3's were read: "
        f"a receiving TCP keeps the bytes it accepted and trims a later segment to its new ones (RFC 9293 3.10.7.4)")]
    assert lines[-1]["batch_count"] == 60000
