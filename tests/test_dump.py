"""``kbatch dump``: what users read, pinned by snapshots on representative inputs; what every input's JSON
holds, checked field by field against what its encoder wrote; and how it behaves at the edges."""

from __future__ import annotations

import base64
import importlib
import json
import re
import zlib

import crc32c
import pytest

from .helpers import FIXTURES, REPRESENTATIVE, ROOT, expected_status, fixture_id, fixture_paths, sidecar

ALL = fixture_paths()


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("fmt", ["table", "dumplog"])
@pytest.mark.parametrize("path", REPRESENTATIVE, ids=fixture_id)
def test_dump_text_snapshot(path, fmt, kbatch, text_snapshot):
    shown = []
    for extra in ([], ["--records"]):
        args = ["dump", "--format", fmt, *extra, _rel(path)]
        result = kbatch(*args, expect=expected_status(path, records=bool(extra)))
        # only dumplog writes to stderr: Kafka's "Non-consecutive offsets" report, under the absolute path
        assert result.err == "" or fmt == "dumplog"
        err = result.err.replace(str(ROOT) + "/", "")
        shown.append(f"$ kbatch {' '.join(args)}\n{result.out}{'[stderr]' + chr(10) + err if err else ''}"
                     f"(exit {result.code})\n")
    assert "\n".join(shown) == text_snapshot


# -- every input: the JSON output holds what the independent encoder wrote (the sidecars), field by field --

# A sidecar's header field (tests/test_fixtures.py reads the same from the reader) under its JSON key; the
# v2 sidecars use the house names, the vectors Kafka's camelCase ones.
_V2_KEYS = {
    "base_offset": "stored_offset", "batch_length": "batch_length", "partition_leader_epoch": "partition_leader_epoch",
    "magic": "magic", "crc": "crc", "attributes": "attributes", "codec": "codec", "timestamp_type": "timestamp_type",
    "transactional": "is_transactional", "control": "is_control", "last_offset_delta": "last_offset_delta",
    "base_timestamp": "base_timestamp", "max_timestamp": "max_timestamp", "producer_id": "producer_id",
    "producer_epoch": "producer_epoch", "base_sequence": "base_sequence", "records_count": "count"}
_LEGACY_KEYS = {"offset": "stored_offset", "message_size": "batch_length", "crc": "crc", "magic": "magic",
                "attributes": "attributes", "codec": "codec", "timestamp": "max_timestamp",
                "timestamp_type": "timestamp_type"}
_VECTOR_V2_KEYS = {
    "file_pos": "pos", "size": "size", "baseOffset": "stored_offset", "batchLength": "batch_length",
    "partitionLeaderEpoch": "partition_leader_epoch", "magic": "magic", "crc": "crc", "crc_valid": "crc_valid",
    "attributes": "attributes", "codec": "codec", "timestampType": "timestamp_type",
    "isTransactional": "is_transactional", "isControl": "is_control", "lastOffsetDelta": "last_offset_delta",
    "baseTimestamp": "base_timestamp", "maxTimestamp": "max_timestamp", "producerId": "producer_id",
    "producerEpoch": "producer_epoch", "baseSequence": "base_sequence", "recordCount": "count"}
_VECTOR_LEGACY_KEYS = {"file_pos": "pos", "size": "size", "offset": "stored_offset", "messageSize": "batch_length",
                       "magic": "magic", "crc": "crc", "crc_valid": "crc_valid", "attributes": "attributes",
                       "codec": "codec", "timestamp": "max_timestamp"}


def _hex(value: dict | None) -> str | None:
    """A key or value as written in JSON ({"utf8"|"hex"|"base64": ...}, or null), as hex."""
    if value is None:
        return None
    (mode, text), = [(mode, value[mode]) for mode in ("utf8", "hex", "base64") if mode in value]
    return {"utf8": lambda: text.encode(), "hex": lambda: bytes.fromhex(text),
            "base64": lambda: base64.b64decode(text)}[mode]().hex()


def _record(record: dict) -> tuple:
    headers = [(_hex(header["key"]) if isinstance(header["key"], dict) else header["key"].encode().hex(),
                _hex(header["value"])) for header in record["headers"]]
    return record["offset"], record["timestamp"], _hex(record["key"]), _hex(record["value"]), headers


