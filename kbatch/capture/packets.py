"""TCP segments out of a pcap or pcapng file.

The file formats and the link, IP and TCP headers are read by dpkt (the optional extra ``.[pcap]`` of kbatch's
checkout), but for a classic pcap's records and a plain Ethernet or Linux cooked frame's IPv4/IPv6 TCP headers, the
common case, read here with struct (dpkt not even imported for them).  This module picks the link layers a Kafka capture has --
Ethernet, Linux cooked (SLL and SLL2: ``tcpdump -i any``), BSD loopback/null -- and yields each IPv4/IPv6 TCP
segment with its packet number (1-based, as Wireshark counts) and time.  A TCP checksum is not checked here:
loopback captures carry unfilled checksums (checksum offload), and a segment is never dropped for one.  Each
segment keeps what its checksum is checked by (:func:`tcp_checksum_holds`), for kbatch.capture.streams to
choose between two copies of the same bytes.  What cannot be read is a problem with its packet number; the rest
of the capture is still read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache
from typing import BinaryIO, Iterator

from kbatch.format.wire import ETH_TYPE_IP, ETH_TYPE_IP6, IP_OFFMASK, IP_PROTO_TCP, TH_ACK

# dpkt is imported where it reads (pcapng, link layers other than plain Ethernet, damaged headers): a classic
# pcap of plain Ethernet frames -- what tcpdump writes on a host's interfaces and loopback -- is read without it
# (importing it is a tenth of a second).

DLT_EN10MB = 1            # Ethernet (https://www.tcpdump.org/linktypes.html)
DLT_LINUX_SLL, DLT_LINUX_SLL2 = 113, 276   # Linux cooked, v1 and v2 (tcpdump -i any)


@cache
def _link_decoders() -> dict:
    """Link types -> dpkt's decoder of that link header."""
    import dpkt
    return {
        dpkt.pcap.DLT_EN10MB: dpkt.ethernet.Ethernet,
        dpkt.pcap.DLT_LINUX_SLL: dpkt.sll.SLL,
        dpkt.pcap.DLT_LINUX_SLL2: dpkt.sll2.SLL2,
        dpkt.pcap.DLT_NULL: dpkt.loopback.Loopback,
        dpkt.pcap.DLT_LOOP: dpkt.loopback.Loopback,
    }


LINKTYPE_RAW = (12, 101)   # bare IP: DLT_RAW (12; 14 on OpenBSD, whose files say 101) and LINKTYPE_RAW

# The link headers read here with struct, by link type: (their length, where their EtherType lies).  Ethernet II
# (destination, source, type; a VLAN tag is dpkt's), Linux cooked v1 (packet type, ARPHRD type, address length,
# 8 address bytes, protocol: https://www.tcpdump.org/linktypes/LINKTYPE_LINUX_SLL.html) and v2 (protocol, reserved,
# interface index, ARPHRD type, packet type, address length, 8 address bytes: LINKTYPE_LINUX_SLL2.html), as
# dpkt.ethernet.Ethernet, dpkt.sll.SLL and dpkt.sll2.SLL2 read them.
PLAIN_LINKS = {DLT_EN10MB: (14, 12), DLT_LINUX_SLL: (16, 14), DLT_LINUX_SLL2: (20, 0)}


# One a packet: slots, and not frozen -- a frozen dataclass's __init__ sets each field through object.__setattr__,
# five times the time of a plain one's (nothing changes a segment once made; the same holds for the stream's
# bytes, the frames and the messages made of them: kbatch.capture.streams, frames, exchanges)
@dataclass(slots=True)
class Segment:
    packet: int          # 1-based packet number in the capture
    time: float          # seconds since the epoch (nanosecond pcaps keep their precision to float's)
    source: tuple        # (address, port); the address as text
    destination: tuple
    seq: int
    flags: int           # TCP flags (dpkt.tcp.TH_SYN, TH_FIN, TH_RST, ...)
    payload: bytes | memoryview   # (a view of the packet read with struct: sliced without a copy)
    cut: int = 0         # bytes of the TCP payload the capture did not keep (snaplen)
    ack: int | None = None   # the acknowledgment number, when the ACK flag is set
    # (source address, destination address, as the IP header holds them; the TCP header and payload as sent) for
    # tcp_checksum_holds; None where the capture did not keep them whole
    wire: tuple | None = None


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


