"""What a map shows, read from the log: a compact model of segments, partitions and a log directory.

Everything is read by kbatch's own readers (:class:`~kbatch.reading.reader.SegmentReader` for a segment,
:func:`~kbatch.partition.sidecars.read_sidecar` for the files beside it, :mod:`kbatch.ops.txn` for transactions,
:class:`~kbatch.partition.crosscheck.PartitionCheck` for what a partition's files say against its log) in one
pass per file, in the constant memory kbatch keeps everywhere.  What is kept is bounded by what a screen
shows: a segment of up to :data:`MAX_BLOCKS` batches keeps each one (with the fields of ``dump --format
jsonl``); a larger one keeps :data:`MAX_BLOCKS` bins of its bytes instead, each with what its batches add up
to.  A map of many segments shares :data:`PAGE_BLOCKS` among them, so that a log directory's page stays as
light as one segment's.  Index entries are kept the same way, as ticks or as counts per bin.

The model is plain data (dicts, lists, strings and numbers): :mod:`kbatch.map.draw` draws it, a test can
pin it as JSON.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from kbatch.files import kinds
from kbatch.files.inputs import topic_partition
from kbatch.format.codecs import Decompressor
from kbatch.format.findings import Finding
from kbatch.ops.txn import PartitionTransactions
from kbatch.output.jsonout import batch_dict
from kbatch.output.visible import shell_word
from kbatch.partition.crosscheck import CROSS_CHECK_CODES, PartitionCheck
from kbatch.partition.sidecars import Entry, read_sidecar
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader, load_records, open_input
from kbatch.walk.engine import each, entries

MODEL_VERSION = 1
MAX_BLOCKS = 1500          # batches drawn one by one; a segment of more is drawn as this many bins of its bytes
PAGE_BLOCKS = 60_000       # ... shared among the segments of one map, past 40 of them
MIN_BLOCKS = 16            # ... down to this many per segment
MAX_REGIONS = 1000         # damaged ranges kept per segment (the rest counted)
MAX_FINDINGS = 1000        # findings listed beside the picture (the rest counted by code)
MAX_TRANSACTIONS = 5000    # transaction spans kept per partition (the rest counted)
MAX_EPOCH_RUNS = 1000      # runs of one leader epoch kept per partition
MAX_LANE_SPANS = 1000      # spans kept per copy on a lane of kbatch map --replicas (the rest counted)

# The files beside a segment this map reads itself (the cross-checks read them again).
READ_HERE = frozenset({kinds.OFFSET_INDEX, kinds.TIME_INDEX, kinds.LEADER_EPOCH_CHECKPOINT})

# What a block can be coloured by: the choice's name -> what it says of a batch.
COLOR_CHOICES = ("codec", "magic", "producer", "kind", "damage")


def kind_of_batch(batch: Batch) -> str:
    """control, transactional, idempotent (a producer id without a transaction) or plain."""
    if batch.is_control:
        return "control"
    if batch.is_transactional:
        return "transactional"
    if batch.producer_id is not None and batch.producer_id >= 0:
        return "idempotent"
    return "plain"


def categories(batch: Batch) -> dict[str, str]:
    """The batch's value for each colour choice."""
    producer = batch.producer_id
    return {"codec": batch.codec, "magic": f"v{batch.magic}",
            "producer": str(producer) if producer is not None and producer >= 0 else "none",
            "kind": kind_of_batch(batch),
            "damage": "damaged" if batch.is_damaged or not batch.crc_valid else "intact"}


def _timestamp(batch: Batch) -> int | None:
    """The batch's largest timestamp (None for magic 0 and Kafka's 'no timestamp', -1)."""
    stamp = batch.max_timestamp
    return stamp if stamp is not None and stamp >= 0 else None


