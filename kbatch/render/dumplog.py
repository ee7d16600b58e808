"""Kafka's own dump format: the lines ``kafka-dump-log.sh`` prints.

``--format dumplog`` reproduces Kafka 4.4.0's DumpLogSegments
(tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java: dumpLog,
printBatchLevel; the Scala kafka.tools.DumpLogSegments before it) field for
field, so scripts written against Kafka's tool keep working: without
``--records`` as ``--files F``, with ``--records`` as ``--deep-iteration
--print-data-log``, including the "Non-consecutive offsets" report Kafka
prints on stderr when it is done.  Damage, which Kafka's tool cannot report,
is written as comment lines starting with ``#``.

Keys and payloads are decoded as Kafka's default StringDecoder does (UTF-8,
bad bytes replaced) under ``--decode auto`` or ``utf8``; ``hex``, ``base64``
and ``json`` stand in for Kafka's ``--key-decoder-class`` and
``--value-decoder-class``.
"""

from __future__ import annotations

import os
import re
import sys

from kbatch.format.findings import MAX_HELD, Finding
from kbatch.reading.model import Batch, Record
from kbatch.render.internal import control_dumplog_tokens, dumplog_tokens, remote_dumplog_tokens
from kbatch.output.values import bytes_text, finding_text
from kbatch.output.visible import visible

KAFKA_DECODER_MODES = ("auto", "utf8")   # --decode values meaning Kafka's own StringDecoder


def _java_bool(value: bool) -> str:
    return "true" if value else "false"


def _optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def file_header(path: str) -> list[str]:
    """'Dumping F' and, for a segment named by its base offset, 'Log starting offset: N'."""
    lines = [f"Dumping {visible(path)}"]
    name = path.rsplit("/", 1)[-1]
    stem, _, suffix = name.partition(".")
    if suffix == "log" and stem.isdigit():
        lines.append(f"Log starting offset: {int(stem)}")
    elif name == "bootstrap.checkpoint":      # BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME
        lines.append("KRaft bootstrap snapshot")
    elif suffix == "checkpoint" and re.fullmatch(r"\d{20}-\d{10}", stem):
        # Snapshots.parse: <end offset, 20 digits>-<epoch, 10 digits>.checkpoint
        end_offset, epoch = stem.split("-")
        lines.append(f"Snapshot end offset: {int(end_offset)}, epoch: {int(epoch)}")
    return lines


def batch_line(batch: Batch, position: int) -> str:
    if batch.magic >= 2:
        head = (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.count} "
                f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
                f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
                f"partitionLeaderEpoch: {batch.partition_leader_epoch} "
                f"isTransactional: {_java_bool(batch.is_transactional)} isControl: {_java_bool(batch.is_control)} "
                f"deleteHorizonMs: {_optional_long(batch.delete_horizon_ms)}")
    else:
        head = f"offset: {batch.offset_field}"   # a legacy batch's lastOffset() is its stored offset
    timestamp = batch.max_timestamp if batch.max_timestamp is not None else -1
    return (f"{head} position: {position} {batch.timestamp_type}: {timestamp} size: {batch.size} "
            f"magic: {batch.magic} compresscodec: {batch.codec} crc: {batch.crc} "
            f"isvalid: {_java_bool(batch.crc_valid)}")


def _string(data: bytes) -> str:
    # DumpLogSegments decodes keys and payloads with a StringDecoder (UTF-8, replacing bad bytes) and prints
    # them as they are; here what a terminal would act on, and a line end that would make a line of its own,
    # is escaped, the rest (backslashes too) left in Kafka's shape.
    return visible(data.decode("utf-8", errors="replace"), backslash=False)


def _decoded(data: bytes, decode: str) -> str:
    return _string(data) if decode in KAFKA_DECODER_MODES else bytes_text(data, decode)


