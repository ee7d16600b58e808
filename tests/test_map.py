"""kbatch map: the model it draws (pinned), the page it writes (self-contained), and what a real browser draws
of it: no script error, not blank, the damaged ranges and the transactions where the data puts them."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from .helpers import FIXTURES, ROOT, expected_status, sidecar

MAPS = {
    "partition": ["fixtures/partition"],
    "damaged": ["fixtures/damaged-garbage-between.log", "fixtures/damaged-zero-tail.log"],
    "logdir": ["fixtures/logdir"],
}
MAP_STATUS = {"partition": 0, "damaged": 1, "logdir": 1}   # the log directory holds damaged segments too
DAMAGED_RED = (0xd6, 0x27, 0x28)   # kbatch.map.draw.DAMAGED
COMMIT_GREEN = (0x31, 0xa3, 0x54)  # kbatch.map.draw.OUTCOMES' COMMIT


def _needs_vl_convert():
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI must run the map tests: vl-convert-python (the map extra, in dev) is not installed")
        pytest.skip("vl-convert-python (pip install '.[map]') is not installed")


def _jsonl(kbatch, *args, expect: int) -> list[dict]:
    result = kbatch(*args, expect=expect)
    return [json.loads(line) for line in result.out.splitlines()]


def _page(kbatch, tmp_path: Path, name: str, *options: str) -> Path:
    _needs_vl_convert()
    out = tmp_path / f"{name}.html"
    result = kbatch("map", *MAPS[name], "-o", str(out), *options)
    assert result.code == MAP_STATUS[name], result.err
    return out


# -- the model ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["damaged"])
def test_map_model_snapshot(name, kbatch, json_snapshot):
    """The model of two damaged segments, pinned whole (a resync over garbage, a zero tail)."""
    result = kbatch("map", "--format", "json", "-o", "-", *MAPS[name], expect=MAP_STATUS[name])
    assert result.out == json_snapshot


@pytest.mark.parametrize("name", MAPS)
def test_model_counts_each_segment_as_dump_lists_it(name, kbatch):
    """Every segment of a model: its size, batches, records, offsets and timestamps as dump lists them, and
    its blocks at dump's batches (where not binned); each partition the sum of its segments (its errors, those
    of its segments and of the partition as a whole: its index, offsets across segments)."""
    model = json.loads(kbatch("map", "--format", "json", "-o", "-", *MAPS[name], expect=MAP_STATUS[name]).out)
    assert model["kbatch_map"] == 1
    for partition in model["partitions"]:
        for segment in partition["segments"]:
            path = ROOT / segment["path"]
            lines = _jsonl(kbatch, "dump", "--format", "jsonl", segment["path"],
                           expect=1 if segment["errors"] else 0)
            batches = [line for line in lines if line["type"] == "batch"]
            assert (segment["size"], segment["batches"], segment["records"]) == \
                (path.stat().st_size, len(batches), sum(batch["count"] for batch in batches))
            if batches:
                assert (segment["first_offset"], segment["last_offset"]) == \
                    (batches[0]["base_offset"], max(batch["last_offset"] for batch in batches))
            assert segment["errors"] == lines[-1]["errors"]
            if not segment["binned"]:
                assert [(block["pos"], block["end"]) for block in segment["blocks"]] == \
                    [(batch["pos"], batch["pos"] + batch["size"]) for batch in batches]
        segments = partition["segments"]
        assert (partition["size"], partition["segment_count"], partition["batches"], partition["records"]) == \
            (sum(s["size"] for s in segments), len(segments), sum(s["batches"] for s in segments),
             sum(s["records"] for s in segments))
        assert partition["errors"] >= sum(s["errors"] for s in segments)


def test_model_holds_what_the_readers_say(kbatch):
    """Blocks are the batches dump lists, regions the damaged ranges it reports, spans the transactions txn
    finds (with their outcomes)."""
    model = json.loads(kbatch("map", "--format", "json", "-o", "-", *MAPS["damaged"], expect=1).out)
    for partition, path in zip(model["partitions"], MAPS["damaged"]):
        lines = _jsonl(kbatch, "dump", "--format", "jsonl", path, expect=expected_status(ROOT / path))
        segment, = partition["segments"]
        assert [(block["pos"], block["end"]) for block in segment["blocks"]] == \
            [(line["pos"], line["pos"] + line["size"]) for line in lines if line["type"] == "batch"]
        expected = sidecar(ROOT / path)["expected"]["findings"]
        assert [(region["code"], region["pos"]) for region in segment["regions"]] == \
            [(finding["code"], finding["entry_pos"]) for finding in expected]
    model = json.loads(kbatch("map", "--format", "json", "-o", "-", *MAPS["partition"], expect=0).out)
    spans = [(t["producer_id"], t["first_offset"], t["outcome"]) for t in model["partitions"][0]["transactions"]]
    told = [line for line in _jsonl(kbatch, "txn", "--format", "jsonl", "fixtures/partition/orders-0", expect=0)
            if line["type"] == "transaction"]
    assert spans == [(t["producer_id"], t["first_offset"], t["outcome"]) for t in told]
    assert {t["outcome"] for t in told} == {"COMMIT", "ABORT", "OPEN"}


def test_a_blocks_command_opens_it(kbatch):
    """What a click copies: dump of a batch's offsets lists that batch; hexdump-annotate of a damaged range's
    position shows that range."""
    import shlex

    model = json.loads(kbatch("map", "--format", "json", "-o", "-", *MAPS["partition"], *MAPS["damaged"],
                              expect=1).out)
    segments = [segment for partition in model["partitions"] for segment in partition["segments"]]
    for segment in segments:
        damage = [region["pos"] for region in segment["regions"] if region["severity"] == "error"]
        for block in segment["blocks"]:
            program, *args = shlex.split(block["command"])
            assert program == "kbatch" and args[:2] == ["dump", "--records"]
            # the walk from the segment's start reads up to the entry after the block: damage on the way is said
            met = any(pos <= block["end"] for pos in damage)
            listed = [line for line in _jsonl(kbatch, *args, "--format", "jsonl", expect=1 if met else 0)
                      if line["type"] == "batch"]
            assert block["pos"] in [line["pos"] for line in listed]
        for region in segment["regions"]:
            program, *args = shlex.split(region["command"])
            shown = kbatch(*args, expect=1 if region["severity"] == "error" else 0)
            assert f"{segment['path']}: damaged range at {region['pos']}, {region['end'] - region['pos']} bytes" \
                in shown.out


def test_a_segment_of_more_batches_than_a_screen_shows_is_binned(tmp_path, kbatch, monkeypatch):
    from kbatch.map import gather

    monkeypatch.setattr(gather, "MAX_BLOCKS", 4)
    model = gather.gather(["fixtures/partition/orders-0/00000000000000000000.log"]).model()
    segment, = model["partitions"][0]["segments"]
    assert segment["binned"] and segment["batches"] == 12
    assert len(segment["blocks"]) <= 4
    assert sum(block["batches"] for block in segment["blocks"]) == 12
    assert segment["blocks"][0]["first_offset"] == 0 and segment["blocks"][-1]["last_offset"] == 26


# -- the command --------------------------------------------------------------------------------------------

def test_exit_status(tmp_path, kbatch):
    _needs_vl_convert()
    assert kbatch("map", *MAPS["partition"], "-o", str(tmp_path / "a.html")).code == 0
    assert kbatch("map", *MAPS["damaged"], "-o", str(tmp_path / "b.html")).code == 1
    missing = kbatch("map", "fixtures/no-such.log", "-o", str(tmp_path / "c.html"))
    assert missing.code == 2 and "cannot read fixtures/no-such.log" in missing.err
    assert not (tmp_path / "c.html").exists()


def test_without_the_extra_it_says_what_to_install(tmp_path, kbatch, monkeypatch):
    monkeypatch.setitem(sys.modules, "vl_convert", None)   # import vl_convert fails, as where it is not installed
    result = kbatch("map", *MAPS["partition"], "-o", str(tmp_path / "map.html"))
    assert result.code == 2
    assert "pip install '.[map]' in kbatch's checkout" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "map.html").exists()
    # the model needs no drawing library
    assert kbatch("map", "--format", "json", *MAPS["partition"], "-o", str(tmp_path / "map.json")).code == 0


def test_page_references_nothing_outside_itself(tmp_path, kbatch):
    page = _page(kbatch, tmp_path, "logdir").read_text()
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"<link\b|@import|url\(\s*['\"]?(?:https?:)?//", page, re.I)
    assert page.count("<script") == 3   # the bundled Vega-Lite, the model, the page's own script: all inline
    assert "<script src" not in page


@pytest.mark.parametrize("name, expected", [("map.svg", "<svg"), ("map.SVG", "<svg"), ("map.htm", "<!DOCTYPE html>"),
                                            ("map.html", "<!DOCTYPE html>"), ("map.json", "{"), ("map", "<!DOCTYPE html>")])
def test_the_format_is_the_output_names(name, expected, tmp_path, kbatch):
    """Without --format the output's extension says what to write (else a page)."""
    _needs_vl_convert()
    out = tmp_path / name
    assert kbatch("map", *MAPS["partition"], "-o", str(out)).code == 0
    assert out.read_text().startswith(expected)


