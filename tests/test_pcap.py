"""``kbatch pcap``: the command on captures built from Kafka's definitions (tests/capture_builder.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("dpkt")

from kbatch.output import columns  # noqa: E402
from tests import handmade  # noqa: E402
from tests.capture_builder import (Capture, fetch_response, produce, produce_response, request,  # noqa: E402
                                   response)
from tests.test_output_schema import DOCUMENT, LINE  # noqa: E402

TWO = handmade.batch(0, [(b"k1", b"v1"), (b"k2", b"v2")], producer_id=7, producer_epoch=0, base_sequence=0)
HOSTILE_TOPIC = "orders\x1b[31m"
HOSTILE_CLIENT = b"evil\x1b]0;title\x07"


def _flipped(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0x01
    return bytes(out)


def clean_capture() -> Capture:
    return (Capture()
            .send(request("Produce", 9, 11, produce(9, {"orders": {0: TWO}}), flexible=True))
            .answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
            .send(request("Fetch", 12, 12, b"", flexible=True))
            .answer(response(12, fetch_response(12, {"orders": {0: TWO + TWO[:20]}}), flexible=True)))


def damaged_capture() -> Capture:
    return (Capture()
            .send(request("Produce", 9, 11, produce(9, {HOSTILE_TOPIC: {0: TWO, 1: _flipped(TWO, len(TWO) - 3)}}),
                          client_id=HOSTILE_CLIENT, flexible=True))
            .answer(response(11, produce_response(9, {HOSTILE_TOPIC: {0: (0, 500), 1: (2, -1)}}), flexible=True)))


def _write(tmp_path, capture: Capture, name: str = "traffic.pcap") -> str:
    path = tmp_path / name
    path.write_bytes(capture.pcap())
    return str(path)


def test_table_at_80_columns(tmp_path, monkeypatch, kbatch, text_snapshot):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, damaged_capture())
    result = kbatch("pcap", "traffic.pcap", expect=1)
    assert max(map(len, result.out.splitlines())) <= 80
    assert "\x1b" not in result.out and "\x07" not in result.out
    assert "orders\\x1b[31m-1" in result.out and "evil\\x1b]0;title\\x07" in result.out
    assert result.out == text_snapshot


def test_jsonl_batches_have_the_capture_keys_then_dumps(tmp_path, kbatch):
    path = _write(tmp_path, clean_capture())
    result = kbatch("pcap", "--format", "jsonl", path, expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert all(LINE.is_valid(line) for line in lines)
    produced, fetched, partial, summary = lines
    assert tuple(produced) == columns.names(columns.PCAP_BATCH_HEAD) + columns.always_written(columns.BATCH)[1:]
    assert {key: produced[key] for key in ("direction", "api", "topic", "topic_id", "partition", "api_version",
                                           "correlation_id", "client_id", "packet", "error_code",
                                           "assigned_offset", "base_offset", "count", "crc_valid")} == {
        "direction": "produce", "api": "Produce", "topic": "orders", "topic_id": None, "partition": 0,
        "api_version": 9, "correlation_id": 11, "client_id": "producer-1", "packet": 3, "error_code": 0,
        "assigned_offset": 500, "base_offset": 0, "count": 2, "crc_valid": True}
    assert produced["connection"] == "127.0.0.1:40000 -> 127.0.0.1:9092"
    assert produced["packet_time"] == pytest.approx(1_700_000_000.002)
    assert (fetched["direction"], fetched["connection"], fetched["assigned_offset"]) == (
        "fetch", "127.0.0.1:9092 -> 127.0.0.1:40000", None)
    assert (partial["type"], partial["code"], partial["severity"], partial["packet"], partial["partition"]) == (
        "finding", "partial-batch", "info", 6, 0)
    assert (summary["type"], summary["batch_count"], summary["produced"], summary["fetched"],
            summary["record_count"], summary["damaged"]) == ("summary", 2, 1, 1, 4, False)


def test_the_summary_counts_every_packet_of_the_capture_as_tshark_numbers_them(tmp_path, kbatch):
    """Packets that carry no TCP (a DNS query over UDP) are packets of the capture too: before, the count was
    the last TCP segment's number, one short of tshark's here, and said nothing of packets it never read."""
    import dpkt

    udp = dpkt.ip.IP(src=b"\x7f\x00\x00\x01", dst=b"\x7f\x00\x00\x35", p=dpkt.ip.IP_PROTO_UDP,
                     data=dpkt.udp.UDP(sport=5353, dport=53, data=b"query"))
    udp.len = len(bytes(udp))
    frame = bytes(dpkt.ethernet.Ethernet(src=b"\x00" * 6, dst=b"\x00" * 6, type=dpkt.ethernet.ETH_TYPE_IP, data=udp))
    capture = clean_capture()
    capture.packets[3:3] = [frame]   # (the compiled loop hands the rest over at it)
    capture.packets.append(frame)
    path = _write(tmp_path, capture)
    result = kbatch("pcap", "--format", "jsonl", path, expect=0)
    summary = json.loads(result.out.splitlines()[-1])
    assert (summary["packets"], summary["batch_count"]) == (len(capture.packets), 2) == (8, 2)
    assert kbatch("pcap", path, expect=0).out.splitlines()[-1].startswith(f"{path}: 8 packets, 2 batches")


def test_the_summary_says_one_batch_and_one_record_in_the_singular(tmp_path, kbatch):
    one = handmade.batch(0, [(None, b"only")])
    summary = kbatch("pcap", _write(tmp_path, _produced(one)), expect=0).out.splitlines()[-1]
    assert summary.endswith(": 4 packets, 1 batch (1 produced, 0 fetched), 1 record; no findings")


def test_a_new_connection_on_the_same_ports_is_read_apart_from_the_last(tmp_path, kbatch):
    """A client's port used again once its connection closed (Wireshark's "TCP port numbers reused"): the first
    connection's last request was cut short and never answered, and the new one's correlation ids start again.
    Read as one stream, the new connection's bytes went on from the cut frame; it is named apart ("... #2"),
    and its requests are read from their first byte and paired with their own responses."""
    first = request("Produce", 9, 1, produce(9, {"orders": {0: TWO}}), flexible=True)
    again = request("Produce", 9, 1, produce(9, {"orders": {1: TWO}}), flexible=True)
    capture = (Capture()
               .send(first).answer(response(1, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
               .send(first[:40])   # (the client closed here)
               .reconnect((70_000, 90_000))
               .send(again).answer(response(1, produce_response(9, {"orders": {1: (0, 700)}}), flexible=True)))
    path = _write(tmp_path, capture)
    result = kbatch("pcap", "--format", "jsonl", path, expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    batches = [(line["connection"], line["correlation_id"], line["partition"], line["assigned_offset"])
               for line in lines if line["type"] == "batch"]
    assert batches == [("127.0.0.1:40000 -> 127.0.0.1:9092", 1, 0, 500),
                       ("127.0.0.1:40000 -> 127.0.0.1:9092 #2", 1, 1, 700)]
    findings = [(line["code"], line["packet"], line["connection"]) for line in lines if line["type"] == "finding"]
    assert findings == [("capture-problem", 5, "127.0.0.1:40000 -> 127.0.0.1:9092")]   # the cut request


def test_the_lines_read_before_an_io_error_are_written_before_it_is_said(tmp_path, kbatch, monkeypatch):
    """The batches' lines the JSON Lines writer gathers (a MiB at a time, compiled) are out when reading the
    capture fails on: the same lines as a whole read's, then the error, exit 2."""
    import kbatch.ops.pcap as ops

    path = _write(tmp_path, clean_capture())
    whole = kbatch("pcap", "--format", "jsonl", path, expect=0).out.splitlines()
    reads = ops.read_capture

    def failing(*args, **kwargs):   # (fails after the first item: the produced batch, a run of one)
        yield next(reads(*args, **kwargs))
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(ops, "read_capture", failing)
    result = kbatch("pcap", "--format", "jsonl", path, expect=2)
    assert result.out.splitlines() == whole[:1] and json.loads(whole[0])["direction"] == "produce"
    assert "Input/output error" in result.err


