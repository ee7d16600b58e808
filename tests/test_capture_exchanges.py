"""Requests and responses paired by correlation id (kbatch.capture.exchanges)."""

from dataclasses import replace

from kbatch.capture.exchanges import Request, Response, exchanges
from kbatch.capture.frames import FrameProblem, KafkaFrame

CLIENT_TO_BROKER = "127.0.0.1:40000 -> 127.0.0.1:9092"
BROKER_TO_CLIENT = "127.0.0.1:9092 -> 127.0.0.1:40000"


def request_frame(packet, api_key, version, correlation_id, client_id=b"my-client", body=b"BODY"):
    header = api_key.to_bytes(2, "big") + version.to_bytes(2, "big") + correlation_id.to_bytes(4, "big")
    if client_id is not None:
        header += len(client_id).to_bytes(2, "big") + client_id
    else:
        header += b"\xff\xff"
    return KafkaFrame(CLIENT_TO_BROKER, packet, float(packet), header + body)


def response_frame(packet, correlation_id, body=b"ANSWER"):
    return KafkaFrame(BROKER_TO_CLIENT, packet, float(packet), correlation_id.to_bytes(4, "big") + body)


def test_responses_pair_with_their_requests_out_of_order():
    events = list(exchanges([request_frame(1, 18, 3, 7), request_frame(2, 0, 11, 8, client_id=None),
                             response_frame(3, 8), response_frame(4, 7)]))
    first, second, answer_to_second, answer_to_first = events
    assert (first.api_key, first.api_version, first.correlation_id, first.client_id) == (18, 3, 7, "my-client")
    assert first.frame[first.after_client_id:] == b"BODY"
    assert second.client_id is None and second.frame[second.after_client_id:] == b"BODY"
    # each response holds its request without the request's bytes (a waiting request's memory is its header's)
    assert isinstance(answer_to_second, Response) and answer_to_second.request == replace(second, frame=b"")
    assert answer_to_first.request == replace(first, frame=b"") and answer_to_first.packet == 4


def test_controlled_shutdown_v0_has_no_client_id():
    [request] = list(exchanges([request_frame(1, 7, 0, 1, client_id=b"")]))
    assert isinstance(request, Request) and request.client_id is None and request.after_client_id == 8


def test_a_response_without_its_request_and_a_damaged_header():
    client_id_too_long = KafkaFrame(CLIENT_TO_BROKER, 1, 1.0, bytes.fromhex("0000 0009 00000005 0100") + b"abc")
    events = list(exchanges([client_id_too_long, response_frame(2, 99)]))
    assert [type(event) for event in events] == [FrameProblem, FrameProblem]
    assert "length 256 runs past" in events[0].what
    assert events[1].packet == 2 and "correlation id 99" in events[1].what


def test_a_capture_file_end_to_end_with_segments_out_of_order():
    """A pcap written here (Linux cooked v2, nanoseconds): after the handshake the request's second half arrives
    first, then its first half twice (a retransmission)."""
    import io
    import socket

    import pytest
    dpkt = pytest.importorskip("dpkt")
    from kbatch.capture.exchanges import exchanges
    from kbatch.capture.frames import kafka_frames
    from kbatch.capture.packets import read_segments
    from kbatch.capture.streams import reassemble

    request = request_frame(0, 0, 9, 41).data
    response = response_frame(0, 41).data
    request, response = (len(request).to_bytes(4, "big") + request, len(response).to_bytes(4, "big") + response)

    def frame(sport, dport, seq, payload, flags=dpkt.tcp.TH_ACK):
        tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, flags=flags, data=payload, sum=0xBAD)
        ip = dpkt.ip.IP(src=socket.inet_aton("127.0.0.1"), dst=socket.inet_aton("127.0.0.1"),
                        p=dpkt.ip.IP_PROTO_TCP, data=tcp, len=20 + len(tcp))
        return bytes(dpkt.sll2.SLL2(ethtype=dpkt.ethernet.ETH_TYPE_IP, data=bytes(ip)))

    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, linktype=dpkt.pcap.DLT_LINUX_SLL2, nano=True)
    for time, packet in enumerate([frame(40000, 9092, 999, b"", dpkt.tcp.TH_SYN),
                                   frame(9092, 40000, 4999, b"", dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK),
                                   frame(40000, 9092, 1010, request[10:]), frame(40000, 9092, 1000, request[:10]),
                                   frame(40000, 9092, 1000, request[:10]), frame(9092, 40000, 5000, response)]):
        writer.writepkt(packet, ts=time)
    out.seek(0)
    events = list(exchanges(kafka_frames(reassemble(read_segments(out)))))
    assert [type(event).__name__ for event in events] == ["Request", "Response"]
    assert (events[0].packet, events[0].correlation_id, events[0].client_id) == (4, 41, "my-client")
    assert events[1].request == replace(events[0], frame=b"") and events[1].packet == 6
