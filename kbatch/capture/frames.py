"""Kafka's framing on a reassembled TCP direction: each request and response is a 4-byte size and that many
bytes (NetworkReceive.readFrom in clients/src/main/java/org/apache/kafka/common/network/NetworkReceive.java).

A size below the smallest header (a response's correlation id: 4 bytes) or above the broker's default
``socket.request.max.bytes`` (100 MiB, SocketServerConfigs) is absurd: a problem, and the direction is out of
step.  So is it after a gap in the stream: the frame the gap cut is lost.  Either way the direction is read
again from the next segment that starts a frame the layer above recognises (``starts_frame``: a request
header of a known API key and version, or a response to a request still waiting); the bytes skipped until
then are a problem.  What remains unframed at the end is a problem too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator, Iterable, Iterator

from kbatch.capture.packets import PacketProblem
from kbatch.capture.streams import StreamBytes, StreamGap, StreamProblem
from kbatch.format.wire import LARGEST_FRAME, SIZE_BYTES, SMALLEST_FRAME


@dataclass(slots=True)   # (one a frame: see kbatch.capture.packets.Segment)
class KafkaFrame:
    connection: str
    packet: int          # the packet the frame's size field began in
    time: float
    data: bytes          # the frame without its size field


@dataclass(frozen=True)
class FrameProblem:
    connection: str
    packet: int
    what: str


class Framer:
    """One direction's frames: a frame that lies whole in a chunk is sliced out of it; one that goes on past
    its chunk is gathered -- its size field in ``head``, views of its chunks' bytes in ``parts`` -- and joined
    once it is whole (one copy of its bytes, however many segments carried it)."""

    def __init__(self, resyncs: bool = False):
        self.resyncs = resyncs            # whether an absurd size is passed over (:meth:`lose_step`) or ends it all
        self.head = b""                   # the size field of the frame begun and not yet whole (up to 4 bytes)
        self.parts: list = []             # that frame's bytes after its size field, so far
        self.have = 0                     # how many bytes ``parts`` holds
        self.wanted = 0                   # the frame's size (once ``head`` is whole)
        self.packet, self.time = 0, 0.0   # the packet its size field began in
        self.given_up = False
        self.skipping: int | None = None  # out of step: the bytes passed over until a segment starts a frame
        self.gap_packet = 0               # the packet where it lost step
        self.lost_by = "gap"              # what lost it: "gap" or "absurd frame size"

    def feed(self, event: StreamBytes) -> Iterator[KafkaFrame | FrameProblem]:
        data, at = event.data, 0
        end = len(data)
        while True:
            if self.head:
                if len(self.head) < SIZE_BYTES:
                    take = min(SIZE_BYTES - len(self.head), end - at)
                    self.head += data[at:at + take]
                    at += take
                    if len(self.head) < SIZE_BYTES:
                        return
                    size = int.from_bytes(self.head, "big", signed=True)
                    if not SMALLEST_FRAME <= size <= LARGEST_FRAME:
                        yield self.absurd(event.connection, self.packet, size, end - at)
                        return
                    self.wanted = size
                take = min(self.wanted - self.have, end - at)
                if take:
                    self.parts.append(memoryview(data)[at:at + take])
                    self.have += take
                    at += take
                if self.have < self.wanted:
                    return
                frame = b"".join(self.parts)
                self.drop_frame()
                yield KafkaFrame(event.connection, self.packet, self.time, frame)
                continue
            if at == end:
                return
            self.packet, self.time = event.packet, event.time
            if end - at < SIZE_BYTES:
                self.head = bytes(data[at:])
                return
            size = int.from_bytes(data[at:at + SIZE_BYTES], "big", signed=True)
            if not SMALLEST_FRAME <= size <= LARGEST_FRAME:
                yield self.absurd(event.connection, event.packet, size, end - at - SIZE_BYTES)
                return
            if at + SIZE_BYTES + size > end:
                self.head, self.wanted = bytes(data[at:at + SIZE_BYTES]), size
                self.parts, self.have = [memoryview(data)[at + SIZE_BYTES:]], end - at - SIZE_BYTES
                return
            yield KafkaFrame(event.connection, event.packet, event.time, bytes(data[at + SIZE_BYTES:at + SIZE_BYTES + size]))
            at += SIZE_BYTES + size

    def drop_frame(self) -> None:
        """Forget the frame begun (joined, or lost)."""
        self.head, self.parts, self.have, self.wanted = b"", [], 0, 0

    @classmethod
    def resumed(cls, packet: int, time: float, size_field: bytes, wanted: int, gathered: list) -> "Framer":
        """A framer that resyncs, taking a direction on where another reader cut it so far: the frame begun in
        ``packet`` at ``time``, its size field so far (b"": none begun), the size it gives once whole, and its
        bytes after the size field so far (``gathered``, as :attr:`parts` holds them)."""
        framer = cls(resyncs=True)
        framer.packet, framer.time = packet, time
        framer.head, framer.wanted, framer.parts = size_field, wanted, gathered
        framer.have = sum(len(part) for part in gathered)
        return framer

    @property
    def begun(self) -> int:
        """How many bytes of a frame not yet whole are held, its size field included."""
        return len(self.head) + self.have

    def absurd(self, connection: str, packet: int, size: int, unread: int) -> FrameProblem:
        """A size no frame has: the direction given up, or with ``resyncs`` passed over from its size field
        (``unread``: the bytes after it in the segment in hand) until a segment starts a frame."""
        said = f"a Kafka frame size of {size} bytes (expected {SMALLEST_FRAME} to {LARGEST_FRAME}): not Kafka, or " \
               f"the stream is out of step; "
        if not self.resyncs:
            self.give_up()
            return FrameProblem(connection, packet, said + "the rest of this direction is not read")
        self.lose_step(packet, "absurd frame size")
        self.skipping = unread
        return FrameProblem(connection, packet, said + "read again from the next segment that starts a frame")

    def give_up(self):
        self.given_up = True
        self.drop_frame()

    def lose_step(self, packet: int, by: str) -> None:
        """A gap or an absurd size at ``packet``: the frame in hand is lost; segments are passed over until one
        starts a frame (:meth:`resync`)."""
        self.drop_frame()
        self.skipping, self.gap_packet, self.lost_by = 0, packet, by

    def resync(self, event: StreamBytes, starts_frame) -> Generator[FrameProblem, None, bool]:
        """Out of step: whether this segment starts a frame (then the bytes passed over are told), else pass it."""
        assert self.skipping is not None   # (out of step)
        if starts_frame is None or not starts_frame(event.connection, event.data):
            self.skipping += len(event.data)
            return False
        if self.skipping:
            yield FrameProblem(event.connection, event.packet,
                               f"{self.skipping} bytes after the {self.lost_by} at packet {self.gap_packet} passed "
                               f"over: read again from this packet, whose segment starts a Kafka frame")
        self.skipping = None
        return True


def kafka_frames(events: Iterable[StreamBytes | StreamGap | StreamProblem | PacketProblem], starts_frame=None,
                 framers: dict[str, Framer] | None = None
                 ) -> Iterator[KafkaFrame | FrameProblem | StreamGap | StreamProblem | PacketProblem]:
    """Every whole Kafka frame of every direction, with the problems of framing and of the layers below.
    ``starts_frame(connection, data)`` says whether a segment's bytes start a frame, to resync at after a gap
    (None: a direction is given up at its first gap).  ``framers``: each direction's framer so far, where the
    capture was framed up to here otherwise (kbatch.capture.batches' compiled loop hands it over so)."""
    framers = {} if framers is None else framers
    for event in events:
        if isinstance(event, StreamBytes):
            framer = framers.get(event.connection)
            if framer is None:
                framer = framers[event.connection] = Framer(resyncs=starts_frame is not None)
            if framer.given_up:
                continue
            if framer.skipping is not None and not (yield from framer.resync(event, starts_frame)):
                continue
            yield from framer.feed(event)
            continue
        yield event
        if not isinstance(event, StreamGap):
            continue
        framer = framers.setdefault(event.connection, Framer(starts_frame is not None))
        if framer.given_up:
            continue
        if starts_frame is None:
            framer.give_up()
            yield FrameProblem(event.connection, event.packet, "after this gap the rest of this direction is not read")
        elif framer.skipping is None:
            framer.lose_step(event.packet, "gap")
    for connection, framer in framers.items():
        if framer.begun:
            yield FrameProblem(connection, framer.packet,
                               f"the capture ends inside a Kafka frame ({framer.begun} bytes of it)")
        elif framer.skipping:
            yield FrameProblem(connection, framer.gap_packet,
                               f"the capture ended before a segment after this {framer.lost_by} started a Kafka "
                               f"frame ({framer.skipping} bytes passed over)")