def test_a_damaged_batch_exits_1_and_records_come_with_records(tmp_path, kbatch):
    path = _write(tmp_path, damaged_capture())
    result = kbatch("pcap", "--records", "--format", "jsonl", path, expect=1)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert all(LINE.is_valid(line) for line in lines)
    good, bad, refused, summary = lines
    assert good["topic"] == HOSTILE_TOPIC and good["client_id"] == HOSTILE_CLIENT.decode()
    assert [record["value"] for record in good["records"]] == [{"utf8": "v1"}, {"utf8": "v2"}]
    assert (bad["crc_valid"], [f["code"] for f in bad["findings"]], bad["error_code"], bad["assigned_offset"]) == (
        False, ["crc-mismatch"], 2, None)
    # (the hostile topic is a name Kafka refuses: said of the request, beneath its batches)
    assert (refused["code"], refused["topic"]) == ("topic-refused", HOSTILE_TOPIC)
    assert summary["findings"] == {"crc-mismatch": 1, "topic-refused": 1} and summary["damaged"] is True


def test_json_is_one_document_of_the_schema(tmp_path, kbatch):
    clean, damaged = _write(tmp_path, clean_capture(), "a.pcap"), _write(tmp_path, damaged_capture(), "b.pcap")
    document = json.loads(kbatch("pcap", "--format", "json", clean, damaged, expect=1).out)
    assert not list(DOCUMENT.iter_errors(document))
    assert [(capture["file"], len(capture["entries"]), capture["summary"]["damaged"])
            for capture in document["captures"]] == [(clean, 3, False), (damaged, 3, True)]   # (+ topic-refused)


def test_another_port_and_usage_errors(tmp_path, kbatch):
    moved = Capture(port=19092).send(request("Produce", 9, 1, produce(9, {"orders": {0: TWO}}), flexible=True))
    path = _write(tmp_path, moved)
    assert '"partition": 0' in kbatch("pcap", "--format", "jsonl", path, expect=0).out   # (its first bytes)
    assert '"partition": 0' in kbatch("pcap", "--port", "19092", "--format", "jsonl", path, expect=0).out
    assert "--port" in kbatch("pcap", "--port", "0", path, expect=2).err
    assert "cannot read" in kbatch("pcap", str(tmp_path / "missing.pcap"), expect=2).err
    (tmp_path / "notes.txt").write_bytes(b"not a capture at all, just text\n")
    for output_format in ("table", "jsonl"):   # said once, as a file that cannot be read: no table of nothing
        text = kbatch("pcap", "--format", output_format, str(tmp_path / "notes.txt"), expect=2)
        assert text.out == ""
        assert text.err.count("not a pcap or pcapng file") == 1


def test_a_cut_capture_is_a_finding_with_its_packet_and_exits_0(tmp_path, kbatch):
    whole = clean_capture().pcap()
    (tmp_path / "cut.pcap").write_bytes(whole[:len(whole) - 40])
    lines = [json.loads(line) for line in
             kbatch("pcap", "--format", "jsonl", str(tmp_path / "cut.pcap"), expect=0).out.splitlines()]
    problems = [line for line in lines if line["type"] == "finding"]
    assert [(p["code"], p["severity"]) for p in problems] == [("capture-problem", "warning")] * len(problems)
    assert problems[0]["packet"] == 6 and lines[0]["type"] == "batch"


def test_extract_writes_segments_every_other_command_reads(tmp_path, kbatch):
    later = handmade.batch(0, [(None, b"third")], producer_id=7, producer_epoch=0, base_sequence=2)
    capture = (clean_capture()
               .send(request("Produce", 9, 13, produce(9, {"orders": {0: later}, "../escape": {0: TWO}}),
                             flexible=True))
               .answer(response(13, produce_response(9, {"orders": {0: (0, 502)}, "../escape": {0: (2, -1)}}),
                                flexible=True)))
    out = tmp_path / "out"
    # (exit 1: "../escape" is a topic name Kafka refuses, a finding; its batch is extracted all the same)
    result = kbatch("pcap", "--extract", str(out), "--format", "jsonl", _write(tmp_path, capture), expect=1)
    assert "3 segment files written" in result.err
    written = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert written == ["fetch/orders-0/00000000000000000000.log", "produce/orders-0/00000000000000000500.log",
                       "unassigned/%2E%2E%2Fescape-0/00000000000000000000.log"]
    assert (out / "fetch" / "orders-0" / "00000000000000000000.log").read_bytes() == TWO
    assert (out / "unassigned" / "%2E%2E%2Fescape-0" / "00000000000000000000.log").read_bytes() == TWO
    produced = out / "produce" / "orders-0" / "00000000000000000500.log"
    # each batch at the offset its response gave: only baseOffset (outside the CRC) differs from what was sent
    assert produced.read_bytes() == (500).to_bytes(8, "big") + TWO[8:] + (502).to_bytes(8, "big") + later[8:]
    kbatch("verify-crc", "--deep", str(produced.parent), expect=0)
    lines = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", str(produced), expect=0).out.splitlines()]
    assert [(line["base_offset"], line["last_offset"], line["crc_valid"]) for line in lines if line["type"] == "batch"] \
        == [(500, 501, True), (502, 502, True)]


