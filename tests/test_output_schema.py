"""Every line every command writes in --format jsonl, and every document of --format json, is what the JSON Schema
made from kbatch/output/columns.py says (kbatch/schema/kbatch-json-v1.schema.json): run on every fixture, on files
beside segments, on damaged inputs and on a file that cannot be read, each line is validated against it."""

from __future__ import annotations

import json
import os
import shutil

import jsonschema
import pytest

from kbatch.output import columns, docs
from tests.helpers import FIXTURES, expected_status, fixture_id, fixture_paths, run_kbatch

SCHEMA = json.loads(docs.SCHEMA_PATH.read_text())
DOCUMENT = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
LINE = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/line"})
# Every "type" a line may have: the kinds declared (each a _kind column opening its columns).
# every kind of line the declaration knows (kbatch.output.docs.LINE_KINDS), and dump's entries
DECLARED_KINDS = {kind[0].schema["const"] for kind in (columns.BATCH, columns.REGION)} | {
    kind_columns[0].schema["const"] for _, kind_columns, _ in docs.LINE_KINDS}

SEGMENTS = fixture_paths()
ORDERS = FIXTURES / "partition" / "orders-0"
SIDECARS = sorted(path for path in ORDERS.iterdir() if path.suffix != ".log") + \
    sorted((FIXTURES / "partition" / "__cluster_metadata-0").iterdir())
TXN = FIXTURES / "internal" / "txn"
OFFSETS = FIXTURES / "internal" / "__consumer_offsets-12"
DAMAGED_OFFSETS = FIXTURES / "internal" / "damaged" / "__consumer_offsets-0"


def _lines(args, capsys, monkeypatch, expect: int) -> list[dict]:
    return _valid_lines(args, run_kbatch(args, capsys, monkeypatch, expect=expect))


def _valid_lines(args, result) -> list[dict]:
    lines = [json.loads(line) for line in result.out.splitlines()]
    for line in lines:
        errors = sorted(LINE.iter_errors(line), key=str)
        assert not errors, (args, line, [error.message for error in errors][:3])
    return lines


def _document(args, capsys, monkeypatch, expect: int) -> dict:
    result = run_kbatch(args, capsys, monkeypatch, expect=expect)
    document = json.loads(result.out)
    errors = sorted(DOCUMENT.iter_errors(document), key=str)
    assert not errors, (args, [error.message for error in errors][:3])
    assert all(file["summary"]["damaged"] == bool(result.code) for file in document["files"]), args
    return document


@pytest.mark.parametrize("path", SEGMENTS, ids=fixture_id)
def test_every_segment_command_writes_lines_of_the_schema(path, capsys, monkeypatch):
    """dump (with and without records, both formats), verify-crc and grep on each fixture: every line fits, and
    the exit status says what the lines do: 1 where the summary says the file is damaged, else 0 (grep's: 0 where
    a record matched)."""
    for args, records in ((["dump", "--format", "jsonl"], False), (["dump", "--records", "--format", "jsonl"], True),
                          (["verify-crc", "--format", "jsonl"], False)):
        result = run_kbatch([*args, str(path)], capsys, monkeypatch, expect=expected_status(path, records))
        lines = _valid_lines(args, result)
        assert lines[-1]["type"] == "summary" and result.code == int(lines[-1]["damaged"]), args
        if records:   # grep's empty pattern selects each data record dump lists
            selects = any(line.get("records") and not line.get("is_control") for line in lines)
    for records in ([], ["--records"]):
        document = _document(["dump", *records, "--format", "json", str(path)], capsys, monkeypatch,
                             expected_status(path, bool(records)))
        assert len(document["files"]) == 1
    matches = _lines(["grep", "--format", "jsonl", "-e", "", str(path)], capsys, monkeypatch, 0 if selects else 1)
    assert run_kbatch(["grep", "-q", "-e", "", str(path)], capsys, monkeypatch).code == (0 if matches else 1)
    assert all(match["type"] == "record" for match in matches)


