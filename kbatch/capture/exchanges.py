"""Kafka requests and responses out of frames, paired by correlation id.

The request header's first fields are read without knowing whether the request's version is flexible
(clients/src/main/resources/common/message/RequestHeader.json): RequestApiKey int16, RequestApiVersion int16,
CorrelationId int32, then ClientId -- a nullable string with the old two-byte length even in flexible header v2
("flexibleVersions": "none"), absent only in header v0 (ControlledShutdown v0).  The body starts after the
header's tagged fields, which need the request's flexible versions: :attr:`Request.after_client_id` says where
they begin.  A response starts with the correlation id of the request it answers (ResponseHeader.json).

Which direction carries requests: the one whose connection spoke first (a Kafka client always does).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable, Iterator

from kbatch.capture.frames import FrameProblem, KafkaFrame

CONTROLLED_SHUTDOWN = 7   # its version 0 alone has request header v0, without ClientId
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


def _header_only(request: Request) -> Request:
    """The request without its frame's bytes (dataclasses.replace's result, made without its walk over the
    fields: one a request)."""
    return Request(request.connection, request.packet, request.time, request.api_key, request.api_version,
                   request.correlation_id, request.client_id, request.after_client_id, b"")


class Pairing:
    """Which direction of each connection carries requests, and the requests not answered yet."""

    def __init__(self):
        self.requesters: dict[frozenset, str] = {}
        self.waiting: dict[tuple[str, int], Request] = {}   # (request direction, correlation id) -> request

    def carries_requests(self, connection: str) -> bool:
        """Whether ``connection`` is its pair's requesting direction (or the pair has not spoken yet)."""
        return self.requesters.get(connection_pair(connection), connection) == connection

    def awaited(self, connection: str, correlation_id: int) -> bool:
        """Whether a response on ``connection`` with ``correlation_id`` answers a request not answered yet."""
        requester = self.requesters.get(connection_pair(connection))
        return requester is not None and (requester, correlation_id) in self.waiting

    def __call__(self, events: Iterable) -> Iterator:
        requesters, waiting = self.requesters, self.waiting
        pairs: dict[str, frozenset] = {}   # connection -> connection_pair's (made once a connection)
        for event in events:
            if not isinstance(event, KafkaFrame):
                yield event
                continue
            pair = pairs.get(event.connection)
            if pair is None:
                pair = pairs[event.connection] = connection_pair(event.connection)
            requester = requesters.setdefault(pair, event.connection)
            if event.connection == requester:
                request = read_request(event)
                if isinstance(request, Request):   # (kept without its bytes: its response needs its header alone)
                    waiting[(event.connection, request.correlation_id)] = _header_only(request)
                yield request
                continue
            correlation_id = int.from_bytes(event.data[:4], "big", signed=True)
            asked = waiting.pop((requester, correlation_id), None)
            if asked is None:
                yield FrameProblem(event.connection, event.packet,
                                   f"a response with correlation id {correlation_id}, whose request was not captured")
                continue
            yield Response(event.connection, event.packet, event.time, asked, event.data)


def exchanges(events: Iterable, pairing: Pairing | None = None) -> Iterator:
    """Requests, responses paired with their request, and everything else passed through; a response whose
    request was not captured is a problem."""
    return (pairing or Pairing())(events)
