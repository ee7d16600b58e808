"""``kbatch pcap`` as a library: a capture's Kafka traffic read (kbatch.capture.batches), counted, and with
``extract`` each topic-partition's batches written as segment files.

Every batch is held to the same reader and rules as a segment's (CRC, the batch invariants, records with
``records``); what is damage is the exit status, as everywhere.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator

from kbatch.capture.batches import DEFAULT_PORTS, CaptureFinding, CaptureReader, CapturedBatch, CapturedRun
from kbatch.files.inputs import TOPIC_LEGAL_CHARS, topic_refused
from kbatch.files.outputs import NAME_MAX, write_atomically
from kbatch.format.structs import BATCH_HEADER

_BASE_OFFSET = BATCH_HEADER.field("base_offset")

__all__ = ["CaptureFinding", "CaptureSummary", "CapturedBatch", "CapturedRun", "DEFAULT_PORTS", "Extraction",
           "NotACapture", "inspect_capture", "read_capture"]


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
    hops: Counter | None = None     # --against: batches by the hop that changed them (kbatch.ops.against)

    @property
    def damaged(self) -> bool:
        # (a topic Kafka refuses was never compared: the capture holds what no broker wrote, not agreement)
        return self.errors > 0 or bool(self.hops and any(self.hops[hop] for hop in
                                                         ("client", "broker", "fetch", "topic-refused")))

    def add_match(self, match) -> None:
        if self.hops is None:
            self.hops = Counter()
        self.hops[match.hop or ("topic-refused" if match.topic_refused else "unmatched")] += 1

    def add(self, item: CapturedBatch | CapturedRun | CaptureFinding) -> None:
        if isinstance(item, CapturedRun):   # clean batches: a count that is not negative, no finding
            taken = len(item.lines)
            self.batches += taken
            self.records += item.record_count
            if item.direction == "produce":
                self.produced += taken
            else:
                self.fetched += taken
            return
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
                 records: bool = False, deep: bool = False, runs: bool = False
                 ) -> Iterator[CapturedBatch | CapturedRun | CaptureFinding]:
    """Every batch and finding of the capture, in the order they are settled (a Produce batch once its response
    came, or at the end), each counted in ``summary``; with ``runs``, clean batches lying end to end as one
    CapturedRun."""
    reader = CaptureReader(ports, records=records, deep=deep, runs=runs)
    for item in reader.read(stream):
        summary.add(item)
        yield item
    summary.packets = reader.packets


class NotACapture(ValueError):
    """The file's header is neither pcap's nor pcapng's: nothing in it is read."""


def inspect_capture(path: str, stream: BinaryIO, sink, *, ports: Iterable[int] = DEFAULT_PORTS,
                    records: bool = False, deep: bool = False, extraction: Extraction | None = None,
                    logdir=None) -> CaptureSummary:
    """``kbatch pcap`` on one capture: every item :func:`read_capture` settles handed to ``sink`` (a
    kbatch.render.pcap sink), each batch also to ``extraction`` and held against ``logdir`` (a
    kbatch.ops.against.LogDir), where given; the capture's summary, after ``sink.done`` has it.  NotACapture,
    before anything is read, when the stream's header is neither pcap's nor pcapng's."""
    from kbatch.capture.packets import not_a_capture

    problem = not_a_capture(stream)
    if problem is not None:
        raise NotACapture(problem)
    summary = CaptureSummary(path)
    # (a run of clean batches is written at once where nothing else wants each batch)
    runs = extraction is None and logdir is None and getattr(sink, "takes_runs", False)
    items = read_capture(path, stream, summary, ports=ports, records=records, deep=deep, runs=runs)
    try:
        if extraction is None and logdir is None:
            for item in items:
                sink.item(path, item)
        else:
            _each_batch_too(path, items, sink, summary, extraction, logdir)
    finally:   # (the lines a sink holds back are out before any error is said)
        sink.flush()
    sink.done(summary)
    return summary


def _each_batch_too(path: str, items: Iterable, sink, summary: CaptureSummary, extraction: Extraction | None,
                    logdir) -> None:
    """The items to ``sink``, and each batch kept for ``extraction`` and held against ``logdir``."""
    if logdir is not None:
        from kbatch.ops.against import match
    for item in items:
        sink.item(path, item)
        if extraction is not None and isinstance(item, CapturedBatch):
            extraction.add(item)
        if logdir is not None and isinstance(item, CapturedBatch):
            found = match(item, logdir)
            summary.add_match(found)
            sink.match(path, found)


# -- --extract: the batches as segment files ----------------------------------------------------------------

def directory_name(topic: str, partition: int) -> str:
    """TOPIC-N for a partition directory: a topic Kafka could have as it is; any other name (captured bytes
    are hostile: "/", "..", controls) with each character outside Kafka's set as %XX of its UTF-8 bytes, so
    that no name leaves the directory written into.  A name longer than a file system takes (NAME_MAX bytes) is
    cut, and ends ~DIGEST-N, a digest of the whole topic: "~" is in no other name (escaped, it is %7E), so
    names stay as distinct as their topics."""
    name = topic
    if topic_refused(topic) is not None:
        name = "".join(char if TOPIC_LEGAL_CHARS.fullmatch(char) else
                       "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
                       for char in topic).replace("..", "%2E%2E") or "%"
    if len(name) + len(f"-{partition}") <= NAME_MAX:   # (ASCII, legal or escaped: a character is a byte)
        return f"{name}-{partition}"
    import hashlib

    tail = f"~{hashlib.blake2b(topic.encode('utf-8', 'surrogatepass'), digest_size=16).hexdigest()}-{partition}"
    kept = name[:NAME_MAX - len(tail)]
    return kept[:kept.rfind("%")] + tail if "%" in kept[-2:] else kept + tail   # (no escape cut in two)


