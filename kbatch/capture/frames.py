"""Kafka's framing on a reassembled TCP direction: each request and response is a 4-byte size and that many
bytes (NetworkReceive.readFrom in clients/src/main/java/org/apache/kafka/common/network/NetworkReceive.java).

A size below the smallest header (a response's correlation id: 4 bytes) or above the broker's default
``socket.request.max.bytes`` (100 MiB, SocketServerConfigs) is absurd: a problem, and the direction is given up,
as it is after a gap in the stream (this first version does not resync).  What remains unframed at the end is
a problem too.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator

from kbatch.capture.packets import PacketProblem
from kbatch.capture.streams import StreamBytes, StreamGap

SIZE_BYTES = 4
SMALLEST_FRAME = 4
LARGEST_FRAME = 100 * 1024 * 1024


@dataclass(frozen=True)
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


class _Framer:
    def __init__(self):
        self.buffer = bytearray()
        self.consumed = 0                 # stream offset of buffer[0]
        self.received = 0                 # stream offset past the last byte received
        self.chunks: deque = deque()      # (stream offset, packet, time) of each chunk still in the buffer
        self.given_up = False

    def feed(self, event: StreamBytes) -> Iterator[KafkaFrame | FrameProblem]:
        self.chunks.append((self.received, event.packet, event.time))
        self.buffer += event.data
        self.received += len(event.data)
        while len(self.buffer) >= SIZE_BYTES:
            while len(self.chunks) > 1 and self.chunks[1][0] <= self.consumed:
                self.chunks.popleft()
            _, packet, time = self.chunks[0]
            size = int.from_bytes(self.buffer[:SIZE_BYTES], "big", signed=True)
            if not SMALLEST_FRAME <= size <= LARGEST_FRAME:
                yield FrameProblem(event.connection, packet,
                                   f"a Kafka frame size of {size} bytes (expected {SMALLEST_FRAME} to "
                                   f"{LARGEST_FRAME}): not Kafka, or the stream is out of step; the rest of "
                                   f"this direction is not read")
                self.give_up()
                return
            if len(self.buffer) < SIZE_BYTES + size:
                return
            yield KafkaFrame(event.connection, packet, time, bytes(self.buffer[SIZE_BYTES:SIZE_BYTES + size]))
            del self.buffer[:SIZE_BYTES + size]
            self.consumed += SIZE_BYTES + size

    def give_up(self):
        self.given_up = True
        self.buffer.clear()
        self.chunks.clear()


def kafka_frames(events: Iterable[StreamBytes | StreamGap | PacketProblem]
                 ) -> Iterator[KafkaFrame | FrameProblem | StreamGap | PacketProblem]:
    """Every whole Kafka frame of every direction, with the problems of framing and of the layers below."""
    framers: dict[str, _Framer] = {}
    for event in events:
        if isinstance(event, StreamBytes):
            framer = framers.setdefault(event.connection, _Framer())
            if not framer.given_up:
                yield from framer.feed(event)
            continue
        yield event
        framer = framers.setdefault(event.connection, _Framer()) if isinstance(event, StreamGap) else None
        if framer is not None and not framer.given_up:
            framer.give_up()
            yield FrameProblem(event.connection, event.packet,
                               "after this gap the rest of this direction is not read (no resync yet)")
    for connection, framer in framers.items():
        if framer.buffer:
            yield FrameProblem(connection, framer.chunks[0][1],
                               f"the capture ends inside a Kafka frame ({len(framer.buffer)} bytes of it)")