def test_a_format_that_contradicts_the_name_is_a_usage_error(tmp_path, kbatch):
    out = tmp_path / "map.svg"
    result = kbatch("map", "--format", "html", *MAPS["partition"], "-o", str(out))
    assert result.code == 2 and "--format html contradicts" in result.err and not out.exists()
    assert kbatch("map", "--format", "svg", *MAPS["damaged"], "-o", str(out)).code in (1, 2)   # agreeing: drawn
    assert kbatch("map", "--format", "json", *MAPS["partition"], "-o", str(tmp_path / "model.txt")).code == 0


def test_header_time_range_starts_at_the_first_record(kbatch):
    """The partition's time range: from its first record's timestamp (a v2 batch's baseTimestamp), not from the
    smallest of the batches' largest timestamps."""
    model = json.loads(kbatch("map", "--format", "json", "-o", "-", *MAPS["partition"], expect=0).out)
    batches = [line for path in sorted((FIXTURES / "partition" / "orders-0").glob("*.log"))
               for line in _jsonl(kbatch, "dump", "--format", "jsonl", str(path.relative_to(ROOT)), expect=0)
               if line["type"] == "batch"]
    first = min(batch["base_timestamp"] for batch in batches)
    assert first < min(batch["max_timestamp"] for batch in batches)
    partition, = model["partitions"]
    assert (partition["min_ts"], partition["max_ts"]) == (first, max(batch["max_timestamp"] for batch in batches))


