"""``kbatch dump``: what users see, pinned by snapshots, and how it behaves at the edges."""

from __future__ import annotations

import importlib
import json
import re

import pytest

from .helpers import FIXTURES, ROOT, expected_status, fixture_id, fixture_paths, sidecar

ALL = fixture_paths()


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("fmt", ["table", "dumplog"])
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_dump_text_snapshot(path, fmt, kbatch, text_snapshot):
    shown = []
    for extra in ([], ["--records"]):
        args = ["dump", "--format", fmt, *extra, _rel(path)]
        result = kbatch(*args)
        # only dumplog writes to stderr: Kafka's "Non-consecutive offsets" report, under the absolute path
        assert result.err == "" or fmt == "dumplog"
        err = result.err.replace(str(ROOT) + "/", "")
        shown.append(f"$ kbatch {' '.join(args)}\n{result.out}{'[stderr]' + chr(10) + err if err else ''}"
                     f"(exit {result.code})\n")
    assert "\n".join(shown) == text_snapshot


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_dump_jsonl_snapshot(path, kbatch, jsonl_snapshot):
    result = kbatch("dump", "--format", "jsonl", "--records", _rel(path), expect=expected_status(path))
    for line in result.out.splitlines():
        json.loads(line)
    assert result.out == jsonl_snapshot


@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_dump_json_snapshot(path, kbatch, json_snapshot):
    result = kbatch("dump", "--format", "json", "--records", _rel(path), expect=expected_status(path))
    document = json.loads(result.out)
    assert document["kbatch_json_version"] == 1
    assert result.out == json_snapshot


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
        raise RuntimeError("boom")

    monkeypatch.setattr(dump_module, "list_file", explode)
    result = kbatch("dump", "fixtures/v2-none.log")
    assert result.code == 2
    assert "internal error: RuntimeError: boom" in result.err and "Traceback" not in result.err


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
