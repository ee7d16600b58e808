"""Record batches out of captured Produce requests, Fetch and ShareFetch responses (kbatch.capture.batches).

The traffic is written from Kafka's definitions by the fixture writer (tests/capture_builder.py), the batches
by hand (tests/handmade.py); neither is kbatch's encoder.
"""

from __future__ import annotations

import io

import pytest

pytest.importorskip("dpkt")

from tests import handmade  # noqa: E402
from tests.capture_builder import (Capture, api_versions_response, fetch_response, metadata_response,  # noqa: E402
                                   produce, produce_response, request, response, share_fetch_response)
from kbatch.capture.batches import CaptureFinding, CaptureReader, CapturedBatch, CapturedRun  # noqa: E402

TOPIC_ID = "0a8hLp9fQyKg2T1S2cH2kQ"
CLIENT = "127.0.0.1:40000 -> 127.0.0.1:9092"
BROKER = "127.0.0.1:9092 -> 127.0.0.1:40000"


def read(capture: bytes, **options) -> list:
    return list(CaptureReader(**options).read(io.BytesIO(capture)))


def batches(items) -> list[CapturedBatch]:
    return [item for item in items if isinstance(item, CapturedBatch)]


def findings(items) -> list[CaptureFinding]:
    return [item for item in items if isinstance(item, CaptureFinding)]


TWO = handmade.batch(0, [(b"k1", b"v1"), (b"k2", b"v2")], producer_id=7, producer_epoch=0, base_sequence=0)
ONE = handmade.batch(0, [(None, b"third")], producer_id=7, producer_epoch=0, base_sequence=2)


@pytest.mark.parametrize("version", range(3, 14))
def test_every_produce_version_gives_its_batches_joined_to_the_response(version):
    topic = TOPIC_ID if version >= 13 else "orders"
    flexible = version >= 9
    capture = (Capture()
               .send(request("Produce", version, 11, produce(version, {topic: {0: TWO + ONE, 3: ONE}}),
                             flexible=flexible), mss=100)
               .answer(response(11, produce_response(version, {topic: {0: (0, 500), 3: (6, -1)}}),
                                flexible=flexible)))
    items = read(capture.pcap())
    assert findings(items) == []
    found = batches(items)
    assert [(b.topic, b.topic_id, b.partition, b.batch.count, b.error_code, b.assigned_offset) for b in found] == [
        (None if version >= 13 else "orders", TOPIC_ID if version >= 13 else None, 0, 2, 0, 500),
        (None if version >= 13 else "orders", TOPIC_ID if version >= 13 else None, 0, 1, 0, 502),
        (None if version >= 13 else "orders", TOPIC_ID if version >= 13 else None, 3, 1, 6, None)]
    first = found[0]
    assert first.batch.crc_valid and first.raw == TWO and found[1].raw == ONE
    assert (first.api, first.direction, first.request.api_version, first.request.correlation_id,
            first.request.client_id, first.connection, first.packet) == (
        "Produce", "produce", version, 11, "producer-1", CLIENT, 3)


@pytest.mark.parametrize("version", range(4, 19))
def test_every_fetch_version_gives_its_batches_and_a_cut_last_batch_is_partial(version):
    topic = TOPIC_ID if version >= 13 else "orders"
    second = handmade.batch(2, [(b"k", b"v")])
    records = TWO + second + second[:30]   # the broker cut the log at the fetch's size limit
    capture = (Capture()
               .send(request("Fetch", version, 5, b"(the request body is not read)", flexible=version >= 12))
               .answer(response(5, fetch_response(version, {topic: {2: records}}), flexible=version >= 12), mss=64))
    items = read(capture.pcap())
    found = batches(items)
    assert [(b.batch.base_offset, b.partition, b.error_code, b.direction, b.connection) for b in found] == [
        (0, 2, 0, "fetch", BROKER), (2, 2, 0, "fetch", BROKER)]
    assert all(b.batch.crc_valid and not b.batch.findings for b in found)
    [partial] = findings(items)
    assert (partial.finding.code, partial.finding.severity.value, partial.finding.pos) == (
        "partial-batch", "info", len(TWO) + len(second))


@pytest.mark.parametrize("version", [1, 2])
def test_share_fetch_responses_give_their_batches_by_topic_id(version):
    capture = (Capture().send(request("ShareFetch", version, 9, b"", flexible=True))
               .answer(response(9, share_fetch_response(version, {TOPIC_ID: {1: TWO}}), flexible=True)))
    [found] = read(capture.pcap())
    assert (found.api, found.direction, found.topic, found.topic_id, found.partition, found.batch.count) == (
        "ShareFetch", "fetch", None, TOPIC_ID, 1, 2)