@pytest.mark.parametrize("path", SIDECARS, ids=fixture_id)
def test_dump_of_a_file_beside_a_segment_writes_lines_of_the_schema(path, capsys, monkeypatch):
    lines = _lines(["dump", "--format", "jsonl", str(path)], capsys, monkeypatch, 0)
    assert lines[-1]["type"] == "summary"
    _document(["dump", "--format", "json", str(path)], capsys, monkeypatch, 0)


def test_a_damaged_file_beside_a_segment_and_an_unreadable_one(tmp_path, capsys, monkeypatch):
    index = tmp_path / "00000000000000000000.index"
    index.write_bytes((ORDERS / "00000000000000000000.index").read_bytes()[:-3])   # cut inside an entry
    lines = _lines(["dump", "--format", "jsonl", str(index)], capsys, monkeypatch, 1)
    assert {line["type"] for line in lines} >= {"entry", "finding", "summary"}
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "pipe.log")
    for command in ("dump", "verify-crc"):
        lines = _lines([command, "--format", "jsonl", str(tmp_path / "fifo")], capsys, monkeypatch, 2)
        assert [line["type"] for line in lines] == ["error"], command


def test_every_other_command_writes_lines_of_the_schema(tmp_path, capsys, monkeypatch):
    """txn, producers, offsets, retention, replicas, diff and grep under read_committed, healthy and damaged: every line fits, and
    between them and the segment commands every declared kind of line is written."""
    seen = set()

    def lines(args, expect):
        got = _lines(args, capsys, monkeypatch, expect)
        seen.update(line["type"] for line in got)
        return got

    lines(["txn", "--format", "jsonl", str(TXN / "payments-0"), str(TXN / "__transaction_state-0")], 0)
    lines(["txn", "--format", "jsonl", str(ORDERS)], 0)
    lines(["producers", "--format", "jsonl", str(ORDERS)], 0)
    lines(["producers", "--format", "jsonl", str(TXN / "payments-0")], 0)
    lines(["offsets", "--format", "jsonl", str(OFFSETS)], 0)
    damaged_offsets = lines(["offsets", "--format", "jsonl", str(DAMAGED_OFFSETS)], 1)
    assert "finding" in {line["type"] for line in damaged_offsets}
    lines(["offsets", "--where", "billing", "--transactional-id", "tx-a", "--format", "jsonl"], 0)
    lines(["grep", "--isolation", "read_committed", "--format", "jsonl", "-e", "", str(ORDERS)], 0)
    lines(["grep", "--format", "jsonl", "-e", "", str(FIXTURES / "damaged-bitflip-record.log")], 0)
    same = lines(["diff", "--format", "jsonl", str(FIXTURES / "v2-none.log"), str(FIXTURES / "v2-none.log")], 0)
    assert [line["type"] for line in same] == ["summary"] and same[0]["same"] is True
    for other in ("damaged-bitflip-record.log", "v2-gzip.log", "v1-none.log"):
        lines(["diff", "--format", "jsonl", str(FIXTURES / "v2-none.log"), str(FIXTURES / other)], 1)
    index = tmp_path / "00000000000000000000.index"
    index.write_bytes((ORDERS / "00000000000000000000.index").read_bytes())
    lines(["dump", "--format", "jsonl", str(ORDERS / "00000000000000000027.snapshot"), str(index)], 0)
    lines(["dump", "--format", "jsonl", str(FIXTURES / "damaged-garbage-between.log")], 1)
    lines(["retention", "--format", "jsonl", "--config", "cleanup.policy=compact", str(ORDERS)], 0)
    # two brokers' copies of orders-0, the second without its last segment: they diverge
    for broker, names in (("b1", None), ("b2", [p.name for p in ORDERS.iterdir() if "53" not in p.name])):
        shutil.copytree(ORDERS, tmp_path / broker / "orders-0",
                        ignore=None if names is None else (lambda _, found, keep=names: [n for n in found if n not in keep]))
    lines(["replicas", "--format", "jsonl", str(tmp_path / "b1" / "orders-0"), str(tmp_path / "b2" / "orders-0")], 1)
    from tests.test_pcap import TWO, _as_written, _logdir, _produced, _write, damaged_capture   # kbatch pcap
    (tmp_path / "pcap").mkdir()
    lines(["pcap", "--records", "--format", "jsonl", _write(tmp_path / "pcap", damaged_capture())], 1)
    lines(["pcap", "--against", _logdir(tmp_path / "pcap", _as_written(TWO, 500)), "--format", "jsonl",
           _write(tmp_path / "pcap", _produced(TWO), "produced.pcap")], 0)
    os.mkfifo(tmp_path / "pipe.log")
    lines(["verify-crc", "--format", "jsonl", str(tmp_path)], 2)   # (a FIFO found under a directory: passed over)
    assert seen == DECLARED_KINDS


