"""kbatch map --replicas: one partition's copies as lanes on one offset axis, hand-made copies (tests/handmade.py's
bytes), each lane held to what kbatch replicas says of the copy and to the batches built."""

from __future__ import annotations

import json
import os

import pytest

from kbatch.map import draw
from tests.handmade import batch

from .test_map import _look, _needs_vl_convert, _x
from .test_replicas import _records, make_copy

HOSTILE = "broker-\x1b[31m<b>3&\u202e<script>"   # an escape sequence, markup, a bidi override


def _copies(root) -> list[str]:
    """broker-1 led epoch 1 alone (3..7, two batches); broker-2 was elected uncleanly in epoch 2 and wrote its
    own 3..4; the third copy's batch at 3 (broker-1's first, a byte flipped under its CRC) is damaged, and stays
    so: its broker shut down cleanly, so Kafka's log recovery does not reach it."""
    common = batch(0, _records(0, 3, "v"), leader_epoch=0)
    old = batch(3, _records(3, 3, "old"), leader_epoch=1)
    damaged = bytearray(old)
    damaged[-1] ^= 0x01
    return [make_copy(root, "broker-1", [common, old, batch(6, _records(6, 2, "old"), leader_epoch=1)],
                      epochs=[(0, 0), (1, 3)], high_watermark=3, recovery_point=3),
            make_copy(root, "broker-2", [common, batch(3, _records(3, 2, "new"), leader_epoch=2)],
                      epochs=[(0, 0), (2, 3)], high_watermark=4, recovery_point=5),
            make_copy(root, HOSTILE, [common, bytes(damaged)], epochs=[(0, 0)], high_watermark=3, indexed=True,
                      clean_shutdown=True)]


def _model(kbatch, *args, expect: int) -> dict:
    return json.loads(kbatch("map", "--replicas", "--format", "json", "-o", "-", *args, expect=expect).out)


def test_a_lane_per_copy_as_replicas_tells(tmp_path, kbatch):
    copies = _copies(tmp_path)
    model = _model(kbatch, *copies, expect=1)
    lanes, = model["replicas"]
    told = [json.loads(line) for line in kbatch("replicas", "--format", "jsonl", *copies, expect=1).out.splitlines()]
    told = [line for line in told if line["type"] == "replica"]
    keys = ("log_start_offset", "log_end_offset", "high_watermark", "latest_epoch", "diverges_at", "truncate_to")
    assert [[lane[key] for key in keys] for lane in lanes["lanes"]] == [[line[key] for key in keys] for line in told]
    assert [[lane[key] for key in keys] for lane in lanes["lanes"]] == [
        [0, 8, 3, 1, 3, 3], [0, 5, 4, 2, None, 5], [0, 6, 3, 0, 3, 3]]   # (the third's cache: its file alone)
    assert lanes["leader"] == "broker-2" and [lane["leader"] for lane in lanes["lanes"]] == [False, True, False]
    # broker-1's two batches past 3 merge into one span the leader does not hold; the leader's own 3..4 is not
    # every copy's; the third copy's batch at 3 is damaged (its header's offsets)
    assert [(span["copy"], span["state"], span["first_offset"], span["last_offset"], span["batches"])
            for span in lanes["spans"]] == [("broker-1", "not the leader's", 3, 7, 2),
                                            ("broker-2", "held by some copies", 3, 4, 1),
                                            (lanes["lanes"][2]["copy"], "damaged", 3, 5, 1)]
    # then each copy as a partition of its own, named by its log directory
    assert [partition["name"] for partition in model["partitions"]][:2] == ["broker-1/orders-0", "broker-2/orders-0"]


def test_agreeing_copies_have_no_spans(tmp_path, kbatch):
    common = [batch(0, _records(0, 3, "v"), leader_epoch=0), batch(3, _records(3, 1, "v"), leader_epoch=1)]
    dirs = [make_copy(tmp_path, f"broker-{n}", common, epochs=[(0, 0), (1, 3)], high_watermark=4) for n in (1, 2)]
    lanes, = _model(kbatch, *dirs, expect=0)["replicas"]
    assert lanes["spans"] == [] and [lane["diverges_at"] for lane in lanes["lanes"]] == [None, None]
    assert [lane["truncate_to"] for lane in lanes["lanes"]] == [4, 4]