@pytest.mark.parametrize("choice", ["codec", "magic", "producer", "kind", "damage"])
def test_damage_is_in_the_legend_whatever_colours_the_blocks(choice):
    """The damaged ranges have a colour scale of their own, in the legend under every colouring; timestamps are
    read in UTC, dated, on a 24-hour clock; offsets and positions tick at whole numbers only."""
    from kbatch.map import draw
    from kbatch.map.gather import gather

    partition, = gather(["fixtures/damaged-garbage-between.log"]).model()["partitions"]
    chart = draw.partition_chart(partition, choice)
    byte_map, timeline = chart["vconcat"][:2]
    assert byte_map["resolve"] == {"scale": {"color": "independent"}}
    region, = [layer for layer in byte_map["layer"] if layer.get("name") == "p0_region"]
    assert region["encoding"]["color"]["scale"] == {"domain": ["damaged bytes", "preallocated zeros"],
                                                    "range": [draw.DAMAGED, draw.ZERO]}
    blocks, = [layer for layer in byte_map["layer"] if "layer" in layer]
    assert {layer["encoding"]["color"]["title"] for layer in blocks["layer"]} == {choice}
    point, = [layer for layer in timeline["layer"] if layer["name"] == "p0_point"]
    y = point["encoding"]["y"]
    assert y["scale"] == {"type": "utc"} and "utcFormat(" in y["axis"]["labelExpr"] and "%H:%M:%S" in \
        y["axis"]["labelExpr"] and "%Y-%m-%d" in y["axis"]["labelExpr"]
    assert byte_map["layer"][1]["encoding"]["x"]["axis"]["tickMinStep"] == 1
    assert timeline["layer"][0]["encoding"]["x"]["axis"]["tickMinStep"] == 1


