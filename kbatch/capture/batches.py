"""Record batches out of captured Kafka traffic: Produce requests, Fetch and ShareFetch responses.

Each message is read with Kafka's own definitions (kbatch/messages/schemas.json, written from
clients/src/main/resources/common/message/*.json by ``python -m kbatch.messages.make_table``): every version
trunk defines, flexible versions and tagged fields, topics by name (Produce v3-12, Fetch v4-12) or by id
(Produce v13+, Fetch v13+, ShareFetch).  The Records field of each partition is then walked as a segment's
bytes are (:func:`kbatch.walk.engine.entries`, the reader with records decoded, and the batch invariants of
``verify-crc --deep``), so a batch on the wire is held to the same rules as a batch on disk.

A Produce batch waits for its response, which says whether the broker took it (the partition's ErrorCode)
and at which offset (BaseOffset, the first batch's; the next batches follow it): memory is bounded by the
requests not yet answered.  A request with acks=0 is never answered; its batches come out as it is read.

ApiVersions responses are read too: a Produce or Fetch request of a version the broker did not advertise on
that connection is a warning.  Metadata responses (v10+) name each topic id: a batch whose message names its
topic by id only gets the name the capture's Metadata gave it.  A Fetch response may end inside a batch -- the broker cuts the log at the
fetch's size limit (FileRecords.slice; the consumer's ByteBufferLogInputStream.nextBatch stops there) -- so
a Fetch response's last batch cut short is "partial-batch", not damage.  A Produce request's never is.  Nor
are zero bytes ending a message's records a zero tail, as in a preallocated segment (:func:`_captured_zero_tail`).

A topic name Kafka refuses (Topic.validate: kbatch.files.inputs.topic_refused) in a Produce request, or over
records in a Fetch response, is a ``topic-refused`` finding at the name's bytes (:func:`_refused_topics`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import BinaryIO, Iterable, Iterator

from kbatch.capture.exchanges import (API_NAMES, API_VERSIONS, DEFAULT_PORTS, FETCH, METADATA, PRODUCE, SHARE_FETCH,
                                      Pairing, Request, Response, connection_pair)
from kbatch.capture.frames import LARGEST_FRAME, SIZE_BYTES, SMALLEST_FRAME, Framer, KafkaFrame, kafka_frames
from kbatch.capture.packets import (NANO_MAGICS, PCAP_FILE_HEADER_SIZE, PLAIN_LINKS, RECORD_HEADERS, PacketProblem,
                                    PacketCount, Segment, address_text, classic_pcap, read_segments,
                                    resumed_segments)
from kbatch.capture.streams import (Direction, StreamGap, StreamProblem, connection_name, direction_name,
                                    reassemble)
from kbatch.files.inputs import TOPIC_MAX_LENGTH, topic_refused
from kbatch.format.codecs import DEFAULT_DECOMPRESSED_LIMIT, codec_name
from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS, short_header, size_bounds
from kbatch.format.layouts import LOG_OVERHEAD, SIZE_OFFSET
from kbatch.format.structs import BATCH_HEADER, COMPRESSION_CODEC_MASK
from kbatch.kernels.batchrules import producer_fields_problem, v2_reserved_bits
from kbatch.kernels import partitions, plaincapture
from kbatch.kernels.jsonl import clean_batch_lines
from kbatch.messages import programs, readers
from kbatch.messages.decoder import ZERO_UUID, MessageDecoder, MessageError
from kbatch.messages.schemas import SCHEMAS
from kbatch.messages.spec import in_range, version_range
from kbatch.reading.invariants import batch_invariants
from kbatch.reading.model import TIMESTAMP_TYPES, Batch
from kbatch.reading.reader import BufferStream, ReadOptions, SegmentReader
from kbatch.reading.summary import FileSummary
from kbatch.reading.v2 import batch_fields, batch_in_view, batch_of
from kbatch.walk.crcrun import CrcRun
from kbatch.walk.engine import Run, entries

_unpack_header = BATCH_HEADER.unpack_from


@dataclass
class CapturedBatch:
    """One record batch (or v0/v1 message) found in a Produce request or a (Share)Fetch response."""

    batch: Batch                 # as the reader read it; positions are inside the partition's Records field
    records: bytes | memoryview  # the partition's Records field it lies in (``raw`` is its bytes, as sent)
    api: str                     # "Produce", "Fetch", "ShareFetch"
    request: Request             # the request (its version, correlation id, client id)
    packet: int                  # the packet the message carrying it began in
    time: float                  # that packet's time
    connection: str              # the direction that carried it ("client:port -> broker:port")
    topic: str | None
    topic_id: str | None
    partition: int
    records_pos: int             # where the partition's Records field starts in the message (after its size)
    error_code: int | None = None        # the partition's ErrorCode in the response (None: no response seen)
    assigned_offset: int | None = None   # Produce: the offset the broker gave the batch's first record
    # A clean v2 batch taken from its header alone: the header fields ``batch`` was made of (batch_fields'),
    # which its JSON line is written from (kbatch.kernels.jsonl.fields_json: no 27 attributes read back)
    header: tuple | None = None

    @property
    def direction(self) -> str:
        return _direction(self.api)

    @property
    def raw(self) -> bytes:
        return bytes(self.records[self.batch.pos:self.batch.pos + self.batch.size])


def _direction(api: str) -> str:
    return "produce" if api == "Produce" else "fetch"


@dataclass(slots=True)   # (one a Records field)
class CapturedRun:
    """Clean v2 batches lying end to end in one Records field, each of which a CapturedBatch taken from its
    header alone with nothing to say about it would be, held as one item with their JSON lines written as they
    were taken (kbatch.kernels.jsonl.clean_batch_lines): a reader made with ``runs=True`` hands these out, for
    ``--format jsonl``; what the batches share is held once."""

    lines: list                  # each batch's line's keys after "type" (a newline ending them)
    spans: list                  # how many offsets each batch takes (lastOffsetDelta + 1)
    record_count: int            # the records of all of them
    records: bytes | memoryview  # the Records field they lie in
    api: str
    direction: str               # CapturedBatch.direction's, held (asked of each run by the summary and the writer)
    request: Request
    packet: int
    time: float
    connection: str
    topic: str | None
    topic_id: str | None
    partition: int
    records_pos: int
    error_code: int | None = None
    assigned_offset: int | None = None   # Produce: the offset the broker gave the first batch's first record


@dataclass(frozen=True)
class CaptureFinding:
    """A finding about the capture or a Kafka message in it: the packet it starts in and its connection;
    ``finding``'s positions are inside the message (from after its size field), 0 where there is none."""

    finding: Finding
    packet: int
    connection: str | None
    api: str | None = None
    topic: str | None = None        # the partition whose Records it is in, if it is in one
    topic_id: str | None = None
    partition: int | None = None