def _first_timestamp(batch: Batch) -> int | None:
    """The timestamp of the batch's first record: a v2 batch's baseTimestamp where its records keep their own
    (CreateTime); under LogAppendTime each record reads maxTimestamp (DefaultRecordBatch's iterator), and a v1
    message (or wrapper) has the one timestamp."""
    if batch.magic >= 2 and batch.timestamp_type == "CreateTime":
        stamp = batch.base_timestamp
        return stamp if stamp is not None and stamp >= 0 else None
    return _timestamp(batch)


def _count_in(totals, batch: Batch) -> int | None:
    """Count ``batch`` in ``totals`` (a bin or a segment: its batches, records, offset and timestamp range,
    from its first record's timestamp to its largest); the batch's largest timestamp."""
    totals.batches += 1
    totals.records += max(batch.count or 0, 0)
    totals.first_offset = batch.base_offset if totals.first_offset is None else min(totals.first_offset,
                                                                                     batch.base_offset)
    totals.last_offset = batch.last_offset if totals.last_offset is None else max(totals.last_offset,
                                                                                  batch.last_offset)
    stamp, first = _timestamp(batch), _first_timestamp(batch)
    if first is not None:
        totals.min_ts = first if totals.min_ts is None else min(totals.min_ts, first)
    if stamp is not None:
        totals.max_ts = stamp if totals.max_ts is None else max(totals.max_ts, stamp)
    return stamp


def dump_command(path: str, first: int, last: int) -> str:
    return f"kbatch dump --records --offset-range {first}:{last} {shell_word(path)}"


def hexdump_command(path: str, pos: int) -> str:
    return f"kbatch hexdump-annotate --position {pos} {shell_word(path)}"


@dataclass
class _Bin:
    """What the batches starting in one bin of a segment's bytes add up to (a bin starts with its first batch's
    offsets)."""

    first_offset: int
    last_offset: int
    batches: int = 0
    records: int = 0
    bytes: int = 0
    min_ts: int | None = None
    max_ts: int | None = None
    damaged: int = 0
    # per colour choice, the bytes of each value (the bin shows the value of most bytes)
    shares: dict[str, Counter] = field(default_factory=lambda: {choice: Counter() for choice in COLOR_CHOICES})

    def add(self, batch: Batch, said: dict[str, str]) -> None:
        _count_in(self, batch)
        self.bytes += batch.size
        self.damaged += said["damage"] == "damaged"
        for choice, value in said.items():
            self.shares[choice][value] += batch.size