def _sidecar_record(record: dict) -> tuple:
    """A record as a sidecar writes it: bytes as {"hex": ...} (with "utf8" beside it in the vectors'), a header's
    value as bytes or, in the vectors', as text."""
    def hex_of(value):
        return value if value is None else value["hex"] if isinstance(value, dict) else value.encode().hex()
    headers = [(key.encode().hex(), hex_of(value)) for key, value in record["headers"]]
    return record["offset"], record["timestamp"], hex_of(record["key"]), hex_of(record["value"]), headers


def _computed_crc(data: bytes, batch: dict) -> int:
    """The CRC of an entry's bytes, worked here: CRC-32C from attributes on for v2 (DefaultRecordBatch), CRC-32
    from magic on for v0/v1 (LegacyRecord), both to the end of the entry."""
    end = batch["pos"] + batch["size"]
    if batch["magic"] == 2:
        return crc32c.crc32c(data[batch["pos"] + 21:end])
    return zlib.crc32(data[batch["pos"] + 16:end])


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_dump_jsonl_holds_what_went_in(path, kbatch):
    data = path.read_bytes()
    result = kbatch("dump", "--format", "jsonl", "--records", _rel(path), expect=expected_status(path))
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert all(line["file"] == _rel(path) for line in lines)
    batches = [line for line in lines if line["type"] == "batch"]
    findings = [line for line in lines if line["type"] == "finding"] + [
        finding for batch in batches for finding in batch["findings"]]
    summary = lines[-1]
    assert [line["type"] for line in lines].count("summary") == 1 and summary["type"] == "summary"
    by_pos = {batch["pos"]: batch for batch in batches}
    meta = sidecar(path)
    if "vector_expected" in meta:
        vector = meta["vector_expected"]
        assert [batch["pos"] for batch in batches] == [batch["file_pos"] for batch in vector["batches"]]
        for expected in vector["batches"]:
            keys = _VECTOR_V2_KEYS if expected["magic"] == 2 else _VECTOR_LEGACY_KEYS
            got = by_pos[expected["file_pos"]]
            assert {key: got[name] for key, name in keys.items() if key in expected} == \
                {key: expected[key] for key in keys if key in expected}
        assert [_record(record) for batch in batches for record in batch["records"]] == \
            [_sidecar_record(record) for batch in vector["batches"] for record in batch["records"]]
        assert ("truncated" in {finding["code"] for finding in findings}) == bool(vector["trailing_bytes"])
    else:
        for fields in meta["header_fields"]:
            got = by_pos.get(fields["pos"])
            if got is None:
                assert meta["damaged"], f"no entry at {fields['pos']}"
                continue
            keys = _V2_KEYS if fields["magic"] == 2 else _LEGACY_KEYS
            assert {key: got[name] for key, name in keys.items() if key in fields} == \
                {key: fields[key] for key in keys if key in fields}, f"entry at {fields['pos']}"
            if fields["magic"] == 2:
                assert got["delete_horizon_ms"] == (fields["base_timestamp"] if fields["has_delete_horizon"] else None)
        for entry in meta["expected"]["entries"]:
            got = by_pos[entry["pos"]]
            assert {key: got[key] for key in ("size", "magic", "codec", "base_offset", "last_offset", "crc_valid")} \
                == {key: entry[key] for key in ("size", "magic", "codec", "base_offset", "last_offset", "crc_valid")}
            assert [_record(record) for record in got["records"]] == [_sidecar_record(record) for record in entry["records"]]
        assert {(finding["code"], finding["entry_pos"]) for finding in meta["expected"]["findings"]} <= \
            {(finding["code"], finding["entry_pos"]) for finding in findings}
    for batch in batches:
        assert batch["crc_computed"] == _computed_crc(data, batch)
        assert batch["crc_valid"] == (batch["crc"] == batch["crc_computed"])
        assert batch["count"] == len(batch["records"]) or batch["findings"]
    assert (summary["size"], summary["batch_count"], summary["record_count"], summary["batch_bytes"]) == \
        (len(data), len(batches), sum(batch["count"] for batch in batches), sum(batch["size"] for batch in batches))
    assert summary["damaged"] == bool(expected_status(path))


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_dump_json_document_is_the_lines_and_the_stored_bytes(path, kbatch):
    expect = expected_status(path)
    lines = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", "--records", _rel(path),
                                                 expect=expect).out.splitlines()]
    document = json.loads(kbatch("dump", "--format", "json", "--records", _rel(path), expect=expect).out)
    assert document["kbatch_json_version"] == 1
    (file,) = document["files"]
    data = path.read_bytes()
    assert (file["file"], file["size"]) == (_rel(path), len(data))
    for entry in file["entries"]:   # each entry's stored bytes, for encode-from-json: exactly the file's
        if "payload" in entry:   # what follows the header: from the key's length on (v0, v1), the records (v2)
            header = {0: 18, 1: 26, 2: 61}[entry["magic"]]   # LegacyRecord's key-length offset; RECORDS_OFFSET
            assert _hex(entry["payload"]) == data[entry["pos"] + header:entry["pos"] + entry["size"]].hex()
        if "raw" in entry:
            assert _hex(entry["raw"]) == data[entry["pos"]:entry["pos"] + entry["size"]].hex()
    entries = [{key: value for key, value in entry.items() if key not in ("payload", "raw")} for entry in file["entries"]]
    assert entries == [{key: value for key, value in line.items() if key != "file"} for line in lines[:-1]]
    assert {"type": "summary", "file": _rel(path), **file["summary"]} == lines[-1]


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_dump_text_shows_every_entry_and_finding(path, kbatch):
    """The table and Kafka's dumplog lines, on every input: each entry's position, offsets, count, size, codec
    and CRC as the JSON gives them (checked against the sidecars above), each finding where it lies, and the
    totals."""
    expect = expected_status(path)
    lines = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", "--records", _rel(path),
                                                 expect=expect).out.splitlines()]
    batches = [line for line in lines if line["type"] == "batch"]
    findings = [line for line in lines if line["type"] == "finding"] + [
        finding for batch in batches for finding in batch["findings"]]
    table = kbatch("dump", "--records", _rel(path), expect=expect).out
    dumplog = kbatch("dump", "--format", "dumplog", "--records", _rel(path), expect=expect).out
    for batch in batches:
        mark = "✓" if batch["crc_valid"] else "✗"
        # (where offsets are lost, as behind a broken CRC, the span says so: it starts at the first one still)
        assert re.search(rf"batch @ pos {batch['pos']}  offsets {batch['base_offset']}\S*  count {batch['count']}  "
                         rf"magic {batch['magic']}  {batch['codec']}  {batch['size']} bytes  crc {batch['crc']} {mark}",
                         table)
        first = f"baseOffset: {batch['base_offset']} lastOffset: {batch['last_offset']} count: {batch['count']} " \
            if batch["magic"] == 2 else f"offset: {batch['stored_offset']} position: {batch['pos']} "
        assert first in dumplog
        assert f"position: {batch['pos']} " in dumplog
        assert f"size: {batch['size']} magic: {batch['magic']} compresscodec: {batch['codec']} crc: {batch['crc']} " \
               f"isvalid: {str(batch['crc_valid']).lower()}" in dumplog
        offsets = [record["offset"] for record in batch["records"]]
        assert all(f"| offset: {offset} " in dumplog for offset in offsets)
    for finding in findings:
        assert f"{finding['code']} at pos {finding['pos']}" in table
        assert f"{finding['code']} at pos {finding['pos']}" in dumplog
    summary = lines[-1]
    def many(count, noun):
        return f"{count} {noun}{'' if count == 1 else 'es' if noun.endswith('h') else 's'}"
    assert f"{_rel(path)}: {many(summary['batch_count'], 'batch')}, {many(summary['record_count'], 'record')}, " \
           f"{summary['size']} bytes" in table


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.log")), ids=fixture_id)
def test_exit_status_says_whether_damage_was_found(path, kbatch):
    for fmt in ("table", "jsonl", "json", "dumplog"):
        result = kbatch("dump", "--records", "--format", fmt, _rel(path))
        assert result.code == expected_status(path)
        assert "Traceback" not in result.out + result.err


