"""Captured Kafka traffic built for tests: requests and responses written from Kafka's JSON definitions by the
fixture writer (fixtures/make_internal_fixtures.py: its own reading of MessageDataGenerator, no kbatch), the
headers by hand from RequestHeader.json/ResponseHeader.json, wrapped in TCP/IP packets of a pcap by dpkt."""

from __future__ import annotations

import io
import socket
import struct
from pathlib import Path

import dpkt

from .helpers import fixture_writer

ROOT = Path(__file__).resolve().parents[1]
FLEXIBLE = {"ProduceRequest": 9, "ProduceResponse": 9, "FetchResponse": 12, "ShareFetchResponse": 0,
            "ApiVersionsResponse": 3}   # each definition's "flexibleVersions" (N+)
API_KEYS = {"Produce": 0, "Fetch": 1, "Metadata": 3, "ApiVersions": 18, "ShareFetch": 78}


FIX = fixture_writer()


def message(name: str, version: int, values: dict) -> bytes:
    return FIX.Writer(name, version).message(values)


def request(api: str, version: int, correlation_id: int, body: bytes, client_id: bytes | None = b"producer-1",
            *, flexible: bool) -> bytes:
    """A sized request: header v1 (v2 with an empty tagged-field count when the request version is flexible)."""
    header = struct.pack(">hhi", API_KEYS[api], version, correlation_id)
    header += b"\xff\xff" if client_id is None else struct.pack(">h", len(client_id)) + client_id
    data = header + (b"\x00" if flexible else b"") + body
    return struct.pack(">i", len(data)) + data


def response(correlation_id: int, body: bytes, *, flexible: bool) -> bytes:
    data = struct.pack(">i", correlation_id) + (b"\x00" if flexible else b"") + body
    return struct.pack(">i", len(data)) + data


class Capture:
    """One TCP connection client:40000 <-> broker:port; ``send``/``answer`` add a packet each (or several, cut
    at ``mss``); ``pcap()`` the file's bytes."""

    def __init__(self, port: int = 9092, client_port: int = 40000, isn: tuple[int, int] = (999, 4999)):
        self.port, self.client_port = port, client_port
        self.packets: list[bytes] = []
        self.seq = {"client": isn[0] + 1, "broker": isn[1] + 1}
        self._packet("client", b"", dpkt.tcp.TH_SYN, seq=isn[0])
        self._packet("broker", b"", dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK, seq=isn[1])

    def reconnect(self, isn: tuple[int, int]) -> "Capture":
        """A new connection on the same ports (the client's port used again): SYN and SYN-ACK of new initial
        sequence numbers, after the packets so far."""
        self.seq = {"client": isn[0] + 1, "broker": isn[1] + 1}
        self._packet("client", b"", dpkt.tcp.TH_SYN, seq=isn[0])
        self._packet("broker", b"", dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK, seq=isn[1])
        return self

    def _packet(self, side: str, payload: bytes, flags=dpkt.tcp.TH_ACK | dpkt.tcp.TH_PUSH, seq=None):
        sport, dport = (self.client_port, self.port) if side == "client" else (self.port, self.client_port)
        other = "broker" if side == "client" else "client"
        # every byte the other side sent acknowledged, as a receiver does (dropped packets' too: ``drop``)
        tcp = dpkt.tcp.TCP(sport=sport, dport=dport, seq=self.seq[side] if seq is None else seq, flags=flags,
                           ack=self.seq[other] if flags & dpkt.tcp.TH_ACK else 0,
                           data=payload, sum=0xBAD)   # an unfilled checksum, as on loopback
        ip = dpkt.ip.IP(src=socket.inet_aton("127.0.0.1"), dst=socket.inet_aton("127.0.0.1"),
                        p=dpkt.ip.IP_PROTO_TCP, data=tcp, len=20 + len(tcp))
        self.packets.append(bytes(dpkt.ethernet.Ethernet(src=b"\x00" * 6, dst=b"\x00" * 6,
                                                         type=dpkt.ethernet.ETH_TYPE_IP, data=bytes(ip))))
        if seq is None:
            self.seq[side] += len(payload)

    def send(self, data: bytes, mss: int = 1 << 16) -> "Capture":
        for start in range(0, len(data), mss):
            self._packet("client", data[start:start + mss])
        return self

    def answer(self, data: bytes, mss: int = 1 << 16) -> "Capture":
        for start in range(0, len(data), mss):
            self._packet("broker", data[start:start + mss])
        return self

    def drop(self, index: int) -> "Capture":
        """Leave the packet at ``index`` (of those added so far) out of the capture, as a capture that missed it."""
        del self.packets[index]
        return self

    def pcap(self) -> bytes:
        out = io.BytesIO()
        writer = dpkt.pcap.Writer(out, linktype=dpkt.pcap.DLT_EN10MB)
        for number, packet in enumerate(self.packets):
            writer.writepkt(packet, ts=1_700_000_000 + number / 1000)
        return out.getvalue()