def partition_directory_name(item: CapturedBatch) -> str:
    """The directory of a captured batch's partition: TOPIC-N by its topic's name (:func:`directory_name`); a
    topic known only by its id (v13 and later, with no Metadata response captured that names it) id=ID-N, and
    one known by neither id=unknown-N. No named topic's directory is one of these ("=" is in no name Kafka
    allows, and is escaped in the others), though an id, a Uuid's base64, may well be a topic's name."""
    if item.topic is not None:
        return directory_name(item.topic, item.partition)
    return "id=" + directory_name(item.topic_id if item.topic_id is not None else "unknown", item.partition)


@dataclass
class _Spilled:
    """One partition's batches in the spill file: (offset, where, size) each, and the digest of the batch kept
    at each offset (duplicates are told by it)."""

    batches: list = field(default_factory=list)
    digests: dict = field(default_factory=dict)


@dataclass
class Extraction:
    """Each partition's batches, by direction, for segment files under ``directory``:

    * ``produce/TOPIC-N/``: what the clients sent and the broker took, each batch at the offset the Produce
      response gave it (a v2 batch's baseOffset lies outside its CRC: Kafka's broker sets it the same way);
    * ``fetch/TOPIC-N/``: what the brokers sent in Fetch and ShareFetch responses, as sent;
    * ``unassigned/TOPIC-N/``: Produce batches without an offset (the broker refused them, acks=0, or no
      response was captured), as sent, in capture order (their offsets may repeat).

    A batch fetched twice is written once; a second, different batch at the same offset is counted in
    ``differing`` and left out (the first one wins).  The topic is its name, else its id
    (:func:`partition_directory_name`).

    Each batch is written as it comes to one spill file (unnamed, in ``directory``), so memory holds an
    entry per batch, not its bytes; :meth:`write` puts each partition's segment in place from it
    (atomically, in offset order).
    """

    directory: str
    kept: dict = field(default_factory=dict)     # (kind, TOPIC-N) -> _Spilled
    differing: int = 0
    spill: BinaryIO | None = None

    def add(self, item: CapturedBatch) -> None:
        name = partition_directory_name(item)
        raw = item.raw
        if item.direction == "produce" and item.assigned_offset is None:
            self._spill(self.kept.setdefault(("unassigned", name), _Spilled()), None, raw)
            return
        if item.direction == "produce":
            if item.batch.magic >= 2:
                raw = _BASE_OFFSET.pack(item.assigned_offset) + raw[_BASE_OFFSET.size:]   # (baseOffset comes first)
            kind, offset = "produce", item.assigned_offset
        else:
            kind, offset = "fetch", item.batch.base_offset
        spilled = self.kept.setdefault((kind, name), _Spilled())
        import hashlib   # (imported for --extract alone, as tempfile below)

        digest = hashlib.blake2b(raw, digest_size=16).digest()
        if offset in spilled.digests:
            self.differing += spilled.digests[offset] != digest
            return
        spilled.digests[offset] = digest
        self._spill(spilled, offset, raw)

    def _spill(self, spilled: _Spilled, offset: int | None, raw: bytes) -> None:
        if self.spill is None:
            os.makedirs(self.directory, exist_ok=True)
            import tempfile

            self.spill = tempfile.TemporaryFile(dir=self.directory)
        spilled.batches.append((offset, self.spill.tell(), len(raw)))
        self.spill.write(raw)

    def segments(self) -> list[tuple[str, list[tuple[int, int]]]]:
        """Each segment :meth:`write` puts in place: its path (named after its first offset; unassigned: 0), and
        where each of its batches lies in the spill file, (pos, size), in the order written."""
        planned = []
        for (kind, name), spilled in sorted(self.kept.items()):
            ordered = spilled.batches if kind == "unassigned" else sorted(spilled.batches)
            first = 0 if kind == "unassigned" else ordered[0][0]
            path = os.path.join(self.directory, kind, name, f"{max(first, 0):020d}.log")
            planned.append((path, [(at, size) for _, at, size in ordered]))
        return planned

    def write(self) -> tuple[list[str], list[tuple[str, OSError]]]:
        """Write each partition's segment (:meth:`segments`): the paths written, and each path that could not
        be, with why (a partition's failure is its own: the others are written still)."""
        written: list[str] = []
        failed: list[tuple[str, OSError]] = []
        spill = self.spill
        if spill is None:   # no batch was kept
            return written, failed
        try:
            spill.flush()
            for path, batches in self.segments():
                try:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    write_atomically(path, (os.pread(spill.fileno(), size, at) for at, size in batches))
                except OSError as error:
                    failed.append((path, error))
                else:
                    written.append(path)
        finally:
            self.close()
        return written, failed

    def close(self) -> None:
        """The spill file closed (it has no name: nothing is left in ``directory``)."""
        if self.spill is not None:
            self.spill.close()