# Codes of the capture's own findings (kbatch.format.findings.CODES has their words).
CAPTURE_PROBLEM = "capture-problem"
BAD_MESSAGE = "bad-kafka-message"
UNKNOWN_VERSION = "unknown-api-version"
NOT_ADVERTISED = "version-not-advertised"
PARTIAL_BATCH = "partial-batch"
TOPIC_REFUSED = "topic-refused"


def _finding(code: str, packet: int, connection: str | None, field_: str, expected: str, actual: str,
             pos: int = 0, size: int = 0, api: str | None = None) -> CaptureFinding:
    return CaptureFinding(Finding(code, pos, pos, size, field_, expected, actual), packet, connection, api)


# -- which connections are Kafka's --------------------------------------------------------------------------

def _looks_like_request(payload: bytes) -> bool:
    """Whether a connection's first bytes read as a Kafka request: a sane size, an API key and version Kafka
    could have, a ClientId length that fits (RequestHeader.json)."""
    if len(payload) < 14:
        return False
    size = int.from_bytes(payload[0:4], "big", signed=True)
    api_key = int.from_bytes(payload[4:6], "big", signed=True)
    version = int.from_bytes(payload[6:8], "big", signed=True)
    client_id = int.from_bytes(payload[12:14], "big", signed=True)
    return 10 <= size <= 100 << 20 and 0 <= api_key < 1000 and 0 <= version < 100 and -1 <= client_id <= size - 10


HELD_SEGMENT_BYTES = 16 << 20   # a connection's bytes held until its other side speaks (all held: 4 times it)


def kafka_segments(items: Iterable[Segment | PacketProblem], ports: Iterable[int]
                   ) -> Iterator[Segment | PacketProblem | StreamProblem]:
    """The segments of connections to or from ``ports``, and of any other whose first bytes from either side read
    as a Kafka request; packet problems passed through.  A connection whose first bytes do not (a capture begun
    mid-connection may begin with a broker's response) is held until its other side speaks, at most
    HELD_SEGMENT_BYTES of it; one left unread whose first bytes begin a Kafka frame is said (a problem)."""
    ports = frozenset(ports)
    decided: dict[frozenset, bool] = {}
    held: dict[frozenset, list] = {}   # a connection waiting for its other side's first bytes: its segments so far
    held_bytes: dict[frozenset, int] = {}
    total = 0   # (held_bytes' sum)
    for item in items:
        if isinstance(item, PacketProblem):
            yield item
            continue
        if item.source[1] in ports or item.destination[1] in ports:
            yield item
            continue
        pair = frozenset((item.source, item.destination))
        if pair in decided:
            if decided[pair]:
                yield item
            continue
        waiting = held.get(pair)
        if waiting is None:
            if not item.payload:
                yield item          # a handshake: kept until the first data decides
            elif _looks_like_request(item.payload):
                decided[pair] = True
                yield item
            else:
                held[pair], held_bytes[pair] = [item], len(item.payload)
                total += len(item.payload)
                while total > 4 * HELD_SEGMENT_BYTES:
                    oldest = next(iter(held))
                    total -= held_bytes[oldest]
                    yield from _unread(held, held_bytes, decided, oldest, "more of the capture's connections "
                                       "than can be held were waiting for their other side")
            continue
        if not item.payload or item.source == waiting[0].source:
            waiting.append(item)
            held_bytes[pair] += len(item.payload)
            total += len(item.payload)
            if held_bytes[pair] > HELD_SEGMENT_BYTES:
                total -= held_bytes[pair]
                yield from _unread(held, held_bytes, decided, pair,
                                   f"its other side sent nothing in its first {HELD_SEGMENT_BYTES} bytes")
            continue
        total -= held_bytes[pair]
        if _looks_like_request(item.payload):
            decided[pair] = True
            del held_bytes[pair]
            yield from held.pop(pair)
            yield item
            continue
        yield from _unread(held, held_bytes, decided, pair, "the other side's first bytes do not either")
    while held:
        yield from _unread(held, held_bytes, decided, next(iter(held)), "its other side sent nothing captured")


