"""The compiled loop over a capture's common case (kbatch.kernels.plaincapture, taken by
kbatch.capture.batches.CaptureReader): held to dpkt's reading of each packet it takes, and to the generators of
kbatch.capture (read_segments, kafka_segments, reassemble, kafka_frames) on odd packets and cut files, which it
hands over to them.  tests/conftest.py holds the two ways to each other on every other capture the tests read."""

from __future__ import annotations

import io
import os
import socket
import struct
import subprocess
import sys

import pytest

dpkt = pytest.importorskip("dpkt")

from kbatch.capture import batches  # noqa: E402
from kbatch.capture.frames import KafkaFrame  # noqa: E402
from kbatch.format.wire import LARGEST_FRAME, SMALLEST_FRAME  # noqa: E402
from kbatch.capture.packets import PLAIN_LINKS  # noqa: E402
from kbatch.kernels import plaincapture  # noqa: E402

from .capture_builder import Capture, fetch_response, produce, produce_response, request, response  # noqa: E402
from .handmade import batch  # noqa: E402
from .plain_capture import read_both_ways  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWO = batch(0, [(b"k1", b"v1"), (b"k2", b"v2")], producer_id=7, producer_epoch=0, base_sequence=0)
FRAME = b"\x00\x00\x00\x05hello"   # a Kafka frame of five bytes


def exchange(capture: Capture | None = None, mss: int = 1 << 16, correlation_id: int = 11) -> Capture:
    capture = capture or Capture()
    return (capture
            .send(request("Produce", 9, correlation_id, produce(9, {"orders": {0: TWO, 1: TWO}}), flexible=True),
                  mss=mss)
            .answer(response(correlation_id, produce_response(9, {"orders": {0: (0, 500), 1: (0, 700)}}),
                             flexible=True), mss=mss)
            .send(request("Fetch", 12, correlation_id + 1, b"", flexible=True), mss=mss)
            .answer(response(correlation_id + 1, fetch_response(12, {"orders": {0: TWO * 3}}), flexible=True),
                    mss=mss))


def pcap(frames: list[bytes], *, linktype=dpkt.pcap.DLT_EN10MB, nano=False, snaplen=65535) -> bytes:
    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out, linktype=linktype, nano=nano, snaplen=snaplen)
    for number, frame in enumerate(frames):
        writer.writepkt(frame, ts=1_700_000_000 + number / 1000)
    return out.getvalue()


def agree(data: bytes, ports=batches.DEFAULT_PORTS) -> list:
    plain, generators = read_both_ways(data, ports)
    assert plain == generators
    return plain


def taken(data: bytes) -> plaincapture.PlainCapture:
    """The loop run over a capture until it stops (the file's header skipped, as CaptureReader does)."""
    stream = io.BytesIO(data)
    stream.seek(24)
    big_endian = data[:4] == b"\xa1\xb2\xc3\xd4"
    link = PLAIN_LINKS[struct.unpack_from(">I" if big_endian else "<I", data, 20)[0]]
    loop = plaincapture.PlainCapture(stream.readinto, big_endian, link, batches.DEFAULT_PORTS, KafkaFrame,
                                     batches._flow_name)
    while loop.frames():
        pass
    return loop


# -- each packet it takes, read as dpkt reads it ----------------------------------------------------------------