def test_batches_after_damage_are_still_dumped(kbatch):
    result = kbatch("dump", "--format", "jsonl", "fixtures/damaged-garbage-between.log")
    lines = [json.loads(line) for line in result.out.splitlines()]
    kinds = [(line["type"], line.get("code")) for line in lines]
    assert kinds == [("batch", None), ("batch", None), ("finding", "resync"),
                     ("batch", None), ("batch", None), ("summary", None)]
    assert result.code == 1


def test_json_lines_and_json_document_agree(kbatch):
    lines = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", "-r", "fixtures/v2-headers.log", expect=0)
             .out.splitlines()]
    document = json.loads(kbatch("dump", "--format", "json", "-r", "fixtures/v2-headers.log", expect=0).out)
    # the document also carries each entry's stored bytes ("payload", "raw"), for encode-from-json
    entries = [{k: v for k, v in entry.items() if k not in ("payload", "raw")}
               for entry in document["files"][0]["entries"]]
    assert [{k: v for k, v in line.items() if k != "file"} for line in lines[:-1]] == entries
    assert lines[-1]["type"] == "summary"


def test_headers_show_keys_and_values(kbatch):
    out = kbatch("dump", "--format", "jsonl", "-r", "fixtures/v2-headers.log", expect=0).out
    headers = [header for line in out.splitlines() for record in json.loads(line).get("records", [])
               for header in record["headers"]]
    # duplicate keys, null values, non-ASCII keys and values, an empty key: all shown as they are
    assert [header["value"] for header in headers if header["key"] == {"utf8": "trace"}] == \
        [{"utf8": "abc"}, {"utf8": "def"}, {"utf8": ""}]
    assert {"key": {"utf8": "null-value"}, "value": None} in headers
    assert {"key": {"utf8": "ключ"}, "value": {"utf8": "значение"}} in headers
    assert {"key": {"utf8": ""}, "value": {"utf8": "empty key"}} in headers


