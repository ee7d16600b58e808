"""Kafka requests and responses out of frames, paired by correlation id.

The request header's first fields are read without knowing whether the request's version is flexible
(clients/src/main/resources/common/message/RequestHeader.json): RequestApiKey int16, RequestApiVersion int16,
CorrelationId int32, then ClientId -- a nullable string with the old two-byte length even in flexible header v2
("flexibleVersions": "none"), absent only in header v0 (ControlledShutdown v0).  The body starts after the
header's tagged fields, which need the request's flexible versions: :attr:`Request.after_client_id` says where
they begin.  A response starts with the correlation id of the request it answers (ResponseHeader.json).

Which direction of a connection carries requests (:class:`Pairing`): the one to a broker's port -- a broker
reads a request header from every receive on a connection it accepted (SocketServer's Processor.
processCompletedReceives), and sends nothing but responses -- else the one whose side sent the SYN (the client
opens the connection: RFC 9293 3.5), else, as a guess that is said, what the bytes tell: the direction one of
whose frames reads as a request header of an API key and version read here (:func:`known_request`) and is
answered -- a frame from the other side, later, begins with its correlation id.  The connection's frames are
held until they tell so (a capture begun mid-connection may begin with a broker's response, whose bytes can read
as a request header too); where they do not, within :data:`HELD_FRAMES` frames or by the capture's end, the one
that spoke first, unless its first frame reads as no request header (a Kafka client speaks first on a
connection).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Generator, Iterable, Iterator

from kbatch.capture.frames import FrameProblem, KafkaFrame
from kbatch.messages.schemas import SCHEMAS

CONTROLLED_SHUTDOWN = 7   # its version 0 alone has request header v0, without ClientId
DEFAULT_PORTS = (9092,)   # the broker ports read when none are given (kbatch pcap --port)
# ApiKeys (clients/src/main/java/org/apache/kafka/common/protocol/ApiKeys.java): the ones read here.
PRODUCE, FETCH, METADATA, API_VERSIONS, SHARE_FETCH = 0, 1, 3, 18, 78
API_NAMES = {PRODUCE: "Produce", FETCH: "Fetch", METADATA: "Metadata", API_VERSIONS: "ApiVersions",
             SHARE_FETCH: "ShareFetch"}
# A connection whose requesting direction is a guess: its frames held until they tell it, at most this many, and
# this many bytes of frames held in all (past it the connection held longest is decided without them).
HELD_FRAMES = 64
HELD_BYTES = 64 << 20
_HEADER_START = struct.Struct(">hhi")   # RequestApiKey, RequestApiVersion, CorrelationId
_CLIENT_ID_LENGTH = struct.Struct(">h")   # (ClientId: a nullable string with the two-byte length, every version)


@dataclass(slots=True)   # (one a message: see kbatch.capture.packets.Segment)
class Request:
    connection: str
    packet: int
    time: float
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    after_client_id: int    # frame offset of the header's tagged fields (flexible) or of the body
    frame: bytes


@dataclass(slots=True)   # (one a message: see kbatch.capture.packets.Segment)
class Response:
    connection: str
    packet: int
    time: float
    request: Request
    frame: bytes            # from the correlation id on


def connection_pair(connection: str) -> frozenset:
    """The connection a direction ("client:port -> server:port", with " #N" for a later one on the same ends)
    belongs to: the same for its two directions."""
    source, _, destination = connection.partition(" -> ")
    destination, _, number = destination.partition(" #")
    return frozenset((source, destination, number))


def read_request(frame: KafkaFrame) -> Request | FrameProblem:
    data = frame.data
    if len(data) < 8:
        return FrameProblem(frame.connection, frame.packet, f"a request of {len(data)} bytes: shorter than its header")
    api_key, api_version, correlation_id = _HEADER_START.unpack_from(data)
    client_id, position = None, 8
    if not (api_key == CONTROLLED_SHUTDOWN and api_version == 0):
        if len(data) < 10:
            return FrameProblem(frame.connection, frame.packet, "the request header ends before its ClientId")
        (length,) = _CLIENT_ID_LENGTH.unpack_from(data, 8)
        position = 10
        if length >= 0:
            if position + length > len(data):
                return FrameProblem(frame.connection, frame.packet,
                                    f"the ClientId's length {length} runs past the request ({len(data)} bytes)")
            client_id = data[position:position + length].decode("utf-8", errors="replace")
            position += length
        elif length != -1:
            return FrameProblem(frame.connection, frame.packet, f"a ClientId length of {length} (expected -1 or more)")
    return Request(frame.connection, frame.packet, frame.time, api_key, api_version, correlation_id, client_id,
                   position, data)


def known_request(request: Request) -> bool:
    """Whether a request header read is of an API key read here at a version its response has in Kafka's
    definitions (a response's bytes read as a request header give what its correlation id and body happen to)."""
    name = API_NAMES.get(request.api_key)
    if name is None:
        return False
    low, high = SCHEMAS[name + "Response"].valid_range
    return low <= request.api_version <= high


def answering(frame: KafkaFrame) -> int:
    """The correlation id a frame read as a response begins with (ResponseHeader: its first field; the framer
    hands out no frame shorter than it, kbatch.format.wire.SMALLEST_FRAME)."""
    return int.from_bytes(frame.data[:4], "big", signed=True)


def _header_only(request: Request) -> Request:
    """The request without its frame's bytes (dataclasses.replace's result, made without its walk over the
    fields: one a request)."""
    return Request(request.connection, request.packet, request.time, request.api_key, request.api_version,
                   request.correlation_id, request.client_id, request.after_client_id, b"")


def reverse(connection: str) -> str:
    """The other direction of ``connection``'s connection (its name as kbatch.capture.streams names it)."""
    source, _, destination = connection.partition(" -> ")
    destination, hash_, number = destination.partition(" #")
    return f"{destination} -> {source}{hash_}{number}"


def _port(endpoint: str) -> int:
    """The port of an endpoint as a direction's name writes it ("address:port", "[IPv6 address]:port")."""
    return int(endpoint.rpartition(":")[2])


class Pairing:
    """Which direction of each connection carries requests, and the requests not answered yet.  ``ports``: the
    brokers' ports; :meth:`opened` is told of each direction whose side opened its connection (sent the SYN)."""

    def __init__(self, ports: Iterable[int] = DEFAULT_PORTS):
        self.ports = frozenset(ports)
        self.requesters: dict[frozenset, str] = {}
        self.waiting: dict[tuple[str, int], Request] = {}   # (request direction, correlation id) -> request
        self.openers: set[str] = set()   # directions that sent a SYN, their connection's requester not decided yet
        # a connection whose requester is a guess, until its frames tell it: its frames so far, and for each
        # direction the correlation ids of its frames that read as requests (known_request)
        self.held: dict[frozenset, list[KafkaFrame]] = {}
        self.asked: dict[frozenset, dict[str, set[int]]] = {}
        self.held_bytes = 0

    def opened(self, connection: str) -> None:
        """``connection``'s side opened its connection: it sent a SYN without ACK (kbatch.capture.streams.reassemble
        and the compiled loop tell it so, before any of its bytes)."""
        if len(self.openers) >= 1 << 16:   # (a capture of connections that never carry a frame is not all kept)
            self.openers.clear()
        self.openers.add(connection)

    def requester(self, connection: str) -> tuple[str, bool]:
        """The requesting direction of ``connection``'s connection by its ports, else its SYN, where ``connection``
        speaks first, and whether it is a guess (neither the ports nor a captured SYN told)."""
        other = reverse(connection)
        source, _, destination = connection.partition(" #")[0].partition(" -> ")
        to_broker, from_broker = _port(destination) in self.ports, _port(source) in self.ports
        if to_broker != from_broker:   # (a broker port at one end only: the port wins)
            return (connection if to_broker else other), False
        if connection in self.openers or other in self.openers:
            return (connection if connection in self.openers else other), False
        return connection, True

    def _guessed(self, connection: str) -> str:
        """Why the client of ``connection``'s connection was guessed (:meth:`requester`): its ports tell nothing, a
        broker's port at neither end or at both, and its SYN was not captured."""
        source, _, destination = connection.partition(" #")[0].partition(" -> ")
        ports = ("both ports are brokers' (--port)" if _port(source) in self.ports and _port(destination) in self.ports
                 else "neither port is a broker's (--port)")
        return f"which side is the client was guessed: {ports} and the connection's SYN was not captured"

    def carries_requests(self, connection: str) -> bool:
        """Whether ``connection`` is its pair's requesting direction (where the pair has not spoken yet: would be,
        were it to speak first)."""
        requester = self.requesters.get(connection_pair(connection))
        return (requester or self.requester(connection)[0]) == connection

    def awaited(self, connection: str, correlation_id: int) -> bool:
        """Whether a response on ``connection`` with ``correlation_id`` answers a request not answered yet."""
        requester = self.requesters.get(connection_pair(connection))
        return requester is not None and (requester, correlation_id) in self.waiting

    def __call__(self, events: Iterable) -> Iterator:
        requesters, held = self.requesters, self.held
        pairs: dict[str, frozenset] = {}   # connection -> connection_pair's (made once a connection)
        for event in events:
            if not isinstance(event, KafkaFrame):
                yield event
                continue
            pair = pairs.get(event.connection)
            if pair is None:
                pair = pairs[event.connection] = connection_pair(event.connection)
            requester = requesters.get(pair)
            if requester is None:
                if pair not in held:
                    requester, guessed = self.requester(event.connection)
                    self.openers.discard(event.connection)
                    self.openers.discard(reverse(event.connection))
                    if guessed:
                        requester, held[pair], self.asked[pair] = None, [], {}
                    else:
                        requesters[pair] = requester
                if requester is None:
                    yield from self._hold(pair, event)
                    continue
            yield self._exchange(event, requester)
        while held:   # (the capture ended before their frames told)
            yield from self._release(next(iter(held)), None)

    def _exchange(self, event: KafkaFrame, requester: str):
        """``event`` read as a request, where it is on ``requester``, else as the response to a request waiting."""
        if event.connection == requester:
            request = read_request(event)
            if isinstance(request, Request):   # (kept without its bytes: its response needs its header alone)
                self.waiting[(event.connection, request.correlation_id)] = _header_only(request)
            return request
        correlation_id = answering(event)
        asked = self.waiting.pop((requester, correlation_id), None)
        if asked is None:
            return FrameProblem(event.connection, event.packet,
                                f"a response with correlation id {correlation_id}, whose request was not captured")
        return Response(event.connection, event.packet, event.time, asked, event.data)

    def _hold(self, pair: frozenset, event: KafkaFrame) -> Iterator:
        """A frame of a connection whose requester is a guess: held, and the connection decided and its frames
        let go once a frame answers a request the other direction held (its correlation id), or too many are
        held."""
        frames, asked = self.held[pair], self.asked[pair]
        frames.append(event)
        self.held_bytes += len(event.data)
        other = reverse(event.connection)
        correlation_id = answering(event)
        if correlation_id in asked.get(other, ()):
            yield from self._release(pair, (other, correlation_id))
            return
        request = read_request(event)
        if isinstance(request, Request) and known_request(request):
            asked.setdefault(event.connection, set()).add(request.correlation_id)
        if len(frames) >= HELD_FRAMES:
            yield from self._release(pair, None)
        while self.held_bytes > HELD_BYTES and self.held:
            yield from self._release(next(iter(self.held)), None)

    def _release(self, pair: frozenset, answered: tuple[str, int] | None) -> Iterator:
        """The connection's requester decided -- the direction ``answered`` names, whose request with that
        correlation id the other answered, else as :meth:`_decide` guesses -- and said; its held frames read."""
        frames = self.held.pop(pair)
        del self.asked[pair]
        self.held_bytes -= sum(len(frame.data) for frame in frames)
        first = frames[0]
        if answered is None:
            requester = yield from self._decide(pair, first)
        else:
            requester = self.requesters[pair] = answered[0]
            yield FrameProblem(first.connection, first.packet,
                               f"{self._guessed(first.connection)}; {requester} is taken for the client's (its request "
                               f"with correlation id {answered[1]} was answered: the other side's frame begins with that "
                               "id)")
        for frame in frames:
            yield self._exchange(frame, requester)

    def _decide(self, pair: frozenset, event: KafkaFrame) -> Generator[FrameProblem, None, str]:
        """Which direction of ``event``'s connection, speaking first, carries requests where its ports, its SYN
        and its frames did not tell: the first speaker unless its first frame does not read as a request header;
        said."""
        requester, why = event.connection, "the side that spoke first"
        if not isinstance(read_request(event), Request):
            requester, why = reverse(event.connection), "the other side: the first to speak sent no request header"
        yield FrameProblem(event.connection, event.packet,
                           f"{self._guessed(event.connection)}; {requester} is taken for the client's ({why})")
        self.requesters[pair] = requester
        return requester




def exchanges(events: Iterable, pairing: Pairing | None = None) -> Iterator:
    """Requests, responses paired with their request, and everything else passed through; a response whose
    request was not captured is a problem."""
    return (pairing or Pairing())(events)
