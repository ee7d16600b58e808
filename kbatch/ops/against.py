"""``kbatch pcap --against LOGDIR``: each captured batch held against the batch the broker wrote -- which hop
changed it: the client, the broker's disk, or the Fetch response.

A produced batch is matched to the disk batch at the offset its Produce response gave, else (no response, or
the broker refused it) by producer id, epoch and base sequence; a fetched batch to the disk batch at its base
offset.  Their bytes are compared leaving out what a broker legitimately rewrites: baseOffset and
partitionLeaderEpoch (outside the CRC; LogValidator.assignOffsetsNonCompressed and
MemoryRecords.setPartitionLeaderEpoch).  Where the broker re-wrote the batch -- LogAppendTime (attributes,
maxTimestamp and so the CRC change) or recompression to the topic's compression.type (another codec) -- the
records are compared instead (offset delta, key, value, headers).

The hop: "client" -- the batch was bad on the wire already; "broker" -- good on the wire, different or failing
its CRC on disk; "fetch" -- the disk batch is good and the Fetch response's differs; "none" -- all agree;
None where there is no disk batch to compare (retention, compaction, a partition not in LOGDIR), or where the
captured topic is a name Kafka refuses (``Match.topic_refused``): no broker made a directory for it, so none
is looked up (its "/" and ".." would lead out of LOGDIR), and the batch is not compared.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

from kbatch.capture.batches import CapturedBatch
from kbatch.files.inputs import partition_directory, topic_refused
from kbatch.format.findings import Finding
from kbatch.format.structs import BATCH_HEADER
from kbatch.output.visible import visible
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.walk.engine import entries

# What a broker rewrites of a v2 batch outside its CRC (baseOffset, partitionLeaderEpoch): (start, end) of each
# in the declared header.
REWRITTEN = tuple((BATCH_HEADER.offsets[name], BATCH_HEADER.offsets[name] + BATCH_HEADER.sizes[name])
                  for name in ("base_offset", "partition_leader_epoch"))
HOPS = ("client", "broker", "fetch", "none")


@dataclass(frozen=True)
class DiskBatch:
    path: str
    pos: int
    size: int
    crc_valid: bool
    codec: str
    timestamp_type: str
    producer: tuple    # (producer id, epoch, base sequence)


@dataclass(frozen=True)
class Match:
    found: CapturedBatch
    hop: str | None
    first_differing_byte: int | None   # inside the batch, from its first byte
    disk: DiskBatch | None
    base_offset: int | None            # the offset the batch has on disk
    explanation: str
    topic_refused: bool = False        # its topic is a name Kafka refuses: not looked up, not compared


def first_difference(a: bytes, b: bytes, left_out=REWRITTEN) -> int | None:
    """The first position where ``a`` and ``b`` differ outside the ranges ``left_out``; None when they agree."""
    for position in range(min(len(a), len(b))):
        if a[position] != b[position] and not any(start <= position < end for start, end in left_out):
            return position
    return None if len(a) == len(b) else min(len(a), len(b))


def _records(raw: bytes) -> list | None:
    """(offset delta, key, value, headers) of a batch's records, or None when they do not read."""
    batch = next(iter(entries(SegmentReader(io.BytesIO(raw), ReadOptions(records=True), size=len(raw)))), None)
    if batch is None or isinstance(batch, Finding) or batch.findings or batch.records is None:
        return None
    return [(record.offset - batch.base_offset, record.key, record.value, record.headers) for record in batch.records]


