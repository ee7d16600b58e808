"""repair-length and salvage: mend what a CRC proves, keep what verifies, never touch the original."""

from __future__ import annotations

import io
import os

import pytest
from hypothesis import given, settings, strategies as st

from kbatch.ops.repair import SalvageReport, plan_repairs, salvage, write_repaired

from .helpers import FIXTURES, fixture_id, read_all, sidecar
from .test_reader import v2_batch

DAMAGED = sorted(FIXTURES.glob("damaged-*.log"))
CLEAN = (FIXTURES / "v2-none.log").read_bytes()   # every damaged-* v2 fixture was made from it


def _repaired(data: bytes, truncate_tail: bool = False) -> bytes:
    stream = io.BytesIO(data)
    return b"".join(write_repaired(stream, plan_repairs(stream, truncate_tail=truncate_tail)))


@pytest.mark.parametrize("path", DAMAGED, ids=fixture_id)
def test_plan_names_exactly_the_lying_lengths(path):
    plan = plan_repairs(io.BytesIO(path.read_bytes()), truncate_tail=True)
    fixes = [(action.pos, action.old, action.new) for action in plan.actions if action.kind == "fix-length"]
    if "bad-length" in path.name:
        assert fixes == [(189, "2137" if "short" in path.name else "2147", "2142")]
    else:
        assert fixes == []
    crc_only = [action for action in plan.actions if action.kind == "crc-damage"]
    assert bool(crc_only) == ("bitflip" in path.name or "crc-field" in path.name)
    assert all(not action.applied for action in crc_only)


@pytest.mark.parametrize("name", ["damaged-bad-length.log", "damaged-bad-length-short.log",
                                  "damaged-truncated-tail.log", "damaged-zero-tail.log"])
def test_applied_plans_give_files_that_verify(name, kbatch, tmp_path):
    out = tmp_path / "repaired.log"
    result = kbatch("repair-length", f"fixtures/{name}", "-o", str(out), "--apply", "--truncate-tail")
    assert result.code == 0 and "every entry verifies" in result.out
    assert kbatch("verify-crc", "--quiet", str(out)).code == 0
    if "bad-length" in name:
        assert out.read_bytes() == CLEAN


def test_a_crc_damaged_batch_is_not_repaired(kbatch, tmp_path):
    out = tmp_path / "repaired.log"
    result = kbatch("repair-length", "fixtures/damaged-bitflip-record.log", "-o", str(out), "--apply")
    assert result.code == 1 and "damage remains" in result.out
    assert not out.exists()   # a copy would only repeat the input


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 3), st.integers(-(2**31), 2**31 - 1))
def test_any_wrong_batch_length_is_repaired_to_the_original(index, wrong):
    batches = [v2_batch(10 * n, [b"value-%d" % n, b"x" * (n * 7)]) for n in range(4)]
    original = b"".join(batches)
    position = sum(len(batch) for batch in batches[:index]) + 8
    if wrong == int.from_bytes(original[position:position + 4], "big", signed=True):
        return
    damaged = original[:position] + wrong.to_bytes(4, "big", signed=True) + original[position + 4:]
    assert _repaired(damaged) == original


@pytest.mark.parametrize("path", DAMAGED, ids=fixture_id)
def test_salvage_keeps_every_intact_batch(path):
    data = path.read_bytes()
    report = SalvageReport(0)
    kept = b"".join(salvage(io.BytesIO(data), report))
    batches, findings = read_all(kept, records=True)
    assert not findings
    meta = sidecar(path)
    intact = [entry["base_offset"] for entry in meta["expected"]["entries"] if entry["crc_valid"]]
    if "bad-length" in path.name:
        intact = sorted(intact + [3])   # its bytes verify: kept, with the length corrected
        assert report.lengths_fixed == 1
    assert [batch.base_offset for batch in batches] == intact
    lost = {finding["code"] for finding in meta["expected"]["findings"]} - {"bad-length", "zero-tail"}
    assert bool(report.skipped) == bool(lost)


def test_salvage_reports_the_offsets_lost(kbatch, tmp_path):
    result = kbatch("salvage", "fixtures/damaged-bitflip-record.log", "-o", str(tmp_path / "good.log"))
    assert result.code == 1
    assert "3–5 (its header, unverified: its CRC fails)" in result.out and "kept 3 batches" in result.out


