"""``kbatch verify-crc``: every checksum, every invariant, exact findings, honest exit codes."""

from __future__ import annotations

import io
import json
import re

import pytest

from kbatch.format.findings import Severity
from kbatch.reading.summary import FileSummary
from kbatch.ops.verify import VerifyOptions, verify_stream

from .helpers import FIXTURES, REPRESENTATIVE, ROOT, expected_status, fixture_id, fixture_paths, sidecar
from .test_reader import v2_batch

OUR_FIXTURES = sorted(FIXTURES.glob("*.log"))


def _verify(data: bytes, deep: bool = False):
    summary = FileSummary("-", len(data))
    findings = list(verify_stream(io.BytesIO(data), summary, VerifyOptions(deep=deep)))
    return findings, summary


@pytest.mark.parametrize("deep", [False, True], ids=["crc", "deep"])
@pytest.mark.parametrize("path", OUR_FIXTURES, ids=fixture_id)
def test_findings_are_exactly_the_damage_done(path, deep, kbatch):
    meta = sidecar(path)
    expected = {(finding["code"], finding["entry_pos"]) for finding in meta["expected"]["findings"]}
    findings, summary = _verify(path.read_bytes(), deep)
    errors = [finding for finding in findings if finding.severity is Severity.ERROR]
    # every damage done is reported at its entry, and no entry without damage is accused
    assert {(code, pos) for code, pos in expected} <= {(f.code, f.entry_pos) for f in findings}
    assert {finding.entry_pos for finding in errors} == {pos for code, pos in expected if code != "zero-tail"}
    result = kbatch("verify-crc", *(["--deep"] if deep else []), "--quiet", path.relative_to(ROOT).as_posix())
    assert (result.code, result.out, result.err) == (1 if meta["damaged"] else 0, "", "")


def test_every_byte_flip_under_the_crc_is_a_crc_mismatch_and_never_in_the_epoch():
    first, second = v2_batch(0, [b"abc", b"defgh"]), v2_batch(2, [b"ij"])
    for index in range(len(first)):
        damaged = bytearray(first + second)
        damaged[index] ^= 0x80
        findings, _ = _verify(bytes(damaged))
        codes = {finding.code for finding in findings}
        if index >= 21:
            assert "crc-mismatch" in codes, index
            assert any(f.code == "crc-mismatch" and f.entry_pos == 0 for f in findings), index
        elif 12 <= index < 16:
            assert codes == set(), index


def test_crc_mismatch_names_position_offset_stored_and_computed(kbatch):
    result = kbatch("verify-crc", "--format", "jsonl", "fixtures/damaged-bitflip-record.log")
    lines = [json.loads(line) for line in result.out.splitlines()]
    (finding,) = [line for line in lines if line["type"] == "finding"]
    assert finding["code"] == "crc-mismatch" and finding["entry_pos"] == 181
    assert finding["expected"].endswith("(computed)") and finding["actual"].endswith("(stored)")
    assert {"file", "pos", "size", "field", "severity"} <= set(finding)
    assert lines[-1]["type"] == "summary" and lines[-1]["damaged"] is True
    assert result.code == 1


def test_inner_messages_of_wrappers_are_verified():
    data = (FIXTURES / "v1-gzip.log").read_bytes()
    findings, summary = _verify(data)
    assert findings == [] and summary.records == 5


def test_deep_checks_offsets_across_batches():
    overlapping = v2_batch(0, [b"a", b"b"]) + v2_batch(1, [b"c"])
    gap = v2_batch(0, [b"a"]) + v2_batch(5, [b"c"])
    assert [f.code for f in _verify(overlapping, deep=True)[0]] == ["offset-overlap"]
    assert [(f.code, f.severity) for f in _verify(gap, deep=True)[0]] == [("offset-gap", Severity.INFO)]
    assert _verify(overlapping)[0] == []   # only --deep looks at order


def test_deep_checks_header_fields_against_records():
    batch = bytearray(v2_batch(0, [b"a", b"b", b"c"]))
    batch[35:43] = (1).to_bytes(8, "big")                    # maxTimestamp: wrong
    from kbatch.format.checksums import crc32c
    batch[17:21] = crc32c(bytes(batch[21:])).to_bytes(4, "big")   # a CRC that covers the lie
    codes = [f.code for f in _verify(bytes(batch), deep=True)[0]]
    assert codes == ["max-timestamp-mismatch"]


