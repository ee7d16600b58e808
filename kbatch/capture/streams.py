"""TCP reassembly: each connection's two byte streams, in order, out of segments in capture order.

Per direction the next expected sequence number is kept (from the SYN, else the first segment seen);
a segment ahead of it waits, one behind it (a retransmission) is dropped, one overlapping it gives only its
new bytes.  Waiting bytes are capped per direction: past the cap, or at the end of the capture, the missing
bytes are a gap (the packet number and the connection said) and the stream goes on at the first waiting
segment -- the Kafka layer above resyncs there.  A hole is a gap at once when the other side acknowledges
bytes past it (its ACK number): the receiver had them, so they will not come again and the capture missed them.

Two copies of the same bytes: a receiving TCP keeps the bytes it accepted and trims a later segment to its new
ones (RFC 9293 3.10.7.4), so the first copy taken is kept; where a later copy's bytes differ from it -- from the
last segment a direction delivered, or from a segment waiting or held -- that is a problem told with both packets
and the stream position, never passed over.  But a receiver discards a segment whose checksum fails (RFC 9293
3.1), so where exactly one of two differing copies not yet delivered has a checksum that holds, that one is
taken.  A captured checksum is no proof on its own (a sender's checksum offload leaves every one it sends
unfilled in a capture taken on its host), so a direction's checksums are believed only where its first
segment's holds: on such a direction a segment whose checksum fails is held, not delivered, until a copy whose
checksum holds comes (taken instead), the receiver acknowledges bytes past its start (it took them: the held
copy is all there is), or more bytes wait than the cap allows, or the capture ends (the held copy taken).
Checksums are computed only on a direction believed so, and between differing copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generator, Iterable, Iterator

from kbatch.capture.packets import PacketProblem, Segment, tcp_checksum_holds
from kbatch.format.wire import SEQ_MODULUS, TH_ACK, TH_SYN
from kbatch.output.values import counted
DEFAULT_WAITING_LIMIT = 16 << 20   # out-of-order bytes a direction may hold before its hole is called a gap


def _ahead(a: int, b: int) -> int:
    """How far sequence number ``a`` is past ``b`` (negative: behind), modulo 2**32 (RFC 1982 arithmetic)."""
    distance = (a - b) % SEQ_MODULUS
    return distance - SEQ_MODULUS if distance >= SEQ_MODULUS // 2 else distance


@dataclass(slots=True)   # (one a segment: see kbatch.capture.packets.Segment)
class StreamBytes:
    connection: str      # "client:port -> server:port" of this direction
    packet: int          # the packet the first byte came in
    time: float
    data: bytes | memoryview


@dataclass(frozen=True)
class StreamProblem:
    connection: str
    packet: int          # the packet of the later copy
    what: str


@dataclass(frozen=True)
class StreamGap:
    connection: str
    packet: int          # the first packet after the hole
    missing: int         # bytes never captured
    why: str


@dataclass
class Direction:
    """One direction as reassemble holds it: the next sequence number it delivers (None: not known yet), and the
    segments that came ahead of it (a reader that went over the capture before reassemble hands these over)."""

    next_seq: int | None = None
    waiting: dict = field(default_factory=dict)    # seq -> Segment
    waiting_bytes: int = 0
    checked: bool | None = None    # whether its checksums are believed (its first segment's held); None: no segment
    start: int | None = None       # the sequence number of its first byte (stream position 0)
    last: tuple | None = None      # the last bytes delivered: (their sequence number, packet, bytes)
    held: Segment | None = None    # a segment at next_seq whose checksum fails, on a direction whose are believed


def connection_name(segment: Segment) -> str:
    (src, sport), (dst, dport) = segment.source, segment.destination
    return direction_name(src, sport, dst, dport)


def direction_name(source: str, sport: int, destination: str, dport: int) -> str:
    """"client:port -> server:port" (an IPv6 address in brackets); a later connection on the same ends adds
    " #2" and on (:func:`reassemble`)."""
    return f"{_endpoint(source, sport)} -> {_endpoint(destination, dport)}"


def _endpoint(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def reassemble(items: Iterable[Segment | PacketProblem | StreamProblem], waiting_limit: int = DEFAULT_WAITING_LIMIT,
               directions: dict[str, Direction] | None = None, opened: Callable[[str], None] | None = None
               ) -> Iterator[StreamBytes | StreamGap | StreamProblem | PacketProblem]:
    """The in-order bytes of every TCP direction, gaps, copies that differ, and the packet layer's problems passed
    through.
    ``directions``: each direction's state so far, by name, where the capture was read up to here otherwise
    (kbatch.capture.batches' compiled loop hands it over so).  ``opened(name)``, where given, is told of each
    direction that sends a SYN without ACK: its side opened the connection, the client (RFC 9293 3.5: the active
    open; kbatch.capture.exchanges.Pairing takes it so), before any of the connection's bytes come out.

    A SYN of another initial sequence number on a direction already under way is a new connection on the same
    addresses and ports (a client's port used again once the last connection closed, as Wireshark's "TCP port
    numbers reused"): its directions are named apart, ``... #2`` and on, so that its frames and its correlation
    ids (a client counts them from its start again) are not read as the old connection's."""
    directions = {} if directions is None else directions
    names: dict[tuple, tuple[str, str]] = {}   # (source, destination) -> this direction's name, the other's
    used: dict[frozenset, int] = {}            # the connections so far on each pair of ends, past the first
    for item in items:
        if isinstance(item, (PacketProblem, StreamProblem)):   # (kbatch.capture.batches.kafka_segments says some)
            yield item
            continue
        ends = item.source, item.destination
        if ends not in names:
            names[ends] = connection_name(item), f"{_endpoint(*item.destination)} -> {_endpoint(*item.source)}"
        name, other = names[ends]
        direction = directions.get(name)
        if direction is None:   # (not setdefault: that would make a Direction a segment)
            direction = directions[name] = Direction()
        elif item.flags & 0x02 and direction.next_seq not in (None, (item.seq + 1) % SEQ_MODULUS):
            pair = frozenset(ends)
            used[pair] = number = used.get(pair, 1) + 1
            name, other = (f"{name.partition(' #')[0]} #{number}", f"{other.partition(' #')[0]} #{number}")
            names[ends], names[ends[::-1]] = (name, other), (other, name)
            direction = directions[name] = Direction()
        acknowledged = directions.get(other)
        if item.ack is not None and acknowledged is not None and (acknowledged.waiting or acknowledged.held):
            yield from _acknowledged(directions, other, item, item.ack)   # (it tells only of bytes past a hole)
        if direction.checked is None:
            direction.checked = tcp_checksum_holds(item) is True
        if item.flags & TH_SYN:   # SYN: the data starts one past its sequence number
            direction.next_seq = direction.start = (item.seq + 1) % SEQ_MODULUS
            if opened is not None and not item.flags & TH_ACK:
                opened(name)
            continue
        if not item.payload:
            continue
        if direction.next_seq is None:
            direction.next_seq = direction.start = item.seq
        if item.seq == direction.next_seq and not direction.waiting and not direction.checked:
            # the common case: the next bytes, in order
            direction.next_seq = (item.seq + len(item.payload)) % SEQ_MODULUS
            direction.last = item.seq, item.packet, item.payload
            yield StreamBytes(name, item.packet, item.time, item.payload)
            continue
        if _ahead(item.seq, direction.next_seq) > 0:
            waiting = direction.waiting.get(item.seq)
            if waiting is None:
                direction.waiting[item.seq] = item
                direction.waiting_bytes += len(item.payload)
            else:   # a retransmission of a waiting segment is not counted twice; the copy taken is told apart
                kept = yield from _copies(name, direction, waiting, item)
                if kept is item:
                    direction.waiting[item.seq] = item
                    direction.waiting_bytes += len(item.payload) - len(waiting.payload)
            if direction.waiting_bytes > waiting_limit:
                yield from _skip_to_waiting(name, direction, f"more than {waiting_limit} bytes waited for it")
            continue
        yield from _deliver(name, direction, item)
        yield from _drain(name, direction)
    for name, direction in directions.items():
        if direction.held is not None:
            yield from _release(name, direction)
            yield from _drain(name, direction)
        while direction.waiting:
            yield from _skip_to_waiting(name, direction, "the capture ended before it came")


def _acknowledged(directions: dict, name: str, segment: Segment, ack: int
                  ) -> Iterator[StreamBytes | StreamGap | StreamProblem]:
    """The other direction's (``name``) bytes up to ``segment``'s ACK number ``ack`` the receiver had: those
    never captured before segments waiting beyond them are a gap (RFC 9293 3.4: an ACK says every byte before
    it arrived)."""
    other = directions.get(name)
    if other is None or other.next_seq is None:
        return
    if other.held is not None and _ahead(ack, other.held.seq) > 0:   # the receiver took the held bytes
        yield from _release(name, other)
        yield from _drain(name, other)
    while other.waiting:
        reached = _position(other)
        if _ahead(ack, reached) <= 0:
            break
        first = min(other.waiting, key=lambda seq: _ahead(seq, reached))
        end = first if _ahead(ack, first) >= 0 else ack   # the hole ends where bytes wait
        yield StreamGap(name, segment.packet, _ahead(end, reached), "the other side acknowledged them")
        other.next_seq = end
        yield from _drain(name, other)


def _position(direction: Direction) -> int:
    """The sequence number a direction's stream has reached: known from its first segment on, as it is to
    any direction with bytes to deliver or waiting."""
    assert direction.next_seq is not None
    return direction.next_seq


def _deliver(name: str, direction: Direction, segment: Segment) -> Iterator[StreamBytes | StreamProblem]:
    """The segment's bytes the stream has not delivered yet, once it reaches them (its bytes delivered already
    held to the last ones delivered); held instead where the direction's checksums are believed and its fails; where
    one is held, the copy of it kept (:func:`_copies`)."""
    reached = _position(direction)
    behind = -_ahead(segment.seq, reached)   # bytes of it already delivered (retransmitted)
    size = len(segment.payload)
    if behind > 0 and direction.last is not None:
        yield from _redelivered(name, direction, segment, behind)
    if behind >= size:
        return
    held = direction.held
    if held is not None:   # (it starts where the stream has reached: the two overlap)
        kept = yield from _copies(name, direction, held, segment)
        if kept is held:
            return
        direction.held = None
    elif behind == 0 and direction.checked and tcp_checksum_holds(segment) is False:
        direction.held = segment
        return
    data = segment.payload[behind:]
    direction.next_seq = (reached + len(data)) % SEQ_MODULUS
    direction.last = reached, segment.packet, data
    yield StreamBytes(name, segment.packet, segment.time, data)


def _release(name: str, direction: Direction) -> Iterator[StreamBytes]:
    """The held segment delivered: no copy whose checksum holds came, and it is the one there is."""
    segment = direction.held
    assert segment is not None
    direction.held = None
    direction.next_seq = (segment.seq + len(segment.payload)) % SEQ_MODULUS
    direction.last = segment.seq, segment.packet, segment.payload
    yield StreamBytes(name, segment.packet, segment.time, segment.payload)


def _differing(direction: Direction, first_seq: int, first: bytes | memoryview, second_seq: int,
               second: bytes | memoryview) -> tuple[int, int, list[int]] | None:
    """Where two copies of a direction's bytes overlap and differ: (the sequence number of the overlap's first
    byte, its size, where in it the bytes differ), or None."""
    offset = _ahead(second_seq, first_seq)   # where the second starts in the first (negative: before it)
    low, high = max(0, offset), min(len(first), offset + len(second))
    if low >= high or first[low:high] == second[low - offset:high - offset]:
        return None
    pairs = zip(bytes(first[low:high]), bytes(second[low - offset:high - offset]))
    return (first_seq + low) % SEQ_MODULUS, high - low, [at for at, (a, b) in enumerate(pairs) if a != b]


def _told(direction: Direction, differing: tuple[int, int, list[int]], first: int, second: int, kept: str) -> str:
    """The problem's words: where in the stream (positions from its first byte captured, and the sequence number)."""
    seq, size, changed = differing
    position = seq if direction.start is None else _ahead(seq, direction.start)
    return (f"packet {first} and packet {second} carry bytes {position}..{position + size - 1} of this direction "
            f"(sequence number {seq} on) differently: in {counted(len(changed), 'byte')}, the first at byte "
            f"{position + changed[0]}; {kept}")


def _redelivered(name: str, direction: Direction, segment: Segment, behind: int) -> Iterator[StreamProblem]:
    """A segment carrying bytes delivered already: told where they differ from the last ones delivered."""
    assert direction.last is not None
    last_seq, last_packet, last = direction.last
    differing = _differing(direction, last_seq, last, segment.seq, segment.payload[:behind])
    if differing is not None:
        yield StreamProblem(name, segment.packet, _told(
            direction, differing, last_packet, segment.packet,
            f"packet {last_packet}'s were read: a receiving TCP keeps the bytes it accepted and trims a later "
            f"segment to its new ones (RFC 9293 3.10.7.4)"))


def _copies(name: str, direction: Direction, kept: Segment, later: Segment) -> Generator[StreamProblem, None, Segment]:
    """Which of two copies at the same place not delivered yet is taken (``kept``, waiting or held, came
    first): the first, unless they differ and the later one's checksum alone holds (a receiver discards a segment
    whose checksum fails: RFC 9293 3.1); told where they differ."""
    differing = _differing(direction, kept.seq, kept.payload, later.seq, later.payload)
    if direction.held is kept:
        if tcp_checksum_holds(later) is not True:   # (the held copy waits on)
            if differing is not None:
                yield StreamProblem(name, later.packet, _told(
                    direction, differing, kept.packet, later.packet,
                    f"neither's TCP checksum holds: packet {kept.packet}'s are held until a copy whose checksum "
                    f"holds comes, or the receiver acknowledges them"))
            return kept
        if differing is not None:
            yield StreamProblem(name, later.packet, _told(direction, differing, kept.packet, later.packet,
                                                          _checksum_chose(later, kept)))
        return later
    if differing is None:
        return kept
    if tcp_checksum_holds(later) is True and tcp_checksum_holds(kept) is False:
        choice, why = later, _checksum_chose(later, kept)
    else:
        choice, why = kept, (f"packet {kept.packet}'s were read, the first to come, the other's checksum not "
                             f"telling them apart")
    yield StreamProblem(name, later.packet, _told(direction, differing, kept.packet, later.packet, why))
    return choice


def _checksum_chose(taken: Segment, discarded: Segment) -> str:
    """Why ``taken``'s copy of some bytes was read, not ``discarded``'s."""
    return (f"packet {taken.packet}'s were read, its TCP checksum holding and packet {discarded.packet}'s failing: "
            f"a receiving TCP discards a segment whose checksum fails (RFC 9293 3.1)")


def _drain(name: str, direction: Direction) -> Iterator[StreamBytes | StreamProblem]:
    """The waiting segments the stream has now reached."""
    while True:
        reached = _position(direction)
        ready = [seq for seq in direction.waiting if _ahead(seq, reached) <= 0]
        if not ready:
            return
        for seq in sorted(ready, key=lambda seq: _ahead(seq, reached)):
            segment = direction.waiting.pop(seq)
            direction.waiting_bytes -= len(segment.payload)
            yield from _deliver(name, direction, segment)


def _skip_to_waiting(name: str, direction: Direction, why: str) -> Iterator[StreamBytes | StreamGap | StreamProblem]:
    if direction.held is not None:   # (the held copy is the one there is)
        yield from _release(name, direction)
        yield from _drain(name, direction)
        if not direction.waiting:
            return
    reached = _position(direction)
    first = min(direction.waiting, key=lambda seq: _ahead(seq, reached))
    missing = _ahead(first, reached)
    yield StreamGap(name, direction.waiting[first].packet, missing, why)
    direction.next_seq = first
    yield from _drain(name, direction)


@dataclass
class WrittenStreams:
    """What :func:`write_streams` wrote: each direction's file, and what kept a direction from being whole."""

    paths: dict = field(default_factory=dict)       # connection ("client:port -> server:port") -> its file
    problems: list = field(default_factory=list)    # StreamGap, StreamProblem and PacketProblem, in capture order


def write_streams(items: Iterable[Segment | PacketProblem], directory: str,
                  waiting_limit: int = DEFAULT_WAITING_LIMIT) -> WrittenStreams:
    """Each TCP direction's reassembled bytes (:func:`reassemble`) written to a file of its own in ``directory``
    (``00001.stream``, ... in the order the directions first carried data), for readers other than kbatch's to
    take the same streams.  A file ends at its direction's first gap: the bytes after a hole cannot continue it."""
    import os

    written = WrittenStreams()
    broken: set[str] = set()
    for event in reassemble(items, waiting_limit):
        if not isinstance(event, StreamBytes):
            written.problems.append(event)
            if isinstance(event, StreamGap):
                broken.add(event.connection)
            continue
        if event.connection in broken:
            continue
        path, mode = written.paths.get(event.connection), "ab"
        if path is None:   # a new direction: its file must not be there yet ("x"), no other file is written over
            path = written.paths[event.connection] = os.path.join(directory, f"{len(written.paths) + 1:05d}.stream")
            mode = "xb"
        with open(path, mode) as out:
            out.write(event.data)
    return written
