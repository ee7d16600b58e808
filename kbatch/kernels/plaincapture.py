"""A classic pcap's common case read in one compiled loop, from the packet record to the Kafka frame: for
kbatch.capture.batches, which uses it only compiled (as plain Python the generators of kbatch.capture read
every capture: the same result, tests/test_capture_plain.py holds the two to each other).

The loop takes a packet when everything about it is plain: a whole record of a microsecond pcap, an Ethernet or
Linux cooked frame's IPv4 or IPv6 TCP header read as kbatch.capture.packets._plain_tcp reads it (the rule is there, and
this loop takes no packet that function would not), a port of ``ports`` at either end, and its bytes the next
ones of its direction (kbatch.capture.streams.reassemble's common case: in order, none waiting) or none (a SYN,
a bare ACK).  Those bytes are cut into Kafka frames as kbatch.capture.frames.Framer.feed cuts them, a frame
that spans segments gathered straight into the bytes object it becomes.  At the first packet it does not take
-- out of order, a retransmission, another port, another link or IP layer, a cut record, the file's end -- or
at an absurd frame size, the loop stops, and the generators of kbatch.capture go on from there with its state
(:meth:`PlainCapture.flows`, :meth:`PlainCapture.rest`): what comes out is what they give for the whole file.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # not compiled and no Cython installed: the same code as plain Python
    from kbatch.kernels import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython.bytearray import PyByteArray_AS_STRING
    from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_FromStringAndSize
    from cython.cimports.libc.string import memcpy, memmove

from kbatch.format.wire import (ETH_TYPE_IP, ETH_TYPE_IP6, IP_OFFMASK, IP_PROTO_TCP, LARGEST_FRAME, SEQ_MODULUS,
                                SIZE_BYTES, SMALLEST_FRAME, TH_ACK, TH_SYN)

_RECORD_HEADER = cython.declare(cython.Py_ssize_t, 16)   # seconds, microseconds, captured and original length
_CHUNK = cython.declare(cython.Py_ssize_t, 4 << 20)      # the file is read this much at a time
_BIGGEST_RECORD = cython.declare(cython.Py_ssize_t, 1 << 20)   # a longer record is left to kbatch.capture
_SEQ_MASK = cython.declare(cython.longlong, SEQ_MODULUS - 1)
_SYN = cython.declare(cython.int, TH_SYN)
_ACK = cython.declare(cython.int, TH_ACK)
_ETH_IP = cython.declare(cython.int, ETH_TYPE_IP)
_ETH_IP6 = cython.declare(cython.int, ETH_TYPE_IP6)
_PROTO_TCP = cython.declare(cython.int, IP_PROTO_TCP)
_OFFMASK = cython.declare(cython.int, IP_OFFMASK)
_SIZE_BYTES = cython.declare(cython.Py_ssize_t, SIZE_BYTES)
_SMALLEST = cython.declare(cython.longlong, SMALLEST_FRAME)
_LARGEST = cython.declare(cython.longlong, LARGEST_FRAME)
# A frame gathered over segments is made in place, as big as its size says, up to this; a bigger one (rare, and
# what a hostile size field asks for) grows with the bytes that come.
_MADE_IN_PLACE = cython.declare(cython.Py_ssize_t, 16 << 20)

# Why the loop stopped (PlainCapture.stopped)
RUNNING, HANDED_OVER, ABSURD_SIZE = 0, 1, 2
COMPILED = bool(cython.compiled)   # (kbatch.capture.batches takes the loop only compiled)


@cython.final
@cython.cclass
class Flow:
    """One TCP direction as the loop keeps it: reassemble's next sequence number, and the framer's frame begun."""

    key = cython.declare(bytes, visibility="readonly")      # source address, destination address, their ports
    next_seq = cython.declare(cython.longlong, visibility="readonly")   # -1: not known yet
    framed = cython.declare(cython.bint, visibility="readonly")         # bytes came: it has a framer
    # the frame begun: its size field so far (head_size of its 4 bytes, big-endian in head), its bytes so far,
    # the packet it began in
    head = cython.declare(cython.longlong)
    head_size = cython.declare(cython.Py_ssize_t, visibility="readonly")
    frame = cython.declare(object)          # bytes made in place (compiled), else a bytearray that grows
    in_place = cython.declare(cython.bint)
    have = cython.declare(cython.Py_ssize_t, visibility="readonly")
    wanted = cython.declare(cython.Py_ssize_t, visibility="readonly")
    packet = cython.declare(cython.longlong, visibility="readonly")
    time = cython.declare(cython.double, visibility="readonly")
    name = cython.declare(object, visibility="public")   # its connection's name, as kbatch.capture.streams says it
    # kbatch.capture.streams.Direction's: whether its checksums are believed (1; 0 not, -1 not known yet), the
    # sequence number of its first byte (-1: not known yet), and the last bytes taken: their sequence number,
    # packet, and where they lie in the loop's buffer (last_at, -1 once copied out to last_bytes) and how many
    checked = cython.declare(cython.int, visibility="readonly")
    start_seq = cython.declare(cython.longlong, visibility="readonly")
    last_seq = cython.declare(cython.longlong)
    last_packet = cython.declare(cython.longlong)
    last_at = cython.declare(cython.Py_ssize_t)
    last_size = cython.declare(cython.Py_ssize_t)
    last_bytes = cython.declare(object)

    def __init__(self, key: bytes):
        self.key = key
        self.next_seq = -1
        self.checked = -1
        self.start_seq = self.last_seq = -1
        self.last_packet = 0
        self.last_at = -1
        self.last_size = 0
        self.last_bytes = None
        self.framed = False
        self.head = self.head_size = self.have = self.wanted = 0
        self.frame = None
        self.in_place = False
        self.packet, self.time = 0, 0.0
        self.name = None

    def size_field(self) -> bytes:
        """The frame begun's size field so far."""
        return self.head.to_bytes(self.head_size, "big")

    def gathered(self) -> bytes:
        """The frame begun's bytes after its size field so far."""
        return bytes(memoryview(self.frame)[:self.have]) if self.frame is not None else b""