def test_globs_directories_and_missing_files(kbatch):
    result = kbatch("verify-crc", "--quiet", "fixtures/v2-*.log")
    assert result.code == 0
    result = kbatch("verify-crc", "--format", "jsonl", "fixtures/")
    summaries = [json.loads(line) for line in result.out.splitlines() if '"summary"' in line]
    assert len(summaries) == len(list(FIXTURES.rglob("*.log"))) and result.code == 1
    result = kbatch("verify-crc", "fixtures/nothing-*.log")
    assert result.code == 2 and "no file matches" in result.err


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=fixture_id)
def test_verify_snapshot(path, kbatch, text_snapshot, jsonl_snapshot):
    rel = path.relative_to(ROOT).as_posix()
    shown = []
    for extra in ([], ["--deep"]):
        args = ["verify-crc", *extra, rel]
        result = kbatch(*args, expect=expected_status(path, records=bool(extra), offsets=bool(extra)))
        shown.append(f"$ kbatch {' '.join(args)}\n{result.out}(exit {result.code})\n")
    assert "\n".join(shown) == text_snapshot
    assert kbatch("verify-crc", "--deep", "--format", "jsonl", rel, expect=expected_status(path, offsets=True)).out \
        == jsonl_snapshot


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_verify_reports_the_counts_and_the_damage_where_it_was_done(path, kbatch):
    """On every input: plain and deep verify-crc count the entries, records and bytes dump lists (held to the
    sidecars in test_dump.py), report at least the damage the sidecar says where it was done, and exit 1 only
    on damage; the table's row says the same."""
    rel = path.relative_to(ROOT).as_posix()
    dumped = json.loads(kbatch("dump", "--format", "jsonl", "--records", rel,
                               expect=expected_status(path)).out.splitlines()[-1])
    lines = [json.loads(line) for line in kbatch("verify-crc", "--deep", "--format", "jsonl", rel,
                                                 expect=expected_status(path, offsets=True)).out.splitlines()]
    summary = lines[-1]
    assert (summary["type"], summary["file"]) == ("summary", rel)
    assert {key: summary[key] for key in ("size", "batch_count", "record_count", "batch_bytes")} == \
        {key: dumped[key] for key in ("size", "batch_count", "record_count", "batch_bytes")}
    assert summary["damaged"] == bool(expected_status(path, offsets=True))
    findings = {(line["code"], line["entry_pos"]) for line in lines[:-1]}
    assert {(line["code"], line["entry_pos"]) for line in sidecar(path).get("expected", {}).get("findings", [])} \
        <= findings
    assert sum(summary["findings"].values()) == len(lines) - 1
    table = kbatch("verify-crc", rel, expect=expected_status(path, records=False)).out
    assert re.search(rf"│ {re.escape(rel)} +│ +{summary['batch_count']} │ +{summary['record_count']} │ +{summary['size']} │",
                     table)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("damaged-*.log")) + [FIXTURES / "v2-empty-compacted.log"],
                         ids=fixture_id)