def _unread(held: dict, held_bytes: dict, decided: dict, pair: frozenset, why: str) -> Iterator[StreamProblem]:
    """A connection held (kafka_segments) left unread: said where its first bytes begin a Kafka frame (a size
    Kafka allows and a correlation id), with ``why``, else passed over as no Kafka traffic."""
    segments = held.pop(pair)
    del held_bytes[pair]
    decided[pair] = False
    first = segments[0]
    payload = first.payload
    if len(payload) >= 8 and SMALLEST_FRAME <= int.from_bytes(payload[:4], "big", signed=True) <= LARGEST_FRAME:
        yield StreamProblem(connection_name(first), first.packet,
                            f"this connection is not read: neither port is a broker's (--port), its first bytes "
                            f"begin a Kafka frame but read as no request header, and {why}")


# -- the messages --------------------------------------------------------------------------------------------

@lru_cache(maxsize=4096)   # (a message and its version: asked again for each message)
def _flexible(name: str, version: int) -> bool:
    return in_range(version, version_range(SCHEMAS[name].flexible))


def _defined(name: str, version: int) -> bool:
    low, high = SCHEMAS[name].valid_range
    return low <= version <= high


def _read(name: str, version: int, data: bytes, start: int = 0) -> tuple[dict, int, dict[str, tuple[int, bytes]]]:
    """The message ``name`` at ``version`` from ``start`` of ``data``: its fields, where they end, its Records
    fields by path (where each one's bytes start in ``data``, the bytes).  Its straight-line reader
    (kbatch.messages.readers) reads it where the bytes are well formed, else the generic decoder, which says
    what is wrong (a MessageError)."""
    read = readers.read(name, version, data, start)
    if read is not None:
        return read
    spans: list = []
    fields, end = MessageDecoder(SCHEMAS[name], version, name).decode(data, start, spans=spans)
    return fields, end, _records_spans(spans)


def _body(name: str, data: bytes, version: int, start: int) -> tuple[dict, dict[str, tuple[int, bytes]]]:
    """The message ``name`` at ``version`` from ``start`` of ``data`` to its end (:func:`_read`): the fields
    and the Records fields by path."""
    fields, end, records = _read(name, version, data, start)
    if end != len(data):
        raise MessageError(end, name, f"the message to end at {len(data)}", f"{len(data) - end} bytes after it")
    return fields, records


def _partitions(name: str, data: bytes, version: int, start: int) -> tuple[tuple, list[tuple]]:
    """The message ``name`` (kbatch.messages.programs.WANTED's: a Produce request or response, a Fetch response)
    at ``version`` from ``start`` of ``data`` to its end: the fields it has once (their slots at its end) and a
    row of slots per partition, as WANTED numbers them.  The compiled reader (kbatch.kernels.partitions) reads
    them where it runs and the bytes are on its path; else they are taken from what :func:`_body` reads (a
    MessageError where the bytes are not well formed)."""
    if PARTITIONS:
        if (name, version) not in _partition_readers:
            written = programs.program(name, version)
            _partition_readers[name, version] = None if written is None else programs.reader(written)
        reader = _partition_readers[name, version]
        read = None if reader is None else reader.rows(data, start)
        if read is not None and read[0] == len(data):
            return read[1], read[2]
    fields, records = _body(name, data, version, start)
    return programs.rows_of(name, fields, records)


def _records_of(message: memoryview, pos, length: int) -> memoryview | None:
    """A partition's Records field from its row's slots (where it starts, how long: None, -1 when null), a view
    of the message's bytes (``message``, a view of them all); None where it is null or empty."""
    return message[pos:pos + length] if length > 0 else None


def _request_body_start(request: Request) -> int:
    """Where a request's body starts: after the header's tagged fields in a flexible version (header v2,
    RequestHeader.json), else after its ClientId (header v1)."""
    name = API_NAMES[request.api_key] + "Request"
    if name not in SCHEMAS or not _flexible(name, request.api_version):
        return request.after_client_id
    return _read("RequestHeader", 2, request.frame)[1]


def _response_body_start(response: Response) -> int:
    """Where a response's body starts: after the correlation id, and in a flexible version the header's tagged
    fields (ResponseHeader v1) -- except ApiVersions, whose response header is always v0 so that a client of any
    version can read it (ApiKeys.responseHeaderVersion)."""
    request = response.request
    header = _response_header_version(request.api_key, request.api_version)
    size = programs.fixed_size("ResponseHeader", header)
    if size is not None and len(response.frame) >= size:   # (v0: its correlation id alone, a fixed width)
        return size
    return _read("ResponseHeader", header, response.frame)[1]


@lru_cache(maxsize=4096)
def _response_header_version(api_key: int, api_version: int) -> int:
    """The response header's version of a request of ``api_key`` at ``api_version`` (_response_body_start's)."""
    return 1 if _flexible(API_NAMES[api_key] + "Response", api_version) and api_key != API_VERSIONS else 0


def _records_spans(spans: list) -> dict[str, tuple[int, bytes]]:
    """Path of each Records field -> (where its bytes start, the bytes)."""
    out = {}
    for _, end, path, value in spans:
        if path.endswith(".records") and isinstance(value, bytes):
            out[path] = (end - len(value), value)
    return out


@dataclass(slots=True)   # (one a Produce request)
class _Produced:
    """A Produce request read, its batches waiting for the response."""

    request: Request
    batches: list = field(default_factory=list)    # CapturedBatch and CaptureFinding, in order


