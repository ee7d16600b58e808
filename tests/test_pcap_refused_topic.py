"""``kbatch pcap`` without --against: a topic name Kafka refuses (Topic.validate; kbatch.files.inputs.topic_refused)
in a Produce request, or over records in a Fetch response, is a ``topic-refused`` finding -- an error, so exit 1 --
at the name's bytes in the message, beneath the topic's batches, the name escaped where a person reads it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("dpkt")

from tests import handmade  # noqa: E402
from tests.capture_builder import Capture, fetch_response, produce, produce_response, request, response  # noqa: E402
from tests.test_output_schema import LINE  # noqa: E402

TWO = handmade.batch(0, [(b"k1", b"v1"), (b"k2", b"v2")], producer_id=7, producer_epoch=0, base_sequence=0)
NOT_LEGAL = "it contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
EXPECTED = "a topic name Kafka takes (Topic.validate: 1 to 249 characters of [a-zA-Z0-9._-], not '.' or '..')"
# an escape sequence, a line end that would forge a line, a bidi override
HOSTILE = "evil\x1b[31m\nFORGED\u202e"


def _write(tmp_path, capture: Capture, name: str = "traffic.pcap") -> str:
    path = tmp_path / name
    path.write_bytes(capture.pcap())
    return str(path)


def _lines(kbatch, path: str, *args: str, expect: int) -> list[dict]:
    lines = [json.loads(line) for line in kbatch("pcap", "--format", "jsonl", *args, path, expect=expect).out.splitlines()]
    assert all(LINE.is_valid(line) for line in lines)
    return lines


def _findings(lines: list[dict]) -> list[dict]:
    return [line for line in lines if line["type"] == "finding"]


def _produced(topics: dict, version: int = 9, acks: int = -1) -> tuple[Capture, bytes]:
    """A Produce request of TWO to partition 0 of each topic, answered (but with acks=0); and its frame (the
    message from after its size field, where a finding's positions count from)."""
    flexible = version >= 9
    sent = request("Produce", version, 11, produce(version, {topic: {0: TWO} for topic in topics}, acks=acks),
                   flexible=flexible)
    capture = Capture().send(sent)
    if acks != 0:
        capture.answer(response(11, produce_response(version, {topic: {0: (3 if topics[topic] else 0, 500)}
                                                               for topic in topics}), flexible=flexible))
    return capture, sent[4:]


@pytest.mark.parametrize("version", [3, 9])   # a string's length as an INT16, and (flexible) as a varint
def test_a_produce_request_naming_a_topic_kafka_refuses_is_an_error_at_the_name(tmp_path, kbatch, version):
    """Legal names beside it ("...", 249 characters) are no finding; the refused one is said once, after its
    batch, with its packet, connection, api and topic, at the name's bytes (length prefix included) in the
    request, the field its path in the message."""
    topics = {"orders": False, "...": False, "a" * 249: False, "../escape": True}
    capture, frame = _produced(topics, version)
    lines = _lines(kbatch, _write(tmp_path, capture), expect=1)
    [finding] = _findings(lines)
    assert {key: finding[key] for key in ("code", "severity", "field", "expected", "actual", "packet", "connection",
                                          "api", "topic", "topic_id", "partition", "inner_pos")} == {
        "code": "topic-refused", "severity": "error", "field": "ProduceRequest.topicData[3].name",
        "expected": EXPECTED, "actual": f"'../escape': {NOT_LEGAL}", "packet": 3,
        "connection": "127.0.0.1:40000 -> 127.0.0.1:9092", "api": "Produce", "topic": "../escape", "topic_id": None,
        "partition": None, "inner_pos": None}
    prefix = (len("../escape") + 1).to_bytes(1, "big") if version >= 9 else len("../escape").to_bytes(2, "big")
    assert finding["entry_pos"] == finding["pos"]
    assert frame[finding["pos"]:finding["pos"] + finding["size"]] == prefix + b"../escape"
    # beneath its topic's batch, after the batches of the topics before it
    assert [(line["type"], line["topic"]) for line in lines[:-1]] == [
        ("batch", "orders"), ("batch", "..."), ("batch", "a" * 249), ("batch", "../escape"), ("finding", "../escape")]
    summary = lines[-1]
    assert (summary["findings"], summary["errors"], summary["damaged"]) == ({"topic-refused": 1}, 1, True)


@pytest.mark.parametrize("topic, why", [
    ("", "the empty string is not allowed"),
    (".", "'.' is not allowed"),
    ("..", "'..' is not allowed"),
    ("a" * 250, "a name of 250 characters is longer than the max allowed length 249"),
    ("orders v2", NOT_LEGAL),
    ("caf\u00e9", NOT_LEGAL),
])
def test_each_of_kafkas_reasons_is_said(tmp_path, kbatch, topic, why):
    """Topic.detectInvalidTopic's reasons, as topic_refused gives them; a name longer than any Kafka allows is
    shown by its first 249 characters (the topic key holds it whole)."""
    capture, _ = _produced({topic: True})
    [finding] = _findings(_lines(kbatch, _write(tmp_path, capture), expect=1))
    shown = f"'{topic}'" if len(topic) <= 249 else f"'{topic[:249]}'... (the first 249 of its {len(topic)} characters)"
    assert (finding["code"], finding["actual"], finding["topic"]) == ("topic-refused", f"{shown}: {why}", topic)


def test_a_request_sent_with_acks_0_is_told_too(tmp_path, kbatch):
    """No response comes (the broker sends none for acks=0): the finding comes out with the request's batches."""
    capture, _ = _produced({"a/b": True}, acks=0)
    lines = _lines(kbatch, _write(tmp_path, capture), expect=1)
    assert [(line["type"], line.get("code")) for line in lines] == [
        ("batch", None), ("finding", "topic-refused"), ("summary", None)]
    assert lines[0]["error_code"] is None


def test_a_fetch_responses_records_under_a_topic_kafka_refuses_are_an_error(tmp_path, kbatch):
    """A broker reads records only from a partition's log, which no such name has: records under one are damage
    (or no broker sent them).  The same name with no records is what a broker answers a Fetch request naming a
    topic it has no log of (UNKNOWN_TOPIC_OR_PARTITION, the name as the request gave it): no finding."""
    capture = (Capture()
               .send(request("Fetch", 12, 1, b"", flexible=True))
               .answer(response(1, fetch_response(12, {"orders": {0: TWO}, "a/b": {0: TWO, 1: TWO}}), flexible=True))
               .send(request("Fetch", 12, 2, b"", flexible=True))
               .answer(response(2, fetch_response(12, {"a/b": {0: b""}}, error=3), flexible=True)))
    path = _write(tmp_path, capture)
    lines = _lines(kbatch, path, expect=1)
    [finding] = _findings(lines)
    assert (finding["code"], finding["field"], finding["packet"], finding["api"], finding["topic"], finding["actual"],
            finding["connection"]) == ("topic-refused", "FetchResponse.responses[1].topic", 4, "Fetch", "a/b",
                                       f"'a/b': {NOT_LEGAL}", "127.0.0.1:9092 -> 127.0.0.1:40000")
    assert [(line["type"], line["topic"], line["partition"]) for line in lines[:-1]] == [
        ("batch", "orders", 0), ("batch", "a/b", 0), ("batch", "a/b", 1), ("finding", "a/b", None)]
    assert lines[-1]["findings"] == {"topic-refused": 1}
    table = kbatch("pcap", path, expect=1).out
    assert table.count("error topic-refused (packet 4, pos ") == 1


def test_a_hostile_topic_name_reaches_the_terminal_and_json_escaped(tmp_path, kbatch, monkeypatch):
    """Escapes, a line end and a bidi override in the name: the table shows each as an escape (no line forged,
    nothing a terminal acts on), the finding beneath the batch line that names the connection's client; JSON
    holds the name as captured, in JSON's own escapes."""
    monkeypatch.setenv("COLUMNS", "200")
    capture, _ = _produced({HOSTILE: True})
    path = _write(tmp_path, capture)
    table = kbatch("pcap", path, expect=1).out
    assert "\x1b" not in table and "\u202e" not in table
    assert not any(line.startswith("FORGED") for line in table.splitlines())
    lines = table.splitlines()
    assert lines[1].endswith("client producer-1") and "produce evil\\x1b[31m\\nFORGED\\u202e-0" in lines[2]
    said = " ".join(line.strip() for line in lines[3:-1])
    assert said.startswith("error topic-refused (packet 3, pos ")
    assert f"expected {EXPECTED}, found 'evil\\x1b[31m\\nFORGED\\u202e': {NOT_LEGAL}" in said
    assert "1 topic-refused" in lines[-1]
    written = kbatch("pcap", "--format", "jsonl", path, expect=1).out
    assert "\x1b" not in written and '"topic": "evil\\u001b[31m\\nFORGED\u202e"' in written
    [finding] = _findings([json.loads(line) for line in written.splitlines()])
    assert (finding["topic"], finding["actual"]) == (HOSTILE, f"'{HOSTILE}': {NOT_LEGAL}")
    document = json.loads(kbatch("pcap", "--format", "json", path, expect=1).out)
    assert [entry["actual"] for entry in document["captures"][0]["entries"] if entry["type"] == "finding"] == [
        f"'{HOSTILE}': {NOT_LEGAL}"]


def test_with_against_the_finding_is_said_beside_the_match(tmp_path, kbatch):
    """--against still leaves the batch unmatched, counted topic-refused; the finding about the request is said
    as without it."""
    logs = tmp_path / "logs"
    logs.mkdir()
    capture, _ = _produced({"../outside": True})
    lines = _lines(kbatch, _write(tmp_path, capture), "--against", str(logs), expect=1)
    assert [(line["type"], line.get("code"), line.get("hop")) for line in lines[:-1]] == [
        ("batch", None, None), ("match", None, None), ("finding", "topic-refused", None)]
    assert (lines[-1]["findings"], lines[-1]["hops"]) == ({"topic-refused": 1}, {"topic-refused": 1})