def test_control_records_show_commit_and_coordinator_epoch(kbatch):
    out = kbatch("dump", "-r", "fixtures/v2-txn-commit.log", expect=0).out
    assert "COMMIT coordinatorEpoch=7" in out
    assert "ABORT coordinatorEpoch=9" in kbatch("dump", "-r", "fixtures/v2-txn-abort.log", expect=0).out


@pytest.mark.parametrize("mode,expected", [
    ("hex", {"hex": "6b65792d30"}), ("base64", {"base64": "a2V5LTA="}), ("utf8", {"utf8": "key-0"}),
])
def test_decode_modes_in_json(mode, expected, kbatch):
    out = kbatch("dump", "--format", "jsonl", "-r", "--decode", mode, "fixtures/v2-none.log", expect=0).out
    assert json.loads(out.splitlines()[0])["records"][0]["key"] == expected


def test_long_values_are_cut_unless_full(kbatch):
    cut = kbatch("dump", "-r", "fixtures/v2-none.log", expect=0).out
    full = kbatch("dump", "-r", "--full", "fixtures/v2-none.log", expect=0).out
    big = [record for entry in sidecar(FIXTURES / "v2-none.log")["expected"]["entries"]
           for record in entry["records"] if record["value"] and len(record["value"]["hex"]) > 200]
    assert len(big) == 2
    for record in big:   # cut to a prefix and its whole size; whole with --full
        value = bytes.fromhex(record["value"]["hex"]).decode()
        assert f"{value[:8]}" in cut and f"… ({len(value)} bytes)" in cut
        assert value.splitlines()[-1] in full and value.splitlines()[-1] not in cut


def test_limit_and_offset_range(kbatch):
    out = kbatch("dump", "--format", "jsonl", "--limit", "2", "fixtures/v2-none.log", expect=0).out
    assert [json.loads(line)["type"] for line in out.splitlines()] == ["batch", "batch", "summary"]
    out = kbatch("dump", "--format", "jsonl", "-r", "--offset-range", "4:6", "fixtures/v2-none.log", expect=0).out
    batches = [json.loads(line) for line in out.splitlines()][:-1]
    offsets = [record["offset"] for batch in batches for record in batch["records"]]
    assert offsets == [4, 5, 6]