def test_a_flipped_byte_in_a_produced_batch_is_a_crc_mismatch_in_the_batch():
    damaged = bytearray(TWO)
    damaged[-3] ^= 0x01   # inside the last record's value
    capture = Capture().send(request("Produce", 9, 1, produce(9, {"orders": {0: bytes(damaged)}}), flexible=True))
    [found] = read(capture.pcap())   # acks=0 or unanswered: it comes out at the end, unjoined
    assert found.error_code is None and found.assigned_offset is None
    assert not found.batch.crc_valid and [f.code for f in found.batch.findings] == ["crc-mismatch"]


def test_a_produced_batch_cut_short_is_damage_not_a_partial_batch():
    capture = Capture().send(request("Produce", 9, 1, produce(9, {"orders": {0: TWO[:-4]}}), flexible=True))
    [cut] = read(capture.pcap())
    assert (cut.finding.code, cut.packet, cut.connection, cut.api) == ("truncated", 3, CLIENT, "Produce")


def test_api_versions_tell_which_versions_a_broker_takes():
    capture = (Capture().send(request("ApiVersions", 3, 1, b"\x00\x00\x00", flexible=True))
               .answer(response(1, api_versions_response(3, {0: (3, 11), 1: (4, 17)}), flexible=False))
               .send(request("Produce", 12, 2, produce(12, {"orders": {0: ONE}}), flexible=True)))
    items = read(capture.pcap())
    [told] = findings(items)
    assert (told.finding.code, told.finding.expected, told.finding.actual, told.packet) == (
        "version-not-advertised", "3-11 (what the broker's ApiVersions response gave)", "12", 5)
    assert len(batches(items)) == 1   # still read: the broker answers what it answers


def test_a_version_said_nothing_of_before_the_api_versions_answer_is_told_after_it():
    """A Produce v12 before the ApiVersions answer is not told (nothing advertised yet), the same version after
    it is, every time: what was found quiet for a connection is forgotten when a broker says what it takes."""
    capture = (Capture().send(request("Produce", 12, 1, produce(12, {"orders": {0: ONE}}, acks=0), flexible=True))
               .send(request("ApiVersions", 3, 2, b"\x00\x00\x00", flexible=True))
               .answer(response(2, api_versions_response(3, {0: (3, 11)}), flexible=False))
               .send(request("Produce", 12, 3, produce(12, {"orders": {0: ONE}}, acks=0), flexible=True))
               .send(request("Produce", 12, 4, produce(12, {"orders": {0: ONE}}, acks=0), flexible=True)))
    items = read(capture.pcap())
    assert [each.finding.code for each in findings(items)] == ["version-not-advertised"] * 2
    assert len(batches(items)) == 3


def test_a_version_trunk_does_not_define_is_told_and_not_read():
    capture = Capture().send(request("Produce", 2, 1, b"\x00\x01\x00\x00\x75\x30\x00\x00\x00\x00",
                                     flexible=False))
    [told] = read(capture.pcap())
    assert (told.finding.code, told.finding.actual, told.finding.expected) == (
        "unknown-api-version", "2", "a version Kafka trunk defines (3-13)")


def test_a_message_that_does_not_read_as_its_definition_says_is_a_finding_with_its_position():
    body = produce(9, {"orders": {0: TWO}})
    body = body[:-len(TWO) - 3] + b"\x7f"   # the records' size says more than there is
    capture = Capture().send(request("Produce", 9, 4, body, flexible=True))
    [bad] = read(capture.pcap())
    assert (bad.finding.code, bad.packet, bad.connection, bad.finding.severity.value) == (
        "bad-kafka-message", 3, CLIENT, "error")
    assert bad.finding.field.startswith("ProduceRequest.topicData[0].partitionData[0]")


def test_non_kafka_traffic_and_absurd_sizes_are_findings_and_the_rest_is_read():
    tls_hello = bytes.fromhex("160301020001") + b"\x00" * 40
    capture = Capture(port=9092).send(tls_hello)
    other = Capture(client_port=40001).send(request("Produce", 9, 1, produce(9, {"orders": {0: ONE}}),
                                                    flexible=True))
    both = Capture()
    both.packets = capture.packets + other.packets
    items = read(both.pcap())
    absurd, unread = findings(items)
    assert (absurd.finding.code, absurd.packet, absurd.connection) == ("capture-problem", 3, CLIENT)
    assert "frame size of 369295618" in absurd.finding.actual
    # no later segment of that connection starts a Kafka frame: the rest of the hello was never read
    assert (unread.finding.code, unread.packet, unread.connection, unread.finding.actual) == (
        "capture-problem", 3, CLIENT, "the capture ended before a segment after this absurd frame size started a "
                                      f"Kafka frame ({len(tls_hello) - 4} bytes passed over)")
    assert [b.batch.count for b in batches(items)] == [1]