class CaptureReader:
    """Reads a capture's Kafka traffic: :meth:`read` yields CapturedBatch and CaptureFinding, and with ``runs``
    a CapturedRun for clean batches lying end to end, their lines written as they are read (else a CapturedBatch
    of each)."""

    def __init__(self, ports: Iterable[int] = DEFAULT_PORTS, *, records: bool = False, deep: bool = False,
                 decompressed_limit: int | None = None, runs: bool = False):
        self.ports = tuple(ports)
        self.options = ReadOptions(records=records or deep, record_objects=records,
                                   decompressed_limit=DEFAULT_DECOMPRESSED_LIMIT if decompressed_limit is None
                                   else decompressed_limit)
        self.advertised: dict[frozenset, dict[int, tuple[int, int]]] = {}   # connection pair -> ApiVersions
        # (direction, API key, version) of requests _version_findings said nothing of, until ApiVersions speaks
        self.quiet: set[tuple[str, int, int]] = set()
        self.waiting: dict[tuple[str, int], _Produced] = {}
        self.count = PacketCount()
        self.topic_names: dict[str, str] = {}   # topic id -> name, from Metadata responses
        self.pairing = Pairing(self.ports)
        # the run each partition's Records are walked with (one for all: each walk hands out all it took)
        self.taken = None if self.options.records else \
            (_LinesTaken if runs else _HeadersTaken)(self.options.max_entry_size)

    def read(self, stream: BinaryIO) -> Iterator[CapturedBatch | CapturedRun | CaptureFinding]:
        # (each message's items made as a list: most messages have none, or a few)
        named = self.topic_names
        for event in self.pairing(self._frames(stream)):
            if isinstance(event, Request):
                items = self._request(event)
            elif isinstance(event, Response):
                items = self._response(event)
            else:
                items = [self._problem(event)]
            if items:
                yield from map(self._named, items) if named else items
        for produced in self.waiting.values():   # never answered (the capture ended first)
            yield from map(self._named, produced.batches)
        self.waiting.clear()

    def _frames(self, stream: BinaryIO) -> Iterator:
        """The capture's Kafka frames, with the problems of the layers below: kafka_frames(reassemble(
        kafka_segments(read_segments(...)))), its common case compiled (kbatch.kernels.plaincapture) where it can
        be -- a classic microsecond pcap of Ethernet or Linux cooked frames -- and those generators going on where
        it stops."""
        readinto = getattr(stream, "readinto", None) if PLAIN_CAPTURE else None
        classic = classic_pcap(stream) if readinto is not None else None
        if classic is None or classic[0] not in _PLAIN_MAGICS or classic[1] not in PLAIN_LINKS:
            if classic is not None:
                stream.seek(-PCAP_FILE_HEADER_SIZE, 1)
            yield from kafka_frames(reassemble(kafka_segments(read_segments(stream, self.count), self.ports),
                                               opened=self.pairing.opened), self._starts_frame)
            return
        magic, link_type = classic
        plain = plaincapture.PlainCapture(readinto, _PLAIN_MAGICS[magic], PLAIN_LINKS[link_type], self.ports, KafkaFrame,
                                          _flow_name, self.pairing.opened)
        while True:
            frames = plain.frames()
            if not frames:
                break
            yield from frames
        # handed over: each direction's state as reassemble and kafka_frames would hold it had they read so far
        self.count.whole = plain.number   # (every packet the loop read was a TCP segment it took)
        directions = {flow.name: Direction(None if flow.next_seq < 0 else flow.next_seq, checked=flow.checked == 1,
                                           start=None if flow.start_seq < 0 else flow.start_seq,
                                           last=plain.last_of(flow))
                      for flow in plain.flows()}
        framers = {flow.name: Framer.resumed(flow.packet, flow.time, flow.size_field(), flow.wanted,
                                             [flow.gathered()] if flow.head_size == SIZE_BYTES else [])
                   for flow in plain.framed_flows()}
        if plain.stopped == plaincapture.ABSURD_SIZE:
            flow = plain.absurd_flow
            yield framers[flow.name].absurd(flow.name, plain.absurd_packet, plain.absurd_size, plain.absurd_unread)
        rest = _Rest(plain.rest(), stream.read)
        segments = resumed_segments(rest.read, magic, link_type, plain.number, self.count)
        yield from kafka_frames(reassemble(kafka_segments(segments, self.ports), directions=directions,
                                           opened=self.pairing.opened), self._starts_frame, framers=framers)

    def _starts_frame(self, connection: str, data: bytes) -> bool:
        """Whether a segment after a gap starts a Kafka frame: a sane size, then on the requesting direction a
        request header of an API key and version read here, on the other a response to a request still
        waiting (its correlation id)."""
        if len(data) < 8 or not SMALLEST_FRAME <= int.from_bytes(data[0:4], "big", signed=True) <= LARGEST_FRAME:
            return False
        if not self.pairing.carries_requests(connection):
            return self.pairing.awaited(connection, int.from_bytes(data[4:8], "big", signed=True))
        api_key, version = int.from_bytes(data[4:6], "big", signed=True), int.from_bytes(data[6:8], "big", signed=True)
        return api_key in API_NAMES and _defined(API_NAMES[api_key] + "Response", version) and \
            _looks_like_request(data)

    def _named(self, item):
        """The item with its topic's name, where its message gave only the id and a Metadata response named it."""
        if item.topic is None and item.topic_id is not None and item.topic_id in self.topic_names:
            if isinstance(item, CaptureFinding):
                return replace(item, topic=self.topic_names[item.topic_id])
            item.topic = self.topic_names[item.topic_id]
        return item

    @property
    def packets(self) -> int:
        """The capture's packets read whole, every one (TCP or not), as tshark numbers them."""
        return self.count.whole

    @staticmethod
    def _problem(event) -> CaptureFinding:
        connection = getattr(event, "connection", None)
        what = event.what if not isinstance(event, StreamGap) else \
            f"{event.missing} bytes of the stream never captured ({event.why})"
        size = event.missing if isinstance(event, StreamGap) else 0
        return _finding(CAPTURE_PROBLEM, event.packet, connection, "capture", "the whole Kafka stream", what,
                        size=size)

    # -- requests -------------------------------------------------------------------------------------------

    def _version_findings(self, message: Request, name: str) -> list:
        quiet = (message.connection, message.api_key, message.api_version)
        if quiet in self.quiet:
            return []
        api = API_NAMES[message.api_key]
        low, high = SCHEMAS[name].valid_range
        if not low <= message.api_version <= high:
            return [_finding(UNKNOWN_VERSION, message.packet, message.connection, f"{name}.version",
                             f"a version Kafka trunk defines ({low}-{high})", str(message.api_version), api=api)]
        advertised = self.advertised.get(connection_pair(message.connection), {}).get(message.api_key)
        if advertised is not None and not advertised[0] <= message.api_version <= advertised[1]:
            return [_finding(NOT_ADVERTISED, message.packet, message.connection, f"{name}.version",
                             f"{advertised[0]}-{advertised[1]} (what the broker's ApiVersions response gave)",
                             str(message.api_version), api=api)]
        if len(self.quiet) >= 4096:   # (a hostile capture's connections are not all kept)
            self.quiet.clear()
        self.quiet.add(quiet)
        return []

    def _request(self, request: Request) -> list:
        if request.api_key == FETCH:
            return self._version_findings(request, "FetchResponse")
        if request.api_key != PRODUCE:
            return []
        told = self._version_findings(request, "ProduceRequest")
        if told and any(each.finding.code == UNKNOWN_VERSION for each in told):
            return told
        produced = _Produced(request)
        frame = request.frame
        try:
            start = _request_body_start(request)
            top, partitions_ = _partitions("ProduceRequest", frame, request.api_version, start)
        except MessageError as error:
            return [*told, self._bad(error, request, request, "ProduceRequest")]
        view = memoryview(frame)
        named: str | None = None   # (a topic's partitions are rows in a row: its name is asked of once)
        refused = False
        for _, name, topic_id, index, pos, length in partitions_:   # (WANTED["ProduceRequest"]'s slots)
            if name != named:
                named = name
                if name is not None and topic_refused(name) is not None:
                    refused = True
            data = _records_of(view, pos, length)
            if data is not None:
                produced.batches += self._batches(data, "Produce", request, request, name, topic_id, index, pos)
        if refused:
            produced.batches = _beneath(produced.batches, _refused_topics("ProduceRequest", request, request, start))
        if top[0] == 0:   # acks=0: no response will come (KafkaApis.handleProduceRequest sends none)
            return told + produced.batches
        self.waiting[(request.connection, request.correlation_id)] = produced
        return told

    def _bad(self, error: MessageError, message, request: Request, name: str) -> CaptureFinding:
        return _finding(BAD_MESSAGE, message.packet, message.connection, f"{name}.{error.field}", error.expected,
                        error.actual, pos=error.pos, api=API_NAMES[request.api_key])

    # -- responses ------------------------------------------------------------------------------------------

    def _response(self, response: Response) -> list:
        request = response.request
        if request.api_key == PRODUCE:
            produced = self.waiting.pop((request.connection, request.correlation_id), None)
            return [] if produced is None else self._produce_response(response, produced)
        if request.api_key in (FETCH, SHARE_FETCH):
            return self._fetch_response(response)
        if request.api_key == API_VERSIONS:
            return self._api_versions(response)
        if request.api_key == METADATA and _defined("MetadataResponse", request.api_version):
            read = self._read_response(response, "MetadataResponse", request.api_version)
            if isinstance(read, CaptureFinding):
                return [read]
            for topic in read[0]["topics"]:
                if topic.get("topicId") not in (None, ZERO_UUID) and topic.get("name") is not None:
                    self.topic_names[topic["topicId"]] = topic["name"]
        return []

    def _read_partitions(self, response: Response, name: str) -> list[tuple] | CaptureFinding:
        """A response's partitions (:func:`_partitions`' rows), or the finding that it is not well formed."""
        try:
            return _partitions(name, response.frame, response.request.api_version, _response_body_start(response))[1]
        except MessageError as error:
            return self._bad(error, response, response.request, name)

    def _read_response(self, response: Response, name: str, version: int):
        try:
            return _body(name, response.frame, version, _response_body_start(response))
        except MessageError as error:
            return self._bad(error, response, response.request, name)

    def _produce_response(self, response: Response, produced: _Produced) -> list:
        read = self._read_partitions(response, "ProduceResponse")
        answers = {}
        if isinstance(read, CaptureFinding):
            told = [read]
        else:
            told = []
            for name, topic_id, index, error_code, base_offset, _ in read:   # (WANTED["ProduceResponse"]'s slots)
                answers[(name, topic_id, index)] = (error_code, base_offset)
        next_offset: dict[tuple, int] = {}
        for item in produced.batches:
            if not isinstance(item, CaptureFinding):
                key = (item.topic, item.topic_id, item.partition)
                if key in answers:
                    item.error_code, base = answers[key]
                    if item.error_code == 0 and base >= 0:
                        # the broker gives the partition's batches consecutive offsets from BaseOffset
                        item.assigned_offset = next_offset.get(key, base)
                        next_offset[key] = item.assigned_offset + (
                            sum(item.spans) if isinstance(item, CapturedRun) else _offset_span(item.batch))
        return told + produced.batches if told else produced.batches

    def _fetch_response(self, response: Response) -> list:
        request = response.request
        name = "FetchResponse" if request.api_key == FETCH else "ShareFetchResponse"
        if not _defined(name, request.api_version):
            if request.api_key == SHARE_FETCH:   # (a Fetch request's version was told with the request)
                return self._version_findings(request, name)
            return []
        read = self._read_partitions(response, name)
        if isinstance(read, CaptureFinding):
            return [read]
        api, view = API_NAMES[request.api_key], memoryview(response.frame)
        out: list = []
        named: str | None = None
        refused = False
        for topic, topic_id, index, error_code, pos, length in read:   # (WANTED[name]'s slots)
            data = _records_of(view, pos, length)
            if data is not None:
                if topic != named:
                    named = topic
                    if topic is not None and topic_refused(topic) is not None:
                        refused = True
                out += self._batches(data, api, request, response, topic, topic_id, index, pos, fetched=error_code)
        # (a topic with no records is no broker's sign: it answers a Fetch request's topic it has no log of with
        # the name the request gave, UNKNOWN_TOPIC_OR_PARTITION and no records)
        if refused and name in _TOPIC_NAMES:
            return _beneath(out, _refused_topics(name, response, request, _response_body_start(response)))
        return out

    def _api_versions(self, response: Response) -> list:
        version = response.request.api_version
        if not _defined("ApiVersionsResponse", version):
            return []
        read = self._read_response(response, "ApiVersionsResponse", version)
        if isinstance(read, CaptureFinding) and version > 0:
            # a broker that does not know the request's version answers with version 0 (KIP-511,
            # ApiVersionsRequest handling in KafkaApis / ApiVersionManager)
            retry = self._read_response(response, "ApiVersionsResponse", 0)
            read = retry if not isinstance(retry, CaptureFinding) else read
        if isinstance(read, CaptureFinding):
            return [read]
        fields, _ = read
        if fields["errorCode"] == 0:
            self.quiet.clear()   # (what a version is told may change)
            self.advertised[connection_pair(response.connection)] = {
                api["apiKey"]: (api["minVersion"], api["maxVersion"]) for api in fields["apiKeys"]}
        return []

    # -- the batches ----------------------------------------------------------------------------------------

    def _batches(self, data: bytes, api: str, request: Request, message, topic: str | None, topic_id: str | None,
                 partition: int, records_pos: int, *, fetched: int | None = None) -> list:
        """A partition's Records walked as a segment's bytes are: each batch with its invariants' findings,
        each damaged range a finding of its own (its positions inside the Records).  Without records to walk,
        verify-crc's CRC run takes the clean v2 batches from their headers (:class:`_HeadersTaken`).
        ``fetched``: the partition's ErrorCode in a (Share)Fetch response, whose last batch may be cut short
        (None: a Produce request's)."""
        taken = self.taken
        start = 0
        if isinstance(taken, _LinesTaken):
            # the clean batches it starts with taken in one compiled call (kbatch.kernels.jsonl.clean_batch_lines);
            # most of the time they are the whole field: one CapturedRun, no reader made
            lines: list = []
            spans: list = []
            start, last, records = clean_batch_lines(data, 0, len(data), 0, taken.least, taken.most, _V2_CHECKSUM,
                                                     _LINE_NAMES, lines, spans)
            if start == len(data) and last >= 0:
                return [CapturedRun(lines, spans, records, data, api, _direction(api), request, message.packet,
                                    message.time, message.connection, topic, topic_id, partition, records_pos, fetched)]
            if last >= 0:
                taken.leading(lines, spans, records, last)
        return self._walked(data, api, request, message, topic, topic_id, partition, records_pos, fetched, start)

    def _walked(self, data: bytes, api: str, request: Request, message, topic: str | None, topic_id: str | None,
                partition: int, records_pos: int, fetched: int | None, start: int) -> list:
        """_batches' Records walked from ``start`` (after the clean batches it leads with, taken already)."""
        out: list = []
        taken = self.taken

        def captured(batch: Batch, header: tuple | None = None) -> CapturedBatch:
            return CapturedBatch(batch, data, api, request, message.packet, message.time, message.connection,
                                 topic, topic_id, partition, records_pos, error_code=fetched, header=header)

        def run(lines: _Lines) -> CapturedRun:
            return CapturedRun(lines.lines, lines.spans, lines.record_count, data, api, _direction(api), request,
                               message.packet, message.time, message.connection, topic, topic_id, partition,
                               records_pos, error_code=fetched)

        reader = SegmentReader(BufferStream(data, unchanging=True), self.options, size=len(data))
        if start and isinstance(taken, _LinesTaken):
            reader.passed_batch_at(taken.last_pos)   # as the walk engine tells it after a run
        for item in entries(reader, start, run=None if taken is None else taken.run):
            if taken is not None and taken.batches:
                out += taken.captured(captured, run)
            if isinstance(item, Finding):
                if item.code == "zero-tail":
                    item = _captured_zero_tail(item)
                if fetched is not None and item.code == "truncated" and item.pos + item.size >= len(data):
                    item = Finding(PARTIAL_BATCH, item.entry_pos, item.pos, item.size, item.field,
                                   "a whole batch", f"{item.actual} (the fetch's size limit cut it)")
                out.append(CaptureFinding(item, message.packet, message.connection, api, topic, topic_id, partition))
                continue
            item.findings += batch_invariants(item)
            out.append(captured(item))
        if taken is not None:
            out += taken.captured(captured, run)
        return out