def test_extract_keeps_a_topic_known_by_its_id_apart_from_a_topic_named_as_that_id(tmp_path, kbatch):
    """A Uuid's base64 is a legal topic name: the topic named so (v9, by name) and the topic of that id (v13, no
    Metadata response names it) are two partitions, each its own segment."""
    from tests.test_capture_batches import TOPIC_ID

    later = handmade.batch(0, [(None, b"third")])
    capture = Capture()
    for correlation, (version, batch) in enumerate([(9, TWO), (13, later)], start=11):
        capture = (capture.send(request("Produce", version, correlation, produce(version, {TOPIC_ID: {0: batch}}),
                                        flexible=True))
                   .answer(response(correlation, produce_response(version, {TOPIC_ID: {0: (0, 500)}}),
                                    flexible=True)))
    out = tmp_path / "out"
    result = kbatch("pcap", "--extract", str(out), _write(tmp_path, capture), expect=0)
    assert "2 segment files written" in result.err
    assert (out / "produce" / f"{TOPIC_ID}-0" / f"{500:020d}.log").read_bytes() == (500).to_bytes(8, "big") + TWO[8:]
    assert (out / "produce" / f"id={TOPIC_ID}-0" / f"{500:020d}.log").read_bytes() \
        == (500).to_bytes(8, "big") + later[8:]


@pytest.mark.parametrize("how", ["itself", "hard link", "symbolic link"])
def test_extract_never_writes_over_a_capture_it_reads(tmp_path, kbatch, how):
    """A segment --extract would write is the capture read (given as it is, or through a hard or symbolic link):
    refused in one line naming it, exit 2, before any segment is written; the capture keeps its bytes."""
    capture = clean_capture().pcap()
    out = tmp_path / "out\x1b[2J"
    segment = out / "produce" / "orders-0" / "00000000000000000500.log"
    segment.parent.mkdir(parents=True)
    if how == "itself":
        segment.write_bytes(capture)
        named = segment
    else:
        named = tmp_path / "traffic.pcap"
        named.write_bytes(capture)
        segment.hardlink_to(named) if how == "hard link" else segment.symlink_to(named)
    result = kbatch("pcap", "--extract", str(out), "--format", "jsonl", str(named), expect=2)
    assert named.read_bytes() == capture and segment.read_bytes() == capture
    assert not (out / "fetch").exists()   # the other segment is not written either
    said = "an input" if how == "itself" else f"the input {named} (the same file)"
    assert result.err == (f"kbatch: error: --extract {_escaped(out)}: {_escaped(segment)} is {said}: kbatch "
                          "never writes over its input\n")


def _escaped(path) -> str:
    return str(path).replace("\x1b", "\\x1b")


def test_extract_writes_every_partition_it_can_and_says_which_it_cannot(tmp_path, kbatch):
    """A partition whose directory cannot be made (a file holds its name) or whose segment cannot be put in place
    (a directory holds it) is said, with its path and why; the other partitions are written; exit 2."""
    capture = (clean_capture()
               .send(request("Produce", 9, 13, produce(9, {"payments": {0: TWO}}), flexible=True))
               .answer(response(13, produce_response(9, {"payments": {0: (0, 0)}}), flexible=True)))
    out = tmp_path / "out"
    (out / "produce").mkdir(parents=True)
    (out / "produce" / "orders-0").write_bytes(b"")
    (out / "fetch" / "orders-0" / "00000000000000000000.log").mkdir(parents=True)
    result = kbatch("pcap", "--extract", str(out), "--format", "jsonl", _write(tmp_path, capture), expect=2)
    assert result.err.splitlines() == [
        f"kbatch: error: --extract {out}: cannot write {out}/fetch/orders-0/00000000000000000000.log: a directory, "
        "not a regular file: not replaced",
        f"kbatch: error: --extract {out}: cannot write {out}/produce/orders-0/00000000000000000500.log: File exists",
        f"kbatch: note: 1 segment file written under {out}"]
    assert (out / "produce" / "payments-0" / "00000000000000000000.log").read_bytes() == TWO


def test_a_topic_too_long_for_a_file_systems_name_is_cut_and_stays_distinct(tmp_path, kbatch):
    """100 x \x01 escaped is 300 bytes, past the 255 of a name (ENAMETOOLONG): cut, ending in a digest of the whole
    topic; a legal topic as long as Kafka allows is kept as it is."""
    from kbatch.ops.pcap import directory_name

    long = "\x01" * 100
    names = {directory_name(topic, partition) for topic in (long, long + "\x02", long + "\x01", "a" * 300)
             for partition in (0, 2147483647)}
    assert len(names) == 8 and max(len(name.encode()) for name in names) <= 255
    assert all("~" in name and "%0~" not in name and "%~" not in name for name in names)
    assert directory_name("a" * 249, 7) == "a" * 249 + "-7"
    capture = (Capture()
               .send(request("Produce", 9, 11, produce(9, {"A-topic": {0: TWO}, long: {0: TWO}, "z-topic": {0: TWO}}),
                             flexible=True))
               .answer(response(11, produce_response(9, {"A-topic": {0: (0, 0)}, long: {0: (0, 0)},
                                                         "z-topic": {0: (0, 0)}}), flexible=True)))
    out = tmp_path / "out"
    # (exit 1: the \x01 name is a topic name Kafka refuses, a finding; its batch is extracted all the same)
    result = kbatch("pcap", "--extract", str(out), "--format", "jsonl", _write(tmp_path, capture), expect=1)
    assert "3 segment files written" in result.err
    assert sorted(path.name for path in (out / "produce").iterdir()) == sorted(
        ["A-topic-0", "z-topic-0", directory_name(long, 0)])


