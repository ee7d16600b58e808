"""``kbatch pcap`` as a library: a capture's Kafka traffic read (kbatch.capture.batches), counted, and with
``extract`` each topic-partition's batches written as segment files.

Every batch is held to the same reader and rules as a segment's (CRC, the batch invariants, records with
``records``); what is damage is the exit status, as everywhere.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator

from kbatch.capture.batches import DEFAULT_PORTS, CaptureFinding, CaptureReader, CapturedBatch

__all__ = ["CaptureFinding", "CaptureSummary", "CapturedBatch", "DEFAULT_PORTS", "read_capture"]


@dataclass
class CaptureSummary:
    path: str
    packets: int = 0
    batches: int = 0
    records: int = 0
    produced: int = 0
    fetched: int = 0
    findings: Counter = field(default_factory=Counter)
    errors: int = 0
    unreadable: str | None = None   # why the file is no capture at all (then nothing was read)

    @property
    def damaged(self) -> bool:
        return self.errors > 0

    def add(self, item: CapturedBatch | CaptureFinding) -> None:
        if isinstance(item, CaptureFinding):
            if item.packet == 0:   # before the first packet: the file's own header
                self.unreadable = item.finding.actual
            self._finding(item.finding)
            return
        self.batches += 1
        self.records += max(item.batch.count or 0, 0)
        if item.direction == "produce":
            self.produced += 1
        else:
            self.fetched += 1
        for finding in item.batch.findings:
            self._finding(finding)

    def _finding(self, finding) -> None:
        self.findings[finding.code] += 1
        if finding.is_damage:
            self.errors += 1


def read_capture(path: str, stream: BinaryIO, summary: CaptureSummary, *, ports: Iterable[int] = DEFAULT_PORTS,
                 records: bool = False) -> Iterator[CapturedBatch | CaptureFinding]:
    """Every batch and finding of the capture, in the order they are settled (a Produce batch once its response
    came, or at the end), each counted in ``summary``."""
    reader = CaptureReader(ports, records=records)
    for item in reader.read(stream):
        summary.add(item)
        yield item
    summary.packets = reader.packets