# -- topic names Kafka refuses --------------------------------------------------------------------------------

# The array of a message's topics and the field of each one's name (WANTED's), where a message names them.
_TOPIC_NAMES = {"ProduceRequest": ("topicData", "name"), "FetchResponse": ("responses", "topic")}


def _refused_topics(name: str, message: Request | Response, request: Request, start: int) -> list[CaptureFinding]:
    """A ``topic-refused`` finding for each topic of the message ``name`` (a Produce request, a Fetch response:
    :data:`_TOPIC_NAMES`) whose name Kafka refuses (kbatch.files.inputs.topic_refused, Topic.validate's rule) --
    of a Fetch response, each such topic that holds records -- at the name's bytes in the message (its body
    from ``start``), its length prefix with them.  Asked only where the message's rows named such a topic: its
    positions take the generic decoder's spans (a second read of the message), which the rows do not give."""
    array, field_ = _TOPIC_NAMES[name]
    spans: list = []
    try:
        MessageDecoder(SCHEMAS[name], request.api_version, name).decode(message.frame, start, spans=spans)
    except MessageError:   # (read already by the rows' reader: what the decoder read up to it still counts)
        pass
    topics: dict[int, tuple[int, int, str]] = {}   # topic's index -> where its name's bytes start, end, the name
    holding: set[int] = set()                       # the topics with records
    name_path = re.compile(rf"{array}\[(\d+)\]\.{field_}")
    records_path = re.compile(rf"{array}\[(\d+)\]\.\w+\[\d+\]\.records")
    for begin, end, path, value in spans:
        if isinstance(value, str) and (named := name_path.fullmatch(path)):
            topics[int(named.group(1))] = (begin, end, value)
        elif isinstance(value, (bytes, bytearray, memoryview)) and len(value) and \
                (held := records_path.fullmatch(path)):
            holding.add(int(held.group(1)))
    out = []
    for index, (begin, end, topic) in topics.items():
        why = topic_refused(topic)
        if why is None or (name == "FetchResponse" and index not in holding):
            continue
        # (as captured: escaped where it is shown; a name of up to 32767 bytes cut where no legal one goes on)
        shown = f"'{topic}'" if len(topic) <= TOPIC_MAX_LENGTH else \
            f"'{topic[:TOPIC_MAX_LENGTH]}'... (the first {TOPIC_MAX_LENGTH} of its {len(topic)} characters)"
        finding = Finding(TOPIC_REFUSED, begin, begin, end - begin, f"{name}.{array}[{index}].{field_}",
                          f"a topic name Kafka takes (Topic.validate: 1 to {TOPIC_MAX_LENGTH} characters of "
                          "[a-zA-Z0-9._-], not '.' or '..')", f"{shown}: {why}")
        out.append(CaptureFinding(finding, message.packet, message.connection, API_NAMES[request.api_key], topic))
    return out