@pytest.mark.parametrize("command", [["repair-length", "--apply", "--truncate-tail", "-o"], ["salvage", "-o"]])
def test_the_input_is_never_modified(command, kbatch, tmp_path):
    source = tmp_path / "in.log"
    source.write_bytes((FIXTURES / "damaged-bad-length.log").read_bytes())
    os.utime(source, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = (source.read_bytes(), source.stat().st_mtime_ns)
    kbatch(*command[:-1], str(source), command[-1], str(tmp_path / "out.log"))
    assert (source.read_bytes(), source.stat().st_mtime_ns) == before
    result = kbatch(*command[:-1], str(source), command[-1], str(source))
    assert result.code == 2 and (source.read_bytes(), source.stat().st_mtime_ns) == before


def test_in_place_needs_a_backup_and_keeps_the_original(kbatch, tmp_path):
    source = tmp_path / "in.log"
    original = (FIXTURES / "damaged-bad-length.log").read_bytes()
    source.write_bytes(original)
    assert kbatch("repair-length", "--in-place", "--apply", str(source)).code == 2
    assert source.read_bytes() == original
    result = kbatch("repair-length", "--in-place", "--backup", ".orig", "--apply", str(source))
    assert result.code == 0
    assert (tmp_path / "in.log.orig").read_bytes() == original and source.read_bytes() == CLEAN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.log", "in.log.orig"]


def test_a_second_in_place_run_never_overwrites_the_backup(kbatch, tmp_path):
    source = tmp_path / "in.log"
    original = (FIXTURES / "damaged-bad-length.log").read_bytes()
    source.write_bytes(original)
    command = ("repair-length", "--in-place", "--backup", ".orig", "--apply", str(source))
    assert kbatch(*command).code == 0
    # Nothing left to mend: the file and the backup stay as they are, and no second backup is made.
    again = kbatch(*command)
    assert again.code == 0 and "nothing to fix: nothing written" in again.out
    assert (tmp_path / "in.log.orig").read_bytes() == original and source.read_bytes() == CLEAN
    # A damaged file again (say, restored by hand) while the first backup exists: the next name is taken.
    source.write_bytes(original)
    third = kbatch(*command)
    assert third.code == 0 and "in.log.orig.1" in third.out
    assert (tmp_path / "in.log.orig").read_bytes() == original
    assert (tmp_path / "in.log.orig.1").read_bytes() == original and source.read_bytes() == CLEAN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.log", "in.log.orig", "in.log.orig.1"]


@pytest.mark.parametrize("path", DAMAGED, ids=fixture_id)
def test_plan_and_salvage_snapshot(path, kbatch, tmp_path, text_snapshot):
    rel = f"fixtures/{path.name}"
    plan = kbatch("repair-length", "--truncate-tail", rel)
    saved = kbatch("salvage", rel, "-o", str(tmp_path / "salvaged.log"))
    shown = saved.out.replace(str(tmp_path), "TMP")
    assert (f"$ kbatch repair-length --truncate-tail {rel}\n{plan.out}(exit {plan.code})\n\n"
            f"$ kbatch salvage {rel} -o TMP/salvaged.log\n{shown}(exit {saved.code})\n") == text_snapshot


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600], ids=oct)
def test_in_place_repair_keeps_the_mode(mode, kbatch, tmp_path):
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes((FIXTURES / "damaged-bad-length.log").read_bytes())
    segment.chmod(mode)
    result = kbatch("repair-length", str(segment), "--in-place", "--backup", ".orig", "--apply")
    assert result.code == 0 and segment.read_bytes() == CLEAN
    assert segment.stat().st_mode & 0o7777 == mode
    assert (tmp_path / "00000000000000000000.log.orig").stat().st_mode & 0o7777 == mode


def test_new_files_get_the_umask_mode(kbatch, tmp_path):
    old = os.umask(0o027)
    try:
        # the length mended (0); the batch whose CRC fails left out, which salvage reports (1)
        kbatch("repair-length", "fixtures/damaged-bad-length.log", "-o", str(tmp_path / "repaired.log"), "--apply",
               expect=0)
        kbatch("salvage", "fixtures/damaged-bitflip-record.log", "-o", str(tmp_path / "salvaged.log"), expect=1)
        kbatch("encode-from-json", "-", "-o", str(tmp_path / "encoded.log"),
               stdin=b'{"kbatch_json_version": 1, "entries": [{"records": [{"offset": 0, "value": null}]}]}', expect=0)
    finally:
        os.umask(old)
    for name in ("repaired.log", "salvaged.log", "encoded.log"):
        assert (tmp_path / name).stat().st_mode & 0o7777 == 0o640, name


@pytest.mark.parametrize("name", ["v2-none.log", "damaged-crc-field.log"])
def test_apply_with_nothing_to_fix_writes_nothing(name, kbatch, tmp_path):
    """A healthy segment (exit 0), or damage no length repair mends (exit 1): no copy is written."""
    out = tmp_path / "out.log"
    result = kbatch("repair-length", str(FIXTURES / name), "-o", str(out), "--apply")
    assert result.code == (1 if name.startswith("damaged") else 0), result.out
    assert "nothing to fix: nothing written" in result.out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["salvage"], ["repair-length"], ["hexdump-annotate"]])
@pytest.mark.parametrize("name", ["00000000000000000027.snapshot", "00000000000000000000.index"])
def test_a_file_beside_the_segments_is_not_salvaged_repaired_or_annotated_as_one(kbatch, tmp_path, command, name):
    """A healthy producer snapshot or index named to a one-segment command read as batches and all damage:
    repair-length proposed cutting its tail.  It is refused, saying what it is and what reads it."""
    path = f"fixtures/partition/orders-0/{name}"
    extra = ["-o", str(tmp_path / "out.log")] if command == ["salvage"] else []
    result = kbatch(*command, *extra, path, expect=2)
    assert "resync" not in result.out + result.err and "cut" not in result.out
    assert f"kbatch: cannot read {path}: " in result.err and "not a log segment (kbatch dump reads it)" in result.err
    assert not (tmp_path / "out.log").exists()
