"""Kafka's 4-byte size framing on reassembled streams (kbatch.capture.frames)."""

from kbatch.capture.frames import LARGEST_FRAME, FrameProblem, KafkaFrame, kafka_frames
from kbatch.capture.streams import StreamBytes, StreamGap

A = "127.0.0.1:40000 -> 127.0.0.1:9092"


def chunk(packet, data, connection=A):
    return StreamBytes(connection, packet, float(packet), data)


def framed(body):
    return len(body).to_bytes(4, "big") + body


def test_frames_split_across_and_within_packets_keep_their_first_packet():
    stream = framed(b"first-body") + framed(b"second") + framed(b"third!")
    events = list(kafka_frames([chunk(1, stream[:3]), chunk(2, stream[3:16]), chunk(3, stream[16:])]))
    assert [(event.packet, event.data) for event in events] == [(1, b"first-body"), (2, b"second"), (3, b"third!")]


def test_absurd_sizes_give_the_direction_up():
    for size in (-1, 3, LARGEST_FRAME + 1):
        events = list(kafka_frames([chunk(1, framed(b"good")), chunk(2, size.to_bytes(4, "big", signed=True)),
                                    chunk(3, framed(b"never"))]))
        assert [type(event) for event in events] == [KafkaFrame, FrameProblem]
        assert events[1].packet == 2 and f"size of {size} bytes" in events[1].what


def test_non_kafka_bytes_on_the_port():
    [problem] = list(kafka_frames([chunk(1, b"GET / HTTP/1.1\r\n\r\n")]))
    assert isinstance(problem, FrameProblem) and problem.packet == 1 and "1195725856" in problem.what


def test_a_gap_gives_the_direction_up_and_the_other_goes_on():
    other = "127.0.0.1:9092 -> 127.0.0.1:40000"
    gap = StreamGap(A, 2, 10, "the capture ended before it came")
    events = list(kafka_frames([chunk(1, framed(b"one!")[:5]), gap, chunk(3, framed(b"lost")),
                                chunk(4, framed(b"answer"), other)]))
    assert events == [gap, FrameProblem(A, 2, "after this gap the rest of this direction is not read"),
                      KafkaFrame(other, 4, 4.0, b"answer")]


def test_the_capture_ending_inside_a_frame():
    events = list(kafka_frames([chunk(1, framed(b"whole")), chunk(2, framed(b"cut short")[:7])]))
    assert events[1] == FrameProblem(A, 2, "the capture ends inside a Kafka frame (7 bytes of it)")