def test_a_line_the_declaration_does_not_know_is_refused():
    """The schema is closed: a key a writer added by hand, or one it left out, fails the test above."""
    line = {"type": "difference", "kind": "record-changed", "offset": 3, "field": "value", "a": "x", "b": "y",
            "a_pos": 1, "b_pos": 2, "a_value": None, "b_value": None, "differs_at": None}
    assert LINE.is_valid(line)
    assert not LINE.is_valid({**line, "extra": 1})
    assert not LINE.is_valid({key: value for key, value in line.items() if key != "kind"})
    assert not LINE.is_valid({**line, "type": "differences"})


# Each command's one JSON document besides dump's and pcap's (kbatch.output.docs.DOCUMENTS): its own validator.
DOCUMENTS = {name: jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"})
             for name, _, _ in docs.DOCUMENTS}


def assert_a_document_of_the_schema(document: dict, name: str) -> None:
    """``document`` fits #/$defs/``name`` (and the schema's top level, which takes each document too)."""
    for validator in (DOCUMENTS[name], DOCUMENT):
        errors = sorted(validator.iter_errors(document), key=str)
        assert not errors, (name, [error.message for error in errors][:3])


def _stats_document(args, capsys, monkeypatch, expect: int) -> dict:
    document = json.loads(run_kbatch(["stats", "--format", "json", *args], capsys, monkeypatch, expect=expect).out)
    assert_a_document_of_the_schema(document, "stats_document")
    return document


@pytest.mark.parametrize("path", SEGMENTS, ids=fixture_id)
def test_stats_writes_a_document_of_the_schema(path, capsys, monkeypatch):
    """stats --format json, plain and with --what-if --recompress, on each fixture: the document fits, and its
    damaged key is what the exit status says."""
    for what_if in ([], ["--what-if", "--recompress"]):
        document = _stats_document([*what_if, str(path)], capsys, monkeypatch, expected_status(path))
        assert document["damaged"] == bool(expected_status(path)) and ("what_if" in document) == bool(what_if)


def test_stats_of_every_kind_of_batch_writes_every_declared_key():
    """Over the fixtures together every key of the stats document and its parts is written (a v0/v1 layout's
    keys among them), so the schema's closed objects are held to real output, not to keys never written."""
    from kbatch.output.jsonout import stats_dict
    from kbatch.ops.reencode import WhatIf
    from kbatch.ops.stats import SegmentStats, collect

    stats, what_if = SegmentStats(), WhatIf(recompress=True)
    for path in SEGMENTS:
        with open(path, "rb") as stream:
            collect(stats, str(path), stream, what_if=what_if)
    document = stats_dict(stats, what_if)
    assert DOCUMENTS["stats_document"].is_valid(document)
    parts = {"stats_file": document["files"], "stats_share": document["stored"] + document["inflated"],
             "stats_overhead": [document["record_overhead"]],
             "stats_bucket": document["records_per_batch"] + document["batch_sizes"],
             "stats_by_magic": document["by_magic"], "stats_by_codec": document["by_codec"],
             "stats_by_producer": document["by_producer"], "what_if": [document["what_if"]],
             "what_if_stored": [document["what_if"]["stored"]], "what_if_left_out": [document["what_if"]["left_out"]],
             "what_if_headers_first": [document["what_if"]["headers_first"]],
             "what_if_layout": document["what_if"]["layouts"], "stats_document": [document]}
    stats_kinds = [kind for kind in docs.DOCUMENT_KINDS + docs.DOCUMENTS if not kind[0].startswith("scan_")]
    assert set(parts) == {name for name, _, _ in stats_kinds}   # (scan's: test_a_scan_report_is_a_document_of_the_schema)
    for name, kind_columns, _ in stats_kinds:
        assert {key for each in parts[name] for key in each} == set(columns.names(kind_columns)), name
    assert [layout["layout"] for layout in document["what_if"]["layouts"]] == ["v0", "v1", "v2", "v3"]
    assert "headers_dropped" in document["what_if"]["layouts"][0] and "headers_dropped" not in \
        document["what_if"]["layouts"][2]