def test_gaps_and_overlaps_are_marked_at_any_zoom(tmp_path):
    """A gap or an overlap of a few offsets in a long log is a band narrower than a pixel: a rule marks it too."""
    from kbatch.map import draw
    from kbatch.map.gather import gather

    partition, = gather([str(path.relative_to(ROOT)) for path in sorted((FIXTURES / "logdir" / "orders-1").glob("*.log"))]
                        ).model()["partitions"]
    assert [band["kind"] for band in partition["boundaries"]] == ["gap"]
    timeline = draw.timeline(partition)
    band, = [layer for layer in timeline["layer"] if layer["name"] == "p0_boundary"]
    rule, = [layer for layer in timeline["layer"] if layer["name"] == "p0_boundary_rule"]
    assert rule["mark"]["type"] == "rule" and rule["data"] == band["data"]


def test_svg_is_a_static_picture(tmp_path, kbatch):
    _needs_vl_convert()
    out = tmp_path / "map.svg"
    assert kbatch("map", "--format", "svg", *MAPS["damaged"], "-o", str(out)).code == 1
    picture = out.read_text()
    assert picture.startswith("<svg") and "damaged-garbage-between.log" in picture
    assert not re.search(r"""\bhref\s*=\s*["']https?:""", picture)
    assert "#d62728" in picture.lower()   # the damaged range


# -- in a real browser --------------------------------------------------------------------------------------

def _x(value: float, low: float, high: float, width: float) -> float:
    """Where a linear x scale over [low, high] puts a value in a chart ``width`` pixels wide."""
    return (value - low) / (high - low) * width


def _look(browser, page: Path, fragment: str = "", size=(1280, 1000)) -> dict:
    dom, console = browser.dom(page, fragment, size)
    assert console == []
    from .browser import drawn

    found = drawn(dom)
    assert found["errors"] == []
    assert found["resources"] == []   # nothing fetched: every script and style is in the page
    assert 'data-state="drawn"' in dom
    return found


def _screenshot(browser, page: Path, out: Path, size=(1280, 1000)) -> dict[tuple, int]:
    from .browser import colours

    assert browser.screenshot(page, out, size) == []
    seen = colours(out)
    background = max(seen.values())
    assert len(seen) > 20 and background < 0.9 * sum(seen.values()), "the screenshot is (nearly) blank"
    return seen


def test_partition_in_a_browser(headless_browser, kbatch, tmp_path):
    page = _page(kbatch, tmp_path, "partition")
    found = _look(headless_browser, page)
    batches = [line for path in sorted((FIXTURES / "partition" / "orders-0").glob("*.log"))
               for line in _jsonl(kbatch, "dump", "--format", "jsonl", str(path.relative_to(ROOT)), expect=0)
               if line["type"] == "batch"]
    assert found["counts"]["p0"]["p0_batch_marks"] == len(batches)
    low, high = min(b["base_offset"] for b in batches), max(b["last_offset"] for b in batches) + 1
    spans = [mark for mark in found["charts"]["p0"] if mark["mark"] == "p0_txn_marks"]
    told = [line for line in _jsonl(kbatch, "txn", "--format", "jsonl", "fixtures/partition/orders-0", expect=0)
            if line["type"] == "transaction"]
    assert len(spans) == len(told)
    for txn in told:
        span, = [s for s in spans if s["first_offset"] == txn["first_offset"] and s["outcome"] == txn["outcome"]]
        end = (txn["marker_offset"] if txn["marker_offset"] is not None else txn["last_offset"]) + 1
        assert span["x"] == pytest.approx(_x(txn["first_offset"], low, high, found["widths"]["p0"]), abs=1)
        assert span["x"] + span["width"] == pytest.approx(_x(end, low, high, found["widths"]["p0"]), abs=1)
    shot = tmp_path / "partition.png"
    seen = _screenshot(headless_browser, page, shot, size=(1400, 1000))
    assert COMMIT_GREEN in seen   # the committed transaction's span
    keep = os.environ.get("KBATCH_MAP_SCREENSHOT")   # README's picture: KBATCH_MAP_SCREENSHOT=man/map.png
    if keep:
        shutil.copyfile(shot, keep)