def test_every_finding_names_its_batchs_offsets(path, kbatch):
    """A finding inside a batch carries the batch's base and last offset (jsonl and table); one between
    batches has none to carry (null)."""
    rel = path.relative_to(ROOT).as_posix()
    listed = kbatch("dump", "--format", "jsonl", rel, expect=expected_status(path, records=False))
    batches = {line["pos"]: line for line in map(json.loads, listed.out.splitlines()) if line["type"] == "batch"}
    expect = expected_status(path, offsets=True)
    findings = [line for line in map(json.loads, kbatch("verify-crc", "--deep", "--format", "jsonl", rel, expect=expect)
                                     .out.splitlines()) if line["type"] == "finding"]
    assert findings
    table = kbatch("verify-crc", "--deep", rel, expect=expect).out
    for finding in findings:
        batch = batches.get(finding["entry_pos"])
        if batch is None:
            assert finding["base_offset"] is None and finding["last_offset"] is None
            continue
        assert (finding["base_offset"], finding["last_offset"]) == (batch["base_offset"], batch["last_offset"])
        offsets = f"offset {batch['base_offset']}" if batch["base_offset"] == batch["last_offset"] else \
            f"offsets {batch['base_offset']}–{batch['last_offset']}"
        if "lost_offsets_from" in batch:   # a damaged batch: its offsets as inferred, and how (kbatch.reading.lost)
            assert (finding["lost_first"], finding["lost_last"], finding["lost_offsets_from"]) == \
                (batch["lost_first"], batch["lost_last"], batch["lost_offsets_from"])
            first, last = batch["lost_first"], batch["lost_last"]
            offsets = f"offsets {first if first == last else f'{first}–{last}'} ({batch['lost_offsets_from']})"
        assert f"{finding['code']} at pos {finding['pos']} ({offsets})" in table
    if "crc" in path.name or "bitflip" in path.name or "compacted" in path.name:
        assert any(finding["base_offset"] is not None for finding in findings)


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_the_summary_cuts_a_long_path_keeping_what_tells_the_segments_apart(kbatch, monkeypatch, columns):
    """Cut at the end, every segment of a partition read `fixtures/logdir/orders-…`; cut from the left, the
    partitions read `…gacy-0`.  Whole directories give way ("…/"), then the name goes under its directory,
    its leading zeros given way: the partition and the name's end (the offset) are always whole."""
    monkeypatch.setenv("COLUMNS", str(columns))
    result = kbatch("verify-crc", "fixtures/logdir")
    assert result.code == 1
    table = result.out[result.out.index("┏"):].splitlines()
    assert max(map(len, table)) <= columns
    cells: list[list[str]] = []
    for line in table:
        if line.startswith("│"):
            columns_of_line = line.split("│")
            if columns_of_line[2].strip():   # a row's first line: its batches count
                cells.append([])
            cells[-1].append(columns_of_line[1].strip())
    cells = cells[:-1]   # the total's row last
    import glob
    import re

    paths = sorted(glob.glob("fixtures/logdir/*/*.log"))
    assert len(cells) == len(paths) and len({"".join(cell) for cell in cells}) == len(paths)
    for cell, path in zip(cells, paths):   # each cell is its path with parts left out; the partition whole
        partition, name = path.split("/")[-2:]
        text = "".join(cell)
        pattern = ".*".join(map(re.escape, text.split("…")))
        assert re.fullmatch(pattern, path) and f"/{partition}/" in ("/" + text), cell
        assert re.search(r"(^|/)…?\d+\.log$", cell[-1]) and name.endswith(cell[-1].rpartition("/")[2].lstrip("…"))
    if columns == 80:
        assert cells[0] == ["…/legacy-0/", "…2000.log"]
    if columns == 100:
        assert cells[0] == ["…/legacy-0/00000000000000002000.log"]


def test_a_path_is_fitted_whole_directories_first_and_its_end_kept():
    from kbatch.render.plain import line_width
    from kbatch.render.verify import _fitted_path

    path = "/var/lib/kafka/data/orders-12/00000000000000123456.log"
    assert _fitted_path(path, 60, line_width) == path
    assert _fitted_path(path, 40, line_width) == "…/orders-12/00000000000000123456.log"
    assert _fitted_path(path, 30, line_width) == "/var/lib/kafka/data/orders-12/\n00000000000000123456.log"
    assert _fitted_path(path, 20, line_width) == "…/data/orders-12/\n…123456.log"
    assert _fitted_path(path, 12, line_width) == "…/orders-12/\n…123456.log"
    assert _fitted_path(path, 9, line_width) == "…/or…-12/\n…3456.log"   # the end of each part kept
    assert _fitted_path("a-very-long-segment-name-without-zeros.log", 20, line_width) == "a-very…out-zeros.log"
    assert _fitted_path("orders-0/00000000000000000000.log", 12, line_width) == "orders-0/\n…0.log"


def test_the_total_counts_files_apart_from_cross_check_rows(kbatch):
    """verify-crc --deep DIR: the partition's cross-check row is no file; the total says so."""
    result = kbatch("verify-crc", "--deep", "fixtures/partition/orders-0")
    assert result.code == 0
    lines = result.out.splitlines()
    at = next(number for number, line in enumerate(lines) if line.startswith("│ 3 files "))
    assert [line.split("│")[1].strip() for line in lines[at:at + 2]] == ["3 files", "1 cross-check"]
    logs = kbatch("verify-crc", "fixtures/partition/orders-0")
    assert logs.code == 0 and "│ 3 files " in logs.out and "cross-check" not in logs.out
