"""``kbatch pcap`` on real traffic: the real-broker workload's loopback traffic, captured by tcpdump while it ran
(the ``real_kafka`` fixture), held against the segments the broker wrote, against Kafka's own protocol classes
(tests/kafka/StreamParser.java on the same reassembled streams) and against Wireshark's dissector.

The Java clients of Kafka 4.4 speak Produce v13 and Fetch v17+ (topics by id), kafka-python older versions
(topics by name); the share group's consumer ShareFetch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from kbatch.format.findings import Finding

pytestmark = pytest.mark.real_kafka

# Topics whose every produced batch is still on disk, as written, when the broker's directory is copied: not
# compacted, trimmed, tiered or deleted by the workload (tests/kafka/Workload.java).
KEPT_WHOLE = {"codec-none", "codec-gzip", "codec-snappy", "codec-lz4", "codec-zstd", "txn", "future", "python"}


def _capture(real_kafka) -> Path:
    if real_kafka.capture is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must capture the real broker's traffic: {real_kafka.no_capture}")
        pytest.skip(real_kafka.no_capture)
    return real_kafka.capture


def _topic_ids(log_dir: Path) -> dict[str, str]:
    """Topic id -> name, from each partition directory's partition.metadata (Kafka writes "topic_id: ..."); a
    deleted topic's directory is renamed TOPIC-N.ID-delete (LocalLog.logDeleteDirName)."""
    names = {}
    for metadata in log_dir.glob("*-*/partition.metadata"):
        for line in metadata.read_text().splitlines():
            if line.startswith("topic_id:"):
                names[line.split(":", 1)[1].strip()] = re.fullmatch(r"(.+)-\d+(\.\w+-delete)?",
                                                                    metadata.parent.name)[1]
    return names


def _disk_batches(log_dir: Path) -> dict[tuple[str, int], dict[int, dict]]:
    """(topic, partition) -> base offset -> the batch's keys as dump writes them, from the broker's segments."""
    from kbatch.output.jsonout import batch_dict
    from kbatch.reading.reader import SegmentReader
    from kbatch.walk.engine import entries

    found: dict = defaultdict(dict)
    for segment in sorted(log_dir.glob("*-*/*.log")):
        topic, _, partition = segment.parent.name.rpartition("-")
        if not partition.isdigit():
            continue   # a directory renamed for deletion
        with open(segment, "rb") as stream:
            for batch in entries(SegmentReader(stream)):
                assert not isinstance(batch, Finding), (segment, batch)
                found[(topic, int(partition))][batch.base_offset] = batch_dict(batch)
    return found