def test_a_stats_document_the_declaration_does_not_know_is_refused(capsys, monkeypatch):
    document = _stats_document([str(FIXTURES / "v2-gzip.log")], capsys, monkeypatch, 0)
    validator = DOCUMENTS["stats_document"]
    assert not validator.is_valid({**document, "extra": 1})
    assert not validator.is_valid({key: value for key, value in document.items() if key != "stored"})
    assert not validator.is_valid({**document, "stored": [{**document["stored"][0], "extra": 1}]})
    assert not validator.is_valid({**document, "by_producer": [{**document["by_producer"][0], "producer_id": "x"}]})


def test_a_scan_report_is_a_document_of_the_schema():
    """scan's report as scan_dict writes it (what run_scan returns; tests/test_scan.py and test_partition_scan.py
    hold real scans to the schema on Spark): every declared key, and nothing else, fits."""
    from kbatch.output.jsonout import scan_dict
    from kbatch.spark.report import Between, CrossChecks, PartitionReport, ScanReport

    def partition(topic, checks, **fields):
        return PartitionReport(**{
            "topic": topic, "partition": 0, "segments": 2, "batches": 8, "records": 22, "bytes": 5684,
            "compression_ratio": None, "corrupt_batches": 0, "damaged_segments": [], "offset_gaps": [],
            "offset_overlaps": [], "first_offset": 0, "last_offset": 21, "first_timestamp": 1700000000000,
            "last_timestamp": 1700000000302, "producers": 1, "producer_breaks": {}, "open_transactions": [],
            "unknown_outcome_transactions": [], "cross_checks": checks, **fields})

    report = ScanReport("/tmp/scan", ["batches", "findings"], 3, 9000, [
        partition("payments", CrossChecks(1, 0, {"txnindex-missing": 1}), damaged_segments=["p/0.log"],
                  offset_gaps=[Between("p/0.log", "p/9.log", 5, 8)], compression_ratio=3.37,
                  producer_breaks={"producer-sequence-gap": 2}, open_transactions=[4009],
                  unknown_outcome_transactions=[4010]),
        partition(None, None, partition=None, first_offset=None, last_offset=None)])
    document = scan_dict(report)
    assert_a_document_of_the_schema(document, "scan_document")
    assert document["damaged_segments"] == ["p/0.log"] and document["failed_cross_checks"] == ["payments-0"]
    first = document["partitions"][0]
    assert tuple(document) == columns.names(columns.SCAN) and tuple(first) == columns.names(columns.SCAN_PARTITION)
    assert first["offset_gaps"] == [{"after": "p/0.log", "before": "p/9.log", "from": 5, "to": 8}]
    assert first["cross_checks"] == {"errors": 1, "warnings": 0, "findings": {"txnindex-missing": 1}}
    validator = DOCUMENTS["scan_document"]
    assert not validator.is_valid({**document, "extra": 1})
    assert not validator.is_valid({**document, "partitions": [{**first, "offset_gaps": [{"from": 5}]}]})
    assert not validator.is_valid({**document, "partitions": [{key: value for key, value in first.items()
                                                               if key != "producers"}]})
