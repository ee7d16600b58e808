"""TCP reassembly (kbatch.capture.streams) on segments made here: order, retransmissions, overlaps, gaps."""

import pytest

from kbatch.capture.packets import PacketProblem, Segment
from kbatch.capture.streams import StreamBytes, StreamGap, reassemble

CLIENT, SERVER = ("127.0.0.1", 40000), ("127.0.0.1", 9092)
SYN, ACK = 0x02, 0x10


def segment(packet, seq, payload, flags=ACK, source=CLIENT, destination=SERVER):
    return Segment(packet, float(packet), source, destination, seq, flags, payload)


def stream_of(events):
    return b"".join(event.data for event in events if isinstance(event, StreamBytes))


def gaps(events):
    return [(event.packet, event.missing) for event in events if isinstance(event, StreamGap)]


def test_out_of_order_retransmitted_and_overlapping_segments_make_one_stream():
    events = list(reassemble([
        segment(1, 99, b"", SYN),
        segment(2, 100, b"abcd"),
        segment(3, 108, b"ijkl"),        # ahead: waits
        segment(4, 100, b"abcd"),        # retransmission: dropped
        segment(5, 102, b"cdefgh"),      # overlaps what was delivered; its new bytes fill the hole
    ]))
    assert stream_of(events) == b"abcdefghijkl" and gaps(events) == []
    assert [event.packet for event in events] == [2, 5, 3]


def test_sequence_numbers_wrap():
    top = (1 << 32) - 2
    events = list(reassemble([segment(1, top, b"ab"), segment(2, 2, b"ef"), segment(3, 0, b"cd")]))
    assert stream_of(events) == b"abcdef"


def test_a_hole_never_filled_is_a_gap_at_the_end_and_the_stream_goes_on():
    events = list(reassemble([segment(1, 100, b"abcd"), segment(2, 110, b"klmn")]))
    assert stream_of(events) == b"abcdklmn" and gaps(events) == [(2, 6)]
    assert events[1].connection == "127.0.0.1:40000 -> 127.0.0.1:9092"


def test_waiting_bytes_are_capped():
    events = list(reassemble([segment(1, 100, b"ab"), segment(2, 110, b"x" * 6), segment(3, 116, b"y" * 6)],
                             waiting_limit=10))
    assert gaps(events) == [(2, 8)]
    assert events[1].why.startswith("more than 10 bytes")
    assert stream_of(events) == b"ab" + b"x" * 6 + b"y" * 6


def test_directions_are_apart_and_problems_pass_through():
    problem = PacketProblem(3, "the capture ends inside packet 3")
    events = list(reassemble([segment(1, 5, b"req"), segment(2, 70, b"resp", source=SERVER, destination=CLIENT),
                              problem]))
    assert [(event.connection, event.data) for event in events[:2]] == [
        ("127.0.0.1:40000 -> 127.0.0.1:9092", b"req"), ("127.0.0.1:9092 -> 127.0.0.1:40000", b"resp")]
    assert events[2] is problem


@pytest.mark.parametrize("address, expected", [("::1", "[::1]:40000 -> 127.0.0.1:9092")])
def test_ipv6_endpoints_are_bracketed(address, expected):
    [event] = list(reassemble([segment(1, 5, b"x", source=(address, 40000))]))
    assert event.connection == expected


def test_a_waiting_segment_retransmitted_is_counted_once_against_the_cap():
    events = list(reassemble([segment(1, 100, b"ab"), segment(2, 110, b"x" * 6), segment(3, 110, b"x" * 6),
                              segment(4, 102, b"c" * 8)], waiting_limit=10))
    assert gaps(events) == [] and stream_of(events) == b"ab" + b"c" * 8 + b"x" * 6


def test_write_streams_gives_each_direction_a_file_that_ends_at_its_first_gap(tmp_path):
    from kbatch.capture.streams import write_streams

    problem = PacketProblem(9, "the capture ends inside packet 9")
    written = write_streams([
        segment(1, 99, b"", SYN),
        segment(2, 104, b"efgh"),                                          # ahead: waits
        segment(3, 70, b"resp", source=SERVER, destination=CLIENT),
        segment(4, 100, b"abcd"),                                          # fills the hole
        segment(5, 74, b"onse", source=SERVER, destination=CLIENT),
        segment(6, 200, b"late", source=SERVER, destination=CLIENT),      # a hole never filled
        problem,
    ], str(tmp_path))
    client, server = "127.0.0.1:40000 -> 127.0.0.1:9092", "127.0.0.1:9092 -> 127.0.0.1:40000"
    assert written.paths == {server: str(tmp_path / "00001.stream"), client: str(tmp_path / "00002.stream")}
    assert (tmp_path / "00002.stream").read_bytes() == b"abcdefgh"
    assert (tmp_path / "00001.stream").read_bytes() == b"response"     # not "late": it is past a gap
    assert written.problems[0] is problem
    assert [(gap.connection, gap.missing) for gap in written.problems[1:]] == [(server, 200 - 78)]


def test_write_streams_never_writes_over_a_file(tmp_path):
    from kbatch.capture.streams import write_streams

    (tmp_path / "00001.stream").write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        write_streams([segment(1, 5, b"req")], str(tmp_path))
    assert (tmp_path / "00001.stream").read_bytes() == b"mine"