@cython.final
@cython.cclass
class PlainCapture:
    """The loop over a classic pcap's records after its file header (see the module).  :meth:`frames` gives
    the next Kafka frames; once it gives none, :attr:`stopped` says why, :meth:`flows` is every direction's
    state in the order reassemble met them, :attr:`number` the packets read, :meth:`rest` the file from the
    next record on."""

    read = cython.declare(object)            # the file's readinto
    name_flow = cython.declare(object)
    opened = cython.declare(object)
    buffer = cython.declare(bytearray)
    filled = cython.declare(cython.Py_ssize_t)
    at = cython.declare(cython.Py_ssize_t)   # the next record's header in buffer
    at_end = cython.declare(cython.bint)     # the file read to its end
    big_endian = cython.declare(cython.bint)
    link_size = cython.declare(cython.Py_ssize_t)      # the link header's length
    ether_type_at = cython.declare(cython.Py_ssize_t)  # where its EtherType lies
    ports = cython.declare(frozenset)
    make_frame = cython.declare(object)
    by_key = cython.declare(dict)
    order = cython.declare(list)             # the flows in the order met
    live = cython.declare(list)              # the flows whose last bytes lie in buffer (Flow.last_at)
    framed_order = cython.declare(list)      # those that carried bytes, in the order they first did
    number = cython.declare(cython.longlong, visibility="readonly")        # packets read
    last_segment = cython.declare(cython.longlong, visibility="readonly")  # the last TCP segment's packet number
    stopped = cython.declare(cython.int, visibility="readonly")
    # an absurd size: the flow, its packet, the size and the bytes after its size field in the segment
    absurd_flow = cython.declare(Flow, visibility="readonly")
    absurd_packet = cython.declare(cython.longlong, visibility="readonly")
    absurd_size = cython.declare(cython.longlong, visibility="readonly")
    absurd_unread = cython.declare(cython.Py_ssize_t, visibility="readonly")

    def __init__(self, readinto, big_endian: cython.bint, link: tuple, ports, make_frame, name_flow, opened=None):
        """``readinto``: the file's, after its file header; ``link``: its link header's length and where its
        EtherType lies (kbatch.capture.packets.PLAIN_LINKS); ``make_frame(connection, packet, time, data)`` makes
        a frame (kbatch.capture.frames.KafkaFrame); ``ports`` as kbatch.capture.batches.kafka_segments takes;
        ``name_flow(addresses, ports)`` names a direction from its source and destination address and port (as
        they lie in the IP and TCP headers); ``opened(name)``, where given, is told of each direction that sends a
        SYN without ACK, as kbatch.capture.streams.reassemble tells it."""
        self.read = readinto
        self.name_flow = name_flow
        self.opened = opened
        self.buffer = bytearray(_CHUNK + _BIGGEST_RECORD)
        self.filled = self.at = 0
        self.at_end = False
        self.big_endian = big_endian
        self.link_size, self.ether_type_at = link
        self.ports = frozenset(ports)
        self.make_frame = make_frame
        self.by_key = {}
        self.order = []
        self.live = []
        self.framed_order = []
        self.number = self.last_segment = 0
        self.stopped = RUNNING
        self.absurd_flow = None
        self.absurd_packet = self.absurd_size = 0
        self.absurd_unread = 0

    def flows(self) -> list:
        """Every direction met, in the order met (kbatch.capture.streams.reassemble's)."""
        return list(self.order)

    def framed_flows(self) -> list:
        """Every direction that carried bytes, in the order each first did (kbatch.capture.frames.kafka_frames')."""
        return list(self.framed_order)

    def last_of(self, flow: Flow):
        """The last bytes the loop took of ``flow``'s direction: (their sequence number, packet, bytes), as
        kbatch.capture.streams.Direction.last holds them; None where it took none."""
        if flow.last_seq < 0:
            return None
        if flow.last_at >= 0:
            return flow.last_seq, flow.last_packet, bytes(self.buffer[flow.last_at:flow.last_at + flow.last_size])
        return flow.last_seq, flow.last_packet, flow.last_bytes

    def rest(self) -> bytes:
        """The bytes read from the file and not taken (the records from the next one on, or part of them)."""
        return bytes(self.buffer[self.at:self.filled])

    @cython.cfunc
    def _word(self, buf: cython.const[cython.uchar][::1], i: cython.Py_ssize_t) -> cython.longlong:
        if self.big_endian:
            return (cython.cast(cython.longlong, buf[i]) << 24) | (buf[i + 1] << 16) | (buf[i + 2] << 8) | buf[i + 3]
        return (cython.cast(cython.longlong, buf[i + 3]) << 24) | (buf[i + 2] << 16) | (buf[i + 1] << 8) | buf[i]

    @cython.cfunc
    def _refill(self) -> cython.bint:
        """More of the file after the bytes not taken (moved to the buffer's start); False at its end."""
        if self.at_end:
            return False
        left: cython.Py_ssize_t = self.filled - self.at
        flow: Flow
        for flow in self.live:   # (their bytes lie before at: moved over)
            flow.last_bytes = bytes(self.buffer[flow.last_at:flow.last_at + flow.last_size])
            flow.last_at = -1
        self.live.clear()
        if cython.compiled:
            start: cython.p_char = PyByteArray_AS_STRING(self.buffer)
            memmove(start, start + self.at, left)
        else:
            self.buffer[:left] = self.buffer[self.at:self.filled]
        self.at, self.filled = 0, left
        view = memoryview(self.buffer)
        while self.filled < _CHUNK:
            got = self.read(view[self.filled:_CHUNK])
            if not got:
                self.at_end = True
                break
            self.filled += got
        return self.filled > left

    def frames(self) -> list:
        """The Kafka frames of the next packets taken (at least one packet's worth, unless it stopped)."""
        out: list = []
        buf: cython.const[cython.uchar][::1]
        record: cython.Py_ssize_t
        caplen: cython.Py_ssize_t
        while self.stopped == RUNNING and not out:
            if self.filled - self.at < _RECORD_HEADER and not self._refill():
                self.stopped = HANDED_OVER
                break
            buf = self.buffer
            record = self.at
            if self.filled - record < _RECORD_HEADER:
                continue
            caplen = self._word(buf, record + 8)
            if caplen > _BIGGEST_RECORD:
                self.stopped = HANDED_OVER
                break
            if self.filled - record < _RECORD_HEADER + caplen:
                if not self._refill():
                    self.stopped = HANDED_OVER
                continue
            if not self._packet(buf, record, caplen, out):
                self.stopped = HANDED_OVER if self.stopped == RUNNING else self.stopped
                break
        return out

    @cython.cfunc
    def _packet(self, buf: cython.const[cython.uchar][::1], record: cython.Py_ssize_t, caplen: cython.Py_ssize_t,
                out: list) -> cython.bint:
        """Take the packet whose record starts at ``record``: False (nothing changed) where it is not plain.
        The rules are kbatch.capture.packets._plain_tcp's, then kbatch.capture.streams.reassemble's."""
        frame: cython.Py_ssize_t = record + _RECORD_HEADER
        ip: cython.Py_ssize_t = frame + self.link_size
        if caplen < self.link_size + 40:
            return False
        ether_type: cython.int = buf[frame + self.ether_type_at] << 8 | buf[frame + self.ether_type_at + 1]
        header: cython.Py_ssize_t
        total: cython.Py_ssize_t
        tcp: cython.Py_ssize_t
        end: cython.Py_ssize_t
        sent: cython.Py_ssize_t
        source: cython.Py_ssize_t
        size: cython.Py_ssize_t   # of an address
        if ether_type == _ETH_IP:
            header = (buf[ip] & 0xF) * 4
            total = buf[ip + 2] << 8 | buf[ip + 3]
            if buf[ip] >> 4 != 4 or header < 20 or buf[ip + 9] != _PROTO_TCP or \
                    (buf[ip + 6] << 8 | buf[ip + 7]) & _OFFMASK or total < header + 20 or \
                    caplen < self.link_size + header + 20:
                return False
            source, size = ip + 12, 4
            tcp, end, sent = ip + header, ip + total, total - header
        elif ether_type == _ETH_IP6:
            sent = buf[ip + 4] << 8 | buf[ip + 5]
            if buf[ip + 6] != _PROTO_TCP or sent < 20 or caplen < self.link_size + 60:
                return False
            source, size = ip + 8, 16
            tcp, end = ip + 40, ip + 40 + sent
        else:
            return False
        offset_flags: cython.int = buf[tcp + 12] << 8 | buf[tcp + 13]
        offset: cython.Py_ssize_t = (offset_flags >> 12) * 4
        if offset < 20:
            return False
        sport: cython.int = buf[tcp] << 8 | buf[tcp + 1]
        dport: cython.int = buf[tcp + 2] << 8 | buf[tcp + 3]
        if sport not in self.ports and dport not in self.ports:
            return False   # (kafka_segments decides whether another connection is Kafka's)
        seq: cython.longlong = (cython.cast(cython.longlong, buf[tcp + 4]) << 24) | (buf[tcp + 5] << 16) | \
            (buf[tcp + 6] << 8) | buf[tcp + 7]
        # the payload as the memoryview slice of _plain_tcp: clamped to the frame
        start: cython.Py_ssize_t = min(tcp + offset, frame + caplen)
        stop: cython.Py_ssize_t = max(start, min(end, frame + caplen))
        addresses = _bytes(buf, source, source + 2 * size)
        ports = _bytes(buf, tcp, tcp + 4)
        key = addresses + ports
        flow: Flow = self.by_key.get(key)
        is_new: cython.bint = flow is None
        if is_new:
            flow = Flow(key)
            flow.name = self.name_flow(addresses, ports)
        syn: cython.bint = (offset_flags & _SYN) != 0
        if not syn and stop > start and flow.next_seq >= 0 and seq != flow.next_seq:
            return False   # out of order or retransmitted: reassemble's
        if syn and not is_new and flow.next_seq >= 0 and ((seq + 1) & _SEQ_MASK) != flow.next_seq:
            return False   # a new connection on the same ends: reassemble's (it names it apart)
        whole: cython.bint = end <= frame + caplen   # (else its checksum is not known)
        if not is_new and not syn and stop > start and flow.checked == 1 and whole and \
                not _checksum_holds(buf, source, size, tcp, end):
            return False   # its checksum fails where the direction's are believed: reassemble holds it
        if is_new:
            flow.checked = 1 if whole and _checksum_holds(buf, source, size, tcp, end) else 0
            self.by_key[key] = flow
            self.order.append(flow)
        self.at = frame + caplen
        self.number += 1
        self.last_segment = self.number
        if syn:
            flow.next_seq = flow.start_seq = (seq + 1) & _SEQ_MASK
            if not offset_flags & _ACK and self.opened is not None:
                self.opened(flow.name)
            return True
        if stop == start:
            return True
        if flow.next_seq < 0:
            flow.start_seq = seq
        flow.next_seq = (seq + (stop - start)) & _SEQ_MASK
        flow.last_seq, flow.last_packet, flow.last_size, flow.last_bytes = seq, self.number, stop - start, None
        if flow.last_at < 0:
            self.live.append(flow)
        flow.last_at = start
        seconds: cython.longlong = self._word(buf, record)
        fraction: cython.longlong = self._word(buf, record + 4)
        time: cython.double = cython.cast(cython.double, seconds) + cython.cast(cython.double, fraction) / 1E6
        if not flow.framed:
            flow.framed = True
            self.framed_order.append(flow)
        self._feed(flow, buf, start, stop, time, out)
        return True

    @cython.cfunc
    def _feed(self, flow: Flow, buf: cython.const[cython.uchar][::1], at: cython.Py_ssize_t, end: cython.Py_ssize_t,
              time: cython.double, out: list) -> cython.void:
        """kbatch.capture.frames.Framer.feed on a segment's bytes ``buf[at:end]``."""
        take: cython.Py_ssize_t
        k: cython.Py_ssize_t
        size: cython.longlong
        packet: cython.longlong = self.number
        while True:
            if flow.head_size:
                if flow.head_size < _SIZE_BYTES:
                    take = min(_SIZE_BYTES - flow.head_size, end - at)
                    for k in range(take):
                        flow.head = flow.head << 8 | buf[at + k]
                    flow.head_size += take
                    at += take
                    if flow.head_size < _SIZE_BYTES:
                        return
                    size = flow.head - _WORD_SPAN if flow.head >= _SIGN_BIT else flow.head
                    if not _SMALLEST <= size <= _LARGEST:
                        self._absurd(flow, flow.packet, size, end - at)
                        return
                    self._begin(flow, size)
                take = min(flow.wanted - flow.have, end - at)
                if take:
                    self._gather(flow, buf, at, take)
                    at += take
                if flow.have < flow.wanted:
                    return
                out.append(self.make_frame(flow.name, flow.packet, flow.time, self._finish(flow)))
                continue
            if at == end:
                return
            flow.packet, flow.time = packet, time
            if end - at < _SIZE_BYTES:
                flow.head = 0
                for k in range(end - at):
                    flow.head = flow.head << 8 | buf[at + k]
                flow.head_size = end - at
                return
            size = _signed_word(buf, at)
            if not _SMALLEST <= size <= _LARGEST:
                self._absurd(flow, packet, size, end - at - _SIZE_BYTES)
                return
            if at + _SIZE_BYTES + size > end:
                flow.head, flow.head_size = size if size >= 0 else size + _WORD_SPAN, _SIZE_BYTES
                self._begin(flow, size)
                self._gather(flow, buf, at + _SIZE_BYTES, end - at - _SIZE_BYTES)
                return
            out.append(self.make_frame(flow.name, packet, time, _bytes(buf, at + _SIZE_BYTES, at + _SIZE_BYTES + size)))
            at += _SIZE_BYTES + size

    @cython.cfunc
    def _absurd(self, flow: Flow, packet: cython.longlong, size: cython.longlong, unread: cython.Py_ssize_t
                ) -> cython.void:
        """Stop at an absurd size: kbatch.capture.frames.Framer.absurd says it, with the framer handed over."""
        self.stopped = ABSURD_SIZE
        self.absurd_flow, self.absurd_packet, self.absurd_size, self.absurd_unread = flow, packet, size, unread
        flow.head = flow.head_size = flow.have = flow.wanted = 0   # (the frame begun is dropped: Framer.absurd's lose_step)
        flow.frame = None

    @cython.cfunc
    def _begin(self, flow: Flow, size: cython.Py_ssize_t) -> cython.void:
        flow.wanted, flow.have = size, 0
        if cython.compiled and size <= _MADE_IN_PLACE:
            flow.frame, flow.in_place = PyBytes_FromStringAndSize(cython.NULL, size), True
        else:
            flow.frame, flow.in_place = bytearray(), False

    @cython.cfunc
    def _gather(self, flow: Flow, buf: cython.const[cython.uchar][::1], at: cython.Py_ssize_t,
                size: cython.Py_ssize_t) -> cython.void:
        if cython.compiled:
            if flow.in_place:
                memcpy(PyBytes_AS_STRING(flow.frame) + flow.have, cython.address(buf[at]), size)
                flow.have += size
                return
        flow.frame += buf[at:at + size]
        flow.have += size

    @cython.cfunc
    def _finish(self, flow: Flow) -> bytes:
        frame = flow.frame if flow.in_place else bytes(flow.frame)
        flow.frame, flow.head, flow.head_size, flow.have, flow.wanted = None, 0, 0, 0, 0
        return frame