class LogDir:
    """A broker's log directory, each partition's batches indexed when first asked for."""

    def __init__(self, root: str):
        self.root = root
        self.partitions: dict[tuple[str, int], dict[int, DiskBatch]] = {}
        self.names = self._topic_names()

    def _topic_names(self) -> dict[str, str]:
        """Topic id -> name, from each partition directory's partition.metadata ("topic_id: ..."); a directory
        TOPIC-N, or TOPIC-N.ID-delete once its topic was deleted (LocalLog.logDeleteDirName)."""
        names: dict[str, str] = {}
        for entry in sorted(os.listdir(self.root)) if os.path.isdir(self.root) else ():
            partition = partition_directory(entry)
            metadata = os.path.join(self.root, entry, "partition.metadata")
            if partition and os.path.isfile(metadata):
                with open(metadata, encoding="utf-8", errors="replace") as text:
                    for line in text:
                        if line.startswith("topic_id:"):
                            names.setdefault(line.split(":", 1)[1].strip(), partition[0])
        return names

    def topic(self, found: CapturedBatch) -> str | None:
        if found.topic is not None or found.topic_id is None:
            return found.topic
        return self.names.get(found.topic_id)

    def batches(self, topic: str, partition: int) -> dict[int, DiskBatch]:
        key = (topic, partition)
        if key not in self.partitions:
            index: dict[int, DiskBatch] = {}
            if topic_refused(topic) is not None:   # no broker's directory: never a path out of the root
                self.partitions[key] = index
                return index
            directory = os.path.join(self.root, f"{topic}-{partition}")
            names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
            for name in names:
                path = os.path.join(directory, name)
                if not name.endswith(".log") or not os.path.isfile(path):   # (as LogLoader: a FIFO would block)
                    continue
                with open(path, "rb") as stream:
                    for batch in entries(SegmentReader(stream)):
                        if isinstance(batch, Finding):
                            continue
                        index.setdefault(batch.base_offset, DiskBatch(
                            path, batch.pos, batch.size, batch.crc_valid, batch.codec, batch.timestamp_type,
                            (batch.producer_id, batch.producer_epoch, batch.base_sequence)))
            self.partitions[key] = index
        return self.partitions[key]

    @staticmethod
    def raw(disk: DiskBatch) -> bytes:
        with open(disk.path, "rb") as stream:
            stream.seek(disk.pos)
            return stream.read(disk.size)


def match(found: CapturedBatch, logdir: LogDir) -> Match:
    """Where ``found`` went wrong, if anywhere, against ``logdir``."""
    batch = found.batch
    produced = found.direction == "produce"
    if produced and not batch.crc_valid:
        return Match(found, "client", None, None, found.assigned_offset,
                     "the client sent it damaged: its CRC fails on the wire")
    topic = logdir.topic(found)
    if topic is not None and (why := topic_refused(topic)) is not None:
        return Match(found, None, None, None, found.assigned_offset if produced else batch.base_offset,
                     f"not compared: Kafka refuses the topic name '{visible(topic)}' ({why}), so nothing in "
                     "the log directory is looked up for it", topic_refused=True)
    disk_batches = logdir.batches(topic, found.partition) if topic is not None else {}
    offset = found.assigned_offset if produced else batch.base_offset
    disk = disk_batches.get(offset) if offset is not None else None
    if disk is None and produced and batch.producer_id is not None and batch.producer_id >= 0:
        key = (batch.producer_id, batch.producer_epoch, batch.base_sequence)
        offset, disk = next(((at, each) for at, each in disk_batches.items() if each.producer == key), (None, None))
    if disk is None:
        where = "a partition not in the log directory" if not disk_batches else "retention, compaction or a copy"
        return Match(found, None, None, None, offset, f"no batch on disk to compare ({where})")
    raw = logdir.raw(disk)
    rewritten = disk.codec != batch.codec or disk.timestamp_type != batch.timestamp_type
    if rewritten:   # the broker re-wrote it (recompression, LogAppendTime): the records are what must agree
        wire_records, disk_records = _records(found.raw), _records(raw)
        differing = None if wire_records is not None and wire_records == disk_records else 0
    else:
        differing = first_difference(found.raw, raw)
    agree = differing is None
    if produced:
        if agree and disk.crc_valid:
            return Match(found, "none", None, disk, offset, "the broker wrote what the client sent")
        return Match(found, "broker", differing, disk, offset,
                     "good on the wire, " + ("failing its CRC" if not disk.crc_valid else "different") + " on disk")
    if not disk.crc_valid:
        return Match(found, "broker", differing, disk, offset,
                     "the disk batch fails its CRC" + (", and was fetched as it is" if agree else ""))
    if agree and batch.crc_valid:
        return Match(found, "none", None, disk, offset, "fetched as the disk holds it")
    return Match(found, "fetch", differing, disk, offset, "the disk batch is good; the Fetch response's differs")