def _beneath(items: list, findings: list[CaptureFinding]) -> list:
    """``items`` (a message's batches and findings, in order) with each of ``findings`` after the last of them of
    its topic -- beneath the batches of the topic it is about, as a batch's findings are shown beneath it, and
    after the line that names its connection's client -- else first."""
    out = list(items)
    for finding in findings:
        at = next((index + 1 for index in range(len(out) - 1, -1, -1) if out[index].topic == finding.topic), 0)
        out.insert(at, finding)
    return out


class _HeadersTaken:
    """The batches verify-crc's CRC run takes (kbatch.walk.crcrun: framed, CRC holding), each made a Batch of
    its header alone, as the reader makes it without walking records: the rules a header alone answers
    (reserved bits, producer fields) asked of it, the batch's findings only when one of them fails.  Each is
    kept with its header fields where it has no finding (its line is written from them)."""

    def __init__(self, max_entry_size: int):
        self.batches: list = []   # (Batch, header fields or None); _LinesTaken adds its runs' _Lines
        self.crc_run = CrcRun(FileSummary("", 0), max_entry_size, keep=self._keep)
        self.run: Run = self.crc_run   # the Run the walk engine is handed

    def _keep(self, taken: tuple) -> None:
        batch_pos, view, i, end, _, computed = taken
        header = batch_fields(batch_pos, end - i, _unpack_header(view, i), computed)
        batch = batch_of(header)
        if v2_reserved_bits(batch.attributes) or producer_fields_problem(
                batch.is_transactional, batch.is_control, batch.producer_id, batch.producer_epoch,
                batch.base_sequence):
            batch.findings += batch_invariants(batch)
        self.batches.append((batch, None if batch.findings else header))

    def captured(self, captured, run) -> list:
        """``captured(batch, header)`` of each batch taken since the last call, ``run(lines)`` of each run of
        lines (_LinesTaken)."""
        out = [run(each) if isinstance(each, _Lines) else captured(*each) for each in self.batches]
        self.batches.clear()
        return out