_SIGN_BIT = cython.declare(cython.longlong, 1 << 31)
_WORD_SPAN = cython.declare(cython.longlong, 1 << 32)


@cython.cfunc
@cython.inline
def _signed_word(buf: cython.const[cython.uchar][::1], at: cython.Py_ssize_t) -> cython.longlong:
    """The big-endian int32 at ``buf[at]`` (a Kafka frame's size)."""
    value: cython.longlong = (cython.cast(cython.longlong, buf[at]) << 24) | (buf[at + 1] << 16) | \
        (buf[at + 2] << 8) | buf[at + 3]
    return value - _WORD_SPAN if value >= _SIGN_BIT else value


@cython.cfunc
def _checksum_holds(buf: cython.const[cython.uchar][::1], source: cython.Py_ssize_t, size: cython.Py_ssize_t,
                    tcp: cython.Py_ssize_t, end: cython.Py_ssize_t) -> cython.bint:
    """kbatch.capture.packets.tcp_checksum_holds on the segment ``buf[tcp:end]`` of an IP header whose addresses,
    ``size`` bytes each, start at ``buf[source]``: the pseudo-header's words (the addresses, the protocol, the TCP
    length) and the segment's, summed modulo 0xFFFF, are 0."""
    total: cython.ulonglong = _PROTO_TCP + (end - tcp)
    k: cython.Py_ssize_t
    for k in range(source, source + 2 * size, 2):
        total += buf[k] << 8 | buf[k + 1]
    for k in range(tcp, end - 1, 2):
        total += buf[k] << 8 | buf[k + 1]
    if (end - tcp) & 1:
        total += buf[end - 1] << 8
    return total % 0xFFFF == 0


@cython.cfunc
@cython.inline
def _bytes(buf: cython.const[cython.uchar][::1], start: cython.Py_ssize_t, stop: cython.Py_ssize_t) -> bytes:
    """``bytes(buf[start:stop])`` (``start`` < ``stop`` <= len(buf)), made from where they lie."""
    if cython.compiled:
        made = PyBytes_FromStringAndSize(cython.cast(cython.p_char, cython.address(buf[start])), stop - start)
    else:
        made = bytes(buf[start:stop])
    return made