def _capture_reader(stream: BinaryIO | _ShortReadWatch):
    """dpkt's reader for the stream's file format (pcap, either byte order and resolution, or pcapng)."""
    import dpkt
    magic = stream.read(4)
    stream.seek(-len(magic), 1)
    if magic == b"\x0a\x0d\x0d\x0a":
        return dpkt.pcapng.Reader(stream)
    return dpkt.pcap.Reader(stream)


# The classic pcap file header (https://www.ietf.org/archive/id/draft-ietf-opsawg-pcap-03.html, section 4):
# magic number, major and minor version, two reserved words, snaplen, link type, in the byte order the magic
# number is written in.  By magic number (read big-endian): its packet records' header (section 5: seconds,
# micro- or nanoseconds, captured length, original length).
PCAP_FILE_HEADER_SIZE = 24
RECORD_HEADERS = {0xA1B2C3D4: ">IIII", 0xA1B23C4D: ">IIII", 0xD4C3B2A1: "<IIII", 0x4D3CB2A1: "<IIII"}
NANO_MAGICS = (0xA1B23C4D, 0x4D3CB2A1)


def classic_pcap(stream: BinaryIO | _ShortReadWatch) -> tuple | None:
    """(magic number, link type) of a classic pcap whose file header is whole, the stream left after it; None
    for anything else (pcapng, a modified pcap, no capture: dpkt's readers decide), the stream left as it was.
    The header read as dpkt.pcap.Reader reads it, which checks nothing more."""
    head = stream.read(PCAP_FILE_HEADER_SIZE)
    magic = int.from_bytes(head[:4], "big")
    if len(head) == PCAP_FILE_HEADER_SIZE and magic in RECORD_HEADERS:
        return magic, struct.unpack_from(RECORD_HEADERS[magic][0] + "I", head, 20)[0]
    stream.seek(-len(head), 1)
    return None


def not_a_capture(stream: BinaryIO) -> str | None:
    """Why the stream is no capture kbatch reads (its file header is neither pcap's nor pcapng's), or None;
    the stream is left at its start."""
    try:
        if classic_pcap(stream) is None:
            import dpkt
            try:
                _capture_reader(stream)
            except (ValueError, dpkt.dpkt.Error, struct.error, EOFError) as error:
                return f"not a pcap or pcapng file: {error}"
    finally:
        stream.seek(0)
    return None


def address_text(raw: bytes) -> str:
    """An IPv4 or IPv6 address's text from its bytes, as a Segment holds it."""
    import ipaddress
    return str(ipaddress.ip_address(raw))


def _network_layer(link_type: int, frame: bytes):
    import dpkt
    decoders = _link_decoders()
    if link_type in decoders:
        return decoders[link_type](frame).data
    if link_type in LINKTYPE_RAW:
        version = frame[0] >> 4 if frame else 0
        return dpkt.ip6.IP6(frame) if version == 6 else dpkt.ip.IP(frame)
    raise ValueError(f"link type {link_type} is not one kbatch reads (Ethernet, Linux cooked, loopback, raw IP)")


class PacketCount:
    """The packets of a capture read whole so far, every one (TCP or not, Kafka's or not): the last one's
    number, as tshark numbers them."""

    __slots__ = ("whole",)

    def __init__(self) -> None:
        self.whole = 0


def read_segments(stream: BinaryIO, count: PacketCount | None = None) -> Iterator[Segment | PacketProblem]:
    """Every TCP segment of the capture in file order, and a problem for each packet that cannot be read;
    ``count`` counts every packet read whole."""
    watched = _ShortReadWatch(stream)
    classic = classic_pcap(watched)
    if classic is not None:
        magic, link_type = classic
        packets = _pcap_records(watched._stream.read, magic)
    else:
        import dpkt
        try:
            reader = _capture_reader(watched)
        except (ValueError, dpkt.dpkt.Error, struct.error, EOFError) as error:
            yield PacketProblem(0, f"not a pcap or pcapng file: {error}")
            return
        link_type = reader.datalink()
        packets = _dpkt_records(watched, reader)
    yield from _segments(link_type, packets, count)