def tcp(payload=FRAME, *, sport=40000, dport=9092, seq=1000, flags=dpkt.tcp.TH_ACK | dpkt.tcp.TH_PUSH, opts=b""):
    return dpkt.tcp.TCP(sport=sport, dport=dport, seq=seq, ack=77, flags=flags, data=payload, opts=opts, sum=0xBAD,
                        off=(20 + len(opts)) // 4)


def ipv4(segment, *, opts=b"", mf=0, df=0, offset=0, src="127.0.0.1", dst="10.1.2.3", length=None) -> bytes:
    ip = dpkt.ip.IP(src=socket.inet_aton(src), dst=socket.inet_aton(dst), p=dpkt.ip.IP_PROTO_TCP, opts=opts,
                    mf=mf, df=df, offset=offset, data=segment)
    ip.v_hl = (4 << 4) | ((20 + len(opts)) // 4)
    packed = bytes(ip)
    # a total length that is not the packet's (dpkt would write the packet's)
    return packed if length is None else packed[:2] + struct.pack(">H", length) + packed[4:]


def ipv6(segment, *, nxt=dpkt.ip.IP_PROTO_TCP, extension=b""):
    data = extension + bytes(segment)
    ip = dpkt.ip6.IP6(src=socket.inet_pton(socket.AF_INET6, "2001:db8::1"),
                      dst=socket.inet_pton(socket.AF_INET6, "::1"), nxt=nxt, hlim=64, plen=len(data))
    return bytes(ip.pack_hdr()) + data


def ethernet(ip, ether_type=dpkt.ethernet.ETH_TYPE_IP) -> bytes:
    return b"\x02" * 6 + b"\x04" * 6 + struct.pack(">H", ether_type) + bytes(ip)


PLAIN = {
    "IPv4": ethernet(ipv4(tcp())),
    "IPv4 to a client port": ethernet(ipv4(tcp(sport=9092, dport=51000))),
    "IPv4, TCP options": ethernet(ipv4(tcp(opts=b"\x01\x01\x08\x0a" + b"\x00" * 8))),
    "IPv6": ethernet(ipv6(tcp()), dpkt.ethernet.ETH_TYPE_IP6),
    "IPv4, first fragment": ethernet(ipv4(tcp(), mf=1)),
    "IPv4, padded frame": ethernet(ipv4(tcp())) + b"\x00" * 6,
    # every byte of the lengths and of the sequence number read: a segment past 255 bytes, a sequence number
    # whose every byte counts (the next one wraps past 2**32)
    "IPv4, a long segment": ethernet(ipv4(tcp(b"\x00\x00\x03\xe8" + bytes(1000), seq=0xFFFFFC17))),
    "IPv6, a long segment": ethernet(ipv6(tcp(b"\x00\x00\x03\xe8" + bytes(1000), seq=0x81828384)),
                                     dpkt.ethernet.ETH_TYPE_IP6),
    "IPv4, don't fragment": ethernet(ipv4(tcp(), df=1)),
    "IPv4, a long segment, padded frame": ethernet(ipv4(tcp(b"\x00\x00\x03\xe8" + bytes(1000)))) + b"\x00" * 6,
    "IPv4, an ACK alone": ethernet(ipv4(tcp(b""))),
    "IPv6, an ACK alone": ethernet(ipv6(tcp(b"")), dpkt.ethernet.ETH_TYPE_IP6),
}
# taken, as kbatch.capture.packets._plain_tcp takes them, with the bytes the frame has
CUT = {
    "IPv4 total length past the frame": ethernet(ipv4(tcp(), length=200)),
    "IPv6 payload length past the frame": ethernet(ipv6(tcp()), dpkt.ethernet.ETH_TYPE_IP6)[:-3],
    "TCP data offset past the frame": ethernet(ipv4(tcp()))[:46] + b"\xf0" + ethernet(ipv4(tcp()))[47:],
}
ODD = {
    "IPv4 options": ethernet(ipv4(tcp(), opts=b"\x01\x01\x01\x00")),
    "VLAN": b"\x02" * 6 + b"\x04" * 6 + b"\x81\x00\x00\x05\x08\x00" + bytes(ipv4(tcp())),
    "IPv6 hop-by-hop header": ethernet(ipv6(tcp(), nxt=0, extension=bytes([6, 0]) + b"\x01\x04\x00\x00\x00\x00"),
                                       dpkt.ethernet.ETH_TYPE_IP6),
    "IPv4 later fragment": ethernet(ipv4(tcp(), offset=3)),
    "IPv4 fragment at 2 KiB": ethernet(ipv4(tcp(), offset=0x100)),   # (the offset's high byte alone)
    "IPv4 total length short of the TCP header": ethernet(ipv4(tcp(), length=30)),
    "UDP": ethernet(dpkt.ip.IP(src=b"\x7f\x00\x00\x01", dst=b"\x7f\x00\x00\x01", p=dpkt.ip.IP_PROTO_UDP,
                               data=dpkt.udp.UDP(sport=1, dport=9092, data=b"x" * 40))),
    "ARP": ethernet(b"\x00" * 46, dpkt.ethernet.ETH_TYPE_ARP),
    "another port": ethernet(ipv4(tcp(sport=40000, dport=8080))),
    "TCP data offset under 5": ethernet(bytes(ipv4(tcp()))[:32] + b"\x40" + bytes(ipv4(tcp()))[33:]),
    "a runt frame": ethernet(ipv4(tcp()))[:50],
    "the TCP header cut": ethernet(ipv4(tcp()))[:14 + 20 + 15],
}


LINKS = {"Ethernet": (dpkt.pcap.DLT_EN10MB, lambda frame: frame),
         "Linux cooked": (dpkt.pcap.DLT_LINUX_SLL, lambda frame: bytes(dpkt.sll.SLL(
             ethtype=struct.unpack_from(">H", frame, 12)[0], data=frame[14:]))),
         "Linux cooked v2": (dpkt.pcap.DLT_LINUX_SLL2, lambda frame: bytes(dpkt.sll2.SLL2(
             ethtype=struct.unpack_from(">H", frame, 12)[0], data=frame[14:])))}


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("name", PLAIN)
def test_a_plain_packet_is_taken_as_dpkt_reads_it(name, link):
    linktype, framed = LINKS[link]
    frame = framed(PLAIN[name])
    ip = (dpkt.ethernet.Ethernet if link == "Ethernet" else dpkt.sll.SLL if link == "Linux cooked" else
          dpkt.sll2.SLL2)(frame).data
    segment = ip.data
    loop = taken(pcap([frame], linktype=linktype))
    assert loop.number == 1 and loop.last_segment == 1
    [flow] = loop.flows()
    source, destination = (socket.inet_ntop(socket.AF_INET6 if len(ip.src) == 16 else socket.AF_INET, address)
                           for address in (ip.src, ip.dst))
    wrap = (lambda a: f"[{a}]") if len(ip.src) == 16 else (lambda a: a)
    assert flow.name == f"{wrap(source)}:{segment.sport} -> {wrap(destination)}:{segment.dport}"
    # (an ACK alone sets no next sequence number, as kbatch.capture.streams.reassemble)
    assert flow.next_seq == ((segment.seq + len(segment.data)) % (1 << 32) if segment.data else -1)
    assert (flow.head_size, flow.have) == (0, 0)
    agree(pcap([frame], linktype=linktype))


@pytest.mark.parametrize("name", CUT)
def test_a_cut_packet_is_taken_as_the_generators_take_it(name):
    assert taken(pcap([CUT[name]])).number == 1
    clean = exchange().packets
    agree(pcap(clean[:4] + [CUT[name]] + clean[4:]))


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("name", ODD)
def test_an_odd_packet_is_handed_over_and_read_as_the_generators_read_it(name, link):
    linktype, framed = LINKS[link]
    if link != "Ethernet" and len(ODD[name]) < 14:
        return
    frame = framed(ODD[name])
    loop = taken(pcap([frame], linktype=linktype))
    assert loop.number == 0 and loop.stopped == plaincapture.HANDED_OVER and loop.rest()[16:] == frame
    # between clean exchanges: the loop hands the rest of the file over at it
    clean = [framed(packet) for packet in exchange().packets]
    agree(pcap(clean[:4] + [frame] + clean[4:], linktype=linktype))


def test_a_segment_its_frame_and_the_next_one_start_in_is_cut_as_the_generators_cut_it():
    whole = exchange(mss=1 << 16)
    assert taken(whole.pcap()).number == len(whole.packets)   # every packet of a plain capture taken
    for mss in (1, 2, 3, 5, 7, 64, 1000):
        capture = exchange(mss=mss)
        loop = taken(capture.pcap())
        assert loop.number == len(capture.packets) and loop.stopped == plaincapture.HANDED_OVER
        events = agree(capture.pcap())
        # the same requests and responses, whatever the segments
        assert [(type(e).__name__, getattr(e, "frame", None)) for e in events[:-1]] == \
            [(type(e).__name__, getattr(e, "frame", None)) for e in agree(whole.pcap())[:-1]]


def test_out_of_order_retransmitted_and_missed_segments_are_the_generators():
    for reorder in ("swap", "repeat", "drop", "syn again"):
        capture = exchange(mss=100)
        packets = capture.packets   # 2, 3, 4: the Produce request's; 7, 8, 9, 10: the Fetch response's
        if reorder == "swap":
            packets[3], packets[4] = packets[4], packets[3]
        elif reorder == "repeat":
            packets.insert(9, packets[8])
        elif reorder == "drop":
            del packets[8]
        else:
            packets.insert(5, packets[0])
        loop = taken(pcap(packets))
        assert 0 < loop.number < len(packets)
        agree(pcap(packets))


def test_a_segment_after_the_sequence_number_wrapped_to_0_is_checked_against_it():
    """A segment that ends where the sequence numbers wrap leaves 0 as the next one, a number like any other:
    the same segment sent again is a retransmission (the generators'), the next one is in order (the loop's)."""
    first = ethernet(ipv4(tcp(b"\x00\x00\x00\x06" + b"x" * 6, seq=(1 << 32) - 10)))
    following = ethernet(ipv4(tcp(b"\x00\x00\x00\x02yy", seq=0)))
    assert taken(pcap([first, following])).number == 2
    again = taken(pcap([first, first, following]))
    assert again.number == 1 and again.stopped == plaincapture.HANDED_OVER
    agree(pcap([first, first, following]))


def test_an_absurd_frame_size_is_said_as_the_generators_say_it_and_read_on():
    capture = Capture().send(b"\x7f\xff\xff\xff" + b"x" * 40)
    capture = exchange(capture, correlation_id=21)
    events = agree(capture.pcap())
    assert any("absurd" not in str(event) and "Kafka frame size" in str(event) for event in events)
    assert taken(capture.pcap()).stopped == plaincapture.ABSURD_SIZE
    # the size cut by a segment's end, then absurd
    capture = exchange(Capture().send(b"\x7f\xff").send(b"\xff\xff" + b"x" * 10), correlation_id=31)
    agree(capture.pcap())


@pytest.mark.parametrize("size", [SMALLEST_FRAME - 1, SMALLEST_FRAME, LARGEST_FRAME, LARGEST_FRAME + 1, 1 << 31,
                                  (1 << 32) - 1])
@pytest.mark.parametrize("cut", [False, True], ids=["whole", "size cut"])
def test_a_frame_size_at_and_past_its_bounds_is_read_as_the_generators_read_it(size, cut):
    """The bounds are in (a frame of 4 bytes; one of 100 MiB begun), past them absurd; a size with its top bit
    set is a negative int32, as Kafka's NetworkReceive reads it; whole in a segment or cut by its end."""
    head = struct.pack(">I", size)
    body = b"x" * (size if size == SMALLEST_FRAME else 40)
    capture = Capture().send(head[:2]).send(head[2:] + body) if cut else Capture().send(head + body)
    events = agree(exchange(capture, correlation_id=41).pcap())
    absurd = not SMALLEST_FRAME <= size <= LARGEST_FRAME
    assert (taken(exchange(capture, correlation_id=41).pcap()).stopped == plaincapture.ABSURD_SIZE) is absurd
    said = [str(event) for event in events if "Kafka frame size" in str(event)]
    signed = size - (1 << 32) if size >= 1 << 31 else size
    assert [f"a Kafka frame size of {signed} bytes" in line for line in said] == ([True] if absurd else [])


@pytest.mark.parametrize("variant", ["nanoseconds", "big-endian", "snaplen 60", "Linux cooked", "BSD loopback"])
def test_files_the_loop_leaves_to_the_generators_or_takes(variant):
    packets = exchange(mss=500).packets
    if variant == "nanoseconds":
        data = pcap(packets, nano=True)
    elif variant == "snaplen 60":
        data = pcap([packet[:60] for packet in packets])
    elif variant == "Linux cooked":
        data = pcap([bytes(dpkt.sll.SLL(ethtype=dpkt.ethernet.ETH_TYPE_IP, data=packet[14:])) for packet in packets],
                    linktype=dpkt.pcap.DLT_LINUX_SLL)
        assert taken(data).number == len(packets)
    elif variant == "BSD loopback":
        data = pcap([(2).to_bytes(4, "little") + packet[14:] for packet in packets], linktype=dpkt.pcap.DLT_NULL)
    else:
        little = pcap(packets)
        head = struct.unpack("<IHHiIII", little[:24])
        data, at = struct.pack(">IHHiIII", *head), 24
        while at < len(little):
            seconds, fraction, caplen, length = struct.unpack_from("<IIII", little, at)
            data += struct.pack(">IIII", seconds, fraction, caplen, length) + little[at + 16:at + 16 + caplen]
            at += 16 + caplen
        assert taken(data).number == len(packets)   # (a big-endian microsecond pcap is the loop's)
    agree(data)


def test_a_capture_cut_anywhere_is_read_as_the_generators_read_it():
    data = exchange(mss=300).pcap()
    for end in range(25, len(data)):
        agree(data[:end])


def test_records_past_the_loops_buffer_and_refills():
    capture = Capture()
    for n in range(12):   # ~12 MiB: past the loop's 4 MiB reads, frames cut by them
        capture = exchange(capture, mss=65483, correlation_id=100 + 2 * n)
        capture.answer(response(999, fetch_response(12, {"orders": {0: TWO * 12000}}), flexible=True), mss=65483)
    data = capture.pcap()
    assert len(data) > 2 * (4 << 20)
    assert taken(data).number == len(capture.packets)
    agree(data)
    # a record longer than the loop takes at once, and one whose length runs past the file
    huge = pcap(capture.packets[:6] + [ethernet(ipv4(tcp())) + bytes(1 << 20)] + capture.packets[6:10], snaplen=2 << 20)
    agree(huge)
    agree(huge[:-3] + struct.pack("<IIII", 1, 2, 0xFFFFFFF0, 0xFFFFFFF0) + b"abc")


def test_the_loop_runs_where_the_kernels_are_compiled():
    from kbatch.kernels._load import builds
    assert batches.PLAIN_CAPTURE == plaincapture.COMPILED == builds()["plaincapture"].compiled


@pytest.mark.skipif(not plaincapture.COMPILED, reason="the kernels are not compiled")
def test_pcap_jsonl_is_the_same_compiled_and_as_plain_python(tmp_path):
    for n, capture in enumerate([exchange(), exchange(mss=7), exchange(Capture().send(b"\x7f\xff\xff\xff" + b"x" * 9))]):
        path = tmp_path / f"{n}.pcap"
        path.write_bytes(capture.pcap())
        runs = []
        for pure in ("0", "1"):
            run = subprocess.run([sys.executable, "-m", "kbatch", "pcap", "--format", "jsonl", str(path)], cwd=ROOT,
                                 capture_output=True, env={**os.environ, "KBATCH_PURE_PYTHON": pure})
            runs.append((run.returncode, run.stdout))
        assert runs[0] == runs[1] and runs[0][1].count(b"\n") > 2
