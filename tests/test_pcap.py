"""``kbatch pcap``: the command on captures built from Kafka's definitions (tests/capture_builder.py)."""

from __future__ import annotations

import json

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


def test_a_damaged_batch_exits_1_and_records_come_with_records(tmp_path, kbatch):
    path = _write(tmp_path, damaged_capture())
    result = kbatch("pcap", "--records", "--format", "jsonl", path, expect=1)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert all(LINE.is_valid(line) for line in lines)
    good, bad, summary = lines
    assert good["topic"] == HOSTILE_TOPIC and good["client_id"] == HOSTILE_CLIENT.decode()
    assert [record["value"] for record in good["records"]] == [{"utf8": "v1"}, {"utf8": "v2"}]
    assert (bad["crc_valid"], [f["code"] for f in bad["findings"]], bad["error_code"], bad["assigned_offset"]) == (
        False, ["crc-mismatch"], 2, None)
    assert summary["findings"] == {"crc-mismatch": 1} and summary["damaged"] is True


def test_json_is_one_document_of_the_schema(tmp_path, kbatch):
    clean, damaged = _write(tmp_path, clean_capture(), "a.pcap"), _write(tmp_path, damaged_capture(), "b.pcap")
    document = json.loads(kbatch("pcap", "--format", "json", clean, damaged, expect=1).out)
    assert not list(DOCUMENT.iter_errors(document))
    assert [(capture["file"], len(capture["entries"]), capture["summary"]["damaged"])
            for capture in document["captures"]] == [(clean, 3, False), (damaged, 2, True)]


def test_another_port_and_usage_errors(tmp_path, kbatch):
    moved = Capture(port=19092).send(request("Produce", 9, 1, produce(9, {"orders": {0: TWO}}), flexible=True))
    path = _write(tmp_path, moved)
    assert '"partition": 0' in kbatch("pcap", "--format", "jsonl", path, expect=0).out   # (its first bytes)
    assert '"partition": 0' in kbatch("pcap", "--port", "19092", "--format", "jsonl", path, expect=0).out
    assert "--port" in kbatch("pcap", "--port", "0", path, expect=2).err
    assert "cannot read" in kbatch("pcap", str(tmp_path / "missing.pcap"), expect=2).err
    (tmp_path / "notes.txt").write_bytes(b"not a capture at all, just text\n")
    assert "not a pcap or pcapng file" in kbatch("pcap", str(tmp_path / "notes.txt"), expect=2).err


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
    result = kbatch("pcap", "--extract", str(out), "--format", "jsonl", _write(tmp_path, capture), expect=0)
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


def test_a_hostile_topic_name_never_leaves_the_extract_directory():
    from kbatch.ops.pcap import directory_name

    assert directory_name("orders.v2_x-y", 3) == "orders.v2_x-y-3"
    assert directory_name("..", 0) == "%2E%2E-0" and directory_name("", 1) == "%-1"
    assert directory_name("a/../b\x1b", 2) == "a%2F%2E%2E%2Fb%1B-2"
    assert "/" not in directory_name("/etc/passwd", 0) and directory_name("é", 0) == "%C3%A9-0"