def test_charts_use_the_windows_width(headless_browser, kbatch, tmp_path):
    """Each chart fills its element, axes and legends included, in a narrow window and in a wide one."""
    page = _page(kbatch, tmp_path, "partition")
    narrow = _look(headless_browser, page, size=(1000, 800))
    wide = _look(headless_browser, page, size=(1400, 800))
    for found in (narrow, wide):
        fit = found["fits"]["p0"]
        assert fit["drawn"] == pytest.approx(fit["room"], abs=4)
    assert wide["widths"]["p0"] - narrow["widths"]["p0"] == pytest.approx(400, abs=4)


def test_damaged_segments_in_a_browser(headless_browser, kbatch, tmp_path):
    page = _page(kbatch, tmp_path, "damaged")
    found = _look(headless_browser, page)
    for number, path in enumerate(MAPS["damaged"]):
        dumped = _jsonl(kbatch, "dump", "--format", "jsonl", path, expect=expected_status(ROOT / path))
        ranges = [line for line in dumped
                  if line["type"] == "finding" and line["code"] in ("resync", "zero-tail")]
        expected, = sidecar(ROOT / path)["expected"]["findings"]
        damaged, = ranges
        assert damaged["pos"] == expected["entry_pos"]
        size = os.path.getsize(ROOT / path)
        drawn, = [mark for mark in found["charts"][f"p{number}"] if mark["mark"] == f"p{number}_region_marks"]
        assert drawn["pos"] == damaged["pos"] and drawn["code"] == expected["code"]
        width = found["widths"][f"p{number}"]
        assert drawn["x"] == pytest.approx(_x(damaged["pos"], 0, size, width), abs=1)
        assert drawn["x"] + drawn["width"] == pytest.approx(_x(damaged["pos"] + damaged["size"], 0, size, width),
                                                            abs=1)
    seen = _screenshot(headless_browser, page, tmp_path / "damaged.png")
    assert DAMAGED_RED in seen   # the damaged range


def test_log_directory_in_a_browser(headless_browser, kbatch, tmp_path):
    page = _page(kbatch, tmp_path, "logdir")
    found = _look(headless_browser, page)
    partitions = sorted(path.name for path in (FIXTURES / "logdir").iterdir())
    assert found["counts"]["directory"] == {"partition_marks": len(partitions)} or \
        sum(found["counts"]["directory"].values()) == len(partitions)
    dom = page.read_text()
    for number, name in enumerate(partitions):
        assert f'<a href="#p{number}">{name}</a>' in dom and f'id="p{number}"' in dom
        assert found["counts"][f"p{number}"][f"p{number}_batch_marks"] > 0
    _screenshot(headless_browser, page, tmp_path / "logdir.png")


def test_a_binned_segment_in_a_browser(headless_browser, kbatch, tmp_path, monkeypatch):
    """Past MAX_BLOCKS batches a segment is drawn as bins, which the page draws like batches."""
    from kbatch.map import gather

    monkeypatch.setattr(gather, "MAX_BLOCKS", 4)
    page = _page(kbatch, tmp_path, "partition")
    assert "00000000000000000000.log (12 batches in 4 bins of 556 bytes)" in page.read_text()
    found = _look(headless_browser, page)
    assert found["counts"]["p0"]["p0_bin_marks"] > 3 and "p0_batch_marks" not in found["counts"]["p0"]


