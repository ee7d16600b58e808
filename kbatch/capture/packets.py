"""TCP segments out of a pcap or pcapng file.

The file formats and the link, IP and TCP headers are read by dpkt (the optional extra ``kbatch[pcap]``);
this module picks the link layers a Kafka capture has -- Ethernet, Linux cooked (SLL and SLL2: ``tcpdump -i
any``), BSD loopback/null -- and yields each IPv4/IPv6 TCP segment with its packet number (1-based, as
Wireshark counts) and time.  A TCP checksum is never checked: loopback captures carry unfilled checksums
(checksum offload), and a segment is never dropped for one.  What cannot be read is a problem with its
packet number; the rest of the capture is still read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO, Iterator

import dpkt

# Link types (https://www.tcpdump.org/linktypes.html) -> dpkt's decoder of that link header.
LINK_DECODERS = {
    dpkt.pcap.DLT_EN10MB: dpkt.ethernet.Ethernet,
    dpkt.pcap.DLT_LINUX_SLL: dpkt.sll.SLL,
    dpkt.pcap.DLT_LINUX_SLL2: dpkt.sll2.SLL2,
    dpkt.pcap.DLT_NULL: dpkt.loopback.Loopback,
    dpkt.pcap.DLT_LOOP: dpkt.loopback.Loopback,
}
LINKTYPE_RAW = (dpkt.pcap.DLT_RAW, 101)   # bare IP: 12 or 14 on some systems, 101 in files


@dataclass(frozen=True)
class Segment:
    packet: int          # 1-based packet number in the capture
    time: float          # seconds since the epoch (nanosecond pcaps keep their precision to float's)
    source: tuple        # (address, port); the address as text
    destination: tuple
    seq: int
    flags: int           # TCP flags (dpkt.tcp.TH_SYN, TH_FIN, TH_RST, ...)
    payload: bytes
    cut: int = 0         # bytes of the TCP payload the capture did not keep (snaplen)


@dataclass(frozen=True)
class PacketProblem:
    packet: int
    what: str


class _ShortReadWatch:
    """The capture stream, noting a read that got some bytes but fewer than asked: dpkt's pcap reader yields
    the last packet of a cut file short, and drops a cut record header, without a word."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self.short = False

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        if size > 0 and len(data) < size and (data or self._started):
            self.short = self.short or bool(data)
        self._started = True
        return data

    _started = False

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _capture_reader(stream: BinaryIO):
    """dpkt's reader for the stream's file format (pcap, either byte order and resolution, or pcapng)."""
    magic = stream.read(4)
    stream.seek(-len(magic), 1)
    if magic == b"\x0a\x0d\x0d\x0a":
        return dpkt.pcapng.Reader(stream)
    return dpkt.pcap.Reader(stream)


def _address(raw: bytes) -> str:
    import ipaddress
    return str(ipaddress.ip_address(raw))


def _network_layer(link_type: int, frame: bytes):
    if link_type in LINK_DECODERS:
        return LINK_DECODERS[link_type](frame).data
    if link_type in LINKTYPE_RAW:
        version = frame[0] >> 4 if frame else 0
        return dpkt.ip6.IP6(frame) if version == 6 else dpkt.ip.IP(frame)
    raise ValueError(f"link type {link_type} is not one kbatch reads (Ethernet, Linux cooked, loopback, raw IP)")


def read_segments(stream: BinaryIO) -> Iterator[Segment | PacketProblem]:
    """Every TCP segment of the capture in file order, and a problem for each packet that cannot be read."""
    stream = _ShortReadWatch(stream)
    try:
        reader = _capture_reader(stream)
    except (ValueError, dpkt.dpkt.Error, struct.error, EOFError) as error:
        yield PacketProblem(0, f"not a pcap or pcapng file: {error}")
        return
    link_type = reader.datalink()
    packets = iter(reader)
    number = 0
    while True:
        try:
            time, frame = next(packets)
        except StopIteration:
            if stream.short:   # a cut record header
                yield PacketProblem(number + 1, f"the capture ends inside packet {number + 1}")
            return
        except (ValueError, dpkt.dpkt.Error, struct.error, EOFError) as error:
            yield PacketProblem(number + 1, f"the capture ends inside packet {number + 1}: {error}")
            return
        number += 1
        if stream.short:
            yield PacketProblem(number, f"the capture ends inside packet {number}")
            return
        try:
            ip = _network_layer(link_type, frame)
        except ValueError as error:
            yield PacketProblem(number, str(error))
            return
        except (dpkt.dpkt.Error, struct.error):
            yield PacketProblem(number, "the link or IP header is cut or damaged")
            continue
        if not isinstance(ip, (dpkt.ip.IP, dpkt.ip6.IP6)):
            continue
        tcp = ip.data
        if not isinstance(tcp, dpkt.tcp.TCP):
            if ip.p == dpkt.ip.IP_PROTO_TCP:
                yield PacketProblem(number, "the TCP header is cut or damaged")
            continue
        # The IP total length says how much TCP payload was sent; a snaplen-cut packet keeps less of it.
        ip_payload = ip.len - ip.__hdr_len__ - len(ip.opts) if isinstance(ip, dpkt.ip.IP) else ip.plen
        sent = max(0, ip_payload - tcp.off * 4)
        payload = bytes(tcp.data)
        yield Segment(number, float(time), (_address(ip.src), tcp.sport), (_address(ip.dst), tcp.dport),
                      tcp.seq, tcp.flags, payload, cut=max(0, sent - len(payload)))
