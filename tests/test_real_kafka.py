"""kbatch held to a real Kafka: a KRaft broker from Maven Central writes the log directories, and Kafka's
own tools read kbatch's outputs (tests/real_kafka.py starts it; the ``real_kafka`` fixture in conftest.py).

What the broker wrote is healthy by definition: any error or warning kbatch reports on it is a false alarm.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import struct
from pathlib import Path

import pytest

pytestmark = pytest.mark.real_kafka

# The decoder option kafka-dump-log.sh needs for each internal topic (kbatch picks its decoder by the name).
DECODERS = {"__consumer_offsets": "--offsets-decoder", "__transaction_state": "--transaction-log-decoder",
            "__cluster_metadata": "--cluster-metadata-decoder", "__share_group_state": "--share-group-state-decoder",
            "__remote_log_metadata": "--remote-log-metadata-decoder"}
SIDE_FILES = ("*.log", "*.index", "*.timeindex", "*.txnindex", "*.snapshot", "*.checkpoint")


def _findings(kbatch, *args: str, expect: int) -> list[dict]:
    """verify-crc --deep's findings on ``args``, once its exit status is the one expected."""
    result = kbatch("verify-crc", "--deep", "--format", "jsonl", *args)
    lines = [json.loads(line) for line in result.out.splitlines()]
    findings = [line for line in lines if line["type"] == "finding"]
    assert result.code == expect, [f"{f['file']}: {f['severity']} {f['code']}" for f in findings
                                   if f["severity"] != "info"] or result.err
    return findings


@pytest.mark.parametrize("copy", ["live", "stopped"])
def test_a_healthy_log_directory_has_no_error_and_no_warning(real_kafka, kbatch, copy):
    """Every partition the workload made (codecs, transactions, rolled and compacted segments, an idle one,
    the internal topics) and the log directory's checkpoints, copied while the broker ran and after it
    stopped cleanly."""
    findings = _findings(kbatch, str(getattr(real_kafka, copy)), expect=0)
    alarms = [f"{f['file']}: {f['severity']} {f['code']} {f['field']}: expected {f['expected']}, found {f['actual']}"
              for f in findings if f["severity"] != "info"]
    assert not alarms, "\n".join(alarms)
    # Information is what a running broker leaves: the active segments' preallocated indexes (and, after a
    # clean shutdown, none), and the gaps the cleaner left.
    assert {f["code"] for f in findings} <= {"zero-tail", "offset-gap", "segment-gap"}


def _partition_files(log_dir: Path) -> dict[str | None, list[Path]]:
    """Every file kafka-dump-log.sh reads, grouped by the decoder option its topic needs."""
    groups: dict[str | None, list[Path]] = {}
    for partition in sorted(path for path in log_dir.iterdir() if path.is_dir()):
        topic = partition.name.rsplit("-", 1)[0]
        files = sorted(path for pattern in SIDE_FILES for path in partition.glob(pattern))
        groups.setdefault(DECODERS.get(topic), []).extend(files)
    return groups


# Where kbatch's --format dumplog knowingly differs from Kafka 4.x's DumpLogSegments, and why: a line of
# either dump ("-" Kafka's, "+" kbatch's) matching a pattern is not held against it.
KNOWN_DIFFERENCES: list[tuple[str, str]] = [
    (r"^\+# info: ", "kbatch's own comment lines: what it noticed that is no damage (a preallocated index's "
                     "zero tail, an offset gap), which Kafka's tool does not say"),
]


def _dumps(broker, kbatch, files: list[Path], decoder: str | None) -> tuple[list[str], list[str]]:
    options = ["--deep-iteration", "--print-data-log", *([decoder] if decoder else [])]
    kafka = broker.dump_log_segments(*options, "--files", ",".join(map(str, files)))
    result = kbatch("dump", "--format", "dumplog", "--records", *map(str, files), expect=0)   # a broker's files
    return kafka.splitlines(), result.out.splitlines()


def _by_file(lines: list[str]) -> dict[str, list[str]]:
    """A dump of several files, cut at each 'Dumping PATH' line."""
    files: dict[str, list[str]] = {}
    current: list[str] = []
    for line in lines:
        if line.startswith("Dumping "):
            current = files.setdefault(line.removeprefix("Dumping "), [])
        current.append(line)
    return files


