#!/usr/bin/env python3
"""kbatch pcap against Wireshark's Kafka dissector on a large capture of Kafka traffic: time and peak memory.

    python benchmarks/bench_pcap.py                  # ~1 GiB capture -> benchmarks/data/kafka.pcap, then time both
    python benchmarks/bench_pcap.py --mib 64         # a smaller one
    python benchmarks/bench_pcap.py --write-only     # the capture alone
    python benchmarks/bench_pcap.py --repeat 3 --no-tshark

The capture is written in seconds from the test suite's capture writer (tests/capture_builder.py: requests
and responses from Kafka's JSON definitions by the fixture writer, never by kbatch; TCP/IP/Ethernet by dpkt).
Record batches are make_segment.py's templates (kafka-python's builder, 2 KiB to 16 KiB, uncompressed, with
every fourth one gzip), copied with only baseOffset patched (outside the CRC).  Six producer connections send
Produce v8 requests (one to three partitions, a batch or two each) answered by Produce responses; two
consumer connections send Fetch v11 requests answered by Fetch responses of about 0.5-1 MiB (several
partitions, their batches' offsets running on).  Produce v8 and Fetch v11 are the newest versions Debian's
tshark dissects.  The connections' messages are interleaved and cut into TCP segments of at most 64 KiB.

Each command runs as a whole process, stdout to /dev/null; wall time is the best of ``--repeat`` runs, CPU time
(the child's user + system time: what a shared, loaded machine measures fairly) their median, peak RSS the
child's ru_maxrss (the largest of the runs).  The ratio is of the CPU times.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

import dpkt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from make_segment import CODECS, build_template  # noqa: E402
from tests.capture_builder import Capture, message, request, response  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "data" / "kafka.pcap"
PRODUCE_VERSION, FETCH_VERSION = 8, 11
TOPICS = ("orders", "payments", "clicks")
PARTITIONS = 12
MSS = 65483   # loopback: an MTU of 65536 less the IP and TCP headers with timestamps
_BASE_OFFSET = struct.Struct(">q")


def fetch_request(topic: str, partitions: list[int]) -> bytes:
    """A FetchRequest v11 body by hand (FetchRequest.json: no copy of it among the fixtures' definitions):
    ReplicaId, MaxWaitMs, MinBytes, MaxBytes, IsolationLevel, SessionId, SessionEpoch, Topics [Topic,
    Partitions [Partition, CurrentLeaderEpoch, FetchOffset, LogStartOffset, PartitionMaxBytes]],
    ForgottenTopicsData [], RackId."""
    name = topic.encode()
    body = struct.pack(">iiiibii", -1, 500, 1, 52428800, 0, 0, -1)
    body += struct.pack(">ih", 1, len(name)) + name + struct.pack(">i", len(partitions))
    body += b"".join(struct.pack(">iiqqi", p, 0, 0, -1, 1048576) for p in partitions)
    return body + struct.pack(">ih", 0, 0)


def templates(seed: int) -> list[bytes]:
    """32 batches of 2-16 KiB as a producer fills them; every fourth gzip-compressed."""
    rng = random.Random(seed)
    return [build_template(rng, CODECS["gzip" if n % 4 == 3 else "none"], rng.choice((2, 4, 8, 16)) * 1024, None,
                           1_763_800_000_000 + n * 1000).data for n in range(32)]


class Traffic:
    """The offsets each partition is at, and the message bodies (Kafka's definitions, the fixture writer)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.batches = templates(seed)
        self.next_offset = {(topic, p): 0 for topic in TOPICS for p in range(PARTITIONS)}

    def batch(self, topic: str, partition: int) -> bytes:
        data = self.rng.choice(self.batches)
        offset = self.next_offset[topic, partition]
        self.next_offset[topic, partition] += struct.unpack_from(">i", data, 23)[0] + 1   # lastOffsetDelta + 1
        return _BASE_OFFSET.pack(offset) + data[8:]

    def produce(self, correlation_id: int) -> tuple[bytes, bytes]:
        topic = self.rng.choice(TOPICS)
        partitions = self.rng.sample(range(PARTITIONS), self.rng.randint(1, 3))
        data = {p: b"".join(self.batch(topic, p) for _ in range(self.rng.randint(1, 2))) for p in partitions}
        body = message("ProduceRequest", PRODUCE_VERSION, {
            "transactionalId": None, "acks": -1, "timeoutMs": 30000,
            "topicData": [{"name": topic, "partitionData": [{"index": p, "records": records}
                                                            for p, records in data.items()]}]})
        answer = message("ProduceResponse", PRODUCE_VERSION, {
            "responses": [{"name": topic, "partitionResponses": [
                {"index": p, "errorCode": 0, "baseOffset": struct.unpack_from(">q", records)[0],
                 "logAppendTimeMs": -1, "logStartOffset": 0, "recordErrors": [], "errorMessage": None}
                for p, records in data.items()]}], "throttleTimeMs": 0})
        return (request("Produce", PRODUCE_VERSION, correlation_id, body, flexible=False),
                response(correlation_id, answer, flexible=False))

    def fetch(self, correlation_id: int) -> tuple[bytes, bytes]:
        topic = self.rng.choice(TOPICS)
        partitions = self.rng.sample(range(PARTITIONS), self.rng.randint(2, 6))
        share = self.rng.randint(512, 1024) * 1024 // len(partitions)
        data = {}
        for p in partitions:
            records = bytearray()
            while len(records) < share:
                records += self.batch(topic, p)
            data[p] = bytes(records)
        body = fetch_request(topic, partitions)
        answer = message("FetchResponse", FETCH_VERSION, {
            "throttleTimeMs": 0, "errorCode": 0, "sessionId": 0,
            "responses": [{"topic": topic, "partitions": [
                {"partitionIndex": p, "errorCode": 0, "highWatermark": self.next_offset[topic, p],
                 "lastStableOffset": self.next_offset[topic, p], "logStartOffset": 0, "abortedTransactions": [],
                 "preferredReadReplica": -1, "records": records} for p, records in data.items()]}]})
        return (request("Fetch", FETCH_VERSION, correlation_id, body, client_id=b"consumer-1", flexible=False),
                response(correlation_id, answer, flexible=False))


def write_capture(path: Path, mib: int, seed: int = 47) -> dict:
    """A capture of about ``mib`` MiB: the connections' exchanges interleaved, each packet written as made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    traffic = Traffic(seed)
    producers = [Capture(client_port=40000 + n) for n in range(6)]
    consumers = [Capture(client_port=50000 + n) for n in range(2)]
    correlation = {id(c): 0 for c in producers + consumers}
    counts = {"produce": 0, "fetch": 0, "packets": 0}
    started = time.perf_counter()
    with open(path, "wb") as out:
        writer = dpkt.pcap.Writer(out, linktype=dpkt.pcap.DLT_EN10MB)
        stamp = 1_763_800_000.0

        def flush(capture: Capture) -> None:
            nonlocal stamp
            for packet in capture.packets:
                stamp += 0.000_05
                writer.writepkt(packet, ts=stamp)
            counts["packets"] += len(capture.packets)
            capture.packets.clear()

        for capture in producers + consumers:
            flush(capture)   # the handshakes
        while out.tell() < mib << 20:
            fetching = traffic.rng.random() < 0.08   # about half the bytes are fetched
            capture = traffic.rng.choice(consumers if fetching else producers)
            correlation[id(capture)] += 1
            asked, answered = (traffic.fetch if fetching else traffic.produce)(correlation[id(capture)])
            capture.send(asked, mss=MSS).answer(answered, mss=MSS)
            counts["fetch" if fetching else "produce"] += 1
            flush(capture)
    counts["bytes"] = path.stat().st_size
    counts["seconds"] = time.perf_counter() - started
    return counts


def timed(argv: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, peak RSS in KiB, exit status of one run (stdout to /dev/null)."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    _, status, usage = os.wait4(child.pid, 0)
    return (time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
            os.waitstatus_to_exitcode(status))


def summarised(argv: list[str], repeat: int) -> tuple[float, float, int, int]:
    """The best wall time, the median CPU time, the largest peak RSS, the last exit status of ``repeat`` runs."""
    runs = [timed(argv) for _ in range(repeat)]
    return (min(run[0] for run in runs), statistics.median(run[1] for run in runs), max(run[2] for run in runs),
            runs[-1][3])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="capture size in MiB (default 1024)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--write-only", action="store_true", help="write the capture, time nothing")
    parser.add_argument("--no-tshark", action="store_true", help="time kbatch alone")
    parser.add_argument("--rewrite", action="store_true", help="write the capture even if --out exists")
    options = parser.parse_args(argv)
    if options.rewrite or not options.out.exists():
        counts = write_capture(options.out, options.mib)
        print(f"wrote {options.out}: {counts['bytes'] / 2**20:.0f} MiB, {counts['packets']:,} packets, "
              f"{counts['produce']:,} Produce and {counts['fetch']:,} Fetch exchanges in {counts['seconds']:.1f} s")
    if options.write_only:
        return
    rows = [("kbatch pcap --format jsonl", [sys.executable, "-m", "kbatch", "pcap", "--format", "jsonl",
                                            str(options.out)])]
    if not options.no_tshark:
        rows.append(("tshark -r CAPTURE -Y kafka", ["tshark", "-r", str(options.out), "-Y", "kafka"]))
    results = {}
    for label, command in rows:
        results[label] = summarised(command, options.repeat)
        seconds, cpu, rss, status = results[label]
        print(f"{label:28} {seconds:8.2f} s wall  {cpu:8.2f} s CPU  peak RSS {rss / 1024:7.0f} MiB  exit {status}",
              flush=True)
    if len(results) == 2:
        (_, kbatch, *_), (_, tshark, *_) = results.values()
        print(f"tshark / kbatch (CPU): {tshark / kbatch:.1f}x")


if __name__ == "__main__":
    main()