def test_marks_are_ticks_where_the_lanes_say(tmp_path, kbatch):
    lanes, = _model(kbatch, *_copies(tmp_path), expect=1)["replicas"]
    chart = draw.replica_chart(lanes)
    marks, = [layer for layer in chart["layer"] if layer["name"] == "r0_mark"]
    assert marks["mark"]["type"] == "tick"
    got = {(mark["copy"], mark["mark"], mark["offset"]) for mark in marks["data"]["values"]}
    assert ("broker-1", "diverges at", 3) in got and ("broker-1", "truncated to", 3) in got
    assert ("broker-2", "truncated to", 5) in got and ("broker-2", "high watermark", 4) in got
    assert not any(copy == "broker-2" and mark == "diverges at" for copy, mark, _ in got)
    # one offset axis for every lane, from the lowest log start to the highest log end
    assert marks["encoding"]["x"]["scale"]["domain"] == [0, 8]


def test_hostile_names_are_escaped(tmp_path, kbatch):
    _needs_vl_convert()
    copies = _copies(tmp_path)
    for name in ("map.html", "map.svg"):
        out = tmp_path / name
        assert kbatch("map", "--replicas", *copies, "-o", str(out)).code == 1
        text = out.read_text()
        assert "\x1b" not in text and "\u202e" not in text   # no escape sequence, no bidi override
        assert "<b>3" not in text   # the name's markup is text, not markup
        assert "broker-\\x1b[31m" in text   # the name is shown, its escape sequence spelled out


def test_the_copies_section_a_person_reads(tmp_path, kbatch, text_snapshot):
    lanes, = _model(kbatch, *_copies(tmp_path), expect=1)["replicas"]
    lanes = draw.utf8_model(lanes, draw.visible)
    for lane in lanes["lanes"]:   # the temporary directory's path differs from run to run
        lane["path"] = os.path.basename(os.path.dirname(lane["path"]))
    section = draw._replicas_section(lanes)
    assert section.replace("><", ">\n<") == text_snapshot


@pytest.mark.parametrize("args, message", [
    (["--partition", "orders-0", "fixtures/partition"], "--partition names the partition whose copies"),
    (["--replicas", "fixtures/partition/orders-0"], "two or more copies"),
    (["--replicas", "--partition", "payments-0", "fixtures/partition/orders-0", "fixtures/logdir"],
     "no partition is present in two or more"),
])
def test_usage_errors(args, message, kbatch):
    result = kbatch("map", "--format", "json", "-o", "-", *args, expect=2)
    assert message in result.err


@pytest.mark.parametrize("command", [["replicas"], ["map", "--replicas", "--format", "json", "-o", "-"]])
def test_a_hostile_name_in_a_usage_error_is_escaped(tmp_path, command, kbatch):
    good = make_copy(tmp_path, "broker-1", [batch(0, _records(0, 1, "v"))], epochs=[(0, 0)])
    nothing = tmp_path / HOSTILE
    nothing.mkdir()
    result = kbatch(*command, good, str(nothing), expect=2)
    assert "neither a partition directory" in result.err
    assert "\x1b" not in result.err and "\u202e" not in result.err and "broker-\\x1b[31m" in result.err


def test_lanes_in_a_browser(headless_browser, kbatch, tmp_path):
    """The page draws the lanes with no script error: a span per merged run, a tick per mark, each where its
    offset lies on the one axis of every lane."""
    _needs_vl_convert()
    page = tmp_path / "copies.html"
    assert kbatch("map", "--replicas", *_copies(tmp_path), "-o", str(page)).code == 1
    found = _look(headless_browser, page)
    lanes = json.loads(kbatch("map", "--replicas", "--format", "json", "-o", "-", *_copies(tmp_path / "again"),
                              expect=1).out)["replicas"][0]
    marks = [mark for mark in found["charts"]["r0"] if mark["mark"] == "r0_mark_marks"]
    spans = [mark for mark in found["charts"]["r0"] if mark["mark"] == "r0_span_marks"]
    assert len(spans) == len(lanes["spans"]) == 3
    assert len(marks) == 8   # diverges at: 2 copies; truncated to and high watermark: 3 each
    width = found["widths"]["r0"]
    truncated, = [mark for mark in marks if mark["copy"] == "broker-2" and mark["offset_mark"] == "truncated to"]
    assert truncated["x"] == pytest.approx(_x(5, 0, 8, width), abs=2)
    lost, = [span for span in spans if span["copy"] == "broker-1"]
    assert lost["x"] == pytest.approx(_x(3, 0, 8, width), abs=1)
    assert lost["x"] + lost["width"] == pytest.approx(_x(8, 0, 8, width), abs=1)