class _Ticks:
    """An index's entries as ticks at file positions of the segment: each while they are few, else counts per
    bin (``bin_bytes`` wide)."""

    def __init__(self, bin_bytes: int, most: int):
        self.bin_bytes = bin_bytes
        self.most = most
        self.each: list[dict] | None = []
        self.per_bin: Counter = Counter()
        self.count = 0

    def add(self, pos: int, **fields) -> None:
        self.count += 1
        self.per_bin[pos // self.bin_bytes] += 1
        if self.each is not None:
            self.each.append({"pos": pos, **fields})
            if len(self.each) > self.most:
                self.each = None

    def as_list(self) -> list[dict]:
        if self.each is not None:
            return self.each
        return [{"pos": number * self.bin_bytes, "entries": count} for number, count in sorted(self.per_bin.items())]


class SegmentMap:
    """One segment, read once: its blocks, damaged ranges, index ticks, epochs and findings."""

    def __init__(self, path: str, ident: str, size: int, blocks: int = MAX_BLOCKS):
        self.path = path
        self.id = ident
        self.size = size
        self.most = blocks
        self.bin_bytes = max(1, -(-size // blocks))
        self.detail: list[dict] | None = []
        self.bins: dict[int, _Bin] = {}
        self.regions: list[dict] = []
        self.regions_left_off = 0
        self.batches = self.records = 0
        self.errors = 0
        self.first_offset = self.last_offset = self.min_ts = self.max_ts = None
        self.index = _Ticks(self.bin_bytes, blocks)
        self.timeindex = _Ticks(self.bin_bytes, blocks)

    def add_batch(self, batch: Batch) -> None:
        said = categories(batch)
        stamp = _count_in(self, batch)
        number = batch.pos // self.bin_bytes
        found = self.bins.get(number)
        if found is None:
            found = self.bins[number] = _Bin(batch.base_offset, batch.last_offset)
        found.add(batch, said)
        if self.detail is not None:
            if len(self.detail) >= self.most:
                self.detail = None   # more than a screen shows: the bins stand for them
                return
            fields = batch_dict(batch)
            fields["findings"] = [finding.code for finding in batch.findings]
            command = hexdump_command(self.path, batch.pos) if said["damage"] == "damaged" \
                else dump_command(self.path, batch.base_offset, batch.last_offset)
            self.detail.append({**said, "pos": batch.pos, "end": batch.pos + batch.size, "batches": 1,
                                "first_offset": batch.base_offset, "last_offset": batch.last_offset,
                                "min_ts": _first_timestamp(batch), "max_ts": stamp, "command": command,
                                "batch": fields})

    def add_region(self, finding: Finding) -> None:
        if len(self.regions) >= MAX_REGIONS:
            self.regions_left_off += 1
            return
        self.regions.append({"code": finding.code, "severity": finding.severity.value, "pos": finding.pos,
                             "end": finding.pos + finding.size, "actual": finding.actual,
                             "command": hexdump_command(self.path, finding.pos)})

    def blocks(self) -> list[dict]:
        if self.detail is not None:
            return self.detail
        out = []
        for number, b in sorted(self.bins.items()):
            start = number * self.bin_bytes
            dominant = {choice: shares.most_common(1)[0][0] for choice, shares in b.shares.items()}
            if b.damaged:
                dominant["damage"] = "damaged"
            out.append({**dominant, "pos": start, "end": min(start + self.bin_bytes, self.size),
                        "batches": b.batches, "records": b.records, "batch_bytes": b.bytes,
                        "damaged_batches": b.damaged, "first_offset": b.first_offset, "last_offset": b.last_offset,
                        "min_ts": b.min_ts, "max_ts": b.max_ts,
                        "mix": {choice: dict(shares.most_common(4)) for choice, shares in b.shares.items()},
                        "command": dump_command(self.path, b.first_offset, b.last_offset)})
        return out

    def as_dict(self) -> dict:
        return {"id": self.id, "path": self.path, "name": os.path.basename(self.path), "size": self.size,
                "base_offset": kinds.base_offset_of(self.path), "batches": self.batches, "records": self.records,
                "first_offset": self.first_offset, "last_offset": self.last_offset,
                "min_ts": self.min_ts, "max_ts": self.max_ts, "errors": self.errors,
                "binned": self.detail is None, "bin_bytes": self.bin_bytes if self.detail is None else None,
                "blocks": self.blocks(), "regions": self.regions, "regions_left_off": self.regions_left_off,
                "index": self.index.as_list(), "index_entries": self.index.count,
                "timeindex": self.timeindex.as_list(), "timeindex_entries": self.timeindex.count}


class _TimeTicks:
    """A .timeindex's entries put at the position of the batch holding their offset, as the walk passes it
    (both go up by offset: the file is read a window at a time alongside the log)."""

    def __init__(self, entries, ticks: _Ticks):
        self.entries = entries
        self.ticks = ticks
        self.pending: Entry | None = None

    def batch(self, batch: Batch) -> None:
        while True:
            if self.pending is None:
                self.pending = next(self.entries, None)
                if self.pending is None:
                    return
            offset = self.pending.fields["offset"]
            if offset is None or offset > batch.last_offset:
                return
            self.ticks.add(batch.pos, timestamp=self.pending.fields["timestamp"], offset=offset)
            self.pending = None

    def finish(self) -> None:
        """Read the rest of the file (entries past the log's last offset have no batch to stand at; what is
        wrong with the file is still reported)."""
        for _ in self.entries:
            pass


class MapGatherer:
    """Reads the inputs into the model: :meth:`add_partition` per partition (or lone segment), then
    :meth:`model`."""

    def __init__(self, decompressed_limit: int | None = None, blocks: int = MAX_BLOCKS):
        self.decompressed_limit = decompressed_limit
        self.blocks = blocks   # per segment
        self.decompressor = Decompressor(decompressed_limit) if decompressed_limit else Decompressor()
        self.partitions: list[dict] = []
        self.replicas: list[dict] = []   # kbatch map --replicas: each partition's copies as lanes (replica_lanes)
        self.findings: list[dict] = []
        self.findings_left_off: Counter = Counter()
        self.errors = 0
        self.unreadable: list[tuple[str, str]] = []
        self._partition_errors: dict[str, int] = {}   # damage found, by partition

    # -- findings ---------------------------------------------------------------------------------------

    def _finding(self, finding: Finding, path: str, partition: str, segment: str | None) -> None:
        self.errors += finding.is_damage
        self._partition_errors[partition] = self._partition_errors.get(partition, 0) + finding.is_damage
        if len(self.findings) >= MAX_FINDINGS:
            self.findings_left_off[finding.code] += 1
            return
        self.findings.append({"n": len(self.findings), "partition": partition, "segment": segment, "file": path,
                              "code": finding.code, "severity": finding.severity.value, "pos": finding.pos,
                              "size": finding.size, "entry_pos": finding.entry_pos, "field": finding.field,
                              "expected": finding.expected, "actual": finding.actual,
                              "command": hexdump_command(path, finding.entry_pos) if segment else None})

    # -- one partition ----------------------------------------------------------------------------------

    def add_partition(self, key: str, logs: list[str], name: str | None = None) -> None:
        """A partition directory (``key``) and the segments of it to read, or a lone segment (``key`` is it);
        ``name`` is how it is shown (else the directory's name, or the segment's path)."""
        ident = f"p{len(self.partitions)}"
        topic, number = topic_partition(logs[0])
        is_directory = topic is not None and os.path.isdir(key)
        txns = PartitionTransactions(topic or key, number, directory=key if is_directory else None)
        epochs: list[dict] = []
        segments = []
        for n, path in enumerate(logs):
            segment = self._segment(path, f"{ident}s{n}", ident, txns, epochs)
            if segment is not None:
                segments.append(segment)
        if not segments:
            return   # none could be read (each was reported)
        checkpoint_epochs = []
        if is_directory:
            checkpoint_epochs = self._checkpoint_epochs(key, ident)
            self._cross_check(key, ident, segments, logs)
        dicts = [segment.as_dict() for segment in segments]
        transactions = [_transaction(txn) for txn in txns.transactions[:MAX_TRANSACTIONS]]
        stamps = [stamp for segment in dicts for stamp in (segment["min_ts"], segment["max_ts"]) if stamp is not None]
        offsets = [offset for segment in dicts for offset in (segment["first_offset"], segment["last_offset"])
                   if offset is not None]
        self.partitions.append({
            "id": ident,
            "name": name if name is not None else os.path.basename(key.rstrip("/")) if is_directory else key,
            "path": key,
            "topic": topic, "partition": number, "size": sum(segment.size for segment in segments),
            "segment_count": len(segments), "batches": sum(segment.batches for segment in segments),
            "records": sum(segment.records for segment in segments),
            "errors": self._partition_errors.get(ident, 0),
            "first_offset": min(offsets, default=None), "last_offset": max(offsets, default=None),
            "min_ts": min(stamps, default=None), "max_ts": max(stamps, default=None),
            "segments": dicts, "boundaries": _boundaries(dicts), "epochs": epochs,
            "checkpoint_epochs": checkpoint_epochs, "transactions": transactions,
            "transactions_left_off": max(0, len(txns.transactions) - MAX_TRANSACTIONS),
            "last_stable_offset": txns.last_stable_offset,
        })

    def _segment(self, path: str, ident: str, partition: str, txns: PartitionTransactions,
                 epochs: list[dict]) -> SegmentMap | None:
        try:
            stream = open_input(path)   # a file, or stdin and pipes spooled; a device refused
        except (OSError, ValueError) as error:
            self.unreadable.append((path, getattr(error, "strerror", None) or str(error)))
            return None
        with stream:
            reader = SegmentReader(stream, ReadOptions())
            segment = SegmentMap(path, ident, reader.size, self.blocks)
            base = os.path.splitext(path)[0]
            self._offset_ticks(base + ".index", segment, partition)
            times = self._time_ticks(base + ".timeindex", segment, partition)

            def region(finding: Finding) -> None:
                if finding.owns_bytes:
                    segment.add_region(finding)
                segment.errors += finding.is_damage
                self._finding(finding, path, partition, ident)

            def batch(batch: Batch) -> None:
                segment.add_batch(batch)
                for finding in batch.findings:
                    segment.errors += finding.is_damage
                    self._finding(finding, path, partition, ident)
                if times is not None:
                    times.batch(batch)
                _epoch(epochs, batch)
                if batch.is_control and batch.magic >= 2 and batch.records is None:
                    # its marker says how its transaction ended (as kbatch txn reads it)
                    load_records(batch, reader.read_bytes(batch.payload_pos, batch.payload_size), self.decompressor)
                txns.add_batch(batch, path)

            try:
                each(entries(reader), batch, region)
                if times is not None:
                    times.finish()
            finally:
                if times is not None:
                    times.entries.close()
        return segment

    def _offset_ticks(self, path: str, segment: SegmentMap, partition: str) -> None:
        if not os.path.isfile(path):
            return
        with open(path, "rb") as stream:
            for item in read_sidecar(kinds.OFFSET_INDEX, stream, kinds.base_offset_of(path)):
                if isinstance(item, Finding):
                    self._finding(item, path, partition, None)
                elif isinstance(item, Entry):
                    for finding in item.findings:
                        self._finding(finding, path, partition, None)
                    segment.index.add(item.fields["position"], offset=item.fields["offset"])

    def _time_ticks(self, path: str, segment: SegmentMap, partition: str) -> _TimeTicks | None:
        if not os.path.isfile(path):
            return None
        stream = open(path, "rb")

        def entries():
            with stream:
                for item in read_sidecar(kinds.TIME_INDEX, stream, kinds.base_offset_of(path)):
                    if isinstance(item, Finding):
                        self._finding(item, path, partition, None)
                    elif isinstance(item, Entry):
                        for finding in item.findings:
                            self._finding(finding, path, partition, None)
                        yield item
        return _TimeTicks(entries(), segment.timeindex)

    def _checkpoint_epochs(self, directory: str, partition: str) -> list[dict]:
        path = os.path.join(directory, "leader-epoch-checkpoint")
        if not os.path.isfile(path):
            return []
        out = []
        with open(path, "rb") as stream:
            for item in read_sidecar(kinds.LEADER_EPOCH_CHECKPOINT, stream):
                if isinstance(item, Finding):
                    self._finding(item, path, partition, None)
                elif isinstance(item, Entry):
                    out.append({"epoch": item.fields["epoch"], "start_offset": item.fields["start_offset"]})
        return out

    def _cross_check(self, directory: str, partition: str, segments: list[SegmentMap], logs: list[str]) -> None:
        """What the partition's files say against its log, when every segment of it was read (kbatch.partition
        .crosscheck: indexes, .txnindex, snapshots, leader epochs, segment boundaries)."""
        from kbatch.partition.crosscheck import partition_files

        named = {os.path.normpath(path) for path in logs}
        if {os.path.normpath(files.log) for files in partition_files(directory)[0]} != named:
            return
        by_path = {os.path.normpath(segment.path): segment.id for segment in segments}
        for located in PartitionCheck(directory, decompressed_limit=self.decompressed_limit).run():
            if located.finding.code not in CROSS_CHECK_CODES and kinds.kind_of(located.path) in READ_HERE:
                continue   # a finding of the file on its own: reported as this map read it
            self._finding(located.finding, located.path, partition, by_path.get(os.path.normpath(located.path)))

    # -- the model --------------------------------------------------------------------------------------

    def model(self) -> dict:
        return {"kbatch_map": MODEL_VERSION, "color_choices": list(COLOR_CHOICES), "replicas": self.replicas,
                "blocks_per_segment": self.blocks, "partitions": self.partitions, "findings": self.findings,
                "findings_left_off": dict(sorted(self.findings_left_off.items())), "errors": self.errors,
                "unreadable": [{"file": path, "reason": reason} for path, reason in self.unreadable]}


def _epoch(runs: list[dict], batch: Batch) -> None:
    """Extend the partition's runs of one leader epoch with a batch (magic 2: v0/v1 carry no epoch)."""
    epoch = batch.partition_leader_epoch
    if epoch is None or epoch < 0:
        return
    if runs and runs[-1]["epoch"] == epoch:
        run = runs[-1]
        run["last_offset"] = max(run["last_offset"], batch.last_offset)
        return
    if len(runs) >= MAX_EPOCH_RUNS:
        return
    runs.append({"epoch": epoch, "first_offset": batch.base_offset, "last_offset": batch.last_offset})


def _boundaries(segments: list[dict]) -> list[dict]:
    """Between each segment and the next: offsets in neither (a gap, as compaction leaves) or in both (an
    overlap).  kbatch.partition.crosscheck reports them as findings; these are the bands drawn."""
    out = []
    read = [segment for segment in segments if segment["first_offset"] is not None]
    for before, after in zip(read, read[1:]):
        if after["first_offset"] > before["last_offset"] + 1:
            out.append({"kind": "gap", "from": before["last_offset"] + 1, "to": after["first_offset"] - 1,
                        "before": before["name"], "after": after["name"]})
        elif after["first_offset"] <= before["last_offset"]:
            out.append({"kind": "overlap", "from": after["first_offset"], "to": before["last_offset"],
                        "before": before["name"], "after": after["name"]})
    return out


def _transaction(txn) -> dict:
    end = txn.marker_offset if txn.marker_offset is not None else txn.last_offset
    return {"producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch, "first_offset": txn.first_offset,
            "last_offset": txn.last_offset, "end_offset": end, "outcome": txn.outcome, "records": txn.records,
            "batches": txn.batches, "first_timestamp": txn.first_timestamp, "marker_offset": txn.marker_offset,
            "empty": txn.empty, "marker_doubt": txn.marker_doubt, "file": txn.path}


def group_partitions(files: list[str]) -> list[tuple[str, list[str]]]:
    """The segments by partition: a partition directory (TOPIC-N) with its segments by base offset, or a lone
    segment on its own (as ``kbatch txn`` groups them)."""
    groups: dict[str, list[str]] = {}
    for path in files:
        key = os.path.dirname(path) if topic_partition(path)[0] is not None else path
        groups.setdefault(key, []).append(path)
    return [(key, sorted(logs, key=kinds.listing_order)) for key, logs in groups.items()]


def blocks_per_segment(segments: int) -> int:
    """The blocks each of so many segments is drawn with: MAX_BLOCKS, or its share of PAGE_BLOCKS."""
    return min(MAX_BLOCKS, max(MIN_BLOCKS, PAGE_BLOCKS // max(1, segments)))


def gather(files: list[str], decompressed_limit: int | None = None, names: dict[str, str] | None = None) -> MapGatherer:
    """Read the segment files (``*.log``) into a map's model; ``names`` says how a partition directory is shown
    (else by its name)."""
    gatherer = MapGatherer(decompressed_limit, blocks_per_segment(len(files)))
    for key, logs in group_partitions(files):
        gatherer.add_partition(key, logs, (names or {}).get(key))
    return gatherer


# -- the copies of a partition (kbatch map --replicas) -----------------------------------------------------

# What a span of a copy's lane says of the batches there, against the copy with the newest leader epoch (the one
# the others follow, kbatch.partition.replicas): held by it too but not by every copy; held here and not by it
# (what this copy loses when it truncates); damaged here.
LANE_STATES = ("held by some copies", "not the leader's", "damaged")


def lane_state(report, index: int, divergence) -> str | None:
    """What the batch at one divergence is on copy ``index``'s lane (None: the copy holds no such batch)."""
    if index in divergence.damaged:
        return "damaged"
    if index not in divergence.holders:
        return None
    if report.leader is not None and not divergence.held_by(report.leader):   # (removed whole by its cleaner: held)
        return "not the leader's"
    return "held by some copies"

def replica_segments(reports) -> tuple[list[str], dict[str, str]]:
    """The segments of every copy of ``reports`` (kbatch.ops.replicas.compare_all's), and the name each copy's
    partition is shown by (its log directory's, then the partition's)."""
    from kbatch.partition.replicas import segments

    files: list[str] = []
    names: dict[str, str] = {}
    for report in reports:
        for copy in report.copies:
            files += segments(copy.path)
            names[copy.path] = f"{copy.name}/{report.topic}-{report.partition}"
    return files, names


def files_beside(files: list[str]) -> list[str]:
    """The files a map reads besides the segments: every file of each partition directory (its indexes,
    snapshots and checkpoints)."""
    directories = sorted({os.path.dirname(path) or "." for path in files if topic_partition(path)[0] is not None})
    beside = []
    for directory in directories:
        try:
            beside += [os.path.join(directory, name) for name in os.listdir(directory)]
        except OSError:
            continue   # the segments' own errors say why
    return beside



def replica_lanes(report, ident: str) -> dict:
    """One partition's copies as lanes on one offset axis (kbatch.ops.replicas.compare's report): each copy's
    offsets, the spans where its batches are not every copy's (consecutive ones of one state merged), where it
    diverges from the leader's and the offset Kafka truncates it to."""
    names = [copy.name for copy in report.copies]
    if len(set(names)) < len(names):   # copies in log directories of one name: their paths tell them apart
        names = [copy.path for copy in report.copies]
    lanes, spans, left_off = [], [], 0
    for index, (copy, name) in enumerate(zip(report.copies, names)):
        lanes.append({"copy": name, "path": copy.path, "leader": index == report.leader,
                      "log_start_offset": copy.log_start_offset, "log_end_offset": copy.log_end_offset,
                      "high_watermark": copy.high_watermark, "latest_epoch": copy.latest_epoch,
                      "diverges_at": copy.diverges_at, "truncate_to": copy.truncate_to, "damaged": copy.damaged})
        mine: list[dict] = []
        for divergence in report.divergences:
            state = lane_state(report, index, divergence)
            if state is None:
                continue
            if mine and mine[-1]["state"] == state and divergence.base_offset <= mine[-1]["last_offset"] + 1:
                # the next batch of a run of one state (or a damaged batch met again, by another variant)
                if divergence.base_offset > mine[-1]["last_offset"]:
                    mine[-1]["batches"] += 1
                mine[-1]["last_offset"] = max(mine[-1]["last_offset"], divergence.last_offset)
            elif len(mine) < MAX_LANE_SPANS:
                mine.append({"copy": name, "state": state, "first_offset": divergence.base_offset,
                             "last_offset": divergence.last_offset, "batches": 1})
            else:
                left_off += 1
        spans += mine
    return {"id": ident, "name": f"{report.topic}-{report.partition}", "leader": None if report.leader is None
            else names[report.leader], "problems": list(report.problems), "lanes": lanes, "spans": spans,
            "spans_left_off": left_off}