def record_line(record: Record, batch: Batch, decode: str = "auto") -> str:
    key_size = -1 if record.key is None else len(record.key)
    value_size = -1 if record.value is None else len(record.value)
    timestamp = record.timestamp if record.timestamp is not None else -1
    line = (f"| offset: {record.offset} {batch.timestamp_type}: {timestamp} "
            f"keySize: {key_size} valueSize: {value_size}")
    if batch.magic >= 2:
        keys = ",".join(_string(key) for key, _ in record.headers)
        line += f" sequence: {record.sequence} headerKeys: [{keys}]"
    else:
        line += f" isValid: {_java_bool(bool(record.crc_valid))} crc: {record.crc}"
    if batch.is_control:
        marker = record.control
        if marker is not None and marker.type in ("ABORT", "COMMIT") and marker.coordinator_epoch is not None:
            line += f" endTxnMarker: {marker.type} coordinatorEpoch: {marker.coordinator_epoch}"
        elif marker is not None and (tokens := control_dumplog_tokens(marker)) is not None:
            line += tokens
        elif marker is not None:
            # `case controlType => print(s" controlType: $controlType($controlTypeId)")`: the enum's name, and
            # a type id this Kafka does not know is its UNKNOWN constant, printed "UNKNOWN(7)".
            name = "UNKNOWN" if marker.type.startswith("UNKNOWN") else marker.type
            line += f" controlType: {name}({marker.type_id})"
        return line
    if record.decoded is not None:
        if record.decoded.decoder == "remote":
            return line + remote_dumplog_tokens(record.decoded, record.offset)
        return line + dumplog_tokens(record.decoded, record.offset)
    # DecoderMessageParser: a null key or value prints no token at all.
    if record.key is not None:
        line += f" key: {_decoded(record.key, decode)}"
    if record.value is not None:
        line += f" payload: {_decoded(record.value, decode)}"
    return line


def finding_comment(finding: Finding) -> str:
    return f"# {finding.severity.value}: {finding_text(finding)}"


def trailing_line(invalid_bytes: int, path: str) -> str:
    return f"Found {invalid_bytes} invalid bytes at the end of {visible(path.rsplit('/', 1)[-1])}"


def non_consecutive_report(path: str, pairs: dict[int, int]) -> list[str]:
    """DumpLogSegments.main's report of record offsets that do not follow each other by one.

    Kafka 4.x's Java tool (org.apache.kafka.tools.DumpLogSegments) keys it by the file's absolute path and
    holds each file's pairs in a TreeMap from the previous offset, so they come out in that order.
    """
    lines = [f"Non-consecutive offsets in {visible(path if path == '-' else os.path.abspath(path))}"]
    lines += [f"  {first} is followed by {pairs[first]}" for first in sorted(pairs)]
    return lines


class DumplogSink:
    """kafka-dump-log.sh's lines; damage as '#' comment lines where it lies."""

    def __init__(self, out, *, records: bool, decode: str = "auto", err=None):
        self.out, self.records, self.decode = out, records, decode
        self.err = err or sys.stderr
        self.non_consecutive: dict[str, dict[int, int]] = {}
        self.not_kept: dict[str, int] = {}   # pairs past MAX_HELD, counted

    def begin(self, path: str, size: int) -> None:
        self.path = path
        self.last_end = 0
        self.last_offset = -1   # dumpLog's `lastOffset = new AtomicLong(-1L)`, per file
        for line in file_header(path):
            self.out.write(line + "\n")

    def batch(self, batch: Batch) -> None:
        self.out.write(batch_line(batch, batch.pos) + "\n")
        for finding in batch.findings:
            self.out.write(finding_comment(finding) + "\n")
        if self.records:
            for record in batch.records or []:
                # dumpBatchRecords: the first record too, against -1 (a segment not starting at 0, or a
                # compacted one, reports "-1 is followed by N").
                if record.offset != self.last_offset + 1:
                    pairs = self.non_consecutive.setdefault(self.path, {})
                    if len(pairs) < MAX_HELD:   # held to the end: a record-count bomb must not hold millions
                        pairs[self.last_offset] = record.offset
                    else:
                        self.not_kept[self.path] = self.not_kept.get(self.path, 0) + 1
                self.last_offset = record.offset
                self.out.write(record_line(record, batch, self.decode) + "\n")
        self.last_end = batch.pos + batch.size

    def region(self, finding: Finding, raw: bytes | None = None) -> None:
        self.out.write(finding_comment(finding) + "\n")

    def end(self, summary) -> None:
        trailing = summary.size - self.last_end
        if trailing > 0:
            self.out.write(trailing_line(trailing, self.path) + "\n")

    def unreadable(self, path: str, reason: str) -> None:
        pass   # Kafka's tool stops with an exception; kbatch said so on stderr and goes on

    def close(self) -> None:
        """After every file, as Kafka does: on stderr, so the dump on stdout stays line for line Kafka's."""
        self.out.flush()
        for path, pairs in self.non_consecutive.items():
            for line in non_consecutive_report(path, pairs):
                self.err.write(line + "\n")
            if path in self.not_kept:
                self.err.write(f"  (and {self.not_kept[path]} more after the first {MAX_HELD}: counted, not kept)\n")