def test_glibc_is_asked_to_keep_freed_memory_and_nothing_else_is(monkeypatch):
    """kbatch pcap has glibc keep up to 8 MiB freed at its heap's top and serve blocks of up to 4 MiB from the heap
    (mallopt M_TRIM_THRESHOLD -1, M_MMAP_THRESHOLD -3, malloc.h); elsewhere it asks nothing, and a C library
    without mallopt is no error."""
    import ctypes

    from kbatch.cli import pcap as command

    asked: list = []

    class Glibc:
        def __init__(self, name):
            assert name is None   # the process's own C library

        def mallopt(self, parameter, value):
            asked.append((parameter, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", Glibc)
    monkeypatch.setattr(sys, "platform", "linux")
    command._keep_freed_memory()
    assert asked == [(-1, 8 << 20), (-3, 4 << 20)]
    asked.clear()
    monkeypatch.setattr(sys, "platform", "darwin")
    command._keep_freed_memory()
    assert asked == []
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", lambda name: object())   # (musl's has one; say another has not)
    command._keep_freed_memory()
    assert asked == []


def test_a_hostile_topic_name_never_leaves_the_extract_directory():
    from kbatch.ops.pcap import directory_name

    assert directory_name("orders.v2_x-y", 3) == "orders.v2_x-y-3"
    assert directory_name("..", 0) == "%2E%2E-0" and directory_name("", 1) == "%-1"
    assert directory_name("a/../b\x1b", 2) == "a%2F%2E%2E%2Fb%1B-2"
    assert "/" not in directory_name("/etc/passwd", 0) and directory_name("é", 0) == "%C3%A9-0"


# -- --against LOGDIR: which hop changed a batch ---------------------------------------------------------------

def _logdir(tmp_path, batches: bytes, topic: str = "orders", topic_id: str | None = None):
    """A log directory with one partition, TOPIC-0, holding ``batches``."""
    directory = tmp_path / "logs" / f"{topic}-0"
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(batches)
    if topic_id is not None:
        (directory / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
    return str(tmp_path / "logs")


def _as_written(batch: bytes, offset: int, leader_epoch: int = 5) -> bytes:
    """The batch as a broker stores it: baseOffset and partitionLeaderEpoch set (both outside the CRC)."""
    return offset.to_bytes(8, "big") + batch[8:12] + leader_epoch.to_bytes(4, "big") + batch[16:]


def _matches(kbatch, *args, expect):
    lines = [json.loads(line) for line in kbatch("pcap", "--format", "jsonl", *args, expect=expect).out.splitlines()]
    assert all(LINE.is_valid(line) for line in lines)
    return [line for line in lines if line["type"] == "match"], lines[-1]


def _produced(batch: bytes, version: int = 9, topic: str = "orders", base: int = 500) -> Capture:
    return (Capture().send(request("Produce", version, 11, produce(version, {topic: {0: batch}}),
                                   flexible=version >= 9))
            .answer(response(11, produce_response(version, {topic: {0: (0, base)}}), flexible=version >= 9)))


def test_against_a_batch_written_as_sent_is_hop_none(tmp_path, kbatch):
    logs = _logdir(tmp_path, _as_written(TWO, 500))
    [found], summary = _matches(kbatch, "--against", logs, _write(tmp_path, _produced(TWO)), expect=0)
    assert (found["hop"], found["first_differing_byte"], found["base_offset"], found["disk_pos"]) == (
        "none", None, 500, 0)
    assert summary["hops"] == {"none": 1} and summary["damaged"] is False


def test_against_a_topic_kafka_refuses_is_never_looked_up_and_never_agrees(tmp_path, kbatch):
    """A captured "../outside" would name LOGDIR/../outside-0, a directory beside the log directory holding the
    very batch: it is not looked up, the batch is not compared, the match says why, and the exit status is 1."""
    logs = _logdir(tmp_path, b"")
    beside = tmp_path / "outside-0"
    beside.mkdir()
    (beside / "00000000000000000000.log").write_bytes(_as_written(TWO, 500))
    capture = _write(tmp_path, _produced(TWO, topic="../outside"))
    [found], summary = _matches(kbatch, "--against", logs, capture, expect=1)
    assert (found["hop"], found["disk_file"], found["base_offset"]) == (None, None, 500)
    assert found["explanation"].startswith("not compared: Kafka refuses the topic name '../outside' (it contains")
    assert summary["hops"] == {"topic-refused": 1} and summary["damaged"] is True
    hostile = _write(tmp_path, _produced(TWO, topic=HOSTILE_TOPIC), "hostile.pcap")
    table = kbatch("pcap", "--against", logs, hostile, expect=1).out
    assert "Kafka refuses the topic name 'orders\\x1b[31m'" in table and "\x1b" not in table
    assert "1 topic-refused" in table


_NOT_LEGAL = "it contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"


@pytest.mark.parametrize("topic, why", [
    ("orders.v2_x-Y", None), ("_0-9_.", None), ("...", None), ("a" * 249, None),
    ("", "the empty string is not allowed"), (".", "'.' is not allowed"), ("..", "'..' is not allowed"),
    ("a" * 250, "a name of 250 characters is longer than the max allowed length 249"),
    ("foo bar", _NOT_LEGAL), ("a/b", _NOT_LEGAL), ("é", _NOT_LEGAL), ("orders\n", _NOT_LEGAL),
])
def test_topic_names_are_refused_as_kafkas_topic_validate_refuses_them(topic, why):
    """Kafka's TopicTest.shouldAcceptValidTopicNames / shouldThrowOnInvalidTopicNames, and the reasons
    Topic.detectInvalidTopic gives."""
    from kbatch.files.inputs import topic_refused

    assert topic_refused(topic) == why


def test_without_dpkt_the_extra_is_named_as_the_checkout_installs_it(tmp_path, kbatch, monkeypatch):
    """Not 'kbatch[pcap]': the kbatch on PyPI is another project, which that would install."""
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "dpkt" else
                        find_spec(name, *args))
    result = kbatch("pcap", _write(tmp_path, _produced(TWO)), expect=2)
    assert result.err == ("kbatch: error: reading captures needs the pcap extra: pip install '.[pcap]' in kbatch's "
                          "checkout (dpkt)\n")


def test_against_a_log_directory_leaves_a_fifo_among_the_segments_unopened(tmp_path, kbatch):
    """As Kafka's LogLoader, only regular files are read as segments: opening a FIFO would wait forever."""
    logs = _logdir(tmp_path, _as_written(TWO, 500))
    os.mkfifo(os.path.join(logs, "orders-0", f"{9:020d}.log"))
    [found], _ = _matches(kbatch, "--against", logs, _write(tmp_path, _produced(TWO)), expect=0)
    assert (found["hop"], found["base_offset"]) == ("none", 500)


def test_against_topics_by_id_are_named_by_partition_metadata(tmp_path, kbatch):
    from tests.test_capture_batches import TOPIC_ID

    logs = _logdir(tmp_path, _as_written(TWO, 500), topic_id=TOPIC_ID)
    [found], _ = _matches(kbatch, "--against", logs, _write(tmp_path, _produced(TWO, 13, TOPIC_ID)), expect=0)
    assert (found["topic"], found["topic_id"], found["hop"]) == (None, TOPIC_ID, "none")


def test_against_a_byte_changed_on_disk_is_hop_broker_with_its_position(tmp_path, kbatch, monkeypatch):
    at = len(TWO) - 3
    logs = _logdir(tmp_path, _flipped(_as_written(TWO, 500), at))
    capture = _write(tmp_path, _produced(TWO))
    [found], summary = _matches(kbatch, "--against", logs, capture, expect=1)
    assert (found["hop"], found["first_differing_byte"]) == ("broker", at)
    assert summary["hops"] == {"broker": 1} and summary["damaged"] is True
    monkeypatch.setenv("COLUMNS", "80")
    table = kbatch("pcap", "--against", logs, capture, expect=1).out
    assert f"hop broker: good on the wire, failing its CRC on disk, first at byte {at}" in " ".join(table.split())


def test_against_a_batch_damaged_on_the_wire_is_hop_client(tmp_path, kbatch):
    logs = _logdir(tmp_path, _as_written(TWO, 500))
    [found], _ = _matches(kbatch, "--against", logs, _write(tmp_path, _produced(_flipped(TWO, 70))), expect=1)
    assert (found["hop"], found["disk_file"]) == ("client", None)


def test_against_a_fetch_that_differs_from_a_good_disk_is_hop_fetch(tmp_path, kbatch):
    on_disk = _as_written(TWO, 0)
    logs = _logdir(tmp_path, on_disk)
    fetched = (Capture().send(request("Fetch", 12, 12, b"", flexible=True))
               .answer(response(12, fetch_response(12, {"orders": {0: _flipped(on_disk, 40)}}), flexible=True)))
    [found], summary = _matches(kbatch, "--against", logs, _write(tmp_path, fetched), expect=1)
    assert (found["direction"], found["hop"], found["first_differing_byte"]) == ("fetch", "fetch", 40)
    same = (Capture().send(request("Fetch", 12, 12, b"", flexible=True))
            .answer(response(12, fetch_response(12, {"orders": {0: _as_written(TWO, 0, leader_epoch=9)}}),
                             flexible=True)))
    [found], _ = _matches(kbatch, "--against", logs, _write(tmp_path, same, "same.pcap"), expect=0)
    assert found["hop"] == "none"


def test_against_a_refused_batch_is_found_by_its_producer_and_sequence(tmp_path, kbatch):
    logs = _logdir(tmp_path, _as_written(TWO, 7))
    refused = (Capture().send(request("Produce", 9, 11, produce(9, {"orders": {0: TWO}}), flexible=True))
               .answer(response(11, produce_response(9, {"orders": {0: (6, -1)}}), flexible=True)))
    [found], _ = _matches(kbatch, "--against", logs, _write(tmp_path, refused), expect=0)
    assert (found["hop"], found["base_offset"]) == ("none", 7)
    [unmatched], summary = _matches(kbatch, "--against", _logdir(tmp_path / "other", b"", topic="payments"),
                                    _write(tmp_path, _produced(TWO), "b.pcap"), expect=0)
    assert unmatched["hop"] is None and summary["hops"] == {"unmatched": 1}


def test_against_a_batch_the_broker_recompressed_is_compared_by_its_records(tmp_path, kbatch):
    """compression.type=gzip on the topic: the broker re-wrote the client's uncompressed batch (kafka-python's
    builder makes the gzip one): the records agree, so the hop is none; a changed value is the broker's."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    def gzip_batch(values):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False, producer_id=7,
                                            producer_epoch=0, base_sequence=0, batch_size=1 << 20)
        for delta, value in enumerate(values):
            builder.append(delta, timestamp=1_700_000_000_000, key=f"k{delta + 1}".encode(), value=value,
                           headers=[])
        return _as_written(bytes(builder.build()), 500)

    values = [b"a" * 200, b"b" * 200]   # (the builder sends a batch compression does not shrink uncompressed)
    sent = handmade.batch(0, [(b"k1", values[0]), (b"k2", values[1])], producer_id=7, producer_epoch=0,
                          base_sequence=0)
    logs = _logdir(tmp_path, gzip_batch(values))
    assert b"a" * 200 not in (tmp_path / "logs" / "orders-0" / "00000000000000000000.log").read_bytes()
    [found], _ = _matches(kbatch, "--against", logs, _write(tmp_path, _produced(sent)), expect=0)
    assert (found["hop"], found["first_differing_byte"]) == ("none", None)
    changed = _logdir(tmp_path / "changed", gzip_batch([values[0], b"c" * 200]))
    [found], _ = _matches(kbatch, "--against", changed, _write(tmp_path, _produced(sent), "b.pcap"), expect=1)
    assert (found["hop"], found["first_differing_byte"]) == ("broker", 0)


def _recrc(data: bytes) -> bytes:
    """A v2 batch with its CRC-32C made to hold again over attributes..end (DefaultRecordBatch.computeChecksum)."""
    import crc32c
    return data[:17] + crc32c.crc32c(data[21:]).to_bytes(4, "big") + data[21:]


def _patched(data: bytes, at: int, value: bytes) -> bytes:
    return _recrc(data[:at] + value + data[at + len(value):])


@pytest.mark.parametrize("deep", [False, True])
def test_records_walked_with_deep_only_and_header_rules_always(tmp_path, kbatch, deep):
    """Without --deep a batch's CRC and header are checked (a reserved attributes bit is told either way); a
    lastOffsetDelta shorter than the records' (bytes 23..27) takes walking the records: --deep tells it (damage).
    Reserved bits are a warning: the exit status is the short batch's."""
    short = _patched(TWO, 23, (0).to_bytes(4, "big"))
    reserved = _patched(TWO, 21, (0x0100).to_bytes(2, "big"))
    capture = (Capture()
               .send(request("Produce", 9, 11, produce(9, {"orders": {0: short, 1: reserved}}), flexible=True))
               .answer(response(11, produce_response(9, {"orders": {0: (0, 500), 1: (0, 600)}}), flexible=True)))
    path = _write(tmp_path, capture)
    result = kbatch("pcap", "--format", "jsonl", *(["--deep"] if deep else []), path, expect=1 if deep else 0)
    short_line, reserved_line, summary = [json.loads(line) for line in result.out.splitlines()]
    assert [finding["code"] for finding in short_line["findings"]] == (["last-offset-delta-mismatch"] if deep else [])
    assert [finding["code"] for finding in reserved_line["findings"]] == ["reserved-bits"]
    assert (short_line["crc_valid"], reserved_line["crc_valid"]) == (True, True)


def test_decompressed_size_with_deep_only(tmp_path, kbatch):
    from kafka.record.default_records import DefaultRecordBatchBuilder
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=1_700_000_000_000, key=b"k", value=b"v" * 300, headers=[])
    gzipped = bytes(builder.build())
    capture = (Capture()
               .send(request("Produce", 9, 11, produce(9, {"orders": {0: gzipped}}), flexible=True))
               .answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True)))
    path = _write(tmp_path, capture)
    listed = json.loads(kbatch("pcap", "--format", "jsonl", path, expect=0).out.splitlines()[0])
    deep = json.loads(kbatch("pcap", "--format", "jsonl", "--deep", path, expect=0).out.splitlines()[0])
    assert (listed["codec"], listed["decompressed_size"]) == ("gzip", None)
    assert deep["decompressed_size"] > 300
    assert {**deep, "decompressed_size": None} == listed