class _Lines:
    """A run of clean batches' lines (CapturedRun's).  (A plain class: one is made for each Records field, and a
    dataclass's default factories cost more than its lines.)"""

    __slots__ = ("lines", "spans", "record_count")

    def __init__(self):
        self.lines: list = []
        self.spans: list = []
        self.record_count = 0


# clean_batch_lines' names: the codec names by codec id (the attributes' three codec bits), the timestamp types
_LINE_NAMES = tuple(codec_name(codec_id) for codec_id in range(COMPRESSION_CODEC_MASK + 1)) + TIMESTAMP_TYPES
_V2_CHECKSUM = CHECKSUMS[2]


class _LinesTaken(_HeadersTaken):
    """The batches _HeadersTaken takes, the clean ones with their lines written as they are taken, in one
    compiled call a run (kbatch.kernels.jsonl.clean_batch_lines: the batches clean_v2_batches hands out, of
    whose header the header rules say nothing); a batch it leaves that the CRC run takes is _HeadersTaken's.
    A run of lines ends where such a batch, or one for the full reader, lies between."""

    def __init__(self, max_entry_size: int):
        super().__init__(max_entry_size)
        self.least, self.most = size_bounds(2, max_entry_size)
        self.last_pos: int | None = None
        self.run = self   # (the Run the walk engine is handed: this one, around the CRC run)

    def leading(self, lines: list, spans: list, record_count: int, last: int) -> None:
        """The lines of the clean batches a Records field starts with (clean_batch_lines' ``lines``, ``spans``,
        records, the position of the last), taken before its walk, kept as its first run."""
        run = _Lines()
        run.lines, run.spans, run.record_count = lines, spans, record_count
        self.batches.append(run)
        self.last_pos = last

    def _lines(self, data, i: int, limit: int, base: int) -> int:
        """The clean batches from ``data[i]`` (file position ``base + i``) up to ``limit`` taken in the compiled
        loop, their lines added to the last run of lines; where they end (``i``: none taken)."""
        if not self.batches or not isinstance(self.batches[-1], _Lines):
            self.batches.append(_Lines())
        lines = self.batches[-1]
        end, last, records = clean_batch_lines(data, i, limit, base, self.least, self.most, _V2_CHECKSUM,
                                               _LINE_NAMES, lines.lines, lines.spans)
        if last < 0:
            if not lines.lines:
                self.batches.pop()
            return i
        lines.record_count += records
        self.last_pos = last
        return end

    def walk(self, window, pos: int, stop: int) -> int:
        """The walk engine's Run.walk: the batches from ``pos`` taken; where it stopped."""
        crc_run = self.crc_run
        while pos < stop:
            data, i = batch_in_view(window, pos)
            base = pos - i
            pos = base + self._lines(data, i, stop - base, base)
            if pos >= stop:
                break
            taken = crc_run.walk(window, pos, pos + 1)   # one the CRC run takes, else the full reader's
            if taken == pos:
                break
            self.last_pos, pos = crc_run.last_pos, taken
        return pos