def test_every_fixture_draws_without_a_console_message(headless_browser, kbatch, tmp_path):
    """Every shipped segment on one page (damaged, legacy without timestamps, empty compacted, internal topics,
    KRaft), and a partition of an empty segment and random bytes beside a random index and checkpoint."""
    import random

    strange = tmp_path / "strange-0"
    strange.mkdir()
    noise = random.Random(35)
    (strange / "00000000000000000000.log").write_bytes(b"")
    (strange / "00000000000000000100.log").write_bytes(noise.randbytes(5000))
    (strange / "00000000000000000100.index").write_bytes(noise.randbytes(800))
    (strange / "00000000000000000100.timeindex").write_bytes(noise.randbytes(1200))
    (strange / "leader-epoch-checkpoint").write_bytes(noise.randbytes(100))
    # a lone segment whose path would end a script, or open a comment, if the page let it
    odd = tmp_path / "<" / "script><!--<script>.log"
    odd.parent.mkdir()
    shutil.copyfile(FIXTURES / "damaged-garbage-between.log", odd)
    assert "</script><!--<script>" in str(odd)
    _needs_vl_convert()
    page = tmp_path / "every.html"
    result = kbatch("map", "fixtures", str(strange), str(odd), "-o", str(page))
    assert result.code == 1 and "Traceback" not in result.err
    found = _look(headless_browser, page)
    model = json.loads(kbatch("map", "--format", "json", "-o", "-", "fixtures", str(strange),
                              str(odd)).out)
    assert set(found["counts"]) == {partition["id"] for partition in model["partitions"]} | {"directory"}


def test_what_is_wrong_with_a_timeindex_past_the_log_is_still_reported(tmp_path):
    """Entries past the log's last offset stand at no batch; a partial entry after them is still a finding."""
    import struct

    from kbatch.map.gather import gather

    log = tmp_path / "00000000000000000000.log"
    shutil.copyfile(FIXTURES / "partition" / "orders-0" / "00000000000000000000.log", log)
    entries = b"".join(struct.pack(">qi", 1700000100000 + n, 1000 + n) for n in range(3))   # offsets 1000..1002
    (tmp_path / "00000000000000000000.timeindex").write_bytes(entries + b"\x00\x01\x02\x03\x04")
    model = gather([str(log)]).model()
    segment, = model["partitions"][0]["segments"]
    assert segment["timeindex"] == [] and segment["timeindex_entries"] == 0
    assert "partial-entry" in [finding["code"] for finding in model["findings"]]


def test_many_segments_share_the_blocks_of_a_page(monkeypatch):
    from kbatch.map import gather

    monkeypatch.setattr(gather, "PAGE_BLOCKS", 12)
    monkeypatch.setattr(gather, "MIN_BLOCKS", 2)
    model = gather.gather([str(path.relative_to(ROOT)) for path in sorted((FIXTURES / "logdir").rglob("*.log"))]
                          ).model()
    assert model["blocks_per_segment"] == 2   # 12 among 10 segments, and no fewer than 2
    segments = [segment for partition in model["partitions"] for segment in partition["segments"]]
    assert len(segments) == 10
    assert all(len(segment["blocks"]) <= 2 and len(segment["index"]) <= 2 for segment in segments)
    assert sum(block["batches"] for segment in segments for block in segment["blocks"]) == \
        sum(segment["batches"] for segment in segments)


def test_colour_by_kind_in_a_browser(headless_browser, kbatch, tmp_path):
    """The page's colouring switched (here from its address): each batch of the partition drawn in its kind's
    colour, as dump's flags say."""
    from kbatch.map.draw import COLOUR_SCALES

    page = _page(kbatch, tmp_path, "partition")   # written coloured by codec
    found = _look(headless_browser, page, "colour=kind")
    scale = COLOUR_SCALES["kind"]
    colour = dict(zip(scale["domain"], scale["range"]))
    logs = sorted((FIXTURES / "partition" / "orders-0").glob("*.log"))
    batches = {(f"p0s{number}", line["pos"]): line for number, path in enumerate(logs)
               for line in _jsonl(kbatch, "dump", "--format", "jsonl", str(path.relative_to(ROOT)), expect=0)
               if line["type"] == "batch"}
    drawn = {(mark["segment"], mark["pos"]): mark["fill"] for mark in found["charts"]["p0"]
             if mark["mark"] == "p0_batch_marks"}
    assert drawn.keys() == batches.keys()
    kinds = {key: "control" if line["is_control"] else "transactional" if line["is_transactional"]
             else "idempotent" if line["producer_id"] >= 0 else "plain" for key, line in batches.items()}
    assert drawn == {key: colour[kind] for key, kind in kinds.items()}
    assert {"control", "transactional"} <= set(kinds.values())
