"""The scan report: per topic-partition, what the batches and findings tables add up to (kbatch.spark.tally)."""

from __future__ import annotations

import os
from collections import defaultdict, namedtuple
from dataclasses import dataclass, field
from functools import partial

from kbatch.files.inputs import segment_base_offset, topic_partition

# What the report says (its keys: kbatch.output.columns.SCAN, SCAN_PARTITION; kbatch.output.jsonout.scan_dict).


@dataclass
class Between:
    """Offsets missing (or held twice) between two consecutive segments: ``first`` to ``last``."""

    after: str
    before: str
    first: int
    last: int


@dataclass
class CrossChecks:
    """A partition's cross-check findings counted (scan --deep)."""

    errors: int = 0
    warnings: int = 0
    findings: dict[str, int] = field(default_factory=dict)


@dataclass
class PartitionReport:
    topic: str | None
    partition: int | None
    segments: int
    batches: int
    records: int
    bytes: int
    compression_ratio: float | None
    corrupt_batches: int
    damaged_segments: list[str]
    offset_gaps: list[Between]
    offset_overlaps: list[Between]
    first_offset: int | None
    last_offset: int | None
    first_timestamp: int | None
    last_timestamp: int | None
    producers: int
    producer_breaks: dict[str, int]       # how many times each of kbatch.ops.producers' rules broke, by its code
    open_transactions: list[int]
    # their last transaction ends at a marker whose CRC fails: committed or aborted, nobody can say
    unknown_outcome_transactions: list[int]
    cross_checks: CrossChecks | None


@dataclass
class ScanReport:
    out: str
    tables: list[str]
    segments: int
    bytes: int
    partitions: list[PartitionReport]

    @property
    def damaged_segments(self) -> list[str]:
        return sorted({path for partition in self.partitions for path in partition.damaged_segments})

    @property
    def failed_cross_checks(self) -> list[str]:
        """The partitions (TOPIC-N) whose cross-checks found damage."""
        return [f"{partition.topic}-{partition.partition}" for partition in self.partitions
                if partition.cross_checks and partition.cross_checks.errors]