@pytest.fixture(scope="module")
def captured(real_kafka):
    """What kbatch pcap reads out of the capture (jsonl lines), run once: it exits 0 (no damage)."""
    from tests.helpers import ROOT

    capture = _capture(real_kafka)
    done = subprocess.run([sys.executable, "-m", "kbatch", "pcap", "--port", str(real_kafka.broker.port),
                           "--format", "jsonl", str(capture)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def disk(real_kafka):
    return _disk_batches(real_kafka.live)


def test_the_workloads_traffic_reads_clean(captured):
    lines = captured
    problems = [line for line in lines if line["type"] == "finding" and line["severity"] != "info"]
    assert problems == []
    batches = [line for line in lines if line["type"] == "batch"]
    assert all(line["crc_valid"] and not line["findings"] for line in batches)
    [summary] = [line for line in lines if line["type"] == "summary"]
    assert summary["produced"] > 100 and summary["fetched"] > 10 and summary["damaged"] is False
    kinds = {(line["api"], line["api_version"], line["topic_id"] is not None) for line in batches}
    # Java's by topic id (Produce v13, Fetch v18, ShareFetch v2), kafka-python's by name (Produce v8, Fetch v11)
    assert {("Produce", 13, True), ("Fetch", 18, True), ("ShareFetch", 2, True), ("Produce", 8, False),
            ("Fetch", 11, False)} <= kinds


def test_every_produced_batch_is_the_one_the_broker_wrote(captured, real_kafka, disk):
    lines = captured
    names = _topic_ids(real_kafka.live)
    produced = [line for line in lines if line["type"] == "batch" and line["direction"] == "produce"]
    compared = defaultdict(int)
    taken = {(line["producer_id"], line["base_sequence"], line["crc"]) for line in produced
             if line["error_code"] == 0}
    for line in produced:
        topic = line["topic"] or names.get(line["topic_id"])
        if line["topic_id"] is not None:   # named by the capture's Metadata responses, as the broker names it
            assert line["topic"] == names[line["topic_id"]], line
        if line["error_code"] != 0:
            # refused (CONCURRENT_TRANSACTIONS, 51, while a transaction's markers are written): the client
            # sends the same bytes again, and that copy is taken
            assert line["assigned_offset"] is None
            assert (line["producer_id"], line["base_sequence"], line["crc"]) in taken, line
            continue
        assert line["assigned_offset"] is not None, line
        on_disk = disk[(topic, line["partition"])].get(line["assigned_offset"])
        if on_disk is None:
            assert topic not in KEPT_WHOLE, (topic, line["assigned_offset"])
            continue
        # the broker sets baseOffset and partitionLeaderEpoch; everything under the CRC is the client's
        assert (on_disk["crc"], on_disk["count"], on_disk["last_offset"], on_disk["producer_id"],
                on_disk["base_sequence"], on_disk["codec"]) == (
            line["crc"], line["count"], line["assigned_offset"] + line["last_offset_delta"], line["producer_id"],
            line["base_sequence"], line["codec"]), (topic, line["assigned_offset"])
        compared[topic] += 1
    for topic in KEPT_WHOLE:   # ... and every data batch on disk of those topics was seen on the wire
        data = [offset for offset, batch in disk[(topic, 0)].items() if not batch["is_control"]]
        assert compared[topic] == len(data) > 0, topic


def test_every_fetched_batch_is_the_disks(captured, real_kafka, disk):
    lines = captured
    names = _topic_ids(real_kafka.live)
    fetched = [line for line in lines if line["type"] == "batch" and line["direction"] == "fetch"]
    same = 0
    for line in fetched:
        topic = line["topic"] or names.get(line["topic_id"])
        on_disk = disk[(topic, line["partition"])].get(line["base_offset"])
        if on_disk is not None:
            assert (on_disk["crc"], on_disk["last_offset"]) == (line["crc"], line["last_offset"])
            same += 1
    assert same > 10


# ApiKeys.PRODUCE, FETCH, SHARE_FETCH (clients/src/main/java/org/apache/kafka/common/protocol/ApiKeys.java)
API_KEYS = {"Produce": 0, "Fetch": 1, "ShareFetch": 78}


@pytest.fixture(scope="module")
def kafkas_reading(real_kafka, tmp_path_factory):
    """Kafka's own classes on the capture's TCP streams: each connection's two directions as kbatch reassembles
    them (kbatch.capture.streams.write_streams), read by tests/kafka/StreamParser.java on the broker's jars
    (RequestHeader.parse, AbstractRequest.parseRequest, AbstractResponse.parseResponse, MemoryRecords.batches);
    its jsonl lines, each "stream" replaced by the connection (the TCP direction) that file holds."""
    from kbatch.capture.batches import kafka_segments
    from kbatch.capture.packets import read_segments
    from kbatch.capture.streams import write_streams
    from tests.real_kafka import KAFKA_DIR, SHORT_LIVED_JVM, classpath

    capture, port = _capture(real_kafka), real_kafka.broker.port
    directory = tmp_path_factory.mktemp("streams")
    with open(capture, "rb") as stream:
        written = write_streams(kafka_segments(read_segments(stream), [port]), str(directory))
    assert written.problems == []   # every direction whole: no gap, no packet unread
    connections = {path: connection for connection, path in written.paths.items()}
    pairs = []
    for connection, path in written.paths.items():
        client, _, broker = connection.partition(" -> ")
        broker, hash_, number = broker.partition(" #")   # (" #2": a later connection on the same ports)
        if broker.endswith(f":{port}"):   # client -> broker: the requests; the reverse direction the responses
            answers = written.paths.get(f"{broker} -> {client}{hash_}{number}")
            if answers is None:           # (never answered: an empty stream)
                answers = str(directory / f"{Path(path).stem}.unanswered")
                Path(answers).touch()
            pairs += [path, answers]
    assert len(pairs) > 10
    done = subprocess.run(["java", "-Xmx512m", *SHORT_LIVED_JVM, "-cp", classpath(real_kafka.broker.jars),
                           str(KAFKA_DIR / "StreamParser.java"), *pairs],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-5000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    for line in lines:
        if "stream" in line:
            line["connection"] = connections.get(line.pop("stream"))
    return lines


def test_kafkas_own_classes_read_every_request_and_response(kafkas_reading, captured):
    """Every frame of every connection is a request or a response Kafka's classes read (none refused, none
    without its request), of every Produce, Fetch and ShareFetch version kbatch saw."""
    java = kafkas_reading
    assert [line for line in java if line["type"] == "error"] == []
    read = {(line["kind"], line["api_key"], line["api_version"]) for line in java if line["type"] == "message"}
    ours = {(API_KEYS[line["api"]], line["api_version"]) for line in captured if line["type"] == "batch"}
    for api_key, version in ours:
        assert ("request", api_key, version) in read and ("response", api_key, version) in read, (api_key, version)
    assert {api_key for _, api_key, _ in read} >= {0, 1, 3, 18, 78}   # ... and Metadata's, ApiVersions'


def test_kafkas_own_classes_read_the_same_batches(kafkas_reading, captured):
    """Each batch kbatch pcap reads is one Kafka's classes read in the same message and partition, in the same
    order, field by field (RecordBatch.baseOffset(), lastOffset(), countOrNull(), checksum(), isValid(),
    magic()), and the other way round; a Fetch response's last bytes that are no whole batch are kbatch's
    partial-batch finding where MemoryRecords.validBytes() falls short of sizeInBytes()."""
    fields = ("magic", "base_offset", "last_offset", "count", "crc", "crc_valid")

    def by_partition(lines):
        # the message (the TCP direction and the request's correlation id, api and version) and the partition;
        # the topic as the message names it: by id from Produce v13 and Fetch v13 on (kbatch then adds the name
        # a Metadata response gave, which test_every_produced_batch_is_the_one_the_broker_wrote checks)
        found = defaultdict(list)
        for line in lines:
            topic = line["topic_id"] if line["topic_id"] is not None else line["topic"]
            key = (line["connection"], line["correlation_id"], line["api_key"], line["api_version"], topic,
                   line["partition"])
            found[key].append(tuple(line[field] for field in fields))
        return found

    ours_lines = [{**line, "api_key": API_KEYS[line["api"]]} for line in captured if line["type"] == "batch"]
    java = by_partition([line for line in kafkas_reading if line["type"] == "batch"])
    ours = by_partition(ours_lines)
    assert len(java) > 100 and sum(map(len, java.values())) > 200
    assert ours.keys() == java.keys()
    for key, batches in java.items():
        assert ours[key] == batches, (key, fields)
    # a topic named by id only: kbatch gives the name the capture's Metadata responses gave, as Kafka read them
    names = {line["topic_id"]: line["topic"] for line in kafkas_reading if line["type"] == "topic"}
    by_id = [line for line in ours_lines if line["topic_id"] is not None]
    assert by_id and [line["topic"] for line in by_id] == [names[line["topic_id"]] for line in by_id]
    # a fetch cut short by its size limit
    cuts = sorted((line["connection"], line["topic_id"] or line["topic"], line["partition"], line["bytes"])
                  for line in kafkas_reading if line["type"] == "cut")
    partial = sorted((line["connection"], line["topic_id"] or line["topic"], line["partition"], line["size"])
                     for line in captured if line["type"] == "finding" and line["code"] == "partial-batch")
    assert cuts == partial


def test_wireshark_reads_the_same_batches_where_it_knows_the_version(captured, real_kafka):
    """Debian's tshark (4.0) reads Produce up to v8 and Fetch up to v11: kafka-python's traffic.  Each batch it
    shows -- correlation id, topic, partition, CRC -- is one kbatch shows, and the other way round."""
    lines = captured
    fields = ("kafka.correlation_id", "kafka.topic_name", "kafka.partition_id", "kafka.batch_crc")
    done = subprocess.run(["tshark", "-r", str(real_kafka.capture), "-d", f"tcp.port=={real_kafka.broker.port},kafka",
                           # (tshark "reads" a version it does not know too, into nonsense, and says so)
                           "-Y", 'kafka.batch_crc && !(_ws.expert.message contains "Unsupported")',
                           "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;",
                           *(part for field in fields for part in ("-e", field))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    wireshark = set()
    for row in done.stdout.splitlines():
        correlation_id, topics, partitions, crcs = row.split("\t")
        assert len(set(topics.split(";"))) == 1 and len(set(partitions.split(";"))) == 1, row   # one partition
        for crc in crcs.split(";"):
            wireshark.add((int(correlation_id), topics, int(partitions.split(";")[0]), int(crc, 0)))
    ours = {(line["correlation_id"], line["topic"], line["partition"], line["crc"]) for line in lines
            if line["type"] == "batch" and line["api_version"] <= {"Produce": 8, "Fetch": 11}.get(line["api"], -1)}
    assert len(ours) >= 5 and {("python" == topic) for _, topic, _, _ in ours} == {True}
    assert wireshark == ours


def _run(*args: str, columns: int | None = None) -> subprocess.CompletedProcess:
    from tests.helpers import ROOT

    env = {**os.environ, **({"COLUMNS": str(columns)} if columns else {})}
    return subprocess.run([sys.executable, "-m", "kbatch", "pcap", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env)


def test_the_table_fits_80_columns_and_uses_120(real_kafka):
    port = str(real_kafka.broker.port)
    for columns in (80, 120):
        done = _run("--port", port, str(_capture(real_kafka)), columns=columns)
        assert done.returncode == 0 and max(map(len, done.stdout.splitlines())) <= columns, done.stderr
    assert "codec-none-0" in done.stdout and " taken" in done.stdout


def _payload_offsets(capture: Path) -> dict[int, int]:
    """Packet number -> the file position of its TCP payload (Ethernet, IPv4, as tcpdump -i lo writes)."""
    import dpkt

    where, position = {}, 24   # the pcap file header
    with open(capture, "rb") as stream:
        for number, (_, frame) in enumerate(dpkt.pcap.Reader(stream), 1):
            ip = dpkt.ethernet.Ethernet(frame).data
            where[number] = position + 16 + 14 + ip.hl * 4 + ip.data.off * 4
            position += 16 + len(frame)
    return where


def test_against_the_broker_says_which_hop_changed_a_batch(captured, real_kafka, tmp_path):
    """The capture against the log directory: every batch agrees or has no disk batch (compaction, retention);
    a byte flipped in a produced batch in a copy of the capture is the client's hop, one flipped in the segment
    afterwards the broker's."""
    lines = captured
    port, capture = str(real_kafka.broker.port), _capture(real_kafka)
    done = _run("--port", port, "--against", str(real_kafka.live), "--format", "jsonl", str(capture))
    matches = [json.loads(line) for line in done.stdout.splitlines() if '"type": "match"' in line]
    assert done.returncode == 0 and {m["hop"] for m in matches} == {"none", None}
    assert {m["topic"] for m in matches if m["hop"] == "none"} >= KEPT_WHOLE
    # a produced batch of codec-none in a Produce request whose Kafka frame starts its packet's payload
    where = _payload_offsets(capture)
    data = capture.read_bytes()
    chosen = next(line for line in lines if line["type"] == "batch" and line["topic"] == "codec-none"
                  and line["direction"] == "produce"
                  and int.from_bytes(data[where[line["packet"]]:where[line["packet"]] + 4], "big") > 0
                  and data[where[line["packet"]] + 4:where[line["packet"]] + 6] == b"\x00\x00")   # Produce
    value_byte = 4 + chosen["records_pos"] + chosen["pos"] + chosen["size"] - 2   # in its last record
    flipped = bytearray(data)
    flipped[where[chosen["packet"]] + value_byte] ^= 0x01
    (tmp_path / "flipped.pcap").write_bytes(bytes(flipped))
    done = _run("--port", port, "--against", str(real_kafka.live), "--format", "jsonl", str(tmp_path / "flipped.pcap"))
    changed = [json.loads(line) for line in done.stdout.splitlines() if '"hop": "client"' in line]
    assert done.returncode == 1 and [(m["topic"], m["packet"]) for m in changed] == [("codec-none", chosen["packet"])]
    # the same byte flipped in the broker's segment instead
    logs = tmp_path / "logs"
    shutil.copytree(real_kafka.live, logs)
    segment = logs / "codec-none-0" / f"{0:020d}.log"
    disk = bytearray(segment.read_bytes())
    disk_pos = next(m["disk_pos"] for m in matches if m["topic"] == "codec-none" and m["packet"] == chosen["packet"])
    disk[disk_pos + chosen["size"] - 2] ^= 0x01
    segment.write_bytes(bytes(disk))
    done = _run("--port", port, "--against", str(logs), "--format", "jsonl", str(capture))
    broken = [json.loads(line) for line in done.stdout.splitlines() if '"hop": "broker"' in line]
    assert done.returncode == 1
    assert [(m["topic"], m["first_differing_byte"]) for m in broken] == [("codec-none", chosen["size"] - 2)] * len(broken)
    assert chosen["packet"] in {m["packet"] for m in broken}   # (and any fetch of it: the disk's is bad)