def test_hex_input_from_stdin_and_from_a_file(kbatch, tmp_path):
    data = (FIXTURES / "v2-gzip.log").read_bytes()
    pasted = " ".join(re.findall("..", data.hex())).encode()
    from_stdin = kbatch("dump", "--format", "jsonl", "--hex", "-", stdin=pasted, expect=0)
    hex_file = tmp_path / "batch.hex"
    hex_file.write_bytes(b"0x" + data.hex().encode() + b"\n")
    from_file = kbatch("dump", "--format", "jsonl", "--hex", str(hex_file), expect=0)
    direct = kbatch("dump", "--format", "jsonl", "fixtures/v2-gzip.log", expect=0)

    def strip(out):
        return [{k: v for k, v in json.loads(line).items() if k != "file"} for line in out.splitlines()]
    assert strip(from_stdin.out) == strip(from_file.out) == strip(direct.out)


def test_raw_bytes_from_stdin(kbatch):
    data = (FIXTURES / "mixed-v0-v1-v2.log").read_bytes()
    result = kbatch("dump", "--format", "jsonl", "-", stdin=data)
    assert result.code == 0
    assert len(result.out.splitlines()) == len(kbatch("dump", "--format", "jsonl",
                                                       "fixtures/mixed-v0-v1-v2.log").out.splitlines())


def test_bad_hex_and_missing_files_are_usage_errors_without_traceback(kbatch):
    result = kbatch("dump", "--hex", "-", stdin=b"00 zz 11")
    assert result.code == 2 and "not hex" in result.err and "Traceback" not in result.err
    result = kbatch("dump", "no/such/segment.log", "fixtures/v2-none.log")
    assert result.code == 2 and "cannot read no/such/segment.log" in result.err
    assert "fixtures/v2-none.log" in result.out  # the other files are still dumped
    result = kbatch("dump", "--offset-range", "9:1", "fixtures/v2-none.log")
    assert result.code == 2 and "empty" in result.err


def test_no_colour_off_a_terminal_and_with_no_color(kbatch, monkeypatch):
    assert "\x1b[" not in kbatch("dump", "-r", "fixtures/damaged-crc-field.log", expect=1).out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in kbatch("dump", "fixtures/damaged-crc-field.log", expect=1).out


def test_an_internal_error_is_one_line_not_a_traceback(kbatch, monkeypatch):
    dump_module = importlib.import_module("kbatch.cli.dump")

    def explode(*args, **kwargs):
        raise RuntimeError("boom in \x1b]0;title\x07\u202e")   # (a message may quote the input)

    monkeypatch.setattr(dump_module, "list_file", explode)
    result = kbatch("dump", "fixtures/v2-none.log")
    assert result.code == 2
    assert "internal error: RuntimeError: boom in \\x1b]0;title\\x07\\u202e\n" in result.err
    assert "Traceback" not in result.err


def test_the_input_file_is_never_modified(kbatch, tmp_path):
    target = tmp_path / "segment.log"
    target.write_bytes((FIXTURES / "damaged-bad-length.log").read_bytes())
    before = (target.read_bytes(), target.stat().st_mtime_ns)
    for fmt in ("table", "jsonl", "json", "dumplog"):
        kbatch("dump", "-r", "--format", fmt, str(target), expect=1)
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before


@pytest.mark.parametrize("args", [["--format", "jsonl"], ["--format", "jsonl", "--records"], []])
def test_a_file_name_that_is_not_utf8_is_written_with_those_bytes_escaped(tmp_path, args):
    """Linux file names are bytes: one that is not UTF-8 reaches every line with the byte as ``\\xff``, so JSON
    stays UTF-8 (and so does the table)."""
    import os
    import subprocess
    import sys

    name = os.path.join(os.fsencode(tmp_path), b"seg\xff.log")
    with open(name, "wb") as out:
        out.write((FIXTURES / "v2-none.log").read_bytes())
    run = subprocess.run([sys.executable, "-m", "kbatch", "dump", *args, os.fsdecode(name)], capture_output=True)
    assert run.returncode == 0 and b"internal error" not in run.stderr
    run.stdout.decode("utf-8")   # raises where it is not UTF-8
    lines = run.stdout.splitlines()
    shown = name.replace(b"\xff", b"\\xff")
    if args:
        assert len(lines) == 5 and all(json.loads(line)["file"] == os.fsdecode(shown) for line in lines)
        assert all(line.startswith(b'{"file": "' + shown.replace(b"\\", b"\\\\") + b'"') for line in lines)
    else:
        assert shown in run.stdout