def test_batch_lines_are_json_dumps_lines(tmp_path, kbatch):
    """A clean batch's line is written by the compiled batch writer after the capture's keys (hostile topic and
    client id here): each line is what json.dumps writes of its own object, key for key, byte for byte."""
    path = _write(tmp_path, damaged_capture())
    result = kbatch("pcap", "--format", "jsonl", path, expect=1)
    lines = result.out.splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["batch", "batch", "finding", "summary"]   # (topic-refused)
    assert json.loads(lines[0])["topic"] == HOSTILE_TOPIC and json.loads(lines[0])["client_id"] == HOSTILE_CLIENT.decode()
    assert all(line == json.dumps(json.loads(line), ensure_ascii=False) for line in lines)


def test_extract_spills_batches_as_they_come_and_writes_them_in_offset_order(tmp_path, kbatch):
    """Fetched out of order and twice: each offset written once, in offset order; a different batch at an
    offset already written is counted and left out.  Nothing of the batches' bytes is held meanwhile."""
    later = handmade.batch(2, [(None, b"third")])
    other = handmade.batch(0, [(b"k1", b"changed"), (b"k2", b"v2")])
    capture = (Capture()
               .send(request("Fetch", 12, 1, b"", flexible=True))
               .answer(response(1, fetch_response(12, {"orders": {0: later}}), flexible=True))
               .send(request("Fetch", 12, 2, b"", flexible=True))
               .answer(response(2, fetch_response(12, {"orders": {0: TWO + later}}), flexible=True))
               .send(request("Fetch", 12, 3, b"", flexible=True))
               .answer(response(3, fetch_response(12, {"orders": {0: other}}), flexible=True)))
    out = tmp_path / "out"
    result = kbatch("pcap", "--extract", str(out), "--format", "jsonl", _write(tmp_path, capture), expect=0)
    assert "1 segment file written" in result.err and "note: 1 batch left out, each different" in result.err
    assert (out / "fetch" / "orders-0" / "00000000000000000000.log").read_bytes() == TWO + later
    assert [path.name for path in out.iterdir()] == ["fetch"]   # the spill file had no name