def partition_report(sums: dict, sizes: dict[str, int], cross_checked=(), batches=None) -> list[PartitionReport]:
    """One report per topic-partition, from what the tables add up to (``sums``: kbatch.spark.tally.merged);
    ``sizes`` are the segments' file sizes (damaged bytes included). ``batches()`` is the batches table as a
    DataFrame, for the producers' rules (replayed on Spark), read only where a partition has a producer.

    ``cross_checked`` are the partition directories whose other files were held against the segments:
    their findings (the cross-check codes, or any finding about a file that is no segment) are counted
    apart, as ``cross_checks``, and do not make a segment damaged.
    """
    from kbatch.partition.crosscheck import CROSS_CHECK_CODES

    per_file = _rows(sums["files"])
    # Findings beside the segments (a cross-check's code, or a file that is no segment) go to the cross-checks; an
    # error about a segment makes it damaged.
    checks: dict[tuple, CrossChecks] = defaultdict(CrossChecks)
    damage: dict[str, int] = defaultdict(int)   # errors per segment
    for row in _rows(sums["findings"]):
        if row.code in CROSS_CHECK_CODES or row.file not in sizes:
            entry = checks[(row.topic, row.partition)]
            entry.findings[row.code] = entry.findings.get(row.code, 0) + row.findings
            entry.errors += row.findings if row.severity == "error" else 0
            entry.warnings += row.findings if row.severity == "warning" else 0
        elif row.severity == "error" and row.code != "split-handover":
            damage[row.file] += row.findings
    checked = {topic_partition(os.path.join(directory, "x")) for directory in cross_checked}

    producers, open_transactions, unknown_transactions = transactions(_rows(sums["producers"]))
    # Only an idempotent producer's batches (producer_id >= 0) can break a rule (PartitionProducers.add_batch):
    # where there are none, the replay is not run.
    breaks = producer_breaks(batches()) if batches is not None and any(producers.values()) else {}

    files = defaultdict(list)
    for row in per_file:
        files[(row.topic, row.partition)].append(row)
    seen = {row.file for row in per_file}
    unreadable = defaultdict(list)   # segments with no readable batch at all still count
    for path in sizes:
        if path not in seen:
            files[topic_partition(path)].append(None)
            unreadable[topic_partition(path)].append(path)
    corrupt = {row.file: row.corrupt_batches for row in per_file}
    report = []
    for (topic, partition), rows in sorted(files.items(), key=lambda item: (str(item[0][0]), item[0][1] or -1)):
        real = [row for row in rows if row is not None]
        # (the file last: files that are not a partition's segments, named as no base offset, in one order)
        segments = sorted(real, key=lambda row: (segment_base_offset(row.file) or 0, row.first_offset or 0, row.file))
        gaps, overlaps = _between_segments(segments)
        paths = [row.file for row in real] + unreadable[(topic, partition)]
        inflated = sum(row.inflated_bytes or 0 for row in real)
        deflated = sum(row.compressed_bytes or 0 for row in real)
        damaged_files = sorted(path for path in paths if damage.get(path) or corrupt.get(path))
        report.append(PartitionReport(
            topic=topic, partition=partition, segments=len(rows),
            batches=sum(row.batches for row in real), records=sum(row.records or 0 for row in real),
            bytes=sum(sizes.get(path, 0) for path in paths),
            compression_ratio=round(inflated / deflated, 3) if deflated and inflated else None,
            corrupt_batches=sum(row.corrupt_batches or 0 for row in real),
            damaged_segments=damaged_files,
            offset_gaps=gaps, offset_overlaps=overlaps,
            first_offset=min((row.first_offset for row in real if row.first_offset is not None), default=None),
            last_offset=max((row.last_offset for row in real if row.last_offset is not None), default=None),
            first_timestamp=min((row.first_timestamp for row in real if row.first_timestamp is not None),
                                default=None),
            last_timestamp=max((row.last_timestamp for row in real if row.last_timestamp is not None),
                               default=None),
            producers=producers.get((topic, partition), 0),
            producer_breaks=dict(sorted(breaks.get((topic, partition), {}).items())),
            open_transactions=sorted(open_transactions.get((topic, partition), [])),
            unknown_outcome_transactions=sorted(unknown_transactions.get((topic, partition), [])),
            cross_checks=checks[(topic, partition)] if (topic, partition) in checked else None,
        ))
    return report


def _rows(table) -> list:
    """The rows of an Arrow ``table`` as namedtuples of its columns (a part of kbatch.spark.tally's sums)."""
    named = namedtuple("Summed", table.column_names)   # type: ignore[misc]
    return [named._make(values) for values in zip(*(column.to_pylist() for column in table.columns))]


def transactions(producers: list) -> tuple[dict, dict, dict]:
    """Per topic-partition, from each producer's sums (kbatch.spark.tally.PARTS["producers"]): how many producers
    (ids >= 0), and the producer ids of transactions left open (data after the last marker, or no marker) and of
    unknown outcome (ended by a marker whose CRC fails, after the producer's last data).

    A marker whose CRC fails is never believed (kbatch.reading.markers): it ends its transaction, outcome unknown.
    """
    counted: dict[tuple, int] = defaultdict(int)
    left_open: dict[tuple, list] = defaultdict(list)
    unknown: dict[tuple, list] = defaultdict(list)
    for row in producers:
        key = (row.topic, row.partition)
        counted[key] += row.producer_id is not None and row.producer_id >= 0
        if not row.transactional or row.last_data is None or row.producer_id is None:
            continue   # (a transaction's batch of no producer id: damage, each of its own)
        ends = [end for end in (row.last_marker, row.last_doubted) if end is not None]
        ended = max(ends, default=None)
        if ended is None or ended < row.last_data:
            left_open[key].append(row.producer_id)
        elif row.last_doubted is not None and row.last_doubted == ended and row.last_data < row.last_doubted:
            unknown[key].append(row.producer_id)
    return counted, left_open, unknown


# What a batch row of scan's batches table holds of a Batch's header: (column, Batch field) where the column
# declaration reads the field (kbatch.output.columns: "batch.computed_crc" for crc_computed, ...).
def _header_columns() -> dict[str, str]:
    from kbatch.output.columns import SPARK_BATCHES
    from kbatch.reading.model import HEADER_FIELDS

    return {column.name: column.read.removeprefix("batch.") for column in SPARK_BATCHES
            if column.read.removeprefix("batch.") in HEADER_FIELDS}


