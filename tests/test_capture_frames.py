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


def test_absurd_sizes_are_passed_over_until_a_segment_starts_a_frame():
    """With a way to recognise a frame, an absurd size loses step as a gap does: the rest of its segment and
    every segment that starts no frame are passed over, then the direction is read again."""
    def starts_frame(connection, data):
        return data.startswith(framed(b"next")[:4])

    for size in (-1, 0x7FFFFFFF):
        absurd = size.to_bytes(4, "big", signed=True) + b"junk-junk"
        events = list(kafka_frames([chunk(1, framed(b"good") + absurd), chunk(2, b"more junk"),
                                    chunk(3, framed(b"next") + framed(b"then"))], starts_frame))
        assert events == [
            KafkaFrame(A, 1, 1.0, b"good"),
            FrameProblem(A, 1, f"a Kafka frame size of {size} bytes (expected 4 to {LARGEST_FRAME}): not Kafka, or "
                               f"the stream is out of step; read again from the next segment that starts a frame"),
            FrameProblem(A, 3, "18 bytes after the absurd frame size at packet 1 passed over: read again from this "
                               "packet, whose segment starts a Kafka frame"),
            KafkaFrame(A, 3, 3.0, b"next"), KafkaFrame(A, 3, 3.0, b"then")]


def test_an_absurd_size_split_across_segments_and_no_frame_after_it():
    """The size field's bytes come in two segments; nothing after it starts a frame, which the end tells."""
    events = list(kafka_frames([chunk(1, b"\x80\x00"), chunk(2, b"\x00\x00rest")], lambda connection, data: False))
    assert [(event.packet, event.what) for event in events] == [
        (1, f"a Kafka frame size of -2147483648 bytes (expected 4 to {LARGEST_FRAME}): not Kafka, or the stream is "
            f"out of step; read again from the next segment that starts a frame"),
        (1, "the capture ended before a segment after this absurd frame size started a Kafka frame (4 bytes "
            "passed over)")]