def _dumplog_differences(broker, kbatch, log_dir: Path, known: list[tuple[str, str]],
                         wording: list[tuple[str, str, str]] = ()) -> list[str]:
    """Where `kbatch dump --format dumplog --records` and the broker's own `kafka-dump-log.sh --deep-iteration
    --print-data-log` (with the internal topics' decoders) disagree on a file of the log directory, once the
    known differences are set aside and the release's own wording of Kafka's lines put in the later one."""
    differences = []
    for decoder, files in _partition_files(log_dir).items():
        kafka, ours = (_by_file(lines) for lines in _dumps(broker, kbatch, files, decoder))
        assert list(kafka) == list(ours)
        for path in kafka:
            theirs = kafka[path]
            for pattern, later, _ in wording:
                theirs = [re.sub(pattern, later, line) for line in theirs]
            diff = [line for line in difflib.unified_diff(theirs, ours[path], "kafka", "kbatch", n=0, lineterm="")
                    if line[:1] in "+-" and line[:3] not in ("+++", "---")]
            diff = [line for line in diff if not any(re.search(pattern, line) for pattern, _ in known)]
            if diff:
                differences.append(f"{path}:\n" + "\n".join(diff[:6]))
    return differences


def test_dumplog_agrees_with_kafka_dump_log_on_every_file(real_kafka, kbatch):
    """`kbatch dump --format dumplog --records` against `kafka-dump-log.sh --deep-iteration --print-data-log`
    (with the internal topics' decoders), line for line, on every segment, index, snapshot and KRaft
    snapshot of the stopped broker's log directory."""
    differences = _dumplog_differences(real_kafka.broker, kbatch, real_kafka.stopped, KNOWN_DIFFERENCES)
    assert not differences, "\n".join(differences)


def test_kafka_reads_what_kbatch_encodes_and_salvages(real_kafka, kbatch, tmp_path):
    """encode-from-json of a dump of the broker's segments, and salvage of a damaged copy, are read by
    DumpLogSegments --deep-iteration without error, record for record as the original."""
    source = real_kafka.stopped / "codec-zstd-0" / "00000000000000000000.log"
    document = tmp_path / "dump.json"
    document.write_text(kbatch("dump", "--records", "--format", "json", str(source)).out)
    encoded = tmp_path / "00000000000000000000.log"
    assert kbatch("encode-from-json", str(document), "-o", str(encoded)).code == 0
    assert encoded.read_bytes() == source.read_bytes()

    damaged = tmp_path / "damaged" / "00000000000000000000.log"
    damaged.parent.mkdir()
    salvaged = tmp_path / "salvaged" / "00000000000000000000.log"
    salvaged.parent.mkdir()
    starts = _batch_starts(source.read_bytes())
    # A flipped bit in batch 3's records (under its CRC), one in batch 6's baseOffset (outside any CRC: it
    # breaks the offset sequence its neighbours agree on), and a tail cut short.
    for where, bit in ((starts[3] + 70, 0x40), (starts[6] + 3, 0x01)):
        data = bytearray(source.read_bytes())
        data[where] ^= bit
        damaged.write_bytes(bytes(data[:-7]))
        assert kbatch("salvage", str(damaged), "-o", str(salvaged)).code == 1
        _kafka_reads_cleanly(real_kafka, salvaged)
        assert kbatch("verify-crc", "--deep", str(salvaged)).code == 0

    # A lying length field (the second batch's, 3 too large: its CRC proves the true one) and a cut tail.
    lying = bytearray(source.read_bytes())
    second = 12 + struct.unpack_from(">i", lying, 8)[0]
    struct.pack_into(">i", lying, second + 8, struct.unpack_from(">i", lying, second + 8)[0] + 3)
    damaged.write_bytes(bytes(lying[:-5]))
    repaired = tmp_path / "repaired" / "00000000000000000000.log"
    repaired.parent.mkdir()
    assert kbatch("repair-length", str(damaged), "-o", str(repaired), "--apply", "--truncate-tail").code == 0
    _kafka_reads_cleanly(real_kafka, repaired)

    # stats --what-if: the same records in each layout Kafka has (magic 0, 1, 2; v3 is kbatch's proposal).
    layouts = tmp_path / "layouts"
    assert kbatch("stats", "--what-if", "--write-layouts", str(layouts), str(source)).code == 0
    for magic in (0, 1, 2):
        (written,) = layouts.glob(f"*.v{magic}.log")
        _kafka_reads_cleanly(real_kafka, written)