def producer_breaks(batches) -> dict[tuple, dict[str, int]]:
    """kbatch.ops.producers' rules on the batches table: per topic-partition, how many times each broke.

    Each partition's batches are replayed in log order (segment by segment, by file position; a segment's name
    is its base offset, zero-padded, so name order is log order) on a Spark worker, from their header fields:
    the sequence and epoch rules, and a gap as wide as the offsets removed between (compaction) forgiven, as
    ``kbatch producers`` holds them. Duplicates need the records' payloads, which the batches table does not
    hold: ``kbatch producers`` finds those. A worker holds one partition's producers at a time.
    """
    from pyspark.sql import functions as F

    header = _header_columns()
    rows = (batches.select("topic", "partition", "file", "damaged", *header)
            .withColumn("segment", F.element_at(F.split("file", "/"), -1))
            .repartition("topic", "partition")
            .sortWithinPartitions("topic", "partition", "segment", "file", "pos"))
    found: dict[tuple, dict[str, int]] = defaultdict(dict)
    for row in rows.mapInArrow(partial(_replay_partitions, header), _BREAKS_SCHEMA).collect():
        found[(row.topic, row.partition)][row.code] = row.breaks
    return found


_BREAKS_SCHEMA = "topic string, partition int, code string, breaks long"


def _replay_partitions(header: dict[str, str], record_batches):
    """Rows of the batches table (Arrow record batches), each partition's together and in log order, through a
    PartitionProducers per partition; a row per rule broken per partition.

    Runs on a Spark worker."""
    from kbatch.ops.producers import PartitionProducers
    from kbatch.reading.model import Batch

    key: tuple = ()
    view = None
    for record_batch in record_batches:
        for row in record_batch.to_pylist():
            if view is None or (row["topic"], row["partition"]) != key:
                if view is not None:
                    yield _broken(key, view)
                key = (row["topic"], row["partition"])
                view = PartitionProducers(f"{key[0]}-{key[1]}")
            if not row["damaged"]:   # (as PartitionProducers.add_batch passes a damaged batch by)
                view.add_batch(Batch(**{field: row[column] for column, field in header.items()}), row["file"])
    if view is not None:
        yield _broken(key, view)


def _broken(key: tuple, view):
    """How many times each rule broke in a partition, as an Arrow record batch of _BREAKS_SCHEMA's rows."""
    from collections import Counter

    import pyarrow as pa

    codes = Counter(finding.code for _, finding, _ in view.breaks)
    return pa.RecordBatch.from_pydict({
        "topic": pa.array([key[0]] * len(codes), pa.string()), "partition": pa.array([key[1]] * len(codes), pa.int32()),
        "code": pa.array(list(codes), pa.string()), "breaks": pa.array(list(codes.values()), pa.int64())})


def _between_segments(segments) -> tuple[list[Between], list[Between]]:
    """Offsets missing (or held twice) between consecutive segments of a partition."""
    gaps: list[Between] = []
    overlaps: list[Between] = []
    for previous, current in zip(segments, segments[1:]):
        if previous.last_offset is None or current.first_offset is None:
            continue
        if current.first_offset > previous.last_offset + 1:
            gaps.append(Between(previous.file, current.file, previous.last_offset + 1, current.first_offset - 1))
        elif current.first_offset <= previous.last_offset:
            overlaps.append(Between(previous.file, current.file, current.first_offset, previous.last_offset))
    return gaps, overlaps


def cross_check_rows(directory: str) -> list[tuple]:
    """The cross-check findings of one partition directory as rows of scan's findings table.

    Runs on a Spark worker: one task per partition directory.
    """
    from kbatch.output.jsonout import finding_dict
    from kbatch.partition.crosscheck import PartitionCheck
    from kbatch.output import columns

    # The table's columns after file, topic and partition; those a finding does not have (the offsets of
    # the batch it lies in) are null.
    names = columns.names(columns.SPARK_FINDINGS[len(columns.LOCATION):])
    rows = []
    for located in PartitionCheck(directory, segments_verified=True).run():   # scan --deep verifies the segments
        row = finding_dict(located.finding)
        rows.append((located.path, *topic_partition(located.path), *(row.get(name) for name in names)))
    return rows
