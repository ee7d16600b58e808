"""Reading TCP segments out of pcap/pcapng files (kbatch.capture.packets): captures written here with dpkt."""

import io
import socket
import struct
import subprocess
import sys

import pytest

dpkt = pytest.importorskip("dpkt")

from kbatch.capture.packets import PacketProblem, Segment, _network_layer, _plain_tcp, read_segments  # noqa: E402

PAYLOAD = b"\x00\x00\x00\x05hello"


def ip_packet(payload=PAYLOAD, *, v6=False, seq=1000):
    # a TCP checksum that does not verify, as loopback captures carry (checksum offload): dpkt keeps a non-zero sum
    tcp = dpkt.tcp.TCP(sport=40000, dport=9092, seq=seq, flags=dpkt.tcp.TH_ACK | dpkt.tcp.TH_PUSH, data=payload,
                       sum=0xDEAD)
    if v6:
        ip = dpkt.ip6.IP6(src=socket.inet_pton(socket.AF_INET6, "::1"), dst=socket.inet_pton(socket.AF_INET6, "::1"),
                          nxt=dpkt.ip.IP_PROTO_TCP, hlim=64, data=tcp, plen=len(tcp))
    else:
        ip = dpkt.ip.IP(src=socket.inet_aton("127.0.0.1"), dst=socket.inet_aton("127.0.0.2"), p=dpkt.ip.IP_PROTO_TCP,
                        data=tcp, len=20 + len(tcp))
    return bytes(ip)


def capture(frames, linktype, *, nano=False, snaplen=65535, pcapng=False):
    out = io.BytesIO()
    if pcapng:
        writer = dpkt.pcapng.Writer(out, linktype=linktype, snaplen=snaplen)
    else:
        writer = dpkt.pcap.Writer(out, linktype=linktype, nano=nano, snaplen=snaplen)
    for time, frame in frames:
        writer.writepkt(frame, ts=time)
    out.seek(0)
    return out


def segments(stream):
    return [item for item in read_segments(stream) if isinstance(item, Segment)]


@pytest.mark.parametrize("linktype, frame", [
    (dpkt.pcap.DLT_EN10MB, lambda ip: bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip))),
    (dpkt.pcap.DLT_LINUX_SLL, lambda ip: bytes(dpkt.sll.SLL(ethtype=dpkt.ethernet.ETH_TYPE_IP, data=ip))),
    (dpkt.pcap.DLT_LINUX_SLL2, lambda ip: bytes(dpkt.sll2.SLL2(ethtype=dpkt.ethernet.ETH_TYPE_IP, data=ip))),
    (dpkt.pcap.DLT_NULL, lambda ip: (2).to_bytes(4, "little") + ip),
])
def test_link_types(linktype, frame):
    ip = ip_packet()
    [segment] = segments(capture([(1.5, frame(ip))], linktype))
    assert (segment.packet, segment.time, segment.seq, segment.payload, segment.cut) == (1, 1.5, 1000, PAYLOAD, 0)
    assert segment.source == ("127.0.0.1", 40000) and segment.destination == ("127.0.0.2", 9092)


def test_ipv6_pcapng_and_bad_checksum_kept():
    ip = ip_packet(v6=True)
    frame = bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP6, data=ip))
    [segment] = segments(capture([(2.0, frame)], dpkt.pcap.DLT_EN10MB, pcapng=True))
    assert dpkt.tcp.TCP(frame[14 + 40:]).sum == 0xDEAD
    assert segment.source == ("::1", 40000) and segment.payload == PAYLOAD


def test_nanosecond_pcap():
    frame = bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet()))
    [segment] = segments(capture([(1700000000.123456789, frame)], dpkt.pcap.DLT_EN10MB, nano=True))
    assert segment.time == pytest.approx(1700000000.123456789, abs=1e-6)


def test_snaplen_cut_packet_says_how_much_is_missing():
    frame = bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet()))
    raw = capture([(1.0, frame[:-4])], dpkt.pcap.DLT_EN10MB).getvalue()
    # the record header's orig_len says what was on the wire
    raw = raw[:24 + 12] + len(frame).to_bytes(4, "little") + raw[24 + 16:]
    [segment] = segments(io.BytesIO(raw))
    assert segment.payload == PAYLOAD[:-4] and segment.cut == 4


@pytest.mark.parametrize("cut_inside", ["packet", "record header"])
def test_truncated_file_is_a_problem_after_the_packets_before(cut_inside):
    frame = bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet()))
    raw = capture([(1.0, frame), (2.0, frame)], dpkt.pcap.DLT_EN10MB).getvalue()
    cut = 3 if cut_inside == "packet" else len(frame) + 3
    items = list(read_segments(io.BytesIO(raw[:-cut])))
    assert [type(item) for item in items] == [Segment, PacketProblem]
    assert items[1].packet == 2


def test_not_a_capture():
    [problem] = list(read_segments(io.BytesIO(b"this is no capture at all")))
    assert isinstance(problem, PacketProblem) and problem.packet == 0


def _with_ip_options(ip: bytes) -> bytes:
    """The IPv4 packet with a 4-byte options field (NOP NOP NOP EOL): IHL 6, total length 4 more."""
    total = int.from_bytes(ip[2:4], "big") + 4
    return bytes([0x46]) + ip[1:2] + total.to_bytes(2, "big") + ip[4:20] + b"\x01\x01\x01\x00" + ip[20:]