def test_extraction_keeps_an_entry_per_batch_not_its_bytes(tmp_path):
    import io

    from kbatch.ops.pcap import CaptureSummary, CapturedBatch, Extraction, read_capture

    extraction = Extraction(str(tmp_path / "out"))
    for item in read_capture("c", io.BytesIO(clean_capture().pcap()), CaptureSummary("c")):
        if isinstance(item, CapturedBatch):
            extraction.add(item)
    # (offset, where in the spill file, size): the produced batch came first (its response, packet 4)
    assert {key: spilled.batches for key, spilled in extraction.kept.items()} == {
        ("produce", "orders-0"): [(500, 0, len(TWO))], ("fetch", "orders-0"): [(0, len(TWO), len(TWO))]}
    assert [len(paths) for paths in extraction.write()] == [2, 0]   # (written, failed)


# -- TCP gaps: the direction read again at the next segment that starts a Kafka frame --------------------------

def _problems(lines: list[dict]) -> list[tuple]:
    return [(line["packet"], line["connection"], line["size"], line["actual"]) for line in lines
            if line["type"] == "finding"]


CLIENT, BROKER = "127.0.0.1:40000 -> 127.0.0.1:9092", "127.0.0.1:9092 -> 127.0.0.1:40000"


def test_a_gap_in_the_requests_is_resynced_at_the_next_request(tmp_path, kbatch):
    """Produce request 12 goes out in 40-byte segments (packets 5-8) and the capture misses packet 6: the
    broker's ACK in its response (packet 8) says those 40 bytes arrived, so they are a gap there; the rest of
    request 12 is passed over, and request 13 (packet 9) is read again, paired with its response."""
    capture = (Capture()
               .send(request("Produce", 9, 11, produce(9, {"orders": {0: TWO}}), flexible=True))
               .answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
               .send(request("Produce", 9, 12, produce(9, {"orders": {1: TWO}}), flexible=True), mss=40)
               .drop(5)
               .answer(response(12, produce_response(9, {"orders": {1: (0, 700)}}), flexible=True))
               .send(request("Produce", 9, 13, produce(9, {"orders": {0: TWO}}), flexible=True))
               .answer(response(13, produce_response(9, {"orders": {0: (0, 502)}}), flexible=True)))
    result = kbatch("pcap", "--format", "jsonl", _write(tmp_path, capture), expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert _problems(lines) == [
        (8, CLIENT, 40, "40 bytes of the stream never captured (the other side acknowledged them)"),
        (8, BROKER, 0, "a response with correlation id 12, whose request was not captured"),
        (9, CLIENT, 0, "52 bytes after the gap at packet 8 passed over: read again from this packet, whose "
                       "segment starts a Kafka frame")]
    assert [(line["correlation_id"], line["packet"], line["assigned_offset"]) for line in lines
            if line["type"] == "batch"] == [(11, 3, 500), (13, 9, 502)]


def test_a_gap_in_the_responses_is_resynced_at_a_response_to_a_waiting_request(tmp_path, kbatch):
    """Fetch response 2 in 50-byte segments, packet 5 missed: the client's next request ACKs it (a gap at
    packet 6); response 3 starts with a correlation id still waiting, so it is read again there."""
    capture = (Capture()
               .send(request("Fetch", 12, 2, b"", flexible=True))
               .answer(response(2, fetch_response(12, {"orders": {0: TWO}}), flexible=True), mss=50)
               .drop(4)
               .send(request("Fetch", 12, 3, b"", flexible=True))
               .answer(response(3, fetch_response(12, {"orders": {0: TWO}}), flexible=True)))
    result = kbatch("pcap", "--format", "jsonl", _write(tmp_path, capture), expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert _problems(lines) == [
        (6, BROKER, 50, "50 bytes of the stream never captured (the other side acknowledged them)"),
        (7, BROKER, 0, "50 bytes after the gap at packet 6 passed over: read again from this packet, whose "
                       "segment starts a Kafka frame")]
    assert [(line["correlation_id"], line["packet"], line["count"]) for line in lines if line["type"] == "batch"] \
        == [(3, 7, 2)]


def test_a_capture_ending_before_any_frame_after_a_gap(tmp_path, kbatch):
    capture = (Capture()
               .send(request("Produce", 9, 12, produce(9, {"orders": {1: TWO}}), flexible=True), mss=40)
               .drop(3)
               .answer(response(12, produce_response(9, {"orders": {1: (0, 700)}}), flexible=True)))
    result = kbatch("pcap", "--format", "jsonl", _write(tmp_path, capture), expect=0)
    problems = _problems([json.loads(line) for line in result.out.splitlines()])
    assert problems[0] == (6, CLIENT, 40, "40 bytes of the stream never captured (the other side acknowledged them)")
    assert problems[-1] == (6, CLIENT, 0, "the capture ended before a segment after this gap started a Kafka frame "
                                          "(52 bytes passed over)")


def test_an_absurd_frame_size_is_resynced_at_the_next_request_and_response(tmp_path, kbatch):
    """Mid-connection the client sends a frame size of 0x7fffffff and the broker one of -1 (packets 5 and 6,
    each followed by junk and by a segment of more junk): each direction is a finding at its packet and is read
    again at the next segment that starts a Kafka frame, so request 13 and its response still pair."""
    junk = b"\xee" * 30
    capture = (Capture()
               .send(request("Produce", 9, 11, produce(9, {"orders": {0: TWO}}), flexible=True))
               .answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
               .send(b"\x7f\xff\xff\xff" + junk).answer(b"\xff\xff\xff\xff" + junk)
               .send(junk).answer(junk)
               .send(request("Produce", 9, 13, produce(9, {"orders": {0: TWO}}), flexible=True))
               .answer(response(13, produce_response(9, {"orders": {0: (0, 502)}}), flexible=True)))
    result = kbatch("pcap", "--format", "jsonl", _write(tmp_path, capture), expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    out_of_step = "not Kafka, or the stream is out of step; read again from the next segment that starts a frame"
    assert _problems(lines) == [
        (5, CLIENT, 0, f"a Kafka frame size of 2147483647 bytes (expected 4 to 104857600): {out_of_step}"),
        (6, BROKER, 0, f"a Kafka frame size of -1 bytes (expected 4 to 104857600): {out_of_step}"),
        (9, CLIENT, 0, "60 bytes after the absurd frame size at packet 5 passed over: read again from this packet, "
                        "whose segment starts a Kafka frame"),
        (10, BROKER, 0, "60 bytes after the absurd frame size at packet 6 passed over: read again from this "
                         "packet, whose segment starts a Kafka frame")]
    assert [(line["correlation_id"], line["packet"], line["assigned_offset"]) for line in lines
            if line["type"] == "batch"] == [(11, 3, 500), (13, 9, 502)]


def test_each_batch_line_has_its_own_partition_keys(tmp_path, kbatch):
    """A line's capture keys are kept from the line before only while its batch lies in the same Records field:
    partitions, topics and responses in turn, every line is json.dumps of its own item's dict."""
    from kbatch.ops.pcap import CaptureSummary, read_capture
    from kbatch.render.pcap import item_dict

    later = handmade.batch(2, [(None, b"third")])
    capture = (Capture()
               .send(request("Fetch", 12, 1, b"", flexible=True))
               .answer(response(1, fetch_response(12, {"orders": {0: later, 1: TWO + later}, "payments": {3: TWO}}),
                                flexible=True))
               .send(request("Fetch", 12, 2, b"", flexible=True))
               .answer(response(2, fetch_response(12, {"orders": {0: TWO + later}}), flexible=True)))
    path = _write(tmp_path, capture)
    lines = kbatch("pcap", "--format", "jsonl", path, expect=0).out.splitlines()
    with open(path, "rb") as stream:
        expected = [json.dumps(item_dict(path, item, False), ensure_ascii=False)
                    for item in read_capture(path, stream, CaptureSummary(path))]
    assert lines[:-1] == expected
    assert [(line["topic"], line["partition"], line["correlation_id"], line["base_offset"])
            for line in map(json.loads, lines[:-1])] == [
        ("orders", 0, 1, 2), ("orders", 1, 1, 0), ("orders", 1, 1, 2), ("payments", 3, 1, 0), ("orders", 0, 2, 0),
        ("orders", 0, 2, 2)]


def test_a_run_of_clean_batches_is_written_as_each_of_its_batches(tmp_path, kbatch):
    """Clean batches lying end to end in a Records field are written in one go (a CapturedRun): with a batch
    whose CRC fails and one with reserved bits between them, in a Produce request (offsets from the response,
    running on) and a Fetch response, each line is json.dumps of its own batch's dict, and the pure build
    writes the same bytes."""
    from kbatch.ops.pcap import CaptureSummary, read_capture
    from kbatch.render.pcap import item_dict
    from tests.helpers import ROOT, run_kbatch_pure

    later = handmade.batch(2, [(None, b"third")])
    bad_crc = _flipped(later, len(later) - 2)
    reserved = _patched(later, 21, (0x0100).to_bytes(2, "big"))
    records = TWO + later + bad_crc + TWO + reserved + later + TWO
    capture = (Capture()
               .send(request("Produce", 9, 11, produce(9, {"orders": {0: records}}), flexible=True))
               .answer(response(11, produce_response(9, {"orders": {0: (0, 500)}}), flexible=True))
               .send(request("Fetch", 12, 12, b"", flexible=True))
               .answer(response(12, fetch_response(12, {"orders": {1: records}}), flexible=True)))
    path = _write(tmp_path, capture)
    lines = kbatch("pcap", "--format", "jsonl", path, expect=1).out.splitlines()
    with open(path, "rb") as stream:
        expected = [json.dumps(item_dict(path, item, False), ensure_ascii=False)
                    for item in read_capture(path, stream, CaptureSummary(path))]
    assert lines[:-1] == expected
    batches = [json.loads(line) for line in lines if json.loads(line)["type"] == "batch"]
    assert [(line["direction"], line["assigned_offset"], line["crc_valid"], len(line["findings"]))
            for line in batches] == [
        ("produce", 500, True, 0), ("produce", 502, True, 0), ("produce", 503, False, 1), ("produce", 504, True, 0),
        ("produce", 506, True, 1), ("produce", 507, True, 0), ("produce", 508, True, 0),
        ("fetch", None, True, 0), ("fetch", None, True, 0), ("fetch", None, False, 1), ("fetch", None, True, 0),
        ("fetch", None, True, 1), ("fetch", None, True, 0), ("fetch", None, True, 0)]
    assert json.loads(lines[-1])["batch_count"] == 14
    # a process of its own, its stdout a file: the runs written by the compiled writer where it is built
    with open(tmp_path / "out.jsonl", "wb") as out:
        done = subprocess.run([sys.executable, "-m", "kbatch", "pcap", "--format", "jsonl", path], cwd=ROOT,
                              stdout=out, env={k: v for k, v in os.environ.items() if k != "KBATCH_PURE_PYTHON"})
    assert done.returncode == 1
    written = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    assert written.splitlines() == lines
    assert run_kbatch_pure(["pcap", "--format", "jsonl", path], expect=1).out == written


def test_a_lines_capture_keys_are_json_of_the_head_run_by_run():
    """The capture keys of a batch's line, encoded a run of keys at a time and the runs kept, are the JSON
    encoder's of the whole head (without its closing brace), whatever the values: hostile and non-UTF-8 names,
    None, floats, the same run with other values, more runs than are kept; a head of other keys is encoded
    whole."""
    from kbatch.render.pcap import _HeadEncoder

    encoder = _HeadEncoder()
    encoder.KEPT = 3

    def head(n: int, **changed) -> dict:
        values = {"type": "batch", "file": ["/tmp/a.pcap", "caf\u00e9 \udcff.pcap", 'q"\\.pcap'][n % 3],
                  "direction": "produce" if n % 2 else "fetch", "api": "Produce" if n % 2 else "Fetch",
                  "topic": [HOSTILE_TOPIC, None, "orders"][n % 3], "topic_id": [None, "AAAAAAAAAAAAAAAAAAAAAA"][n % 2],
                  "partition": n % 5, "api_version": 8 + n % 4, "correlation_id": -n, "client_id": [None, "\u2603"][n % 2],
                  "connection": "[::1]:9092 -> [::1]:5000", "packet": n, "packet_time": 1763800000.000851 + n / 7,
                  "records_pos": n * 61}
        values.update(changed)
        return values

    def whole(values: dict) -> bytes:
        return json.dumps(values, ensure_ascii=False)[:-1].encode("utf-8", "surrogateescape")

    for n in [*range(40), *range(40)]:
        assert encoder.encode(head(n)) == whole(head(n))
    assert all(len(kept) <= 3 for kept in encoder.kept)
    for odd in (head(1, records_pos=True), head(2, packet_time=float("nan")), head(3, packet_time=float("-inf")),
                head(4, partition=False, correlation_id=2 ** 70, client_id=""), head(5, packet_time=-0.0, packet=1.5)):
        assert encoder.encode(odd) == whole(odd)   # (values no head has: written as the encoder writes them)
    other = {**head(2), "extra": 1}
    assert encoder.encode(other) == whole(other)
    reordered = dict(reversed(list(head(3).items())))
    assert encoder.encode(reordered) == whole(reordered)


def test_a_lines_capture_keys_read_from_the_item_are_those_of_its_head():
    """encode_item, which reads a batch's values from it by the columns' expressions and makes no dict, writes what
    encode writes of pcap_batch_head's dict (less error_code and assigned_offset), whatever the values and however
    often they come again (more first runs than are kept); columns it cannot read so leave it to the dict."""
    from types import SimpleNamespace

    from kbatch.output._dicts import pcap_batch_head
    from kbatch.render.pcap import _HeadEncoder, _item_getters

    encoder, reference = _HeadEncoder(), _HeadEncoder()
    assert encoder.item_values is not None
    encoder.KEPT = 3

    def item(n: int, **changed) -> SimpleNamespace:
        values = {"api": ["Produce", "Fetch", "ShareFetch", None][n % 4], "topic": [HOSTILE_TOPIC, None, "orders"][n % 3],
                  "topic_id": [None, "AAAAAAAAAAAAAAAAAAAAAA"][n % 2], "partition": n % 5,
                  "request": SimpleNamespace(api_version=8 + n % 4, correlation_id=-n, client_id=[None, "\u2603"][n % 2]),
                  "connection": "[::1]:9092 -> [::1]:5000", "packet": n, "time": 1763800000.000851 + n / 7,
                  "records_pos": n * 61, "error_code": None, "assigned_offset": n}
        values.update(changed)
        found = SimpleNamespace(**values)
        found.direction = "produce" if found.api == "Produce" else "fetch"
        return found

    def dict_encoded(path: str, found) -> bytes:
        head = pcap_batch_head(path, found)
        del head["error_code"], head["assigned_offset"]
        return reference.encode(head)

    paths = ["/tmp/a.pcap", "caf\u00e9 \udcff.pcap", 'q"\\.pcap']
    for n in [*range(40), *range(40)]:
        assert encoder.encode_item(paths[n % 3], item(n)) == dict_encoded(paths[n % 3], item(n))
        # a run's head: the same, then error_code's key and value and assigned_offset's key
        errored = item(n, error_code=[None, 0, -1, 2 ** 70][n % 4])
        assert encoder.run_head(paths[n % 3], errored) == dict_encoded(paths[n % 3], errored) + \
            f', "error_code": {json.dumps(errored.error_code)}, "assigned_offset": '.encode()
    assert len(encoder.kept_first) <= 3 and all(len(kept) <= 3 for kept in encoder.kept)
    for odd in (item(1, records_pos=True), item(2, time=float("nan")), item(3, partition=False, packet=1.5),
                item(4, request=SimpleNamespace(api_version=2 ** 70, correlation_id=None, client_id=""))):
        encoder, reference = _HeadEncoder(), _HeadEncoder()   # (False is 0 to a kept run: values no batch has)
        assert encoder.encode_item(paths[0], odd) == dict_encoded(paths[0], odd)
    assert _item_getters(_HeadEncoder.RUNS, _HeadEncoder.KEYS[1:]) is None   # not pcap_batch_head's keys