def _batch_starts(data: bytes) -> list[int]:
    """Where each entry of a healthy segment starts (each is 12 bytes and its length field long)."""
    starts, pos = [], 0
    while pos + 12 <= len(data):
        starts.append(pos)
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    return starts


def _kafka_reads_cleanly(real_kafka, path: Path) -> None:
    """DumpLogSegments --deep-iteration reads every batch and record of the file, with no complaint."""
    segment = path if path.name.endswith("0.log") and path.stem.isdigit() else path.with_name(f"{0:020d}.log")
    if segment != path:
        shutil.copyfile(path, segment)
    dump = real_kafka.broker.dump_log_segments("--deep-iteration", "--files", str(segment))
    assert "isvalid: false" not in dump and "invalid bytes" not in dump and "Exception" not in dump, dump[-2000:]
    assert "offset: " in dump   # a batch (magic 2) or a message (magic 0 and 1) was read


def test_txn_agrees_with_kafka_transactions(real_kafka, kbatch):
    """kbatch txn on the log directory and kafka-transactions.sh on the live broker: the producer that
    left its transaction open (txn-b), its producer id and epoch, and nothing hanging. (The workload leaves a
    second one open, txn-pinned's, for kbatch retention: tests/test_retention.py.)"""
    result = kbatch("txn", "--format", "jsonl", str(real_kafka.live), expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    open_ones = [line for line in lines if line["type"] == "transaction" and line["outcome"] == "OPEN"]
    assert sorted(line["transactional_id"] for line in open_ones) == ["txn-b", "txn-pinned"]
    (ours,) = [line for line in open_ones if line["transactional_id"] == "txn-b"]
    # TransactionsCommand describe: a header row, then CoordinatorId, TransactionalId, ProducerId,
    # ProducerEpoch, TransactionState, ... in columns.
    header, row = [line.split() for line in real_kafka.transactions.strip().splitlines()[:2]]
    theirs = dict(zip(header, row))
    assert theirs["TransactionalId"] == "txn-b" == ours["transactional_id"]
    assert int(theirs["ProducerId"]) == ours["producer_id"] and int(theirs["ProducerEpoch"]) == ours["producer_epoch"]
    assert theirs["TransactionState"] == "Ongoing" and not ours["hanging"]
    # find-hanging prints its column names and a row per hanging transaction: none; kbatch finds none either.
    assert real_kafka.hanging.strip().splitlines()[1:] == []
    assert not any(line.get("hanging") for line in lines if line["type"] == "transaction")


def _flip_a_record_bit(data: bytearray) -> list[str]:
    data[_batch_starts(bytes(data))[3] + 70] ^= 0x10      # inside batch 3's records, under its CRC
    return ["salvage"]


def _lie_about_a_length(data: bytearray) -> list[str]:
    second = _batch_starts(bytes(data))[1]
    struct.pack_into(">i", data, second + 8, struct.unpack_from(">i", data, second + 8)[0] + 3)
    return ["repair-length", "--apply", "--truncate-tail"]


@pytest.mark.parametrize("damage", [_flip_a_record_bit, _lie_about_a_length], ids=["salvage", "repair-length"])
def test_the_broker_loads_a_mended_segment_and_serves_every_record_kbatch_kept(real_kafka, kbatch, tmp_path, damage):
    """The broker as the judge of a repair: a segment damaged (a flipped bit in a batch, or a length field
    that lies, and a tail cut short), mended by salvage or repair-length, put back in place of the original
    with its indexes removed (Kafka rebuilds them), and the broker restarted as after a crash (so it
    recovers the segment, LogSegment.recover, and would truncate at the first batch it cannot read). It
    must load it without a word of damage, and a consumer must read back exactly the records kbatch kept."""
    from kafka import KafkaConsumer, TopicPartition

    from .real_kafka import Broker

    home = tmp_path / "broker"
    shutil.copytree(real_kafka.stopped, home / "logs")
    segment = home / "logs" / "codec-none-0" / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    command = damage(data)
    damaged = tmp_path / "damaged.log"
    damaged.write_bytes(bytes(data[:-9]))
    mended = tmp_path / "mended.log"
    assert kbatch(*command, str(damaged), "-o", str(mended)).code in (0, 1)
    text = lambda field: field and field["utf8"]   # noqa: E731  (JSON carries {"utf8": ...} under --decode utf8)
    kept = [(record["offset"], text(record["key"]), text(record["value"]))
            for line in kbatch("dump", "--records", "--format", "jsonl", "--decode", "utf8", str(mended)).out.splitlines()
            for batch in [json.loads(line)] if batch["type"] == "batch" for record in batch["records"]]
    assert 0 < len(kept) < 200      # the batch cut short at the end is gone either way
    shutil.copyfile(mended, segment)
    for stale in ("00000000000000000000.index", "00000000000000000000.timeindex"):
        (segment.parent / stale).unlink()
    (home / "logs" / ".kafka_cleanshutdown").unlink(missing_ok=True)
    # Recover from offset 0: the recovery point says where the last flush was.
    checkpoint = home / "logs" / "recovery-point-offset-checkpoint"
    checkpoint.write_text(re.sub(r"^codec-none 0 \d+$", "codec-none 0 0", checkpoint.read_text(), flags=re.M))

    broker = Broker(real_kafka.broker.jars, home, classes=real_kafka.broker.classes)
    broker.start()
    try:
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                 enable_auto_commit=False, consumer_timeout_ms=10000)
        partition = TopicPartition("codec-none", 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        read = []
        for message in consumer:
            read.append((message.offset, message.key and message.key.decode(), message.value.decode()))
            if len(read) == len(kept):
                break
        consumer.close()
    finally:
        broker.stop()
    log = broker.server_log.read_text(errors="replace")
    assert not re.search(r"Found invalid messages|[Cc]orrupt|Truncating .*codec-none", log), broker.log_tail()
    assert read == kept


def _records(kbatch, *args: str, expect: int) -> list[dict]:
    result = kbatch("dump", "--records", "--format", "jsonl", "--decode", "utf8", *args, expect=expect)
    return [record for line in result.out.splitlines() for batch in [json.loads(line)]
                         if batch["type"] == "batch" for record in batch["records"]]


@pytest.mark.parametrize("copy", ["live", "stopped"])
def test_the_cleaner_removed_the_aborted_records_and_kept_the_marker(real_kafka, kbatch, copy):
    """What the healthy-directory test holds clean includes a compacted partition whose aborted transaction's
    records the cleaner removed while it kept the ABORT marker (Cleaner, CleanedTransactionMetadata)."""
    partition = getattr(real_kafka, copy) / "compacted-txn-0"
    records = _records(kbatch, str(partition), expect=0)
    values = [record["value"]["utf8"] for record in records if record["control"] is None and record["value"]]
    markers = [record["control"]["type"] for record in records if record["control"] is not None]
    assert values and not [value for value in values if value.startswith("aborted")]
    assert "ABORT" in markers and "COMMIT" in markers
    findings = _findings(kbatch, str(partition), expect=0)
    assert [f for f in findings if f["severity"] != "info"] == []


def test_what_a_consumer_is_given_starts_at_the_log_start_offset_deleterecords_moved(real_kafka, kbatch):
    """DeleteRecords to 25 in the batch of offsets 20-29 of trimmed-0's only segment: the broker keeps records 0-24
    in it and records the log start offset in log-start-offset-checkpoint; a consumer is given 25-99."""
    stopped = real_kafka.stopped
    assert re.search(r"^trimmed 0 25$", (stopped / "log-start-offset-checkpoint").read_text(), re.M)
    partition = stopped / "trimmed-0"
    every = _records(kbatch, str(partition), expect=0)
    assert [record["offset"] for record in every] == list(range(100))
    assert [record["offset"] for record in every if record.get("below_log_start")] == list(range(25))
    for isolation in ("read_committed", "read_uncommitted"):
        given = _records(kbatch, "--isolation", isolation, str(partition), expect=0)
        assert [record["offset"] for record in given] == list(range(25, 100))
    result = kbatch("grep", "--isolation", "read_committed", "-c", "", str(partition))
    assert result.code == 0 and result.out.split(":")[-1].strip() == "75"


def test_a_deleted_topic_reloaded_by_a_restarted_broker_verifies_clean(real_kafka, kbatch, tmp_path):
    """The broker restarted with doomed-0.<id>-delete still there loads it recovering nothing (LogLoader.load:
    next offset 0) and empties its leader-epoch-checkpoint (truncateFromEnd(0)): no epoch-missing."""
    from .real_kafka import Broker

    home = tmp_path / "broker"
    shutil.copytree(real_kafka.stopped, home / "logs")
    broker = Broker(real_kafka.broker.jars, home, classes=real_kafka.broker.classes)
    broker.start()
    broker.stop()
    (deleted,) = (home / "logs").glob("doomed-0.*-delete")
    assert (deleted / "leader-epoch-checkpoint").read_text().splitlines() == ["0", "0"]
    (before,) = real_kafka.stopped.glob("doomed-0.*-delete")
    assert (before / "leader-epoch-checkpoint").read_text().splitlines()[1] != "0"   # it had entries
    findings = _findings(kbatch, str(deleted), expect=0)
    alarms = [f"{f['file']}: {f['code']}: expected {f['expected']}, found {f['actual']}" for f in findings
              if f["severity"] != "info"]
    assert not alarms, "\n".join(alarms)


# -- a Kafka 4.0 broker's share-group records (the ``real_kafka_40`` fixture) ------------------------------
# Kafka 4.1 changed ShareGroupMetadataValue, ShareSnapshotValue and ShareUpdateValue in place (version 0 both
# times); kbatch reads what a 4.0 broker wrote with 4.0's layout and says so.
LAYOUTS_CHANGED_AFTER_40 = {"ShareGroupMetadataValue", "ShareSnapshotValue", "ShareUpdateValue"}


def _share_group_partitions(log_dir: Path) -> list[str]:
    return [str(path) for topic in ("__share_group_state", "__consumer_offsets")
            for path in sorted(log_dir.glob(f"{topic}-*"))]


def test_a_40_brokers_share_group_records_read_with_40s_layout(real_kafka_40, kbatch):
    """`dump --records` of what a 4.0 broker's share coordinator and group coordinator wrote: every
    ShareSnapshotValue, ShareUpdateValue and ShareGroupMetadataValue read with the 4.0 layout, nothing found
    amiss; `verify-crc --deep` of its whole log directory clean. Read as 4.1+ wrote them, they are damaged."""
    partitions = _share_group_partitions(real_kafka_40.log_dir)
    result = kbatch("dump", "--records", "--format", "jsonl", *partitions)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert result.code == 0
    assert [line for line in lines if line.get("findings")] == []
    values = [record["decoded"]["value"] for line in lines if line["type"] == "batch"
              for record in line["records"] if record["decoded"]["value"]]
    changed = [value for value in values if value["name"] in LAYOUTS_CHANGED_AFTER_40]
    assert {value["name"] for value in changed} == LAYOUTS_CHANGED_AFTER_40
    assert {value["layout"] for value in changed} == {"4.0"}
    # The workload's explicit acknowledgements, as the share coordinator recorded them: accepted (2),
    # rejected (4) and released (0: available again) batches of the share partition's state.
    states = {batch["deliveryState"] for value in changed if value["name"] == "ShareUpdateValue"
              for batch in value["data"]["stateBatches"]}
    assert states == {0, 2, 4}

    assert _findings(kbatch, str(real_kafka_40.log_dir), expect=0) == []
    # The layout that came after 4.0 does not read them: the test holds bytes only 4.0's layout fits.
    assert kbatch("verify-crc", "--deep", "--kafka-version", "4.1", *partitions).code == 1


# Kafka 4.0's DumpLogSegments words a line otherwise than the later releases' tool kbatch follows: its
# line rewritten by the pattern into the later wording before the comparison.
KAFKA_40_WORDING: list[tuple[str, str, str]] = [
    (r'( payload: \{)"type":("\d+","data":)', r'\1"version":\2',
     "__share_group_state's value version, labelled \"type\" by 4.0 (DumpLogSegments.scala, "
     "ShareGroupStateMessageParser.jsonString) and \"version\" from 4.1 on"),
]
KNOWN_DIFFERENCES_40 = KNOWN_DIFFERENCES + [
    (r"^-.* controlType: LEADER_CHANGE\(2\)$", "4.0's dump names a KRaft LeaderChange control record only "
                                              "(DumpLogSegments.scala); 4.1 on, and kbatch, decode it"),
    (r"^\+.* LeaderChange: \{", "(the same)"),
]


def test_dumplog_agrees_with_kafka_40s_dump_log(real_kafka_40, kbatch):
    """`kbatch dump --format dumplog --records` against Kafka 4.0's own DumpLogSegments, line for line, on
    every file of the 4.0 broker's log directory: the share-group values read with the 4.0 layout are the
    ones the 4.0 tool decodes."""
    differences = _dumplog_differences(real_kafka_40, kbatch, real_kafka_40.log_dir, KNOWN_DIFFERENCES_40,
                                       KAFKA_40_WORDING)
    assert not differences, "\n".join(differences)
