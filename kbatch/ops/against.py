"""``kbatch pcap --against LOGDIR``: each captured batch held against the batch the broker wrote -- which hop
changed it: the client, the broker's disk, or the Fetch response.

A produced batch is matched to the disk batch at the offset its Produce response gave, else (no response, or
the broker refused it) by producer id, epoch and base sequence; a fetched batch to the disk batch at its base
offset.

A produced batch is held against what Kafka's LogValidator makes of it (:func:`written`).  It always sets
baseOffset and partitionLeaderEpoch (outside the CRC).  Where it keeps the batch's bytes (uncompressed, or
compressed as the topic keeps it with inner offsets 0, 1, 2, ...) it sets the timestamp type to the topic's and
maxTimestamp to the records' largest or the log append time, recomputing the CRC: the bytes it leaves are
compared.  Where it rebuilds the batch (recompressed to the topic's compression.type, or inner offsets not 0, 1,
2, ...) the records are compared instead (offset, key, value, headers, and timestamp, the log append time where
the topic says LogAppendTime).  A fetched batch is the disk's bytes, but for partitionLeaderEpoch.  Either may
since have been compacted, or a Fetch response taken before or after the log cleaner ran: a batch that differs
only as the cleaner leaves a batch (:mod:`kbatch.reading.cleaner`) agrees, and its match says so.

The hop: "client" -- the batch was bad on the wire already; "broker" -- good on the wire, different or failing
its CRC on disk; "fetch" -- the disk batch is good and the Fetch response's differs; "none" -- all agree (the
explanation names what the broker or the cleaner rewrote); None where there is no disk batch to compare
(retention, compaction, a partition not in LOGDIR), or where the captured topic is a name Kafka refuses
(``Match.topic_refused``): no broker made a directory for it, so none is looked up (its "/" and ".." would lead
out of LOGDIR), and the batch is not compared.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import cast

from kbatch.capture.batches import CapturedBatch
from kbatch.files.inputs import partition_directory, topic_refused
from kbatch.format.checksums import crc32c
from kbatch.format.findings import Finding
from kbatch.format.structs import (BATCH_HEADER, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, DELETE_HORIZON_FLAG_MASK,
                                   TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK)
from kbatch.output.visible import visible
from kbatch.reading.cleaner import Kept, cleaned_from, compacted_alike, kept
from kbatch.reading.model import Batch
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
    rewritten: bool = False            # hop none, the broker or the log cleaner having rewritten it: explained


def first_difference(a: bytes, b: bytes, left_out=REWRITTEN) -> int | None:
    """The first position where ``a`` and ``b`` differ outside the ranges ``left_out``; None when they agree."""
    for position in range(min(len(a), len(b))):
        if a[position] != b[position] and not any(start <= position < end for start, end in left_out):
            return position
    return None if len(a) == len(b) else min(len(a), len(b))


def _read(raw: bytes) -> Batch | None:
    """The v2 batch ``raw`` holds, its records decoded; None when it does not read whole (or fails its CRC)."""
    batch = next(iter(entries(SegmentReader(io.BytesIO(raw), ReadOptions(records=True), size=len(raw)))), None)
    if batch is None or isinstance(batch, Finding) or batch.findings or batch.records is None or batch.magic != 2:
        return None
    return batch


def rebuilt(sent: Batch, stored: Batch) -> str | None:
    """Why the broker rebuilt the batch the client sent rather than write its bytes, or None where it kept them.

    LogValidator.validateMessagesAndAssignOffsets (storage/.../internals/log/LogValidator.java): an uncompressed
    batch for an uncompressed topic is assigned offsets in place (assignOffsetsNonCompressed); any other goes
    through validateMessagesAndAssignOffsetsCompressed, in place only while the topic's compression type is the
    batch's and every record's offset (baseOffset + offsetDelta; a client's baseOffset is 0:
    UnifiedLog.analyzeAndValidateRecords) is its index -- else buildRecordsAndAssignOffsets (MemoryRecordsBuilder:
    the records appended at offsets 0, 1, 2, ...).  Its other conditions a client's v2 batch never meets: toMagic
    is v2 (UnifiedLog.appendAsLeader: RecordBatch.CURRENT_MAGIC_VALUE), and a control batch, kept in place
    uncompressed, validateBatch refuses from a client.  The topic's compression.type is not in the log directory:
    the disk batch's compression is taken for it.
    """
    if sent.codec != stored.codec:
        return f"recompressed from {sent.codec} to {stored.codec} (the topic's compression.type)"
    if sent.codec != "none":
        moved = next((index for index, record in enumerate(sent.records or ()) if record.offset != index), None)
        if moved is not None:
            return f"rebuilt with its records at offsets 0, 1, 2, ... (record {moved} was sent at offset " \
                   f"{cast(list, sent.records)[moved].offset})"
    return None


def largest_timestamp(sent: Batch) -> int:
    """maxBatchTimestamp as LogValidator works it out: the largest record timestamp, from NO_TIMESTAMP (-1)."""
    return max([-1] + [record.timestamp for record in sent.records or () if record.timestamp is not None])


def set_max_timestamp(raw: bytes, timestamp_type: str, max_timestamp: int) -> bytes:
    """DefaultRecordBatch.setMaxTimestamp on ``raw``: the attributes made afresh with ``timestamp_type``
    (computeAttributes: compression, timestamp type, transactional, control, delete horizon; no other bit) and
    maxTimestamp set, the CRC recomputed; unchanged where both are already so."""
    at = BATCH_HEADER.offsets
    attributes = int.from_bytes(raw[at["attributes"]:at["attributes"] + 2], "big")
    was = "LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime"
    if was == timestamp_type and int.from_bytes(raw[at["max_timestamp"]:at["max_timestamp"] + 8], "big",
                                                signed=True) == max_timestamp:
        return raw
    attributes &= COMPRESSION_CODEC_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK | DELETE_HORIZON_FLAG_MASK
    attributes |= TIMESTAMP_TYPE_MASK if timestamp_type == "LogAppendTime" else 0
    body = bytearray(raw)
    body[at["attributes"]:at["attributes"] + 2] = attributes.to_bytes(2, "big")
    body[at["max_timestamp"]:at["max_timestamp"] + 8] = max_timestamp.to_bytes(8, "big", signed=True)
    body[at["crc"]:at["crc"] + 4] = crc32c(bytes(body[at["attributes"]:])).to_bytes(4, "big")
    return bytes(body)


def written(sent: Batch, stored: Batch) -> Kept:
    """What the broker's LogValidator keeps of the batch the client sent, in the terms of what the cleaner keeps
    (:class:`kbatch.reading.cleaner.Kept`): the producer fields and flags as sent; the partition leader epoch, the
    topic's compression and timestamp type as the disk's batch has them (the broker's, not the client's); each
    record at its offset delta as sent (at its index where the batch was rebuilt) with its key, value, headers
    and timestamp -- under LogAppendTime the log append time, the disk batch's maxTimestamp
    (MemoryRecordsBuilder.appendWithOffset, DefaultRecord.readFrom)."""
    again = rebuilt(sent, stored) is not None
    records = list(sent.records or ())
    stamp = stored.max_timestamp if stored.timestamp_type == "LogAppendTime" else None
    return Kept((len(records) - 1 if again else sent.last_offset_delta, stored.partition_leader_epoch,
                 sent.producer_id, sent.producer_epoch, sent.base_sequence, stored.codec, stored.timestamp_type,
                 sent.is_transactional, sent.is_control),
                {(index if again else record.offset - sent.base_offset):
                 (record.timestamp if stamp is None else stamp, record.key, record.value, record.headers)
                 for index, record in enumerate(records)})


def cleaned(whole: int, stored: Batch) -> str:
    """What the log cleaner did to a batch of ``whole`` records that ``stored`` is now."""
    if not stored.count:
        return f"the log cleaner removed its {whole} records and kept it empty (a producer's last batch)"
    if stored.count < whole:
        return f"the log cleaner compacted it, {stored.count} of its {whole} records kept unchanged"
    return "the log cleaner marked it with a delete horizon, its records unchanged"


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
    if produced:
        differing, how, rewritten = _as_written(found.raw, raw)
        if differing is None and disk.crc_valid:
            return Match(found, "none", None, disk, offset, how, rewritten=rewritten)
        return Match(found, "broker", differing, disk, offset,
                     "good on the wire, " + ("failing its CRC" if not disk.crc_valid else "different") + " on disk")
    differing = first_difference(found.raw, raw)
    if not disk.crc_valid:
        return Match(found, "broker", differing, disk, offset,
                     "the disk batch fails its CRC" + (", and was fetched as it is" if differing is None else ""))
    if differing is None and batch.crc_valid:
        return Match(found, "none", None, disk, offset, "fetched as the disk holds it")
    fetched, stored = (_read(found.raw), _read(raw)) if batch.crc_valid else (None, None)
    if fetched is not None and stored is not None and compacted_alike(fetched, stored):
        return Match(found, "none", None, disk, offset, _compacted_between(fetched, stored), rewritten=True)
    return Match(found, "fetch", differing, disk, offset, "the disk batch is good; the Fetch response's differs")


def _as_written(sent_raw: bytes, raw: bytes) -> tuple[int | None, str, bool]:
    """Where the disk batch ``raw`` first differs from what the broker writes of the batch the client sent (None:
    they agree; 0 where the batch was rebuilt and its records differ), what the broker (and the log cleaner since)
    made of it, and whether that was more than setting baseOffset and partitionLeaderEpoch."""
    sent, stored = _read(sent_raw), _read(raw)
    if sent is None or stored is None:   # (records that do not read: the bytes alone)
        return first_difference(sent_raw, raw), "the broker wrote what the client sent", False
    again = rebuilt(sent, stored)
    rewrites = [again] if again else []
    if stored.timestamp_type != sent.timestamp_type:
        rewrites.append("stamped with the log append time (the topic's message.timestamp.type)"
                        if stored.timestamp_type == "LogAppendTime" else "with the topic's timestamp type, CreateTime")
    differing: int | None = 0
    if again is None:   # kept in place: the bytes it leaves (assignOffsetsNonCompressed, or compressed in place)
        largest = cast(int, stored.max_timestamp) if stored.timestamp_type == "LogAppendTime" \
            else largest_timestamp(sent)   # (the log append time: the broker's clock, which the disk's says)
        differing = first_difference(set_max_timestamp(sent_raw, stored.timestamp_type, largest), raw)
        if differing is None:
            if not rewrites and sent.max_timestamp != largest:
                rewrites.append(f"with maxTimestamp set to its records' largest, {largest} (sent as "
                                f"{sent.max_timestamp})")
            return None, ", ".join(["the broker wrote what the client sent"] + rewrites), bool(rewrites)
    # rebuilt, or compacted since: the records
    stored_kept, whole = kept(stored), written(sent, stored)
    compacted = stored_kept is not None and (len(stored_kept.records) < len(whole.records)
                                             or stored.delete_horizon_ms is not None)
    if stored_kept is not None and (again or compacted) and cleaned_from(whole, stored_kept):
        return None, ", ".join(["the broker wrote the client's records"] + rewrites) + (
            "; since, " + cleaned(len(whole.records), stored) if compacted else ""), True
    return differing, "", False


def _compacted_between(fetched: Batch, stored: Batch) -> str:
    """How a fetched batch and the disk's differ as the log cleaner leaves a batch."""
    if (stored.count or 0) < (fetched.count or 0):
        return f"fetched before the log cleaner compacted it: the disk keeps {stored.count} of the {fetched.count} " \
               "records fetched, unchanged"
    if (fetched.count or 0) < (stored.count or 0):
        return f"fetched compacted further than the disk holds it: {fetched.count} of the disk's {stored.count} " \
               "records, unchanged (the disk's state is older than the fetch, or another replica's)"
    return "fetched as the disk holds it but for a delete horizon the log cleaner marked, its records unchanged"
