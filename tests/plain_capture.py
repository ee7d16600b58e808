"""A capture read to its Kafka requests, responses and problems with and without the compiled loop over its
common case (kbatch.kernels.plaincapture): tests/conftest.py holds every capture the tests read to both ways
agreeing, tests/test_capture_plain.py odd packets and cut files."""

from __future__ import annotations

import io

from kbatch.capture import batches


def read_to_frames(data: bytes, plain: bool, ports=batches.DEFAULT_PORTS) -> list:
    """Everything the capture's bytes pair into (kbatch.capture.exchanges.Pairing over CaptureReader._frames),
    and at the end the packet count, with the compiled loop (``plain``) or without it."""
    taken, batches.PLAIN_CAPTURE = batches.PLAIN_CAPTURE, plain
    try:
        reader = batches.CaptureReader(ports)
        events = list(reader.pairing(reader._frames(io.BytesIO(data))))
    finally:
        batches.PLAIN_CAPTURE = taken
    return events + [("packets", reader.packets)]


def read_both_ways(data: bytes, ports=batches.DEFAULT_PORTS) -> tuple[list, list]:
    return read_to_frames(data, True, ports), read_to_frames(data, False, ports)