def resumed_segments(read, magic: int, link_type: int, number: int, count: PacketCount | None = None
                     ) -> Iterator[Segment | PacketProblem]:
    """What :func:`read_segments` gives of a classic pcap from its packet ``number + 1`` on: ``read`` reads the
    file from that packet's record (kbatch.capture.batches hands a capture over to it so, mid-way)."""
    return _segments(link_type, _pcap_records(read, magic, number), count)


def _segments(link_type: int, packets: Iterator[tuple], count: PacketCount | None = None
              ) -> Iterator[Segment | PacketProblem]:
    """The TCP segments of the packets (packet number, time, frame) of a capture of ``link_type``."""
    for number, time, frame in packets:
        if frame is None:           # the file ends: ``time`` says why
            yield PacketProblem(number, time)
            return
        if count is not None:
            count.whole = number
        fast = _plain_tcp(link_type, frame)
        if fast is not None:
            source, sport, destination, dport, seq, ack, flags, payload, cut, wire = fast
            yield Segment(number, time, (source, sport), (destination, dport), seq, flags, payload, cut,
                          ack if flags & TH_ACK else None, wire)
            continue
        import dpkt   # (everything that is not a plain Ethernet or Linux cooked frame's segment: dpkt reads it)
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
            # (dpkt's IP6 has no protocol where an extension header names no next one: no TCP)
            if getattr(ip, "p", None) == IP_PROTO_TCP:
                yield PacketProblem(number, "the TCP header is cut or damaged")
            continue
        # The IP total length says how much TCP payload was sent; a snaplen-cut packet keeps less of it.
        ip_payload = ip.len - ip.__hdr_len__ - len(ip.opts) if isinstance(ip, dpkt.ip.IP) else ip.plen
        sent = max(0, ip_payload - tcp.off * 4)
        payload = bytes(tcp.data)
        cut = max(0, sent - len(payload))
        yield Segment(number, float(time), (address_text(ip.src), tcp.sport), (address_text(ip.dst), tcp.dport),
                      tcp.seq, tcp.flags, payload, cut=cut, ack=tcp.ack if tcp.flags & TH_ACK else None,
                      wire=None if cut else (ip.src, ip.dst, bytes(tcp)))


def _dpkt_records(stream: _ShortReadWatch, reader) -> Iterator[tuple]:
    """(packet number, time, frame) of each packet dpkt's reader gives (pcapng); at the end of a cut file
    (number, why, None)."""
    import dpkt
    packets = iter(reader)
    number = 0
    while True:
        try:
            time, frame = next(packets)
        except StopIteration:
            if stream.short:   # a cut record header
                yield number + 1, f"the capture ends inside packet {number + 1}", None
            return
        except (ValueError, dpkt.dpkt.Error, struct.error, EOFError) as error:
            yield number + 1, f"the capture ends inside packet {number + 1}: {error}", None
            return
        number += 1
        if stream.short:
            yield number, f"the capture ends inside packet {number}", None
            return
        yield number, float(time), frame


def _pcap_records(read, magic: int, number: int = 0) -> Iterator[tuple]:
    """What :func:`_dpkt_records` gives, read here for a classic pcap (``read`` reads the file after its file
    header, or from packet ``number + 1``'s record; ``magic`` its magic number): a struct unpack a packet
    instead of dpkt's header objects.  Times are dpkt's to the last bit (its divisor: 1E6, or Decimal 1E9)."""
    header = struct.Struct(RECORD_HEADERS[magic])
    nano = magic in NANO_MAGICS
    if nano:   # (decimal imported for these files alone)
        from decimal import Decimal
        nano_divisor = Decimal("1E9")   # dpkt's (a microsecond file's: 1E6)
    while True:
        head = read(header.size)
        if len(head) < header.size:
            if head:   # dpkt's reader fails on it so: its words kept
                yield number + 1, f"the capture ends inside packet {number + 1}: got {len(head)}, " \
                                  f"{header.size} needed at least", None
            return
        seconds, fraction, caplen, _ = header.unpack(head)
        frame = read(caplen)
        number += 1
        if 0 < len(frame) < caplen:
            yield number, f"the capture ends inside packet {number}", None
            return
        yield number, float(seconds + Decimal(fraction) / nano_divisor) if nano else seconds + fraction / 1E6, frame