def produce(version: int, topics: dict, *, acks: int = -1, transactional_id: str | None = None) -> bytes:
    """A ProduceRequest body: ``topics`` {name or topic id: {partition: records bytes}} (v13+: ids)."""
    key = "topicId" if version >= 13 else "name"
    return message("ProduceRequest", version, {
        "transactionalId": transactional_id, "acks": acks, "timeoutMs": 30000,
        "topicData": [{key: topic, "partitionData": [{"index": index, "records": records}
                                                     for index, records in partitions.items()]}
                      for topic, partitions in topics.items()]})


def produce_response(version: int, answers: dict) -> bytes:
    """``answers`` {topic: {partition: (error code, base offset)}}."""
    key = "topicId" if version >= 13 else "name"
    return message("ProduceResponse", version, {
        "responses": [{key: topic, "partitionResponses": [
            {"index": index, "errorCode": error, "baseOffset": base, "logAppendTimeMs": -1, "logStartOffset": 0}
            for index, (error, base) in partitions.items()]} for topic, partitions in answers.items()]})


def fetch_response(version: int, topics: dict, *, error: int = 0) -> bytes:
    """``topics`` {name or id: {partition: records bytes}}."""
    key = "topicId" if version >= 13 else "topic"
    return message("FetchResponse", version, {
        "responses": [{key: topic, "partitions": [
            {"partitionIndex": index, "errorCode": error, "highWatermark": 100, "lastStableOffset": 100,
             "logStartOffset": 0, "abortedTransactions": None, "preferredReadReplica": -1, "records": records}
            for index, records in partitions.items()]} for topic, partitions in topics.items()]})


def share_fetch_response(version: int, topics: dict) -> bytes:
    return message("ShareFetchResponse", version, {
        "errorCode": 0, "errorMessage": None, "acquisitionLockTimeoutMs": 30000,
        "responses": [{"topicId": topic, "partitions": [
            {"partitionIndex": index, "errorCode": 0, "errorMessage": None, "acknowledgeErrorCode": 0,
             "acknowledgeErrorMessage": None, "currentLeader": {"leaderId": 1, "leaderEpoch": 0},
             "records": records, "acquiredRecords": []}
            for index, records in partitions.items()]} for topic, partitions in topics.items()],
        "nodeEndpoints": []})


def api_versions_response(version: int, ranges: dict) -> bytes:
    """``ranges`` {api key: (min, max)}."""
    return message("ApiVersionsResponse", version, {
        "errorCode": 0, "throttleTimeMs": 0,
        "apiKeys": [{"apiKey": key, "minVersion": low, "maxVersion": high} for key, (low, high) in ranges.items()]})


def metadata_response(version: int, topics: dict) -> bytes:
    """``topics`` {name: topic id}."""
    return message("MetadataResponse", version, {
        "brokers": [{"nodeId": 1, "host": "127.0.0.1", "port": 9092, "rack": None}], "controllerId": 1,
        "topics": [{"errorCode": 0, "name": name, "topicId": topic_id, "isInternal": False, "partitions": []}
                   for name, topic_id in topics.items()]})
