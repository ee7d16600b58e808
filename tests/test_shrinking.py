"""A file cut while it is read: every segment reader takes the short read as the file ending there.

A finding (truncated-while-reading), exit status 1, never a loop or an internal error; the parts of a
parallel run past the new end report nothing, and the summary says the file changed size.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

import pytest

import kbatch.walk.parts as parts
import kbatch.reading.window as window

from . import handmade


def _segment(path, batches: int = 400, *, zeros: int = 0) -> list[int]:
    """Batches of ~1 KiB (and a zero tail); their positions."""
    data, positions = b"", []
    for n in range(batches):
        positions.append(len(data))
        data += handmade.batch(n * 4, [(b"k", bytes([n % 251]) * 250)] * 4)
    path.write_bytes(data + bytes(zeros))
    return positions


@contextmanager
def cut_after_first_read(monkeypatch, path, keep: int):
    """The file is cut to ``keep`` bytes once the walk has read its first chunk (reads made 16 KiB long, so
    that a walk reads many times): the next read, past the first chunk, comes up short."""
    monkeypatch.setattr(window, "CHUNK", 16 * 1024)
    cut = {"done": False}
    original = window.Window._read_into_buffer

    def reading(self, pos, size):
        if pos > 0 and not cut["done"]:
            cut["done"] = True
            os.truncate(path, keep)
        return original(self, pos, size)

    monkeypatch.setattr(window.Window, "_read_into_buffer", reading)
    yield cut


def _lines(result) -> list[dict]:
    return [json.loads(line) for line in result.out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("keep", [100_000, 100_003, 0])
@pytest.mark.parametrize("args", [["dump", "--format", "jsonl"], ["dump", "--format", "jsonl", "--records"],
                                  ["verify-crc", "--deep", "--format", "jsonl", "--jobs", "1"]],
                         ids=["dump", "dump-records", "deep"])
def test_a_segment_cut_while_read_ends_there(kbatch, tmp_path, monkeypatch, args, keep):
    path = tmp_path / "00000000000000000000.log"
    _segment(path, zeros=200_000)
    with cut_after_first_read(monkeypatch, path, keep):
        result = kbatch(*args, str(path))
    assert result.code == 1 and "internal error" not in result.err and "Traceback" not in result.err
    lines = _lines(result)
    (cut,) = [line for line in lines if line.get("code") == "truncated-while-reading"]
    assert cut["pos"] == max(keep, 16 * 1024 - 970)   # where the short read was: the end from then on
    assert all(line["pos"] + line["size"] <= cut["pos"] for line in lines if line.get("type") == "batch")
    (summary,) = [line for line in lines if line.get("type") == "summary"]
    assert summary["size_changed"] == {"opened": summary["size"], "ended_at": cut["pos"]}


@pytest.mark.parametrize("keep", [100_000, 100_003, 0])
def test_salvage_of_a_segment_cut_while_read_keeps_what_was_read(kbatch, tmp_path, monkeypatch, keep):
    path = tmp_path / "00000000000000000000.log"
    _segment(path)
    out = tmp_path / "out.log"
    with cut_after_first_read(monkeypatch, path, keep):
        result = kbatch("salvage", "--no-color", str(path), "-o", str(out))
    assert result.code == 1 and result.err == ""
    assert "truncated-while-reading" in "".join(result.out.split())
    assert kbatch("verify-crc", "--deep", str(out)).code == 0   # what was kept is whole batches


@pytest.mark.parametrize("apply", [False, True])
def test_repair_length_of_a_segment_cut_while_read_writes_nothing(kbatch, tmp_path, monkeypatch, apply):
    path = tmp_path / "00000000000000000000.log"
    _segment(path)
    out = tmp_path / "out.log"
    with cut_after_first_read(monkeypatch, path, 100_003):
        result = kbatch("repair-length", "--no-color", str(path), *(["-o", str(out), "--apply"] if apply else []))
    assert result.code == 1 and result.err == ""
    assert "cannot write" in result.out and not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]   # no temporary file either


def test_repair_length_of_a_segment_cut_while_copied_writes_nothing(kbatch, tmp_path, monkeypatch):
    """Cut after the plan was made, while the copy is written."""
    import kbatch.ops.repair as repair

    path = tmp_path / "00000000000000000000.log"
    positions = _segment(path)
    data = bytearray(path.read_bytes())
    data[positions[3] + 8:positions[3] + 12] = (int.from_bytes(data[positions[3] + 8:positions[3] + 12], "big")
                                                + 3).to_bytes(4, "big")   # a length that lies: something to write
    path.write_bytes(bytes(data))
    monkeypatch.setattr(repair, "_COPY_CHUNK", 4096)
    copy = repair._copy

    def cutting(stream, start, stop):
        for number, chunk in enumerate(copy(stream, start, stop)):
            if number == 1:
                os.truncate(path, 50_000)
            yield chunk

    monkeypatch.setattr(repair, "_copy", cutting)
    out = tmp_path / "out.log"
    result = kbatch("repair-length", "--no-color", str(path), "-o", str(out), "--apply")
    assert result.code == 1 and "cut while it was copied" in result.out and not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.parametrize("keep", [100_003, 300_000, 0])
@pytest.mark.parametrize("deep", [True, False])
def test_parts_past_the_new_end_report_nothing(tmp_path, monkeypatch, keep, deep):
    """verify-crc in parts (forked children) of a file cut after the parts were planned."""
    import kbatch.ops.verify as verify
    from kbatch.reading.summary import FileSummary

    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64 * 1024)
    path = tmp_path / "00000000000000000000.log"
    _segment(path)
    size = path.stat().st_size
    fork = parts._fork

    def cut_then_fork(part, *args):   # the children start on the cut file; the parent's first part too
        if not os.path.getsize(path) == keep:
            os.truncate(path, keep)
        return fork(part, *args)

    monkeypatch.setattr(parts, "_fork", cut_then_fork)
    if not deep:   # the CRC pass walks first, in this process (parts only past damage): cut as it starts
        os.truncate(path, keep)
    monkeypatch.setattr(window, "CHUNK", 16 * 1024)
    summary = FileSummary(str(path), size)
    with open(path, "rb", buffering=0) as stream:
        found = list(verify.verify_file(str(path), stream, summary, verify.VerifyOptions(deep=deep, jobs=4)))
    cuts = [finding for finding in found if finding.code == "truncated-while-reading"]
    assert len(cuts) == 1 and summary.size_now == cuts[0].pos
    assert all(finding.pos <= cuts[0].pos for finding in found)
    assert summary.as_dict()["size_changed"] == {"opened": size, "ended_at": cuts[0].pos}
    assert summary.batch_bytes <= cuts[0].pos


@pytest.mark.parametrize("keep", [100_003, 200_000, 300_000, 0])
def test_dump_in_parts_of_a_segment_cut_while_read_tells_it_once(kbatch, tmp_path, monkeypatch, keep):
    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64 * 1024)
    monkeypatch.setattr(window, "CHUNK", 16 * 1024)
    path = tmp_path / "00000000000000000000.log"
    _segment(path)
    fork = parts._fork

    def cut_then_fork(part, *args):
        if os.path.getsize(path) != keep:
            os.truncate(path, keep)
        return fork(part, *args)

    monkeypatch.setattr(parts, "_fork", cut_then_fork)
    result = kbatch("dump", "--format", "jsonl", "--jobs", "4", str(path))
    assert result.code == 1 and result.err == ""
    lines = _lines(result)
    (cut,) = [line for line in lines if line.get("code") == "truncated-while-reading"]
    (summary,) = [line for line in lines if line.get("type") == "summary"]
    assert summary["findings"]["truncated-while-reading"] == 1
    assert summary["size_changed"] == {"opened": summary["size"], "ended_at": cut["pos"]}
    assert all(line["pos"] + line["size"] <= cut["pos"] for line in lines if line.get("type") == "batch")


def test_an_entry_cut_while_read_with_an_entry_inside_it_reads_as_the_cut_file_does(tmp_path, monkeypatch):
    """The cut entry holds a whole batch in its value: the walk resumes there, the size field is what lies
    (bad-length, naming the field and the size it declared), as on a file that was already that short; this
    used to end in an internal error (the cut entry's magic was not handed on)."""
    from kbatch.reading.reader import ReadOptions, SegmentReader

    inner = handmade.batch(0, [(b"k", b"v")])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(handmade.batch(0, [(b"k", b"x" * 100 + inner + b"y" * 100_000)]))
    monkeypatch.setattr(window, "CHUNK", 16 * 1024)
    original = window.Window._read_into_buffer

    def reading(self, pos, size):   # cut as the walk reads the entry whole, past its first chunk
        if size > 20_000 and path.stat().st_size > 50_000:
            os.truncate(path, 50_000)
        return original(self, pos, size)

    monkeypatch.setattr(window.Window, "_read_into_buffer", reading)
    with open(path, "rb") as stream:
        read = list(SegmentReader(stream, ReadOptions()))
    assert path.stat().st_size == 50_000 and read[-1].code == "truncated-while-reading"
    with open(path, "rb") as stream:
        assert read[:-1] == list(SegmentReader(stream, ReadOptions()))   # the file as it is now
    assert "bad-length, batch_length at pos 8 is 100231" in read[0].actual
    assert read[1].pos == 172 and read[1].crc_valid