def test_a_connection_on_another_port_is_read_when_its_first_bytes_are_a_kafka_request():
    produced = request("Produce", 9, 1, produce(9, {"orders": {0: ONE}}), flexible=True)
    assert [b.partition for b in batches(read(Capture(port=19092).send(produced).pcap()))] == [0]
    assert read(Capture(port=19092).send(b"GET / HTTP/1.1\r\n\r\n" * 3).pcap()) == []


def test_a_capture_cut_inside_a_packet_is_a_finding_never_a_traceback():
    capture = Capture().send(request("Produce", 9, 1, produce(9, {"orders": {0: TWO}}), flexible=True)).pcap()
    for cut in (10, 30, len(capture) - 5):
        items = read(capture[:cut])
        assert all(isinstance(item, CaptureFinding) for item in items) and items
        assert items[-1].finding.code == "capture-problem"


def test_random_bytes_in_a_produce_body_never_raise():
    import random

    rng = random.Random(47)
    body = produce(9, {"orders": {0: TWO + ONE}})
    for _ in range(300):
        mutated = bytearray(body)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        capture = Capture().send(request("Produce", 9, 1, bytes(mutated), flexible=True))
        for item in read(capture.pcap()):
            assert isinstance(item, (CapturedBatch, CaptureFinding))


def test_a_topic_named_by_id_takes_the_name_a_metadata_response_gave_it():
    capture = (Capture().send(request("Metadata", 12, 1, b"(not read)", flexible=True))
               .answer(response(1, metadata_response(12, {"orders": TOPIC_ID, "other": "AAAAAAAAAAAAAAAAAAAAAA"}),
                                flexible=True))
               .send(request("Produce", 13, 2, produce(13, {TOPIC_ID: {0: ONE}}), flexible=True)))
    [found] = read(capture.pcap())
    assert (found.topic, found.topic_id) == ("orders", TOPIC_ID)
    unnamed = Capture().send(request("Produce", 13, 2, produce(13, {TOPIC_ID: {0: ONE}}), flexible=True))
    assert [(b.topic, b.topic_id) for b in read(unnamed.pcap())] == [(None, TOPIC_ID)]


@pytest.mark.parametrize("api, version, flexible", [("Metadata", 12, True), ("ApiVersions", 3, False),
                                                    ("Fetch", 12, True), ("ShareFetch", 1, True),
                                                    ("Produce", 9, True)])
def test_a_response_that_does_not_read_is_a_finding_naming_its_api(api, version, flexible):
    capture = (Capture().send(request(api, version, 3, b"(not read)" if api != "Produce" else
                                      produce(9, {"orders": {0: ONE}}), flexible=True))
               .answer(response(3, b"\x00\x00\x00\x07garbage", flexible=flexible)))
    bad = [item for item in findings(read(capture.pcap())) if item.finding.code == "bad-kafka-message"]
    assert [(item.api, item.packet, item.connection) for item in bad] == [(api, 4, BROKER)]


def test_an_acks_0_produce_comes_out_as_it_is_read_not_at_the_end():
    """acks=0: the broker sends no response (KafkaApis.handleProduceRequest), so nothing waits for one; the
    batch comes out before the Fetch response read after it."""
    capture = (Capture()
               .send(request("Produce", 9, 1, produce(9, {"orders": {0: TWO}}, acks=0), flexible=True))
               .send(request("Fetch", 12, 2, b"", flexible=True))
               .answer(response(2, fetch_response(12, {"orders": {0: TWO}}), flexible=True)))
    produced, fetched = read(capture.pcap())
    assert (produced.direction, produced.packet, produced.error_code) == ("produce", 3, None)
    assert (fetched.direction, fetched.packet) == ("fetch", 5)


def test_damage_after_a_run_of_clean_batches_follows_their_offsets():
    """A Records field whose clean batches come first, then a damaged entry (an unknown magic): with the clean
    batches taken as a run of lines the damaged range's lost offsets still follow the batch before it, as when
    every batch is read whole."""
    after = bytearray(handmade.batch(2, [(b"k3", b"v3"), (b"k4", b"v4")], producer_id=7, producer_epoch=0,
                                     base_sequence=2))
    after[16] = 7   # magic
    capture = Capture().send(request("Produce", 9, 1, produce(9, {"orders": {0: TWO + bytes(after)}}),
                                     flexible=True)).pcap()
    for runs in (False, True):
        [clean, damaged] = read(capture, runs=runs)
        assert isinstance(clean, CapturedRun if runs else CapturedBatch)
        assert (damaged.finding.code, damaged.finding.pos, damaged.finding.lost_offsets.first,
                damaged.finding.lost_offsets.how) == ("resync", len(TWO), 2, "after the entry before, which ends at 1")