# The compiled reader of a message's partitions (kbatch.kernels.partitions): taken where it runs compiled (as plain
# Python the straight-line readers are faster), its Program of each message version made once.  Tests set it to
# hold the two to the same rows either way.
PARTITIONS = partitions.COMPILED
_partition_readers: dict[tuple[str, int], partitions.Program | None] = {}

# The compiled loop over a capture's common case (kbatch.kernels.plaincapture): taken where it runs compiled (as
# plain Python the generators it stands for are faster).  Tests set it to hold the loop to them either way.
PLAIN_CAPTURE = plaincapture.COMPILED
# The classic pcap magic numbers the loop reads (the microsecond ones), by whether the file is big-endian.
_PLAIN_MAGICS = {magic: header.startswith(">") for magic, header in RECORD_HEADERS.items() if magic not in NANO_MAGICS}


def _flow_name(addresses: bytes, ports: bytes) -> str:
    """A direction's name (kbatch.capture.streams.connection_name) from its source and destination address and
    their ports, as they lie in its IP and TCP headers."""
    half = len(addresses) // 2
    return direction_name(address_text(addresses[:half]), int.from_bytes(ports[:2], "big"),
                          address_text(addresses[half:]), int.from_bytes(ports[2:], "big"))


class _Rest:
    """A file read on from bytes already read out of it (``head``), then from ``read``."""

    def __init__(self, head: bytes, read):
        self.head, self._read = head, read

    def read(self, size: int) -> bytes:
        if not self.head:
            return self._read(size)
        taken, self.head = self.head[:size], self.head[size:]
        return taken + self._read(size - len(taken)) if len(taken) < size else taken


def _captured_zero_tail(finding: Finding) -> Finding:
    """What zero bytes ending a captured Records field are: no preallocated segment's unused end (a message holds
    the bytes its sender framed), but an entry cut short, or one whose size field reads 0.  As Kafka's reader of a
    message's records takes them (ByteBufferLogInputStream.nextBatchSize): fewer than LOG_OVERHEAD bytes, no
    whole size field, end the records (``truncated``: a Fetch response's last batch cut at the fetch's size
    limit, which _walked calls so); with the size field whole, a size below LegacyRecord.RECORD_OVERHEAD_V0 is a
    CorruptRecordException (``bad-length``)."""
    if finding.size < LOG_OVERHEAD:
        return short_header(finding.pos, finding.size)
    return Finding("bad-length", finding.pos, finding.pos + SIZE_OFFSET, 4, "size",
                   f"at least {size_bounds(0, 0)[0]} (LegacyRecord.RECORD_OVERHEAD_V0)",
                   f"0 ({finding.size} zero bytes end the records)")


def _offset_span(batch: Batch) -> int:
    """How many offsets a batch takes (v2: lastOffsetDelta + 1; a v0/v1 entry: its records)."""
    return batch.last_offset - batch.base_offset + 1


__all__ = ["CaptureFinding", "CaptureReader", "CapturedBatch", "CapturedRun", "DEFAULT_PORTS", "kafka_segments"]