_U16 = struct.Struct(">H").unpack_from
_TCP_START = struct.Struct(">HHII").unpack_from   # source and destination port, sequence and acknowledgment number
_addresses: dict[bytes, str] = {}


def _plain_tcp(link_type: int, frame: bytes) -> tuple | None:
    """An Ethernet or Linux cooked frame's IPv4 or IPv6 TCP segment read with struct where every header is whole
    and plain (no VLAN tag, no IPv6 extension header, not a later fragment, lengths that agree): (source, source
    port, destination, destination port, seq, ack, flags, payload, bytes cut, Segment.wire).  None for anything else, which dpkt
    reads.  The same values dpkt gives: tests/test_capture_packets.py holds the two to each other (and
    kbatch.kernels.plaincapture takes a packet by the same rules)."""
    link = PLAIN_LINKS.get(link_type)
    if link is None or len(frame) < link[0] + 40:
        return None
    ip, ether_type = link[0], _U16(frame, link[1])[0]
    if ether_type == ETH_TYPE_IP:   # (RFC 791 3.1: version and IHL, ..., total length, ..., fragment offset, ...)
        version_ihl = frame[ip]
        header = (version_ihl & 0xF) * 4
        total = _U16(frame, ip + 2)[0]
        if version_ihl >> 4 != 4 or header < 20 or frame[ip + 9] != IP_PROTO_TCP or \
                _U16(frame, ip + 6)[0] & IP_OFFMASK or total < header + 20 or len(frame) < ip + header + 20:
            return None
        source, destination = frame[ip + 12:ip + 16], frame[ip + 16:ip + 20]
        tcp, end, sent = ip + header, ip + total, total - header
    elif ether_type == ETH_TYPE_IP6:   # (RFC 8200 3: ..., payload length, next header, hop limit, addresses)
        sent = _U16(frame, ip + 4)[0]
        if frame[ip + 6] != IP_PROTO_TCP or sent < 20 or len(frame) < ip + 60:
            return None
        source, destination = frame[ip + 8:ip + 24], frame[ip + 24:ip + 40]
        tcp, end = ip + 40, ip + 40 + sent
    else:
        return None
    offset_flags = _U16(frame, tcp + 12)[0]
    offset = (offset_flags >> 12) * 4
    if offset < 20:
        return None
    sport, dport, seq, ack = _TCP_START(frame, tcp)
    view = memoryview(frame)   # (views: the frame sliced out of it is the one copy)
    payload = view[tcp + offset:end]
    cut = max(0, sent - offset - len(payload))
    return (_addresses.get(source) or _remembered(source), sport, _addresses.get(destination) or
            _remembered(destination), dport, seq, ack, offset_flags & 0x1FF, payload, cut,
            None if end > len(frame) else (source, destination, view[tcp:end]))


def tcp_checksum_holds(segment: Segment) -> bool | None:
    """Whether the segment's TCP checksum holds (RFC 9293 3.1: the ones' complement sum of the pseudo-header --
    source and destination address, protocol, TCP length; RFC 8200 8.1's for IPv6 -- and of the header and payload
    as 16-bit words, the last byte padded with a zero, is all ones); None where the capture did not keep it whole.
    A ones' complement sum is the sum modulo 0xFFFF (2**16 is 1 modulo 0xFFFF), so the words are summed as one
    big-endian integer; all ones is 0 modulo 0xFFFF."""
    if segment.wire is None:
        return None
    source, destination, tcp = segment.wire
    size = len(tcp)
    length = size.to_bytes(2 if len(source) == 4 else 4, "big")
    pseudo = source + destination + (b"\x00\x06" + length if len(source) == 4 else length + b"\x00\x00\x00\x06")
    words = int.from_bytes(tcp, "big") << (8 * (size & 1))
    return (int.from_bytes(pseudo, "big") + words) % 0xFFFF == 0


def _remembered(raw: bytes) -> str:
    if len(_addresses) > 4096:
        _addresses.clear()
    address = _addresses[raw] = address_text(raw)
    return address