@pytest.mark.parametrize("ip, cut", [
    (ip_packet(), 0),
    (ip_packet(v6=True), 0),
    (_with_ip_options(ip_packet()), 0),
    (ip_packet(), 4),                       # snaplen: the payload's last 4 bytes not kept
    (ip_packet(v6=True), 7),
    (ip_packet(b""), 0),                    # a bare ACK
    (ip_packet(b"x" * 3000, seq=2**32 - 1), 1000),
    (bytes(dpkt.ip.IP(src=b"\x01\x02\x03\x04", dst=b"\x05\x06\x07\x08", p=dpkt.ip.IP_PROTO_TCP,
                      data=dpkt.tcp.TCP(sport=1, dport=2, off=8, opts=b"\x01" * 12, data=b"optioned"))), 0),
])
@pytest.mark.parametrize("linktype, link", [
    (dpkt.pcap.DLT_EN10MB, lambda kind, ip: bytes(dpkt.ethernet.Ethernet(type=kind, data=ip))),
    (dpkt.pcap.DLT_LINUX_SLL, lambda kind, ip: bytes(dpkt.sll.SLL(ethtype=kind, data=ip))),
    (dpkt.pcap.DLT_LINUX_SLL2, lambda kind, ip: bytes(dpkt.sll2.SLL2(ethtype=kind, data=ip))),
])
def test_ethernet_and_linux_cooked_segments_read_with_struct_are_dpkts(ip, cut, linktype, link):
    """An Ethernet or Linux cooked frame's segment is read with struct (packets._plain_tcp); the same IP packet
    under the raw-IP link type goes through dpkt: the two segments agree field for field (padding after the IP
    packet too)."""
    framed = link(dpkt.ethernet.ETH_TYPE_IP6 if ip[0] >> 4 == 6 else dpkt.ethernet.ETH_TYPE_IP, ip) + b"\x00" * 6
    kept = len(framed) - 6 - cut
    raw = capture([(1.25, ip[:len(ip) - cut])], 101).getvalue()
    through_dpkt = segments(io.BytesIO(raw[:24 + 12] + len(ip).to_bytes(4, "little") + raw[24 + 16:]))
    assert _plain_tcp(linktype, framed[:kept]) is not None
    assert segments(capture([(1.25, framed[:kept])], linktype)) == through_dpkt
    assert len(through_dpkt) == 1 and through_dpkt[0].cut == cut


@pytest.mark.parametrize("frame", [
    bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet()))[:40],   # the TCP header cut
    bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_ARP, data=b"\x00" * 60)),
    bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=bytes(dpkt.ip.IP(
        p=dpkt.ip.IP_PROTO_TCP, offset=800, data=b"\x00" * 40))))[:-20] + b"\x00" * 20,       # a later fragment
    bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=bytes([0x44]) + ip_packet()[1:])),  # IHL 4
])
def test_frames_struct_does_not_read_are_left_to_dpkt(frame):
    assert _plain_tcp(dpkt.pcap.DLT_EN10MB, frame) is None


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_classic_pcap_headers_read_as_dpkt_reads_them(order, nano):
    """A classic pcap's file and record headers are read with struct, in either byte order and resolution: the
    link type, each packet's time and frame what dpkt's own reader gives (a link type other than Ethernet: the
    frames then go to dpkt's decoders)."""
    frames = [bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet(seq=seq))) for seq in (7, 9)]
    sll = [bytes(dpkt.sll.SLL(ethtype=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet(seq=11)))]
    times = [(1700000000, 123456789 if nano else 123456), (1700000001, 999999999 if nano else 999999)]
    for linktype, packets in ((dpkt.pcap.DLT_EN10MB, frames), (dpkt.pcap.DLT_LINUX_SLL, sll)):
        magic = 0xA1B23C4D if nano else 0xA1B2C3D4
        raw = struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, linktype) + b"".join(
            struct.pack(order + "IIII", seconds, fraction, len(frame), len(frame)) + frame
            for (seconds, fraction), frame in zip(times, packets))
        theirs = dpkt.pcap.Reader(io.BytesIO(raw))
        assert theirs.datalink() == linktype
        got = segments(io.BytesIO(raw))
        assert [(segment.time, segment.seq) for segment in got] == \
            [(float(time), _network_layer(linktype, frame).data.seq) for time, frame in theirs]


def test_plain_ethernet_pcap_read_without_dpkt(tmp_path):
    """dpkt is imported where it reads: not for a classic pcap of plain Ethernet or Linux cooked frames, but for
    one frame it must decode (here a BSD loopback one)."""
    ethernet = bytes(dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet()))
    sll = bytes(dpkt.sll2.SLL2(ethtype=dpkt.ethernet.ETH_TYPE_IP, data=ip_packet()))
    loopback = (2).to_bytes(4, "little") + ip_packet()
    for name, linktype, frame in (("plain", dpkt.pcap.DLT_EN10MB, ethernet), ("cooked", dpkt.pcap.DLT_LINUX_SLL2, sll),
                                  ("loopback", dpkt.pcap.DLT_NULL, loopback)):
        (tmp_path / name).write_bytes(capture([(1.0, frame)], linktype).getvalue())
    script = ("import sys\nfrom kbatch.capture.packets import Segment, not_a_capture, read_segments\n"
              "with open(sys.argv[1], 'rb') as f:\n"
              "    assert not_a_capture(f) is None\n"
              "    print(sum(isinstance(i, Segment) for i in read_segments(f)), 'dpkt' in sys.modules)\n")
    said = [subprocess.run([sys.executable, "-c", script, str(tmp_path / name)], capture_output=True, text=True,
                           check=True).stdout for name in ("plain", "cooked", "loopback")]
    assert said == ["1 False\n", "1 False\n", "1 True\n"]
